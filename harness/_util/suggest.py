"""The "did you mean" of error messages: the known word closest to a misspelt one.

Standard library only, so that any layer may use it (the scenario loader, the agent registry).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: How alike a word and a known one must be (``difflib`` ratio) to be suggested: above
#: difflib's 0.6, which offers ``openai`` for ``nope``; a wrong suggestion is worse than none.
CUTOFF = 0.7


def closest(word: str, known: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The known word most like ``word``, or None when none is close enough."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str], cutoff: float = CUTOFF) -> str:
    """`` (did you mean 'x'?)`` for the known word closest to ``word``; empty when none is close."""
    near = closest(word, known, cutoff)
    return f" (did you mean {near!r}?)" if near is not None else ""
