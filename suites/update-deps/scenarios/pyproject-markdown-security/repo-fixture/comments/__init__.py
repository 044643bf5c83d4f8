from comments.render import render_comment

__all__ = ["render_comment"]
