"""Root certificates bundle (metadata only in this mirror)."""

__version__ = "2024.2"


def where():
    return __file__
