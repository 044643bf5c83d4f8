"""The dataset runner (harness.datasets.run): planning (filters, limit, shards, repeats, the
errors found before anything is sent), running against the mock model server of
harness.testing.mock_model with scripted right and wrong answers, results.jsonl and the exports,
resuming after a torn line and after a real SIGKILL, --retry-errors, the results-store batch,
streaming and the llm-rubric judge's absence. No assertion is about speed.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.datasets.model import DatasetError
from harness.datasets.planning import DatasetRunError, DatasetRunOptions, prepare, select_cases
from harness.datasets.lines import cell_key
from harness.results_log import ResultsLog, read_results
from harness.datasets.run import execute
from harness.datasets.storing import store
from harness.models.providers.registry import parse_target
from support.datasets import (  # noqa: F401 - env (autouse) and mock_server are fixtures
    ANSWERS,
    BENCH,
    CASES,
    EXPECTED,
    env,
    lines_of,
    mock_server,
    options,
    resume_options,
    targets_of,
    write_dataset,
)

CSV_HEAD = ["test_id", "category", "status", "duration_ms", "tokens", "cost", "model", "error"]


def run_now(opts: DatasetRunOptions, **kw):
    run = prepare(opts)
    return asyncio.run(asyncio.wait_for(execute(run, **kw), 120))




# -- preparing ----------------------------------------------------------------------------------------


def test_prepare_needs_a_provider(tmp_path):
    with pytest.raises(DatasetRunError, match="no provider"):
        prepare(options(write_dataset(tmp_path / "d.json"), tmp_path / "out", []))


def test_prepare_names_an_unknown_dataset(tmp_path):
    with pytest.raises(DatasetError) as info:
        prepare(DatasetRunOptions(dataset="no-such-dataset", targets=[parse_target("ollama:m")],
                                  output_dir=tmp_path / "out"))
    assert info.value.source == "no-such-dataset" and "built-in" in str(info.value)


def test_prepare_names_the_missing_key_before_anything_is_sent(tmp_path):
    ds = write_dataset(tmp_path / "d.json")
    with pytest.raises(DatasetRunError) as info:
        prepare(options(ds, tmp_path / "out", [parse_target("ollama:m"), parse_target("groq:llama")]))
    assert "groq:llama needs GROQ_API_KEY" in str(info.value)
    assert not (tmp_path / "out").exists()


def test_prepare_refuses_a_filter_that_matches_nothing(tmp_path):
    with pytest.raises(DatasetRunError) as info:
        prepare(options(write_dataset(tmp_path / "d.json"), tmp_path / "out", [parse_target("ollama:m")],
                        filters=["nothing-*"]))
    assert "nothing-*" in str(info.value) and "geo" in str(info.value)  # the categories are listed


def test_prepare_refuses_an_output_directory_holding_a_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text("")
    with pytest.raises(DatasetRunError) as info:
        prepare(options(write_dataset(tmp_path / "d.json"), out, [parse_target("ollama:m")]))
    assert "already holds a run" in str(info.value) and f"--resume {out}" in str(info.value)


def test_resume_needs_the_directory_of_a_run(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetRunError, match="no run.json"):
        prepare(resume_options(tmp_path / "empty"))


@pytest.mark.parametrize("field, value, fragment", [
    ("concurrency", 0, "--concurrency"), ("repeat", 0, "--repeat"), ("limit", 0, "--limit"),
    ("timeout_s", 0, "--timeout"), ("provider_limits", {"ollama": 0}, "--provider-limit ollama=0"),
])
def test_prepare_refuses_bad_numbers(tmp_path, field, value, fragment):
    opts = options(write_dataset(tmp_path / "d.json"), tmp_path / "out", [parse_target("ollama:m")])
    setattr(opts, field, value)
    with pytest.raises(DatasetRunError, match=fragment):
        prepare(opts)


def test_select_cases_by_id_category_and_glob_then_limit(tmp_path):
    from harness.datasets.format import load_dataset

    dataset = load_dataset(write_dataset(tmp_path / "d.json"))
    ids = lambda filters, limit=None: [c.id for c in select_cases(dataset, filters, limit)]  # noqa: E731
    assert ids([]) == ["add", "capital", "color", "count", "free"]
    assert ids(["capital"]) == ["capital"]
    assert ids(["math"]) == ["add", "count"]
    assert ids(["c*"]) == ["capital", "color", "count"]
    assert ids(["misc", "add"]) == ["add", "color", "free"]
    assert ids(["c*"], 2) == ["capital", "color"]
    assert ids([], 1) == ["add"]


def test_shards_keep_a_stable_subset_and_together_make_the_whole(tmp_path):
    ds = write_dataset(tmp_path / "d.json")
    targets = [parse_target("ollama:a"), parse_target("ollama:b")]

    def keys(shard=None):
        run = prepare(options(ds, tmp_path / "out", targets, repeat=3, shard=shard))
        return [p.key for p in run.cells]

    whole = keys()
    assert len(whole) == 5 * 2 * 3
    parts = [keys((i, 3)) for i in (1, 2, 3)]
    assert parts == [keys((i, 3)) for i in (1, 2, 3)]  # stable
    assert sorted(k for part in parts for k in part) == sorted(whole)  # disjoint, and the whole
    assert all(parts) and len({k for part in parts for k in part}) == len(whole)
    run = prepare(options(ds, tmp_path / "out", targets, repeat=3, shard=(2, 3)))
    assert run.planned == len(parts[1]) and run.meta["shard"] == "2/3"


def test_repeat_gives_every_case_that_many_cells_per_target(tmp_path):
    cases = [dict(CASES[0]), {**CASES[2], "repeat": 2}]
    ds = write_dataset(tmp_path / "d.json", cases)
    targets = [parse_target("ollama:a"), parse_target("ollama:b")]
    own = prepare(options(ds, tmp_path / "out", targets))
    assert sorted((p.case.id, p.target.model, p.repeat) for p in own.cells) == [
        ("add", "a", 0), ("add", "b", 0), ("color", "a", 0), ("color", "a", 1), ("color", "b", 0), ("color", "b", 1)]
    forced = prepare(options(ds, tmp_path / "out", targets, repeat=3))
    assert len(forced.cells) == 2 * 2 * 3 and {p.repeat for p in forced.cells} == {0, 1, 2}
    assert len({p.key for p in forced.cells}) == 12


# -- running ------------------------------------------------------------------------------------------


def test_a_run_grades_every_answer_and_writes_the_exports(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    mock.server.keep_bodies = True
    out = tmp_path / "out"
    ds = write_dataset(tmp_path / "d.json", system="Be brief.", defaults={"max_tokens": 64, "temperature": 0.2})
    result = run_now(options(ds, out, targets_of(mock, "m1", "m2")))
    assert not result.interrupted and mock.server.requests == 10
    lines = lines_of(out)
    assert len(lines) == 10 and len({cell_key(c) for c in lines}) == 10
    for cell in lines:
        assert cell["status"] == EXPECTED[cell["test_id"]], cell
        assert cell["provider"] == "openai-compatible" and cell["target"] == f"openai-compatible:{cell['model']}"
        assert cell["attempts"] == 1 and cell["error"] is None and cell["run_id"]
        assert cell["tokens_in"] == 12 and cell["tokens_out"] > 0 and cell["duration_ms"] > 0
    add = next(c for c in lines if c["test_id"] == "add")
    assert add["response"] == "The answer is 4." and add["score"] == 1.0
    assert add["assertions"][0]["type"] == "contains" and add["assertions"][0]["passed"] is True
    body = next(b for b in mock.server.bodies if b["messages"][-1]["content"] == "What is 2+2?")
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["max_tokens"] == 64 and body["temperature"] == 0.2

    doc = json.loads((out / "results.json").read_text())
    assert len(doc["results"]) == 10 and doc["meta"]["cells"] == 10 and doc["meta"]["planned"] == 10
    assert doc["meta"]["interrupted"] is False and doc["meta"]["batchId"] == result.run.batch_id
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:8] == CSV_HEAD and len(rows) == 11
    assert {(r[0], r[2]) for r in rows[1:]} == set(EXPECTED.items())
    summary = json.loads((out / "summary.json").read_text())
    assert summary == result.summary
    for spec in ("openai-compatible:m1", "openai-compatible:m2"):
        block = summary["targets"][spec]
        assert (block["passed"], block["failed"], block["ungraded"], block["errors"]) == (2, 2, 1, 0)
        assert block["pass_rate"] == 0.5
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["dataset"]["name"] == "tiny" and [t["spec"] for t in run_json["targets"]] == [
        "openai-compatible:m1", "openai-compatible:m2"]


def test_no_responses_keeps_the_grade_but_not_the_text(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), save_responses=False))
    lines = lines_of(out)
    assert {c["test_id"]: c["status"] for c in lines} == EXPECTED
    assert all(c["response"] is None for c in lines)


def test_streaming_records_the_time_to_the_first_token(tmp_path, mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(answers=ANSWERS, delay_ms=20)
    mock.server.keep_bodies = True
    out = tmp_path / "out"
    run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), stream=True))
    lines = lines_of(out)
    assert {c["test_id"]: c["status"] for c in lines} == EXPECTED
    assert all(c["ttft_ms"] is not None and 0 < c["ttft_ms"] <= c["duration_ms"] for c in lines)
    assert all(b.get("stream") is True for b in mock.server.bodies) and len(mock.server.bodies) == 5
    summary = json.loads((out / "summary.json").read_text())
    assert summary["targets"]["openai-compatible:m"]["ttft_ms"]["p50"] is not None


def test_without_streaming_there_is_no_time_to_first_token(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock)))
    assert all(c["ttft_ms"] is None for c in lines_of(out))


def test_llm_rubric_is_skipped_without_a_judge_and_the_reason_is_noted(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    cases = [{"id": "add", "category": "math", "prompt": "What is 2+2?",
              "assert": [{"type": "contains", "value": "4"}, {"type": "llm-rubric", "value": "Is it polite?"}]}]
    out = tmp_path / "out"
    result = run_now(options(write_dataset(tmp_path / "d.json", cases), out, targets_of(mock)))
    (cell,) = lines_of(out)
    rubric = next(a for a in cell["assertions"] if a["type"] == "llm-rubric")
    assert rubric["skipped"] is True and "judge" in rubric["detail"]
    assert cell["status"] == "passed" and cell["score"] == 1.0  # graded by the contains alone
    assert result.run.judge_note and "no judge credentials" in result.run.judge_note
    assert mock.server.requests == 1  # no judge call went anywhere


def test_a_timeout_is_an_error_cell_of_kind_timeout(tmp_path, mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(answers=ANSWERS)
    cases = [CASES[0], {"id": "stuck", "prompt": "HANG now", "assert": [{"type": "contains", "value": "x"}]}]
    out = tmp_path / "out"
    result = run_now(options(write_dataset(tmp_path / "d.json", cases), out, targets_of(mock),
                             timeout_s=0.3, max_attempts=1))
    cells = {c["test_id"]: c for c in lines_of(out)}
    assert cells["add"]["status"] == "passed"
    stuck = cells["stuck"]
    assert stuck["status"] == "error" and stuck["error_kind"] == "timeout" and stuck["attempts"] == 1
    assert stuck["response"] is None and stuck["error"]
    assert result.summary["targets"]["openai-compatible:m"]["error_kinds"] == {"timeout": 1}


# -- resuming -----------------------------------------------------------------------------------------


def test_resume_after_a_torn_line_loses_and_duplicates_nothing(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    ds = write_dataset(tmp_path / "d.json")
    first = run_now(options(ds, out, targets_of(mock, "m1", "m2"), repeat=2))
    total = 5 * 2 * 2
    raw = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    assert len(raw) == total
    half = total // 2
    kept = raw[:half]
    torn = raw[half][: len(raw[half]) // 2]
    (out / "results.jsonl").write_bytes(b"".join(kept) + torn)
    kept_keys = {cell_key(json.loads(line)) for line in kept}

    run = prepare(resume_options(out))
    assert run.batch_id == first.run.batch_id and run.planned == total
    assert len(run.cells) == total - half and not {p.key for p in run.cells} & kept_keys
    assert run.notes and f"{half} cell(s) already there" in run.notes[0]
    before = mock.server.requests
    result = asyncio.run(execute(run))
    assert mock.server.requests - before == total - half

    lines = lines_of(out)
    keys = [cell_key(c) for c in lines]
    assert len(keys) == total and len(set(keys)) == total
    data = (out / "results.jsonl").read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())  # the torn line is gone
    doc = json.loads((out / "results.json").read_text())
    assert sorted(cell_key(c) for c in doc["results"]) == sorted(keys)
    assert len(result.cells) == total
    assert all(c["status"] == EXPECTED[c["test_id"]] for c in doc["results"])


def test_resume_of_a_finished_run_sends_nothing(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock)))
    run = prepare(resume_options(out))
    assert run.cells == [] and run.planned == 5
    asyncio.run(execute(run))
    assert mock.server.requests == 5 and len(lines_of(out)) == 5


def test_resume_refuses_a_changed_dataset_or_other_providers(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    ds = write_dataset(tmp_path / "d.json")
    run_now(options(ds, out, targets_of(mock), limit=2))
    with pytest.raises(DatasetRunError, match="--providers"):
        prepare(resume_options(out, targets=targets_of(mock, "other")))
    write_dataset(ds, CASES[:3])
    with pytest.raises(DatasetRunError, match="has changed"):
        prepare(resume_options(out))


def test_retry_errors_redoes_only_the_error_cells_and_marks_them(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS, fail_first=2)
    out = tmp_path / "out"
    first = run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), concurrency=1,
                            max_attempts=1))
    errors = {cell_key(c): c for c in first.cells if c["status"] == "error"}
    assert len(errors) == 2 and all(c["error_kind"] == "unavailable" for c in errors.values())
    assert mock.server.requests == 5

    plain = prepare(resume_options(out))
    assert plain.cells == []  # without --retry-errors an error is a result like any other

    run = prepare(resume_options(out, retry_errors=True, max_attempts=1))
    assert {p.key for p in run.cells} == set(errors)
    assert "2 errored, retried" in run.notes[0]
    result = asyncio.run(execute(run))
    assert mock.server.requests == 7

    lines = lines_of(out)
    assert len(lines) == 7
    redone = lines[5:]
    assert {cell_key(c) for c in redone} == set(errors)
    for cell in redone:
        assert cell["retry_of"] == errors[cell_key(cell)]["run_id"] and cell["status"] != "error"
    assert all("retry_of" not in c for c in lines[:5])
    assert {c["test_id"]: c["status"] for c in result.cells} == EXPECTED
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["results"]) == 5 and not [c for c in doc["results"] if c["status"] == "error"]


def test_resume_after_sigkill_completes_every_cell_exactly_once(tmp_path, mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(answers=ANSWERS, delay_ms=200)
    out = tmp_path / "out"
    ds = write_dataset(tmp_path / "d.json")
    db = tmp_path / "bench.db"
    args = [BENCH, "dataset", str(ds), "--providers", "openai-compatible:m1,openai-compatible:m2",
            "--base-url", mock.base_url, "--repeat", "2", "--concurrency", "2", "--output", str(out),
            "--db", str(db), "--quiet"]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(lines_of(out)) >= 4 or proc.poll() is not None:
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode()  # still running: 20 cells at 2 x 200 ms
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    done_before = lines_of(out)
    assert 4 <= len(done_before) < 20
    assert not (out / "results.json").exists()  # the killed run never got to its exports

    result = CliRunner().invoke(__import__("harness.cli.bench", fromlist=["main"]).main,
                                ["dataset", "--resume", str(out), "--db", str(db), "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = lines_of(out)
    keys = [cell_key(c) for c in lines]
    assert len(keys) == 20 and len(set(keys)) == 20  # every cell once, none done twice
    assert keys[: len(done_before)] == [cell_key(c) for c in done_before]
    doc = json.loads((out / "results.json").read_text())
    assert sorted(cell_key(c) for c in doc["results"]) == sorted(keys)
    assert all(c["status"] == EXPECTED[c["test_id"]] for c in doc["results"])


# -- the results store --------------------------------------------------------------------------------


def test_the_run_is_stored_as_one_batch_of_runs(tmp_path, mock_server):
    from harness.results import open_client

    mock = mock_server(answers=ANSWERS, fail_first=1)
    out = tmp_path / "out"
    result = run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), concurrency=1,
                             max_attempts=1, batch_id="batch_dataset_test"))
    assert result.run.batch_id == "batch_dataset_test"
    with open_client(db_path=str(tmp_path / "store.db")) as client:
        store(result, client)
        assert result.stored == 5 and result.store_errors == []
        runs = client.list_runs(batchId="batch_dataset_test")
        batch = client.get_batch("batch_dataset_test")
    assert batch is not None
    assert len(runs) == 5
    by_case = {r.scenario: r for r in runs}
    assert set(by_case) == set(EXPECTED)
    cells = {c["test_id"]: c for c in result.cells}
    for case_id, record in by_case.items():
        cell = cells[case_id]
        assert (record.suite, record.tier, record.agent, record.model) == ("tiny", "dataset", "openai-compatible", "m")
        assert record.run_id == cell["run_id"] and record.batch_id == "batch_dataset_test"
        if cell["status"] == "error":
            assert record.status == "error" and record.failure_class == "infra"
        else:
            assert record.status == "completed"
            assert record.is_successful == (cell["status"] == "passed")
    assert sum(r.status == "error" for r in runs) == 1


def test_storing_again_after_a_resume_adds_no_duplicate(tmp_path, mock_server):
    from harness.results import open_client

    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    first = run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), limit=3))
    again = asyncio.run(execute(prepare(resume_options(out))))
    with open_client(db_path=str(tmp_path / "store.db")) as client:
        store(first, client)
        store(again, client)
        runs = client.list_runs(batchId=first.run.batch_id)
    assert len(runs) == 3 and len({r.run_id for r in runs}) == 3


def test_cache_replay_answers_a_second_run_from_the_first_run_s_answers(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    ds = write_dataset(tmp_path / "d.json")
    first = run_now(options(ds, tmp_path / "one", targets_of(mock), repeat=2, cache="replay"))
    assert mock.server.requests == 10 and not any(c["cached"] for c in first.cells)
    second = run_now(options(ds, tmp_path / "two", targets_of(mock), repeat=2, cache="replay"))
    assert mock.server.requests == 10  # nothing sent
    assert all(c["cached"] for c in second.cells)
    assert {(c["test_id"], c["repeat"], c["status"], c["response"]) for c in second.cells} == \
        {(c["test_id"], c["repeat"], c["status"], c["response"]) for c in first.cells}
    third = run_now(options(ds, tmp_path / "three", targets_of(mock), repeat=2))
    assert mock.server.requests == 20 and not any(c["cached"] for c in third.cells)  # --cache off: live


def test_resume_works_from_another_working_directory(tmp_path, mock_server, monkeypatch):
    mock = mock_server(answers=ANSWERS)
    project = tmp_path / "project"
    project.mkdir()
    write_dataset(project / "cases.json")
    monkeypatch.chdir(project)
    run_now(DatasetRunOptions(dataset="cases.json", targets=targets_of(mock), output_dir=Path("out")))
    out = project / "out"
    raw = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(raw[:2]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = prepare(resume_options(out))
    assert len(run.cells) == 3
    asyncio.run(execute(run))
    assert sorted(c["test_id"] for c in lines_of(out)) == sorted(EXPECTED)


def test_every_cell_is_on_disk_as_soon_as_it_is_reported(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    on_disk = []

    def on_event(event):  # told once the cell is appended (cells recorded together, flushed once)
        lines, _ = read_results(out / "results.jsonl")
        on_disk.append(event.kind == "done" and event.result.run_id in {line["run_id"] for line in lines})

    run_now(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), repeat=2), on_event=on_event)
    assert on_disk == [True] * 10


class _OrderedProvider:
    """Answers at once and notes each request as it starts, in one list with the cells recorded."""

    supports_streaming = False

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def aprepare(self) -> None:
        pass

    async def achat(self, request, *, stream=False, retry=True, repeat_index=0, use_cache=False, record=None):
        from harness.models.providers import ChatResponse, Usage

        self.events.append(f"sent {request.messages[-1].content}")
        await asyncio.sleep(0)
        return ChatResponse(text="4", tool_calls=[], usage=Usage(1, 1), model=request.model, stop_reason="stop",
                            latency_ms=1.0, cost_usd=0.0)

    async def aclose(self) -> None:
        pass


def _engine_with(provider):
    from harness.models.engine import Engine, EngineOptions

    return Engine(EngineOptions(concurrency=1), provider_factory=lambda target, size: provider)


def test_an_answer_is_recorded_after_the_next_request_is_sent(tmp_path):
    """Grading and the results line are off the path from one request to the next: with one
    request at a time, each answer's line is written once the following request is out, and
    every answer is on disk when the run returns."""
    cases = [{"id": f"q{i}", "prompt": f"question {i}", "expected": "4"} for i in range(3)]
    events: list[str] = []
    run = prepare(options(write_dataset(tmp_path / "d.json", cases), tmp_path / "out",
                          [parse_target("openai-compatible:m", base_url="http://127.0.0.1:9/v1")], concurrency=1))

    async def main():
        engine = _engine_with(_OrderedProvider(events))
        try:
            return await execute(run, engine=engine, on_event=lambda event: events.append(f"recorded {event.result.line['test_id']}"))
        finally:
            await engine.aclose()

    result = asyncio.run(main())
    assert events == ["sent question 0", "sent question 1", "recorded q0", "sent question 2", "recorded q1",
                      "recorded q2"]
    assert [c["test_id"] for c in lines_of(tmp_path / "out")] == ["q0", "q1", "q2"]
    assert [c["status"] for c in result.cells] == ["passed"] * 3


def test_a_failure_to_record_an_answer_stops_the_run_and_is_raised(tmp_path, monkeypatch):
    """A results line that cannot be written (a full disk) is not lost in a callback: the run
    stops and the error reaches the caller; the lines written before it are kept."""

    cases = [{"id": f"q{i}", "prompt": f"question {i}", "expected": "4"} for i in range(6)]
    events: list[str] = []
    run = prepare(options(write_dataset(tmp_path / "d.json", cases), tmp_path / "out",
                          [parse_target("openai-compatible:m", base_url="http://127.0.0.1:9/v1")], concurrency=1))
    real_append = ResultsLog.append

    def append(self, cell, flush=True):
        if cell.line["test_id"] == "q2":
            raise OSError(28, "No space left on device")
        real_append(self, cell, flush)

    monkeypatch.setattr(ResultsLog, "append", append)

    async def main():
        engine = _engine_with(_OrderedProvider(events))
        try:
            return await execute(run, engine=engine)
        finally:
            await engine.aclose()

    with pytest.raises(OSError, match="No space left"):
        asyncio.run(main())
    assert [c["test_id"] for c in lines_of(tmp_path / "out")] == ["q0", "q1"]
    assert len([e for e in events if e.startswith("sent")]) < 6  # stopped, not run to the end

def test_answers_recorded_together_are_flushed_once(tmp_path, monkeypatch):
    """Answers that come back in one turn of the event loop are written, flushed once, then
    reported (each reported cell is on disk: test_every_cell_is_on_disk_as_soon_as_it_is_reported)."""

    cases = [{"id": f"q{i}", "prompt": f"question {i}", "expected": "4"} for i in range(6)]
    run = prepare(options(write_dataset(tmp_path / "d.json", cases), tmp_path / "out",
                          [parse_target("openai-compatible:m", base_url="http://127.0.0.1:9/v1")], concurrency=3))
    flushes: list[int] = []
    real_flush = ResultsLog.flush

    def flush(self):
        flushes.append(len(lines_of(tmp_path / "out")))
        real_flush(self)

    monkeypatch.setattr(ResultsLog, "flush", flush)

    async def main():
        from harness.models.engine import Engine, EngineOptions

        engine = Engine(EngineOptions(concurrency=3), provider_factory=lambda target, size: _OrderedProvider([]))
        try:
            return await execute(run, engine=engine)
        finally:
            await engine.aclose()

    asyncio.run(main())
    assert sorted(c["test_id"] for c in lines_of(tmp_path / "out")) == [f"q{i}" for i in range(6)]
    assert 0 < len(flushes) < 6


def test_read_results_keeps_the_whole_lines_before_a_torn_one(tmp_path):
    from harness.results_log import read_results

    path = tmp_path / "results.jsonl"
    lines = [json.dumps({"test_id": f"t{i}", "target": "p:m", "repeat": 0}).encode() + b"\n" for i in range(3)]
    path.write_bytes(b"".join(lines))
    cells, good = read_results(path)
    assert [c["test_id"] for c in cells] == ["t0", "t1", "t2"] and good == path.stat().st_size
    # a line cut short and then followed by others: everything from it on is dropped
    path.write_bytes(lines[0] + lines[1][:10] + b"\n" + lines[2])
    cells, good = read_results(path)
    assert [c["test_id"] for c in cells] == ["t0"] and good == len(lines[0])
    # the end of the file cut short
    path.write_bytes(lines[0] + lines[1] + lines[2][:7])
    cells, good = read_results(path)
    assert [c["test_id"] for c in cells] == ["t0", "t1"] and good == len(lines[0]) + len(lines[1])
    path.write_bytes(b"")
    assert read_results(path) == ([], 0)


def test_a_large_run_and_its_result_have_short_reprs(tmp_path):
    """asyncio.run reprs the result of its task (Python 3.11, restoring the SIGINT handler):
    a run's result must not print its whole dataset and every cell."""
    from harness.datasets.planning import DatasetResult

    cases = [{"id": f"c{i}", "prompt": f"say {i}", "expected": str(i)} for i in range(2000)]
    dataset = write_dataset(tmp_path / "big.json", cases, name="big")
    run = prepare(options(dataset, tmp_path / "out", [parse_target("openai-compatible:m", base_url="http://127.0.0.1:9/v1")]))
    result = DatasetResult(run, [{"test_id": f"c{i}"} for i in range(2000)], {})
    for value in (run.dataset, run, result):
        assert len(repr(value)) < 300
    assert "2000 cases" in repr(run.dataset) and "2000 cells" in repr(result)
