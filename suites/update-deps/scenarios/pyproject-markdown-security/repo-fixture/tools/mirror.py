"""The vendored package mirror in vendor/packages/ and the project's declared dependencies.

Each package has vendor/packages/<name>/index.json listing its versions with the modules they
provide, the packages they require and any security advisories; the files of a version live
in vendor/packages/<name>/<version>/. Used by install.py and audit.py.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRROR = ROOT / "vendor" / "packages"
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(?:;.*)?$")


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


def declared() -> dict[str, str]:
    """name -> specifier from [project].dependencies of pyproject.toml."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = {}
    for requirement in data.get("project", {}).get("dependencies", []):
        m = _REQ.match(requirement)
        if not m:
            raise ValueError(f"pyproject.toml: cannot read requirement {requirement!r}")
        out[normalize(m.group(1))] = m.group(2).strip()
    return out


def package_doc(name: str) -> dict | None:
    doc = MIRROR / name / "index.json"
    return json.loads(doc.read_text()) if doc.is_file() else None


def best_version(name: str, spec: str) -> str | None:
    doc = package_doc(name)
    if doc is None:
        return None
    candidates = [v for v in doc["versions"] if satisfies(v, spec)]
    return max(candidates, key=version_key) if candidates else None
