"""The bad-input sweep: every row of the table in docs/errors.md, run exactly as written.

Each row names a command, the exit status it must end with and an excerpt of its message;
no output may hold a traceback. The table is the documentation and the test at once, so the
two cannot drift apart.
"""

from __future__ import annotations

import re
import shlex
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.bench import main as bench_main
from harness.cli.mint import main as mint_main
from support.http_stubs import AnythingGoes, serve
from support.scenario_builders import make_scenario
from worker.cli import main as worker_main

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


def _rows() -> list[tuple[str, str, int, str]]:
    text = DOC.read_text("utf-8")
    section = text.split("## Bad input tried", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].startswith("`") or not cells[2].isdigit():
            continue
        rows.append((cells[0], cells[1].strip("`"), int(cells[2]), cells[3].strip("`")))
    return rows


ROWS = _rows()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    suites = root / "suites"
    make_scenario(suites)
    broken = {
        "broken-yaml": "id: x\nvalidation: [unclosed\n",
        "typo-top": "id: x\nvalidaton:\n  commands:\n    test: 'true'\n",
        "no-image": "id: x\nsandbox:\n  image: nowhere\n",
        "wrong-type": "id: x\ntimeout_minutes: soon\n",
        "typo-gate": "id: x\nvalidation:\n  comands:\n    test: 'true'\n",
        "unknown-command": "id: x\nvalidation:\n  commands:\n    tset: 'true'\n",
        "bad-regex": "id: x\nheuristic_checks:\n  patterns:\n    - {name: p, file: '*.py', pattern: '(oops'}\n",
    }
    for name, yaml_text in broken.items():
        make_scenario(suites, name=name, yaml_text=yaml_text)
    no_fixture = suites / "demo" / "scenarios" / "no-fixture"
    make_scenario(suites, name="no-fixture", yaml_text="id: x\n")
    shutil.rmtree(no_fixture / "repo-fixture")
    notadb = root / "notes.txt"
    notadb.write_text("these are notes, not a database\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"
    web = serve(AnythingGoes)
    env = {
        "ZE_BENCHMARKS_SUITES_DIR": str(suites), "ZE_BENCHMARKS_DB": str(root / "bench.db"),
        "ZE_BENCHMARKS_SPOOL_DIR": str(root / "spool"), "ZE_BENCHMARKS_WORKSPACES_DIR": str(root / "ws"),
        "ZE_BENCHMARKS_TOOLS_DIR": str(root / "no-tools-here"), "ZE_BENCHMARKS_HTTP_RETRIES": "0",
        "ZE_BENCHMARKS_LOG_DIR": str(root / "logs"),
    }
    mp = pytest.MonkeyPatch()
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "ZE_BENCHMARKS_WORKER_URL",
                 "ZE_BENCHMARKS_API_KEY"):
        mp.delenv(name, raising=False)
    for name, value in env.items():
        mp.setenv(name, value)
    mp.chdir(root)
    stored = CliRunner().invoke(bench_main, ["demo", "add-one", "--agent", "echo", "--batch-id", "sweep-batch"],
                                catch_exceptions=False)
    assert stored.exit_code == 0, stored.output
    stored = CliRunner().invoke(bench_main, ["demo", "add-one", "--agent", "echo", "--specialist", "python-bugfixer",
                                             "--batch-id", "sweep-batch"], catch_exceptions=False)
    assert stored.exit_code == 0, stored.output
    yield {"$DOWN": down, "$WEB": f"http://127.0.0.1:{web.server_address[1]}", "$NOTADB": str(notadb),
           "$BATCH": "sweep-batch", "root": root}
    web.shutdown()
    web.server_close()
    mp.undo()


def _run(argv: list[str], capsys) -> tuple[int, str]:
    program, args = argv[0], argv[1:]
    if program in ("bench", "mint"):
        result = CliRunner().invoke(bench_main if program == "bench" else mint_main, args, catch_exceptions=False)
        return result.exit_code, result.output
    assert program == "worker"
    try:
        code = worker_main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_table_covers_every_command():
    programs = {shlex.split(command)[0] for _, command, _, _ in ROWS}
    assert programs == {"bench", "mint", "worker"} and len(ROWS) >= 30


@pytest.mark.parametrize(("what", "command", "status", "excerpt"), ROWS,
                         ids=[re.sub(r"\W+", "-", f"{c[:40]}") for _, c, _, _ in ROWS])
def test_bad_input_gets_one_line_and_its_exit_status(lab, capsys, what, command, status, excerpt):
    argv = [lab.get(token, token) for token in shlex.split(command)]
    code, output = _run(argv, capsys)
    assert "Traceback" not in output and "internal error" not in output, output
    assert code == status, f"{what}: exit {code}\n{output}"
    assert excerpt in output, f"{what}: {excerpt!r} not in\n{output}"


def test_a_bug_is_one_line_naming_a_log_that_holds_the_traceback(tmp_path, monkeypatch):
    from harness.cli import results_cmd

    def broken(*args, **kwargs):
        raise RuntimeError("something nobody anticipated")

    monkeypatch.setenv("ZE_BENCHMARKS_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.setattr(results_cmd, "open_store", broken)
    result = CliRunner().invoke(bench_main, ["batches"], catch_exceptions=False)
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert line.startswith("internal error: RuntimeError: something nobody anticipated; the traceback is in ")
    assert "Traceback" not in result.output
    log = Path(line.rsplit(" ", 1)[-1])
    assert log.parent == tmp_path / "logs" and "Traceback" in log.read_text() and "broken" in log.read_text()


def test_ctrl_c_outside_a_batch_exits_130_without_a_traceback(tmp_path, monkeypatch):
    from harness.cli import results_cmd

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(results_cmd, "open_store", interrupted)
    result = CliRunner().invoke(bench_main, ["history"], catch_exceptions=False)
    assert result.exit_code == 130 and "interrupted" in result.stderr and "Traceback" not in result.output
