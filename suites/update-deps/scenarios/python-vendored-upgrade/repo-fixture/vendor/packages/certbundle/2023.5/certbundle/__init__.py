"""Root certificates bundle (metadata only in this mirror)."""

__version__ = "2023.5"


def where():
    return __file__
