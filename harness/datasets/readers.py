r"""The readers of dataset files: JSON, YAML, JSON Lines and CSV into one document.

:func:`_read_document` picks the reader by extension (:data:`~harness.datasets.model.SUFFIXES`)
and gives the parsed document, for ``.jsonl`` and ``.csv`` the file line of each case, and
whether the document is known to be plain JSON data (text keys, JSON's types only). Text is
decoded as UTF-8 (a byte order mark dropped) with its newlines made ``\n``. Every problem is a
:class:`~harness.datasets.model.DatasetError` naming the file, and the line and column where
the parser gives them.

YAML is read safely and without timestamps (``2024-05-01`` stays a string, as in JSON). A
plain file is read by the compiled quick reader (:mod:`harness.datasets.quick_yaml`) when
nothing in it could read differently under PyYAML; otherwise PyYAML's C parser, with the tags
of short plain scalars remembered, and a document of plain data built by a walk of its nodes
(:func:`_construct_plain`) instead of the loader's generic constructor. A top-level
``version`` written as a number keeps its spelling (``1.10`` is ``"1.10"``).

A ``.jsonl`` file holds one case object a line; a ``.csv`` file has the columns of
:data:`~harness.datasets.model.CSV_COLUMNS` and ``var:NAME`` (``references`` separated by
``|``, an empty cell an absent key). Either is named after the file's stem, version "1".
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import yaml

from harness.datasets.model import CSV_COLUMNS, CSV_VARIABLE_PREFIX, DEFAULT_VERSION, SUFFIXES, DatasetError
from harness.datasets.quick_yaml import QuickReader
from harness._util.jsonschema_fast import suggestion


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
            problems.append(f"columns[{i}]: unknown column {column!r}{suggestion(column, known)}")
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

