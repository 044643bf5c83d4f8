import pytest

from textkit import format_duration, parse_duration


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_days():
    assert parse_duration("2d") == 172800


def test_garbage_is_refused():
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_format_round_trip():
    assert format_duration(parse_duration("1d2h3m")) == "1d2h3m"
