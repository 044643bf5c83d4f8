"""jsonlog 1.8: one JSON object per log line."""

import json

__version__ = "1.8.0"


def format_event(event, **fields):
    return json.dumps({"event": event, **fields}, sort_keys=True, separators=(",", ":"))
