"""Durations written as ``1h30m``."""

import re

_UNITS = {"d": 86400, "h": 3600, "m": 60}
_PART = re.compile(r"(\d+)([dhm])")


def parse_duration(text: str) -> int:
    """Seconds in a duration such as ``"2h"``, ``"1d4h"`` or ``"90m"``."""
    compact = text.replace(" ", "").lower()
    if not compact:
        raise ValueError("empty duration")
    parts = _PART.findall(compact)
    if "".join(n + u for n, u in parts) != compact:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _UNITS[u] for n, u in parts)


def format_duration(seconds: int) -> str:
    """The shortest ``1h30m`` form of ``seconds`` (whole minutes and more)."""
    if seconds < 0:
        raise ValueError("a duration is 0 or more seconds")
    out = []
    for unit, size in _UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            out.append(f"{count}{unit}")
    return "".join(out) or "0m"
