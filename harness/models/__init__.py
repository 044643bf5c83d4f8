"""Models: the provider layer, the async request engine, prices and the local model.

- :mod:`~harness.models.providers`: one client per API family, retries and error mapping.
- :mod:`~harness.models.engine`: many model calls in flight on one event loop.
- :mod:`~harness.models.pricing`: what a call costs.
- :mod:`~harness.models.local_model`: the llama.cpp server of the ``local`` agent.
"""
