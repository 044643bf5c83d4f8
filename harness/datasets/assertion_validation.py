"""Checking one assertion of a dataset when the file is loaded: its type, its value for that
type, its weight and its threshold.

:func:`validate_assertion` returns one line saying everything wrong with an assertion
(problems joined by ``; ``, without its path in the file, which the dataset format adds), or
``None``. An unknown type is reported alone, with the closest known type
(``did you mean 'contains'?``) or, when none is close, the list of known types. The value
rules per type:

- ``contains``, ``icontains``, ``not-contains``, ``starts-with``, ``regex``, ``llm-rubric``: a
  non-empty string (``equals`` may be empty); a ``regex`` must compile; a rubric must not be
  blank;
- ``is-json``: no value;
- ``json-schema``: an object that is a valid Draft 2020-12 schema (checked against the
  metaschema once per schema);
- ``max-words``, ``max-chars``: a positive integer;
- ``references``: a non-empty list of non-empty strings, or no value (the case's
  ``references`` are then used, which only the case can check);
- ``latency-ms``: a number of milliseconds > 0; ``cost``: a number of USD >= 0.

The weight must be a number > 0 and a threshold, when given, a number from 0 to 1. The
values a message quotes are named by kind (``integer 42``, ``string 'x'``) and cut short.

Datasets that passed these checks are kept in the checked-documents cache: a change to what
they accept needs a new ``CACHE_VERSION`` in :mod:`harness.datasets.checked_cache`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from harness.datasets.assertion_checks import canonical_json, compiled_regex
from harness.datasets.assertion_types import ASSERTION_TYPES, AssertionSpec, is_number, quote
from harness._util.suggest import closest

_STRING_TYPES = frozenset({"contains", "icontains", "not-contains", "starts-with", "equals"})

# The likeness (difflib ratio) an unknown type needs to be offered as "did you mean": difflib's
# default, which these messages have always used.
_TYPE_CUTOFF = 0.6


def _describe(value: Any) -> str:
    """``integer 42``, ``string 'x'``: a value as a message names it."""
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"string {quote(value, 40)}"
    kind = {bool: "boolean", int: "integer", float: "number", list: "list", dict: "object"}.get(
        type(value), type(value).__name__)
    return f"{kind} {_short_json(value)}"


def _short_json(value: Any, cap: int = 40) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= cap else text[:cap] + "…"


@lru_cache(maxsize=1024)
def _schema_problem(canonical: str) -> str | None:
    """Why the schema (canonical JSON) is not a valid Draft 2020-12 schema, or None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from harness._util.jsonschemas import field_path

    try:
        Draft202012Validator.check_schema(json.loads(canonical))
    except SchemaError as exc:  # the most relevant error against the metaschema
        where = field_path(exc.absolute_path)
        return f"at {where}: {exc.message}" if where else exc.message
    return None


def validate_assertion(a: AssertionSpec) -> str | None:
    """What is wrong with assertion ``a`` (without its path in the file), or ``None``.

    Checks the type, the value's type and range for that type (a regex must compile, a JSON
    Schema must be a valid Draft 2020-12 schema, limits must be positive), the weight (> 0) and
    the threshold (0..1). ``references`` without a value is fine here: the case's
    ``references`` are then used, which only the case can check.
    """
    problems: list[str] = []
    kind, value = a.type, a.value
    if not isinstance(kind, str) or kind not in ASSERTION_TYPES:
        near = closest(str(kind), ASSERTION_TYPES, cutoff=_TYPE_CUTOFF)
        hint = f"; did you mean {near!r}?" if near is not None else f"; known: {', '.join(ASSERTION_TYPES)}"
        return f"unknown assertion type {kind!r}{hint}"
    problem = _value_problem(kind, value)
    if problem:
        problems.append(f"{kind}: {problem}")
    if not is_number(a.weight) or a.weight <= 0:
        problems.append(f"weight must be a number > 0 (got {_describe(a.weight)})")
    if a.threshold is not None and (not is_number(a.threshold) or not 0 <= a.threshold <= 1):
        problems.append(f"threshold must be a number from 0 to 1 (got {_describe(a.threshold)})")
    return "; ".join(problems) or None


def _value_problem(kind: str, value: Any) -> str | None:
    if kind in _STRING_TYPES or kind in ("regex", "llm-rubric"):
        if value is None:
            return "value is required (a string)"
        if not isinstance(value, str):
            return f"value must be a string (got {_describe(value)})"
        if not value and kind != "equals":
            return "value must not be empty"
        if kind == "regex":
            try:
                compiled_regex(value)
            except re.error as exc:
                return f"value {quote(value, 60)} is not a valid regular expression: {exc}"
        if kind == "llm-rubric" and not value.strip():
            return "value (the rubric) must not be blank"
        return None
    if kind == "is-json":
        return None if value is None else f"takes no value (got {_describe(value)})"
    if kind == "json-schema":
        if value is None:
            return "value is required (a JSON Schema object)"
        if not isinstance(value, dict):
            return f"value must be a JSON Schema object (got {_describe(value)})"
        try:
            canonical = canonical_json(value)
        except (TypeError, ValueError) as exc:
            return f"value is not JSON: {exc}"
        problem = _schema_problem(canonical)
        return None if problem is None else f"value is not a valid JSON Schema (Draft 2020-12): {problem}"
    if kind in ("max-words", "max-chars"):
        if value is None:
            return "value is required (a positive integer)"
        if not is_number(value) or (isinstance(value, float) and not value.is_integer()) or value <= 0:
            return f"value must be a positive integer (got {_describe(value)})"
        return None
    if kind == "references":
        if value is None:
            return None
        if not isinstance(value, list) or not value:
            return f"value must be a non-empty list of strings (got {_describe(value)})"
        bad = [i for i, ref in enumerate(value) if not isinstance(ref, str) or not ref.strip()]
        if bad:
            return f"value[{bad[0]}] must be a non-empty string (got {_describe(value[bad[0]])})"
        return None
    if kind == "latency-ms":
        if value is None:
            return "value is required (maximum milliseconds)"
        if not is_number(value) or value <= 0:
            return f"value must be a number of milliseconds > 0 (got {_describe(value)})"
        return None
    if kind == "cost":
        if value is None:
            return "value is required (maximum USD)"
        if not is_number(value) or value < 0:
            return f"value must be a number of USD >= 0 (got {_describe(value)})"
        return None
    return None
