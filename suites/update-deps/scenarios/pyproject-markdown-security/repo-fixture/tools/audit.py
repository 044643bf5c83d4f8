#!/usr/bin/env python3
"""Security audit of the declared dependencies (like pip-audit, against the vendored mirror).

Fails when the version the install resolves has an advisory, and also when a declared range
still admits a version with an advisory: a floor below the fixed release lets any other
resolver (or an older mirror) install the vulnerable version.
"""

from __future__ import annotations

import sys

from mirror import best_version, declared, package_doc, satisfies


def main() -> int:
    problems = []
    for name, spec in declared().items():
        doc = package_doc(name)
        if doc is None:
            continue
        resolved = best_version(name, spec)
        for version, meta in sorted(doc["versions"].items()):
            for advisory in meta.get("advisories", []):
                if version == resolved:
                    problems.append(f"{name}=={version} (resolved) has advisory {advisory}")
                elif satisfies(version, spec):
                    problems.append(f"{name}{spec} still allows {version}, which has advisory {advisory}")
    for p in problems:
        print(f"VULNERABLE: {p}", file=sys.stderr)
    if problems:
        return 1
    print("audit: no known advisories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
