"""Task generation speed: seconds per verified task of ``bench tasks generate``.

By default the source is a small synthetic project written to a temporary directory (a
module of arithmetic, comparison and slicing helpers and one pytest file per helper), so the
figure needs no network; ``--source`` takes a project directory or a package (NAME or
NAME==VERSION, its sdist downloaded once). Measured: the whole generation (download, baseline,
screening of each candidate, ``bench check``'s verification of each kept one), the candidates
tried and the time per kept task. It checks that ``--count`` tasks were kept and that every
kept task is a scenario of the suite written (exit status 1 otherwise), never timing.

Usage:
  .venv/bin/python benchmarks/taskgen_speed.py
  .venv/bin/python benchmarks/taskgen_speed.py --source toolz==1.2.0 --count 20 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.taskgen import GenerateOptions, generate  # noqa: E402

HELPERS = {
    "window": ("def window(items, size):\n    return [items[i:i + size] for i in range(len(items) - size + 1)]\n",
               "assert window([1, 2, 3, 4], 2) == [[1, 2], [2, 3], [3, 4]]\n    assert window([1], 2) == []"),
    "clamp": ("def clamp(value, low, high):\n    if value < low:\n        return low\n    if value > high:\n"
              "        return high\n    return value\n",
              "assert clamp(-1, 0, 3) == 0\n    assert clamp(5, 0, 3) == 3\n    assert clamp(2, 0, 3) == 2"),
    "total": ("def total(items, start=0):\n    result = start\n    for item in items:\n        result += item\n"
              "    return result\n",
              "assert total([1, 2, 3]) == 6\n    assert total([], 5) == 5"),
    "head": ("def head(items, n):\n    return items[:n]\n", "assert head([1, 2, 3], 2) == [1, 2]"),
    "both": ("def both(a, b):\n    return bool(a and b)\n", "assert both(1, 1)\n    assert not both(1, 0)"),
    "count_up": ("def count_up(n):\n    return [i for i in range(n)]\n", "assert count_up(3) == [0, 1, 2]"),
    "is_even": ("def is_even(n):\n    return n % 2 == 0\n", "assert is_even(4)\n    assert not is_even(3)"),
    "middle": ("def middle(items):\n    return items[len(items) // 2]\n", "assert middle([1, 2, 3]) == 2"),
}


def make_project(root: Path) -> None:
    (root / "speedkit").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "speedkit"\nversion = "1.0.0"\n')
    (root / "speedkit" / "__init__.py").write_text("")
    (root / "speedkit" / "helpers.py").write_text("\n\n".join(code for code, _ in HELPERS.values()))
    for name, (_, body) in HELPERS.items():
        (root / "tests" / f"test_{name}.py").write_text(f"from speedkit.helpers import {name}\n\n\n"
                                                        f"def test_{name}():\n    {body}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=None, help="A project directory or NAME[==VERSION] (default: synthetic).")
    parser.add_argument("--count", type=int, default=5, help="Tasks to keep (default 5).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="Oracle runs per verification (default 3).")
    parser.add_argument("--parallel", type=int, default=4, help="Runs of one verification at once (default 4).")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="taskgen-speed-"))
    try:
        source = args.source
        if source is None:
            make_project(scratch / "speedkit-src")
            source = str(scratch / "speedkit-src")
        out = scratch / "speed-suite"
        lines: list[str] = []
        outcome = generate(GenerateOptions(source=source, out=out, count=args.count, seed=args.seed,
                                           repeats=args.repeats, parallel=args.parallel,
                                           workspaces_root=scratch / "workspaces"), lines.append)
        written = sorted(p.name for p in (out / "scenarios").iterdir()) if (out / "scenarios").is_dir() else []
        ok = len(outcome.kept) == args.count and written == sorted(k.name for k in outcome.kept)
        verify = [k.seconds for k in outcome.kept]
        figures = {
            "source": outcome.source.provenance() if outcome.source else None,
            "kept": len(outcome.kept), "tried": outcome.tried, "candidates": outcome.candidates,
            "rejected": dict(outcome.rejected), "seconds": round(outcome.seconds, 1),
            "secondsPerKept": None if outcome.seconds_per_kept is None else round(outcome.seconds_per_kept, 1),
            "secondsScreenAndVerifyPerKept": round(sum(verify) / len(verify), 1) if verify else None,
            "baselineSeconds": outcome.baseline.get("seconds"),
            "repeats": args.repeats, "parallel": args.parallel, "ok": ok,
        }
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            name = figures["source"]["name"] if figures["source"] else source
            print(f"source {name}: {figures['kept']} kept of {figures['tried']} tried ({figures['candidates']} "
                  f"candidates) in {figures['seconds']} s: {figures['secondsPerKept']} s per kept task "
                  f"({figures['secondsScreenAndVerifyPerKept']} s screening + verifying the kept one itself); "
                  f"rejected {figures['rejected']}")
            if not ok:
                print("FAILED: " + (lines[-1] if lines else "no task kept"))
        return 0 if ok else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
