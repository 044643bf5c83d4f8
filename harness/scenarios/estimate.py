"""What a plan may cost before it runs (``bench --dry-run``), from the price table and history.

Each group gets a per-run range and says what it rests on:

- ``history``: earlier stored runs of the same scenario, tier, agent and model with a cost:
  their lowest and highest cost;
- ``prices``: the model's row of the price table. The low end is one call that reads the
  system and task prompts (about four characters a token) and writes nothing; the high end is
  the run's budget: ``--max-cost``, else ``--max-tokens`` at the dearer of the input and
  output prices. Without either budget the high end is unknown (``None``): a tool loop's
  context grows with every tool result, so no honest bound exists;
- ``free``: the agent makes no paid model calls (``echo``, ``oracle``, ``local``);
- ``unknown``: the model has no price (a cost budget could not be enforced either).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.scenarios.plan import Group, Plan

if TYPE_CHECKING:
    from harness.agents.base import Budgets
    from harness.results.client import ResultsClient

CHARS_PER_TOKEN = 4


@dataclass
class GroupEstimate:
    group: Group
    runs: int
    low: float | None  # USD per run
    high: float | None  # USD per run; None: no bound
    basis: str  # history | prices | free | unknown
    detail: str = ""

    @property
    def total_low(self) -> float | None:
        return None if self.low is None else self.low * self.runs

    @property
    def total_high(self) -> float | None:
        return None if self.high is None else self.high * self.runs


@dataclass
class PlanEstimate:
    groups: list[GroupEstimate]

    @property
    def runs(self) -> int:
        return sum(g.runs for g in self.groups)

    @property
    def low(self) -> float | None:
        """The plan's lowest cost; None when some group's cost is unknown."""
        values = [g.total_low for g in self.groups if g.runs]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    @property
    def high(self) -> float | None:
        values = [g.total_high for g in self.groups if g.runs]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _prompt_tokens(group: Group) -> int:
    system = group.specialist.system_prompt(group.model) if group.specialist is not None else ""
    return (len(system) + len(group.prompt.text)) // CHARS_PER_TOKEN + 1


def _history(client: ResultsClient | None, group: Group) -> list[float]:
    if client is None:
        return []
    try:
        runs = client.list_runs(limit=200, suite=group.scenario.suite, scenario=group.scenario.name,
                                tier=group.prompt.tier, agent=group.agent, model=group.model)
    except Exception:  # noqa: BLE001 - an estimate without history is still an estimate
        return []
    return [r.telemetry.cost_usd for r in runs
            if r.telemetry is not None and r.telemetry.cost_usd is not None
            and (r.metadata or {}).get("tierLabel", group.prompt.label) == group.prompt.label]


def estimate_group(group: Group, budgets: Budgets | None, agent_options: dict[str, Any],
                   client: ResultsClient | None = None) -> GroupEstimate:
    from harness.agents import create_agent

    runs = len(group.iterations)
    costs = _history(client, group)
    if costs:
        return GroupEstimate(group, runs, min(costs), max(costs), "history", f"{len(costs)} earlier run(s)")
    try:
        agent = create_agent(group.agent, model=group.model, **agent_options)
    except ValueError as exc:
        return GroupEstimate(group, runs, None, None, "unknown", str(exc))
    price_of = getattr(agent, "price", None)
    if price_of is None:
        return GroupEstimate(group, runs, 0.0, 0.0, "free", "no paid model calls")
    price = price_of()
    if price is None:
        return GroupEstimate(group, runs, None, None, "unknown", f"no price for model {agent.model!r}")
    low = _prompt_tokens(group) * price.input / 1_000_000
    high: float | None = None
    if budgets is not None and budgets.max_cost_usd is not None:
        high, detail = max(low, budgets.max_cost_usd), "up to --max-cost"
    elif budgets is not None and budgets.max_total_tokens is not None:
        high = max(low, budgets.max_total_tokens * max(price.input, price.output) / 1_000_000)
        detail = "up to --max-tokens"
    else:
        detail = "no budget bounds it (set --max-cost or --max-tokens)"
    return GroupEstimate(group, runs, low, high, "prices", f"{price.provider}/{price.model}; {detail}")


def estimate_plan(plan: Plan, budgets: Budgets | None, agent_options: dict[str, Any],
                  client: ResultsClient | None = None) -> PlanEstimate:
    return PlanEstimate([estimate_group(g, budgets, agent_options, client) for g in plan.groups])
