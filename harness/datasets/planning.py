"""A dataset run planned: its options, its cells, what a resume keeps, and its estimate.

:func:`prepare` checks the options (and, with ``--resume DIR``, fills what was not repeated
from the run's ``run.json`` and refuses a change of providers or of the dataset's bytes),
loads the dataset, selects the cases (``--filter``, ``--limit``, a fleet profile's sample and
settings) and plans one :class:`PlannedCell` per (case, target, repeat): a
:class:`harness.scenarios.plan.Cell` with suite = dataset name, scenario = case id, tier ``dataset``,
agent = the target's provider prefix, model = its model and iteration = the repeat, so
``--shard I/N`` keeps the same slice as of a scenario matrix. On a resume the cells with a line
in ``results.jsonl`` are left out (with ``--retry-errors``, those whose last line is not an
error), by the one resume rule of :mod:`harness.cells`. Nothing is sent. :func:`config_parts`
is what decides a cell's answer and grade (its hash is the stored run's ``config_hash``);
:func:`estimate` gives the requests and an upper cost per target. :class:`DatasetResult` is
what a finished run hands back.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._util.clock import now_iso
from harness.datasets.format import load_dataset
from harness.datasets.model import Dataset, TestCase, apply_settings, sample_cases
from harness.cells import decide
from harness.datasets.lines import dataset_cell, latest_by_key
from harness.results_log import RESULTS_FILE, read_results
from harness.scenarios.plan import Cell
from harness.models.providers import ChatRequest, Message
from harness.models.providers.registry import Target, missing_credentials, parse_target
from harness.results.records import new_batch_id

TIER = "dataset"
META_FILE = "run.json"
DEFAULT_MAX_TOKENS = 1024


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
    judge: Any = None  # harness.grading.evaluators.llm_judge.JudgeChoice
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
        "createdAt": now_iso(),
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
        decision = decide(planned, lambda p: p.key, {key: dataset_cell(line).recorded() for key, line in previous.items()},
                          retry=options.retry_errors)
        notes.append(f"resuming {directory}: {decision.done} cell(s) already there, {len(decision.run)} to run"
                     + (f" ({len(decision.retried)} errored, retried)" if options.retry_errors else ""))
        to_run = decision.run
    else:
        to_run = planned
    meta = meta or _meta_of(options, dataset, options.targets, batch_id)
    return DatasetRun(options, dataset, list(options.targets), to_run, len(planned), directory, batch_id, meta,
                      previous, notes)


# --------------------------------------------------------------------------- estimating


def estimate(run: DatasetRun) -> dict[str, Any]:
    """Requests and an upper estimate of the cost per target: input ~ 4 characters a token,
    output at each case's max_tokens (the most it can be). Unknown prices stay unknown."""
    from harness.models.pricing import price_for
    from harness.models.providers import Usage

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
        from harness.models.local_model import MODEL_NAME

        return "openai-compatible", MODEL_NAME
    return target.prefix, target.model


# --------------------------------------------------------------------------- the result


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
