from datetime import date

import pytest

from booking import DateRange, free_ranges, merge_ranges


def d(day, month=3):
    return date(2025, month, day)


def test_overlapping_ranges_merge():
    assert merge_ranges([DateRange(d(1), d(5)), DateRange(d(3), d(8))]) == [DateRange(d(1), d(8))]


def test_disjoint_ranges_stay_apart():
    ranges = [DateRange(d(1), d(2)), DateRange(d(10), d(12))]
    assert merge_ranges(ranges) == ranges


def test_unsorted_input_is_merged():
    got = merge_ranges([DateRange(d(10), d(12)), DateRange(d(1), d(3)), DateRange(d(2), d(11))])
    assert got == [DateRange(d(1), d(12))]


def test_free_ranges_between_blocks():
    window = DateRange(d(1), d(31))
    blocked = [DateRange(d(5), d(9)), DateRange(d(20), d(25))]
    assert free_ranges(blocked, window) == [
        DateRange(d(1), d(4)),
        DateRange(d(10), d(19)),
        DateRange(d(26), d(31)),
    ]


def test_backwards_range_is_rejected():
    with pytest.raises(ValueError):
        DateRange(d(5), d(4))
