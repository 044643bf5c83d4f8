"""Grading: what a finished run is scored on, and how.

- :mod:`~harness.grading.copy`: the grading copy of the agent's workspace, in a fresh sandbox.
- :mod:`~harness.grading.evaluators`: validation commands and weighted evaluators, and their
  pipeline.
- :mod:`~harness.grading.scoring`: the score and the outcome of a run.
- :mod:`~harness.grading.suspicious`: changes a reviewer should look at.
"""
