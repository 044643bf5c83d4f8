"""jsonlog 2.0: one JSON object per log line, with a timestamp and level."""

import json
import time

__version__ = "2.0.0"


def format_event(event, level="info", **fields):
    record = {"msg": event, "level": level, "ts": round(time.time(), 3), **fields}
    return json.dumps(record, sort_keys=True, separators=(",", ":"))
