"""Bug-fix tasks generated from real Python code by mutation (``bench tasks generate``; the
guide is docs/taskgen.md): the project's own pytest tests find the bug, ``bench check``'s
checks prove each task, and each kept task is an ordinary scenario of a suite."""

from harness.taskgen.generate import GenerateOptions, Kept, Outcome, TaskgenError, generate
from harness.taskgen.mutants import KINDS, Mutant, all_mutants, in_order

__all__ = ["KINDS", "GenerateOptions", "Kept", "Mutant", "Outcome", "TaskgenError", "all_mutants", "generate",
           "in_order"]
