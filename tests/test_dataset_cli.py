"""``bench dataset`` and ``bench datasets`` through click (CliRunner), against the mock model
server of harness.testing.mock_model: the dry run, --json, --junit, --fail-under, the exit statuses
of bad input, the built-in list, and stopping a run (a control object, and a real SIGINT)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.control import BatchControl
from harness.datasets.format import builtin_datasets
from harness.datasets.planning import prepare
from harness.datasets.lines import cell_key
from harness.results_log import read_results
from harness.datasets.run import execute
from support.datasets import ANSWERS, BENCH, EXPECTED, env, lines_of, mock_server, options, resume_options, targets_of
from support.datasets import write_dataset

__all__ = ["env", "mock_server"]  # fixtures of support.datasets


def bench(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def run_args(ds, mock, out, *extra):
    return ["dataset", ds, "--providers", "openai-compatible:m", "--base-url", mock.base_url, "--output", out,
            "--quiet", *extra]


# -- the dry run ---------------------------------------------------------------------------------------


def test_dry_run_prints_the_matrix_and_the_estimate_and_sends_nothing(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    ds = write_dataset(tmp_path / "d.json")
    out = tmp_path / "out"
    result = bench("dataset", ds, "-p", "openai-compatible:m1,openai-compatible:m2", "--base-url", mock.base_url,
                   "--repeat", "3", "--output", out, "--dry-run")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # the console wraps long lines
    assert "5 case(s) x 2 model(s) x 3 repeat(s) = 30 request(s)" in text
    assert "openai-compatible:m1" in text and "openai-compatible:m2" in text
    assert "unknown (no price)" in text and "nothing was sent" in text
    assert mock.server.requests == 0
    assert not out.exists()


def test_dry_run_json_estimates_a_priced_model(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")
    ds = write_dataset(tmp_path / "d.json", defaults={"max_tokens": 100})
    result = bench("dataset", ds, "-p", "openai:gpt-4o-mini", "--limit", "2", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["dataset"] == "tiny" and doc["cases"] == 2 and doc["cells"] == 2
    row = doc["estimate"]["targets"]["openai:gpt-4o-mini"]
    assert row["cells"] == 2 and row["maxTokensOut"] == 200 and row["tokensIn"] > 0
    assert row["maxCostUsd"] is not None and row["maxCostUsd"] > 0


def test_dry_run_prices_the_shipped_local_model_at_zero_without_starting_it(tmp_path):
    result = bench("dataset", write_dataset(tmp_path / "d.json"), "-p", "local:smollm2", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["estimate"]["targets"]["local:smollm2"]
    assert row["cells"] == 5 and row["maxCostUsd"] == 0.0


# -- a run ---------------------------------------------------------------------------------------------


def test_json_prints_the_summary_document(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, out, "--json"))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == json.loads((out / "summary.json").read_text())
    block = doc["targets"]["openai-compatible:m"]
    assert (block["passed"], block["failed"], block["ungraded"], block["errors"]) == (2, 2, 1, 0)
    assert mock.server.requests == 5


def test_a_run_prints_the_summary_and_stores_the_batch(tmp_path, mock_server):
    from harness.results import open_client

    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    db = tmp_path / "cli.db"
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, out, "--db", db))
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # the console wraps long lines
    assert "pass rate" in text and f"results: {out}" in text
    batch_id = json.loads((out / "run.json").read_text())["batchId"]
    assert f"stored as batch {batch_id} (5 runs)" in text
    with open_client(db_path=str(db)) as client:
        runs = client.list_runs(batchId=batch_id)
    assert sorted(r.scenario for r in runs) == sorted(EXPECTED) and {r.tier for r in runs} == {"dataset"}


def test_no_store_leaves_the_results_store_alone(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    db = tmp_path / "untouched.db"
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, tmp_path / "out", "--db", db, "--no-store"))
    assert result.exit_code == 0, result.output
    assert "stored as batch" not in result.stdout and not db.exists()


def test_junit_writes_parseable_xml(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    junit = tmp_path / "reports" / "junit.xml"
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, tmp_path / "out", "--junit", junit))
    assert result.exit_code == 0, result.output
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("name") == "tiny"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "openai-compatible:m"
    cases = suite.findall("testcase")
    assert len(cases) == 5 and int(root.get("tests")) == 5
    failed = {c.get("name").split("#")[0] for c in cases if c.find("failure") is not None}
    skipped = {c.get("name").split("#")[0] for c in cases if c.find("skipped") is not None}
    assert failed == {"color", "count"} and skipped == {"free"}
    assert int(root.get("failures")) == 2


@pytest.mark.parametrize("rate, code", [("0.9", 1), ("0.5", 0), ("0.3", 0)])
def test_fail_under_exits_1_when_a_model_s_pass_rate_is_below(tmp_path, mock_server, rate, code):
    mock = mock_server(answers=ANSWERS)
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, tmp_path / "out", "--fail-under", rate))
    assert result.exit_code == code, result.output
    if code:
        assert "openai-compatible:m: pass rate 50.0% is below --fail-under 90.0%" in result.stderr
    assert (tmp_path / "out" / "results.json").exists()


def test_every_request_failing_exits_1(tmp_path, mock_server):
    mock = mock_server(fail_first=100)
    result = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, tmp_path / "out", "--retries", "0"))
    assert result.exit_code == 1, result.output
    assert "every request failed" in result.stderr
    assert {c["status"] for c in lines_of(tmp_path / "out")} == {"error"}


def test_resume_and_retry_errors_through_the_cli(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS, fail_first=2)
    out = tmp_path / "out"
    first = bench(*run_args(write_dataset(tmp_path / "d.json"), mock, out, "--retries", "0", "-c", "1"))
    assert first.exit_code == 0, first.output
    assert sum(c["status"] == "error" for c in lines_of(out)) == 2
    again = bench("dataset", "--resume", out, "--retry-errors", "--quiet")
    assert again.exit_code == 0, again.output
    assert mock.server.requests == 7
    doc = json.loads((out / "results.json").read_text())
    assert {c["test_id"]: c["status"] for c in doc["results"]} == EXPECTED


# -- bad input: exit 2, naming what is wrong ----------------------------------------------------------


@pytest.mark.parametrize("value, fragment", [
    ("openai=zero", "--provider-limit 'openai=zero': expected PROVIDER=N"),
    ("openai=0", "--provider-limit 'openai=0': expected PROVIDER=N"),
    ("openai", "--provider-limit 'openai': expected PROVIDER=N"),
    ("bogus=3", "unknown provider 'bogus'"),
])
def test_a_bad_provider_limit_exits_2(tmp_path, value, fragment):
    result = bench("dataset", write_dataset(tmp_path / "d.json"), "-p", "ollama:m", "--provider-limit", value,
                   "--dry-run")
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_a_bad_dataset_file_exits_2_naming_the_file_and_the_fields(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: broken\ntest_cases:\n  - id: one\n    prompt: fine\n"
                   "  - id: two\n    promt: misspelt\n", encoding="utf-8")
    result = bench("dataset", bad, "-p", "ollama:m", "--dry-run")
    assert result.exit_code == 2
    assert str(bad) in result.stderr
    assert "test_cases[1].promt" in result.stderr and "test_cases[1].prompt" in result.stderr


def test_a_missing_file_and_an_unknown_name_exit_2(tmp_path):
    missing = bench("dataset", tmp_path / "nope.yaml", "-p", "ollama:m", "--dry-run")
    assert missing.exit_code == 2 and "nope.yaml" in missing.stderr and "no such file" in missing.stderr
    unknown = bench("dataset", "no-such-builtin", "-p", "ollama:m", "--dry-run")
    assert unknown.exit_code == 2 and "no-such-builtin" in unknown.stderr


@pytest.mark.parametrize("args, fragment", [
    (["-p", "groq:llama"], "groq:llama needs GROQ_API_KEY"),
    (["-p", "nonesuch:m"], "unknown provider 'nonesuch'"),
    (["-p", "openai-compatible:m"], "needs --base-url"),
    ([], "no provider given"),
    (["-p", "ollama:m", "--shard", "4/3"], "--shard"),
    (["-p", "ollama:m", "--filter", "zzz"], "--filter zzz"),
])
def test_bad_options_exit_2_before_anything_is_sent(tmp_path, args, fragment):
    result = bench("dataset", write_dataset(tmp_path / "d.json"), *args, "--output", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr
    assert not (tmp_path / "out").exists()


def test_retry_errors_needs_resume(tmp_path):
    result = bench("dataset", write_dataset(tmp_path / "d.json"), "-p", "ollama:m", "--retry-errors")
    assert result.exit_code == 2 and "--retry-errors needs --resume" in result.stderr


# -- bench datasets ------------------------------------------------------------------------------------


def test_datasets_lists_the_built_ins_with_their_case_counts():
    found = builtin_datasets()
    assert found, "no built-in dataset shipped"
    result = bench("datasets", "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(d["name"], d["cases"]) for d in listed] == [(b.name, b.cases) for b in found]
    assert all(d["cases"] > 0 for d in listed)
    text = bench("datasets")
    assert text.exit_code == 0
    for b in found:
        line = next(line for line in text.stdout.splitlines() if line.split()[:1] == [b.name])
        assert str(b.cases) in line.split()


def test_each_built_in_dataset_plans_through_the_cli(tmp_path):
    for b in builtin_datasets():
        result = bench("dataset", b.name, "-p", "ollama:m", "--dry-run", "--json")
        assert result.exit_code == 0, (b.name, result.output)
        assert json.loads(result.stdout)["cases"] == b.cases


# -- stopping ------------------------------------------------------------------------------------------


def test_a_stop_request_keeps_what_finished_and_leaves_a_resumable_directory(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS, delay_ms=100)
    out = tmp_path / "out"
    ds = write_dataset(tmp_path / "d.json")
    control = BatchControl(grace_s=0)
    seen = []

    def on_event(event):
        seen.append(event.result)
        if len(seen) == 2:
            control.interrupt()

    run = prepare(options(ds, out, targets_of(mock, "m1", "m2"), repeat=2, concurrency=2))
    result = asyncio.run(asyncio.wait_for(execute(run, on_event=on_event, control=control), 60))
    assert result.interrupted
    done = lines_of(out)
    assert 2 <= len(done) < 20 and len(done) == len(seen)
    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["interrupted"] is True and len(doc["results"]) == len(done)

    resumed = prepare(resume_options(out))
    assert len(resumed.cells) == 20 - len(done)
    result = asyncio.run(asyncio.wait_for(execute(resumed), 60))
    assert not result.interrupted
    keys = [cell_key(c) for c in read_results(out / "results.jsonl")[0]]
    assert len(keys) == 20 and len(set(keys)) == 20


def test_an_abort_cancels_the_requests_in_flight(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    cases = [{"id": f"hang-{i}", "prompt": f"HANG {i}", "assert": [{"type": "contains", "value": "x"}]}
             for i in range(4)]
    control = BatchControl(grace_s=0)
    run = prepare(options(write_dataset(tmp_path / "d.json", cases), out, targets_of(mock), concurrency=2))

    async def go():
        task = asyncio.ensure_future(execute(run, control=control))
        while mock.server.in_flight < 2:
            await asyncio.sleep(0.02)
        control.abort()
        return await asyncio.wait_for(task, 30)

    result = asyncio.run(asyncio.wait_for(go(), 60))
    assert result.interrupted and result.cells == []
    assert (out / "results.json").exists() and (out / "run.json").exists()
    assert len(prepare(resume_options(out)).cells) == 4


def test_ctrl_c_exits_130_and_prints_the_resume_command(tmp_path, mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(answers=ANSWERS, delay_ms=200)
    out = tmp_path / "out"
    args = [BENCH, "dataset", str(write_dataset(tmp_path / "d.json")), "-p", "openai-compatible:m1,openai-compatible:m2",
            "--base-url", mock.base_url, "--repeat", "2", "-c", "2", "--output", str(out), "--db",
            str(tmp_path / "b.db")]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and len(lines_of(out)) < 2:
            time.sleep(0.02)
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130, stderr
    assert f"resume with: bench dataset --resume {out}" in stderr
    done = lines_of(out)
    assert 2 <= len(done) < 20
    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["interrupted"] is True
    assert len(prepare(resume_options(out)).cells) == 20 - len(done)
    assert "stopping: nothing new is sent" in stderr
