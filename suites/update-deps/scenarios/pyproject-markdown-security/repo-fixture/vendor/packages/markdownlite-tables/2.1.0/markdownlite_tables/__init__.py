"""Pipe tables for markdownlite 2.x (loaded by name: render(..., extensions=["tables"]))."""

__version__ = "2.1.0"


def plugin(block, inline):
    lines = [line.strip() for line in block.splitlines()]
    if not lines or not all(line.startswith("|") and line.endswith("|") for line in lines):
        return None
    rows = [[cell.strip() for cell in line[1:-1].split("|")] for line in lines]
    rows = [row for row in rows if not all(set(cell) <= set("-: ") for cell in row)]
    body = "".join("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table>{body}</table>"
