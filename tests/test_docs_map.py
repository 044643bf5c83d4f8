"""The documentation stays inside the repository and its links resolve.

- No tracked ``.py`` or ``.md`` file cites a design document by the name that is not part of
  the repository; code points to ``docs/`` instead (``docs/architecture.md`` is the map).
- Every relative link in ``README.md`` and ``docs/*.md`` names a file that exists, and an
  anchor (``file.md#section``) names a heading of that file.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {".venv", "node_modules", ".git"}
# Spelled in two parts so that this file does not match itself.
EXTERNAL_DOC = re.compile(r"\b" + "DES" + r"IGN\b")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def tracked_files(*suffixes: str) -> list[Path]:
    """Tracked files with these suffixes (every such file under the root when git is absent)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        paths = [ROOT / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if p.is_file()]
    return sorted(p for p in paths
                  if p.suffix in suffixes and p.is_file()
                  and not SKIPPED_DIRS.intersection(p.relative_to(ROOT).parts))


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def without_fences(text: str) -> str:
    """The Markdown without fenced code blocks (line numbers kept)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def prose(text: str) -> str:
    """The Markdown without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", without_fences(text))


def slug(heading: str) -> str:
    """The anchor a heading gets on GitHub: lowercase, punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(without_fences(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_no_file_cites_a_document_outside_the_repository():
    hits = []
    for path in tracked_files(".py", ".md"):
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if EXTERNAL_DOC.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, ("point these to a document in the repository (docs/architecture.md, docs/scenarios.md, "
                      "docs/agents.md, docs/worker.md, docs/mint.md, ...) or state the fact itself:\n"
                      + "\n".join(hits))


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    text = prose(doc.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text) + REFERENCE.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto:, ...: not a file of the repository
        file_part, _, anchor = target.partition("#")
        dest = doc if not file_part else (doc.parent / file_part).resolve()
        if not dest.exists():
            broken.append(f"{target}: no such file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_architecture_map_is_linked_from_the_readme():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
