"""The in-memory results client, from harness.testing (kept importable here for the tests)."""

from harness.testing.results import MemoryResults  # noqa: F401
