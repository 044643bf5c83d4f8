"""The ``mint`` console script: exit statuses, messages naming fields, snapshots from the embedded store."""

from __future__ import annotations

import json

import httpx
import json5
import pytest
import respx
from click.testing import CliRunner

from harness.cli.mint import main
from harness.results import BatchRecord, EvaluationRecord, RunRecord, open_client

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)


def _template(tmp_path, **over):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "guide.md").write_text("# Guide\nUse pytest.\n")
    doc = {"schema_version": "0.0.1", "name": "@acme/fixer", "version": "2.0.0",
           "persona": {"purpose": "Fix bugs."},
           "documentation": [{"type": "guide", "description": "Guide", "path": "docs/guide.md"}]}
    doc.update(over)
    path = tmp_path / "fixer.json5"
    path.write_text(json.dumps(doc))
    return path


def test_validate_accepts_a_valid_template(tmp_path):
    result = CliRunner().invoke(main, ["validate", str(_template(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "valid:" in result.output and "@acme/fixer 2.0.0" in result.output


def test_validate_rejects_bad_semver_naming_the_field(tmp_path):
    result = CliRunner().invoke(main, ["validate", str(_template(tmp_path, version="2.0"))])
    assert result.exit_code == 2
    assert "version: must be a semantic version" in result.output


def test_validate_json_lists_issues_with_field_paths(tmp_path):
    path = _template(tmp_path, documentation=[{"type": "g", "description": "d", "url": "https://x.org", "path": "p"}])
    result = CliRunner().invoke(main, ["validate", str(path), "--json"])
    assert result.exit_code == 2
    report = json.loads(result.output)
    assert report["valid"] is False
    assert report["files"][0]["issues"][0]["field"] == "documentation[0]"


def test_unknown_template_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(main, ["validate", "nothing-here", "--templates-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: no specialist template named 'nothing-here'")


def _store_batch(db, batch_id="cmp", baseline_agent="echo", specialist_agent="oracle", specialist=True):
    scores = {False: [0.2, 0.3, 0.25], True: [0.9, 1.0, 0.8]}
    with open_client(db_path=str(db)) as client:
        client.post_batch(BatchRecord(batch_id=batch_id))
        for spec, values in scores.items():
            for i, score in enumerate(values):
                client.post_run(RunRecord(
                    run_id=f"run_{i}_{int(spec)}", batch_id=batch_id, suite="py-bugs", scenario=f"scenario-{i}",
                    tier="L1", agent=specialist_agent if spec else baseline_agent, model=None, total_score=score,
                    is_successful=score >= 0.7, specialist_enabled=spec and specialist,
                    specialist_name="@acme/fixer" if spec and specialist else None,
                    specialist_version="2.0.0" if spec and specialist else None,
                    metadata={"iteration": 0}, evaluations=[EvaluationRecord("validation", score)]))


def test_snapshot_from_the_embedded_store(tmp_path):
    db = tmp_path / "bench.db"
    _store_batch(db, baseline_agent="echo", specialist_agent="echo")
    args = ["snapshot", str(_template(tmp_path)), "--batch-id", "cmp", "--db", str(db), "--output", str(tmp_path / "snaps")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "snapshot-001.json5" in result.output and "cells paired: 3 (0 only baseline, 0 only specialist)" in result.output
    snap = json5.loads((tmp_path / "snaps" / "fixer" / "2.0.0" / "snapshot-001.json5").read_text())
    comp = snap["benchmarks"]["comparison"]
    assert comp["baseline_runs"] == 3 and comp["specialist_runs"] == 3
    assert comp["test"] == "paired_t" and comp["paired_samples"] == 3
    assert f"Verdict: {comp['verdict']}" in result.output
    again = CliRunner().invoke(main, args + ["--json"])
    assert again.exit_code == 0
    assert json.loads(again.output)["path"].endswith("snapshot-002.json5")


def test_echo_against_oracle_is_not_comparable(tmp_path):
    db = tmp_path / "bench.db"
    _store_batch(db, baseline_agent="echo", specialist_agent="oracle")
    result = CliRunner().invoke(main, ["snapshot", str(_template(tmp_path)), "--batch-id", "cmp", "--db", str(db),
                                       "--output", str(tmp_path / "snaps")])
    assert result.exit_code == 0, result.output
    assert "Verdict: not comparable" in result.output
    assert "Not comparable: specialist runs are by oracle, baseline runs by echo" in result.output
    comp = json5.loads(next((tmp_path / "snaps").rglob("snapshot-001.json5")).read_text())["benchmarks"]["comparison"]
    assert comp["verdict"] == "not comparable" and comp["p_value"] is None and comp["improvement"] is None


def test_snapshot_of_a_batch_without_the_specialist_is_refused(tmp_path):
    db = tmp_path / "bench.db"
    _store_batch(db, specialist=False)
    result = CliRunner().invoke(main, ["snapshot", str(_template(tmp_path)), "--batch-id", "cmp", "--db", str(db),
                                       "--output", str(tmp_path / "snaps")])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: batch 'cmp' has no run of specialist @acme/fixer@2.0.0")
    assert "it holds baseline (no specialist): 6 runs" in result.stderr
    assert not (tmp_path / "snaps").exists()


def test_snapshot_of_missing_batch_fails_and_writes_nothing(tmp_path):
    db = tmp_path / "bench.db"
    _store_batch(db)
    result = CliRunner().invoke(main, ["snapshot", str(_template(tmp_path)), "--batch-id", "nope", "--db", str(db),
                                       "--output", str(tmp_path / "snaps")])
    assert result.exit_code == 1
    assert "batch 'nope' not found" in result.output
    assert not (tmp_path / "snaps").exists()


@respx.mock
def test_enrich_exits_non_zero_when_a_document_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json={
        "id": "m", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": json.dumps({"summary": "Use pytest."})}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}))
    docs = [{"type": "guide", "description": "Guide", "path": "docs/guide.md"},
            {"type": "guide", "description": "Missing", "path": "docs/missing.md"}]
    result = CliRunner().invoke(main, ["enrich", str(_template(tmp_path, documentation=docs)), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert (report["enriched"], report["failed"]) == (1, 1)
    assert report["documents"][1]["error"].startswith("file not found")
    assert (tmp_path / "fixer" / "enriched" / "2.0.0" / "enriched-001.json5").is_file()


def test_enrich_without_credentials_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = CliRunner().invoke(main, ["enrich", str(_template(tmp_path))])
    assert result.exit_code == 1
    assert "ANTHROPIC_API_KEY" in result.output


def test_snapshot_reads_the_batch_from_a_worker_over_http(tmp_path, monkeypatch):
    import threading

    from worker.config import WorkerConfig
    from worker.devserver import make_server

    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "served.db"), WorkerConfig(api_key="k"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "k")
        with open_client(worker_url=url) as client:
            client.post_batch(BatchRecord(batch_id="remote"))
            for i, (spec, score) in enumerate([(False, 0.2), (False, 0.4), (True, 0.9), (True, 1.0)]):
                client.post_run(RunRecord(
                    run_id=f"run_r{i}", batch_id="remote", suite="py-bugs", scenario=f"s{i % 2}", tier="L1",
                    agent="anthropic", model="m", total_score=score, specialist_enabled=spec,
                    specialist_name="@acme/fixer" if spec else None, specialist_version="2.0.0" if spec else None,
                    metadata={"iteration": 0}, evaluations=[EvaluationRecord("validation", score)]))
        result = CliRunner().invoke(main, ["snapshot", str(_template(tmp_path)), "--batch-id", "remote",
                                           "--worker-url", url, "--output", str(tmp_path / "snaps"), "--json"])
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()
    assert result.exit_code == 0, result.output
    comp = json.loads(result.output)["comparison"]
    assert comp["test"] == "paired_t" and comp["paired_samples"] == 2
    assert comp["baseline_avg_score"] == pytest.approx(0.3) and comp["specialist_avg_score"] == pytest.approx(0.95)
