"""The dataset model of ``bench dataset``: what a loaded dataset is, and the text it is made of.

:class:`Dataset` (a checked and resolved dataset), :class:`TestCase` (one case, rendered, with
the dataset's defaults applied), :class:`Assertion` (one check of an answer) and
:class:`BuiltinInfo` (a shipped dataset); :class:`DatasetError`, which names the file and
lists every problem found in it, and :class:`MissingVariablesError`.

Templates: :func:`render` replaces each ``{{var}}`` (or ``{{ var }}``) by its variable's text
(numbers as Python writes them, booleans as ``true``/``false``) and names every undefined
variable at once; :func:`placeholders` lists the names a template uses.

Identity: :func:`canonical_json` (sorted keys, no spaces, UTF-8 text as is) and
:func:`document_digest`, the 12 hex digits of a document's content, the same whatever its key
order and whether it was written in JSON or YAML (the version read as a string).

Choosing cases: :func:`sample_cases` (the first N, or N drawn with a seed, in file order) and
:func:`apply_settings` (generation settings given on the command line over each case's own).
The file format itself is described in :mod:`harness.datasets.format`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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


def _version(value: Any) -> str:
    if value is None:
        return DEFAULT_VERSION
    return value if isinstance(value, str) else str(value)


def _stop(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


# --- identity --------------------------------------------------------------------------------

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


def document_digest(document: dict[str, Any]) -> str:
    """The 12 hex digits that identify a dataset's content (its version as a string)."""
    if "version" in document:
        document = {**document, "version": _version(document["version"])}
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()[:12]

