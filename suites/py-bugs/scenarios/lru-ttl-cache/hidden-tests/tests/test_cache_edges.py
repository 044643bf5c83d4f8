import pytest

from memo import TTLCache, memoize


class FakeClock:
    def __init__(self):
        self.now = 5000.0

    def __call__(self):
        return self.now


def test_uses_the_injected_clock_only():
    clock = FakeClock()
    clock.now = 10.0  # far from the wall clock: a cache reading time.time() would expire everything
    cache = TTLCache(maxsize=2, ttl=5, clock=clock)
    cache.set("k", "v")
    assert cache.get("k") == "v"
    clock.now = 15.0
    assert cache.get("k") is None


def test_updating_a_key_at_capacity_evicts_nothing():
    cache = TTLCache(maxsize=2, ttl=60, clock=FakeClock())
    cache.set("a", 1)
    cache.set("b", 2)
    cache.set("b", 20)
    assert cache.get("a") == 1 and cache.get("b") == 20


def test_set_refreshes_recency_and_ttl():
    clock = FakeClock()
    cache = TTLCache(maxsize=2, ttl=10, clock=clock)
    cache.set("a", 1)
    cache.set("b", 2)
    clock.now += 8
    cache.set("a", 11)  # "a" is now the most recent and lives 10 more seconds
    cache.set("c", 3)  # evicts "b"
    assert "b" not in cache
    clock.now += 8
    assert cache.get("a") == 11


def test_expired_entries_are_dropped_before_live_ones():
    clock = FakeClock()
    cache = TTLCache(maxsize=2, ttl=10, clock=clock)
    cache.set("old", 1)
    clock.now += 5
    cache.set("live", 2)
    cache.get("old")
    clock.now += 6  # "old" expired, "live" has 4 seconds left
    cache.set("new", 3)
    assert cache.get("live") == 2
    assert cache.get("new") == 3


def test_len_counts_only_live_entries():
    clock = FakeClock()
    cache = TTLCache(maxsize=5, ttl=10, clock=clock)
    cache.set("a", 1)
    clock.now += 6
    cache.set("b", 2)
    assert len(cache) == 2
    clock.now += 5
    assert len(cache) == 1


def test_falsy_values_are_real_entries():
    cache = TTLCache(maxsize=3, ttl=10, clock=FakeClock())
    cache.set("zero", 0)
    cache.set("none", None)
    assert "zero" in cache and "none" in cache
    assert cache.get("none", "dflt") is None
    assert cache.delete("none") is True
    assert cache.delete("none") is False


def test_memoize_caches_falsy_results():
    calls = []
    cache = TTLCache(maxsize=10, ttl=60, clock=FakeClock())

    @memoize(cache)
    def lookup(user_id):
        calls.append(user_id)
        return None

    assert lookup(7) is None
    assert lookup(7) is None
    assert calls == [7]


def test_memoize_keys_on_keyword_arguments():
    cache = TTLCache(maxsize=10, ttl=60, clock=FakeClock())

    @memoize(cache)
    def power(base, exp=2):
        return base**exp

    assert power(3) == 9
    assert power(3, exp=3) == 27
    assert power(base=2, exp=5) == 32
    assert power(exp=5, base=2) == 32


@pytest.mark.parametrize("maxsize, ttl", [(0, 1), (1, 0)])
def test_invalid_configuration(maxsize, ttl):
    with pytest.raises(ValueError):
        TTLCache(maxsize=maxsize, ttl=ttl)
