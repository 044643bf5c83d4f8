"""`bench export`: stored runs as CSV, JSONL and Parquet (docs/export.md).

The store is filled by real `bench` runs (the oracle and echo agents on a small suite) and by
runs posted through the results client that carry what real runs rarely do: an evaluator
twice, lists, empty and colliding dicts, a metadata key of a different type in each run,
text with commas, quotes and newlines, a run without telemetry. Each export is read back and
every cell compared with the record `bench show --json` prints for its run; the runs chosen
are compared with `bench history`; bad input writes nothing and fails with one line."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.results import open_client
from harness.results.records import EvaluationRecord, RunRecord, Telemetry
from support.scenario_builders import make_scenario



def parquet():
    """pyarrow.parquet, or skip: Parquet is optional (the test extra installs it)."""
    return pytest.importorskip("pyarrow.parquet")

DOC = Path(__file__).resolve().parents[1] / "docs" / "export.md"
RUN_COLUMNS = ["runId", "batchId", "suite", "scenario", "tier", "agent", "model", "status", "failureClass",
               "startedAt", "completedAt", "totalScore", "weightedScore", "isSuccessful", "successMetric",
               "specialistEnabled", "specialistName", "specialistVersion", "configHash"]
TELEMETRY = ["toolCalls", "tokensIn", "tokensOut", "cacheReadTokens", "cacheWriteTokens", "costUsd",
             "judgeTokensIn", "judgeTokensOut", "judgeCostUsd", "turns", "durationMs", "latenciesMs", "workspaceDir"]
EVAL_FIELDS = ["score", "maxScore", "status", "details"]


def bench(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _hand_runs() -> list[RunRecord]:
    odd = 'a, "quoted" value\nover two lines; ünïcödé'
    first = RunRecord(
        run_id="run_1700000000000_handaaaa", batch_id="b-hand", suite="hand", scenario="edge", tier="L1",
        agent="openai", model="gpt-test", status="failed", failure_class="validation",
        started_at="2026-01-01T00:00:00.000Z", completed_at="2026-01-01T00:00:01.500Z",
        total_score=0.25, weighted_score=0.25, is_successful=False, success_metric=0.0,
        specialist_enabled=True, specialist_name="@acme/bugfixer", specialist_version="1.2.0", config_hash="c1",
        metadata={"note": odd, "tags": ["x", {"y": 1}], "empty": {}, "nested": {"deep": {"er": True}},
                  "clash": {"a": {"b": 1}, "a.b": 2}, "mixed": 7, "big": 2**70, "iteration": 1},
        evaluations=[EvaluationRecord("assert.contains", 1.0, details="first"),
                     EvaluationRecord("assert.contains", 0.0, status="ok", details=odd),
                     EvaluationRecord("judge", 0.5, max_score=1.0, status="error", details="")],
        telemetry=Telemetry(tool_calls=3, tokens_in=1200, tokens_out=340, cache_read_tokens=10, cost_usd=0.0123,
                            judge_cost_usd=0.001, turns=4, duration_ms=1500.5, latencies_ms=[100.0, 250.5],
                            workspace_dir="/tmp/ws"),
    )
    second = RunRecord(
        run_id="run_1700000000001_handbbbb", batch_id="b-hand", suite="hand", scenario="edge", tier="L2",
        agent="echo", status="error", failure_class="infra", started_at="2026-01-01T00:01:00.000Z",
        metadata={"mixed": "seven", "nested": {"deep": {"er": False}}, "iteration": 2.5},
        evaluations=[],
        telemetry=None,
    )
    return [first, second]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    make_scenario(root / "suites")
    mp = pytest.MonkeyPatch()
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_API_KEY"):
        mp.delenv(name, raising=False)
    for name, value in {"ZE_BENCHMARKS_SUITES_DIR": root / "suites", "ZE_BENCHMARKS_DB": root / "bench.db",
                        "ZE_BENCHMARKS_SPOOL_DIR": root / "spool",
                        "ZE_BENCHMARKS_WORKSPACES_DIR": root / "workspaces"}.items():
        mp.setenv(name, str(value))
    mp.chdir(root)
    for args in (["--agent", "oracle", "--batch-id", "b-oracle", "-n", "2"],
                 ["--agent", "echo", "--batch-id", "b-echo"]):
        stored = bench("demo", "add-one", *args)
        assert stored.exit_code == 0, stored.output
    with open_client(db_path=str(root / "bench.db")) as client:
        assert [client.post_run(run) for run in _hand_runs()] == ["stored", "stored"]
    out = root / "out"
    out.mkdir()
    yield root
    mp.undo()


def stored(run_id: str) -> dict:
    shown = bench("show", run_id, "--json")
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)


def history_ids(*args: str) -> list[str]:
    result = bench("history", "--json", "--limit", "500", *args)
    assert result.exit_code == 0, result.output
    return [r["runId"] for r in json.loads(result.stdout)]


def leaves(value, name):
    """(column, stored value) of every value a record's dict holds, as the columns name it
    (``metadata.clash`` would name ``metadata.clash.a.b`` twice: it stays whole)."""
    if isinstance(value, dict) and value and name != "metadata.clash":
        for key, item in value.items():
            yield from leaves(item, f"{name}.{key}")
    else:
        yield name, value


def expected_columns(record: dict) -> dict:
    """The cells a run's row must hold, from its stored record (lists and {} as themselves)."""
    cells = {name: record[name] for name in RUN_COLUMNS}
    telemetry = record.get("telemetry") or {}
    cells.update({f"telemetry.{f}": telemetry.get(f) for f in TELEMETRY})
    seen: dict[str, int] = {}
    for evaluation in record["evaluations"]:
        base = evaluation["evaluatorName"]
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        cells.update({f"eval.{name}.{f}": evaluation[f] for f in EVAL_FIELDS})
    if record["metadata"]:
        cells.update(dict(leaves(record["metadata"], "metadata")))
    return cells


def same_csv(cell: str, value) -> bool:
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return cell != "" and float(cell) == value and (not isinstance(value, int) or int(cell) == value)
    if isinstance(value, (list, dict)):
        return json.loads(cell) == value
    return cell == value


def read_csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    return header, [dict(zip(header, row)) for row in reader]


def export(*args: str):
    result = bench("export", *args)
    assert result.exit_code == 0, result.output
    return result


# ------------------------------------------------------------------------------- round trips


def test_item8_jsonl_holds_each_stored_record_and_nothing_else(lab):
    export("-o", "out/all.jsonl")
    lines = (lab / "out" / "all.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["runId"] for r in records] == history_ids()
    assert len(records) == 5
    for record in records:
        assert record == stored(record["runId"])  # every value, with its JSON type
    hand = next(r for r in records if r["runId"] == "run_1700000000000_handaaaa")
    assert hand["metadata"]["big"] == 2**70 and hand["telemetry"]["latenciesMs"] == [100.0, 250.5]


def test_item8_csv_cells_equal_the_stored_values(lab):
    export("-o", "out/all.csv")
    header, rows = read_csv((lab / "out" / "all.csv").read_text("utf-8"))
    assert len(header) == len(set(header))
    assert [row["runId"] for row in rows] == history_ids()
    for row in rows:
        record = stored(row["runId"])
        cells = expected_columns(record)
        for name, value in cells.items():
            assert name in row, name
            assert same_csv(row[name], value), (row["runId"], name, row[name], value)
        extra = [n for n in header if n not in cells and row[n] != ""]
        assert not extra, extra  # nothing but the run's own values in its row
    hand = next(row for row in rows if row["runId"] == "run_1700000000000_handaaaa")
    assert hand["eval.assert.contains#2.details"].startswith('a, "quoted" value\nover two lines')
    assert json.loads(hand["metadata.clash"]) == {"a": {"b": 1}, "a.b": 2}


def test_item8_parquet_cells_equal_the_stored_values_with_their_types(lab):
    pq = parquet()
    export("-o", "out/all.parquet")
    table = pq.read_table(lab / "out" / "all.parquet")
    rows = table.to_pylist()
    assert [row["runId"] for row in rows] == history_ids()
    types = {field.name: str(field.type) for field in table.schema}
    assert types["isSuccessful"] == "bool" and types["totalScore"] == "double"
    assert types["telemetry.tokensIn"] == "int64" and types["telemetry.costUsd"] == "double"
    assert types["eval.assert.contains.score"] == "double" and types["eval.judge.status"] == "string"
    assert types["metadata.cached"] == "bool" and types["metadata.cachedCalls"] == "int64"
    assert types["metadata.mixed"] == "string"  # 7 in one run, "seven" in another: JSON text
    assert types["metadata.iteration"] == "double"  # 1, 2 and 2.5
    assert types["metadata.big"] == "string"  # beyond int64: JSON text
    mixed = {"metadata.mixed", "metadata.big"}
    for row in rows:
        for name, value in expected_columns(stored(row["runId"])).items():
            cell = row[name]
            if isinstance(value, (list, dict)) or (name in mixed and value is not None and not isinstance(value, str)):
                assert json.loads(cell) == value, (name, cell, value)
            elif types[name] == "double" and value is not None:
                assert isinstance(cell, float) and cell == value, (name, cell, value)
            else:
                assert cell == value and type(cell) is type(value), (row["runId"], name, cell, value)


def test_item8_csv_and_jsonl_go_to_stdout_and_the_summary_to_stderr(lab):
    as_csv = export("--batch-id", "b-oracle")
    header, rows = read_csv(as_csv.stdout)
    assert [row["runId"] for row in rows] == history_ids("--batch-id", "b-oracle")
    assert "Exported 2 runs (csv" in as_csv.stderr and "Exported" not in as_csv.stdout
    as_jsonl = export("--batch-id", "b-oracle", "--format", "jsonl", "-o", "-")
    assert [json.loads(line)["runId"] for line in as_jsonl.stdout.splitlines()] == [r["runId"] for r in rows]


def test_item8_zero_runs_give_a_valid_empty_file_with_the_fixed_columns(lab):
    fixed = RUN_COLUMNS + [f"telemetry.{f}" for f in TELEMETRY]
    result = export("--agent", "nobody", "-o", "out/none.csv")
    assert "No runs match" in result.stderr
    assert read_csv((lab / "out" / "none.csv").read_text("utf-8")) == (fixed, [])
    export("--agent", "nobody", "-o", "out/none.jsonl")
    assert (lab / "out" / "none.jsonl").read_bytes() == b""
    pq = parquet()
    export("--agent", "nobody", "-o", "out/none.parquet")
    table = pq.read_table(lab / "out" / "none.parquet")
    assert table.num_rows == 0 and table.column_names == fixed


# ------------------------------------------------------------------------------------ columns


def test_item8_column_order_is_the_documented_one_whatever_the_order_of_the_runs(lab):
    export("-o", "out/order.csv")
    header, _ = read_csv((lab / "out" / "order.csv").read_text("utf-8"))
    fixed = RUN_COLUMNS + [f"telemetry.{f}" for f in TELEMETRY]
    assert header[:len(fixed)] == fixed
    evals = [n for n in header if n.startswith("eval.")]
    assert evals == [f"eval.{name}.{f}" for name in ("assert.contains", "assert.contains#2", "judge", "test")
                     for f in EVAL_FIELDS]
    metadata = header[len(fixed) + len(evals):]
    assert metadata == sorted(metadata) and all(n.startswith("metadata") for n in metadata)
    # The same runs in two exports of different sizes: the columns of the smaller are a
    # subsequence of the larger's, in the same order.
    export("--suite", "hand", "-o", "out/hand.csv")
    small, _ = read_csv((lab / "out" / "hand.csv").read_text("utf-8"))
    assert [n for n in header if n in small] == small
    text = DOC.read_text("utf-8")
    for name in fixed + [f"eval.EVALUATOR.{f}" for f in EVAL_FIELDS]:
        assert f"`{name}`" in text, f"{name} is not documented in docs/export.md"


# ------------------------------------------------------------------------------------ filters


@pytest.mark.parametrize("args", [
    (), ("--agent", "oracle"), ("--batch-id", "b-echo"), ("--status", "completed"), ("--status", "error"),
    ("--suite", "hand"), ("--suite", "demo", "--tier", "L1"), ("--scenario", "edge"), ("--model", "gpt-test"),
    ("--specialist", "bugfixer"), ("--specialist", "@acme/bugfixer"), ("--specialist", "@other/bugfixer"),
    ("--agent", "nobody"),
], ids=lambda args: " ".join(args) or "none")
def test_item8_filters_select_the_same_runs_as_history(lab, args):
    result = export(*args, "--format", "jsonl")
    assert [json.loads(line)["runId"] for line in result.stdout.splitlines()] == history_ids(*args)


def test_item8_limit_keeps_the_newest_runs_as_history_does(lab):
    for limit in ("1", "3"):
        result = export("--limit", limit, "--format", "jsonl")
        ids = [json.loads(line)["runId"] for line in result.stdout.splitlines()]
        assert ids == history_ids()[:int(limit)] and len(ids) == int(limit)


def test_item8_the_filter_options_are_those_of_history():
    from harness.cli.export_cmd import export as export_command
    from harness.cli.results_cmd import history

    shared = ["suite", "scenario", "agent", "model", "tier", "status", "batch_id", "specialist"]
    mine = {p.name: p for p in export_command.params}
    theirs = {p.name: p for p in history.params}
    assert all(mine[name] is theirs[name] for name in shared)


def test_item8_long_exports_report_progress_on_stderr(lab, monkeypatch):
    from harness.cli import export_cmd

    monkeypatch.setattr(export_cmd, "PROGRESS_EVERY", 2)
    result = export("-o", "out/progress.csv")
    assert "read 2/5 runs" in result.stderr and "read 5/5 runs" in result.stderr
    assert "read 1/5" not in result.stderr


# --------------------------------------------------------------------------------- bad input


def one_line_error(result, status: int, *excerpts: str) -> None:
    assert result.exit_code == status, result.output
    lines = result.stderr.strip().splitlines()
    assert len([line for line in lines if line.startswith("Error:")]) == 1, result.stderr
    assert "Traceback" not in result.output
    for excerpt in excerpts:
        assert excerpt in result.stderr, result.stderr


def nothing_written(root: Path, name: str) -> None:
    assert not (root / "out" / name).exists()
    assert not [p for p in (root / "out").iterdir() if p.name.endswith(".tmp")]


def test_item8_an_unknown_format_is_refused(lab):
    result = bench("export", "--format", "xml", "-o", "out/bad.xml")
    one_line_error(result, 2, "--format", "'xml' is not one of")
    nothing_written(lab, "bad.xml")
    result = bench("export", "-o", "out/bad.txt")
    one_line_error(result, 2, "--output out/bad.txt: cannot tell the format from the extension .txt")
    assert len(result.stderr.strip().splitlines()) == 1
    nothing_written(lab, "bad.txt")


def test_item8_parquet_to_stdout_is_refused(lab):
    for args in (["--format", "parquet"], ["--format", "parquet", "-o", "-"]):
        result = bench("export", *args)
        one_line_error(result, 2, "--format parquet cannot go to stdout")
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_item8_an_unwritable_output_fails_and_writes_nothing(lab):
    result = bench("export", "-o", "out/missing/runs.csv")
    one_line_error(result, 2, "out/missing/runs.csv", "does not exist")
    result = bench("export", "-o", "out")
    one_line_error(result, 2, "is a directory")
    blocker = lab / "out" / f".blocked.csv.{os.getpid()}.tmp"
    blocker.mkdir()  # where the temporary file would go: cannot be opened as a file
    try:
        result = bench("export", "-o", "out/blocked.csv")
        one_line_error(result, 1, "cannot write", "blocked.csv")
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (lab / "out" / "blocked.csv").exists()
    finally:
        blocker.rmdir()


def test_item8_an_unknown_batch_fails_and_writes_nothing(lab):
    with_parquet = importlib.util.find_spec("pyarrow") is not None
    for name in ("nosuch.csv", "nosuch.jsonl", *(["nosuch.parquet"] if with_parquet else [])):
        result = bench("export", "--batch-id", "nosuch", "-o", f"out/{name}")
        one_line_error(result, 1, "batch 'nosuch' not found")
        assert len(result.stderr.strip().splitlines()) == 1
        nothing_written(lab, name)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_item8_a_store_failing_midway_leaves_the_previous_file_untouched(lab, monkeypatch, fmt):
    if fmt == "parquet":
        parquet()
    from harness.results import ResultsError
    from harness.results.worker_client import WorkerClient

    target = lab / "out" / f"kept.{fmt}"
    target.write_bytes(b"the previous export\n")
    real = WorkerClient.get_run
    calls = []

    def failing(self, run_id):
        calls.append(run_id)
        if len(calls) == 3:
            raise ResultsError("the store went away")
        return real(self, run_id)

    monkeypatch.setattr(WorkerClient, "get_run", failing)
    result = bench("export", "-o", f"out/kept.{fmt}")
    one_line_error(result, 1, "the store went away")
    assert target.read_bytes() == b"the previous export\n"
    assert not [p for p in (lab / "out").iterdir() if p.name.endswith(".tmp")]


def test_item8_parquet_without_pyarrow_says_how_to_install_it(lab, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    result = bench("export", "-o", "out/nopa.parquet")
    one_line_error(result, 2, "pip install pyarrow")
    assert len(result.stderr.strip().splitlines()) == 1
    nothing_written(lab, "nopa.parquet")
    export("-o", "out/still.csv")  # the other formats do not need it
