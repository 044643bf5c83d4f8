#!/usr/bin/env python3
"""Offline install from the vendored mirror in vendor/packages/ (the project's stand-in for
``pip install --no-index --require-hashes -r requirements.txt``).

requirements.txt is the lock file: every line must pin ``name==version``. Each package has a
metadata document vendor/packages/<name>/index.json listing its versions with the modules they
provide, the packages they require, deprecations and security advisories. The installer
refuses versions with advisories and unpinned or unsatisfied requirements, warns about
deprecated packages, and links each module into .deps/ (on pytest's pythonpath).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRROR = ROOT / "vendor" / "packages"
TARGET = ROOT / ".deps"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def satisfies(version: str, spec: str) -> bool:
    """PEP 440 comparison clauses joined by commas (numeric release segments only)."""
    v = version_key(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = re.fullmatch(r"(==|!=|>=|<=|>|<|~=)\s*([\d.]+)", clause)
        if not m:
            raise ValueError(f"unsupported specifier {clause!r}")
        op, bound = m.group(1), version_key(m.group(2))
        width = max(len(v), len(bound))
        a, b = v + (0,) * (width - len(v)), bound + (0,) * (width - len(bound))
        if op == "~=":
            ok = a >= b and a[: len(bound) - 1] == bound[:-1]
        else:
            ok = {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


def read_lock(path: Path) -> tuple[dict[str, str], list[str]]:
    pins, errors = {}, []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([\d.]+)", line)
        if not m:
            errors.append(f"requirements.txt:{number}: {line!r} is not pinned as name==version")
            continue
        pins[normalize(m.group(1))] = m.group(2)
    return pins, errors


def main() -> int:
    # Start from nothing, so a failed install never leaves stale modules importable.
    if TARGET.exists():
        shutil.rmtree(TARGET)
    pins, errors = read_lock(ROOT / "requirements.txt")
    warnings: list[str] = []
    links: list[tuple[str, Path]] = []
    for name, version in sorted(pins.items()):
        doc_file = MIRROR / name / "index.json"
        if not doc_file.is_file():
            errors.append(f"{name} is not in the vendored mirror")
            continue
        meta = json.loads(doc_file.read_text())["versions"].get(version)
        if meta is None:
            available = ", ".join(json.loads(doc_file.read_text())["versions"])
            errors.append(f"{name}=={version} is not in the vendored mirror (available: {available})")
            continue
        for advisory in meta.get("advisories", []):
            errors.append(f"{name}=={version} has a security advisory: {advisory}")
        if meta.get("deprecated"):
            warnings.append(f"{name}=={version} is deprecated: {meta['deprecated']}")
        for dep, spec in meta.get("requires", {}).items():
            pinned = pins.get(normalize(dep))
            if pinned is None:
                errors.append(f"{name}=={version} requires {dep}{spec}, which requirements.txt does not pin")
            elif not satisfies(pinned, spec):
                errors.append(f"{name}=={version} requires {dep}{spec}, but requirements.txt pins {dep}=={pinned}")
        for module in meta.get("modules", []):
            links.append((module, MIRROR / name / version / module))
    for w in warnings:
        print(f"WARNING: {w}", file=sys.stderr)
    if errors:
        for e in errors:
            print(f"ERROR: {e}", file=sys.stderr)
        return 1
    TARGET.mkdir()
    for module, source in links:
        (TARGET / module).symlink_to(Path("..") / source.relative_to(ROOT), target_is_directory=True)
        print(f"linked {module} -> {source.relative_to(ROOT)}")
    print("install: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
