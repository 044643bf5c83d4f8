from memo.cache import TTLCache, memoize

__all__ = ["TTLCache", "memoize"]
