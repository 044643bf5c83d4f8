"""A file of SWE-bench instances, read and checked (docs/swe-tasks.md).

An **instance file** is JSONL, one instance per line, or a ``.json`` file holding an array of
instances. :func:`read_entries` reads it once per version of the file (its size and
modification time) into :class:`Entry` items, one per instance, each named by its
``instance_id``. A line that is not JSON, an item that is no object, one without a safe
``instance_id`` (letters, digits, ``.``, ``_``, ``-``; at most 200) or one repeating an id is
kept with the reason, under a name of its place (``line-N``, ``item-N``; ``ID@line-N`` for a
repeated id), so that the other instances of the file stay usable and loading that one says
why. A file that cannot be read, or a ``.json`` file that is not JSON or no array, is a
:class:`~harness.scenarios.model.ScenarioError` naming it.

:func:`check_instance` checks one entry field by field into an :class:`Instance`: the
SWE-bench fields it needs (:data:`REQUIRED`) and this project's optional ``test_command``
(pytest with ``-rA`` when not given), ``install`` and ``image`` (a build context holding a
Containerfile or Dockerfile, relative to the file). A value it cannot use is a
:class:`~harness.scenarios.model.ScenarioError` naming ``file:line`` and the field. Test ids are a
list, or JSON text of one as SWE-bench stores them; ``FAIL_TO_PASS`` may not be empty. An
unknown field is ignored with a warning, as is an ``environment_setup_commit`` other than
``base_commit``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.scenarios.model import ScenarioError
from harness._util.suggest import did_you_mean
from harness.tasks.common import read_text

DEFAULT_TEST_COMMAND = "python -m pytest -rA -p no:cacheprovider"

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
            "problem_statement")
#: SWE-bench's own fields this loader does not use: accepted silently (environment_setup_commit
#: with a warning when it differs from base_commit: its environment is not built here).
SWE_EXTRAS = ("hints_text", "created_at", "version", "environment_setup_commit")
#: Optional fields of this project (docs/swe-tasks.md).
OWN_FIELDS = ("test_command", "install", "image")
KNOWN_FIELDS = (*REQUIRED, *SWE_EXTRAS, *OWN_FIELDS)

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")


@dataclass(frozen=True)
class Entry:
    """One instance of a file: where it is (``file:line N``), its scenario name and its data,
    or why it cannot be read."""

    where: str
    name: str
    data: dict[str, Any] | None
    problem: str | None = None


@lru_cache(maxsize=8)
def _entries(file: str, mtime_ns: int, size: int) -> tuple[Entry, ...]:
    path = Path(file)
    text = read_text(path)
    items: list[tuple[str, int, Any, str | None]] = []  # (where, number, value, problem)
    if path.suffix.lower() == ".json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(value, list):
            raise ScenarioError(f"{path}: (top level): expected an array of SWE-bench instances, got "
                                f"{type(value).__name__}")
        items = [(f"{path}: [{i}]", i, item, None) for i, item in enumerate(value)]
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{number}", number, json.loads(line), None))
            except json.JSONDecodeError as exc:
                items.append((f"{path}:{number}", number, None, f"invalid JSON: {exc.msg} (column {exc.colno})"))
    entries: list[Entry] = []
    taken: dict[str, str] = {}
    for where, number, value, problem in items:
        fallback = f"line-{number}" if path.suffix.lower() != ".json" else f"item-{number}"
        if problem is None and not isinstance(value, dict):
            problem = f"expected an object (one SWE-bench instance), got {type(value).__name__}"
        if problem is not None:
            entries.append(Entry(where, fallback, None, problem))
            continue
        ident = value.get("instance_id")
        if not isinstance(ident, str) or not SAFE_NAME.match(ident) or ident in (".", ".."):
            why = "missing" if ident is None else f"{ident!r} is not a safe name (letters, digits, '.', '_', '-'; " \
                                                    "first a letter or digit; at most 200)"
            entries.append(Entry(where, fallback, None, f"instance_id: {why}"))
            continue
        if ident in taken:
            entries.append(Entry(where, f"{ident}@{fallback}", None,
                                 f"instance_id: {ident!r} is already the id of {taken[ident]}"))
            continue
        taken[ident] = where
        entries.append(Entry(where, ident, value))
    return tuple(entries)


def read_entries(file: Path) -> tuple[Entry, ...]:
    """The instances of ``file`` (read once per version of the file)."""
    try:
        st = file.stat()
    except OSError as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None
    return _entries(str(file.resolve()), st.st_mtime_ns, st.st_size)


def _fail(where: str, field: str, why: str) -> ScenarioError:
    return ScenarioError(f"{where}: {field}: {why}")


def _text(data: dict[str, Any], where: str, field: str, *, required: bool = True) -> str | None:
    value = data.get(field)
    if value is None and not required:
        return None
    if value is None:
        raise _fail(where, field, "missing")
    if not isinstance(value, str):
        raise _fail(where, field, f"expected text, got {type(value).__name__}")
    if required and not value.strip():
        raise _fail(where, field, "empty")
    return value


def read_test_ids(data: dict[str, Any], where: str, field: str) -> list[str]:
    """A list of test ids, given as a list or (as SWE-bench stores them) as JSON text of one."""
    if field not in data:
        raise _fail(where, field, "missing")
    value = data[field]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _fail(where, field, f"expected a list of test ids (or JSON text of one): {exc.msg}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, field, f"expected a list of test ids, got {value!r}"[:300])
    return list(dict.fromkeys(v.strip() for v in value))


@dataclass
class Instance:
    """One instance, read and checked."""

    where: str
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    problem_statement: str
    test_command: str
    install: list[str]
    image: Path | None
    warnings: list[str]


def check_instance(entry: Entry, file: Path) -> Instance:
    """The instance of ``entry``, checked field by field (:class:`ScenarioError` naming
    ``file:line`` and the field)."""
    if entry.data is None:
        raise ScenarioError(f"{entry.where}: {entry.problem}")
    data, where = entry.data, entry.where
    for field in REQUIRED:
        if field not in data:
            raise _fail(where, field, "missing (a SWE-bench instance needs " + ", ".join(REQUIRED) + ")")
    repo = _text(data, where, "repo")
    if not _REPO.match(repo) or ".." in repo.split("/"):
        raise _fail(where, "repo", f"expected owner/name, got {repo!r}")
    commit = _text(data, where, "base_commit")
    if not _COMMIT.match(commit):
        raise _fail(where, "base_commit", f"expected a commit hash, got {commit!r}")
    patch = _text(data, where, "patch")
    test_patch = _text(data, where, "test_patch")
    statement = _text(data, where, "problem_statement")
    f2p = read_test_ids(data, where, "FAIL_TO_PASS")
    p2p = read_test_ids(data, where, "PASS_TO_PASS")
    if not f2p:
        raise _fail(where, "FAIL_TO_PASS", "empty: an instance nothing fails before the fix is solved by doing nothing")
    warnings = []
    for field in data:
        if field not in KNOWN_FIELDS:
            hint = did_you_mean(str(field), KNOWN_FIELDS) or ""
            warnings.append(f"{where}: {field}: unknown field, ignored{hint}")
    setup = data.get("environment_setup_commit")
    if isinstance(setup, str) and setup and setup != commit:
        warnings.append(f"{where}: environment_setup_commit: ignored (the tests run in the host's runtime or the "
                        "instance's image, not in an environment built at that commit)")
    command = _text(data, where, "test_command", required=False)
    if command is not None and not command.strip():
        raise _fail(where, "test_command", "empty")
    install = data.get("install", [])
    if isinstance(install, str):
        install = [install]
    if not isinstance(install, list) or not all(isinstance(c, str) and c.strip() for c in install):
        raise _fail(where, "install", f"expected a list of commands, got {install!r}"[:300])
    image = _text(data, where, "image", required=False)
    context = None
    if image is not None:
        from harness.sandbox.images import CONTAINERFILES

        context = (file.parent / image).resolve()
        if not context.is_dir():
            raise _fail(where, "image", f"directory not found: {context}")
        if not any((context / name).is_file() for name in CONTAINERFILES):
            raise _fail(where, "image", f"{context} holds no {' or '.join(CONTAINERFILES)}")
    return Instance(where=where, instance_id=entry.name, repo=repo, base_commit=commit.lower(), patch=patch,
                    test_patch=test_patch, fail_to_pass=f2p, pass_to_pass=p2p, problem_statement=statement,
                    test_command=(command or DEFAULT_TEST_COMMAND).strip(), install=list(install), image=context,
                    warnings=warnings)

