from ledger.csvparse import CsvError, parse_csv, parse_records

__all__ = ["CsvError", "parse_csv", "parse_records"]
