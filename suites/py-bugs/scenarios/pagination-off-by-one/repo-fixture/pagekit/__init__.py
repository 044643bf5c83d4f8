from pagekit.paginator import Page, PageOutOfRange, iter_all, paginate

__all__ = ["Page", "PageOutOfRange", "iter_all", "paginate"]
