"""Forum comments: Markdown with pipe tables and :emoji: shortcodes, rendered to HTML."""

from __future__ import annotations

from emoji_shortcodes import emojize
from markdownlite import Markdown
from markdownlite_tables import TablesExtension

# One converter for the process: it holds no per-document state.
_MARKDOWN = Markdown(extensions=[TablesExtension()])


def render_comment(text: str) -> str:
    """HTML for a user's comment. User input is untrusted: the output must be safe to embed."""
    return _MARKDOWN.convert(emojize(text))
