"""Forum comments: Markdown with pipe tables and :emoji: shortcodes, rendered to HTML."""

from __future__ import annotations

import markdownlite
from emoji_shortcodes import emojize


def render_comment(text: str) -> str:
    """HTML for a user's comment. User input is untrusted: the output must be safe to embed."""
    return markdownlite.render(emojize(text), extensions=["tables"], safe=True)
