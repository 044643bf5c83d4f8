"""Container images a test can build offline: a statically linked busybox of this machine is
the whole of a ``FROM scratch`` image."""

from __future__ import annotations

import shutil
import struct


def static_busybox() -> str | None:
    """A statically linked busybox (one with no ELF interpreter), or None."""
    found = shutil.which("busybox")
    if found is None:
        return None
    with open(found, "rb") as fh:
        head = fh.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return None
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        for i in range(phnum):
            fh.seek(phoff + i * phentsize)
            if struct.unpack("<I", fh.read(4))[0] == 3:  # PT_INTERP: dynamically linked
                return None
    return found
