"""Scenario definitions shared by tests, for the files :func:`scenario_builders.make_scenario`
writes (``calc.py`` whose ``add_one`` adds 2, and its test)."""

from __future__ import annotations

#: ``add-one``: validated by pytest, with a heuristic check that the fix adds 1.
ADD_ONE_YAML = """\
id: add-one
timeout_minutes: 5
validation:
  commands:
    test: "{pytest}"
heuristic_checks:
  patterns:
    - {name: adds_one, file: calc.py, pattern: "x \\\\+ 1"}
"""
