"""Cloudflare D1 storage: the ``env.DB`` binding behind :class:`worker.storage.Storage`.

Works with the real binding under Pyodide (JS proxies, promises) and with any object of the
same shape (the tests' fake). D1 has no BEGIN/COMMIT: ``batch()`` is its transaction.
"""

from __future__ import annotations

from typing import Any, Sequence

from worker.storage import (
    MAX_BOUND_PARAMS,
    ConstraintError,
    Row,
    Statement,
    StorageError,
    is_constraint_message,
)

try:  # Only present under Pyodide.
    from pyodide.ffi import to_js as _to_js  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised only outside Workers
    _to_js = None


class D1Storage:
    """The storage interface over a D1 database binding."""

    def __init__(self, db: Any) -> None:
        self._db = db

    async def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        result = await self._call(self._prepare(sql, params).all())
        return _rows(result)

    async def first(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row = await self._call(self._prepare(sql, params).first())
        row = _py(row)
        return dict(row) if row else None

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        result = _py(await self._call(self._prepare(sql, params).run()))
        meta = (result or {}).get("meta") or {}
        return int(meta.get("changes") or 0)

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        prepared = [self._prepare(s.sql, s.params) for s in statements]
        arg = _to_js(prepared) if _to_js is not None else prepared
        results = _py(await self._call(self._db.batch(arg)))
        return [_rows(r) for r in results]

    def _prepare(self, sql: str, params: Sequence[Any]) -> Any:
        if len(params) > MAX_BOUND_PARAMS:
            raise StorageError(f"{len(params)} bound parameters; D1 allows {MAX_BOUND_PARAMS}")
        sql, values = inline_nulls(sql, params)
        stmt = self._db.prepare(sql)
        try:
            return stmt.bind(*[_js_number(v) for v in values]) if values else stmt
        except Exception as exc:  # a JS type error while binding: say so, do not crash the request
            raise StorageError(str(exc)) from exc

    @staticmethod
    async def _call(awaitable: Any) -> Any:
        try:
            return await awaitable
        except Exception as exc:  # JS errors arrive as pyodide JsException
            message = str(exc)
            if is_constraint_message(message):
                raise ConstraintError(message) from exc
            raise StorageError(message) from exc


def _js_number(value: Any) -> Any:
    """A large Python int crosses into JavaScript as a BigInt, which D1 refuses to bind; as a
    float it is exact up to 2**53 (the range the schema admits) and D1 takes it."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**31 - 1:
        return float(value)
    return value


def inline_nulls(sql: str, params: Sequence[Any]) -> tuple[str, list[Any]]:
    """Write ``NULL`` in place of each ``?`` whose value is None, and turn bools into 0/1.

    Pyodide converts Python None to JS ``undefined``, which D1's ``bind`` rejects; a literal
    NULL in the SQL avoids the conversion entirely. Placeholders inside quoted literals are
    left alone (the core's SQL has none, but be exact).
    """
    if not params:
        return sql, []
    out: list[str] = []
    values: list[Any] = []
    index = 0
    quote: str | None = None
    for ch in sql:
        if quote:
            if ch == quote:
                quote = None
            out.append(ch)
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            if index >= len(params):
                raise StorageError("more placeholders than parameters")
            value = params[index]
            index += 1
            if value is None:
                out.append("NULL")
            else:
                out.append("?")
                values.append(int(value) if isinstance(value, bool) else value)
        else:
            out.append(ch)
    if index != len(params):
        raise StorageError(f"{len(params)} parameters for {index} placeholders")
    return "".join(out), values


def _py(value: Any) -> Any:
    """A JS proxy converted to Python (dicts/lists); plain Python passes through."""
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


def _rows(result: Any) -> list[Row]:
    result = _py(result)
    rows = (result or {}).get("results") or []
    return [dict(_py(r)) for r in rows]
