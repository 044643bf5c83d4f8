"""iso8601-tiny: deprecated, renamed to isodates."""

from datetime import datetime

__version__ = "0.4.0"


def parse_iso(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
