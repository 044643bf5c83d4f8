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
        # Ceiling division; an empty collection still has one page.
        return max(1, -(-self.total // self.per_page))

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages

    @property
    def has_prev(self) -> bool:
        return self.number > 1


def paginate(items: Sequence[T], page: int, per_page: int = 20) -> Page[T]:
    """Return page ``page`` (1-based) of ``items``."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    total = len(items)
    total_pages = max(1, -(-total // per_page))
    if page < 1 or page > total_pages:
        raise PageOutOfRange(f"page {page} is outside 1..{total_pages}")
    start = (page - 1) * per_page
    return Page(items=list(items[start : start + per_page]), number=page, per_page=per_page, total=total)


def iter_all(fetch: Callable[[int, int], tuple[list[T], int]], per_page: int = 100) -> Iterator[T]:
    """Yield every item of an offset/limit API.

    ``fetch(offset, limit)`` returns ``(items, total)`` where ``total`` is the size of the
    whole collection as the server reports it.
    """
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    offset = 0
    while True:
        items, total = fetch(offset, per_page)
        yield from items
        offset += per_page
        # Stop on the reported total, and also on a short or empty page so that a server
        # whose total shrinks while we read cannot make us loop forever.
        if offset >= total or len(items) < per_page:
            return
