"""The checked-documents cache: dataset documents that passed every check, kept to be used again.

A dataset file whose exact bytes passed every check before is not parsed and checked again
(:func:`harness.datasets.format.load_file`). Its parsed document, its file lines and its digest
are kept as one JSON file under ``<cache>/datasets/`` (``$ZE_BENCHMARKS_CACHE_DIR``, default
``~/.cache/zebench``), named by the SHA-256 of :data:`CACHE_VERSION`, the dataset schema, the
file's extension and its bytes. Only JSON data is kept (never code); a document JSON cannot
represent exactly (integer keys, NaN, an infinity) is not kept; any failure to read or write
the cache only means the file is read and checked as if there were none; deleting the
directory is always safe. ``ZE_BENCHMARKS_DATASET_CACHE=0`` turns it off.

Why it exists: a warm load of a dataset file skips the checks and is about twice as quick as a
load without the cache (docs/PERFORMANCE.md, "Loading dataset files, measured alone",
``benchmarks/dataset_loading.py``; and "With the checked-documents cache" for ``bench fleet
validate``).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness._util.jsonschemas import load_schema

#: The version of what an entry vouches for. An entry says "these bytes read as this document
#: and passed every check", so BUMP THIS NUMBER whenever a change could make the same bytes read
#: differently or be judged differently: the readers (``harness/datasets/readers.py``,
#: ``quick_yaml.py``), the checks (``checks.py``, the assertion value checks of
#: ``harness.datasets.assertions``, the fast path of ``harness/_util/jsonschema_fast.py`` and its
#: number rules in ``harness/_util/jsonschemas.py``) or the form an entry holds. Entries of another
#: version are never read (their names differ) and the files are checked afresh. A change to
#: ``harness/schemas/dataset.schema.json`` needs no bump: the schema is part of every name.
#: 3: keyed on this number instead of the checks' source; NaN and infinities refused in numbers.
CACHE_VERSION = 3


class CheckedCache:
    """The entries of one cache directory (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def default(cls) -> "CheckedCache | None":
        """The cache the environment names, or None (turned off)."""
        environ = os.environ
        setting = (environ.get("ZE_BENCHMARKS_DATASET_CACHE"), environ.get("ZE_BENCHMARKS_CACHE_DIR"),
                   environ.get("XDG_CACHE_HOME"), environ.get("HOME"))
        if _DEFAULT_CACHE and _DEFAULT_CACHE[0] == setting:  # asked once per file: the same answer
            return _DEFAULT_CACHE[1]
        cache = None
        if (setting[0] or "1").strip().lower() not in ("0", "false", "no", "off"):
            from harness._util.places import default_cache_dir

            cache = cls(default_cache_dir() / "datasets")
        _DEFAULT_CACHE[:] = [setting, cache]
        return cache

    @staticmethod
    def key_of(path: Path, data: bytes) -> str:
        """The entry of ``data``, the bytes of the file ``path``."""
        digest = hashlib.sha256(_cache_salt().encode("utf-8"))
        digest.update(path.suffix.lower().encode("utf-8") + b"\0")
        digest.update(data)
        return digest.hexdigest()

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
        # Written whole and renamed into place like harness._util.files.atomic_writer (mode 0o666
        # less the umask, no fsync), without its per-call directory creation, random name and
        # file object: a cold check of 1,900 files keeps 1,900 entries, and this way each takes
        # about a quarter of the CPU time.
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


def _cache_salt() -> str:
    """What a kept document depends on besides the file: :data:`CACHE_VERSION` and the schema."""
    return f"checked-v{CACHE_VERSION}:" + _schema_digest()


@lru_cache(maxsize=None)
def _schema_digest() -> str:
    return hashlib.sha256(json.dumps(load_schema("dataset"), sort_keys=True).encode("utf-8")).hexdigest()
