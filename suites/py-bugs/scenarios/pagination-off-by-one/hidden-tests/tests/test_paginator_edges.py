import pytest

from pagekit import PageOutOfRange, iter_all, paginate


def test_total_that_divides_evenly_has_no_extra_page():
    page = paginate(list(range(20)), page=2, per_page=10)
    assert page.total_pages == 2
    assert page.items == list(range(10, 20))
    assert not page.has_next


def test_page_past_the_end_is_rejected():
    with pytest.raises(PageOutOfRange):
        paginate(list(range(20)), page=3, per_page=10)


def test_empty_collection_has_one_empty_page():
    page = paginate([], page=1, per_page=10)
    assert page.items == [] and page.total_pages == 1
    assert not page.has_next and not page.has_prev
    with pytest.raises(PageOutOfRange):
        paginate([], page=2, per_page=10)


def test_middle_page_links_both_ways():
    page = paginate("abcdefg", page=2, per_page=3)
    assert page.items == ["d", "e", "f"]
    assert page.has_next and page.has_prev


@pytest.mark.parametrize("size", [0, 1, 99, 100, 101, 200, 201])
def test_iter_all_every_size(size):
    data = list(range(size))
    calls = []

    def fetch(offset, limit):
        calls.append(offset)
        return data[offset : offset + limit], len(data)

    assert list(iter_all(fetch, per_page=100)) == data
    # One request per page, and never a request past the end except for the first one.
    assert len(calls) == max(1, -(-size // 100))


def test_iter_all_stops_when_the_server_runs_dry():
    # The server reports a stale total larger than what it actually has.
    data = list(range(150))
    calls = []

    def fetch(offset, limit):
        calls.append(offset)
        return data[offset : offset + limit], 1000

    assert list(iter_all(fetch, per_page=100)) == data
    # The short second page ends the walk; no requests for the empty pages up to 1000.
    assert calls == [0, 100]
