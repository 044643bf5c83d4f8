import pytest

from ledger import CsvError, parse_csv, parse_records


def test_line_break_inside_quotes_is_part_of_the_field():
    text = 'id,memo\n1,"first line\nsecond line"\n2,plain\n'
    assert parse_csv(text) == [["id", "memo"], ["1", "first line\nsecond line"], ["2", "plain"]]


def test_crlf_line_endings():
    assert parse_csv('a,b\r\n"x\r\ny",2\r\n') == [["a", "b"], ["x\r\ny", "2"]]


def test_empty_fields_are_kept():
    assert parse_csv("a,,c\n,,\n") == [["a", "", "c"], ["", "", ""]]
    assert parse_csv('"",x\n') == [["", "x"]]


def test_last_record_without_newline():
    assert parse_csv("a,b\n1,2") == [["a", "b"], ["1", "2"]]


def test_blank_lines_are_skipped():
    assert parse_csv("a\n\n\nb\n") == [["a"], ["b"]]


def test_semicolon_delimiter():
    assert parse_csv('name;amount\n"Müller; Sohn";"1,50"\n', delimiter=";") == [
        ["name", "amount"],
        ["Müller; Sohn", "1,50"],
    ]


def test_byte_order_mark_is_not_part_of_the_header():
    assert parse_records("\ufeffdate,amount\n2025-01-01,5\n") == [{"date": "2025-01-01", "amount": "5"}]


def test_unterminated_quote_reports_where_it_started():
    with pytest.raises(CsvError) as err:
        parse_csv('a,b\n1,"never closed\n2,3\n')
    assert err.value.line == 2


def test_error_line_counts_physical_lines_inside_quotes():
    text = 'id,memo\n1,"two\nlines"\n2\n'
    with pytest.raises(CsvError) as err:
        parse_records(text)
    assert err.value.line == 4


def test_too_many_fields_is_an_error():
    with pytest.raises(CsvError) as err:
        parse_records('a,b\n1,"x,y",z\n')
    assert err.value.line == 2
