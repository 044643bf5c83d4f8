from datetime import date

from booking import DateRange, free_ranges, merge_ranges


def d(day, month=3):
    return date(2025, month, day)


def test_touching_ranges_merge():
    # March 1-3 and March 4-6 are one continuous six-day block.
    assert merge_ranges([DateRange(d(1), d(3)), DateRange(d(4), d(6))]) == [DateRange(d(1), d(6))]


def test_ranges_sharing_an_end_day_merge():
    assert merge_ranges([DateRange(d(1), d(3)), DateRange(d(3), d(3))]) == [DateRange(d(1), d(3))]


def test_one_day_gap_keeps_ranges_apart():
    ranges = [DateRange(d(1), d(3)), DateRange(d(5), d(6))]
    assert merge_ranges(ranges) == ranges


def test_contained_range_does_not_shrink_the_block():
    got = merge_ranges([DateRange(d(1), d(20)), DateRange(d(5), d(6))])
    assert got == [DateRange(d(1), d(20))]


def test_merge_does_not_modify_the_input():
    a, b = DateRange(d(1), d(5)), DateRange(d(3), d(9))
    ranges = [b, a]
    merge_ranges(ranges)
    assert ranges == [b, a]
    assert (a.start, a.end, b.start, b.end) == (d(1), d(5), d(3), d(9))


def test_merge_across_month_end():
    got = merge_ranges([DateRange(d(25, 2), d(28, 2)), DateRange(d(1, 3), d(2, 3))])
    assert got == [DateRange(d(25, 2), d(2, 3))]


def test_empty_input():
    assert merge_ranges([]) == []
    assert free_ranges([], DateRange(d(1), d(2))) == [DateRange(d(1), d(2))]


def test_free_ranges_window_fully_blocked():
    assert free_ranges([DateRange(d(1, 2), d(30, 4))], DateRange(d(1), d(31))) == []


def test_free_ranges_blocks_on_window_edges():
    window = DateRange(d(1), d(10))
    blocked = [DateRange(d(1), d(2)), DateRange(d(10), d(15))]
    assert free_ranges(blocked, window) == [DateRange(d(3), d(9))]


def test_free_ranges_ignores_blocks_outside_window():
    window = DateRange(d(10), d(12))
    blocked = [DateRange(d(1), d(3)), DateRange(d(20), d(25))]
    assert free_ranges(blocked, window) == [window]


def test_free_days_plus_blocked_days_cover_the_window():
    window = DateRange(d(1), d(31))
    blocked = [DateRange(d(3), d(4)), DateRange(d(5), d(5)), DateRange(d(9), d(12)), DateRange(d(11), d(30))]
    free = free_ranges(blocked, window)
    blocked_days = sum(r.days for r in merge_ranges(blocked))
    assert sum(r.days for r in free) + blocked_days == window.days
