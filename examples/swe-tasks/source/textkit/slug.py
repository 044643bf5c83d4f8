"""URL slugs."""

import re
import unicodedata


def slugify(text: str, separator: str = "-") -> str:
    """Lowercase ASCII words of ``text`` joined by ``separator``: ``"Hello, World!"`` -> ``"hello-world"``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", separator, ascii_text.lower())
