"""Scenario benchmarks: what a scenario is, how a batch of runs is planned and run.

- :mod:`~harness.scenarios.model`: the records a loaded suite, scenario and tier prompt are.
- :mod:`~harness.scenarios.loading`: loading and discovery of suites, scenarios and prompts.
- :mod:`~harness.scenarios.plan`: the run plan of a batch, and what a resumed batch still needs.
- :mod:`~harness.scenarios.runner`: one run end to end, and a plan of runs.
- :mod:`~harness.scenarios.workspace`: the run's copy of the fixture and its diff.
- :mod:`~harness.scenarios.estimate`: what a plan will cost before it runs.
"""
