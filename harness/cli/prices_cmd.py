"""``bench prices``: the model price table the harness uses to compute cost."""

from __future__ import annotations

import json

import click


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
    from harness.pricing import load_price_table

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
    from rich.table import Table

    view = Table(title=f"Model prices, USD per million tokens (table {table.version})")
    for col in ("provider", "model", "input", "output", "cache read", "cache write", "since"):
        numeric = col in ("input", "output", "cache read", "cache write")
        view.add_column(col, justify="right" if numeric else "left", no_wrap=col in ("provider", "model", "since"))

    def money(v: float | None) -> str:
        return "-" if v is None else f"{v:g}"

    for r in rows:
        view.add_row(r.provider, r.model, money(r.input), money(r.output), money(r.cache_read), money(r.cache_write), r.effective_date)
    console = Console()
    console.print(view)
    console.print("Sources: " + ", ".join(sorted({r.source.split(" ")[0] for r in rows})))
    console.print("A model not listed has an unknown cost (recorded as null), never 0.")
