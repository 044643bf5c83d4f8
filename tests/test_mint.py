"""mint snapshot: run split, the comparison through worker.analysis.compare (common cells, one
factor, clustered repeats), refusal without the specialist, schema validation, numbered writes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import json5
import pytest
from scipy import stats as sps

from harness.mint.comparison import comparison_section
from harness.mint.output import write_next_numbered
from harness.mint.snapshot import (MintError, build_snapshot, mint_snapshot, split_runs, validate_snapshot,
                                   write_snapshot)
from harness.results.records import BatchRecord, RunRecord, Telemetry
from harness.specialists import Specialist
from harness.testing.results import MemoryResults
from support.mint import BASE, SCENARIOS, SPEC
from support.mint import paired_runs as _paired_runs
from support.mint import run_record as _run
from support.mint import specialist as _specialist
from worker.analysis import stats as S
from worker.analysis.compare import compare_runs


def _memory_results(runs: list[RunRecord]) -> MemoryResults:
    """The runs and their batch (metadata ``{"note": "test"}``) in an in-memory results store."""
    client = MemoryResults()
    for batch_id in dict.fromkeys(r.batch_id for r in runs):
        client.post_batch(BatchRecord(batch_id=batch_id, total_runs=sum(r.batch_id == batch_id for r in runs),
                                      metadata={"note": "test"}))
    for run in runs:
        client.post_run(run)
    return client


def _comparison(runs: list[RunRecord]) -> dict:
    snapshot, _ = build_snapshot(_specialist(), BatchRecord("batch_x"), runs)
    assert validate_snapshot(snapshot) == []
    return snapshot["benchmarks"]["comparison"]


def test_comparison_is_the_shared_compare_paired_t_on_one_pair_per_scenario():
    runs = _paired_runs()
    comp = _comparison(runs)
    ref = sps.ttest_rel(SPEC, BASE)
    ci = ref.confidence_interval(0.95)
    assert comp["test"] == "paired_t" and comp["paired_samples"] == 4 and comp["clusters"] == 4
    assert comp["cells"] == {"paired": 4, "baseline_only": 0, "specialist_only": 0}
    assert comp["baseline_avg_score"] == pytest.approx(sum(BASE) / 4)
    assert comp["specialist_avg_score"] == pytest.approx(sum(SPEC) / 4)
    assert comp["improvement"] == pytest.approx(sum(SPEC) / 4 - sum(BASE) / 4)
    assert comp["improvement_pct"] == pytest.approx((sum(SPEC) - sum(BASE)) / sum(BASE) * 100, abs=0.01)
    assert comp["p_value"] == pytest.approx(ref.pvalue, rel=1e-5)
    assert comp["ci_low"] == pytest.approx(ci.low, abs=1e-6) and comp["ci_high"] == pytest.approx(ci.high, abs=1e-6)
    assert comp["verdict"] == "specialist better" and comp["refused"] == []
    assert (comp["baseline_runs"], comp["specialist_runs"]) == (4, 4)
    # The very figures of worker.analysis.compare, the specialist as side A.
    shared = compare_runs([r.to_wire() for r in runs if r.specialist_enabled],
                          [r.to_wire() for r in runs if not r.specialist_enabled], factor={"specialist"})
    score = shared["metrics"][0]
    assert (score["metric"], score["p"], score["ci"]) == ("score", comp["p_value"], [comp["ci_low"], comp["ci_high"]])
    assert [m["metric"] for m in comp["metrics"]] == ["score", "success", "cost", "duration", "tokens", "turns"]
    success = comp["metrics"][1]
    assert (success["metric"], success["baseline_mean"], success["specialist_mean"]) == ("success", 0.0, 1.0)
    assert comp["models_compared"][0]["model"] == "m1"
    assert comp["models_compared"][0]["verdict"] == "specialist better"


def test_a_worse_specialist_is_baseline_better():
    runs = [_run(i, s, specialist=False, scenario=SCENARIOS[i], iteration=0) for i, s in enumerate(SPEC)]
    runs += [_run(10 + i, s, specialist=True, scenario=SCENARIOS[i], iteration=0) for i, s in enumerate(BASE)]
    assert _comparison(runs)["verdict"] == "baseline better"


def test_only_cells_both_sides_ran_are_compared_a_hard_easy_split_gives_no_verdict():
    hard = [0.1, 0.15, 0.2, 0.12, 0.18]
    easy = [0.9, 1.0, 0.95, 0.92, 0.97]
    runs = [_run(i, s, specialist=False, scenario="hard", iteration=i) for i, s in enumerate(hard)]
    runs += [_run(10 + i, s, specialist=True, scenario="easy", iteration=i) for i, s in enumerate(easy)]
    assert sps.ttest_ind(easy, hard, equal_var=False).pvalue < 1e-4  # what an unpaired test would call "better"
    comp = _comparison(runs)
    assert comp["cells"] == {"paired": 0, "baseline_only": 5, "specialist_only": 5}
    assert comp["verdict"] == "not enough runs"
    assert comp["p_value"] is None and comp["improvement"] is None and comp["test"] is None
    assert any("only the 0 cells both sides ran are compared" in n for n in comp["notes"])


def test_cells_only_one_side_ran_are_counted_and_left_out():
    runs = _paired_runs() + [_run(5, 0.0, specialist=False, scenario="s5", iteration=0)]
    comp = _comparison(runs)
    assert comp["cells"] == {"paired": 4, "baseline_only": 1, "specialist_only": 0}
    assert comp["baseline_avg_score"] == pytest.approx(sum(BASE) / 4)  # the paired cells only
    assert comp["p_value"] == pytest.approx(sps.ttest_rel(SPEC, BASE).pvalue, rel=1e-5)


@pytest.mark.parametrize("field, base_value, spec_value", [("agent", "echo", "oracle"), ("model", "m-base", "m-spec")])
def test_sides_of_different_agents_or_models_are_not_comparable(field, base_value, spec_value):
    runs = _paired_runs()
    for r in runs:
        setattr(r, field, spec_value if r.specialist_enabled else base_value)
    comp = _comparison(runs)
    assert comp["verdict"] == "not comparable"
    assert comp["p_value"] is None and comp["cells"]["paired"] == 0
    assert len(comp["refused"]) == 1 and base_value in comp["refused"][0] and spec_value in comp["refused"][0]
    assert "not the compared factor (specialist)" in comp["refused"][0]
    assert comp["baseline_agents" if field == "agent" else "baseline_runs"]  # the sides are still described


def test_config_parts_that_differ_beyond_the_specialist_are_not_comparable():
    parts = {"scenario": "d1", "prompt": "p", "agent": "anthropic", "model": "m1", "budgets": "b1", "specialist": ""}
    runs = _paired_runs()
    for r in runs:
        r.metadata["configParts"] = {**parts, "specialist": "@acme/py-fixer@1.2.0" if r.specialist_enabled else ""}
    comp = _comparison(runs)
    assert comp["verdict"] == "specialist better" and comp["configuration"]["differing_parts"] == ["specialist"]
    for r in runs:
        if r.specialist_enabled:
            r.metadata["configParts"]["budgets"] = "b2"
    comp = _comparison(runs)
    assert comp["verdict"] == "not comparable"
    assert "budgets, specialist" in comp["refused"][0]


def _repeated_runs() -> tuple[list[RunRecord], dict[str, list[float]]]:
    """Three scenarios, three iterations each, differences that vary within and across scenarios."""
    base = {"s1": [0.2, 0.3, 0.25], "s2": [0.5, 0.45, 0.55], "s3": [0.4, 0.35, 0.3]}
    spec = {"s1": [0.6, 0.7, 0.62], "s2": [0.58, 0.5, 0.6], "s3": [0.7, 0.72, 0.66]}
    runs, i = [], 0
    for scenario in base:
        for it in range(3):
            runs.append(_run(i, base[scenario][it], specialist=False, scenario=scenario, iteration=it))
            runs.append(_run(i + 1, spec[scenario][it], specialist=True, scenario=scenario, iteration=it))
            i += 2
    diffs = {s: [b - a for a, b in zip(base[s], spec[s])] for s in base}
    return runs, diffs


def test_repeats_of_a_scenario_are_clustered_not_counted_as_independent():
    runs, diffs = _repeated_runs()
    comp = _comparison(runs)
    clustered = S.cluster_paired(list(diffs.values()))
    assert comp["test"] == "cluster_paired" and "clustered by scenario" in comp["test_reason"]
    assert (comp["paired_samples"], comp["clusters"]) == (9, 3)
    assert comp["p_value"] == pytest.approx(clustered.p_value, rel=1e-6)
    assert comp["ci_low"] == pytest.approx(clustered.ci_low, abs=1e-6)
    naive = sps.ttest_1samp([d for ds in diffs.values() for d in ds], 0.0).pvalue
    assert naive < 0.05 <= comp["p_value"]  # nine "independent" pairs would have said better
    assert comp["verdict"] == "no detectable difference"


def test_one_scenario_with_repeats_is_not_enough_runs_whatever_the_gap():
    runs = [_run(i, s, specialist=False, iteration=i) for i, s in enumerate(BASE)]
    runs += [_run(10 + i, s, specialist=True, iteration=i) for i, s in enumerate(SPEC)]
    comp = _comparison(runs)
    assert comp["test"] == "cluster_paired" and comp["clusters"] == 1
    assert comp["verdict"] == "not enough runs" and comp["p_value"] is None


def test_runs_without_iteration_pair_in_start_order():
    runs = [_run(i, s, specialist=False, scenario=SCENARIOS[i]) for i, s in enumerate(BASE)]
    runs += [_run(10 + i, s, specialist=True, scenario=SCENARIOS[i]) for i, s in enumerate(SPEC)]
    comp = _comparison(runs)
    assert comp["cells"]["paired"] == 4 and comp["p_value"] == pytest.approx(sps.ttest_rel(SPEC, BASE).pvalue, rel=1e-5)


def test_a_matrix_pairs_runs_of_the_same_agent_and_model():
    runs = _paired_runs()
    # The same scenarios with a second model, on which the specialist does nothing.
    runs += [_run(20 + i, s, specialist=False, scenario=SCENARIOS[i], iteration=0, model="m2") for i, s in enumerate(BASE)]
    runs += [_run(30 + i, s, specialist=True, scenario=SCENARIOS[i], iteration=0, model="m2") for i, s in enumerate(BASE)]
    comp = _comparison(runs)
    assert comp["cells"] == {"paired": 8, "baseline_only": 0, "specialist_only": 0} and comp["refused"] == []
    models = {m["model"]: m for m in comp["models_compared"]}
    assert models["m1"]["paired_samples"] == 4 and models["m1"]["verdict"] == "specialist better"
    assert models["m2"]["improvement"] == 0 and models["m2"]["verdict"] == "no detectable difference"


def test_excluded_runs_and_their_reasons():
    runs = _paired_runs()
    runs.append(_run(31, 0.9, specialist=True, scenario="s1", version="0.9.0"))
    runs.append(_run(32, 0.9, specialist=True, scenario="s1", name="@other/thing"))
    runs.append(_run(33, None, specialist=True, scenario="s5", iteration=0, status="error", failure_class="agent"))
    runs.append(_run(34, 0.0, specialist=True, scenario="s6", iteration=0, status="error", failure_class="infra"))
    runs.append(_run(35, 0.4, specialist=False, scenario="s6", iteration=0, status="error", failure_class="infra"))
    runs.append(_run(36, 0.6, specialist=False, scenario="s6", iteration=0))
    runs[-1].metadata["retryOf"] = "run_0035_b"
    snapshot, excluded = build_snapshot(_specialist(), BatchRecord("batch_x"), runs)
    reasons = {e["run_id"]: e["reason"] for e in excluded}
    assert reasons["run_0035_b"] == "redone by run run_0036_b (--retry-errors)" and "run_0036_b" not in reasons
    assert "not 1.2.0" in reasons["run_0031_s"]
    assert "another specialist" in reasons["run_0032_s"]
    assert reasons["run_0034_s"] == "error/infra"
    assert "run_0033_s" not in reasons  # the agent's own failure counts, as 0
    comp = snapshot["benchmarks"]["comparison"]
    assert comp["excluded"] == {"baseline": {"redone by a retry": 1}, "specialist": {"error/infra": 1}}
    assert comp["cells"] == {"paired": 4, "baseline_only": 1, "specialist_only": 1}
    assert snapshot["snapshot_metadata"]["batch"]["compared_runs"] == len(runs) - len(excluded)
    assert len(snapshot["benchmarks"]["runs"]) == len(runs)  # every run is listed, compared or not


def test_runs_are_mapped_to_snake_case():
    snapshot, _ = build_snapshot(_specialist(), BatchRecord("batch_x"), _paired_runs())
    run = snapshot["benchmarks"]["runs"][0]
    assert run["run_id"] == "run_0000_b" and run["overall_score"] == 0.3
    assert run["specialist_enabled"] is False and run["iteration"] == 0
    assert run["telemetry"]["token_usage"] == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    assert run["telemetry"]["duration_ms"] == 1500.0
    assert run["evaluations"]["validation"]["score"] == 0.3
    scoring = snapshot["benchmarks"]["scoring"]
    assert [e["name"] for e in scoring["evaluators"]] == ["validation"]  # skipped evaluators do not count
    suites = snapshot["benchmarks"]["test_suites"]
    assert suites[0] == {"name": "s1", "suite": "py-bugs", "path": "py-bugs/s1", "type": "functional", "tiers": ["L1"]}


def test_no_baseline_runs_means_not_enough_runs():
    runs = [_run(10 + i, s, specialist=True, scenario=SCENARIOS[i], iteration=0) for i, s in enumerate(SPEC)]
    comp = _comparison(runs)
    assert comp["baseline_avg_score"] is None and comp["improvement"] is None
    assert comp["verdict"] == "not enough runs" and comp["p_value"] is None
    assert comp["cells"] == {"paired": 0, "baseline_only": 0, "specialist_only": 4}
    assert "no baseline runs (specialist disabled) in the batch" in comp["notes"]


def test_mint_refuses_a_batch_without_a_run_of_the_specialist(tmp_path):
    runs = [r for r in _paired_runs() if not r.specialist_enabled]
    runs.append(_run(40, 0.9, specialist=True, name="@other/thing"))
    runs.append(_run(41, 0.9, specialist=True, version="0.9.0"))
    with pytest.raises(MintError) as err:
        mint_snapshot(_specialist(), "batch_x", tmp_path, _memory_results(runs))
    message = str(err.value)
    assert "has no run of specialist @acme/py-fixer@1.2.0" in message
    assert "baseline (no specialist): 4 runs" in message
    assert "@other/thing@1.2.0: 1 run" in message and "@acme/py-fixer@0.9.0: 1 run" in message
    assert not any(tmp_path.iterdir())


def test_mint_writes_numbered_snapshots_that_reload(tmp_path):
    client = _memory_results(_paired_runs())
    first = mint_snapshot(_specialist(), "batch_x", tmp_path, client)
    second = mint_snapshot(_specialist(), "batch_x", tmp_path, client)
    assert first.path == tmp_path / "py-fixer" / "1.2.0" / "snapshot-001.json5"
    assert second.path == tmp_path / "py-fixer" / "1.2.0" / "snapshot-002.json5"
    loaded = json5.loads(first.path.read_text())
    assert loaded["name"] == "@acme/py-fixer" and "$schema" not in loaded
    meta = loaded["snapshot_metadata"]
    assert meta["batch_id"] == "batch_x" and meta["template_version"] == "1.2.0"
    assert meta["batch"]["agents"] == ["anthropic"] and meta["batch"]["metadata"] == {"note": "test"}


def test_mint_of_unknown_batch_is_an_error(tmp_path):
    with pytest.raises(MintError, match="batch 'nope' not found"):
        mint_snapshot(_specialist(), "nope", tmp_path, _memory_results(_paired_runs()))
    assert not any(tmp_path.iterdir())


def test_snapshot_failing_its_schema_is_never_written(tmp_path):
    snapshot, _ = build_snapshot(_specialist(), BatchRecord("batch_x"), _paired_runs())
    snapshot["benchmarks"]["runs"][0]["overall_score"] = 1.5  # out of [0, 1]
    del snapshot["snapshot_metadata"]["batch_id"]
    with pytest.raises(MintError) as err:
        write_snapshot(snapshot, tmp_path)
    fields = {i.field for i in err.value.issues}
    assert "benchmarks.runs[0].overall_score" in fields and "snapshot_metadata.batch_id" in fields
    assert list(tmp_path.rglob("*")) == []


def test_concurrent_writers_never_share_a_number(tmp_path):
    results: list[tuple[int, Path]] = []
    lock = threading.Lock()

    def writer(i: int) -> None:
        out = write_next_numbered(tmp_path, "snapshot", json.dumps({"writer": i}))
        with lock:
            results.append(out)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(n for n, _ in results) == list(range(1, 13))
    writers = {json.loads(p.read_text())["writer"] for _, p in results}
    assert writers == set(range(12))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"snapshot-{i:03d}.json5" for i in range(1, 13)]


def test_existing_snapshot_is_never_overwritten(tmp_path):
    (tmp_path / "snapshot-001.json5").write_text("keep")
    (tmp_path / "snapshot-007.json5").write_text("keep too")
    number, path = write_next_numbered(tmp_path, "snapshot", "{}")
    assert number == 8 and path.name == "snapshot-008.json5"
    assert (tmp_path / "snapshot-001.json5").read_text() == "keep"


def test_two_concurrent_mint_processes_get_001_and_002(tmp_path):
    import os
    import subprocess
    import sys

    script = f"""
import time
from pathlib import Path
from support.mint import specialist, paired_runs
from harness.mint.snapshot import build_snapshot, write_snapshot
from harness.results.records import BatchRecord
snapshot, _ = build_snapshot(specialist(), BatchRecord("batch_x"), paired_runs())
go = Path({str(tmp_path / "go")!r})
while not go.exists():
    time.sleep(0.001)
print(write_snapshot(snapshot, Path({str(tmp_path / "out")!r}))[0])
"""
    tests = str(Path(__file__).parent)  # where the support package is
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    (tmp_path / "go").touch()
    ids = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert ids == ["001", "002"]
    written = sorted(p.name for p in (tmp_path / "out" / "py-fixer" / "1.2.0").iterdir())
    assert written == ["snapshot-001.json5", "snapshot-002.json5"]


def test_repeats_with_different_config_hashes_are_flagged():
    runs, _ = _repeated_runs()
    for r in runs:
        r.config_hash = "bbb" if (r.scenario, r.metadata["iteration"], r.specialist_enabled) == ("s1", 1, False) else "aaa"
    snapshot, _ = build_snapshot(_specialist(), BatchRecord("batch_x"), runs)
    notes = snapshot["benchmarks"]["comparison"]["notes"]
    assert any(n.startswith("baseline runs of py-bugs/s1 L1 (m1) have 2 different config hashes") for n in notes)
    assert not any(n.startswith("specialist runs") for n in notes)


def test_specialist_runs_with_different_system_prompts_are_flagged():
    runs, _ = _repeated_runs()
    for r in runs:
        if r.specialist_enabled:
            r.metadata["specialistPromptSha256"] = "p1" if r.metadata["iteration"] < 2 else "p2"
            r.metadata["specialistSource"] = "templates/py-fixer.json5"
    snapshot, _ = build_snapshot(_specialist(), BatchRecord("batch_x"), runs)
    notes = snapshot["benchmarks"]["comparison"]["notes"]
    assert any("used 2 different system prompts" in n for n in notes)
    spec_run = next(r for r in snapshot["benchmarks"]["runs"] if r["specialist_enabled"])
    assert spec_run["system_prompt_sha256"] in ("p1", "p2")
    assert spec_run["specialist_source"] == "templates/py-fixer.json5"


# --------------------------------------------------------------------------- the shipped example

REPO = Path(__file__).resolve().parents[1]


def _run_from_snapshot(r: dict) -> RunRecord:
    """A snapshot's snake_case run back as a RunRecord (no config parts: snapshots do not keep them)."""
    t = r.get("telemetry") or {}
    usage = t.get("token_usage") or {}
    return RunRecord(
        run_id=r["run_id"], batch_id=r.get("batch_id"), suite=r["suite"], scenario=r["scenario"], tier=r["tier"],
        agent=r["agent"], model=r.get("model"), status=r["status"], failure_class=r.get("failure_class"),
        started_at=r.get("started_at"), completed_at=r.get("completed_at"), total_score=r["overall_score"],
        weighted_score=r.get("weighted_score"), is_successful=bool(r.get("is_successful")),
        specialist_enabled=r["specialist_enabled"], specialist_name=r.get("specialist_name"),
        specialist_version=r.get("specialist_version"), config_hash=r.get("config_hash"),
        metadata={} if r.get("iteration") is None else {"iteration": r["iteration"]},
        telemetry=Telemetry(tokens_in=usage.get("prompt_tokens", 0), tokens_out=usage.get("completion_tokens", 0),
                            tool_calls=t.get("tool_calls", 0), turns=t.get("turns", 0),
                            duration_ms=t.get("duration_ms"), cost_usd=t.get("cost_usd")),
    )


def test_shipped_snapshots_validate_and_their_verdict_is_what_their_runs_say():
    files = sorted((REPO / "snapshots").rglob("snapshot-*.json5"))
    assert files
    for path in files:
        snap = json5.loads(path.read_text())
        assert validate_snapshot(snap) == [], path
        comp = snap["benchmarks"]["comparison"]
        runs = [_run_from_snapshot(r) for r in snap["benchmarks"]["runs"]]
        spec = Specialist(name=snap["name"], version=snap["version"], template={}, source=path)
        baseline, with_specialist, _ = split_runs(spec, runs)
        again = comparison_section(baseline, with_specialist)
        for key in ("verdict", "test", "p_value", "ci_low", "ci_high", "cells", "baseline_avg_score",
                    "specialist_avg_score", "improvement", "refused"):
            assert again[key] == comp[key], (path, key)
        if comp["verdict"] in ("specialist better", "baseline better"):
            assert comp["baseline_agents"] == comp["specialist_agents"] and comp["cells"]["paired"] >= 2, path


def test_the_shipped_python_bugfixer_example_claims_no_false_better():
    snap = json5.loads((REPO / "snapshots" / "python-bugfixer" / "1.0.0" / "snapshot-001.json5").read_text())
    comp = snap["benchmarks"]["comparison"]
    # The same agent on both sides: only the specialist differs, and every cell is paired.
    assert comp["baseline_agents"] == comp["specialist_agents"] == snap["snapshot_metadata"]["batch"]["agents"]
    assert comp["refused"] == [] and comp["cells"]["baseline_only"] == comp["cells"]["specialist_only"] == 0
    # A scripted agent ignores the system prompt: nothing for the specialist to win.
    assert comp["verdict"] in ("no detectable difference", "not enough runs")
    assert all(m["verdict"] in ("no detectable difference", "not enough runs") for m in comp["metrics"])
