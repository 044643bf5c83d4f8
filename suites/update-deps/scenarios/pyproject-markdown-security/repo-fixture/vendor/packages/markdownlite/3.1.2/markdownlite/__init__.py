"""markdownlite 3.1: a small Markdown subset with extension objects.

Links whose target uses a scheme other than http, https or mailto (``javascript:``,
``data:``, ``vbscript:``, in any letter case) are rendered as plain text
(advisory ML-2025-07, fixed in 3.1.2).
"""

import html
import re

__version__ = "3.1.2"

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):")
SAFE_SCHEMES = {"http", "https", "mailto"}


def _is_safe(url):
    squashed = re.sub(r"[\x00-\x20]", "", html.unescape(url)).lower()
    m = _SCHEME.match(squashed)
    return m is None or m.group(1) in SAFE_SCHEMES


class Markdown:
    def __init__(self, extensions=()):
        self.extensions = list(extensions)

    def inline(self, text):
        text = html.escape(text, quote=False)
        text = _BOLD.sub(r"<strong>\1</strong>", text)

        def link(m):
            label, url = m.group(1), m.group(2)
            if not _is_safe(url):
                return label
            return f'<a href="{html.escape(url)}">{label}</a>'

        return _LINK.sub(link, text)

    def convert(self, text):
        blocks = []
        for block in re.split(r"\n\s*\n", text.strip()):
            for ext in self.extensions:
                out = ext.block(block, self)
                if out is not None:
                    blocks.append(out)
                    break
            else:
                blocks.append(f"<p>{self.inline(block)}</p>")
        return "\n".join(blocks)
