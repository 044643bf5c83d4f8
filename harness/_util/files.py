"""Files written whole or not at all.

A reader never sees half a file: the content goes to a temporary file beside the target,
which is renamed over it (``os.replace``, atomic on one file system) when everything was
written, and removed when anything failed. The temporary file is created with mode 0o666 so
that the umask decides the target's mode, as for any file the user writes (``mode`` narrows
it: 0o600 for a file only its owner may read).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False, newline: str | None = None,
                  durable: bool = False, mode: int = 0o666) -> Iterator[IO[Any]]:
    """A file opened for writing that replaces ``path`` when the block ends without an
    exception. ``durable`` flushes the data and the directory entry to disk before returning
    (for records that must survive a power cut, not for reports that can be rewritten)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        fh = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline)
        with fh:
            yield fh
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, newline: str | None = None,
                      durable: bool = False, mode: int = 0o666) -> None:
    with atomic_writer(path, newline=newline, durable=durable, mode=mode) as fh:
        fh.write(text)


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2,
                      durable: bool = False) -> None:
    """``data`` as JSON (keys sorted, UTF-8 kept as is) and a final newline."""
    write_text_atomic(path, json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False) + "\n",
                      durable=durable)
