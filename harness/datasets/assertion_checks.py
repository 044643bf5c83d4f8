"""Scoring one deterministic assertion against one answer: the checks of every type but
``llm-rubric``, by family, and the compiled forms they share.

:data:`CHECKS` maps each type of :data:`~harness.datasets.assertion_types.DETERMINISTIC` to its
check, a function ``check(assertion, view, case)`` returning ``(score, detail)``, or
``(None, reason)`` when the assertion is skipped (``latency-ms`` and ``cost`` when the call's
latency or price is unknown). The families:

- text: ``contains``, ``icontains`` (case folded), ``not-contains``, ``starts-with`` (leading
  whitespace ignored), ``equals`` (both sides stripped), ``regex`` (``re.search``);
- JSON: ``is-json`` and ``json-schema`` read :func:`json_text` of the answer (the stripped
  answer, or the content of the one fenced code block that is the whole answer); a schema's
  ``format`` keywords are checked, not only annotated;
- limits: ``max-words``, ``max-chars`` (of the stripped answer), ``references`` (the fraction
  found, ignoring case; the case's ``references`` when the assertion has no value),
  ``latency-ms`` and ``cost``.

The checks run once per model answer, thousands of times a second on large datasets: regular
expressions and JSON Schema validators are compiled once per pattern or schema
(``lru_cache``; :func:`compiled_regex`, a schema keyed by :func:`canonical_json`),
``jsonschema`` is imported only when the first validator is built, and an answer's folded,
stripped and parsed forms are computed at most once per answer (:class:`AnswerView`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness.datasets.assertion_types import QUOTE_CAP, Answer, AssertionSpec, CaseSpec, quote

# (score, detail), or (None, reason) when skipped.
Outcome = tuple[float | None, str]


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return f"{value:g}" if value.is_integer() else f"{value:.6g}"


_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n?(.*?)```\Z", re.DOTALL | re.IGNORECASE)


def json_text(answer: str) -> str:
    """The text ``is-json`` and ``json-schema`` parse: the stripped answer, or the content of
    the one fenced code block (```` ```json ```` or bare) that is the whole answer."""
    stripped = answer.strip()
    if stripped.startswith("```"):
        match = _FENCE.match(stripped)
        if match and "```" not in match.group(1):
            return match.group(1).strip()
    return stripped


class AnswerView:
    """One answer, with the forms assertions need computed at most once."""

    __slots__ = ("answer", "text", "_folded", "_stripped", "_json")

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.text = answer.text or ""
        self._folded: str | None = None
        self._stripped: str | None = None
        self._json: tuple[bool, Any] | None = None

    @property
    def folded(self) -> str:
        if self._folded is None:
            self._folded = self.text.casefold()
        return self._folded

    @property
    def stripped(self) -> str:
        if self._stripped is None:
            self._stripped = self.text.strip()
        return self._stripped

    def parsed_json(self) -> tuple[bool, Any]:
        """(True, value) or (False, why it does not parse)."""
        if self._json is None:
            candidate = json_text(self.text)
            if not candidate:
                self._json = (False, "empty answer")
            else:
                try:
                    self._json = (True, json.loads(candidate))
                except ValueError as exc:
                    self._json = (False, str(exc))
        return self._json


# --------------------------------------------------------------------------------------------
# Compiled forms, cached


@lru_cache(maxsize=4096)
def compiled_regex(pattern: str) -> re.Pattern[str]:
    """``re.compile(pattern)``, once per pattern. Raises ``re.error``."""
    return re.compile(pattern)


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces (the validator cache key)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class _SchemaCheck:
    validator: Any
    best_match: Callable[..., Any]
    field_path: Callable[..., str]

    def first_problem(self, instance: Any) -> str | None:
        error = self.best_match(self.validator.iter_errors(instance))
        if error is None:
            return None
        where = self.field_path(error.absolute_path)
        return f"{where}: {error.message}" if where else error.message


@lru_cache(maxsize=1024)
def _schema_check(canonical: str) -> _SchemaCheck:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    from harness._util.jsonschemas import field_path

    schema = json.loads(canonical)
    return _SchemaCheck(Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER),
                        best_match, field_path)


# --------------------------------------------------------------------------------------------
# Text


def _contains(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    found = a.value in view.text
    return (1.0, f"found {quote(a.value)}") if found else (0.0, f"missing {quote(a.value)}")


def _icontains(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    found = a.value.casefold() in view.folded
    return (1.0, f"found {quote(a.value)}") if found else (0.0, f"missing {quote(a.value)}")


def _not_contains(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    found = a.value in view.text
    return (0.0, f"contains {quote(a.value)}") if found else (1.0, f"no {quote(a.value)}")


def _starts_with(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    text = view.text
    if text.startswith(a.value) or text.lstrip().startswith(a.value):
        return 1.0, f"starts with {quote(a.value)}"
    head = view.stripped[: max(len(a.value), 20)]
    return 0.0, f"starts with {quote(head)}, not {quote(a.value)}"


def _equals(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    if view.stripped == a.value.strip():
        return 1.0, "equal"
    return 0.0, f"got {quote(view.stripped)}, expected {quote(a.value.strip())}"


def _regex(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    match = compiled_regex(a.value).search(view.text)
    if match is None:
        return 0.0, f"no match for /{a.value[:QUOTE_CAP]}/"
    return 1.0, f"matched {quote(match.group(0))}"


# --------------------------------------------------------------------------------------------
# JSON


def _is_json(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    ok, value = view.parsed_json()
    if not ok:
        return 0.0, f"not JSON: {value[:QUOTE_CAP]}"
    return 1.0, f"valid JSON ({_json_kind(value)})"


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _json_schema(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    ok, value = view.parsed_json()
    if not ok:
        return 0.0, f"not JSON: {value[:QUOTE_CAP]}"
    try:
        problem = _schema_check(canonical_json(a.value)).first_problem(value)
    except Exception as exc:  # a schema that cannot be applied ($ref that does not resolve, ...)
        return 0.0, f"schema could not be applied: {str(exc)[:QUOTE_CAP]}"
    if problem is None:
        return 1.0, "matches the schema"
    return 0.0, f"schema: {problem[: QUOTE_CAP * 2]}"


# --------------------------------------------------------------------------------------------
# Limits and references


def _max_words(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    words = len(view.text.split())
    limit = int(a.value)
    return (1.0, f"{words} words <= {limit}") if words <= limit else (0.0, f"{words} words > {limit}")


def _max_chars(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    chars = len(view.stripped)
    limit = int(a.value)
    return (1.0, f"{chars} chars <= {limit}") if chars <= limit else (0.0, f"{chars} chars > {limit}")


def _references(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    refs = a.value if a.value is not None else list(getattr(case, "references", None) or [])
    if not refs:
        return 0.0, "no references to look for (neither a value nor the case's references)"
    missing = [ref for ref in refs if ref.casefold() not in view.folded]
    found = len(refs) - len(missing)
    detail = f"{found}/{len(refs)} references found"
    if missing:
        shown = ", ".join(quote(ref, 40) for ref in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        detail += f": missing {shown}{more}"
    return found / len(refs), detail


def _latency(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    answer = view.answer
    if answer.latency_ms is None:
        return None, "latency unknown"
    ms = answer.latency_ms
    if ms <= a.value:
        return 1.0, f"{ms:.0f} ms <= {_number(a.value)} ms"
    return 0.0, f"{ms:.0f} ms > {_number(a.value)} ms"


def _cost(a: AssertionSpec, view: AnswerView, case: CaseSpec) -> Outcome:
    answer = view.answer
    if answer.cost_usd is None:
        return None, "cost unknown (unpriced model)"
    usd = answer.cost_usd
    if usd <= a.value:
        return 1.0, f"${usd:.6g} <= ${_number(a.value)}"
    return 0.0, f"${usd:.6g} > ${_number(a.value)}"


CHECKS: dict[str, Callable[[AssertionSpec, AnswerView, CaseSpec], Outcome]] = {
    "contains": _contains,
    "icontains": _icontains,
    "not-contains": _not_contains,
    "starts-with": _starts_with,
    "equals": _equals,
    "regex": _regex,
    "is-json": _is_json,
    "json-schema": _json_schema,
    "max-words": _max_words,
    "max-chars": _max_chars,
    "references": _references,
    "latency-ms": _latency,
    "cost": _cost,
}
