"""The price table and the cost of a call."""

from __future__ import annotations

import datetime as dt
import json
import logging

import pytest
from click.testing import CliRunner

from harness.models.pricing import ModelPrice, PriceTable, cost_for_usage, load_price_table, price_for
from harness.models.providers.types import Usage


def test_every_row_has_source_date_and_non_negative_prices():
    table = load_price_table()
    assert table.version
    for row in table.rows:
        dt.date.fromisoformat(row.effective_date)
        if row.source == "local":
            # A model run on this machine: free, and the row must say why.
            assert row.provider == "openai-compatible" and row.note, row
            assert row.input == 0 and row.output == 0, row
        else:
            assert row.source.startswith("https://"), row
            assert row.input > 0 and row.output > 0, row
        assert all(v is None or v >= 0 for v in (row.cache_read, row.cache_write)), row


def test_table_covers_current_anthropic_openai_and_openrouter_models():
    for provider, model in [
        ("anthropic", "claude-sonnet-4-6"),
        ("anthropic", "claude-opus-4-1"),
        ("anthropic", "claude-haiku-4-5"),
        ("anthropic", "claude-3-7-sonnet-20250219"),
        ("anthropic", "claude-3-5-haiku-latest"),
        ("openai", "gpt-4o"),
        ("openai", "gpt-4o-mini"),
        ("openai", "gpt-4.1-nano"),
        ("openai", "o3-mini"),
        ("openrouter", "anthropic/claude-sonnet-4.5"),
        ("openrouter", "openai/gpt-4o-mini"),
    ]:
        assert price_for(provider, model) is not None, (provider, model)


def test_dated_snapshot_names_resolve_to_their_model():
    assert price_for("openai", "gpt-4o-mini-2024-07-18").model == "gpt-4o-mini"
    assert price_for("anthropic", "claude-sonnet-4-5-20250929").model == "claude-sonnet-4-5"
    assert price_for("openai", "gpt-4o-2099-01-01").model == "gpt-4o"


def test_cost_counts_input_output_and_cache_tokens_at_their_prices():
    usage = Usage(input_tokens=2_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    # Haiku 4.5: $1 in, $5 out, $0.10 cache read, $1.25 cache write.
    assert cost_for_usage("anthropic", "claude-haiku-4-5", usage) == pytest.approx(2 + 5 + 0.1 + 1.25)


def test_unknown_model_costs_none_with_a_warning_never_zero(caplog):
    with caplog.at_level(logging.WARNING, logger="harness.models.pricing"):
        assert cost_for_usage("openai", "gpt-imaginary-9", Usage(10, 10)) is None
    assert "gpt-imaginary-9" in caplog.text


def test_answered_model_falls_back_to_the_requested_name():
    assert cost_for_usage("openai", "weird-snapshot-name", Usage(1_000_000, 0), request_model="gpt-4o") == pytest.approx(2.5)


def test_the_row_in_force_is_the_latest_effective_on_that_day():
    old = ModelPrice("p", "m", "2024-01-01", "https://x", 10.0, 20.0)
    new = ModelPrice("p", "m", "2025-01-01", "https://x", 1.0, 2.0)
    table = PriceTable("t", (old, new))
    assert table.lookup("p", "m", dt.date(2024, 6, 1)) is old
    assert table.lookup("p", "m", dt.date(2025, 6, 1)) is new
    assert table.lookup("p", "m", dt.date(2023, 1, 1)) is old
    # Answers are remembered per day; remembering them changes neither the answers nor the value.
    assert [table.lookup("p", "m", dt.date(y, 6, 1)) for y in (2025, 2024, 2025)] == [new, old, new]
    assert table.lookup("p", "M ", dt.date(2025, 6, 1)) is new and table.lookup("q", "m") is None
    assert table == PriceTable("t", (old, new)) and hash(table) == hash(PriceTable("t", (old, new)))


def test_missing_cache_read_price_bills_cached_reads_at_input_price():
    row = ModelPrice("p", "m", "2024-01-01", "https://x", 2.0, 4.0, cache_read=None)
    assert row.cost(Usage(0, 0, cache_read_tokens=1_000_000)) == pytest.approx(2.0)


def test_bench_prices_json_filters_by_provider():
    from harness.cli.prices_cmd import prices

    result = CliRunner().invoke(prices, ["--provider", "openai", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["prices"] and {p["provider"] for p in data["prices"]} == {"openai"}
    mini = next(p for p in data["prices"] if p["model"] == "gpt-4o-mini")
    assert (mini["input"], mini["output"]) == (0.15, 0.6)


def test_bench_prices_table_and_unknown_provider():
    from harness.cli.prices_cmd import prices

    ok = CliRunner().invoke(prices, [])
    assert ok.exit_code == 0 and "claude-sonnet-4-6" in ok.output
    bad = CliRunner().invoke(prices, ["--provider", "nope"])
    assert bad.exit_code != 0 and "no prices for provider 'nope'" in bad.output
