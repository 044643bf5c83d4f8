"""What the quick YAML reader and the checked-documents cache save when dataset files load.

Writes ``--files`` dataset files of ``--cases`` cases each (the shape of the fleet benchmark's
datasets: an id, a category, a prompt and one assertion per case). Then, in one process, with
the two sides of each comparison alternating:

- **reading**: every file read with ``harness.datasets.readers`` as ``bench dataset`` and
  ``bench fleet`` do, with the quick reader on and off (off: PyYAML's loader, the path every
  file took before it); the built-in datasets too;
- **loading**: every file loaded with ``harness.datasets.format.load_file`` (read, checked,
  resolved) with no checked-documents cache, and with a warm one (filled by a first load).

It prints the median time per file of each side and their ratio, and checks that both sides
give the same data (exit status 1 otherwise), never timing.

Usage:
  .venv/bin/python benchmarks/dataset_loading.py
  .venv/bin/python benchmarks/dataset_loading.py --files 200 --cases 20 --repeats 7 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.datasets import readers  # noqa: E402
from harness.datasets.format import builtin_dir, load_file  # noqa: E402


def write_files(directory: Path, files: int, cases: int) -> list[Path]:
    paths = []
    for n in range(files):
        lines = [f"name: data-{n}", 'version: "1.0.0"', f'description: "cases of repository {n}"', "test_cases:"]
        for i in range(cases):
            lines += [f"  - id: data-{n}-{i}", f"    category: cat-{i % 4}",
                      f'    prompt: "Repeat the tag repo-{n}/data/{i} once."', "    assert:",
                      "      - type: icontains", f'        value: "repo-{n}/data/{i} "']
        path = directory / f"data-{n}.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def read_all(texts: list[tuple[Path, str]], quick: bool) -> tuple[float, list]:
    readers._QUICK.enabled = quick
    start = time.perf_counter()
    out = [readers._read_yaml_plain(path, text)[0] for path, text in texts]
    return time.perf_counter() - start, out


def measure(texts: list[tuple[Path, str]], repeats: int) -> dict:
    enabled = readers._QUICK.enabled
    if not enabled:
        raise SystemExit("the quick reader is not available here (yaml_rs is not installed)")
    times: dict[str, list[float]] = {"quick": [], "pyyaml": []}
    try:
        read_all(texts, True), read_all(texts, False)  # warm-up: imports, the reader's caches
        for i in range(repeats):
            order = (True, False) if i % 2 == 0 else (False, True)
            results = {}
            for quick in order:
                seconds, data = read_all(texts, quick)
                times["quick" if quick else "pyyaml"].append(seconds)
                results[quick] = data
            if results[True] != results[False]:
                print("the two readers gave different data", file=sys.stderr)
                raise SystemExit(1)
    finally:
        readers._QUICK.enabled = enabled
    per_file = {k: statistics.median(v) / len(texts) * 1000.0 for k, v in times.items()}
    return {"files": len(texts), "quick_ms_per_file": round(per_file["quick"], 3),
            "pyyaml_ms_per_file": round(per_file["pyyaml"], 3),
            "pyyaml_over_quick": round(per_file["pyyaml"] / per_file["quick"], 2)}


def load_all(paths: list[Path], cache_dir: str | None) -> tuple[float, list]:
    if cache_dir is None:
        os.environ["ZE_BENCHMARKS_DATASET_CACHE"] = "0"
    else:
        os.environ.pop("ZE_BENCHMARKS_DATASET_CACHE", None)
        os.environ["ZE_BENCHMARKS_CACHE_DIR"] = cache_dir
    start = time.perf_counter()
    out = [load_file(path).digest for path in paths]
    return time.perf_counter() - start, out


def measure_cache(paths: list[Path], cache_dir: str, repeats: int) -> dict:
    times: dict[str, list[float]] = {"warm": [], "none": []}
    load_all(paths, cache_dir), load_all(paths, None)  # fills the cache; imports
    for i in range(repeats):
        results = {}
        for side in (("warm", "none") if i % 2 == 0 else ("none", "warm")):
            seconds, digests = load_all(paths, cache_dir if side == "warm" else None)
            times[side].append(seconds)
            results[side] = digests
        if results["warm"] != results["none"]:
            print("a cached load gave another dataset", file=sys.stderr)
            raise SystemExit(1)
    per_file = {k: statistics.median(v) / len(paths) * 1000.0 for k, v in times.items()}
    return {"files": len(paths), "warm_cache_ms_per_file": round(per_file["warm"], 3),
            "no_cache_ms_per_file": round(per_file["none"], 3),
            "none_over_warm": round(per_file["none"] / per_file["warm"], 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if min(args.files, args.cases, args.repeats) < 1:
        parser.error("--files, --cases and --repeats must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        generated = [(p, p.read_text("utf-8")) for p in write_files(Path(tmp), args.files, args.cases)]
        builtin = [(p, p.read_text("utf-8")) for p in sorted(builtin_dir().glob("*.yaml"))]
        figures = {"reading": {"generated": measure(generated, args.repeats),
                               "builtin": measure(builtin, args.repeats)},
                   "loading": measure_cache([p for p, _ in generated], str(Path(tmp) / "cache"), args.repeats)}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, f in figures["reading"].items():
            print(f"reading, {name}: {f['files']} files, PyYAML {f['pyyaml_ms_per_file']} ms a file, quick reader "
                  f"{f['quick_ms_per_file']} ms a file: {f['pyyaml_over_quick']}x")
        f = figures["loading"]
        print(f"loading: {f['files']} files, no cache {f['no_cache_ms_per_file']} ms a file, warm cache "
              f"{f['warm_cache_ms_per_file']} ms a file: {f['none_over_warm']}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
