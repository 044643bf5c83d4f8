"""The package's JSON Schemas (``harness/schemas/*.schema.json``) and validation against them.

Errors are reported with the path of the offending field in the document, written the way a
person reads it (``persona.purpose``, ``documentation[2].url``), so a message can name both the
file and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable, Iterable

from harness._util.jsonschema_fast import is_json_number

if TYPE_CHECKING:  # jsonschema is imported when a document is first checked by it (a long import)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

_SCHEMA_FILES = ("template", "snapshot")


@dataclass(frozen=True)
class SchemaIssue:
    """One schema violation: where (``field``, "" for the document root) and what."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field or '(top level)'}: {self.message}"


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``harness/schemas/<name>.schema.json`` as a dict."""
    text = resources.files("harness").joinpath("schemas", f"{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _validator(name: str) -> "Draft202012Validator":
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    registry: Registry = Registry()
    for other in _SCHEMA_FILES:
        schema = load_schema(other)
        registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    # JSON has no NaN and no infinity: a number field refuses them (harness/_util/jsonschema_fast.py).
    types = Draft202012Validator.TYPE_CHECKER
    checker = types.redefine("number", lambda _, value: types.is_type(value, "number")
                             and (type(value) is not float or is_json_number(value)))
    validator = validators.extend(Draft202012Validator, type_checker=checker)
    return validator(load_schema(name), registry=registry)


def field_path(parts: Iterable[Any]) -> str:
    """``["documentation", 2, "url"]`` -> ``documentation[2].url``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


# The keywords an ``x-error`` may word, in order: it words the first of them its schema has.
_X_ERROR_KEYWORDS = ("oneOf", "anyOf", "not", "pattern", "additionalProperties")


def x_error_keyword(schema: Any) -> str | None:
    """The keyword whose failure a schema's ``x-error`` words, None without an ``x-error``.

    An ``x-error`` is a schema's own wording for the one rule it states: its combinator
    (``oneOf``, ``anyOf``, ``not``), else its ``pattern``, else its ``additionalProperties``.
    Any other keyword of the same schema that fails (an unknown key beside a ``not``, a wrong
    type beside a ``pattern``) is reported as it is, never in the rule's words."""
    if not isinstance(schema, dict) or not schema.get("x-error"):
        return None
    return next((keyword for keyword in _X_ERROR_KEYWORDS if keyword in schema), None)


def _describe(error: "ValidationError") -> SchemaIssue:
    path = list(error.absolute_path)
    if error.validator == "required":
        # Name the missing field itself: "persona" rather than "(top level)".
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return SchemaIssue(field_path([*path, missing]) if missing else field_path(path), "is required")
    keyword = x_error_keyword(error.schema)
    if keyword is not None and error.validator == keyword:
        return SchemaIssue(field_path(path), error.schema["x-error"])
    if error.validator == "additionalProperties":
        return SchemaIssue(field_path(path), error.message.replace("Additional properties", "unknown key(s)"))
    return SchemaIssue(field_path(path), error.message)


def validate(name: str, document: Any) -> list[SchemaIssue]:
    """Every violation of schema ``name`` by ``document``, sorted by field; empty when valid."""
    issues = [_describe(error) for error in _validator(name).iter_errors(document)]
    unique = {(i.field, i.message): i for i in issues}
    return sorted(unique.values(), key=lambda i: (i.field, i.message))


def validate_long_list(name: str, document: Any, key: str, plain: Callable[[Any], bool],
                       top_plain: Callable[[dict[str, Any]], bool] | None = None) -> list[SchemaIssue]:
    """:func:`validate` of a document with a long list under ``key`` (a dataset's test cases, a
    manifest's repositories), the same issues at the same paths in a fraction of the time.

    The items ``plain`` vouches for are left out of the check (one is kept, so that the list
    is not empty); ``plain`` must never accept an item the schema refuses. When every item is
    plain and ``top_plain`` vouches for the rest of the document, nothing is checked."""
    items = document.get(key) if isinstance(document, dict) else None
    if not isinstance(items, list) or not items:
        return validate(name, document)
    rest = [i for i, item in enumerate(items) if not plain(item)]
    if not rest and top_plain is not None and top_plain(document):
        return []
    checked = rest or [0]
    issues = validate(name, {**document, key: [items[i] for i in checked]})
    prefix = re.compile(rf"{re.escape(key)}\[(\d+)\]")
    out = []
    for issue in issues:
        match = prefix.match(issue.field)
        if match:
            issue = SchemaIssue(f"{key}[{checked[int(match.group(1))]}]{issue.field[match.end():]}", issue.message)
        out.append(issue)
    return sorted(out, key=lambda i: (i.field, i.message))
