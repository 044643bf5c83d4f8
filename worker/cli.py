"""``worker``: serve the results API locally (``worker dev``) or migrate its database.

Standard library only (argparse), like the rest of the worker.

Examples:
  worker dev                                  # http://127.0.0.1:8787, results/bench.db
  worker dev --port 9000 --db /tmp/bench.db
  API_SECRET_KEY=s3cret worker dev --host 0.0.0.0
  worker migrate --db results/bench.db
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys

from worker.config import WorkerConfig
from worker.location import default_db_path, store_help
from worker.storage import StorageError

_EXAMPLES = """examples:
  worker dev                                   serve the default store on http://127.0.0.1:8787
  worker dev --port 9000 --db /tmp/bench.db -v
  API_SECRET_KEY=s3cret worker dev --host 0.0.0.0
  worker migrate --db results/bench.db

environment:
  API_SECRET_KEY    write key (without it, `worker dev` accepts a development key on loopback only)
  ALLOWED_ORIGINS   CORS origins, comma separated, or *
  ZE_BENCHMARKS_DB  default database path

The default store is the results/bench.db of the zebench project at or above the current
directory, else the per-user store ($XDG_DATA_HOME/zebench/bench.db).
"""


def _default_db() -> str:
    return default_db_path()


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0-65535)")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="worker",
        description="The zebench results API: serve it locally or migrate its SQLite database.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    dev = sub.add_parser("dev", help="serve the API over HTTP on this machine",
                         description="Serve the results API on a local SQLite file "
                                     "(the same file the harness writes in embedded mode).")
    dev.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    dev.add_argument("--port", type=_port, default=8787, help="port (default 8787; 0 = any free port)")
    dev.add_argument("--db", default=None, help=f"SQLite file (default: {store_help()})")
    dev.add_argument("-v", "--verbose", action="store_true", help="log every request")
    mig = sub.add_parser("migrate", help="apply pending migrations to a SQLite file")
    mig.add_argument("--db", default=None, help=f"SQLite file (default: {store_help()})")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``worker dev`` or ``worker migrate``. Failures are one line (exit 1; 2 for bad
    input; 130 on Ctrl-C), never a traceback."""
    args = build_parser().parse_args(argv)
    db_path = args.db or _default_db()
    try:
        return _run(args, db_path)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except sqlite3.DatabaseError as exc:
        print(f"worker {args.command}: {db_path}: not a usable SQLite database: {exc}", file=sys.stderr)
        return 1
    except StorageError as exc:
        print(f"worker {args.command}: {db_path}: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, db_path: str) -> int:
    if args.command == "migrate":
        from worker.migrate import apply_migrations
        from worker.sqlite_backend import SQLiteStorage

        try:
            storage = SQLiteStorage(db_path)
        except OSError as exc:
            print(f"worker migrate: cannot open {db_path}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        try:
            applied = apply_migrations(storage)
        finally:
            storage.close()
        print(f"{db_path}: applied {', '.join(applied)}" if applied else f"{db_path}: up to date")
        return 0
    from worker.devserver import serve

    try:
        serve(args.host, args.port, db_path, WorkerConfig.from_env(os.environ), args.verbose)
    except ValueError as exc:
        print(f"worker dev: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"worker dev: cannot listen on {args.host}:{args.port} with {db_path}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
