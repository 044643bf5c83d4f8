"""Mint: snapshots that carry a specialist's benchmark proof, and documentation enrichment.

- :mod:`harness.mint.snapshot` builds, validates and writes ``snapshot-NNN.json5``.
- :mod:`harness.mint.comparison` makes the snapshot's baseline-vs-specialist comparison with
  :func:`worker.analysis.compare.compare_runs` (the specialist the only compared factor).
- :mod:`harness.mint.enrich` and :mod:`harness.mint.documents` enrich documentation entries.
- :mod:`harness.mint.output` writes numbered files atomically without overwriting.
"""

from harness.mint.snapshot import MintError, MintResult, build_snapshot, mint_snapshot, validate_snapshot, write_snapshot

__all__ = ["MintError", "MintResult", "build_snapshot", "mint_snapshot", "validate_snapshot", "write_snapshot"]
