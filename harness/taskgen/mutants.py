"""Small, plausible bugs made with :mod:`ast`: every place in a project's functions where one
mutation applies, each as a text edit of the original source (the rest of the file is kept
byte for byte, so the solution's diff is the bug alone).

The kinds (:data:`KINDS`):

- ``arith``: ``+`` and ``-`` swapped (a binary operation);
- ``compare``: ``<`` / ``<=``, ``>`` / ``>=``, ``==`` / ``!=``, ``is`` / ``is not``, ``in`` / ``not in``;
- ``boolean``: ``and`` / ``or``;
- ``constant``: an integer literal ``0`` -> ``1``, ``1`` -> ``0``, ``n`` -> ``n + 1``;
- ``negate``: the condition of an ``if``, ``while`` or conditional expression negated;
- ``range``: the end of ``range(...)`` one further (``range(n)`` -> ``range(n + 1)``);
- ``slice``: a slice bound one further (``x[:n]`` -> ``x[:n + 1]``, ``x[i:]`` -> ``x[i + 1:]``).

Only code inside functions (methods included) of non-test modules is mutated; docstrings,
decorators, default values, annotations and f-strings are left alone.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

KINDS = ("arith", "compare", "boolean", "constant", "negate", "range", "slice")

_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_SWAP_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
           ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    """One mutation: replace ``source[start:end]`` of ``path`` (offsets in characters) by
    ``replacement``."""

    path: str  # relative to the project, '/'-separated
    function: str  # qualified name: Class.method, outer.<locals>.inner
    line: int  # 1-based line of the mutated expression
    kind: str
    description: str  # "'<' -> '<='"
    start: int
    end: int
    original: str
    replacement: str

    @property
    def key(self) -> str:
        """Stable identity: the same for the same edit of the same file."""
        return f"{self.path}:{self.start}:{self.end}:{self.kind}:{self.replacement}"

    def short_id(self) -> str:
        return hashlib.sha256(self.key.encode("utf-8")).hexdigest()[:8]

    def apply(self, source: str) -> str:
        if source[self.start:self.end] != self.original:
            raise ValueError(f"{self.path}: the source changed since the mutant was made")
        return source[:self.start] + self.replacement + source[self.end:]

    def to_json(self) -> dict[str, object]:
        return {"file": self.path, "function": self.function, "line": self.line, "kind": self.kind,
                "description": self.description, "original": self.original, "replacement": self.replacement}


class _Offsets:
    """(line, column in UTF-8 bytes) of :mod:`ast` -> character offset in the text."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col_bytes: int) -> int:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        col = len(text.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return self.starts[line - 1] + col


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Expr) and isinstance(node, ast.Constant) and isinstance(node.value, str)


def _simple(node: ast.AST) -> bool:
    """An expression that needs no parentheses before ``+ 1``."""
    return isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Call))


class _Finder:
    """Walks one module and yields every mutant of its functions."""

    def __init__(self, path: str, source: str, tree: ast.Module) -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.offsets = _Offsets(source)

    def segment(self, node: ast.AST) -> tuple[int, int, str] | None:
        if getattr(node, "end_lineno", None) is None:
            return None
        start = self.offsets.at(node.lineno, node.col_offset)
        end = self.offsets.at(node.end_lineno, node.end_col_offset)
        return start, end, self.source[start:end]

    def mutant(self, function: str, node: ast.AST, kind: str, description: str,
               replacement: str, target: ast.AST | None = None) -> Mutant | None:
        where = self.segment(target or node)
        if where is None:
            return None
        start, end, original = where
        if original == replacement:
            return None
        return Mutant(self.path, function, node.lineno, kind, description, start, end, original, replacement)

    def run(self) -> Iterator[Mutant]:
        yield from self._scope(self.tree.body, "")

    def _scope(self, body: list[ast.stmt], prefix: str) -> Iterator[Mutant]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{node.name}"
                yield from self._function(node, name)
            elif isinstance(node, ast.ClassDef):
                yield from self._scope(node.body, f"{prefix}{node.name}.")

    def _function(self, func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> Iterator[Mutant]:
        for stmt in func.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from self._function(stmt, f"{name}.<locals>.{stmt.name}")
            elif isinstance(stmt, ast.ClassDef):
                continue  # a class made inside a function: rare, left alone
            else:
                yield from self._walk(stmt, None, name)

    def _walk(self, node: ast.AST, parent: ast.AST | None, function: str) -> Iterator[Mutant]:
        if isinstance(node, (ast.JoinedStr, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return  # f-string positions are unreliable; nested definitions are walked on their own
        yield from self._at(node, parent, function)
        for child in ast.iter_child_nodes(node):
            yield from self._walk(child, node, function)

    def _at(self, node: ast.AST, parent: ast.AST | None, function: str) -> Iterator[Mutant]:
        found: Mutant | None = None
        if isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BIN:
            found = self._swap(function, node, [(node.left, node.right)], "arith", node.op,
                               _SWAP_BIN[type(node.op)]())
        elif isinstance(node, ast.AugAssign) and type(node.op) in _SWAP_BIN:
            found = self._swap(function, node, [(node.target, node.value)], "arith", node.op,
                               _SWAP_BIN[type(node.op)](), augmented=True)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if type(op) in _SWAP_CMP:
                    mutant = self._swap(function, node, [(operands[i], operands[i + 1])], "compare", op,
                                        _SWAP_CMP[type(op)]())
                    if mutant is not None:
                        yield mutant
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            pairs = list(zip(node.values, node.values[1:]))
            found = self._swap(function, node, pairs, "boolean", node.op, other)
        elif (isinstance(node, ast.Constant) and type(node.value) is int and not _is_docstring(node, parent)
              and not isinstance(parent, (ast.arguments, ast.AnnAssign))):
            value = node.value
            new_value = 1 if value == 0 else 0 if value == 1 else value + 1
            found = self.mutant(function, node, "constant", f"{value!r} -> {new_value!r}", repr(new_value))
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            where = self.segment(node.test)
            if where is not None:
                text = where[2]
                if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
                    replacement = ast.unparse(node.test.operand)
                    if not _simple(node.test.operand):
                        replacement = f"({replacement})"
                elif _simple(node.test) or isinstance(node.test, ast.UnaryOp):
                    replacement = f"not {text}"
                else:
                    replacement = f"not ({text})"
                yield from filter(None, [self.mutant(function, node.test, "negate", "condition negated",
                                                     replacement)])
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
                and 1 <= len(node.args) <= 2 and not node.keywords):
            stop = node.args[-1]
            yield from filter(None, [self._plus_one(function, stop, "range", "range end one further")])
        if isinstance(node, ast.Slice) and node.step is None:
            bound = node.upper if node.upper is not None else node.lower
            if bound is not None:
                which = "upper" if node.upper is not None else "lower"
                yield from filter(None, [self._plus_one(function, bound, "slice", f"slice {which} bound one further")])
        if found is not None:
            yield found

    def _swap(self, function: str, node: ast.AST, pairs: list[tuple[ast.AST, ast.AST]], kind: str,
              old_op: ast.AST, new_op: ast.AST, augmented: bool = False) -> Mutant | None:
        """The operator between each pair of operands replaced in the text (the operands, their
        spacing and any comment kept as written)."""
        where = self.segment(node)
        if where is None:
            return None
        start, end, original = where
        old, new = _SYMBOL[type(old_op)], _SYMBOL[type(new_op)]
        if augmented:
            old, new = old + "=", new + "="
        pattern = re.compile(r"(?<![\w<>=!])" + re.escape(old).replace(r"\ ", r"\s+") + r"(?![\w<>=])")
        text = original
        for left, right in reversed(pairs):
            a, b = self.segment(left), self.segment(right)
            if a is None or b is None:
                return None
            gap_start, gap_end = a[1] - start, b[0] - start
            gap = text[gap_start:gap_end]
            if "#" in gap:
                return None
            hits = list(pattern.finditer(gap))
            if len(hits) != 1:
                return None
            hit = hits[0]
            text = text[:gap_start] + gap[:hit.start()] + new + gap[hit.end():] + text[gap_end:]
        return self.mutant(function, node, kind, f"{old!r} -> {new!r}", text)

    def _plus_one(self, function: str, bound: ast.AST, kind: str, description: str) -> Mutant | None:
        where = self.segment(bound)
        if where is None or "\n" in where[2]:
            return None
        text = where[2]
        replacement = f"{text} + 1" if _simple(bound) else f"({text}) + 1"
        return self.mutant(function, bound, kind, description, replacement)


def mutants_of_file(project: Path, rel: str) -> list[Mutant]:
    """Every mutant of one module (``rel``, relative to ``project``) whose result still parses;
    [] for a file that does not parse or cannot be read."""
    try:
        source = (project / rel).read_text("utf-8")
        tree = ast.parse(source, rel)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    out: list[Mutant] = []
    seen: set[str] = set()
    for mutant in _Finder(rel, source, tree).run():
        if mutant.key in seen:
            continue
        seen.add(mutant.key)
        try:
            ast.parse(mutant.apply(source), rel)
        except (SyntaxError, ValueError):
            continue
        out.append(mutant)
    return out


def all_mutants(project: Path, modules: Iterable[str], kinds: Iterable[str] = KINDS) -> list[Mutant]:
    """Every mutant of ``modules`` of the ``kinds`` asked for, in file then text order."""
    wanted = set(kinds)
    out: list[Mutant] = []
    for rel in sorted(modules):
        out += [m for m in mutants_of_file(project, rel) if m.kind in wanted]
    return sorted(out, key=lambda m: (m.path, m.start, m.end, m.kind, m.replacement))


def in_order(mutants: list[Mutant], seed: int) -> list[Mutant]:
    """The order candidates are tried in: shuffled by ``seed`` (the same seed, the same order),
    then spread so that one function does not use up the tries (each function's first mutant
    comes before any function's second)."""
    shuffled = list(mutants)
    random.Random(seed).shuffle(shuffled)
    rank: dict[tuple[str, str], int] = {}
    keyed = []
    for position, mutant in enumerate(shuffled):
        where = (mutant.path, mutant.function)
        keyed.append((rank.get(where, 0), position, mutant))
        rank[where] = rank.get(where, 0) + 1
    return [m for _, _, m in sorted(keyed, key=lambda t: (t[0], t[1]))]
