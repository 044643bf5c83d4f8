"""Run a dataset against several models at once (``bench dataset``), with results that survive.

A run is a list of cells: (test case, target, repeat), each a :class:`harness.plan.Cell` with
suite = dataset name, scenario = case id, tier ``dataset``, agent = the target's provider
prefix, model = its model and iteration = the repeat index, so ``--shard I/N`` keeps the same
slice of a dataset run as of a scenario matrix. The cells go through the async request engine
(:mod:`harness.engine`); each answer is graded by the case's assertions
(:mod:`harness.datasets.assertions`) and appended at once, as one JSON line, to
``results.jsonl`` in the output directory (flushed after every line, so a killed process loses
at most the requests in flight). ``run.json`` beside it records what was asked, so
``--resume DIR`` runs exactly the cells with no line yet, and ``--retry-errors`` redoes those
whose last line is an error.

At the end ``results.json``, ``results.csv``, ``summary.json`` (and JUnit XML when asked) are
written from the last line of every cell, and every cell is stored in the results store as a run
of one batch (the run's batch id), so ``bench batch``, ``bench compare``, leaderboards and the
dashboard read it like any other batch.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as _dt
import fnmatch
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.datasets import report
from harness.datasets.assertions import Answer, grade, make_judge, needs_judge
# sample_cases and apply_settings live with the format (a plan uses them without the runner).
from harness.datasets.format import Dataset, TestCase, apply_settings, load_dataset, sample_cases
from harness.engine import Engine, EngineOptions, Job, Outcome
from harness.plan import Cell, hash_parts
from harness.providers import ChatRequest, Message
from harness.providers.registry import Target, missing_credentials, parse_target
from harness.results.records import EvaluationRecord, RunRecord, Telemetry, new_batch_id, new_run_id

TIER = "dataset"
RESULTS_FILE = "results.jsonl"
META_FILE = "run.json"
DEFAULT_MAX_TOKENS = 1024
RESPONSE_CAP = 20_000  # characters of an answer kept in results.jsonl and the store


class DatasetRunError(ValueError):
    """Options that cannot make a run (bad input, found before any request is sent)."""


@dataclass
class DatasetRunOptions:
    """What to run and how. ``dataset`` is a file or a built-in name."""

    dataset: str | None = None
    targets: list[Target] = field(default_factory=list)
    output_dir: Path | None = None
    concurrency: int = 8
    provider_limits: dict[str, int] = field(default_factory=dict)
    repeat: int | None = None  # repeats of every case (default: each case's own `repeat`)
    limit: int | None = None  # the first N cases (after --filter)
    filters: list[str] = field(default_factory=list)  # case ids or categories, globs allowed
    stream: bool = False
    timeout_s: float = 60.0
    max_attempts: int = 4
    shard: tuple[int, int] | None = None
    cache: str = "off"  # off | replay
    judge: Any = None  # harness.evaluators.llm_judge.JudgeChoice
    save_responses: bool = True
    resume: bool = False  # output_dir holds an earlier run to complete
    retry_errors: bool = False
    batch_id: str | None = None
    # A fleet profile's num_examples, random_seed, settings and request_delay_ms:
    sample: int | None = None  # N cases drawn (after --filter and --limit): seeded, or the first N
    seed: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, top_p, stop: win over the dataset's
    pace_s: float = 0.0  # at least this long between two request starts
    metadata: dict[str, Any] = field(default_factory=dict)  # added to every stored run's metadata
    loaded: Dataset | None = None  # the dataset of ``dataset``, already loaded (a fleet loads each file once)


@dataclass
class PlannedCell:
    case: TestCase
    target: Target
    repeat: int

    @property
    def cell(self) -> Cell:
        return Cell(self.dataset_name, self.case.id, TIER, self.target.prefix, self.target.model, None, self.repeat)

    dataset_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.case.id}\x1f{self.target.spec}\x1f{self.repeat}"


@dataclass
class DatasetRun:
    """A prepared run: the dataset, the cells still to do, and where results go."""

    options: DatasetRunOptions
    dataset: Dataset
    targets: list[Target]
    cells: list[PlannedCell]  # to send now
    planned: int  # cells of the whole run (after filter, limit and shard)
    output_dir: Path
    batch_id: str
    meta: dict[str, Any]
    previous: dict[str, dict[str, Any]]  # key -> last line already in results.jsonl
    notes: list[str] = field(default_factory=list)
    judge_note: str | None = None

    def __repr__(self) -> str:  # short: asyncio may repr what a run's task returns
        return f"DatasetRun({self.dataset!r}, {len(self.cells)} cells to send, output_dir={str(self.output_dir)!r})"


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


# --------------------------------------------------------------------------- results.jsonl


def read_results(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The cells of a results.jsonl and the number of bytes that hold whole lines (a line cut
    short by a crash is not counted, so appending can start after the last whole one)."""
    cells: list[dict[str, Any]] = []
    if not path.exists():
        return cells, 0
    data = path.read_bytes()
    whole = data.rfind(b"\n") + 1
    try:
        # Every whole line parsed in one call: the parser then shares the key strings of all
        # cells (a 10,000-cell file takes a third less memory) and is quicker.
        lines = [line for line in data[:whole].split(b"\n") if line.strip()]
        parsed = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
        if all(isinstance(cell, dict) for cell in parsed):
            return parsed, whole
    except ValueError:
        pass  # a torn line: found line by line below
    good = 0
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            break
        line = data[start:end]
        if line.strip():
            try:
                cells.append(json.loads(line))
            except ValueError:
                break  # a torn line: everything from here on is rewritten
        start = good = end + 1
    return cells, good


def latest_by_key(cells: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last line of every cell (a retried cell has several)."""
    out: dict[str, dict[str, Any]] = {}
    for cell in cells:
        out[cell_key(cell)] = cell
    return out


def cell_key(cell: dict[str, Any]) -> str:
    return f"{cell['test_id']}\x1f{cell['target']}\x1f{cell['repeat']}"


class ResultsLog:
    """Appends one JSON line per finished cell and flushes it at once (or, with
    ``flush=False``, at the next :meth:`flush`: lines recorded together, flushed once)."""

    def __init__(self, path: Path, keep_bytes: int | None) -> None:
        self.path = path
        if keep_bytes is not None and path.exists() and path.stat().st_size != keep_bytes:
            with open(path, "r+b") as f:  # drop a line cut short by a crash
                f.truncate(keep_bytes)
        self._file = open(path, "a", encoding="utf-8")
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def append(self, cell: dict[str, Any], flush: bool = True) -> None:
        self._file.write(self._dumps(cell) + "\n")
        if flush:
            self._file.flush()

    def flush(self) -> None:
        self._file.flush()

    def close(self, sync: bool = True) -> None:
        """Close the file; ``sync`` false leaves the fsync to a later :func:`sync_file`."""
        if not self._file.closed:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())
            self._file.close()


def sync_file(path: Path) -> None:
    """fsync ``path`` if it exists."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- preparing


def _matches(case: TestCase, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(case.id, p) or fnmatch.fnmatchcase(case.category, p) for p in patterns)


def select_cases(dataset: Dataset, filters: list[str], limit: int | None) -> list[TestCase]:
    cases = [c for c in dataset.cases if not filters or _matches(c, filters)]
    if filters and not cases:
        known = sorted({c.category for c in dataset.cases})
        raise DatasetRunError(f"--filter {','.join(filters)}: no case of {dataset.name} has that id or category "
                              f"(categories: {', '.join(known)})")
    return cases[:limit] if limit is not None else cases


def build_request(case: TestCase, target: Target, timeout_s: float) -> ChatRequest:
    """The chat request of ``case`` for ``target`` (the case's ``config.model`` wins over the
    target's model only when the target names no model of its own... it always does, so the
    case's model applies to nothing but the original format's single-provider runs)."""
    return ChatRequest(
        messages=[Message(role="user", content=case.prompt)],
        model=target.model,
        system=case.system,
        max_tokens=case.max_tokens or DEFAULT_MAX_TOKENS,
        temperature=case.temperature,
        top_p=case.top_p,
        stop=case.stop,
        timeout_s=timeout_s,
        prompt_cache=False,
    )


def config_parts(dataset: Dataset, case: TestCase, target: Target, options: DatasetRunOptions,
                 judge_identity: str) -> dict[str, str]:
    """What decides a cell's answer and grade; its hash is the run's ``config_hash``."""
    generation = {"system": case.system, "max_tokens": case.max_tokens or DEFAULT_MAX_TOKENS,
                  "temperature": case.temperature, "top_p": case.top_p, "stop": case.stop}
    return {
        "dataset": f"{dataset.name}@{dataset.version}#{dataset.digest}",
        "case": case.id,
        "prompt": case.prompt,
        "asserts": json.dumps([a.to_dict() for a in case.asserts], sort_keys=True),
        "target": target.spec,
        "baseUrl": target.base_url or "",
        "generation": json.dumps(generation, sort_keys=True),
        "judge": judge_identity,
        "stream": "yes" if options.stream else "no",
        "cache": options.cache,
    }


def _meta_of(options: DatasetRunOptions, dataset: Dataset, targets: list[Target], batch_id: str) -> dict[str, Any]:
    # A file is recorded by its absolute path, so --resume works from any working directory.
    ref = options.dataset if dataset.source.startswith("builtin:") else os.path.abspath(str(options.dataset))
    return {
        "format": 1,
        "batchId": batch_id,
        "dataset": {"ref": ref, "name": dataset.name, "version": dataset.version,
                    "digest": dataset.digest, "source": dataset.source},
        "targets": [{"spec": t.spec, "baseUrl": t.base_url} for t in targets],
        "repeat": options.repeat,
        "limit": options.limit,
        "filters": options.filters,
        "shard": f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        "stream": options.stream,
        "timeoutS": options.timeout_s,
        "cache": options.cache,
        "createdAt": _now_iso(),
    }


def _restore_options(options: DatasetRunOptions, meta: dict[str, Any], directory: Path) -> None:
    """Fill what ``--resume DIR`` did not repeat from the run's ``run.json``; refuse a change."""
    asked = meta.get("dataset", {}).get("ref")
    if options.dataset is None:
        options.dataset = asked
    targets = [parse_target(t["spec"], base_url=t.get("baseUrl") if t["spec"].startswith("openai-compatible:") else None)
               for t in meta.get("targets", [])]
    targets = [Target(t.prefix, t.model, saved.get("baseUrl")) for t, saved in zip(targets, meta.get("targets", []))]
    if not options.targets:
        options.targets = targets
    elif [t.spec for t in options.targets] != [t.spec for t in targets]:
        raise DatasetRunError(f"--resume {directory}: that run asked for --providers "
                              f"{','.join(t.spec for t in targets)}; leave --providers out to resume it")
    for name, key in (("repeat", "repeat"), ("limit", "limit"), ("filters", "filters")):
        if getattr(options, name) in (None, []):
            setattr(options, name, meta.get(key) if meta.get(key) is not None else getattr(options, name))
    if options.shard is None and meta.get("shard"):
        left, _, right = str(meta["shard"]).partition("/")
        options.shard = (int(left), int(right))
    options.stream = options.stream or bool(meta.get("stream"))
    options.batch_id = options.batch_id or meta.get("batchId")


def prepare(options: DatasetRunOptions, *, require_keys: bool = True) -> DatasetRun:
    """Check everything and plan the cells; nothing is sent. DatasetRunError / DatasetError
    (every problem of the dataset) / MissingCredentialsError-like DatasetRunError on bad input."""
    if options.concurrency < 1:
        raise DatasetRunError("--concurrency must be at least 1")
    if options.repeat is not None and options.repeat < 1:
        raise DatasetRunError("--repeat must be at least 1")
    if options.limit is not None and options.limit < 1:
        raise DatasetRunError("--limit must be at least 1")
    if options.timeout_s <= 0:
        raise DatasetRunError("--timeout must be positive")
    for prefix, value in options.provider_limits.items():
        if value < 1:
            raise DatasetRunError(f"--provider-limit {prefix}={value}: must be at least 1")
    meta: dict[str, Any] | None = None
    directory = Path(options.output_dir) if options.output_dir else None
    if options.resume:
        if directory is None or not (directory / META_FILE).is_file():
            raise DatasetRunError(f"--resume {directory}: no {META_FILE} there (not the output directory of a "
                                  "bench dataset run)")
        try:
            meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DatasetRunError(f"{directory / META_FILE}: not JSON ({exc})") from None
        _restore_options(options, meta, directory)
    if not options.dataset:
        raise DatasetRunError("no dataset given (a file, or a built-in name: see bench datasets)")
    if not options.targets:
        raise DatasetRunError("no provider given: --providers PROVIDER:MODEL[,...]")
    dataset = options.loaded if options.loaded is not None else load_dataset(options.dataset)
    if meta is not None and meta.get("dataset", {}).get("digest") not in (None, dataset.digest):
        raise DatasetRunError(f"--resume {directory}: {options.dataset} has changed since that run "
                              f"(digest {meta['dataset']['digest']} then, {dataset.digest} now); start a new run")
    missing = missing_credentials(options.targets)
    if missing and not require_keys:  # a dry run sends nothing: say what is missing, go on
        notes_first = [f"note: {t.spec} needs {var} to run (not needed for --dry-run)" for t, var in missing]
    else:
        notes_first = []
    if missing and require_keys:
        lines = "; ".join(f"{t.spec} needs {var}" for t, var in missing)
        raise DatasetRunError(f"missing API keys: {lines} (set the variable, or drop the provider)")
    cases = select_cases(dataset, options.filters, options.limit)
    cases = apply_settings(sample_cases(cases, options.sample, options.seed), options.settings)
    batch_id = options.batch_id or (meta or {}).get("batchId") or new_batch_id()
    if directory is None:
        directory = Path("results") / "datasets" / f"{dataset.name}-{batch_id}"
    if not options.resume and directory.exists() and (directory / RESULTS_FILE).exists():
        raise DatasetRunError(f"{directory} already holds a run; resume it with --resume {directory}, "
                              "or choose another --output")
    planned: list[PlannedCell] = []
    for case in cases:
        repeats = options.repeat if options.repeat is not None else case.repeat
        for target in options.targets:
            for r in range(repeats):
                planned.append(PlannedCell(case, target, r, dataset.name))
    if options.shard is not None:
        index, count = options.shard
        planned = [p for p in planned if p.cell.shard(count) == index - 1]
    previous: dict[str, dict[str, Any]] = {}
    notes: list[str] = list(notes_first)
    if options.resume:
        previous = latest_by_key(read_results(directory / RESULTS_FILE)[0])
        todo = []
        done = errors = 0
        for p in planned:
            last = previous.get(p.key)
            if last is None:
                todo.append(p)
            elif last.get("status") == "error" and options.retry_errors:
                todo.append(p)
                errors += 1
            else:
                done += 1
        notes.append(f"resuming {directory}: {done} cell(s) already there, {len(todo)} to run"
                     + (f" ({errors} errored, retried)" if options.retry_errors else ""))
        to_run = todo
    else:
        to_run = planned
    meta = meta or _meta_of(options, dataset, options.targets, batch_id)
    return DatasetRun(options, dataset, list(options.targets), to_run, len(planned), directory, batch_id, meta,
                      previous, notes)


# --------------------------------------------------------------------------- estimating


def estimate(run: DatasetRun) -> dict[str, Any]:
    """Requests and an upper estimate of the cost per target: input ~ 4 characters a token,
    output at each case's max_tokens (the most it can be). Unknown prices stay unknown."""
    from harness.pricing import price_for
    from harness.providers import Usage

    out: dict[str, Any] = {"cells": len(run.cells), "targets": {}}
    for target in run.targets:
        cells = [p for p in run.cells if p.target == target]
        tokens_in = sum((len(p.case.prompt) + len(p.case.system or "")) // 4 + 8 for p in cells)
        tokens_out = sum(p.case.max_tokens or DEFAULT_MAX_TOKENS for p in cells)
        price = price_for(*_price_key(target))
        cost = price.cost(Usage(input_tokens=tokens_in, output_tokens=tokens_out)) if price else None
        out["targets"][target.spec] = {"cells": len(cells), "tokensIn": tokens_in, "maxTokensOut": tokens_out,
                                       "maxCostUsd": cost}
    return out


def _price_key(target: Target) -> tuple[str, str]:
    """(provider, model) of the price table for ``target``: ``local`` is the shipped model,
    whatever its target names it, priced under its own name as an openai-compatible server."""
    if target.prefix == "local":
        from harness.local_model import MODEL_NAME

        return "openai-compatible", MODEL_NAME
    return target.prefix, target.model


# --------------------------------------------------------------------------- running


@dataclass
class DatasetResult:
    run: DatasetRun
    cells: list[dict[str, Any]]  # the last line of every cell of the run
    summary: dict[str, Any]
    interrupted: bool = False
    sent: int = 0
    stored: int = 0
    store_errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def __repr__(self) -> str:
        # Short: asyncio.run reprs the result of its task when it restores the SIGINT handler
        # (Python 3.11), and the whole dataset and every cell would take seconds at 10,000 cases.
        return (f"DatasetResult({self.run!r}, {len(self.cells)} cells, interrupted={self.interrupted}, "
                f"stored={self.stored})")


#: The classes of :func:`harness.providers.failures.error_class` a cell's ``error_kind`` keeps.
_KINDS_OF_CLASS = {"connect": "connect", "dns": "dns", "timeout": "timeout"}


def _error_kind(exc: Any) -> str:
    """The ``error_kind`` of a cell that ended on ``exc``: ``connect``, ``dns`` or ``timeout``
    as :func:`harness.providers.failures.error_class` classes it, else the ProviderError's
    kind (``unavailable``: 429, 5xx or a lost connection; ``auth``; ``refused``), else ``error``."""
    from harness.providers.failures import error_class

    kind = _KINDS_OF_CLASS.get(error_class(exc))
    if kind is not None:
        return kind
    kind = getattr(exc, "kind", "error")
    return kind if kind in ("unavailable", "auth", "refused") else "error"


class CellRecorder:
    """Turns outcomes into graded cells and appends them to results.jsonl.

    An answer graded without a judge is recorded just after the engine's worker has sent its
    next request (a callback queued on the event loop), not before: the grading and the line
    are then off the path from one request to the next. :meth:`drain` records what is still
    queued, and raises what recording failed with."""

    def __init__(self, run: DatasetRun, log: ResultsLog, judge: Any, judge_skip: str,
                 on_cell: Callable[[dict[str, Any]], None] | None) -> None:
        self.run = run
        self.log = log
        self.judge = judge
        self.judge_skip = judge_skip
        self.on_cell = on_cell
        self.save = run.options.save_responses
        self.errors = 0
        self.first_error: str | None = None
        self._queued: collections.deque[Outcome] = collections.deque()
        self._failure: BaseException | None = None

    def cell_of(self, planned: PlannedCell, outcome: Outcome, graded: Any) -> dict[str, Any]:
        response = outcome.response
        case = planned.case
        cell: dict[str, Any] = {
            "test_id": case.id, "category": case.category, "target": planned.target.spec,
            "provider": planned.target.prefix, "model": planned.target.model, "repeat": planned.repeat,
        }
        if response is not None:
            usage = response.usage
            cell.update({
                "status": ("ungraded" if graded.passed is None else "passed" if graded.passed else "failed"),
                "score": graded.score, "threshold": graded.threshold,
                "duration_ms": round(response.latency_ms, 2),
                "ttft_ms": None if response.ttft_ms is None else round(response.ttft_ms, 2),
                "tokens_in": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
                "tokens_out": usage.output_tokens, "cost_usd": response.cost_usd,
                "error": None, "error_kind": None,
                "assertions": [r.to_dict() for r in graded.results],
                "response": response.text[:RESPONSE_CAP] if self.save else None,
                "answered_model": response.model, "cached": response.cached,
            })
            if getattr(graded, "judge_calls", 0):
                cell["judge_tokens_in"] = graded.judge_tokens_in
                cell["judge_tokens_out"] = graded.judge_tokens_out
                cell["judge_cost_usd"] = graded.judge_cost_usd
        else:
            error = outcome.error
            cell.update({
                "status": "error", "score": None, "threshold": None,
                "duration_ms": round(outcome.elapsed_ms, 2), "ttft_ms": None,
                "tokens_in": 0, "tokens_out": 0, "cost_usd": None,
                "error": str(error)[:1000], "error_kind": _error_kind(error),
                "assertions": [], "response": None,
            })
        cell["attempts"] = outcome.attempts
        cell["rate_limited"] = outcome.rate_limited
        cell["run_id"] = new_run_id()
        cell["finished_at"] = _now_iso()
        return cell

    def record(self, outcome: Outcome, graded: Any) -> dict[str, Any]:
        cell = self._write(outcome, graded, flush=True)
        if self.on_cell is not None:
            self.on_cell(cell)
        return cell

    def _write(self, outcome: Outcome, graded: Any, flush: bool) -> dict[str, Any]:
        """Append the cell of ``outcome`` to results.jsonl (flushed, or left for a later flush)."""
        planned: PlannedCell = outcome.job.payload
        cell = self.cell_of(planned, outcome, graded)
        previous = self.run.previous.get(planned.key)
        if previous is not None:
            cell["retry_of"] = previous.get("run_id")
        self.log.append(cell, flush)
        if cell["status"] == "error":
            self.errors += 1
            if self.first_error is None:
                self.first_error = f"{cell['test_id']}: {cell['error']}"
        return cell

    def grade_now(self, outcome: Outcome) -> Any:
        if outcome.response is None:
            return None
        response = outcome.response
        return grade(outcome.job.payload.case, Answer(response.text, response.latency_ms, response.cost_usd),
                     None, judge_skip_reason=self.judge_skip)

    async def __call__(self, outcome: Outcome) -> None:
        if self._failure is not None:
            raise self._failure  # stops the run as a failure of this call would have
        case = outcome.job.payload.case
        if outcome.response is not None and self.judge is not None and needs_judge(case):
            response = outcome.response
            graded = await asyncio.to_thread(grade, case, Answer(response.text, response.latency_ms,
                                                                 response.cost_usd), self.judge)
            self.record(outcome, graded)
            return
        self._queued.append(outcome)
        if len(self._queued) == 1:
            asyncio.get_running_loop().call_soon(self._record_queued)

    def _record_queued(self) -> None:
        # The lines of the answers queued together are flushed once, and only then reported:
        # a cell reported is on disk.
        written: list[dict[str, Any]] = []
        try:
            while self._queued and self._failure is None:
                outcome = self._queued.popleft()
                written.append(self._write(outcome, self.grade_now(outcome), flush=False))
        except BaseException as exc:  # noqa: BLE001 - raised by the next call and by drain()
            self._failure = exc
        try:
            if written:
                self.log.flush()
        except BaseException as exc:  # noqa: BLE001 - as above; nothing of this batch is reported
            self._failure = self._failure or exc
            return
        if self.on_cell is not None:
            for cell in written:
                self.on_cell(cell)

    def drain(self) -> None:
        """Record the answers still queued; raise what recording failed with, if it did."""
        self._record_queued()
        if self._failure is not None:
            raise self._failure


def resolve_rubric_judge(run: DatasetRun) -> tuple[Any, str, str]:
    """(judge callable or None, the reason it is skipped, identity for config_hash)."""
    if not any(needs_judge(p.case) for p in run.cells):
        return None, "no llm-rubric assertion", "none"
    from types import SimpleNamespace

    from harness.evaluators.llm_judge import JudgeChoice, resolve_judge

    choice = run.options.judge or JudgeChoice()
    resolved = resolve_judge(SimpleNamespace(enabled=True, model=None, provider=None), choice)
    run.judge_note = resolved.describe()
    if resolved.skip_reason is not None:
        return None, f"judge skipped: {resolved.skip_reason}", "none"
    from harness.datasets.assertions import JudgeError

    try:
        return make_judge(resolved, use_cache=run.options.cache == "replay"), "", resolved.identity
    except JudgeError as exc:
        run.judge_note = f"judge skipped: {exc}"
        return None, f"judge skipped: {exc}", "none"


@dataclass
class Sent:
    """What :func:`send` did: the requests sent, whether it was stopped, and this send's errors."""

    sent: int
    elapsed_s: float
    interrupted: bool
    errors: int = 0
    first_error: str | None = None  # "<test id>: <error>" of the first cell that ended in error


async def execute(run: DatasetRun, *, on_cell: Callable[[dict[str, Any]], None] | None = None,
                  engine: Engine | None = None, control: Any = None) -> DatasetResult:
    """:func:`send`, then :func:`finish` (in a worker thread, so an event loop shared with
    other runs goes on with their requests)."""
    done = await send(run, on_cell=on_cell, engine=engine, control=control)
    return await asyncio.to_thread(finish, run, interrupted=done.interrupted, sent=done.sent,
                                   elapsed_s=done.elapsed_s)


@dataclass
class Opening:
    """What :func:`send` sets up before its first request (see :func:`open_send`)."""

    log: ResultsLog
    judge: Any
    judge_skip: str
    jobs: list[Job]

    def close(self) -> None:
        """Close the results log of an opening that is not sent after all."""
        self.log.close(sync=False)


def open_send(run: DatasetRun) -> Opening:
    """The part of :func:`send` before its first request: the output directory and run.json,
    the judge, the results log (what results.jsonl holds already is kept) and the jobs. Safe in
    a worker thread: a fleet opens a cell while the cells before it still send."""
    run.output_dir.mkdir(parents=True, exist_ok=True)
    (run.output_dir / META_FILE).write_text(json.dumps(run.meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    judge, judge_skip, _ = resolve_rubric_judge(run)
    _, keep = read_results(run.output_dir / RESULTS_FILE)
    log = ResultsLog(run.output_dir / RESULTS_FILE, keep)
    timeout_s = run.options.timeout_s
    jobs = [Job(p.target, build_request(p.case, p.target, timeout_s), p.repeat, p) for p in run.cells]
    return Opening(log, judge, judge_skip, jobs)


async def send(run: DatasetRun, *, on_cell: Callable[[dict[str, Any]], None] | None = None,
               engine: Engine | None = None, control: Any = None, opening: Opening | None = None) -> Sent:
    """Send the run's cells and append each finished one to results.jsonl (each line flushed
    as it is written; :func:`finish` syncs the file). ``control`` (an object with
    ``stopping``/``aborting`` flags, e.g. :class:`harness.control.BatchControl`) is polled to
    stop early; the cells finished so far are kept. A given ``engine`` (a fleet's, shared by
    several runs) is left open, and this run keeps to its own ``concurrency`` and ``pace_s``
    within it. ``opening``: the run's :func:`open_send`, when done beforehand."""
    if opening is None:
        opening = open_send(run)
    log, jobs = opening.log, opening.jobs
    recorder = CellRecorder(run, log, opening.judge, opening.judge_skip, on_cell)
    opts = run.options
    owned = engine is None
    engine = engine or Engine(EngineOptions(concurrency=opts.concurrency, provider_limits=opts.provider_limits,
                                            max_attempts=opts.max_attempts, timeout_s=opts.timeout_s,
                                            stream=opts.stream, use_cache=opts.cache == "replay",
                                            record=opts.cache == "replay"))
    started = time.monotonic()
    watcher = None
    if control is not None:
        async def watch() -> None:
            while True:
                await asyncio.sleep(0.1)
                if getattr(control, "aborted", False):
                    engine.abort()
                    return
                if getattr(control, "stopping", False) and not engine.stopping:
                    engine.stop()
        watcher = asyncio.ensure_future(watch())
    interrupted = False
    try:
        try:
            await engine.run(jobs, recorder, concurrency=None if owned else opts.concurrency, pace_s=opts.pace_s)
        except asyncio.CancelledError:
            interrupted = True
        interrupted = interrupted or engine.stopping
    finally:
        if watcher is not None:
            watcher.cancel()
        try:
            recorder.drain()
        finally:
            log.close(sync=False)
        if owned:
            await engine.aclose()
    return Sent(len(jobs), time.monotonic() - started, interrupted, recorder.errors, recorder.first_error)


def finish(run: DatasetRun, *, interrupted: bool = False, sent: int = 0, elapsed_s: float = 0.0) -> DatasetResult:
    """Sync results.jsonl, then write results.json, results.csv and summary.json from it (the
    last line of every cell of this run)."""
    sync_file(run.output_dir / RESULTS_FILE)
    cells_all, _ = read_results(run.output_dir / RESULTS_FILE)
    latest = latest_by_key(cells_all)
    targets = [t.spec for t in run.targets]
    cells = [c for c in latest.values() if c["target"] in targets]
    summary = report.summarize(cells, targets=targets)
    meta = dict(run.meta)
    meta.update({"interrupted": interrupted, "finishedAt": _now_iso(), "cells": len(cells), "planned": run.planned})
    text = report.summary_text(summary)  # dumped once, for both files
    report.write_json(run.output_dir / "results.json", cells, text, meta)
    report.write_csv(run.output_dir / "results.csv", cells)
    tmp = run.output_dir / "summary.json.tmp"
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, run.output_dir / "summary.json")
    return DatasetResult(run, cells, summary, interrupted=interrupted, sent=sent, elapsed_s=elapsed_s)


# --------------------------------------------------------------------------- the results store


def run_record(run: DatasetRun, cell: dict[str, Any], cases: dict[str, TestCase], judge_identity: str) -> RunRecord:
    """The results-store run of one cell (suite = dataset, scenario = case id, tier dataset)."""
    target = next(t for t in run.targets if t.spec == cell["target"])
    case = cases.get(cell["test_id"])
    parts = config_parts(run.dataset, case, target, run.options, judge_identity) if case else {}
    status = cell["status"]
    error = status == "error"
    kind = cell.get("error_kind")
    evaluations = [EvaluationRecord(evaluator_name=f"assert.{a.get('type')}", score=float(a.get("score") or 0.0),
                                    status=("skipped" if a.get("skipped") else "ok"),
                                    details=str(a.get("detail") or "")[:500])
                   for a in cell.get("assertions") or []]
    metadata: dict[str, Any] = {
        **run.options.metadata,
        "dataset": {"name": run.dataset.name, "version": run.dataset.version, "digest": run.dataset.digest},
        "case": {"category": cell.get("category"), "repeat": cell.get("repeat")},
        "target": cell["target"],
        "attempts": cell.get("attempts"),
        "configParts": parts,
        "iteration": cell.get("repeat"),
    }
    for key, wire in (("ttft_ms", "ttftMs"), ("error", "error"), ("error_kind", "errorKind"),
                      ("retry_of", "retryOf"), ("response", "response"), ("threshold", "threshold")):
        if cell.get(key) is not None:
            metadata[wire] = cell[key]
    if status == "ungraded":
        metadata["ungraded"] = True
    score = cell.get("score")
    return RunRecord(
        run_id=cell["run_id"], batch_id=run.batch_id, suite=run.dataset.name, scenario=cell["test_id"], tier=TIER,
        agent=target.prefix, model=target.model,
        status="error" if error else "completed",
        failure_class=("infra" if kind in ("unavailable", "timeout", "connect", "dns") else "harness") if error else None,
        completed_at=cell.get("finished_at"),
        total_score=score, weighted_score=score,
        is_successful=status == "passed",
        success_metric=None if status in ("error", "ungraded") else (1.0 if status == "passed" else 0.0),
        config_hash=hash_parts(parts) if parts else None,
        metadata=metadata, evaluations=evaluations,
        telemetry=Telemetry(tokens_in=cell.get("tokens_in") or 0, tokens_out=cell.get("tokens_out") or 0,
                            cost_usd=cell.get("cost_usd"), turns=0 if error else 1,
                            duration_ms=cell.get("duration_ms") or 0.0,
                            latencies_ms=[] if error else [cell.get("duration_ms") or 0.0]),
    )


STORE_CHUNK = 50  # runs per request to the results store (one write each)


def _post_runs(client: Any, records: list[RunRecord]) -> list[Any]:
    """One outcome (or exception) per record: in one request when the client can, else one by one."""
    if hasattr(client, "post_runs"):
        return list(client.post_runs(records))
    outcomes: list[Any] = []
    for record in records:
        try:
            outcomes.append(client.post_run(record))
        except Exception as exc:  # noqa: BLE001 - the caller reports it
            outcomes.append(exc)
    return outcomes


def store(result: DatasetResult, client: Any, judge_identity: str = "none",
          progress: Callable[[int, int], None] | None = None, *, post_batch: bool = True) -> list[RunRecord]:
    """Post every cell of the run, then the batch (unless ``post_batch`` is false: a fleet posts
    one batch for all its runs), to the results store (a re-post of a run already stored is a
    duplicate, so storing after a resume is safe). Returns the records posted."""
    from harness.results.records import batch_record

    run = result.run
    cases = {c.id: c for c in run.dataset.cases}
    records = [run_record(run, cell, cases, judge_identity) for cell in result.cells]
    for start in range(0, len(records), STORE_CHUNK):
        chunk = records[start:start + STORE_CHUNK]
        try:
            outcomes = _post_runs(client, chunk)
        except Exception as exc:  # noqa: BLE001 - reported; results.jsonl keeps the cells
            outcomes = [exc] * len(chunk)
        for record, outcome in zip(chunk, outcomes):
            if isinstance(outcome, Exception):
                result.store_errors.append(f"{record.run_id}: {type(outcome).__name__}: {outcome}")
            else:
                result.stored += 1
        if progress is not None:
            progress(start + len(chunk), len(records))
    if not post_batch:
        return records
    meta = {"kind": "dataset", "dataset": run.meta.get("dataset"), "targets": [t.spec for t in run.targets],
            "outputDir": str(run.output_dir), "interrupted": result.interrupted, "planned": run.planned}
    created = int(time.time() * 1000)
    try:
        client.post_batch(batch_record(run.batch_id, records, created, created, meta))
    except Exception as exc:  # noqa: BLE001
        result.store_errors.append(f"batch {run.batch_id}: {type(exc).__name__}: {exc}")
    return records
