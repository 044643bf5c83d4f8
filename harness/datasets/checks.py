"""The checks of a dataset document and its resolution into a :class:`~harness.datasets.model.Dataset`.

:func:`parse_dataset` checks a parsed document and reports every problem at once in one
:class:`~harness.datasets.model.DatasetError` (``test_cases[3].prompt: is required``), sorted
by field (test case numbers in numeric order), with the file line of each case for ``.jsonl``
and ``.csv``: the schema ``harness/schemas/dataset.schema.json`` (an unknown key named by its
own path, with a suggestion for a typo; an unknown assertion type likewise), every undefined
variable of each case's id and prompt, duplicate ids once rendered, the values of assertions
(``harness.datasets.assertion_validation.validate_assertion``) and a ``references``
assertion on a case without references.

The schema's fast path: cases (and the document's other keys) that plain-Python rules vouch
for skip jsonschema (:func:`_schema_issues`); the rules are built from
:mod:`harness._util.jsonschema_fast`, never laxer than the schema (``tests/test_dataset_format.py``
holds them to it). A NaN or an infinity where the schema asks for a number is refused.

Resolution (:func:`_resolve`): ids and prompts rendered, the system prompt (the case's, else
the dataset's ``system``, else ``defaults.system``), the generation parameters (the case's
``config`` over ``defaults``), ``repeat``, ``threshold``, and the assertions with the
``expected`` shorthand first. :func:`_resolve_checked` resolves a document that passed every
check before (from the checked-documents cache) without checking it again.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from harness.datasets.model import (
    DEFAULT_CATEGORY,
    Assertion,
    Dataset,
    DatasetError,
    TestCase,
    _stop,
    _text,
    _version,
    document_digest,
    placeholders,
    render,
)
from harness._util.jsonschema_fast import (
    is_count,
    is_json_number,
    is_number,
    is_text,
    is_texts,
    plain_object,
    suggestion,
    unknown_keys,
)
from harness._util.jsonschemas import SchemaIssue, load_schema, validate_long_list

_FALSE_SCHEMA = re.compile(r"False schema does not allow .*", re.S)
_CASE_PATH = re.compile(r"test_cases\[(\d+)\]")
_ASSERTION_TYPE_PATH = re.compile(r"test_cases\[\d+\]\.assert\[\d+\]\.type")


# --- the schema's messages -------------------------------------------------------------------


@lru_cache(maxsize=None)
def _known_keys() -> dict[str, tuple[str, ...]]:
    """The keys the schema allows in each kind of object (for unknown-key suggestions)."""
    schema = load_schema("dataset")
    defs = schema["$defs"]
    return {name: tuple(part["properties"]) for name, part in (
        ("top", schema), ("defaults", defs["defaults"]), ("case", defs["testCase"]),
        ("config", defs["config"]), ("assertion", defs["assertion"]))}


_KEY_CONTEXTS = (
    (re.compile(r""), "top"),
    (re.compile(r"defaults"), "defaults"),
    (re.compile(r"test_cases\[\d+\]"), "case"),
    (re.compile(r"test_cases\[\d+\]\.config"), "config"),
    (re.compile(r"test_cases\[\d+\]\.assert\[\d+\]"), "assertion"),
)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _describe(issue: SchemaIssue) -> list[str]:
    """The problem lines of one schema issue: one per unknown key, named by its own path."""
    names = unknown_keys(issue.message)
    if names:
        context = next((kind for pattern, kind in _KEY_CONTEXTS if pattern.fullmatch(issue.field)), None)
        known = _known_keys().get(context or "", ())
        return [f"{_join(issue.field, name)}: unknown key{suggestion(name, known)}" for name in names]
    if _ASSERTION_TYPE_PATH.fullmatch(issue.field) and " is not one of " in issue.message:
        kinds = load_schema("dataset")["$defs"]["assertion"]["properties"]["type"]["enum"]
        name = issue.message.split(" is not one of ", 1)[0]
        return [f"{issue.field}: unknown assertion type {name}{suggestion(name.strip(chr(39)), kinds)}"]
    if _FALSE_SCHEMA.fullmatch(issue.message):  # only `value` of is-json is `false` in the schema
        field_path = issue.field.removesuffix(".value")
        return [f"{field_path}.value: is not allowed: this assertion type takes no value"]
    return [str(issue)]


# --- the fast path of schema validation ------------------------------------------------------
#
# jsonschema takes a quarter to half a millisecond per test case: seconds for a large dataset.
# Cases that plainly satisfy the schema's testCase (checked below in plain Python, and only
# ever more strictly than the schema) skip it; every other case goes through the schema, which
# words the messages. tests/test_dataset_format.py checks that the fast path never vouches
# for a case the schema refuses.

def _is_stop(value: Any) -> bool:
    return type(value) is str or (type(value) is list and all(type(v) is str for v in value))


_NONBLANK = re.compile(r"\S")
_CONFIG_RULES: dict[str, Callable[[Any], bool]] = {
    "model": is_text,
    "temperature": lambda v: is_number(v, 0),
    "max_tokens": is_count,
    "top_p": lambda v: is_number(v, 0, 1),
    "stop": _is_stop,
}
# Assertion type -> (is `value` required, the rule of `value`); None: `value` is not allowed.
_VALUE_RULES: dict[str, tuple[bool, Callable[[Any], bool]] | None] = {
    **{kind: (True, is_text) for kind in ("contains", "icontains", "not-contains", "starts-with",
                                          "regex", "llm-rubric")},
    "equals": (True, lambda v: type(v) is str),
    "is-json": None,
    "json-schema": (True, lambda v: type(v) is dict),
    "max-words": (True, is_count),
    "max-chars": (True, is_count),
    "references": (False, lambda v: is_texts(v) and len(v) > 0),
    "latency-ms": (True, lambda v: is_number(v, above=0)),
    "cost": (True, lambda v: is_number(v, 0)),
}


def _plain_assertion(item: Any) -> bool:
    if type(item) is not dict or not item.keys() <= {"type", "value", "weight", "threshold"}:
        return False
    kind = item.get("type")
    if type(kind) is not str or kind not in _VALUE_RULES:
        return False
    rule = _VALUE_RULES[kind]
    if rule is None:
        if "value" in item:
            return False
    elif "value" in item:
        if not rule[1](item["value"]):
            return False
    elif rule[0]:
        return False
    return (("weight" not in item or is_number(item["weight"], above=0))
            and ("threshold" not in item or is_number(item["threshold"], 0, 1)))


_CASE_RULES: dict[str, Callable[[Any], bool]] = {
    "id": is_text,
    "category": is_text,
    "prompt": lambda v: type(v) is str and _NONBLANK.search(v) is not None,
    "variables": lambda v: type(v) is dict and all(type(x) in (str, bool) or is_json_number(x) for x in v.values()),
    "expected": lambda v: type(v) is str,
    "references": is_texts,
    "config": lambda v: plain_object(v, _CONFIG_RULES),
    "metadata": lambda v: type(v) is dict,
    "system": lambda v: type(v) is str,
    "assert": lambda v: type(v) is list and all(_plain_assertion(a) for a in v),
    "repeat": is_count,
    "threshold": lambda v: is_number(v, 0, 1),
}


def _plain_case(case: Any) -> bool:
    """True only when ``case`` certainly satisfies the schema's testCase."""
    return (type(case) is dict and "id" in case and "prompt" in case
            and all(k in _CASE_RULES and _CASE_RULES[k](v) for k, v in case.items()))


_DEFAULTS_RULES: dict[str, Callable[[Any], bool]] = {
    "temperature": lambda v: is_number(v, 0),
    "max_tokens": is_count,
    "top_p": lambda v: is_number(v, 0, 1),
    "stop": _is_stop,
    "system": lambda v: type(v) is str,
    "threshold": lambda v: is_number(v, 0, 1),
}
_TOP_RULES: dict[str, Callable[[Any], bool]] = {
    "$schema": lambda v: type(v) is str,
    "name": is_text,
    "version": lambda v: type(v) is str or is_json_number(v),
    "description": lambda v: type(v) is str,
    "defaults": lambda v: plain_object(v, _DEFAULTS_RULES),
    "metadata": lambda v: type(v) is dict,
    "system": lambda v: type(v) is str,
}


def _plain_top(document: dict[str, Any]) -> bool:
    """True only when every key of ``document`` but ``test_cases`` certainly satisfies the schema."""
    return "name" in document and all(k == "test_cases" or (k in _TOP_RULES and _TOP_RULES[k](v))
                                      for k, v in document.items())


def _schema_issues(document: Any) -> list[SchemaIssue]:
    """``validate("dataset", document)``, with the plainly valid test cases left out of it (and
    no jsonschema at all when the rest of the document is plainly valid too)."""
    return validate_long_list("dataset", document, "test_cases", _plain_case, _plain_top)


# --- checking and resolving ------------------------------------------------------------------

def _prefixes(fields: list[str]) -> set[str]:
    """Every field path and each of its ancestors: ``a[1].b`` -> {a, a[1], a[1].b}."""
    out: set[str] = set()
    for path in fields:
        out.add(path)
        for match in re.finditer(r"[.\[]", path):
            out.add(path[: match.start()])
    return out


def _natural_key(problem: str) -> list[Any]:
    path = problem.split(": ", 1)[0]
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", path))]


def _assertion_checker() -> Callable[[Assertion], str | None]:
    """The check of assertion values, imported when a document is first checked: resolving a
    document from the checked-documents cache needs none of the grading module."""
    from harness.datasets.assertion_validation import validate_assertion

    return validate_assertion


def _missing(names: list[str], variables: dict[str, Any]) -> str:
    defined = f"the case defines {', '.join(variables)}" if variables else "the case has no variables"
    return f"undefined variable{'' if len(names) == 1 else 's'} {', '.join(names)} ({defined})"


def _build_assertion(raw: dict[str, Any], references: Any) -> Assertion:
    value = raw.get("value")
    if raw["type"] == "references" and value is None:
        value = list(references or [])
    threshold = raw.get("threshold")
    return Assertion(type=raw["type"], value=value, weight=float(raw.get("weight", 1.0)),
                     threshold=None if threshold is None else float(threshold))


def parse_dataset(document: Any, source: str, *, lines: list[int] | None = None) -> Dataset:
    """Check ``document`` (a parsed dataset file) and resolve it into a :class:`Dataset`.

    Raises :class:`DatasetError` with every problem found (see the module docstring).
    ``source`` names the document in messages and becomes :attr:`Dataset.source`; ``lines``
    (for documents read from .jsonl and .csv) gives the file line of each test case, added to
    the messages about it.
    """
    issues = _schema_issues(document)
    problems = [line for issue in issues for line in _describe(issue)]
    if not isinstance(document, dict) or not isinstance(document.get("test_cases"), list):
        raise DatasetError(source, _with_lines(problems, lines))
    broken = _prefixes([issue.field for issue in issues])
    check_value = _assertion_checker()
    seen: dict[str, int] = {}
    built: dict[int, list[Assertion]] = {}
    for i, raw in enumerate(document["test_cases"]):
        if not isinstance(raw, dict):
            continue
        path = f"test_cases[{i}]"
        variables = raw.get("variables")
        variables = variables if isinstance(variables, dict) else {}
        rendered_id = None
        for key in ("id", "prompt"):
            text = raw.get(key)
            if not isinstance(text, str):
                continue
            missing = [name for name in placeholders(text) if name not in variables]
            if missing:
                problems.append(f"{path}.{key}: {_missing(missing, variables)}")
            elif key == "id":
                rendered_id = render(text, variables)
        if rendered_id is not None:
            if rendered_id in seen:
                problems.append(f"{path}.id: duplicate id {rendered_id!r} (also test_cases[{seen[rendered_id]}])")
            else:
                seen[rendered_id] = i
        asserts = raw.get("assert")
        if not isinstance(asserts, list):
            continue
        built[i] = []
        for j, item in enumerate(asserts):
            apath = f"{path}.assert[{j}]"
            if apath in broken or not isinstance(item, dict):
                continue
            if item["type"] == "references" and item.get("value") is None and not raw.get("references"):
                problems.append(f"{apath}: a references assertion needs a value, or references in its case")
                continue
            assertion = _build_assertion(item, raw.get("references"))
            message = check_value(assertion)
            if message:
                problems.append(f"{apath}.value: {message}")
            built[i].append(assertion)
    if problems:
        problems.sort(key=_natural_key)
        raise DatasetError(source, _with_lines(problems, lines))
    return _resolve(document, source, built)


def _with_lines(problems: list[str], lines: list[int] | None) -> list[str]:
    if not lines:
        return problems
    out = []
    for problem in problems:
        match = _CASE_PATH.match(problem)
        index = int(match.group(1)) if match else -1
        out.append(f"{problem} (line {lines[index]})" if 0 <= index < len(lines) else problem)
    return out


def _resolve(document: dict[str, Any], source: str, built: dict[int, list[Assertion]],
             digest: str | None = None) -> Dataset:
    """The :class:`Dataset` of a checked document (``digest``: its digest, when known)."""
    defaults = dict(document.get("defaults") or {})
    dataset_system = document.get("system", defaults.get("system"))
    cases = []
    default_threshold = defaults.get("threshold")
    for i, raw in enumerate(document["test_cases"]):
        given = raw.get("variables")
        variables = {str(k): _text(v) for k, v in given.items()} if given else {}
        config = raw.get("config")
        settings = {**defaults, **config} if config else defaults  # the case's config wins
        expected = raw.get("expected") or None
        asserts = [Assertion("icontains", expected, implicit=True)] if expected else []
        asserts += built.get(i, ())
        threshold = raw.get("threshold", default_threshold)
        temperature, max_tokens, top_p = settings.get("temperature"), settings.get("max_tokens"), settings.get("top_p")
        references, metadata = raw.get("references"), raw.get("metadata")
        prompt = raw["prompt"]
        cases.append(TestCase(
            render(raw["id"], variables), raw.get("category", DEFAULT_CATEGORY), render(prompt, variables), prompt,
            variables, expected, list(references) if references else [], raw.get("system", dataset_system),
            asserts, int(raw.get("repeat", 1)), None if threshold is None else float(threshold),
            config.get("model") if config else None,
            None if temperature is None else float(temperature), None if max_tokens is None else int(max_tokens),
            None if top_p is None else float(top_p), _stop(settings.get("stop")),
            dict(metadata) if metadata else {}, i,
        ))
    version = _version(document.get("version"))
    if digest is None:
        digest = document_digest(document)
    return Dataset(
        name=document["name"],
        version=version,
        description=document.get("description", ""),
        defaults=defaults,
        metadata=dict(document.get("metadata") or {}),
        cases=cases,
        source=source,
        digest=digest,
    )


def _resolve_checked(document: dict[str, Any], source: str, digest: str | None) -> Dataset:
    """:func:`parse_dataset` of a document that passed every check with this code."""
    built = {i: [_build_assertion(item, raw.get("references")) for item in raw.get("assert") or ()]
             for i, raw in enumerate(document["test_cases"]) if raw.get("assert")}
    return _resolve(document, source, built, digest)
