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
valid: ``harness.datasets.assertion_validation.validate_assertion``), and a ``references``
assertion on a case without references. In ``.jsonl`` and ``.csv`` files the messages also
give the line.

Resolution (what a :class:`~harness.datasets.model.TestCase` holds): the prompt and id
rendered, the system prompt (the case's, else the dataset's ``system``, else
``defaults.system``), the generation parameters (the case's ``config`` over ``defaults``),
``repeat`` (default 1), ``threshold`` (the case's, else ``defaults.threshold``, else none),
and the assertions with the ``expected`` shorthand first (``implicit``). A ``references``
assertion without a value gets the case's references as its value. An empty ``expected``
string is no assertion.

The :attr:`~harness.datasets.model.Dataset.digest` identifies the content: the same document
gives the same digest whatever its key order and whether it was written in JSON or YAML.

This module finds and loads dataset files (:func:`load_dataset`, :func:`load_file`, the
built-in datasets). The other parts are imported from the modules that define them:
:mod:`harness.datasets.model` (the dataset model, templates, the digest),
:mod:`harness.datasets.readers` (the five readers and YAML's tags),
:mod:`harness.datasets.checks` (the checks, the schema's fast path, resolution) and
:mod:`harness.datasets.checked_cache` (the checked-documents cache).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.datasets.checked_cache import CheckedCache
from harness.datasets.checks import _resolve_checked, parse_dataset
from harness.datasets.model import BUILTIN_SUFFIXES, SUFFIXES, BuiltinInfo, Dataset, DatasetError
from harness.datasets.readers import _read_document


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
    bytes, the format, the schema and the version of the checks (``CACHE_VERSION`` of
    :mod:`harness.datasets.checked_cache`). A file that changes by one byte, or a new version
    of the checks, means the file is read afresh.
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
