"""markdownlite 3.0: a small Markdown subset with extension objects.

3.0 replaces the module-level ``render()`` with the ``Markdown`` class (see CHANGELOG.md).
"""

import html
import re

__version__ = "3.0.0"

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


class Markdown:
    def __init__(self, extensions=()):
        self.extensions = list(extensions)

    def inline(self, text):
        text = html.escape(text, quote=False)
        text = _BOLD.sub(r"<strong>\1</strong>", text)
        return _LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', text)

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
