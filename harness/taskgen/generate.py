"""``bench tasks generate``: verified bug-fix tasks made from a real Python project by mutation.

1. The source: a project directory, or a package's sdist (:mod:`harness.taskgen.source`).
2. The baseline: the project's pytest test files run once, in the sandbox, on the pristine
   source; a file with a failing test or one that does not load is dropped (the rest must then
   pass together).
3. Candidates: every mutant of the project's modules (:mod:`harness.taskgen.mutants`), in an
   order fixed by the seed. Each is applied to a working copy and the kept tests run:
   a mutant is kept only when some tests fail in their body with at least one assertion
   failure, nothing fails to load (an import or collection error alone proves nothing), and
   at most ``max_failing`` tests fail.
4. The task: the scenario is written aside (:mod:`harness.taskgen.writer`) and proved by
   ``bench check``'s own checks (:func:`harness.scaffold.check_scenario`): it loads, the oracle
   passes, ``repeats`` oracle runs agree, echo fails, the hidden tests fail on the fixture.
   Only then is it moved into the suite. A stop (Ctrl-C) keeps every task verified so far.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.taskgen.mutants import KINDS, Mutant, all_mutants, in_order
from harness.taskgen.source import Source, SourceError, resolve_source
from harness.taskgen.testrun import Runner, TestRun, find_modules, find_tests, python_path
from harness.taskgen.writer import TaskFiles, copy_project, model_text, write_task

SUMMARY_FILE = "taskgen.json"
STAGING = ".taskgen-staging"
#: Generated parts of an output directory: what --force replaces.
GENERATED = ("scenarios", "prompts", SUMMARY_FILE, STAGING)


class TaskgenError(ValueError):
    """Bad input or a project the generator cannot use; the message is one line."""


@dataclass
class GenerateOptions:
    source: str
    out: Path
    count: int = 20
    seed: int = 0
    force: bool = False
    max_failing: int = 5  # a mutant failing more tests than this is too broad to be one task
    max_candidates: int | None = None  # stop after trying this many mutants
    kinds: tuple[str, ...] = KINDS
    sandbox: str | None = None  # a resolved kind (bwrap | none | ...); None: resolved as `bench` does
    repeats: int = 3  # oracle runs that must agree
    parallel: int = 4  # runs of one check at once
    model: str | None = None  # PROVIDER:MODEL writes the L1 prompt; None: the template
    base_url: str | None = None
    test_timeout_s: float = 300.0
    workspaces_root: Path | None = None
    control: Any = None  # harness.control.BatchControl


@dataclass
class Kept:
    name: str
    mutant: Mutant
    failing: int
    seconds: float  # screening and verification of this task


@dataclass
class Outcome:
    """What one generation did."""

    out: Path
    source: Source | None = None
    kept: list[Kept] = field(default_factory=list)
    tried: int = 0
    candidates: int = 0  # mutants available
    rejected: Counter = field(default_factory=Counter)  # reason -> count
    seconds: float = 0.0
    stopped: bool = False
    baseline: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds_per_kept(self) -> float | None:
        return self.seconds / len(self.kept) if self.kept else None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source.provenance() if self.source else None,
            "kept": [{"name": k.name, **k.mutant.to_json(), "failingTests": k.failing, "seconds": round(k.seconds, 2)}
                     for k in self.kept],
            "tried": self.tried, "candidates": self.candidates, "rejected": dict(sorted(self.rejected.items())),
            "seconds": round(self.seconds, 2),
            "secondsPerKept": None if self.seconds_per_kept is None else round(self.seconds_per_kept, 2),
            "stopped": self.stopped, "baseline": self.baseline,
        }


Progress = Callable[[str], None]


def suite_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:40] or "task"


def _check_out(options: GenerateOptions) -> str:
    """The suite name (the directory's name); refuses a directory that is not empty without --force."""
    from harness.scaffold import name_problem

    out = options.out
    name = out.resolve().name  # what `bench DIR` takes for the suite's name
    problem = name_problem("suite", name)
    if problem:
        raise TaskgenError(f"-o {out}: the directory's name is the suite's name: {problem}")
    if out.exists() and not out.is_dir():
        raise TaskgenError(f"-o {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not options.force:
            raise TaskgenError(f"-o {out}: the directory exists and is not empty; give --force to replace the "
                               "tasks generated there before")
        for part in GENERATED:
            path = out / part
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    return name


def _classify(run: TestRun, max_failing: int) -> str | None:
    """Why a mutant's test run is not a task, or None when it is."""
    if run.timed_out:
        return "tests timed out"
    if run.collection_errors:
        return "import or collection error"
    if not run.failures:
        return "not caught by the tests"
    if any(f.phase != "failure" for f in run.failures):
        return "setup or teardown error"
    if not any(f.kind == "AssertionError" for f in run.failures):
        return "no assertion failure"
    if len(run.failures) > max_failing:
        return f"more than {max_failing} tests fail"
    return None


def screen(runner: Runner, mutant: Mutant, tests: list[str], pythonpath: str | None,
           max_failing: int) -> tuple[TestRun, str | None]:
    """Run ``tests`` on the runner's working copy with ``mutant`` applied (the file is restored
    after): the run, and why the mutant is not a task (None when it is one)."""
    target = runner.workdir / mutant.path
    original = target.read_text("utf-8")
    try:
        target.write_text(mutant.apply(original), "utf-8")
        run = runner.run(tests, pythonpath)
    finally:
        target.write_text(original, "utf-8")
    return run, _classify(run, max_failing)


def _baseline(runner: Runner, tests: list[str], pythonpath: str | None, progress: Progress) -> tuple[list[str], list[str], TestRun]:
    first = runner.run(tests, pythonpath)
    if first.timed_out:
        raise TaskgenError(f"the baseline test run timed out after {runner.timeout_s:g} s")
    if not first.report_read:
        tail = " | ".join(first.output.strip().splitlines()[-3:])
        raise TaskgenError(f"the baseline test run gave no report (pytest exit {first.exit_code}): {tail}")
    bad = sorted(set(first.failed_files) | {c for c in first.collection_errors if c.endswith(".py")})
    if bad:
        progress(f"baseline: {len(bad)} test file(s) fail on the pristine source and are dropped: {', '.join(bad[:5])}"
                 + (" ..." if len(bad) > 5 else ""))
    kept = [t for t in tests if t not in bad]
    if not kept:
        raise TaskgenError("the baseline fails: every test file has a failing test on the pristine source")
    second = runner.run(kept, pythonpath) if bad or first.exit_code != 0 else first
    if second.exit_code != 0 or second.failures or second.collection_errors:
        why = (second.failures[0].test if second.failures else
               second.collection_errors[0] if second.collection_errors else f"pytest exit {second.exit_code}")
        raise TaskgenError(f"the baseline fails: the kept test files do not pass together on the pristine source ({why})")
    return kept, bad, second


def generate(options: GenerateOptions, progress: Progress | None = None) -> Outcome:
    """Generate up to ``options.count`` verified tasks into ``options.out``; see the module docstring.
    Raises :class:`TaskgenError` for bad input (nothing is written then)."""
    from harness.sandbox import resolve_mode
    from harness.scaffold import CheckOptions, Target, check_scenario

    say = progress or (lambda text: None)
    if options.count < 1:
        raise TaskgenError("--count must be at least 1")
    unknown = [k for k in options.kinds if k not in KINDS]
    if unknown or not options.kinds:
        raise TaskgenError(f"--kinds: unknown kind(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(KINDS)}")
    if options.model is not None:
        from harness.models.providers.registry import parse_target

        try:
            parse_target(options.model, base_url=options.base_url)
        except ValueError as exc:
            raise TaskgenError(f"--model: {exc}") from None
    sandbox = options.sandbox or resolve_mode("auto").kind
    source_path = Path(options.source).expanduser()
    if source_path.is_dir() and options.out.resolve().is_relative_to(source_path.resolve()):
        raise TaskgenError(f"-o {options.out}: inside SOURCE {options.source}; write the tasks elsewhere")
    suite = _check_out(options)
    started = time.monotonic()
    outcome = Outcome(out=options.out)
    scratch = Path(tempfile.mkdtemp(prefix="bench-taskgen-"))
    control = options.control
    try:
        say(f"source: {options.source}")
        try:
            source = resolve_source(options.source, scratch, sandbox)
        except SourceError as exc:
            raise TaskgenError(str(exc)) from None
        outcome.source = source
        say(f"source: {source.name} {source.version or '(no version)'} at {source.root}"
            + (f" (sdist {source.archive}, sha256 {source.sha256[:12]}...)" if source.sha256 else ""))
        tests = find_tests(source.root)
        if not tests:
            raise TaskgenError(f"SOURCE {options.source}: no pytest tests found (test_*.py or *_test.py) in {source.root}")
        modules = find_modules(source.root)
        if not modules:
            raise TaskgenError(f"SOURCE {options.source}: no Python module to mutate besides the tests in {source.root}")
        pythonpath = python_path(source.root)
        work = scratch / "work"
        copy_project(source.root, work)
        runner = Runner(work, sandbox, timeout_s=options.test_timeout_s, control=control)
        say(f"baseline: running {len(tests)} test file(s) on the pristine source (sandbox {sandbox})")
        kept_tests, dropped, base = _baseline(runner, tests, pythonpath, say)
        outcome.baseline = {"testFiles": len(tests), "keptTestFiles": len(kept_tests), "droppedTestFiles": dropped,
                            "passed": base.passed, "seconds": round(base.seconds, 2)}
        say(f"baseline: {base.passed} test(s) pass in {len(kept_tests)} file(s) ({base.seconds:.1f} s)")

        candidates = in_order(all_mutants(source.root, modules, options.kinds), options.seed)
        outcome.candidates = len(candidates)
        say(f"candidates: {len(candidates)} mutant(s) of {len(modules)} module(s), seed {options.seed}")
        options.out.mkdir(parents=True, exist_ok=True)
        staging_root = options.out / STAGING
        slug = suite_slug(source.name)
        provenance = {**source.provenance(), "generator": {"seed": options.seed, "maxFailing": options.max_failing,
                                                            "repeats": options.repeats, "sandbox": sandbox}}
        writer = None
        if options.model is not None:
            model, base_url = options.model, options.base_url
            writer = lambda text: model_text(model, text, base_url)  # noqa: E731
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for mutant in candidates:
            if len(outcome.kept) >= options.count or (control is not None and control.stopping):
                break
            if options.max_candidates is not None and outcome.tried >= options.max_candidates:
                break
            outcome.tried += 1
            began = time.monotonic()
            run, reason = screen(runner, mutant, kept_tests, pythonpath, options.max_failing)
            label = f"#{outcome.tried} {mutant.path}:{mutant.line} {mutant.function} {mutant.kind} {mutant.description}"
            failing_key = (mutant.path + ":" + mutant.function, tuple(sorted(f"{f.file}::{f.test}" for f in run.failures)))
            if reason is None and failing_key in seen:
                reason = "same function and failing tests as a kept task"
            if reason is not None:
                outcome.rejected[reason] += 1
                say(f"{label}: rejected ({reason})")
                continue
            name = f"{slug}-{len(outcome.kept) + 1:03d}"
            hidden = sorted({f.file for f in run.failures})
            failures = sorted(run.failures, key=lambda f: (f.file, f.test))
            task = TaskFiles(suite=suite, name=name, project_root=source.root, project_name=source.name,
                             mutant=mutant, failures=failures, hidden=hidden,
                             visible=[t for t in kept_tests if t not in hidden], pythonpath=pythonpath,
                             dropped=dropped, skipped=base.skipped, provenance=provenance, text_writer=writer)
            shutil.rmtree(staging_root, ignore_errors=True)
            try:
                write_task(staging_root / suite, task)
            except ValueError as exc:  # the model could not write the text
                raise TaskgenError(str(exc)) from None
            say(f"{label}: {len(failures)} test(s) fail; verifying as {name}")
            check = CheckOptions(sandbox=sandbox, workspaces_root=options.workspaces_root, tier="L1",
                                 parallel=options.parallel, control=control, oracle_runs=options.repeats)
            verdicts = check_scenario(Target(staging_root, suite, name), check)
            failed = [v for v in verdicts if v.failed]
            if control is not None and control.stopping:
                outcome.stopped = True
                say(f"{label}: interrupted before it was verified; not kept")
                break
            if failed or len(verdicts) < 5:
                why = f"{failed[0].check}: {failed[0].detail}" if failed else "the checks did not complete"
                outcome.rejected["verification failed"] += 1
                say(f"{label}: rejected (verification failed: {why[:200]})")
                continue
            for part in ("scenarios", "prompts"):
                final = options.out / part / name
                final.parent.mkdir(parents=True, exist_ok=True)
                (staging_root / suite / part / name).rename(final)
            seen.add(failing_key)
            outcome.kept.append(Kept(name, mutant, len(failures), time.monotonic() - began))
            say(f"kept {len(outcome.kept)}/{options.count}: {name} ({time.monotonic() - began:.1f} s)")
        if control is not None and control.stopping:
            outcome.stopped = True
        shutil.rmtree(staging_root, ignore_errors=True)
    finally:
        outcome.seconds = time.monotonic() - started
        shutil.rmtree(scratch, ignore_errors=True)
        if options.out.is_dir():
            shutil.rmtree(options.out / STAGING, ignore_errors=True)
            if outcome.source is not None:
                (options.out / SUMMARY_FILE).write_text(json.dumps(outcome.to_json(), indent=2) + "\n", "utf-8")
    return outcome


__all__ = ["GenerateOptions", "Kept", "Outcome", "TaskgenError", "generate"]
