import pytest

from textkit import truncate, word_count


def test_short_text_is_kept():
    assert truncate("short", 10) == "short"


def test_negative_width_is_refused():
    with pytest.raises(ValueError):
        truncate("text", -1)


def test_word_count():
    assert word_count("one two  three\nfour") == 4
