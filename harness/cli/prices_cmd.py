"""``bench prices``: the model price table the harness uses to compute cost."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.table import Table

    from harness.models.pricing import ModelPrice


@click.command("prices")
@click.option("--provider", "provider", default=None, help="Only this provider (anthropic, openai, openrouter).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def prices(provider: str | None, as_json: bool) -> None:
    """List model prices (USD per million tokens) with their effective date and source.

    \b
    Examples:
      bench prices
      bench prices --provider anthropic
      bench prices --json
    """
    from harness.models.pricing import load_price_table

    table = load_price_table()
    rows = [r for r in table.rows if provider is None or r.provider == provider]
    if provider is not None and not rows:
        known = sorted({r.provider for r in table.rows})
        raise click.ClickException(f"no prices for provider {provider!r}; known: {', '.join(known)}")
    if as_json:
        out = {
            "version": table.version,
            "currency": "USD",
            "unit": "per million tokens",
            "prices": [
                {
                    "provider": r.provider,
                    "model": r.model,
                    "aliases": list(r.aliases),
                    "effectiveDate": r.effective_date,
                    "input": r.input,
                    "output": r.output,
                    "cacheRead": r.cache_read,
                    "cacheWrite": r.cache_write,
                    "source": r.source,
                }
                for r in rows
            ],
        }
        click.echo(json.dumps(out, indent=2))
        return
    from rich.console import Console

    console = Console()
    console.print(price_view(rows, table.version))
    console.print()
    for line in price_notes(rows):
        console.print(line, highlight=False)


# Short headers keep every price visible at 80 columns; price_notes spells them out.
_PRICE_COLUMNS = ("in", "out", "cache rd", "cache wr")


def _money(v: float | None) -> str:
    return "-" if v is None else f"{v:g}"


def price_view(rows: list[ModelPrice], version: str) -> Table:
    """The price table, one section per provider (the provider is a heading row, not a column,
    so the table fits 80 columns); models are never wrapped."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    view = Table(title=f"Model prices, USD per million tokens (table {version})", box=box.SIMPLE_HEAD,
                 show_edge=False, pad_edge=False)
    view.add_column("model", no_wrap=True)
    for header in _PRICE_COLUMNS:
        view.add_column(header, justify="right", no_wrap=True)
    view.add_column("since", no_wrap=True)
    providers: list[str] = []
    for r in rows:
        if r.provider not in providers:
            providers.append(r.provider)
    for i, provider in enumerate(providers):
        view.add_row(Text(provider, style="bold"))
        group = [r for r in rows if r.provider == provider]
        for j, r in enumerate(group):
            view.add_row("  " + r.model, _money(r.input), _money(r.output), _money(r.cache_read),
                         _money(r.cache_write), r.effective_date,
                         end_section=j == len(group) - 1 and i < len(providers) - 1)
    return view


def _sources(rows: list[ModelPrice]) -> list[str]:
    """Distinct sources, the many per-model pages of one site collapsed to one entry."""
    from urllib.parse import urlsplit

    by_site: dict[str, list[str]] = {}
    for r in rows:
        source = r.source.split(" ")[0]
        parts = urlsplit(source)
        site = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else source
        if source not in by_site.setdefault(site, []):
            by_site[site].append(source)
    return [pages[0] if len(pages) == 1 else f"{site}/... ({len(pages)} model pages)"
            for site, pages in sorted(by_site.items())]


def price_notes(rows: list[ModelPrice]) -> list[str]:
    """The lines under the table (each under 80 characters): abbreviations, what '-' means,
    sources."""
    return [
        "in/out: input/output; cache rd/wr: cache read/write; since: effective date",
        "cache rd -: billed at the input price; cache wr -: not billed apart",
        "A model not listed has an unknown cost (recorded as null), never 0.",
        "Sources (per row: bench prices --json):",
        *(f"  {source}" for source in _sources(rows)),
    ]
