"""A bounded least-recently-used cache whose entries expire ``ttl`` seconds after being set.

``clock`` returns the current time in seconds; tests pass a fake clock.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable

_MISSING = object()


class TTLCache:
    def __init__(self, maxsize: int, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self.clock = clock
        # key -> (expires_at, value); order is recency, least recently used first.
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()

    def _purge_expired(self, now: float) -> None:
        for key in [k for k, (expires_at, _) in self._data.items() if expires_at <= now]:
            del self._data[key]

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value for ``key``, or ``default`` when missing or expired. Marks ``key`` as recently used."""
        entry = self._data.get(key, _MISSING)
        if entry is _MISSING:
            return default
        expires_at, value = entry
        if expires_at <= self.clock():
            del self._data[key]
            return default
        self._data.move_to_end(key)
        return value

    def set(self, key: Hashable, value: Any) -> None:
        """Store ``value``; when full, drop the least recently used entry.

        Expired entries are dropped first, so a live entry is never evicted to keep a dead one.
        """
        now = self.clock()
        if key in self._data:
            del self._data[key]
        elif len(self._data) >= self.maxsize:
            self._purge_expired(now)
            if len(self._data) >= self.maxsize:
                self._data.popitem(last=False)
        self._data[key] = (now + self.ttl, value)

    def delete(self, key: Hashable) -> bool:
        return self._data.pop(key, _MISSING) is not _MISSING

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __len__(self) -> int:
        """Number of live (unexpired) entries."""
        self._purge_expired(self.clock())
        return len(self._data)


def memoize(cache: TTLCache) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Cache a function's results in ``cache``, keyed by its arguments."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # Keyword order must not matter: f(a=1, b=2) and f(b=2, a=1) are the same call.
            key = (fn.__module__, fn.__qualname__, args, tuple(sorted(kwargs.items())))
            result = cache.get(key, _MISSING)
            if result is _MISSING:
                result = fn(*args, **kwargs)
                cache.set(key, result)
            return result

        return wrapper

    return decorate
