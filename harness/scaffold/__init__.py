"""Writing scenarios: lay out a new one that already works (``bench new``) and prove one sound
(``bench check``). The guide is docs/writing-scenarios.md; the format docs/scenarios.md.

- :mod:`harness.scaffold.names`: the suite and scenario names ``bench new`` accepts, the suite
  directories ``bench check`` searches and the scenarios a ``SUITE[/SCENARIO]`` word names;
- :mod:`harness.scaffold.create`: :func:`create_scenario`, the example scenario it writes (the
  oracle passes it, echo fails it);
- :mod:`harness.scaffold.check`: :func:`check_scenario`, the runs of a check (nothing stored,
  no model called) and their verdicts;
- :mod:`harness.scaffold.careless`: :class:`PatchAgent`, the careless fix of ``--careless``.

The names below are the package's interface; import them from ``harness.scaffold``.
"""

from __future__ import annotations

from harness.scaffold.careless import PATCH_AGENT, PatchAgent
from harness.scaffold.check import (
    CARELESS_FAILS,
    CHECKS,
    ECHO_FAILS,
    HIDDEN_FAIL,
    LOADS,
    ORACLE_PASSES,
    REPEATS,
    CheckOptions,
    Verdict,
    VerdictCallback,
    check_scenario,
    judge_careless,
    judge_echo,
    judge_hidden,
    judge_oracle,
    judge_repeat,
    outcome_text,
)
from harness.scaffold.create import Created, ScenarioExists, create_scenario, scaffold_files
from harness.scaffold.names import (
    MAX_NAME_LENGTH,
    NAME_RULE,
    InvalidName,
    Target,
    find_targets,
    name_problem,
    parse_suite_scenario,
    shipped_suites_dir,
    suites_dirs,
)

__all__ = [
    "CARELESS_FAILS", "CHECKS", "ECHO_FAILS", "HIDDEN_FAIL", "LOADS", "MAX_NAME_LENGTH", "NAME_RULE",
    "ORACLE_PASSES", "PATCH_AGENT", "REPEATS", "CheckOptions", "Created", "InvalidName", "PatchAgent",
    "ScenarioExists", "Target", "Verdict", "VerdictCallback", "check_scenario", "create_scenario", "find_targets",
    "judge_careless", "judge_echo", "judge_hidden", "judge_oracle", "judge_repeat", "name_problem",
    "outcome_text", "parse_suite_scenario", "scaffold_files", "shipped_suites_dir", "suites_dirs",
]
