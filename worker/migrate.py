"""The local migration runner: applies ``worker/migrations/*.sql`` in name order.

It keeps the same bookkeeping table as ``wrangler d1 migrations apply`` (``d1_migrations``
with ``id, name, applied_at``; ``name`` is the file name), so a database migrated by either
tool is understood by the other.
"""

from __future__ import annotations

import os
import sqlite3

from worker.sqlite_backend import SQLiteStorage

MIGRATIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
TABLE = "d1_migrations"

_CREATE_TABLE = f"""CREATE TABLE IF NOT EXISTS {TABLE}(
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT UNIQUE,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)"""


def migration_files(directory: str = MIGRATIONS_DIR) -> list[str]:
    """The ``.sql`` file names of ``directory`` in the order they apply."""
    return sorted(n for n in os.listdir(directory) if n.endswith(".sql"))


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (comments and blank lines dropped)."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            statements.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement at end of script: {buf.strip()[:60]!r}")
    return statements


def apply_migrations(storage: SQLiteStorage, directory: str = MIGRATIONS_DIR) -> list[str]:
    """Apply every migration not yet recorded; return the names applied now.

    Each file and its bookkeeping row commit in one transaction that first takes the write
    lock, so two processes opening the same database cannot both apply a file, and an
    interrupted run leaves the database at a file boundary.
    """
    conn = storage.raw_connection()
    applied_now: list[str] = []
    with storage.locked():
        conn.execute(_CREATE_TABLE)
        for name in migration_files(directory):
            with open(os.path.join(directory, name), encoding="utf-8") as fh:
                statements = split_statements(fh.read())
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute(f"SELECT 1 FROM {TABLE} WHERE name = ?", (name,)).fetchone():
                    conn.execute("COMMIT")
                    continue
                for sql in statements:
                    conn.execute(sql)
                conn.execute(f"INSERT INTO {TABLE} (name) VALUES (?)", (name,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            applied_now.append(name)
    return applied_now


def applied_migrations(storage: SQLiteStorage) -> list[str]:
    """Names recorded in the bookkeeping table, in the order they were applied."""
    conn = storage.raw_connection()
    with storage.locked():
        conn.execute(_CREATE_TABLE)
        return [r[0] for r in conn.execute(f"SELECT name FROM {TABLE} ORDER BY id")]
