"""The async storage interface the core talks to, shaped after the D1 binding.

Two backends implement it: :mod:`worker.sqlite_backend` (a local file, used by ``worker dev``
and in-process by the harness) and :mod:`worker.d1_backend` (Cloudflare D1). The core keeps
to what both can do: no explicit transactions (``batch`` is the unit of atomicity), at most
:data:`MAX_BOUND_PARAMS` parameters per statement, and numbers that may come back as ints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

# D1 refuses a statement with more than 100 bound parameters ("too many SQL variables").
MAX_BOUND_PARAMS = 100

Row = dict[str, Any]


@dataclass(frozen=True)
class Statement:
    """A parameterised SQL statement (``?`` placeholders only)."""

    sql: str
    params: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if len(self.params) > MAX_BOUND_PARAMS:
            raise ValueError(f"{len(self.params)} bound parameters; D1 allows {MAX_BOUND_PARAMS}")


class StorageError(RuntimeError):
    """A backend failure (I/O, SQL error) that is not a constraint violation."""


class ConstraintError(StorageError):
    """A UNIQUE/PRIMARY KEY/FOREIGN KEY constraint failed; the whole batch was rolled back."""


class Storage(Protocol):
    async def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query."""

    async def first(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, or None."""

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute one statement; return the number of rows changed."""

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        """Execute statements atomically (all or none); return each one's rows."""


def is_constraint_message(message: str) -> bool:
    """True for SQLite/D1 constraint failures, which D1 only reports as text."""
    return "constraint failed" in message.lower()
