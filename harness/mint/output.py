"""Numbered output files (``snapshot-001.json5``, ``enriched-002.json5``) written atomically.

The number is the highest existing one plus one, starting at 001. The content is written to a
temporary file first and then hard-linked to its final name: ``link()`` fails when the name
exists, so two concurrent writers can never overwrite each other (the loser takes the next
number) and a reader never sees a half-written file. Where hard links are not supported, the
final name is created with ``O_CREAT | O_EXCL``, which keeps the never-overwrite guarantee.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path


def _highest(directory: Path, pattern: re.Pattern[str]) -> int:
    best = 0
    for entry in os.listdir(directory):
        m = pattern.match(entry)
        if m:
            best = max(best, int(m.group(1)))
    return best


def write_next_numbered(directory: Path, prefix: str, text: str, suffix: str = ".json5") -> tuple[int, Path]:
    """Write ``text`` to ``<directory>/<prefix>-<NNN><suffix>`` with the next free number.

    Returns ``(number, path)``. Never replaces an existing file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(rf"^{re.escape(prefix)}-(\d+){re.escape(suffix)}$")
    data = text.encode("utf-8")
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{prefix}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o644)  # mkstemp makes 0600; outputs are meant to be shared
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        use_link = True
        while True:
            number = _highest(directory, pattern) + 1
            final = directory / f"{prefix}-{number:03d}{suffix}"
            try:
                if use_link:
                    os.link(tmp_name, final)
                else:
                    _write_exclusive(final, data)
                return number, final
            except FileExistsError:
                continue  # another writer took this number: try the next one
            except OSError as exc:
                if use_link and exc.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                    use_link = False
                    continue
                raise
    finally:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass


def _write_exclusive(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(path)
        raise
