"""Shortening text for display."""


def word_count(text: str) -> int:
    """The number of whitespace-separated words in ``text``."""
    return len(text.split())


def truncate(text: str, width: int, suffix: str = "...") -> str:
    """``text`` cut to at most ``width`` characters, ending with ``suffix`` when it was cut."""
    if width < 0:
        raise ValueError("width must be 0 or more")
    if len(text) <= width:
        return text
    return text[:width] + suffix
