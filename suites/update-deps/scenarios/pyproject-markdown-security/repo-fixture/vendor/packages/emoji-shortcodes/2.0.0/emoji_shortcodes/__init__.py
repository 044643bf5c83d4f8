"""Replace :shortcodes: with emoji images (2.0: <img> tags from the emoji CDN)."""

import re

__version__ = "2.0.0"
CODES = {"tada", "smile", "thumbsup", "heart"}


def emojize(text):
    def image(m):
        name = m.group(1)
        return f'<img class="emoji" alt=":{name}:" src="/emoji/{name}.png">' if name in CODES else m.group(0)

    return re.sub(r":([a-z0-9_+-]+):", image, text)
