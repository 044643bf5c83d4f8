import pytest

from textkit import slugify, unique_slug


@pytest.mark.parametrize(
    "title, expected",
    [
        ("  --Already--Sluggy--  ", "already-sluggy"),
        ("ÀÉÎÕÜ Ç Ñ", "aeiou-c-n"),
        ("Łódź & Gdańsk", "lodz-gdansk"),
        ("Œuvre complète", "oeuvre-complete"),
        ("Python 3.11 — What’s new?", "python-3-11-whats-new"),
        ("ﬁle ligature", "file-ligature"),
        ("東京", ""),
        ("", ""),
    ],
)
def test_folding_and_separators(title, expected):
    assert slugify(title) == expected


def test_custom_separator():
    assert slugify("Crème brûlée, again", separator="_") == "creme_brulee_again"


def test_max_length_cuts_at_a_word_boundary():
    assert slugify("The quick brown fox", max_length=12) == "the-quick"
    assert slugify("The quick brown fox", max_length=15) == "the-quick-brown"
    assert slugify("The quick brown fox", max_length=100) == "the-quick-brown-fox"


def test_max_length_never_leaves_a_trailing_separator():
    for n in range(1, 25):
        slug = slugify("alpha beta gamma delta", max_length=n)
        assert len(slug) <= n
        assert not slug.endswith("-")


def test_over_long_first_word_is_cut_hard():
    assert slugify("Supercalifragilistic word", max_length=5) == "super"


def test_unique_slug_returns_base_when_free():
    assert unique_slug("Fresh Title", {"other"}) == "fresh-title"


def test_unique_slug_counter_fits_max_length():
    existing = {"the-quick-brown"}
    slug = unique_slug("The quick brown fox", existing, max_length=15)
    assert slug == "the-quick-2"
    assert len(slug) <= 15


def test_unique_slug_uses_separator_for_counter():
    assert unique_slug("a b", {"a_b"}, separator="_") == "a_b_2"
