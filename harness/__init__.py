"""zebench harness: run coding agents on scenario fixtures, score them, store the results."""

__version__ = "0.1.0"
