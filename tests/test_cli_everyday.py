"""Everyday reads: `bench prices` at 80 columns, `bench show --transcript` with tool calls,
`bench history --specialist` by bare or scoped name."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli.bench import main


def test_prices_fit_80_columns_with_every_price_in_full():
    from harness.cli.prices_cmd import _money
    from harness.models.pricing import load_price_table

    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["prices"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "…" not in result.stdout
    assert max(len(line) for line in lines) <= 80
    assert any("cache rd/wr: cache read/write" in line for line in lines)  # the abbreviations explained
    for row in load_price_table().rows:
        line = next((ln for ln in lines if ln.split()[:1] == [row.model]), None)
        assert line is not None, f"no line for {row.model}"
        cells = [_money(v) for v in (row.input, row.output, row.cache_read, row.cache_write)]
        assert line.split()[1:] == [*cells, row.effective_date], line


def test_prices_table_keeps_its_width_on_a_wide_terminal():
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["prices", "--provider", "anthropic"])
    assert result.exit_code == 0
    assert "claude-opus-4-6" in result.stdout and "openai" not in result.stdout.split("in/out:")[0]
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


# ------------------------------------------------------------------------- stored runs

import json  # noqa: E402

import pytest  # noqa: E402

from harness.results import open_client  # noqa: E402
from harness.results.records import EvaluationRecord, RunRecord  # noqa: E402
from support.scenario_builders import use_local_store  # noqa: E402


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty embedded store (SQLite), used by every command through the environment."""
    use_local_store(monkeypatch, tmp_path)
    return tmp_path / "bench.db"


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def post_runs(db, *runs: RunRecord) -> None:
    with open_client(db_path=str(db)) as client:
        for run in runs:
            assert client.post_run(run) == "stored"


def run_record(run_id: str, **over) -> RunRecord:
    fields = dict(run_id=run_id, suite="py-bugs", scenario="add-one", tier="L1", agent="anthropic",
                  model="claude-haiku-4-5", status="completed", total_score=1.0, is_successful=True,
                  evaluations=[EvaluationRecord("validation", 1.0)])
    fields.update(over)
    return RunRecord(**fields)


NEW_CALC = "def add_one(x):\n    return x + 1\n\n\ndef add_two(x):\n    return x + 2\n"
TOOL_TRANSCRIPT = [
    {"role": "system", "content": "You fix bugs."},
    {"role": "user", "content": "add_one(1) should be 2; fix calc.py."},
    # The API agents' loop: one entry per turn, its calls in tool_calls, then one entry per result.
    {"role": "assistant", "content": "", "stop_reason": "tool_use", "usage": {"input": 10, "output": 5},
     "tool_calls": [{"id": "t1", "name": "read_file", "arguments": {"path": "calc.py"}},
                    {"id": "t2", "name": "list_directory", "arguments": {"path": ".", "recursive": True}}]},
    {"role": "tool", "tool_call_id": "t1", "name": "read_file", "is_error": False,
     "content": "def add_one(x):\n    return x\n\n\ndef add_two(x):\n    return x + 2\n"},
    {"role": "tool", "tool_call_id": "t2", "name": "list_directory", "is_error": False, "content": "calc.py\n"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "t3", "name": "write_file", "arguments": {"path": "calc.py", "content": NEW_CALC}}]},
    {"role": "tool", "tool_call_id": "t3", "name": "write_file", "is_error": False, "content": "wrote 63 bytes"},
    {"role": "assistant", "content": "Running the tests.", "tool_calls": [
        {"id": "t4", "name": "run_command", "arguments": {"command": "pytest -q"}}]},
    {"role": "tool", "tool_call_id": "t4", "name": "run_command", "is_error": True,
     "content": "exit code 1\nF.\nFAILED test_calc.py::test_add_two\nline 4\nline 5"},
    # The claude-code agent: one entry per call, arguments as a JSON string; results without a name.
    {"role": "assistant", "tool_call": {"id": "cc1", "name": "Bash", "arguments": '{"command": "pytest -q"}'}},
    {"role": "tool", "tool_call_id": "cc1", "content": "2 passed", "is_error": False},
    {"role": "assistant", "content": "Fixed add_one."},
    {"role": "note", "content": "max turns (5) reached"},
]


def test_show_transcript_shows_tool_calls_and_results(store):
    post_runs(store, run_record("run_tools", transcript=TOOL_TRANSCRIPT))
    result = bench("show", "run_tools", "--transcript")
    assert result.exit_code == 0, result.output
    text = result.stdout.split("Transcript:", 1)[1]
    lines = text.splitlines()
    # Each call, in order, followed by the first lines of its result.
    expected = [
        "assistant:",
        '  → read_file(path="calc.py")',
        "    ← def add_one(x):",
        "          return x",
        "      def add_two(x):",
        "      … 1 more line(s)",
        '  → list_directory(path=".", recursive=true)',
        "    ← calc.py",
        "assistant:",
        f'  → write_file(path="calc.py", content="def add_one(x):"… (6 lines, {len(NEW_CALC)} chars))',
        "    ← wrote 63 bytes",
        "assistant: Running the tests.",
        '  → run_command(command="pytest -q")',
        "    ← error: exit code 1",
        "             F.",
        "             FAILED test_calc.py::test_add_two",
        "             … 2 more line(s)",
        "assistant:",
        '  → Bash(command="pytest -q")',
        "    ← 2 passed",
        "assistant: Fixed add_one.",
        "note: max turns (5) reached",
    ]
    start = lines.index("assistant:")
    assert lines[start:start + len(expected)] == expected
    assert "user: add_one(1) should be 2; fix calc.py." in lines and "system: You fix bugs." in lines
    assert "return x + 1" not in text  # a written file shows as its first line and size only
    # --json is the stored transcript, unchanged.
    shown = json.loads(bench("show", "run_tools", "--json", "--transcript").stdout)
    assert shown["transcript"] == TOOL_TRANSCRIPT


def test_tool_call_text_keeps_calls_on_one_short_line():
    from harness.cli.render import tool_call_text

    command = "python -m pytest -q tests/test_a_rather_long_module_name.py -k 'slug and not unicode'"
    shown = tool_call_text("run_command", {"command": command})
    assert shown == f'run_command(command="{command[:59]}…" ({len(command)} chars))'
    assert tool_call_text("Edit", '{"file_path": "a.py", "old_string": "x\\ny", "new_string": "z"}') == \
        'Edit(file_path="a.py", new_string="z", old_string="x"… (2 lines, 3 chars))'
    assert tool_call_text("read_file", "{not json") == 'read_file("{not json")'  # unparsed model output
    assert tool_call_text("list_directory", None) == "list_directory()"
    assert len(tool_call_text("w", {f"k{i}": "v" * 50 for i in range(20)})) < 220


def test_show_transcript_of_a_tool_loop_run(store, tmp_path, make_sandbox):
    """A transcript as the API agents' loop writes it (scripted model, real tools) reads back
    with every call's name and arguments."""
    from harness.agents.base import AgentContext, Budgets
    from harness.agents.loop import LoopSettings, run_tool_loop
    from harness.models.providers.types import ChatResponse, ToolCall, Usage
    from harness.tools import Toolset

    def reply(text="", calls=()):
        return ChatResponse(text=text, tool_calls=list(calls), usage=Usage(10, 5, 0, 0), model="scripted",
                            stop_reason="tool_use" if calls else "end_turn", latency_ms=1.0, cost_usd=0.0)

    class Scripted:
        name = "scripted"

        def __init__(self):
            self.replies = [
                reply(calls=[ToolCall("c1", "write_file", {"path": "notes.txt", "content": "one\ntwo\nthree\n"}, "")]),
                reply(calls=[ToolCall("c2", "read_file", {"path": "missing.txt"}, "")]),
                reply("done"),
            ]

        def chat(self, request, **_):
            return self.replies.pop(0)

    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = AgentContext(prompt="take notes", sandbox=make_sandbox(ws), budgets=Budgets())
    outcome = run_tool_loop(ctx, Scripted(), Toolset.for_context(ctx), LoopSettings(model="scripted"))
    assert outcome.status == "completed"
    post_runs(store, run_record("run_loop", transcript=outcome.transcript))
    text = bench("show", "run_loop", "--transcript").stdout.split("Transcript:", 1)[1]
    assert '→ write_file(path="notes.txt", content="one"… (3 lines, 14 chars))' in text
    assert '→ read_file(path="missing.txt")' in text and "← error: " in text
    assert "assistant: done" in text
    assert "assistant: \n" not in text + "\n"


def spec_run(run_id: str, name: str | None) -> RunRecord:
    return run_record(run_id, specialist_enabled=name is not None, specialist_name=name,
                      specialist_version="1.0.0" if name else None)


def history_ids(*args: str) -> set[str]:
    result = bench("history", "--json", *args)
    assert result.exit_code == 0, result.output
    return {r["runId"] for r in json.loads(result.stdout)}


def test_history_specialist_accepts_the_bare_name_bench_accepts(store, tmp_path):
    post_runs(store, spec_run("run_scoped", "@zebench/python-bugfixer"), spec_run("run_bare", "python-bugfixer"),
              spec_run("run_other_scope", "@acme/python-bugfixer"), spec_run("run_upgrader", "@zebench/dependency-upgrader"),
              spec_run("run_baseline", None))
    assert history_ids("--specialist", "python-bugfixer") == {"run_scoped", "run_bare", "run_other_scope"}
    assert history_ids("--specialist", "@zebench/python-bugfixer") == {"run_scoped"}
    # A template file stands for its own name, as with `bench --specialist FILE`.
    template = tmp_path / "fixer.json5"
    template.write_text('{name: "@acme/python-bugfixer", version: "1.0.0"}')
    assert history_ids("--specialist", str(template)) == {"run_other_scope"}
    table = bench("history", "--specialist", "python-bugfixer")
    assert "run_scoped" in table.stdout and "run_upgrader" not in table.stdout


def test_history_specialist_without_matches_says_why(store):
    post_runs(store, spec_run("run_scoped", "@zebench/python-bugfixer"), spec_run("run_baseline", None))
    result = bench("history", "--specialist", "python-fixer")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"No runs match in sqlite:{store}.",
        "--specialist python-fixer: matched bare or under any scope (@scope/python-fixer).",
        "Specialists of stored runs: @zebench/python-bugfixer",
    ]
    assert history_ids("--specialist", "python-fixer") == set()  # --json stays a plain list


@pytest.mark.parametrize("value, fragment", [
    ("python-bugfixer@1.0.0", "includes a version; give the name alone ('python-bugfixer')"),
    ("@zebench/python-bugfixer@1.0.0", "give the name alone ('@zebench/python-bugfixer')"),
    ("templates/nowhere.json5", "templates/nowhere.json5: file not found"),
])
def test_history_specialist_errors_are_one_line(store, value, fragment):
    result = bench("history", "--specialist", value)
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert "\n" not in err and err.startswith("Error: --specialist: ") and fragment in err, err
