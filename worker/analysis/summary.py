"""One summary of cells, for every engine and every view.

A *cell* here is one graded attempt, whichever engine made it: a scenario run, a dataset
answer, a fleet test. Each view gives its cells as :class:`Figures` (an outcome and what the
cell measured) and reads what it shows from one :class:`Summary`: counts by outcome, rates
with their Wilson interval, duration and time-to-first-token percentiles, tokens and cost.
The views differ only in what they ask of it (which outcomes a rate counts, which cells are
timed), never in how a figure is computed:

- **Outcomes** are :data:`OUTCOMES`. ``error`` is a cell with no answer (a refused key, a
  dropped connection), ``timeout`` one that ran out of time, ``skipped`` one planned but not
  run, ``ungraded`` one answered but with nothing to grade it by.
- **Rates** (:meth:`Summary.rate`): the cells of some outcomes over the cells of others, with
  the Wilson score interval (:func:`worker.analysis.stats.wilson_interval`); a rate with
  nothing to count is None.
- **Timed cells** (``timed`` of :func:`summarize`: by default every outcome but ``error``,
  ``timeout`` and ``skipped``) give the duration and time-to-first-token samples: a timeout's
  duration is its deadline, not a latency. Percentiles interpolate linearly between ranks.
- **Cost**: the total over every cell; a timed cell whose cost is unknown (no price) makes the
  total unknown (None), never zero, and is counted in ``cost_unknown``. A cell that is not timed
  and has no cost counts as free.
- **Tokens**: totals over every cell (an error may have spent tokens); ``tokens_per_s`` is the
  output tokens per second of the cells that produced some (their tokens over their durations).

Standard library only, as the rest of :mod:`worker.analysis`, so the terminal, the HTML
reports, the fleet artifacts and the worker's views compute the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from worker.analysis.stats import percentiles, wilson_interval

OUTCOMES = ("passed", "failed", "error", "timeout", "skipped", "ungraded")

#: The outcomes whose cells are timed unless a view says otherwise.
TIMED = frozenset({"passed", "failed", "ungraded"})


class Figures(NamedTuple):
    """What one cell measured. ``cost_usd`` None: unknown (no price), not free."""

    outcome: str
    duration_ms: float | None = None
    ttft_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    score: float | None = None


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n``, as a share (None when ``n`` is 0) with its Wilson interval."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, k: int, n: int, level: float = 0.95) -> "Rate":
        if n <= 0:
            return cls(k, n, None, None, None)
        low, high = wilson_interval(k, n, level)
        return cls(k, n, k / n, low, high)


@dataclass(frozen=True)
class Spread:
    """Percentiles of a sample (None each when it is empty)."""

    count: int = 0
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None

    @classmethod
    def of(cls, values: Iterable[float]) -> "Spread":
        sample = [float(v) for v in values]
        if not sample:
            return cls()
        p50, p95, p99 = percentiles(sample, (50, 95, 99))
        return cls(len(sample), p50, p95, p99, min(sample), max(sample), math.fsum(sample) / len(sample))


@dataclass
class Summary:
    """The figures of a set of cells; see the module docstring."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    duration: Spread = Spread()
    ttft: Spread = Spread()
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_per_s: float | None = None
    cost_usd: float | None = 0.0
    cost_unknown: int = 0
    mean_score: float | None = None
    level: float = 0.95

    @property
    def cells(self) -> int:
        return sum(self.counts.values())

    def count(self, *outcomes: str) -> int:
        return sum(self.counts[o] for o in outcomes)

    def rate(self, of: Iterable[str] = ("passed",), over: Iterable[str] = ("passed", "failed")) -> Rate:
        """The cells of the outcomes ``of`` among those of the outcomes ``over``."""
        return Rate.of(self.count(*of), self.count(*over), self.level)


class Measured(Protocol):
    """What :func:`summarize` reads of a cell: a :class:`Figures`, or any record with the same
    attributes (the harness's recorded cell is one, read as it is)."""

    outcome: str
    duration_ms: float | None
    ttft_ms: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    score: float | None


def summarize(cells: Iterable[Measured], *, timed: Container[str] = TIMED,
              scored: Container[str] = ("passed", "failed"), level: float = 0.95) -> Summary:
    """The :class:`Summary` of ``cells`` (one pass over them). ``timed``: the outcomes whose
    durations and costs count as measured; ``scored``: those whose scores are averaged."""
    counts = dict.fromkeys(OUTCOMES, 0)
    durations: list[float] = []
    ttfts: list[float] = []
    scores: list[float] = []
    costs: list[float] = []
    tokens_in = tokens_out = unknown = 0
    producing_tokens = 0
    producing_ms: list[float] = []
    for cell in cells:
        if cell.outcome not in counts:
            raise ValueError(f"unknown outcome {cell.outcome!r} (expected one of {', '.join(OUTCOMES)})")
        counts[cell.outcome] += 1
        tokens_in += int(cell.tokens_in or 0)
        tokens_out += int(cell.tokens_out or 0)
        if cell.outcome in scored and cell.score is not None:
            scores.append(float(cell.score))
        is_timed = cell.outcome in timed
        if cell.cost_usd is not None:
            costs.append(float(cell.cost_usd))
        elif is_timed:
            unknown += 1
        if (cell.tokens_out or 0) > 0 and (cell.duration_ms or 0) > 0:
            producing_tokens += int(cell.tokens_out)
            producing_ms.append(float(cell.duration_ms))
        if not is_timed:
            continue
        if cell.duration_ms is not None:
            durations.append(float(cell.duration_ms))
        if cell.ttft_ms is not None:
            ttfts.append(float(cell.ttft_ms))
    seconds = math.fsum(producing_ms) / 1000.0
    return Summary(
        counts=counts, duration=Spread.of(durations), ttft=Spread.of(ttfts),
        tokens_in=tokens_in, tokens_out=tokens_out,
        tokens_per_s=producing_tokens / seconds if producing_ms else None,
        cost_usd=None if unknown else math.fsum(costs), cost_unknown=unknown,
        mean_score=math.fsum(scores) / len(scores) if scores else None, level=level)
