"""Pipe tables for markdownlite 3.x: Markdown(extensions=[TablesExtension()])."""

__version__ = "3.0.0"


class TablesExtension:
    def block(self, block, md):
        lines = [line.strip() for line in block.splitlines()]
        if not lines or not all(line.startswith("|") and line.endswith("|") for line in lines):
            return None
        rows = [[cell.strip() for cell in line[1:-1].split("|")] for line in lines]
        rows = [row for row in rows if not all(set(cell) <= set("-: ") for cell in row)]
        body = "".join("<tr>" + "".join(f"<td>{md.inline(cell)}</td>" for cell in row) + "</tr>" for row in rows)
        return f"<table>{body}</table>"
