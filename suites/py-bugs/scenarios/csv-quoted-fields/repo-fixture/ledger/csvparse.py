"""Parse bank statement exports (CSV as in RFC 4180).

Errors carry the 1-based line number where the offending record starts, so that the import
screen can point the user at the right line of their file.
"""

from __future__ import annotations


class CsvError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def parse_csv(text: str, delimiter: str = ",") -> list[list[str]]:
    """Split ``text`` into records of string fields."""
    rows = []
    for line in text.split("\n"):
        if not line:
            continue
        rows.append(line.split(delimiter))
    return rows


def parse_records(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    """Records as dicts keyed by the header row. A record with the wrong number of fields is an error."""
    rows = parse_csv(text, delimiter)
    if not rows:
        return []
    header, *body = rows
    return [dict(zip(header, row)) for row in body]
