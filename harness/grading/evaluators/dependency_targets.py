"""The ``dependency_targets`` evaluator: did the run move dependencies where the scenario asked,
without breaking its constraints?

Checks, each worth one point:

- ``targets.required[{name, to}]``: the package is declared and every declaration's lowest
  admitted version (``^5.6.2`` → 5.6.2) satisfies the range ``to``. ``targets.optional`` are
  reported, not scored.
- ``constraints.blocklist[{name}]``: the package's declarations are unchanged from the fixture
  (a pinned package must not be bumped, added or dropped).
- ``constraints.namespace_migrations[{from, to}]`` (when the fixture declared ``from``):
  ``from`` is gone and ``to`` is declared.
- ``constraints.companion_versions[{main, companions[{name, rule}]}]``: in every manifest that
  declares ``main`` (``engines`` included, so ``node`` works), each companion is declared and
  satisfies the rule: ``major must match``, ``minor must match`` (major.minor) or ``exact``.

Manifests read: package.json, pyproject.toml, requirements*.txt, anywhere outside
node_modules/.git. Score = passed / checks. A manifest that does not parse is reported and
left out; one that parses but breaks the reader (``project = "x"`` in a pyproject.toml) stops
the evaluator with a :class:`~harness.grading.evaluators.base.WorkspaceFault`: the run's output cannot
be graded, which fails the run (the same reader handled the fixture).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from harness.grading.evaluators.base import EvaluationContext, EvaluatorResult, WorkspaceFault
from harness._util.dependency_files import DeclaredDependency, declared_dependencies, normalize_python_name
from harness._util.semver import RangeError, min_version, satisfies

NAME = "dependency_targets"


def _is_node(dep: DeclaredDependency) -> bool:
    return dep.file.rsplit("/", 1)[-1] == "package.json"


def _named(deps: list[DeclaredDependency], name: str, engines: bool = False) -> list[DeclaredDependency]:
    py = normalize_python_name(name)
    return [d for d in deps if (d.name == name if _is_node(d) else d.name == py)
            and (engines or d.section != "engines")]


def _target_check(target: dict[str, Any], deps: list[DeclaredDependency]) -> tuple[bool, str]:
    name, wanted = target["name"], target["to"]
    found = _named(deps, name, engines=name == "node")
    if not found:
        return False, f"{name}: not declared (wanted {wanted})"
    bad = []
    for d in found:
        low = min_version(d.spec)
        try:
            ok = low is not None and satisfies(low, wanted)
        except RangeError as exc:
            return False, f"{name}: cannot read range {wanted!r}: {exc}"
        if not ok:
            bad.append(f"{d.file}: {d.spec or '(any)'}")
    if bad:
        return False, f"{name}: {'; '.join(bad)} does not satisfy {wanted}"
    return True, f"{name}: {', '.join(sorted({d.spec for d in found}))} satisfies {wanted}"


def _specs(deps: list[DeclaredDependency]) -> set[tuple[str, str, str]]:
    return {(d.file, d.section, d.spec) for d in deps}


def _companion_checks(rule_set: dict[str, Any], deps: list[DeclaredDependency]) -> list[tuple[bool, str]]:
    by_file: dict[str, list[DeclaredDependency]] = defaultdict(list)
    for d in deps:
        by_file[d.file].append(d)
    out = []
    main = rule_set["main"]
    for file, file_deps in sorted(by_file.items()):
        mains = _named(file_deps, main, engines=True)
        if not mains:
            continue
        main_v = min_version(mains[0].spec)
        for companion in rule_set.get("companions") or []:
            rule = str(companion["rule"]).strip().lower()
            parts = {"major must match": 1, "minor must match": 2, "exact": 3, "version must match": 3}.get(rule)
            if parts is None:
                continue  # unknown rule: not scored (reported by the evaluator)
            found = _named(file_deps, companion["name"])
            comp_v = min_version(found[0].spec) if found else None
            label = f"{file}: {companion['name']}@{found[0].spec if found else 'missing'} vs {main}@{mains[0].spec}"
            if main_v is None or comp_v is None:
                out.append((False, f"{label} ({rule}: version unreadable or missing)"))
                continue
            ok = (main_v.major, main_v.minor, main_v.patch)[:parts] == (comp_v.major, comp_v.minor, comp_v.patch)[:parts]
            out.append((ok, f"{label} ({rule})"))
    return out


def evaluate_dependency_targets(ctx: EvaluationContext) -> EvaluatorResult | None:
    """Score targets and constraints; None when the scenario sets neither."""
    targets = ctx.scenario.targets or {}
    constraints = ctx.scenario.constraints or {}
    required = targets.get("required") or []
    blocklist = constraints.get("blocklist") or []
    migrations = constraints.get("namespace_migrations") or []
    companions = constraints.get("companion_versions") or []
    if not (required or blocklist or migrations or companions or targets.get("optional")):
        return None

    fixture_deps: list[DeclaredDependency] = []
    if ctx.scenario.fixture_dir is not None:
        fixture_deps, _ = declared_dependencies(ctx.scenario.fixture_dir)  # raising here is the harness's
    try:
        deps, errors = declared_dependencies(ctx.workspace)
    except Exception as exc:  # noqa: BLE001 - the reader handled the fixture: the agent's manifests broke it
        raise WorkspaceFault(f"the workspace's dependency manifests cannot be read "
                             f"({type(exc).__name__}: {exc})") from exc

    checks: list[tuple[str, bool, str]] = []
    for target in required:
        ok, detail = _target_check(target, deps)
        checks.append(("target", ok, detail))
    for entry in blocklist:
        before, after = _specs(_named(fixture_deps, entry["name"])), _specs(_named(deps, entry["name"]))
        reason = f" ({entry['reason']})" if entry.get("reason") else ""
        if before == after:
            checks.append(("blocklist", True, f"{entry['name']}: unchanged{reason}"))
        else:
            now = ", ".join(sorted(s for _, _, s in after)) or "removed"
            checks.append(("blocklist", False, f"{entry['name']}: changed to {now}{reason}"))
    for mig in migrations:
        if not _named(fixture_deps, mig["from"]):
            continue  # nothing to migrate in this fixture
        old_left, new_there = _named(deps, mig["from"]), _named(deps, mig["to"])
        ok = not old_left and bool(new_there)
        state = "migrated" if ok else ("still declared" if old_left else f"{mig['to']} not declared")
        checks.append(("namespace_migration", ok, f"{mig['from']} -> {mig['to']}: {state}"))
    unknown_rules = []
    for rule_set in companions:
        checks += [("companion", ok, detail) for ok, detail in _companion_checks(rule_set, deps)]
        unknown_rules += [c["rule"] for c in rule_set.get("companions") or []
                          if str(c["rule"]).strip().lower() not in ("major must match", "minor must match", "exact",
                                                                     "version must match")]

    optional = [_target_check(t, deps) for t in targets.get("optional") or []]
    lines = [f"{'✓' if ok else '✗'} {kind}: {detail}" for kind, ok, detail in checks]
    lines += [f"{'✓' if ok else '·'} optional target: {detail}" for ok, detail in optional]
    lines += [f"! unsupported companion rule (not scored): {r}" for r in unknown_rules]
    lines += [f"! {e}" for e in errors]
    data = {"checks": [{"kind": k, "passed": ok, "detail": d} for k, ok, d in checks],
            "optional": [{"passed": ok, "detail": d} for ok, d in optional], "manifest_errors": errors}
    if not checks:
        return EvaluatorResult(NAME, 0.0, status="skipped", details="\n".join(lines) or "nothing to check", data=data)
    passed = sum(1 for _, ok, _ in checks if ok)
    summary = f"{passed}/{len(checks)} dependency checks passed"
    return EvaluatorResult(NAME, passed / len(checks), details="\n".join([summary, *lines]), data=data)
