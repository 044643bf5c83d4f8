"""markdownlite 2.4: a small Markdown subset (paragraphs, **bold**, [links](url), extensions)."""

import html
import importlib
import re

__version__ = "2.4.1"

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _inline(text, safe):
    text = html.escape(text, quote=False)
    text = _BOLD.sub(r"<strong>\1</strong>", text)

    def link(m):
        url = m.group(2).replace('"', "&quot;") if safe else m.group(2)
        return f'<a href="{url}">{m.group(1)}</a>'

    return _LINK.sub(link, text)


def render(text, extensions=(), safe=False):
    """HTML for ``text``. ``extensions`` are names of installed plugins ("tables" loads
    markdownlite_tables). ``safe`` escapes quotes inside link targets."""
    plugins = [importlib.import_module(f"markdownlite_{name}").plugin for name in extensions]
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        for plugin in plugins:
            out = plugin(block, lambda t: _inline(t, safe))
            if out is not None:
                blocks.append(out)
                break
        else:
            blocks.append(f"<p>{_inline(block, safe)}</p>")
    return "\n".join(blocks)
