"""Model prices and the cost of a call (docs/agents.md, "Prices").

Prices live in ``harness/data/prices.json``: a versioned table of rows ``{provider, model,
aliases, effective_date, source, input, output, cache_read, cache_write}`` in USD per million
tokens. A model may have several rows; the one in force is the latest whose effective date
is not after the day asked about. A model missing from the table has cost ``None`` and a
warning is logged once per model: the cost is unknown, never a silent 0.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.models.providers.types import Usage

log = logging.getLogger(__name__)

_DATE_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")
_warned: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class ModelPrice:
    """One row of the price table (USD per million tokens)."""

    provider: str
    model: str
    effective_date: str
    source: str
    input: float
    output: float
    cache_read: float | None = None  # None: cached reads billed at the input price
    cache_write: float | None = None  # None: writes are not billed apart
    aliases: tuple[str, ...] = ()
    note: str | None = None

    def cost(self, usage: "Usage") -> float:
        """USD for ``usage`` at this row's prices."""
        read_price = self.input if self.cache_read is None else self.cache_read
        write_price = self.input if self.cache_write is None else self.cache_write
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * read_price
            + usage.cache_write_tokens * write_price
        )
        return total / 1_000_000


@dataclass(frozen=True)
class PriceTable:
    version: str
    rows: tuple[ModelPrice, ...]

    def lookup(self, provider: str, model: str, on: _dt.date | None = None) -> ModelPrice | None:
        """The row in force for ``provider``/``model`` on day ``on`` (default today), or None.

        Model names match exactly or as aliases, case-insensitively; a dated snapshot
        (``-20250929``, ``-2024-08-06``) or ``-latest`` falls back to its undated name.
        ``openai-compatible`` servers match OpenAI's names only when a row says so; local
        models have no price.
        """
        day = (on or _dt.date.today()).isoformat()
        memo = self.__dict__.get("_memo")
        if memo is None or len(memo) > 4096:
            memo = {}
            object.__setattr__(self, "_memo", memo)  # a cache of answers, not part of the value
        key = (provider, model, day)
        if key not in memo:
            memo[key] = self._lookup(provider, model, day)
        return memo[key]

    def _lookup(self, provider: str, model: str, day: str) -> ModelPrice | None:
        wanted = _candidates(model)
        matches = [
            row
            for row in self.rows
            if row.provider == provider and ({row.model.lower(), *(a.lower() for a in row.aliases)} & wanted)
        ]
        if not matches:
            return None
        in_force = [r for r in matches if r.effective_date <= day]
        if in_force:
            return max(in_force, key=lambda r: r.effective_date)
        # A row dated after the day asked about is still the best knowledge we have.
        return min(matches, key=lambda r: r.effective_date)


def _candidates(model: str) -> set[str]:
    name = model.strip().lower()
    out = {name}
    stripped = _DATE_SUFFIX.sub("", name)
    out.add(stripped)
    return out


def _row(d: dict[str, Any]) -> ModelPrice:
    return ModelPrice(
        provider=d["provider"],
        model=d["model"],
        effective_date=d["effective_date"],
        source=d["source"],
        input=float(d["input"]),
        output=float(d["output"]),
        cache_read=None if d.get("cache_read") is None else float(d["cache_read"]),
        cache_write=None if d.get("cache_write") is None else float(d["cache_write"]),
        aliases=tuple(d.get("aliases") or ()),
        note=d.get("note"),
    )


@lru_cache(maxsize=1)
def load_price_table() -> PriceTable:
    """The price table shipped in the package."""
    text = resources.files("harness").joinpath("data/prices.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return PriceTable(version=data["version"], rows=tuple(_row(d) for d in data["prices"]))


def price_for(provider: str, model: str, on: _dt.date | None = None) -> ModelPrice | None:
    """The price row for ``provider``/``model``, or None when the table does not know it."""
    return load_price_table().lookup(provider, model, on)


def unpriced_reason(provider: str, model: str) -> str:
    """Why ``provider``/``model`` has no price, in words that hold: a model served by an
    OpenAI-compatible server (``--base-url``) is not priced as the provider's own API."""
    if provider == "openai-compatible":
        known = [name for name in ("openai", "anthropic", "openrouter") if price_for(name, model) is not None]
        if known:
            return (f"{model!r} is served at --base-url, an OpenAI-compatible server the price table cannot "
                    f"price (its price for {model!r} is {known[0]}'s own API's)")
        return f"the price table has no price for {model!r} at an OpenAI-compatible server (--base-url)"
    return f"the price table has no price for {model!r} ({provider})"


def cost_for_usage(
    provider: str,
    model: str,
    usage: "Usage",
    *,
    request_model: str | None = None,
    on: _dt.date | None = None,
) -> float | None:
    """USD cost of one call, or None (with a warning logged once per model) when the price is unknown.

    ``model`` is the name the API answered with; ``request_model`` the name asked for, tried
    second (APIs often answer with a dated snapshot of an alias).
    """
    row = price_for(provider, model, on)
    if row is None and request_model and request_model != model:
        row = price_for(provider, request_model, on)
    if row is None:
        key = (provider, model)
        if key not in _warned:
            _warned.add(key)
            log.warning("no price known for %s model %r; its cost is recorded as unknown", provider, model)
        return None
    return row.cost(usage)
