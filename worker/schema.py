"""The request bodies the worker accepts, declared once.

The same declarations validate incoming JSON (clear 400s naming the field) and produce the
JSON Schemas published in ``/openapi.json``, so the description cannot drift from what the
routes really accept.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from worker.messages import HttpError

RUN_STATUSES = ("completed", "failed", "timeout", "budget_exceeded", "error")
FAILURE_CLASSES = ("agent", "validation", "judge", "tampered", "infra", "harness")
EVALUATION_STATUSES = ("ok", "skipped", "error")
# Ids are chosen by users too (``--batch-id``): any printable text without surrounding
# spaces; clients percent-encode them in paths.
ID_PATTERN = r"^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]{0,126}[^\s\x00-\x1f\x7f])?$"

MAX_DEPTH = 32
MAX_NAME = 200
MAX_DETAILS_BYTES = 256 * 1024
MAX_METADATA_BYTES = 64 * 1024
MAX_EVALUATIONS = 500
MAX_LATENCIES = 10_000
MAX_DIFF_CHARS = 1024 * 1024


@dataclass(frozen=True)
class Field:
    """One JSON property. ``kind`` is a JSON Schema type name, or ``"any"``."""

    name: str
    kind: str
    required: bool = False
    nullable: bool = False
    default: Any = None
    max_length: int | None = None  # strings: characters; arrays: items; objects/any: JSON bytes
    enum: tuple[str, ...] | None = None
    pattern: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    item: Any = None  # Field for array items, or a tuple of Fields for object items
    description: str = ""


def _id(name: str, **kw: Any) -> Field:
    return Field(name, "string", max_length=128, pattern=ID_PATTERN, **kw)


def _name(name: str, **kw: Any) -> Field:
    return Field(name, "string", max_length=MAX_NAME, **kw)


def _count(name: str) -> Field:
    return Field(name, "integer", default=0, minimum=0)


EVALUATION_FIELDS = (
    _name("evaluatorName", required=True),
    Field("score", "number", required=True, minimum=0),
    Field("maxScore", "number", default=1.0, minimum=0),
    Field("status", "string", default="ok", enum=EVALUATION_STATUSES),
    Field("details", "any", nullable=True, max_length=MAX_DETAILS_BYTES,
          description="A string or any JSON value; returned as posted."),
)

TELEMETRY_FIELDS = (
    _count("toolCalls"),
    _count("tokensIn"),
    _count("tokensOut"),
    _count("cacheReadTokens"),
    _count("cacheWriteTokens"),
    Field("costUsd", "number", nullable=True, minimum=0),
    _count("judgeTokensIn"),
    _count("judgeTokensOut"),
    Field("judgeCostUsd", "number", nullable=True, minimum=0),
    _count("turns"),
    Field("durationMs", "number", default=0, minimum=0),
    Field("latenciesMs", "array", default=(), max_length=MAX_LATENCIES,
          item=Field("latency", "number", required=True, minimum=0)),
    Field("workspaceDir", "string", nullable=True, max_length=1024),
)

RUN_FIELDS = (
    _id("runId", required=True),
    _id("batchId", nullable=True),
    _name("suite", required=True),
    _name("scenario", required=True),
    _name("tier", required=True),
    _name("agent", required=True),
    _name("model", nullable=True),
    Field("status", "string", default="completed", enum=RUN_STATUSES),
    Field("failureClass", "string", nullable=True, enum=FAILURE_CLASSES),
    Field("startedAt", "string", nullable=True, max_length=64, description="ISO 8601"),
    Field("completedAt", "string", nullable=True, max_length=64, description="ISO 8601"),
    Field("totalScore", "number", nullable=True, minimum=0, maximum=1),
    Field("weightedScore", "number", nullable=True, minimum=0),
    Field("isSuccessful", "boolean", default=False),
    Field("successMetric", "number", nullable=True),
    Field("specialistEnabled", "boolean", default=False),
    _name("specialistName", nullable=True),
    _name("specialistVersion", nullable=True),
    Field("configHash", "string", nullable=True, max_length=128),
    Field("metadata", "object", default=None, nullable=True, max_length=MAX_METADATA_BYTES),
    Field("evaluations", "array", default=(), max_length=MAX_EVALUATIONS, item=EVALUATION_FIELDS),
    Field("telemetry", "object", nullable=True, item=TELEMETRY_FIELDS),
    Field("transcript", "array", nullable=True, item=Field("message", "object", required=True),
          description="Messages and tool calls; stored apart from the run and size-capped."),
    Field("diff", "string", nullable=True, max_length=MAX_DIFF_CHARS,
          description="The workspace's unified diff against the fixture; stored apart from the run."),
)

BATCH_FIELDS = (
    _id("batchId", required=True),
    Field("createdAt", "integer", nullable=True, minimum=0, description="unix ms"),
    Field("completedAt", "integer", nullable=True, minimum=0, description="unix ms"),
    Field("totalRuns", "integer", nullable=True, minimum=0,
          description="Accepted for compatibility; the server computes aggregates from stored runs."),
    Field("successfulRuns", "integer", nullable=True, minimum=0, description="Ignored, see totalRuns."),
    Field("avgScore", "number", nullable=True, description="Ignored, see totalRuns."),
    Field("avgWeightedScore", "number", nullable=True, description="Ignored, see totalRuns."),
    Field("metadata", "object", nullable=True, max_length=MAX_METADATA_BYTES),
)

# Load tests of model endpoints (``bench stress``): the harness computes the figures, the
# worker stores them. Profiles are names, not an enum, so a newer harness's profile is stored
# by an older worker.
STRESS_STATUSES = ("completed", "interrupted", "budget_exceeded", "failed")
MAX_STRESS_CONFIG_BYTES = 16 * 1024
MAX_STRESS_SUMMARY_BYTES = 32 * 1024
MAX_STRESS_STEPS = 1000
MAX_STRESS_STEP_BYTES = 8 * 1024

STRESS_FIELDS = (
    _id("id", required=True),
    _name("provider", required=True),
    _name("model", required=True),
    _name("profile", required=True, description="ramp, sustained, spike, large-input, rate-limit, "
                                                  "failure-recovery"),
    Field("status", "string", default="completed", enum=STRESS_STATUSES),
    Field("startedAt", "string", nullable=True, max_length=64, description="ISO 8601"),
    Field("completedAt", "string", nullable=True, max_length=64, description="ISO 8601"),
    Field("config", "object", nullable=True, max_length=MAX_STRESS_CONFIG_BYTES,
          description="The test's settings, as the harness chose them."),
    Field("summary", "object", nullable=True, max_length=MAX_STRESS_SUMMARY_BYTES,
          description="Totals, knee, breaking point, recovery and resilience (docs/analysis.md)."),
    Field("steps", "array", default=(), max_length=MAX_STRESS_STEPS,
          item=Field("step", "object", required=True, max_length=MAX_STRESS_STEP_BYTES),
          description="One object per step: load, requests, throughput, latency and errors."),
)


# ---------------------------------------------------------------------------------- parsing

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_body(body: bytes) -> Any:
    """Decode a request body, refusing invalid UTF-8/JSON, NaN/Infinity and deep nesting."""
    if not body:
        raise HttpError(400, "empty body", "a JSON object is required")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpError(400, "body is not UTF-8", str(exc)) from None
    if json_too_deep(text):
        raise HttpError(400, "JSON nested too deeply", f"more than {MAX_DEPTH} levels of arrays/objects")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise HttpError(400, "invalid JSON", str(exc)) from None


_STRING_LITERALS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, its escapes kept whole
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def json_too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """True when brackets outside strings nest deeper than ``limit``; checked before parsing
    so that a hostile body cannot exhaust the parser's recursion."""
    if text.count("[") + text.count("{") <= limit:
        return False  # too few brackets to get there
    # String literals go first (brackets inside them do not count), then all but the brackets:
    # the loop below sees the brackets alone, a small part of a body of many strings.
    depth = 0
    for ch in _NOT_BRACKETS.sub("", _STRING_LITERALS.sub("", text)):
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


# ------------------------------------------------------------------------------- validation

def validate_object(fields: tuple[Field, ...], value: Any, where: str = "body") -> dict[str, Any]:
    """Check ``value`` against ``fields``; return it with defaults filled in.

    Unknown properties are dropped (older and newer clients keep working). Raises
    :class:`HttpError` 400 naming the first offending field.
    """
    if not isinstance(value, dict):
        raise HttpError(400, f"{where} must be a JSON object", f"got {_json_type(value)}")
    out: dict[str, Any] = {}
    for f in fields:
        path = f"{where}.{f.name}" if where != "body" else f.name
        if f.name not in value or value[f.name] is None:
            if f.required:
                raise HttpError(400, f"missing field: {path}", f"{path} is required")
            # An optional field sent as null means the same as leaving it out.
            out[f.name] = list(f.default) if isinstance(f.default, tuple) else f.default
            continue
        out[f.name] = _check(f, value[f.name], path)
    return out


def _check(f: Field, v: Any, path: str) -> Any:
    kind = f.kind
    if kind == "string":
        if not isinstance(v, str):
            raise _type_error(path, "a string", v)
        if f.max_length is not None and len(v) > f.max_length:
            raise HttpError(400, f"field too long: {path}", f"at most {f.max_length} characters")
        if f.required and not v.strip():
            raise HttpError(400, f"empty field: {path}", f"{path} must not be empty")
        if f.enum is not None and v not in f.enum:
            raise HttpError(400, f"invalid value for {path}", f"one of {', '.join(f.enum)}; got {v!r}")
        if f.pattern is not None and not _matches_id(v):
            raise HttpError(400, f"invalid value for {path}",
                            "1 to 128 printable characters, no control characters, "
                            "no leading or trailing space")
        return v
    if kind in ("number", "integer"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _type_error(path, "a number" if kind == "number" else "an integer", v)
        if kind == "integer" and isinstance(v, float):
            if not v.is_integer():
                raise _type_error(path, "an integer", v)
            v = int(v)
        if isinstance(v, float) and not math.isfinite(v):
            raise _type_error(path, "a finite number", v)
        if f.minimum is not None and v < f.minimum:
            raise HttpError(400, f"out of range: {path}", f"must be >= {f.minimum}; got {v}")
        if f.maximum is not None and v > f.maximum:
            raise HttpError(400, f"out of range: {path}", f"must be <= {f.maximum}; got {v}")
        if kind == "integer" and abs(v) > 2**53:
            # D1 hands integers to JavaScript as doubles; larger values would lose precision.
            raise HttpError(400, f"out of range: {path}", "integers must fit in 53 bits")
        return v
    if kind == "boolean":
        if not isinstance(v, bool):
            raise _type_error(path, "true or false", v)
        return v
    if kind == "object":
        if not isinstance(v, dict):
            raise _type_error(path, "an object", v)
        if isinstance(f.item, tuple):
            return validate_object(f.item, v, path)
        _check_size(f, v, path)
        return v
    if kind == "array":
        if not isinstance(v, list):
            raise _type_error(path, "an array", v)
        if f.max_length is not None and len(v) > f.max_length:
            raise HttpError(400, f"too many items: {path}", f"at most {f.max_length}")
        if isinstance(f.item, tuple):
            return [validate_object(f.item, x, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(f.item, Field):
            return [_check(f.item, x, f"{path}[{i}]") for i, x in enumerate(v)]
        return v
    if kind == "any":
        _check_size(f, v, path)
        return v
    raise AssertionError(f"unknown field kind {kind}")


def _check_size(f: Field, v: Any, path: str) -> None:
    if f.max_length is None:
        return
    size = len(json.dumps(v, ensure_ascii=False).encode("utf-8"))
    if size > f.max_length:
        raise HttpError(400, f"field too large: {path}", f"{size} bytes of JSON; at most {f.max_length}")


def id_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a run or batch id, or None when it is a valid one."""
    if not value:
        return "an id cannot be empty"
    if len(value) > 128:
        return f"an id has at most 128 characters; this one has {len(value)}"
    if value != value.strip():
        return "an id cannot start or end with spaces"
    if _CONTROL.search(value):
        return "an id cannot contain control characters"
    return None


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _matches_id(v: str) -> bool:
    if not v or len(v) > 128 or v != v.strip():
        return False
    return _CONTROL.search(v) is None


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _type_error(path: str, expected: str, v: Any) -> HttpError:
    return HttpError(400, f"invalid type for {path}", f"expected {expected}, got {_json_type(v)}")


# ------------------------------------------------------------------------------ JSON Schema

def json_schema(fields: tuple[Field, ...]) -> dict[str, Any]:
    """The JSON Schema (2020-12, as used by OpenAPI 3.1) of an object made of ``fields``."""
    return {
        "type": "object",
        "required": [f.name for f in fields if f.required],
        "properties": {f.name: _field_schema(f) for f in fields},
        "additionalProperties": True,
    }


def _field_schema(f: Field) -> dict[str, Any]:
    s: dict[str, Any]
    if f.kind == "object" and isinstance(f.item, tuple):
        s = json_schema(f.item)
    elif f.kind == "array":
        if isinstance(f.item, tuple):
            items = json_schema(f.item)
        elif isinstance(f.item, Field):
            items = _field_schema(f.item)
        else:
            items = {}
        s = {"type": "array", "items": items}
        if f.max_length is not None:
            s["maxItems"] = f.max_length
    elif f.kind == "any":
        s = {}
    else:
        s = {"type": f.kind}
        if f.kind == "string" and f.max_length is not None:
            s["maxLength"] = f.max_length
        if f.kind == "string" and f.required:
            s["pattern"] = r"\S"  # not empty, not only spaces
        if f.kind == "integer":  # D1 hands integers to JavaScript as doubles
            s["minimum"], s["maximum"] = -(2**53), 2**53
    if f.enum is not None:
        s["enum"] = list(f.enum)
    if f.pattern is not None:
        s["pattern"] = f.pattern
    if f.minimum is not None:
        s["minimum"] = f.minimum
    if f.maximum is not None:
        s["maximum"] = f.maximum
    if (f.nullable or not f.required) and "type" in s:
        s["type"] = [s["type"], "null"]
        if "enum" in s:
            s["enum"] = [*s["enum"], None]
    if f.description:
        s["description"] = f.description
    return s
