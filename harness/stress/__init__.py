"""Load tests of a model endpoint (``bench stress``): send requests on one asyncio event loop
following a profile, record one sample per request, and summarise the steps.

The package holds three parts, re-exported here (``from harness.stress import run_stress``):

- :mod:`harness.stress.plan`: the profiles, the options and their checks, the steps of a
  profile and the prompt of each request: everything decided before a request is sent.
- :mod:`harness.stress.runner`: the test itself (:class:`StressTest`, built by :func:`prepare`,
  run by ``await test.run()`` or :func:`run_stress`), one sample per request, the stops
  (:class:`StressControl`, the cost cap, a refused or unreachable endpoint).
- :mod:`harness.stress.record`: the figures of the whole test (:func:`summarize`) and the
  :class:`~harness.results.records.StressRecord` for ``ResultsClient.post_stress``.

A profile is a list of steps; a step keeps ``concurrency`` requests in flight (closed loop) or,
for ``rate-limit``, sends ``rate`` requests per second (open loop). Every request is made once
and gives one sample in the format of :mod:`worker.analysis.stress`; each step is summarised
when its last request has finished, and the test by ``summarize_run`` plus what the profile asks
for (rate-limit onset, the phases of a spike, the failure window). Stops: Ctrl-C
(``interrupted``), the cost cap (``budget_exceeded``), credentials refused or no answer from the
endpoint (``failed``). The profiles and every figure are described in docs/analysis.md,
"Stress tests".
"""

from __future__ import annotations

from harness.stress.plan import (DEFAULT_DURATION_S, DEFAULT_STEP_SECONDS, MAX_STEPS, PROFILE_HELP, PROFILES,
                                 TIMED_PROFILES, StepPlan, StressError, StressOptions, build_prompt, check_options,
                                 parse_target, plan_steps)
from harness.stress.record import summarize
from harness.stress.runner import (FIGURE_CLASS, StressControl, StressResult, StressTest, error_class, prepare,
                                   run_stress)

__all__ = [
    "DEFAULT_DURATION_S", "DEFAULT_STEP_SECONDS", "FIGURE_CLASS", "MAX_STEPS", "PROFILES", "PROFILE_HELP",
    "TIMED_PROFILES", "StepPlan", "StressControl", "StressError", "StressOptions", "StressResult", "StressTest",
    "build_prompt", "check_options", "error_class", "parse_target", "plan_steps", "prepare", "run_stress",
    "summarize",
]
