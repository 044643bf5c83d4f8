"""The fast path of JSON Schema validation: plain-Python rules that vouch for parts of a document.

Checking a long list with jsonschema (a dataset's test cases, a manifest's repositories) costs
a fraction of a millisecond an item, and importing jsonschema is itself a long import. The
dataset format (``harness/datasets/checks.py``) and the fleet manifest
(``harness/fleet/manifest_checks.py``) therefore write each part of their schema a second
time as rules in plain Python, built from the predicates here, and hand to
:func:`harness._util.jsonschemas.validate_long_list` only what the rules do not vouch for; jsonschema
then words the messages. A rule must never be laxer than its schema: each module's tests hold
its rules to jsonschema's verdict on many generated documents.

Numbers are JSON numbers. JSON has neither NaN nor an infinity, so a field whose schema asks
for a number (``"type": "number"`` or ``"integer"``) refuses them: YAML's ``.nan`` and
``.inf`` (and Python's ``json`` module's ``NaN`` and ``Infinity``) are refused by
:func:`is_number` here and by :func:`harness._util.jsonschemas.validate` alike, with the message
``nan is not of type 'number'`` at the field's path. Free-form mappings the schema does not
type (``metadata``, a manifest's ``custom``) keep whatever they hold.

The module also reads the unknown keys out of a jsonschema message and suggests the key one
looks like a misspelling of, for the messages of both formats.

Why it exists: jsonschema is neither imported nor run for plainly valid documents; the
1,000-repository manifest of the fleet benchmark loads in 0.025 s instead of 0.061 s
(docs/PERFORMANCE.md, "Cheaper cold checks").
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from typing import Any, Callable, Mapping

Rule = Callable[[Any], bool]

_UNKNOWN_KEYS = re.compile(r"unknown key\(s\) are not allowed \((.*) (?:was|were) unexpected\)", re.S)


def is_json_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number: an int or a finite float (a bool is neither)."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def is_number(value: Any, low: float | None = None, high: float | None = None, *,
              above: float | None = None) -> bool:
    """A JSON number within ``low <= value <= high`` and ``value > above`` (each when given)."""
    return (is_json_number(value)
            and (low is None or value >= low) and (high is None or value <= high)
            and (above is None or value > above))


def is_count(value: Any, low: int = 1, high: int | None = None) -> bool:
    """An int (not a bool, not a whole float) within ``low <= value <= high``."""
    return type(value) is int and value >= low and (high is None or value <= high)


def is_text(value: Any) -> bool:
    """A non-empty string."""
    return type(value) is str and value != ""


def is_texts(value: Any) -> bool:
    """A list of non-empty strings."""
    return type(value) is list and all(is_text(v) for v in value)


def plain_object(raw: Any, rules: Mapping[str, Rule]) -> bool:
    """A mapping whose every key has a rule in ``rules`` that vouches for its value."""
    return type(raw) is dict and all(k in rules and rules[k](v) for k, v in raw.items())


def unknown_keys(message: str) -> list[Any]:
    """The keys a jsonschema "unknown key(s) are not allowed" message names, in its order;
    empty for any other message."""
    match = _UNKNOWN_KEYS.fullmatch(message)
    if not match:
        return []
    try:
        names = ast.literal_eval(f"[{match.group(1)}]")
    except (ValueError, SyntaxError):
        return []
    return names if isinstance(names, list) else []


def suggestion(name: Any, known: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the known key ``name`` looks like, else `` (allowed: ...)``;
    empty when nothing is known."""
    if not known:
        return ""
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (allowed: {', '.join(known)})"
