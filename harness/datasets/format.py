r"""The dataset file format of ``bench dataset``: reading, checking and resolving test cases.

A dataset is a named list of test cases, each a prompt to send to a model and the assertions
that grade the answer. On disk it is JSON or YAML (chosen by the extension: ``.json``,
``.yaml``, ``.yml``), checked against ``harness/schemas/dataset.schema.json``::

    name: coding-tasks
    version: 1.0.0                   # read as a string; numbers too; default "1"
    defaults: {temperature: 0.0, max_tokens: 500, threshold: 0.8}
    system: You are a terse assistant.
    test_cases:
      - id: fibonacci-{{lang}}       # rendered with the case's variables, unique once rendered
        prompt: Implement a {{ lang }} function for the nth Fibonacci number.
        variables: {lang: JavaScript}
        expected: function           # shorthand for an icontains assertion (the first one)
        references: [function, fibonacci]
        assert:
          - {type: regex, value: 'function\s+\w+'}
          - {type: references}       # scores the fraction of the case's references found

Test cases alone may also come from ``.jsonl`` (one case object per line; the dataset is
named after the file's stem, version "1") or ``.csv`` (columns ``id``, ``category``,
``prompt``, ``expected``, ``references`` separated by ``|``, ``system``, ``repeat``, and
``var:NAME`` for each variable; an empty cell is an absent key). Datasets written for the
original tool load unchanged: same keys, variables as strings, ``{{var}}`` in ids.

Everything is checked before anything runs, and every problem is reported at once in one
:class:`DatasetError` naming the file and the field (``test_cases[3].prompt: is required``):
the schema (unknown keys included, with a suggestion for a typo; only ``metadata`` and
``variables`` take any key), duplicate ids after rendering, every undefined variable of every
case's id and prompt, the values of assertions (a regex must compile, a JSON Schema must be
valid: ``harness.datasets.assertions.validate_assertion``), and a ``references`` assertion on
a case without references. In ``.jsonl`` and ``.csv`` files the messages also give the line.

Resolution (what a :class:`TestCase` holds): the prompt and id rendered, the system prompt
(the case's, else the dataset's ``system``, else ``defaults.system``), the generation
parameters (the case's ``config`` over ``defaults``), ``repeat`` (default 1), ``threshold``
(the case's, else ``defaults.threshold``, else none), and the assertions with the
``expected`` shorthand first (``implicit``). A ``references`` assertion without a value gets
the case's references as its value. An empty ``expected`` string is no assertion.

The :attr:`Dataset.digest` identifies the content: the same document gives the same digest
whatever its key order and whether it was written in JSON or YAML.
"""

from __future__ import annotations

import ast
import csv
import difflib
import hashlib
import io
import json
import os
import random
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.datasets.quick_yaml import QuickReader
from harness.jsonschemas import SchemaIssue, load_schema, validate_long_list

#: File extension -> how the file is read.
SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl", ".csv": "csv"}
#: Extensions of built-in datasets, in order of preference when two files share a name.
BUILTIN_SUFFIXES = (".yaml", ".yml", ".json")
#: The columns of a ``.csv`` file, besides ``var:NAME``.
CSV_COLUMNS = ("id", "category", "prompt", "expected", "references", "system", "repeat")
CSV_VARIABLE_PREFIX = "var:"
DEFAULT_CATEGORY = "uncategorized"
DEFAULT_VERSION = "1"
# How many problems str(DatasetError) shows; the exception keeps them all.
_SHOWN_PROBLEMS = 50

# {{name}} or {{ name }}; names are identifiers that may also hold '.' and '-'.
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")
_UNKNOWN_KEYS = re.compile(r"unknown key\(s\) are not allowed \((.*) (?:was|were) unexpected\)", re.S)
_FALSE_SCHEMA = re.compile(r"False schema does not allow .*", re.S)
_CASE_PATH = re.compile(r"test_cases\[(\d+)\]")
_ASSERTION_TYPE_PATH = re.compile(r"test_cases\[\d+\]\.assert\[\d+\]\.type")


class DatasetError(ValueError):
    """A dataset that cannot be used, with every problem found in it.

    ``source`` is the file (or the name asked for), ``problems`` the list of
    ``"field.path: message"`` lines; ``str()`` gives both, ready to print.
    """

    def __init__(self, source: str, problems: list[str]):
        super().__init__(str(source), list(problems))
        self.source = str(source)
        self.problems = list(problems)

    def __str__(self) -> str:
        count = len(self.problems)
        lines = [f"{self.source}: {count} problem{'' if count == 1 else 's'}:"]
        lines += [f"  {p}" for p in self.problems[:_SHOWN_PROBLEMS]]
        if count > _SHOWN_PROBLEMS:
            lines.append(f"  ... and {count - _SHOWN_PROBLEMS} more")
        return "\n".join(lines)


class MissingVariablesError(ValueError):
    """A template uses variables that are not given; ``names`` lists them all."""

    def __init__(self, names: list[str]):
        super().__init__(f"undefined variable{'' if len(names) == 1 else 's'}: {', '.join(names)}")
        self.names = list(names)


@dataclass(frozen=True)
class Assertion:
    """One check of an answer: ``type`` (see ``harness.datasets.assertions``), its ``value``,
    its ``weight`` in the case's score and the score it must reach (``threshold``; None: the
    type's default). ``implicit`` marks the icontains made from the case's ``expected``."""

    type: str
    value: Any = None
    weight: float = 1.0
    threshold: float | None = None
    implicit: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The assertion as written in a dataset, defaults left out (plus ``implicit``)."""
        out: dict[str, Any] = {"type": self.type}
        if self.value is not None:
            out["value"] = self.value
        if self.weight != 1.0:
            out["weight"] = self.weight
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.implicit:
            out["implicit"] = True
        return out


@dataclass
class TestCase:
    """One test case, resolved: rendered, with the dataset's defaults applied."""

    __test__ = False  # not a pytest test class, whatever module imports it

    id: str  # rendered with the case's variables
    category: str
    prompt: str  # rendered
    template: str  # the prompt as written
    variables: dict[str, str]
    expected: str | None
    references: list[str]
    system: str | None  # case.system, else dataset.system, else defaults.system
    asserts: list[Assertion]  # the implicit icontains of `expected` first
    repeat: int
    threshold: float | None  # case.threshold, else defaults.threshold
    model: str | None  # config.model
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    stop: list[str] | None
    metadata: dict[str, Any] = field(default_factory=dict)
    index: int = 0  # position in the file (test_cases[index])


@dataclass
class Dataset:
    """A loaded and checked dataset."""

    name: str
    version: str
    description: str
    defaults: dict[str, Any]
    metadata: dict[str, Any]
    cases: list[TestCase]
    source: str  # the file path, or "builtin:NAME"
    digest: str  # 12 hex chars of the sha256 of the document's canonical JSON

    def __repr__(self) -> str:  # short: a dataset may hold thousands of cases
        return f"Dataset({self.name!r}, version={self.version!r}, {len(self.cases)} cases, digest={self.digest!r})"


@dataclass(frozen=True)
class BuiltinInfo:
    """A dataset shipped in ``harness/datasets/builtin/``."""

    name: str
    description: str
    cases: int
    path: Path


# --- choosing cases ----------------------------------------------------------------------------

def sample_cases(cases: list[TestCase], count: int | None, seed: int | None) -> list[TestCase]:
    """``count`` of ``cases`` in their file order: drawn with ``random.Random(seed)`` when a
    seed is given (the same seed draws the same cases), else the first ``count``."""
    if count is None or count >= len(cases):
        return cases
    if seed is None:
        return cases[:count]
    chosen = sorted(random.Random(seed).sample(range(len(cases)), count))
    return [cases[i] for i in chosen]


GENERATION_SETTINGS = ("temperature", "max_tokens", "top_p", "stop")


def apply_settings(cases: list[TestCase], settings: dict[str, Any]) -> list[TestCase]:
    """The cases with ``settings`` (generation settings) in place of their own."""
    changes = {k: settings[k] for k in GENERATION_SETTINGS if settings.get(k) is not None}
    if isinstance(changes.get("stop"), str):
        changes["stop"] = [changes["stop"]]
    return [replace(c, **changes) for c in cases] if changes else cases


# --- templates -------------------------------------------------------------------------------

def placeholders(template: str) -> list[str]:
    """The variable names ``template`` uses (``{{var}}`` or ``{{ var }}``), each once, in order."""
    if "{{" not in template:
        return []
    return list(dict.fromkeys(_PLACEHOLDER.findall(template)))


def render(template: str, variables: dict[str, Any]) -> str:
    """``template`` with each ``{{var}}`` replaced by its variable's text.

    Numbers are written as Python writes them, booleans as ``true``/``false``. Raises
    :class:`MissingVariablesError` (a ValueError) naming every undefined variable.
    """
    if "{{" not in template:
        return template
    missing = [name for name in placeholders(template) if name not in variables]
    if missing:
        raise MissingVariablesError(missing)
    return _PLACEHOLDER.sub(lambda m: _text(variables[m.group(1)]), template)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


# --- reading files ---------------------------------------------------------------------------

class _YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader without timestamps: ``2024-05-01`` stays a string, as in JSON."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YAML_NUMBERS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _resolve_tag(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
    """``BaseResolver.resolve`` (the tag of a node without one, asked for every node while the
    document is parsed), remembering the tag of each short plain scalar: keys and small values
    repeat across cases, and each is matched against the resolvers' regular expressions once."""
    if self.yaml_path_resolvers:
        return yaml.resolver.BaseResolver.resolve(self, kind, value, implicit)
    if kind is yaml.ScalarNode:
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = yaml.resolver.BaseResolver.resolve(self, kind, value, implicit)
            if len(value) <= 64 and len(_PLAIN_TAGS) < 20_000:
                _PLAIN_TAGS[value] = tag
        return tag
    if kind is yaml.MappingNode:
        return self.DEFAULT_MAPPING_TAG
    if kind is yaml.SequenceNode:
        return self.DEFAULT_SEQUENCE_TAG
    return yaml.resolver.BaseResolver.resolve(self, kind, value, implicit)


_PLAIN_TAGS: dict[str, str] = {}  # plain scalar -> its tag (the loader's resolvers never change)
_YamlLoader.resolve = _resolve_tag  # type: ignore[method-assign]
# The same data as _YamlLoader for plain files, built by a compiled reader (None: left to _YamlLoader).
_QUICK = QuickReader(_YamlLoader.yaml_implicit_resolvers)


def _read_text(path: Path, data: bytes | None = None) -> str:
    """The text of ``path`` (``data``: its bytes, when already read), newlines made ``\n``."""
    try:
        text = (path.read_bytes() if data is None else data).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(str(path), [f"cannot read: {exc}"]) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


_YAML_TAG = "tag:yaml.org,2002:"
# The tags of plain data, built here without the loader's generic machinery.
_PLAIN_SCALARS = {_YAML_TAG + t for t in ("str", "null", "bool", "int", "float")}


class _Unusual(Exception):
    """A node :func:`_construct_plain` leaves to the loader: an alias, a merge key, another tag."""


def _construct_plain(loader: Any, root: yaml.Node) -> Any:
    """What ``loader.construct_document(root)`` builds, for a document of plain data only
    (mappings, sequences, strings, numbers, booleans and nulls, each node used once), in a
    fraction of its time; :class:`_Unusual` for anything else. Each number, boolean and null
    is built by the loader's own constructor for its tag."""
    seen: set[int] = set()
    scalars = loader.yaml_constructors
    str_tag, map_tag, seq_tag = _YAML_TAG + "str", _YAML_TAG + "map", _YAML_TAG + "seq"

    def build(node: yaml.Node) -> Any:
        if id(node) in seen:
            raise _Unusual  # an alias: the loader shares (or recurses into) the object
        seen.add(id(node))
        kind, tag = type(node), node.tag
        if kind is yaml.ScalarNode:
            if tag == str_tag:
                return node.value
            if tag not in _PLAIN_SCALARS:
                raise _Unusual
            return scalars[tag](loader, node)
        if kind is yaml.MappingNode and tag == map_tag:
            out = {}
            for key_node, value_node in node.value:
                key = build(key_node)
                try:
                    hash(key)
                except TypeError:
                    raise _Unusual from None  # the loader words the error
                out[key] = build(value_node)
            return out
        if kind is yaml.SequenceNode and tag == seq_tag:
            return [build(item) for item in node.value]
        raise _Unusual

    return build(root)


def _read_yaml(path: Path, text: str) -> Any:
    return _read_yaml_plain(path, text)[0]


def _read_yaml_plain(path: Path, text: str) -> tuple[Any, bool]:
    """The document of ``text``, and whether it is plain JSON data (text keys; strings, numbers,
    booleans, nulls, lists and mappings only), which only the quick reader knows."""
    quick = _QUICK.read(text)
    # A top-level version written as a number keeps its spelling (below): the loader's nodes have it.
    if quick is not None and not (isinstance(quick[0], dict) and type(quick[0].get("version")) in (int, float)):
        return quick[0], True
    loader = _YamlLoader(text)
    try:
        node = loader.get_single_node()
        data = None
        if node is not None:
            try:
                data = _construct_plain(loader, node)
            except (_Unusual, RecursionError):
                data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DatasetError(str(path), [f"{where}invalid YAML: {problem}"]) from None
    finally:
        loader.dispose()
    # A top-level version written as a number keeps its spelling: 1.10 is "1.10", not "1.1".
    if isinstance(node, yaml.MappingNode) and isinstance(data, dict):
        for key, value in node.value:
            if (isinstance(key, yaml.ScalarNode) and key.value == "version"
                    and isinstance(value, yaml.ScalarNode) and value.tag in _YAML_NUMBERS):
                data["version"] = value.value
    return data, False


def _read_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(str(path), [f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"]) from None


def _read_jsonl(path: Path, text: str) -> tuple[dict[str, Any], list[int]]:
    cases: list[Any] = []
    lines: list[int] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}, column {exc.colno}: invalid JSON: {exc.msg}")
            continue
        lines.append(number)
    if problems:
        raise DatasetError(str(path), problems)
    return {"name": path.stem, "version": DEFAULT_VERSION, "test_cases": cases}, lines


def _read_csv(path: Path, text: str) -> tuple[dict[str, Any], list[int]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetError(str(path), [f"line {reader.line_num}: invalid CSV: {exc}"]) from None
    if header is None:
        raise DatasetError(str(path), ["empty file: expected a header row (id, prompt, ...)"])
    columns = [c.strip() for c in header]
    problems = []
    for i, column in enumerate(columns):
        if column in CSV_COLUMNS:
            pass
        elif column.startswith(CSV_VARIABLE_PREFIX) and column[len(CSV_VARIABLE_PREFIX):].strip():
            columns[i] = CSV_VARIABLE_PREFIX + column[len(CSV_VARIABLE_PREFIX):].strip()
        else:
            known = [*CSV_COLUMNS, "var:NAME"]
            problems.append(f"columns[{i}]: unknown column {column!r}{_suggestion(column, known)}")
        if column in columns[:i]:
            problems.append(f"columns[{i}]: duplicate column {column!r}")
    cases: list[dict[str, Any]] = []
    lines: list[int] = []
    end = reader.line_num
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(columns):
                problems.append(f"line {start}: {len(row)} cells, but the header has {len(columns)} columns")
                continue
            cases.append(_csv_case(columns, row))
            lines.append(start)
    except csv.Error as exc:
        problems.append(f"line {reader.line_num}: invalid CSV: {exc}")
    if problems:
        raise DatasetError(str(path), problems)
    return {"name": path.stem, "version": DEFAULT_VERSION, "test_cases": cases}, lines


def _csv_case(columns: list[str], row: list[str]) -> dict[str, Any]:
    case: dict[str, Any] = {}
    for column, cell in zip(columns, row):
        if not cell.strip():
            continue
        if column.startswith(CSV_VARIABLE_PREFIX):
            case.setdefault("variables", {})[column[len(CSV_VARIABLE_PREFIX):]] = cell
        elif column == "references":
            case["references"] = [r.strip() for r in cell.split("|") if r.strip()]
        elif column == "repeat":
            # Not a number: kept as text, so that the schema reports it at test_cases[i].repeat.
            case["repeat"] = int(cell) if cell.strip().isdigit() else cell
        else:
            case[column] = cell
    return case


def _read_document(path: Path, data: bytes | None = None) -> tuple[Any, list[int] | None, bool]:
    """The parsed document of ``path`` (``data``: its bytes, when already read), for .jsonl and
    .csv the line of each case, and whether the document is known to be plain JSON data (text
    keys, JSON's types: read from .json, or by the quick YAML reader)."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DatasetError(str(path), [
            f"unsupported extension {path.suffix or '(none)'!r}: a dataset is .json, .yaml, .yml, .jsonl or .csv"])
    text = _read_text(path, data)
    if kind == "jsonl":
        return (*_read_jsonl(path, text), False)
    if kind == "csv":
        return (*_read_csv(path, text), False)
    document, plain = _read_yaml_plain(path, text) if kind == "yaml" else (_read_json(path, text), True)
    if document is None:
        raise DatasetError(str(path), ["empty file: expected a mapping with name and test_cases"])
    return document, None, plain


# --- checking --------------------------------------------------------------------------------

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


def _suggestion(name: str, known: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (allowed: {', '.join(known)})"


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _describe(issue: SchemaIssue) -> list[str]:
    """The problem lines of one schema issue: one per unknown key, named by its own path."""
    unknown = _UNKNOWN_KEYS.fullmatch(issue.message)
    if unknown:
        try:
            names = ast.literal_eval(f"[{unknown.group(1)}]")
        except (ValueError, SyntaxError):
            names = []
        if names:
            context = next((kind for pattern, kind in _KEY_CONTEXTS if pattern.fullmatch(issue.field)), None)
            known = _known_keys().get(context or "", ())
            return [f"{_join(issue.field, name)}: unknown key{_suggestion(name, known) if known else ''}"
                    for name in names]
    if _ASSERTION_TYPE_PATH.fullmatch(issue.field) and " is not one of " in issue.message:
        kinds = load_schema("dataset")["$defs"]["assertion"]["properties"]["type"]["enum"]
        name = issue.message.split(" is not one of ", 1)[0]
        return [f"{issue.field}: unknown assertion type {name}{_suggestion(name.strip(chr(39)), kinds)}"]
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

def _is_text(value: Any) -> bool:
    return type(value) is str and value != ""


def _is_number(value: Any, low: float | None = None, high: float | None = None, *, above: float | None = None) -> bool:
    return (type(value) in (int, float)
            and (low is None or value >= low) and (high is None or value <= high)
            and (above is None or value > above))


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 1


def _is_stop(value: Any) -> bool:
    return type(value) is str or (type(value) is list and all(type(v) is str for v in value))


def _is_texts(value: Any) -> bool:
    return type(value) is list and all(_is_text(v) for v in value)


_NONBLANK = re.compile(r"\S")
_CONFIG_RULES: dict[str, Callable[[Any], bool]] = {
    "model": _is_text,
    "temperature": lambda v: _is_number(v, 0),
    "max_tokens": _is_count,
    "top_p": lambda v: _is_number(v, 0, 1),
    "stop": _is_stop,
}
# Assertion type -> (is `value` required, the rule of `value`); None: `value` is not allowed.
_VALUE_RULES: dict[str, tuple[bool, Callable[[Any], bool]] | None] = {
    **{kind: (True, _is_text) for kind in ("contains", "icontains", "not-contains", "starts-with",
                                           "regex", "llm-rubric")},
    "equals": (True, lambda v: type(v) is str),
    "is-json": None,
    "json-schema": (True, lambda v: type(v) is dict),
    "max-words": (True, _is_count),
    "max-chars": (True, _is_count),
    "references": (False, lambda v: _is_texts(v) and len(v) > 0),
    "latency-ms": (True, lambda v: _is_number(v, above=0)),
    "cost": (True, lambda v: _is_number(v, 0)),
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
    return (("weight" not in item or _is_number(item["weight"], above=0))
            and ("threshold" not in item or _is_number(item["threshold"], 0, 1)))


_CASE_RULES: dict[str, Callable[[Any], bool]] = {
    "id": _is_text,
    "category": _is_text,
    "prompt": lambda v: type(v) is str and _NONBLANK.search(v) is not None,
    "variables": lambda v: type(v) is dict and all(type(x) in (str, int, float, bool) for x in v.values()),
    "expected": lambda v: type(v) is str,
    "references": _is_texts,
    "config": lambda v: type(v) is dict and all(k in _CONFIG_RULES and _CONFIG_RULES[k](x) for k, x in v.items()),
    "metadata": lambda v: type(v) is dict,
    "system": lambda v: type(v) is str,
    "assert": lambda v: type(v) is list and all(_plain_assertion(a) for a in v),
    "repeat": _is_count,
    "threshold": lambda v: _is_number(v, 0, 1),
}


def _plain_case(case: Any) -> bool:
    """True only when ``case`` certainly satisfies the schema's testCase."""
    return (type(case) is dict and "id" in case and "prompt" in case
            and all(k in _CASE_RULES and _CASE_RULES[k](v) for k, v in case.items()))


_DEFAULTS_RULES: dict[str, Callable[[Any], bool]] = {
    "temperature": lambda v: _is_number(v, 0),
    "max_tokens": _is_count,
    "top_p": lambda v: _is_number(v, 0, 1),
    "stop": _is_stop,
    "system": lambda v: type(v) is str,
    "threshold": lambda v: _is_number(v, 0, 1),
}
_TOP_RULES: dict[str, Callable[[Any], bool]] = {
    "$schema": lambda v: type(v) is str,
    "name": _is_text,
    "version": lambda v: type(v) in (str, int, float),
    "description": lambda v: type(v) is str,
    "defaults": lambda v: type(v) is dict and all(k in _DEFAULTS_RULES and _DEFAULTS_RULES[k](x)
                                                  for k, x in v.items()),
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


def _assertion_checker() -> Callable[[Assertion], str | None] | None:
    try:
        from harness.datasets.assertions import validate_assertion
    except ImportError:
        return None
    return validate_assertion


def _version(value: Any) -> str:
    if value is None:
        return DEFAULT_VERSION
    return value if isinstance(value, str) else str(value)


def _stop(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _optional(value: Any, kind: type) -> Any:
    return None if value is None else kind(value)


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


def canonical_json(document: Any) -> str:
    """``document`` as canonical JSON: sorted keys, no spaces, UTF-8 text kept as is."""
    try:
        return json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    except TypeError:  # keys of mixed types (YAML allows `1: a` beside `b: c`): all as text
        return canonical_json(_text_keys(document))


def _text_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_keys(v) for v in value]
    return value


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
            message = check_value(assertion) if check_value else None
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


def document_digest(document: dict[str, Any]) -> str:
    """The 12 hex digits that identify a dataset's content (its version as a string)."""
    if "version" in document:
        document = {**document, "version": _version(document["version"])}
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()[:12]


# --- finding datasets ------------------------------------------------------------------------

def builtin_dir() -> Path:
    """The directory of the built-in datasets: ``harness/datasets/builtin/``."""
    return Path(__file__).resolve().parent / "builtin"


def _builtin_files() -> dict[str, Path]:
    directory = builtin_dir()
    found: dict[str, Path] = {}
    if not directory.is_dir():
        return found
    for suffix in BUILTIN_SUFFIXES:
        for path in sorted(directory.glob(f"*{suffix}")):
            if path.is_file():
                found.setdefault(path.name[: -len(suffix)], path)
    return dict(sorted(found.items()))


def builtin_names() -> list[str]:
    """The names of the built-in datasets, sorted (no file is read)."""
    return list(_builtin_files())


def builtin_datasets() -> list[BuiltinInfo]:
    """The built-in datasets, sorted by name (their files read, not checked)."""
    infos = []
    for name, path in _builtin_files().items():
        document, _, _ = _read_document(path)
        document = document if isinstance(document, dict) else {}
        cases = document.get("test_cases")
        description = document.get("description")
        infos.append(BuiltinInfo(name=name, description=description if isinstance(description, str) else "",
                                 cases=len(cases) if isinstance(cases, list) else 0, path=path))
    return infos


def _looks_like_path(ref: str) -> bool:
    separators = {"/", os.sep, os.altsep} - {None}
    return Path(ref).suffix.lower() in SUFFIXES or any(s in ref for s in separators)


def load_file(path: str | os.PathLike, *, source: str | None = None) -> Dataset:
    """Read, check and resolve the dataset file ``path`` (``source``: its name in the result).

    A file whose exact content passed every check before is not parsed and checked again:
    its parsed document is kept in the checked-documents cache, keyed by the SHA-256 of the
    bytes, the format, the schema and the code that checks (see :class:`CheckedCache`). A file
    that changes by one byte, or a new version of the checks, means the file is read afresh.
    """
    path = Path(path)
    cache = CheckedCache.default()
    data = None
    if cache is not None:
        try:
            data = path.read_bytes()  # read once: for the key, and for the document on a miss
        except OSError:
            pass  # reported by the normal read
    key = cache.key_of(path, data) if cache is not None and data is not None else None
    cached = cache.get(key) if key is not None else None
    if cached is not None:
        document, _, digest = cached
        dataset = _resolve_checked(document, str(path), digest)
    else:
        dataset = _check_and_keep(path, data, cache if key is not None else None, key)
    if source is not None:
        dataset.source = source
    return dataset


def _check_and_keep(path: Path, data: bytes | None, cache: "CheckedCache | None", key: str | None) -> Dataset:
    """Read and check ``path`` (``data``: its bytes, when read), and keep it as entry ``key``."""
    document, lines, plain = _read_document(path, data)
    keeping = cache is not None and key is not None
    # Taken before checking, which must not be able to change what is kept.
    snapshot = cache.snapshot(document, lines, plain=plain) if keeping else None
    dataset = parse_dataset(document, str(path), lines=lines)
    if keeping and snapshot is not None:
        cache.put(key, snapshot, dataset.digest)
    return dataset


def keep_checked(path: str | os.PathLike) -> None:
    """Check ``path`` into the checked-documents cache unless an entry for its bytes is there
    already (nothing when the cache is off). Raises :class:`DatasetError` as :func:`load_file`."""
    cache = CheckedCache.default()
    if cache is None:
        return
    path = Path(path)
    data = path.read_bytes()
    key = cache.key_of(path, data)
    if key is not None and not cache.has(key):
        _check_and_keep(path, data, cache, key)


class CheckedCache:
    """Parsed dataset documents that passed every check, one JSON file each under
    ``<cache>/datasets/`` (``$ZE_BENCHMARKS_CACHE_DIR``), named by the SHA-256 of the file's
    bytes, its format, the schema and the source of the checks (this module and the assertion
    checks), so that what passed once passes again without being checked. Only JSON data is kept
    (never code), a document JSON cannot represent exactly is not kept, and any failure to read
    or write the cache only means the file is parsed as if there were none.
    ``ZE_BENCHMARKS_DATASET_CACHE=0`` turns it off."""

    VERSION = 2

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def default(cls) -> "CheckedCache | None":
        """The cache the environment names, or None (turned off, or the checks' code unreadable)."""
        environ = os.environ
        setting = (environ.get("ZE_BENCHMARKS_DATASET_CACHE"), environ.get("ZE_BENCHMARKS_CACHE_DIR"),
                   environ.get("XDG_CACHE_HOME"), environ.get("HOME"), _cache_salt())
        if _DEFAULT_CACHE and _DEFAULT_CACHE[0] == setting:  # asked once per file: the same answer
            return _DEFAULT_CACHE[1]
        cache = None
        if (setting[0] or "1").strip().lower() not in ("0", "false", "no", "off") and setting[-1] is not None:
            from harness.providers.cache import default_cache_dir

            cache = cls(default_cache_dir() / "datasets")
        _DEFAULT_CACHE[:] = [setting, cache]
        return cache

    @staticmethod
    def key_of(path: Path, data: bytes) -> str | None:
        """The entry of ``data``, the bytes of the file ``path``."""
        salt = _cache_salt()
        if salt is None:
            return None
        digest = hashlib.sha256(salt.encode("utf-8"))
        digest.update(path.suffix.lower().encode("utf-8") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def has(self, key: str) -> bool:
        """Whether there is an entry ``key``."""
        return os.path.isfile(os.path.join(self.directory, f"{key}.json"))

    def get(self, key: str) -> tuple[Any, list[int] | None, str | None] | None:
        """(document, lines, digest) of the entry ``key``, or None."""
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text("utf-8"))
            digest = entry.get("digest")
            return entry["document"], entry["lines"], digest if isinstance(digest, str) else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @staticmethod
    def snapshot(document: Any, lines: list[int] | None, *, plain: bool = False) -> str | None:
        """The JSON text to keep, or None when JSON cannot represent the document exactly.
        ``plain``: the document is known to hold text keys and JSON's types only, so that the
        text need not be read back to be compared (a NaN or an infinity is still refused)."""
        try:
            text = json.dumps({"document": document, "lines": lines}, ensure_ascii=False,
                              separators=(",", ":"), allow_nan=False)
        except (ValueError, TypeError):
            return None
        if plain:
            return text
        return text if json.loads(text)["document"] == document else None  # e.g. integer keys: not kept

    def put(self, key: str, text: str, digest: str) -> None:
        """Keep ``text`` (a :meth:`snapshot`) and the document's ``digest`` as entry ``key``."""
        data = (text[:-1] + ',"digest":' + json.dumps(digest) + "}").encode("utf-8")
        directory = os.fspath(self.directory)
        tmp = os.path.join(directory, f".{key}.{os.getpid()}.tmp")
        try:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            except FileNotFoundError:  # the first entry: the directory too
                os.makedirs(directory, exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, os.path.join(directory, f"{key}.json"))
        except (OSError, ValueError, TypeError):
            try:
                os.unlink(tmp)  # a half-written entry is never read, and need not stay
            except OSError:
                pass


_DEFAULT_CACHE: list[Any] = []  # [the environment it was made for, CheckedCache.default()]


@lru_cache(maxsize=None)
def _cache_salt() -> str | None:
    """What a cached document depends on besides the file: the cache's version, the schema and
    the code of the checks; None (no cache) when that code cannot be read."""
    digest = hashlib.sha256(json.dumps(load_schema("dataset"), sort_keys=True).encode("utf-8"))
    try:
        for source in _check_sources():
            digest.update(b"\0" + source.read_bytes())
    except OSError:
        return None
    return f"checked-v{CheckedCache.VERSION}:" + digest.hexdigest()


def _check_sources() -> list[Path]:
    """The modules whose code decides whether a dataset passes, and what it reads as: this one,
    the assertions' and the quick YAML reader."""
    here = Path(__file__).resolve().parent
    return [here / "format.py", here / "assertions.py", here / "quick_yaml.py"]


def _resolve_checked(document: dict[str, Any], source: str, digest: str | None) -> Dataset:
    """:func:`parse_dataset` of a document that passed every check with this code."""
    built = {i: [_build_assertion(item, raw.get("references")) for item in raw.get("assert") or ()]
             for i, raw in enumerate(document["test_cases"]) if raw.get("assert")}
    return _resolve(document, source, built, digest)


def load_dataset(ref: str | os.PathLike) -> Dataset:
    """Load a dataset by file path or by built-in name.

    ``ref`` is a file when it exists, or when it looks like one (a dataset extension or a
    directory separator: then a missing file is an error); otherwise (a directory of that
    name included) it names a built-in dataset (``harness/datasets/builtin/NAME.yaml``, ``.yml`` or ``.json``). Raises
    :class:`DatasetError` for a missing file, an unknown name (listing the built-in ones) and
    any problem of the dataset itself.
    """
    path = Path(ref)
    text = os.fspath(ref)
    if path.is_file():
        return load_file(path)
    path_like = isinstance(ref, os.PathLike) or _looks_like_path(text)
    builtins = {} if path_like else _builtin_files()
    if path.exists() and text not in builtins:  # a directory that happens to share a built-in's name is not one
        raise DatasetError(text, ["is a directory, not a dataset file"])
    if path_like:
        raise DatasetError(text, ["no such file"])
    if text in builtins:
        return load_file(builtins[text], source=f"builtin:{text}")
    listing = ", ".join(builtins) or "none"
    raise DatasetError(text, [f"no such file, and no built-in dataset of that name (built-in: {listing})"])
