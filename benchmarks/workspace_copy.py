"""Workspace preparation speed: fixture copy and workspace diff on a synthetic project.

The fixture has ``--files`` source files (4 KB each, in nested folders) plus a
``node_modules`` tree of ``--deps`` small files that the copy must skip. Measured, median of
``--repeats``: ``harness.scenarios.workspace.copy_tree`` (reflink when the filesystem supports it, else
kernel copy), ``shutil.copytree`` with the same exclusions for reference, and
``compute_diff`` after 10 files were edited. It checks that the copy skipped node_modules and
that the diff lists exactly the edited files (exit status 1 otherwise), never timing.

Usage:
  .venv/bin/python benchmarks/workspace_copy.py
  .venv/bin/python benchmarks/workspace_copy.py --files 5000 --deps 20000 --repeats 5 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.scenarios.workspace import ALWAYS_EXCLUDED, compute_diff, copy_tree  # noqa: E402


def make_fixture(root: Path, files: int, deps: int) -> None:
    body = ("x = 1  # filler line for a realistic source file size\n" * 80).encode()
    for i in range(files):
        path = root / "src" / f"pkg{i % 20}" / f"mod{i % 7}" / f"file{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    for i in range(deps):
        path = root / "node_modules" / f"dep{i % 200}" / f"f{i}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"module.exports = 1;\n")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--deps", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        fixture = tmp_path / "fixture"
        make_fixture(fixture, args.files, args.deps)
        ours, reference, diffs = [], [], []
        reflinked = 0
        for i in range(args.repeats):
            dst = tmp_path / f"ws{i}"
            report = {}
            ours.append(timed(lambda: report.setdefault("r", copy_tree(fixture, dst))))
            reflinked = report["r"].reflinked
            if (dst / "node_modules").exists() or report["r"].files != args.files:
                print("copy did not skip node_modules or missed files", file=sys.stderr)
                return 1
            ref = tmp_path / f"ref{i}"
            reference.append(timed(lambda: shutil.copytree(fixture, ref, ignore=shutil.ignore_patterns(*ALWAYS_EXCLUDED))))
            edited = sorted(p for p in dst.rglob("*.py"))[:10]
            for p in edited:
                p.write_text("changed\n")
            result = {}
            diffs.append(timed(lambda: result.setdefault("d", compute_diff(fixture, dst))))
            expected = sorted(p.relative_to(dst).as_posix() for p in edited)
            if result["d"].modified != expected or result["d"].added or result["d"].deleted:
                print("diff did not list exactly the edited files", file=sys.stderr)
                return 1
            shutil.rmtree(dst)
            shutil.rmtree(ref)
    out = {
        "files": args.files, "skippedDeps": args.deps, "repeats": args.repeats,
        "copyTreeMs": round(statistics.median(ours), 1),
        "shutilCopytreeMs": round(statistics.median(reference), 1),
        "diffMs": round(statistics.median(diffs), 1),
        "reflinkedFiles": reflinked,
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"fixture: {args.files} files of 4 KB + {args.deps} node_modules files (skipped); "
              f"median of {args.repeats}")
        print(f"copy_tree:        {out['copyTreeMs']} ms ({reflinked} files reflinked)")
        print(f"shutil.copytree:  {out['shutilCopytreeMs']} ms (same exclusions, reference)")
        print(f"compute_diff:     {out['diffMs']} ms (10 files edited)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
