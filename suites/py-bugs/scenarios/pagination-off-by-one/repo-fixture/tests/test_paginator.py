import pytest

from pagekit import PageOutOfRange, iter_all, paginate


def test_first_page_holds_the_first_items():
    page = paginate(list(range(1, 26)), page=1, per_page=10)
    assert page.items == list(range(1, 11))
    assert page.total_pages == 3
    assert page.has_next and not page.has_prev


def test_last_partial_page():
    page = paginate(list(range(1, 26)), page=3, per_page=10)
    assert page.items == [21, 22, 23, 24, 25]
    assert not page.has_next


def test_page_zero_is_rejected():
    with pytest.raises(PageOutOfRange):
        paginate([1, 2, 3], page=0, per_page=2)


def fake_api(data):
    calls = []

    def fetch(offset, limit):
        calls.append((offset, limit))
        return data[offset : offset + limit], len(data)

    return fetch, calls


def test_iter_all_returns_every_item():
    data = [f"row{i}" for i in range(250)]
    fetch, _ = fake_api(data)
    assert list(iter_all(fetch, per_page=100)) == data
