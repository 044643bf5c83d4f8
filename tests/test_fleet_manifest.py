"""Fleet manifests: schema errors by field, the rules beyond the schema, normalisation and the
canonical hash, run ids, dataset lookup in repositories, suites of native repositories, git
clones, and ``bench fleet validate`` / ``--dry-run``."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.fleet import ManifestError, load_manifest, plan_fleet
from harness.fleet.planning import estimate
from harness.fleet.manifest import DATASET_PLACES, agent_for, find_dataset, parse_manifest, run_id_for
from harness.models.providers.registry import parse_target
from support.scenario_builders import git_repository, make_scenario

BENCH = os.path.join(os.path.dirname(sys.executable), "bench")

DATASET = {"name": "qa", "test_cases": [
    {"id": f"q{i}", "category": "math" if i % 2 else "geo", "prompt": f"Question {i}?",
     "assert": [{"type": "contains", "value": str(i)}]} for i in range(10)]}


def minimal(**extra) -> dict:
    doc = {"fleet_id": "f1", "repositories": [{"repo_id": "r1", "path": ".", "scenarios": ["reasoning"]}],
           "providers": ["openai:gpt-4o-mini"]}
    doc.update(extra)
    return doc


def problems(doc, root: Path | None = None) -> list[str]:
    with pytest.raises(ManifestError) as info:
        parse_manifest(doc, source="m.yaml", root=root)
    assert str(info.value).startswith("m.yaml")
    return info.value.problems


# --------------------------------------------------------------------------- schema and rules


@pytest.mark.parametrize("change, field", [
    ({"fleet_id": "bad id!"}, "fleet_id"),
    ({"version": "2.0"}, "version"),
    ({"repositories": []}, "repositories"),
    ({"repositories": [{"repo_id": "r1"}]}, "repositories[0]"),
    ({"repositories": [{"repo_id": "r1", "path": ".", "adapter": "custom"}]}, "repositories[0].adapter"),
    ({"repositories": [{"repo_id": "r1", "path": ".", "scenarios": "x"}]}, "repositories[0].scenarios"),
    ({"repositories": [{"repo_id": "r1", "path": ".", "colour": 1}]}, "repositories[0]"),
    ({"providers": []}, "providers"),
    ({"providers": ["gpt-4"]}, "providers[0]"),
    ({"scenario_profiles": {"p": {"concurrency": 0}}}, "scenario_profiles.p.concurrency"),
    ({"scenario_profiles": {"p": {"num_examples": -1}}}, "scenario_profiles.p.num_examples"),
    ({"scenario_profiles": {"p": {"request_delay_ms": -5}}}, "scenario_profiles.p.request_delay_ms"),
    ({"scenario_profiles": {"p": {"settings": {"temperature": 3}}}}, "scenario_profiles.p.settings.temperature"),
    ({"scenario_profiles": {"p": {"settings": {"seed": 3}}}}, "scenario_profiles.p.settings"),
    ({"scenario_profiles": {"p": {"dataset": "a", "suite": "b"}}}, "scenario_profiles.p"),
    ({"output": {"formats": ["pdf"]}}, "output.formats[0]"),
    ({"output": {"save_responses": "yes"}}, "output.save_responses"),
    ({"global_settings": {"max_retries": -1}}, "global_settings.max_retries"),
    ({"global_settings": {"test_timeout_seconds": 0}}, "global_settings.test_timeout_seconds"),
    ({"global_settings": {"random_seed": "x"}}, "global_settings.random_seed"),
    ({"global_settings": {"continue_on_failure": 1}}, "global_settings.continue_on_failure"),
])
def test_schema_errors_name_the_field(change, field):
    found = problems(minimal(**change))
    assert any(p.startswith(f"{field}:") for p in found), found


# Values for every top-level field and the fields inside it, right and wrong.
_VALUES = [None, True, False, 0, 1, 1.0, -1, 2, 2.5, 3, 20, 21, 1024, 1025, float("nan"), float("inf"), "", "x",
           "1.0", "1", "openai:gpt", "a b:c", "json", "pdf", "f1\n", [], ["x"], ["json", "json"], ["json", "csv"],
           ["a", "b", "c", "d", "e"], [""], {}, {"x": 1}]
_FIELDS = {
    "fleet_id": None, "version": None, "description": None, "providers": None,
    "scenario_profiles": ["dataset", "suite", "scenarios", "tier", "iterations", "concurrency", "num_examples",
                          "request_delay_ms", "description", "extra",
                          "settings.temperature", "settings.max_tokens", "settings.top_p", "settings.stop",
                          "settings.seed"],
    "output": ["base_dir", "formats", "save_responses", "generate_reports", "extra"],
    "global_settings": ["continue_on_failure", "random_seed", "test_timeout_seconds", "max_retries", "custom",
                        "extra"],
    "extra": None,
}


def _variants():
    for top, inner in _FIELDS.items():
        for value in _VALUES:
            if inner is None:
                yield {top: value}
                continue
            for name in inner:
                leaf: dict = {}
                *parents, last = name.split(".")
                node = leaf
                for part in parents:
                    node = node.setdefault(part, {})
                node[last] = value
                yield {top: {"p": leaf} if top == "scenario_profiles" else leaf}
    yield {"providers": [{"provider": "openai:gpt", "base_url": "http://x"}]}
    yield {"providers": [{"provider": "openai:gpt", "base_url": ""}]}
    yield {"providers": [{"provider": "openai:gpt", "key": "k"}]}
    yield {"scenario_profiles": {"p": {"dataset": "a", "suite": "b"}}}
    yield {"scenario_profiles": {"bad name": {"dataset": "a"}}}


def test_a_manifest_left_out_of_jsonschema_is_one_jsonschema_accepts():
    from harness.fleet.manifest_checks import _plain_top
    from harness._util.jsonschemas import validate

    plain = 0
    for change in _variants():
        doc = minimal(**change)
        if _plain_top(doc):
            plain += 1
            assert validate("fleet", doc) == [], change
    assert plain > 50  # the quick check vouches for the common manifests


def test_a_plain_manifest_and_its_datasets_are_checked_without_importing_jsonschema_or_asyncio(tmp_path):
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "qa.yaml").write_text(yaml.safe_dump(DATASET, default_flow_style=False))
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump({
        "fleet_id": "f1", "version": "1.0", "repositories": [{"repo_id": "r1", "path": "."}],
        "providers": ["openai:gpt-4o-mini"], "scenario_profiles": {"qa": {"dataset": "qa", "concurrency": 2}},
        "output": {"formats": ["json", "csv"]}, "global_settings": {"random_seed": 7}}))
    code = ("import sys; from harness.fleet import load_manifest, plan_fleet; "
            f"plan = plan_fleet(load_manifest({str(tmp_path / 'fleet.yaml')!r})); "
            "print(plan.planned_tests, plan.problems, 'jsonschema' in sys.modules, 'asyncio' in sys.modules)")
    env = {**os.environ, "ZE_BENCHMARKS_DATASET_CACHE": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["10", "[]", "False", "False"]  # neither long import: a plan runs nothing


def test_every_problem_is_reported_at_once():
    doc = minimal(fleet_id="", providers=["nope:model", "openai:gpt-4o-mini"],
                  repositories=[{"repo_id": "r1", "path": "."}, {"repo_id": "r1", "path": "."}])
    found = problems(doc)
    assert any(p.startswith("fleet_id:") for p in found)
    doc = minimal(providers=["nope:model", "openai:gpt-4o-mini", "openai:gpt-4o-mini"],
                  repositories=[{"repo_id": "r1", "path": ".", "scenarios": ["a"]},
                                {"repo_id": "r1", "path": ".", "scenarios": ["a"]}])
    found = problems(doc)
    assert any(p.startswith("providers[0]:") and "unknown provider 'nope'" in p for p in found)
    assert any(p.startswith("providers[2]:") and "listed twice" in p for p in found)
    assert any(p.startswith("repositories[1].repo_id:") and "duplicate" in p for p in found)


def test_rules_beyond_the_schema():
    found = problems(minimal(scenario_profiles={"s": {"suite": "demo", "num_examples": 3,
                                                      "settings": {"max_tokens": 5}}},
                             repositories=[{"repo_id": "r1", "path": ".", "scenarios": ["s"]}]))
    assert any(p.startswith("scenario_profiles.s.num_examples:") for p in found)
    assert any(p.startswith("scenario_profiles.s.settings:") and "max_tokens" in p for p in found)
    found = problems(minimal(scenario_profiles={"d": {"dataset": "qa", "tier": "L2"}}))
    assert any(p.startswith("scenario_profiles.d:") for p in found)
    found = problems(minimal(providers=["openai-compatible:m"]))
    assert any(p.startswith("providers[0]:") and "base-url" in p for p in found)


def test_unreadable_and_unknown_files(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("fleet_id: [unclosed\n")
    with pytest.raises(ManifestError, match=r"m.yaml: line \d+, column \d+: invalid YAML"):
        load_manifest(bad)
    with pytest.raises(ManifestError, match="unknown manifest format '.toml'"):
        load_manifest(tmp_path / "m.toml")
    with pytest.raises(ManifestError, match="no such file"):
        load_manifest(tmp_path / "missing.json")


def test_the_original_example_manifest_validates(tmp_path):
    """The seed's example (coding profile, a 'reasoning' scenario with no profile, two providers)."""
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "coding-tasks.json").write_text(json.dumps({**DATASET, "name": "coding-tasks"}))
    doc = {"fleet_id": "agentics-fleet-2025", "version": "1.0", "description": "Production Agentics system benchmark",
           "repositories": [{"repo_id": "test-bench", "path": ".", "adapter": "native",
                             "scenarios": ["coding", "reasoning"]}],
           "providers": ["openai:gpt-4", "anthropic:claude-3-opus"],
           "scenario_profiles": {"coding": {"dataset": "coding-tasks.json", "concurrency": 5, "num_examples": 100}},
           "output": {"base_dir": "./fleet-results", "formats": ["json", "csv", "html"]}}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(doc))
    manifest = load_manifest(path)
    plan = plan_fleet(manifest)
    assert plan.problems == []
    assert [c.key for c in plan.cells] == [
        "test-bench|openai:gpt-4|coding", "test-bench|openai:gpt-4|reasoning",
        "test-bench|anthropic:claude-3-opus|coding", "test-bench|anthropic:claude-3-opus|reasoning"]
    coding = plan.cells[0]
    assert coding.lookup.ref == str(tmp_path / "datasets" / "coding-tasks.json")
    assert len(coding.planned) == 10  # num_examples 100 of a 10-case dataset: all of them
    assert plan.cells[1].lookup.builtin and plan.cells[1].lookup.ref == "reasoning"
    assert manifest.base_dir == tmp_path / "fleet-results"


# --------------------------------------------------------------------------- identity


def test_hash_ignores_key_order_format_and_spelled_defaults(tmp_path):
    doc = minimal(description="d", scenario_profiles={"reasoning": {"dataset": "reasoning", "num_examples": 2}},
                  global_settings={"random_seed": 3})
    a = tmp_path / "a.json"
    a.write_text(json.dumps(doc, indent=1))
    reordered = dict(reversed(list(doc.items())))
    reordered["repositories"] = [dict(reversed(list(r.items()))) for r in doc["repositories"]]
    b = tmp_path / "b.yaml"
    b.write_text(yaml.safe_dump(reordered, sort_keys=False))
    spelled = json.loads(json.dumps(doc))
    spelled["version"] = 1.0
    spelled["repositories"][0]["adapter"] = "native"
    spelled["scenario_profiles"]["reasoning"]["concurrency"] = 5
    spelled["global_settings"]["continue_on_failure"] = True
    c = tmp_path / "c.json"
    c.write_text(json.dumps(spelled))
    hashes = {load_manifest(p).hash for p in (a, b, c)}
    assert len(hashes) == 1
    changed = json.loads(json.dumps(doc))
    changed["global_settings"]["random_seed"] = 4
    d = tmp_path / "d.json"
    d.write_text(json.dumps(changed))
    assert load_manifest(d).hash not in hashes


def test_run_id_format():
    manifest = parse_manifest(minimal(), root=Path("."))
    when = dt.datetime(2026, 11, 23, 10, 15, 0, tzinfo=dt.timezone.utc)
    run_id = run_id_for(manifest, when)
    assert run_id == f"f1-20261123T101500Z-{manifest.hash[:8]}"
    later = run_id_for(manifest, when + dt.timedelta(hours=1))
    assert later.rsplit("-", 1)[1] == run_id.rsplit("-", 1)[1] and later != run_id


def test_relative_paths_are_relative_to_the_manifest(tmp_path, monkeypatch):
    (tmp_path / "sub" / "repo").mkdir(parents=True)
    path = tmp_path / "sub" / "m.json"
    path.write_text(json.dumps(minimal(repositories=[{"repo_id": "r", "path": "repo"}],
                                       scenario_profiles={"p": {"dataset": "reasoning"}},
                                       output={"base_dir": "out"})))
    monkeypatch.chdir(tmp_path)
    manifest = load_manifest(path)
    assert manifest.repositories[0].path == tmp_path / "sub" / "repo"
    assert manifest.base_dir == tmp_path / "sub" / "out"
    assert manifest.repositories[0].profiles == ("p",)  # no scenarios: every profile


# --------------------------------------------------------------------------- lookup


def test_dataset_lookup_order(tmp_path):
    repo = tmp_path / "repo"
    text = json.dumps(DATASET)
    places = [repo / "qa", *[repo / place / "qa.yaml" for place in DATASET_PLACES]]
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(text)
    for expected in places:  # each found first while it exists, then removed
        found = find_dataset(repo, "qa", tmp_path, builtins={"reasoning"})
        assert found.ref == str(expected)
        expected.unlink()
    beside = tmp_path / "qa"
    beside.write_text(text)
    assert find_dataset(repo, "qa", tmp_path, builtins=set()).ref == str(beside)
    beside.unlink()
    missing = find_dataset(repo, "qa", tmp_path, builtins={"reasoning"})
    assert missing.ref is None
    assert missing.looked[0] == str(repo / "qa")
    assert f"{repo / 'datasets' / 'data' / 'qa'}.{{json,yaml,yml,jsonl,csv}}" in missing.looked
    assert missing.looked[-1] == "built-in datasets (reasoning)"
    assert find_dataset(repo, "reasoning", tmp_path, builtins={"reasoning"}).builtin


def test_original_datasets_data_layout_for_both_adapters(tmp_path):
    for adapter in ("native", "generic"):
        repo = tmp_path / adapter
        (repo / "datasets" / "data").mkdir(parents=True)
        (repo / "datasets" / "data" / "qa.json").write_text(json.dumps(DATASET))
    doc = minimal(repositories=[{"repo_id": a, "path": a, "adapter": a, "scenarios": ["qa"]}
                                for a in ("native", "generic")])
    plan = plan_fleet(parse_manifest(doc, root=tmp_path))
    assert plan.problems == []
    assert [c.lookup.ref for c in plan.cells] == [str(tmp_path / a / "datasets" / "data" / "qa.json")
                                                  for a in ("native", "generic")]


def test_adapter_decides_where_suites_come_from(tmp_path, monkeypatch):
    """A native repository's own suites/ serves its suite profiles; a generic one uses the project's."""
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "project-suites"))
    (tmp_path / "project-suites").mkdir()
    for name in ("native", "generic"):
        make_scenario(tmp_path / name / "suites", suite="demo")
    doc = minimal(repositories=[{"repo_id": a, "path": a, "adapter": a, "scenarios": ["fix"]}
                                for a in ("native", "generic")],
                  scenario_profiles={"fix": {"suite": "demo", "iterations": 3}})
    plan = plan_fleet(parse_manifest(doc, root=tmp_path))
    native, generic = plan.cells
    assert native.problem is None and native.planned == [("add-one#L1#0", "demo"), ("add-one#L1#1", "demo"),
                                                         ("add-one#L1#2", "demo")]
    assert generic.problem is not None and "unknown suite 'demo'" in generic.problem


def test_agent_of_each_provider():
    assert agent_for(parse_target("anthropic:claude-sonnet-4-6")) == ("anthropic", {})
    assert agent_for(parse_target("local:smollm2")) == ("local", {})
    agent, options = agent_for(parse_target("openai-compatible:m", base_url="http://127.0.0.1:9/v1"))
    assert agent == "openai" and options == {"base_url": "http://127.0.0.1:9/v1"}


def test_git_url_is_cloned_shallowly_into_the_cache(tmp_path):
    source = tmp_path / "origin"
    (source / "datasets").mkdir(parents=True)
    (source / "datasets" / "qa.json").write_text(json.dumps(DATASET))
    git_repository(source)
    doc = minimal(repositories=[{"repo_id": "remote", "git_url": source.as_uri(), "scenarios": ["qa"]}])
    plan = plan_fleet(parse_manifest(doc, root=tmp_path))
    assert plan.problems == []
    clone = plan.cells[0].repo.path
    assert clone is not None and clone != source and (clone / ".git").exists()
    assert plan.cells[0].lookup.ref == str(clone / "datasets" / "qa.json")
    depth = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=clone, capture_output=True, text=True)
    assert depth.stdout.strip() == "1"
    again = plan_fleet(parse_manifest(doc, root=tmp_path))  # reused from the cache
    assert again.cells[0].repo.path == clone
    bad = minimal(repositories=[{"repo_id": "gone", "git_url": (tmp_path / "nothing").as_uri(), "scenarios": ["qa"]}])
    failed = plan_fleet(parse_manifest(bad, root=tmp_path))
    assert failed.problems and "cannot clone" in failed.problems[0]


# --------------------------------------------------------------------------- sampling and estimates


def test_num_examples_samples_reproducibly_with_the_seed(tmp_path):
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "qa.json").write_text(json.dumps(DATASET))

    def keys(seed):
        settings = {} if seed is None else {"random_seed": seed}
        doc = minimal(repositories=[{"repo_id": "r", "path": ".", "scenarios": ["qa"]}],
                      scenario_profiles={"qa": {"dataset": "qa", "num_examples": 4}}, global_settings=settings)
        return [k for k, _ in plan_fleet(parse_manifest(doc, root=tmp_path)).cells[0].planned]

    assert keys(None) == ["q0#0", "q1#0", "q2#0", "q3#0"]  # no seed: the first N
    assert keys(11) == keys(11) and len(keys(11)) == 4
    draws = {tuple(keys(seed)) for seed in range(6)}
    assert len(draws) > 1  # the seed decides the sample


def test_estimate_counts_requests_and_prices_them(tmp_path):
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "qa.json").write_text(json.dumps(DATASET))
    doc = minimal(repositories=[{"repo_id": "a", "path": "."}, {"repo_id": "b", "path": "."}],
                  providers=["openai:gpt-4o-mini", "openai-compatible:unpriced"],
                  scenario_profiles={"qa": {"dataset": "qa", "num_examples": 3, "settings": {"max_tokens": 10}}})
    plan = plan_fleet(parse_manifest(doc, root=tmp_path, base_url="http://127.0.0.1:9/v1"))
    figures = estimate(plan)
    assert figures["requests"] == 2 * 2 * 3
    assert figures["providers"]["openai:gpt-4o-mini"]["maxTokensOut"] == 2 * 3 * 10  # settings apply
    assert figures["providers"]["openai:gpt-4o-mini"]["maxCostUsd"] > 0
    assert figures["providers"]["openai-compatible:unpriced"]["maxCostUsd"] is None
    assert figures["maxCostUsd"] is None  # unknown, never 0


# --------------------------------------------------------------------------- the CLI


def _bench(*args, cwd, env=None):
    return subprocess.run([BENCH, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_validate_and_dry_run_commands(tmp_path):
    (tmp_path / "repo" / "datasets").mkdir(parents=True)
    (tmp_path / "repo" / "datasets" / "qa.yaml").write_text(yaml.safe_dump(DATASET))
    doc = minimal(repositories=[{"repo_id": "r", "path": "repo", "scenarios": ["qa", "missing"]}],
                  providers=["openai:gpt-4o-mini"])
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(doc))
    env = {"OPENAI_API_KEY": ""}
    done = _bench("fleet", "validate", "m.yaml", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "dataset 'missing' of profile 'missing' not found for repository r; looked in:" in done.stderr
    assert str(tmp_path / "repo" / "benchmarks" / "missing") in done.stderr
    doc["repositories"][0]["scenarios"] = ["qa"]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(doc))
    done = _bench("fleet", "validate", "m.yaml", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "valid (1 repositories × 1 providers; 1 cells, 10 tests" in done.stdout
    assert "OPENAI_API_KEY" in done.stderr  # noted, not needed to validate
    done = _bench("fleet", "m.yaml", "--dry-run", "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["estimate"]["requests"] == 10 and data["matrix"][0]["tests"] == 10
    assert not (tmp_path / "fleet-results").exists()  # a dry run writes nothing
    done = _bench("fleet", "m.yaml", cwd=tmp_path, env=env)  # a real run refuses without the key
    assert done.returncode == 2 and "openai:gpt-4o-mini needs OPENAI_API_KEY" in done.stderr
    done = _bench("fleet", "nothere.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "nothere.yaml: no such file" in done.stderr
    done = _bench("fleet", "status", "no-such-run", cwd=tmp_path)
    assert done.returncode == 2 and "no fleet run 'no-such-run'" in done.stderr


def test_the_example_manifest_of_the_readme(tmp_path):
    """README's commands on examples/fleet.yaml work as written (without any API key)."""
    root = Path(__file__).resolve().parents[1]
    env = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    done = _bench("fleet", "validate", "examples/fleet.yaml", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    assert "valid (2 repositories × 3 providers; 9 cells" in done.stdout
    assert "examples/fleet-repo/datasets/data/support-faq.yaml" in done.stdout  # the original's layout
    done = _bench("fleet", "examples/fleet.yaml", "--dry-run", "--format", "json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)["estimate"]
    assert figures["requests"] == 3 * (6 + 3) and figures["scenarioRuns"] == 3
    manifest = load_manifest(root / "examples" / "fleet.yaml")
    assert manifest.random_seed == 42 and manifest.profiles["py-bug"].kind == "suite"


def test_the_fast_path_never_accepts_a_repository_the_schema_refuses():
    """Repositories the plain-Python check vouches for skip jsonschema; it must never be laxer,
    and the problems found are those of a full check, at the same paths."""
    import copy
    import random

    from harness.fleet import manifest_checks
    from harness._util.jsonschemas import load_schema, validate

    odd_values = [None, "", " ", "x", "a b", "-x", "x" * 101, "ok.id_1-2", 0, 1, True, [], [""], ["qa"], [1], {},
                  {"k": 1}, "native", "generic", "other"]
    base = {"repo_id": "r-1", "path": "repos/r", "git_url": "file:///tmp/r", "adapter": "native",
            "scenarios": ["qa"], "metadata": {"team": "t"}}
    rng = random.Random(5)
    repositories = [{**base, "repo_id": f"r{i}"} for i in range(3)]
    for key in [*base, "other"]:
        for value in odd_values:
            repositories.append({**base, key: value})
    for key in ("path", "git_url"):
        repositories.append({k: v for k, v in base.items() if k != key})
    repositories.append({"repo_id": "bare"})
    for _ in range(600):
        raw = copy.deepcopy(base)
        for key in rng.sample(list(base), 2):
            raw[key] = rng.choice(odd_values)
        repositories.append(raw)
    vouched = 0
    for raw in repositories:
        if manifest_checks._plain_repository(raw):
            vouched += 1
            assert validate("fleet", minimal(repositories=[raw])) == [], raw
    assert vouched > 50
    for start in range(0, len(repositories), 40):  # manifests of many repositories, valid and not
        document = minimal(repositories=repositories[start:start + 40])
        assert manifest_checks._schema_issues(document) == validate("fleet", document)
    assert set(manifest_checks._REPOSITORY_RULES) == set(load_schema("fleet")["$defs"]["repository"]["properties"])
