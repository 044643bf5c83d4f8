from memo import TTLCache


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_set_and_get():
    cache = TTLCache(maxsize=2, ttl=60, clock=FakeClock())
    cache.set("a", 1)
    assert cache.get("a") == 1
    assert cache.get("missing", "dflt") == "dflt"


def test_least_recently_used_entry_is_evicted():
    cache = TTLCache(maxsize=2, ttl=60, clock=FakeClock())
    cache.set("a", 1)
    cache.set("b", 2)
    cache.get("a")  # "b" is now the least recently used
    cache.set("c", 3)
    assert cache.get("a") == 1
    assert cache.get("b") is None
    assert cache.get("c") == 3


def test_entries_expire_after_ttl():
    clock = FakeClock()
    cache = TTLCache(maxsize=10, ttl=30, clock=clock)
    cache.set("a", 1)
    clock.now += 29
    assert cache.get("a") == 1
    clock.now += 2
    assert cache.get("a") is None
