"""The specialist templates the repository ships, copied where a test can use them."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The templates the repository ships (docs/mint.md lists them). Tests use copies, so what a
# user adds under templates/ (`mint enrich` writes enriched copies there) never changes them.
SHIPPED_TEMPLATES = ("python-bugfixer", "node-feature-builder", "dependency-upgrader")


def copy_shipped_templates(dest: Path) -> Path:
    """``dest`` holding the shipped base templates and their docs/, nothing else from templates/."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED_TEMPLATES:
        shutil.copy2(REPO / "templates" / f"{name}.json5", dest / f"{name}.json5")
    shutil.copytree(REPO / "templates" / "docs", dest / "docs")
    return dest
