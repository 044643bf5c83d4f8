"""Page-number pagination.

Pages are numbered from 1. An empty collection still has one (empty) page, so that
page 1 is always valid and a UI can render "page 1 of 1".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Iterator, Sequence, TypeVar

T = TypeVar("T")


class PageOutOfRange(ValueError):
    """Raised for a page number outside 1..total_pages."""


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    number: int
    per_page: int
    total: int

    @property
    def total_pages(self) -> int:
        return self.total // self.per_page + 1

    @property
    def has_next(self) -> bool:
        return self.number <= self.total_pages

    @property
    def has_prev(self) -> bool:
        return self.number > 1


def paginate(items: Sequence[T], page: int, per_page: int = 20) -> Page[T]:
    """Return page ``page`` (1-based) of ``items``."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    start = page * per_page
    chunk = list(items[start : start + per_page])
    result = Page(items=chunk, number=page, per_page=per_page, total=len(items))
    if page < 1 or page > result.total_pages:
        raise PageOutOfRange(f"page {page} is outside 1..{result.total_pages}")
    return result


def iter_all(fetch: Callable[[int, int], tuple[list[T], int]], per_page: int = 100) -> Iterator[T]:
    """Yield every item of an offset/limit API.

    ``fetch(offset, limit)`` returns ``(items, total)`` where ``total`` is the size of the
    whole collection as the server reports it.
    """
    offset = 0
    items, total = fetch(offset, per_page)
    yield from items
    while offset + per_page < total - per_page:
        offset += per_page
        items, total = fetch(offset, per_page)
        yield from items
