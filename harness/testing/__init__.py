"""Test doubles that ship with zebench, for its own tests and for code built on it.

- :mod:`harness.testing.mock_model`: an OpenAI-compatible model server on raw asyncio
  (``MockServer``, ``ThreadedMock``): scripted answers, rate limits with Retry-After, scripted
  HTTP errors, dropped connections and hanging requests, plain or streamed. Point a target's
  base URL at it (``openai-compatible:NAME@http://127.0.0.1:PORT/v1``) and the real SDK, the
  real transport and the real retry policy run.
- :mod:`harness.testing.results`: ``MemoryResults``, the results contract over dictionaries,
  for code that needs a :class:`~harness.results.client.ResultsClient` without a store.

The scripted agent server (``bench mock-model``, :mod:`harness.scripted`) plays whole agent
sessions in the four wire formats the agent CLIs speak.
"""
