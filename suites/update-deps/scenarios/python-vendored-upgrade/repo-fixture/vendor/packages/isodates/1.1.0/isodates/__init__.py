"""isodates: ISO 8601 dates and times (the successor of iso8601-tiny)."""

from datetime import date, datetime

__version__ = "1.1.0"


def parse_datetime(text):
    """An aware or naive datetime from an ISO 8601 string; a trailing Z means UTC."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def parse_date(text):
    """A date from YYYY-MM-DD, or the date part of an ISO 8601 datetime."""
    return date.fromisoformat(text[:10])
