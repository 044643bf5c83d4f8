from booking.ranges import DateRange, free_ranges, merge_ranges

__all__ = ["DateRange", "free_ranges", "merge_ranges"]
