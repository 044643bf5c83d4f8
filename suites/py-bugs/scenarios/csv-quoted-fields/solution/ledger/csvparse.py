"""Parse bank statement exports (CSV as in RFC 4180).

Errors carry the 1-based line number where the offending record starts, so that the import
screen can point the user at the right line of their file.
"""

from __future__ import annotations


class CsvError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def _records(text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """(starting line, fields) for every record, with a small state machine over characters."""
    if len(delimiter) != 1 or delimiter in "\"\r\n":
        raise ValueError("delimiter must be one character other than a quote or a line break")
    if text.startswith("\ufeff"):
        text = text[1:]  # spreadsheet exports often start with a byte order mark
    records: list[tuple[int, list[str]]] = []
    fields: list[str] = []
    field: list[str] = []
    line = 1
    record_line = 1
    quote_line = 0
    in_quotes = False
    after_quote = False  # just closed a quoted field; only a delimiter or line end may follow
    i, n = 0, len(text)

    def end_record() -> None:
        fields.append("".join(field))
        # A blank line is not a record (it would be one empty field).
        if fields != [""]:
            records.append((record_line, list(fields)))
        fields.clear()
        field.clear()

    while i < n:
        ch = text[i]
        if in_quotes:
            if ch == '"':
                if i + 1 < n and text[i + 1] == '"':
                    field.append('"')
                    i += 1
                else:
                    in_quotes = False
                    after_quote = True
            else:
                if ch == "\n":
                    line += 1
                field.append(ch)
        elif ch == delimiter:
            fields.append("".join(field))
            field.clear()
            after_quote = False
        elif ch in "\r\n":
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            end_record()
            line += 1
            record_line = line
            after_quote = False
        elif after_quote:
            raise CsvError(f"unexpected {ch!r} after a closing quote", line)
        elif ch == '"' and not field:
            in_quotes = True
            quote_line = line
        else:
            # A quote in the middle of an unquoted field is kept as it is (lenient, like Excel).
            field.append(ch)
        i += 1
    if in_quotes:
        raise CsvError("quoted field is never closed", quote_line)
    if field or fields or after_quote:
        end_record()
    return records


def parse_csv(text: str, delimiter: str = ",") -> list[list[str]]:
    """Split ``text`` into records of string fields.

    Quoted fields may contain the delimiter, doubled quotes (``""`` for ``"``) and line
    breaks. Line endings may be LF or CRLF; blank lines are skipped.
    """
    return [fields for _, fields in _records(text, delimiter)]


def parse_records(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    """Records as dicts keyed by the header row. A record with the wrong number of fields is an error."""
    records = _records(text, delimiter)
    if not records:
        return []
    (_, header), *body = records
    out = []
    for line, fields in body:
        if len(fields) != len(header):
            raise CsvError(f"expected {len(header)} fields, found {len(fields)}", line)
        out.append(dict(zip(header, fields)))
    return out
