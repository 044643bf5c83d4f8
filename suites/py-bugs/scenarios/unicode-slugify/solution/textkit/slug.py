"""URL slugs for article titles."""

from __future__ import annotations

import re
import unicodedata

# Letters that Unicode decomposition (NFKD) leaves alone but that have a common ASCII spelling.
_TRANSLITERATIONS = {
    "ß": "ss",
    "ẞ": "ss",
    "æ": "ae",
    "Æ": "ae",
    "ø": "o",
    "Ø": "o",
    "œ": "oe",
    "Œ": "oe",
    "đ": "d",
    "Đ": "d",
    "ł": "l",
    "Ł": "l",
    "þ": "th",
    "Þ": "th",
}
# Apostrophes join the parts of a word ("don't" -> "dont") instead of separating them.
_APOSTROPHES = re.compile("['\u2019\u02bc]")


def _ascii_fold(text: str) -> str:
    text = "".join(_TRANSLITERATIONS.get(ch, ch) for ch in text)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words(text: str) -> list[str]:
    folded = _APOSTROPHES.sub("", _ascii_fold(text)).lower()
    return re.findall(r"[a-z0-9]+", folded)


def _join_within(words: list[str], separator: str, max_length: int | None) -> str:
    if max_length is None:
        return separator.join(words)
    if max_length < 1:
        return ""
    out = ""
    for word in words:
        candidate = word if not out else out + separator + word
        if len(candidate) > max_length:
            break
        out = candidate
    if not out and words:
        # The first word alone is too long: cutting it is the only way to fit.
        out = words[0][:max_length]
    return out


def slugify(text: str, *, separator: str = "-", max_length: int | None = None) -> str:
    """Turn a title into a URL slug: lowercase ASCII letters and digits joined by ``separator``.

    Accented letters are folded to ASCII, apostrophes are dropped, every other run of
    characters becomes one separator. With ``max_length`` the slug is cut at a word
    boundary (a single over-long first word is cut hard); it never ends with a separator.
    """
    return _join_within(_words(text), separator, max_length)


def unique_slug(text: str, existing: set[str], *, separator: str = "-", max_length: int | None = None) -> str:
    """A slug for ``text`` that is not in ``existing``, adding ``-2``, ``-3``, ... when needed.

    The counter counts toward ``max_length``: the base is shortened to make room for it.
    """
    words = _words(text)
    base = _join_within(words, separator, max_length)
    if base not in existing:
        return base
    n = 2
    while True:
        suffix = f"{separator}{n}"
        room = None if max_length is None else max_length - len(suffix)
        stem = _join_within(words, separator, room) if room is None or room > 0 else ""
        candidate = f"{stem}{suffix}" if stem else str(n)
        if candidate not in existing:
            return candidate
        n += 1
