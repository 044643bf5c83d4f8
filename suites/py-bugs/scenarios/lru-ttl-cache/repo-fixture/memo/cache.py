"""A bounded least-recently-used cache whose entries expire ``ttl`` seconds after being set.

``clock`` returns the current time in seconds; tests pass a fake clock.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable


class TTLCache:
    def __init__(self, maxsize: int, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self.clock = clock
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value for ``key``, or ``default`` when missing or expired. Marks ``key`` as recently used."""
        entry = self._data.get(key)
        if entry is None:
            return default
        stored_at, value = entry
        if time.time() - stored_at > self.ttl:
            return default
        return value

    def set(self, key: Hashable, value: Any) -> None:
        """Store ``value``; when full, drop the least recently used entry."""
        if len(self._data) >= self.maxsize:
            self._data.popitem()
        self._data[key] = (self.clock(), value)

    def delete(self, key: Hashable) -> bool:
        return self._data.pop(key, None) is not None

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        """Number of live (unexpired) entries."""
        return len(self._data)


def memoize(cache: TTLCache) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Cache a function's results in ``cache``, keyed by its arguments."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (fn.__qualname__, args)
            result = cache.get(key)
            if result:
                return result
            result = fn(*args, **kwargs)
            cache.set(key, result)
            return result

        return wrapper

    return decorate
