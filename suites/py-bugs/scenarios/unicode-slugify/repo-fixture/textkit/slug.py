"""URL slugs for article titles."""

from __future__ import annotations

import re


def slugify(text: str, *, separator: str = "-", max_length: int | None = None) -> str:
    """Turn a title into a URL slug: lowercase ASCII letters and digits joined by ``separator``."""
    slug = re.sub(r"[^a-z0-9]+", separator, text.lower()).strip(separator)
    if max_length is not None:
        slug = slug[:max_length]
    return slug


def unique_slug(text: str, existing: set[str], *, separator: str = "-", max_length: int | None = None) -> str:
    """A slug for ``text`` that is not in ``existing``, adding ``-2``, ``-3``, ... when needed."""
    raise NotImplementedError
