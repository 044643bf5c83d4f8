#!/usr/bin/env python3
"""Offline install (the project's stand-in for ``pip install --no-index -e .``): resolve each
range in pyproject.toml's [project].dependencies to the highest version in the vendored mirror,
check the chosen versions' own requirements against each other, and link their modules into
.deps/ (on pytest's pythonpath). Security advisories are reported by tools/audit.py.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from mirror import MIRROR, ROOT, best_version, declared, normalize, package_doc, satisfies

TARGET = ROOT / ".deps"


def main() -> int:
    # Start from nothing, so a failed install never leaves stale modules importable.
    if TARGET.exists():
        shutil.rmtree(TARGET)
    errors: list[str] = []
    chosen: dict[str, str] = {}
    for name, spec in declared().items():
        if package_doc(name) is None:
            errors.append(f"{name} is not in the vendored mirror")
            continue
        version = best_version(name, spec)
        if version is None:
            available = ", ".join(package_doc(name)["versions"])
            errors.append(f"no vendored version of {name} satisfies {spec!r} (available: {available})")
            continue
        chosen[name] = version
    for name, version in chosen.items():
        for dep, spec in package_doc(name)["versions"][version].get("requires", {}).items():
            got = chosen.get(normalize(dep))
            if got is None:
                errors.append(f"{name}=={version} requires {dep}{spec}, which pyproject.toml does not declare")
            elif not satisfies(got, spec):
                errors.append(f"{name}=={version} requires {dep}{spec}, but {dep}=={got} was resolved")
    if errors:
        for e in errors:
            print(f"ERROR: {e}", file=sys.stderr)
        return 1
    TARGET.mkdir()
    for name, version in sorted(chosen.items()):
        for module in package_doc(name)["versions"][version].get("modules", []):
            source = MIRROR / name / version / module
            (TARGET / module).symlink_to(Path("..") / source.relative_to(ROOT), target_is_directory=True)
        print(f"installed {name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
