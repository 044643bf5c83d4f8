"""Everyday reads: `bench prices` at 80 columns, `bench show --transcript` with tool calls,
`bench history --specialist` by bare or scoped name."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli.bench import main


def test_prices_fit_80_columns_with_every_price_in_full():
    from harness.cli.prices_cmd import _money
    from harness.pricing import load_price_table

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
