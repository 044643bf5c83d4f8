"""Planning a fleet: a manifest's repositories × providers × profiles as cells, each with the
tests it plans, and the estimate of what running them asks.

:class:`FleetPlanner` plans one repository at a time, in manifest order (a repository given by
``git_url`` is cloned into the cache first), so that a running fleet
(:class:`harness.fleet.execute.FleetExecution`) starts on the first cells while the others are
planned; :func:`plan_fleet` plans them all at once. A dataset profile resolves to a dataset
file in its repository (each file loaded once, however many cells use it), a suite profile to
the scenarios of its suite that have the profile's tier. What stops a cell from running (a
repository that is not there, a dataset not found, a suite unknown) is collected in
:attr:`FleetPlan.problems`, naming the repository and the profile, never raised.
:func:`estimate` gives the requests, scenario runs and an upper cost per provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from harness.fleet.cells import FleetCell
from harness.fleet.manifest import DatasetLookup, Manifest, Profile, Repository, find_dataset, suites_dir_for
from harness._util.gc_tuning import fewer_collections


@dataclass
class FleetPlan:
    manifest: Manifest
    cells: list[FleetCell]
    problems: list[str] = field(default_factory=list)  # what stops the fleet from running
    notes: list[str] = field(default_factory=list)
    datasets: "_Datasets | None" = None  # every dataset file loaded while planning, by ref

    @property
    def planned_tests(self) -> int:
        return sum(len(c.planned) for c in self.cells)


class _Datasets:
    """Datasets loaded once per file however many cells use them."""

    def __init__(self) -> None:
        self._loaded: dict[str, Any] = {}

    def get(self, ref: str) -> Any:
        if ref not in self._loaded:
            from harness.datasets.format import load_dataset

            self._loaded[ref] = load_dataset(ref)
        return self._loaded[ref]


def resolve_repository(repo: Repository, *, clone: bool = True) -> tuple[Repository, str | None]:
    """The repository with a local path (a ``git_url`` alone is cloned, shallowly, into the
    cache), or the problem that leaves it without one."""
    if repo.path is not None:
        if not repo.path.is_dir():
            return repo, f"{repo.path} is not a directory"
        return repo, None
    if not clone:
        return repo, None
    from harness.fleet.processes import CloneError
    from harness.fleet.processes import clone as git_clone

    try:
        return replace(repo, path=git_clone(repo.git_url or "")), None
    except CloneError as exc:
        return repo, str(exc)


class FleetPlanner:
    """Plans a manifest one repository at a time, in manifest order: :meth:`step` plans the
    next repository and returns its cells, which are also appended to :attr:`plan`. A running
    fleet starts on the first repositories' cells while the others are planned
    (:class:`FleetExecution`); :func:`plan_fleet` plans them all at once."""

    def __init__(self, manifest: Manifest, *, clone: bool = True) -> None:
        from harness.datasets.format import builtin_names

        self.plan = FleetPlan(manifest, [], datasets=_Datasets())
        self.clone = clone
        self._builtins = set(builtin_names())
        self._suites: dict[tuple[str, str, tuple[str, ...]], Any] = {}
        self._next = 0

    def _lookup(self, repo: Repository, name: str, profile: Profile) -> DatasetLookup:
        return find_dataset(repo.path, profile.dataset or name, self.plan.manifest.root, self._builtins)

    @property
    def done(self) -> bool:
        return self._next >= len(self.plan.manifest.repositories)

    @property
    def next_clones(self) -> bool:
        """Whether the next :meth:`step` clones its repository (a ``git_url`` without a path)."""
        return not self.done and self.clone and self.plan.manifest.repositories[self._next].path is None

    def step(self) -> list[FleetCell]:
        """Plan the next repository; its cells (none once :attr:`done`)."""
        from harness.datasets.model import DatasetError, apply_settings, sample_cases

        if self.done:
            return []
        plan, manifest = self.plan, self.plan.manifest
        i = self._next
        self._next += 1
        repo, problem = resolve_repository(manifest.repositories[i], clone=self.clone)
        manifest.repositories[i] = repo
        if problem:
            plan.problems.append(f"repositories[{i}] ({repo.repo_id}): {problem}")
        resolved: list[tuple[Profile, DatasetLookup | None, list[tuple[str, str]], str | None]] = []
        for name in repo.profiles:
            profile = manifest.profiles[name]
            lookup = None
            planned: list[tuple[str, str]] = []
            cell_problem = problem
            if profile.kind == "dataset" and not problem:
                lookup = self._lookup(repo, name, profile)
                if lookup.ref is None:
                    cell_problem = (f"dataset {profile.dataset!r} of profile {name!r} not found for repository "
                                    f"{repo.repo_id}; looked in: " + "; ".join(lookup.looked))
                else:
                    try:
                        dataset = plan.datasets.get(lookup.ref)
                    except DatasetError as exc:
                        cell_problem = f"profile {name!r}, repository {repo.repo_id}: {exc}"
                    else:
                        cases = apply_settings(sample_cases(list(dataset.cases), profile.num_examples,
                                                            manifest.random_seed), profile.settings)
                        planned = [(f"{c.id}#{r}", c.category) for c in cases for r in range(c.repeat)]
            elif profile.kind == "suite" and not problem:
                key = (str(suites_dir_for(repo)), profile.suite or "", profile.scenarios)
                if key not in self._suites:
                    self._suites[key] = _suite_tests(repo, profile)
                found = self._suites[key]
                if isinstance(found, str):
                    cell_problem = f"profile {name!r}, repository {repo.repo_id}: {found}"
                else:
                    planned = [(f"{s}#{profile.tier}#{it}", profile.suite or "") for s in found
                               for it in range(profile.iterations)]
            if cell_problem and cell_problem != problem:
                plan.problems.append(cell_problem)
            resolved.append((profile, lookup, planned, cell_problem))
        cells = [FleetCell(repo, target, profile, lookup, list(planned), cell_problem)
                 for target in manifest.targets for profile, lookup, planned, cell_problem in resolved]
        plan.cells.extend(cells)
        return cells


@fewer_collections()
def plan_fleet(manifest: Manifest, *, clone: bool = True) -> FleetPlan:
    """Every cell of the manifest, in manifest order (repository, then provider, then profile),
    with the dataset each dataset profile resolves to in its repository and the tests it plans.
    Problems (a repository that is not there, a dataset not found, a suite unknown) are
    collected, each naming the repository and profile, not raised."""
    planner = FleetPlanner(manifest, clone=clone)
    while not planner.done:
        planner.step()
    return planner.plan


def _suite_tests(repo: Repository, profile: Profile) -> list[str] | str:
    """The scenario names a suite profile runs in ``repo`` (checked for the tier), or why not."""
    from harness.scenarios.plan import PlanError, select_scenarios
    from harness.scenarios.loading import available_tiers
    from harness.scenarios.model import ScenarioError

    try:
        scenarios = select_scenarios(suites_dir_for(repo), [profile.suite or ""], list(profile.scenarios))
    except (PlanError, ScenarioError) as exc:
        return str(exc)
    for scenario in scenarios:
        tiers = available_tiers(scenario)
        if not any(t == profile.tier or t.split("-")[0] == profile.tier for t in tiers):
            return f"scenario {scenario.suite}/{scenario.name} has no tier {profile.tier} (it has {', '.join(tiers)})"
    return [s.name for s in scenarios]


def credential_notes(manifest: Manifest) -> list[str]:
    from harness.models.providers.registry import missing_credentials

    return [f"{t.spec} needs {var}" for t, var in missing_credentials(manifest.targets)]


def estimate(plan: FleetPlan) -> dict[str, Any]:
    """Requests (dataset cells) and scenario runs (suite cells), with an upper cost estimate per
    provider for the requests (input ~ 4 characters a token, output at max_tokens). Scenario
    runs have no estimate: how many calls an agent makes is not known before it runs."""
    from harness.datasets.model import apply_settings, sample_cases
    from harness.datasets.planning import DEFAULT_MAX_TOKENS, _price_key
    from harness.models.pricing import price_for
    from harness.models.providers import Usage

    datasets = plan.datasets or _Datasets()
    tokens: dict[tuple[str, str], tuple[int, int, int]] = {}
    providers: dict[str, dict[str, Any]] = {}
    for cell in plan.cells:
        row = providers.setdefault(cell.target.spec, {"requests": 0, "scenarioRuns": 0, "maxCostUsd": 0.0,
                                                      "tokensIn": 0, "maxTokensOut": 0})
        if cell.problem:
            continue
        if cell.kind == "suite":
            row["scenarioRuns"] += len(cell.planned)
            continue
        key = (cell.lookup.ref if cell.lookup else "", cell.profile.name)
        if key not in tokens:
            cases = apply_settings(sample_cases(list(datasets.get(key[0]).cases), cell.profile.num_examples,
                                                plan.manifest.random_seed), cell.profile.settings)
            tokens[key] = (sum(c.repeat for c in cases),
                           sum(((len(c.prompt) + len(c.system or "")) // 4 + 8) * c.repeat for c in cases),
                           sum((c.max_tokens or DEFAULT_MAX_TOKENS) * c.repeat for c in cases))
        requests, tin, tout = tokens[key]
        row["requests"] += requests
        row["tokensIn"] += tin
        row["maxTokensOut"] += tout
    for spec, row in providers.items():
        target = next(t for t in plan.manifest.targets if t.spec == spec)
        price = price_for(*_price_key(target))
        row["maxCostUsd"] = (price.cost(Usage(input_tokens=row["tokensIn"], output_tokens=row["maxTokensOut"]))
                             if price else None)
    known = [r["maxCostUsd"] for r in providers.values()]
    return {"cells": len(plan.cells), "requests": sum(r["requests"] for r in providers.values()),
            "scenarioRuns": sum(r["scenarioRuns"] for r in providers.values()),
            "maxCostUsd": None if any(c is None for c in known) else round(sum(known), 6),
            "providers": providers}
