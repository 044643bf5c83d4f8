import pytest

from ledger import CsvError, parse_csv, parse_records


def test_simple_rows():
    assert parse_csv("a,b,c\n1,2,3\n") == [["a", "b", "c"], ["1", "2", "3"]]


def test_quoted_field_with_delimiter():
    assert parse_csv('date,payee,amount\n2025-01-02,"Smith, John",-12.50\n') == [
        ["date", "payee", "amount"],
        ["2025-01-02", "Smith, John", "-12.50"],
    ]


def test_doubled_quotes_inside_quoted_field():
    assert parse_csv('"He said ""hi""",x\n') == [['He said "hi"', "x"]]


def test_records_keyed_by_header():
    text = "date,amount\n2025-01-01,10\n2025-01-02,-3\n"
    assert parse_records(text) == [
        {"date": "2025-01-01", "amount": "10"},
        {"date": "2025-01-02", "amount": "-3"},
    ]


def test_wrong_field_count_reports_the_line():
    with pytest.raises(CsvError) as err:
        parse_records("a,b\n1,2\n3\n")
    assert err.value.line == 3
