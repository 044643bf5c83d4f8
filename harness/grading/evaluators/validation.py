"""The ``validation`` evaluator: the scenario's validation commands, one result per command.

Commands run in the order install → build → lint → typecheck → test (``test`` included), in
the grading sandbox, each with a timeout that kills everything it started, output captured
and capped. A command scores 1 when it exits 0, else 0; the ``test`` command must also leave
a test report (:mod:`harness.grading.evaluators.test_reports`) with at least one passing test and no
failure when its runner is one the harness can ask for a report (pytest, node).

A command whose program is not installed (exit 127, or ``python3 -m X`` without ``X``) is a
fault of the machine, not of the agent: its result carries ``missing_tool`` and the runner
stores the run as ``error``/``infra``. :func:`missing_tools` finds such tools before any run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.grading.evaluators.base import EvaluationContext, EvaluatorResult
from harness.grading.evaluators.test_reports import CaseResult, ReportError, TestCounts, counts_of, detect_runner, read_cases
from harness.sandbox import CommandResult, Sandbox
from harness.scenarios.model import VALIDATION_ORDER, Scenario

DEFAULT_COMMAND_TIMEOUT_S = 600.0
DETAIL_TAIL = 4000  # characters of output kept in an evaluation's details

_NOT_FOUND = re.compile(r"(?:^|: )([\w.+-]+): (?:command )?not found", re.MULTILINE)
_NO_MODULE = re.compile(r"No module named '?([\w.]+)'?\s*$", re.MULTILINE)
_SHELL_WORDS = frozenset({"cd", "export", "set", "unset", "true", "false", "echo", "printf", "test", "[", "exit",
                          "exec", "env", "time", "command", "if", "then", "else", "fi", "for", "do", "done",
                          "while", "case", "esac", "!", "{", "}", "(", ")", ":", "source", ".", "sh", "bash"})


def command_timeout(scenario: Scenario) -> float:
    validation = scenario.raw.get("validation") or {}
    return float(validation.get("timeout_seconds", DEFAULT_COMMAND_TIMEOUT_S))


def describe_command(result: CommandResult) -> str:
    """One paragraph about a command's outcome, with the tail of its output."""
    if result.timed_out:
        head = f"$ {result.command}\ntimed out after {result.duration_ms / 1000:.1f}s (everything it started was killed)"
    else:
        head = f"$ {result.command}\n{result.outcome()} in {result.duration_ms / 1000:.1f}s"
    output = result.combined_output().strip()
    if len(output) > DETAIL_TAIL:
        output = "..." + output[-DETAIL_TAIL:]
    return f"{head}\n{output}" if output else head


@dataclass
class GradedCommand:
    """A grading command's result, with the test report's counts when it is a test command."""

    result: CommandResult
    runner: str | None = None
    counts: TestCounts | None = None
    cases: list[CaseResult] | None = None  # the report's test cases (ids and outcomes)
    report_problem: str | None = None
    missing_tool: str | None = None
    notes: list[str] = field(default_factory=list)


def _missing_tool(command: str, result: CommandResult) -> str | None:
    """The program or module the scenario's command runs that the machine lacks, if that is
    why it failed. Only what the command names itself counts: a program missing further down
    (a script the agent deleted, a package its change broke) is the agent's failure."""
    if result.timed_out or result.exit_code not in (1, 127):
        return None
    programs, modules = required_tools([command])
    output = result.combined_output()
    if result.exit_code == 1:
        missing = {m.group(1) for m in _NO_MODULE.finditer(output)}
        found = next((m for m in modules if m in missing), None)
        return f"python module {found}" if found else None
    missing = {m.group(1) for m in _NOT_FOUND.finditer(output)}
    found = next((p for p in programs if p in missing), None)
    return f"program {found}" if found else None


def run_graded(ctx: EvaluationContext, command: str, label: str, *, test: bool, timeout_s: float,
               before: Callable[[], None] | None = None) -> GradedCommand:
    """Run one grading command in the grading sandbox; for a test command, read its report.
    ``before`` runs once the copy is ready for the command (protected files restored)."""
    grading = ctx.grading
    paths = []
    if grading is None:
        env: dict[str, str] = {}
    elif test:
        env, paths = grading.prepare_test(ctx.sandbox, label, detect_runner(command))
    else:
        env = grading.command_env(ctx.sandbox)
    if before is not None:
        before()
    result = ctx.sandbox.run(command, timeout_s=timeout_s, env=env)
    if grading is not None:
        grading.sanitize()  # the command ran the agent's code: links out and FIFOs it left go
    graded = GradedCommand(result, missing_tool=_missing_tool(command, result))
    if test:
        graded.runner = detect_runner(command)
        if paths:
            # The report is written by the test process, which runs the agent's code: a report
            # that cannot be read is that run's failure, never the harness's.
            try:
                graded.cases = read_cases(paths)
                graded.counts = None if graded.cases is None else counts_of(graded.cases)
            except (ReportError, OSError) as exc:
                graded.report_problem = f"the test report is unreadable: {exc}"
        if graded.runner and graded.counts is None and graded.report_problem is None:
            graded.report_problem = (f"no {graded.runner} test report was written: "
                                     "the test runner did not run the tests")
    return graded


def test_gate(graded: GradedCommand) -> tuple[bool, str]:
    """(passed, why) for a ``test`` command: exit 0 and, where a report was asked for, a clean one."""
    if not graded.result.ok:
        return False, graded.result.outcome()
    if graded.runner is None:
        return True, "exit 0 (no test report for this runner: judged by exit status)"
    if graded.counts is None:
        return False, graded.report_problem or "no test report"
    if not graded.counts.clean:
        return False, f"exit 0 but the report says {graded.counts.summary()}"
    return True, f"report: {graded.counts.summary()}"


def evaluate_validation(ctx: EvaluationContext) -> list[EvaluatorResult]:
    """Run the validation commands in order and score each one."""
    results = []
    timeout = command_timeout(ctx.scenario)
    for name in VALIDATION_ORDER:
        command = ctx.scenario.validation_commands.get(name)
        if not command:
            continue
        graded = run_graded(ctx, command, name, test=name == "test", timeout_s=timeout)
        result = graded.result
        ctx.command_results[name] = result
        passed, why = result.ok, result.outcome()
        if name == "test":
            ctx.test_counts[name] = graded.counts
            passed, why = test_gate(graded)
        data = {
            "group": "validation",
            "gating": ctx.scenario.validation_required,
            "command": result.command,
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "killed_by": result.killed_by,
            "duration_ms": round(result.duration_ms, 1),
        }
        if graded.counts is not None:
            data["tests"] = vars(graded.counts) | {"total": graded.counts.total}
        if graded.missing_tool:
            data["missing_tool"] = graded.missing_tool
        details = describe_command(result)
        if name == "test":
            details = f"{'passed' if passed else 'failed'}: {why}\n{details}"
        results.append(EvaluatorResult(name=name, score=1.0 if passed else 0.0, details=details, data=data))
    return results


# --------------------------------------------------------------------------- preflight

def _without_heredocs(command: str) -> str:
    """``command`` without the bodies of its here-documents (they are data, not commands)."""
    lines, out, i = command.split("\n"), [], 0
    while i < len(lines):
        out.append(lines[i])
        marker = re.search(r"<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?", lines[i])
        i += 1
        if marker:
            while i < len(lines) and lines[i].strip() != marker.group(1):
                i += 1
            i += 1
    return "\n".join(out)


def _first_words(command: str) -> list[str]:
    """The program of each simple command in a shell command line (best effort, quote-aware)."""
    lexer = shlex.shlex(_without_heredocs(command).replace("\n", ";"), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    words: list[str] = []
    expect_program = True
    for token in tokens:
        if token and set(token) <= set(";&|()<>"):
            expect_program = token not in ("<", ">", ">>", "<<", ">&", "<&")
            continue
        if not expect_program:
            continue
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", token):
            continue  # an assignment before the program
        words.append(token)
        expect_program = False
    return words


def required_tools(commands: list[str]) -> tuple[list[str], list[str]]:
    """(programs, python modules) the commands need: programs named without a path, and
    modules run with ``python3 -m``."""
    programs: list[str] = []
    modules: list[str] = []
    for command in commands:
        for word in _first_words(command):
            if "/" in word or word in _SHELL_WORDS or "$" in word:
                continue
            if word not in programs:
                programs.append(word)
        for match in re.finditer(r"\bpython3?(?:\.\d+)?\s+-m\s+([\w.]+)", command):
            if match.group(1) not in modules:
                modules.append(match.group(1))
    return programs, modules


def scenario_commands(scenario: Scenario) -> list[str]:
    """Every command grading runs for ``scenario`` (validation, hidden tests, heuristic commands)."""
    commands = list(scenario.validation_commands.values())
    hidden = (scenario.raw.get("hidden_tests") or {}).get("command")
    if hidden:
        commands.append(str(hidden))
    commands += [str(c["command"]) for c in (scenario.heuristic_checks.get("commands") or []) if c.get("command")]
    return commands


def missing_tools(sandbox: Sandbox, commands: list[str]) -> list[str]:
    """The programs and python modules ``commands`` need that the sandbox does not have."""
    programs, modules = required_tools(commands)
    if not programs and not modules:
        return []
    checks = [f"command -v {shlex.quote(p)} >/dev/null 2>&1 || echo {shlex.quote('program ' + p)}" for p in programs]
    if modules:
        probe = ("import importlib.util, sys\n"
                 "for m in sys.argv[1:]:\n"
                 "    if importlib.util.find_spec(m.split('.')[0]) is None: print('python module ' + m)\n")
        checks.append(shlex.join(["python3", "-c", probe, *modules]) + " || echo 'program python3'")
    result = sandbox.run("; ".join(checks), timeout_s=60)
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]
