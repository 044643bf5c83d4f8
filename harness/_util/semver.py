"""Versions and version ranges, npm style, with the PEP 440 operators a requirements file uses.

Enough to answer two questions about dependency manifests: does version V satisfy range R
(``satisfies``), and what is the lowest version a declared spec allows (``min_version``).

Supported: ``^ ~ ~= >= > <= < = == !=``, x-ranges (``1.x``, ``1.2.*``, ``*``), partial versions
(``1.2`` means ``>=1.2.0 <1.3.0``), hyphen ranges (``1.2 - 2``), ``||`` alternatives, and
comparators separated by spaces or commas (``>=5.5 <6``, ``>=2.31,<3``). Prerelease versions
compare by semver precedence; npm's extra rule that a range only admits prereleases of its own
``major.minor.patch`` is not applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(
    r"^\s*[v=]?\s*(?P<major>\d+|[xX*])(?:\.(?P<minor>\d+|[xX*]))?(?:\.(?P<patch>\d+|[xX*]))?"
    r"(?:[.\-+]?(?P<pre>[0-9A-Za-z.\-]+?))?(?:\+[0-9A-Za-z.\-]+)?\s*$"
)


class RangeError(ValueError):
    """A range or version string that cannot be parsed."""


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0
    patch: int = 0
    # (is_release, prerelease identifiers): a release sorts after all its prereleases.
    release: int = 1
    pre: tuple[tuple[int, int | str], ...] = ()

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        if not self.release:
            base += "-" + ".".join(str(p[1]) for p in self.pre)
        return base


def _pre_key(pre: str) -> tuple[tuple[int, int | str], ...]:
    parts = [p for p in re.split(r"[.\-]", pre) if p]
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


# The lowest possible prerelease of a version: an upper bound "<2.0.0-0" excludes 2.0.0-beta.
def _floor(major: int, minor: int = 0, patch: int = 0) -> Version:
    return Version(major, minor, patch, 0, ((0, 0),))


@dataclass(frozen=True)
class _Partial:
    major: int | None
    minor: int | None
    patch: int | None
    pre: str | None

    def full(self) -> Version:
        v = Version(self.major or 0, self.minor or 0, self.patch or 0)
        if self.pre:
            v = Version(v.major, v.minor, v.patch, 0, _pre_key(self.pre))
        return v


def _parse_partial(text: str) -> _Partial:
    m = _VERSION.match(text)
    if not m:
        raise RangeError(f"not a version: {text!r}")

    def num(group: str) -> int | None:
        value = m.group(group)
        return None if value is None or value in "xX*" else int(value)

    major, minor, patch = num("major"), num("minor"), num("patch")
    # An x anywhere makes everything after it a wildcard too (1.x.3 is 1.x).
    if major is None:
        minor = patch = None
    elif minor is None:
        patch = None
    pre = m.group("pre")
    if pre and patch is None:
        # "2.31.0.post1" style suffixes only make sense on a full version; drop them otherwise.
        pre = None
    return _Partial(major, minor, patch, pre)


def parse_version(text: str) -> Version | None:
    """A full version (``1.2.3``, ``v1.2``, ``1.2.3-rc.1``); missing parts are 0. None if unparsable."""
    try:
        p = _parse_partial(text)
    except RangeError:
        return None
    if p.major is None:
        return None
    return p.full()


Comparator = tuple[str, Version]  # op in {">=", ">", "<", "<=", "==", "!="}


def _expand(op: str, p: _Partial) -> list[Comparator]:
    if p.major is None:  # "*", "x"
        return []  # any version
    lo = p.full()
    if op in ("", "=", "=="):
        if p.minor is None:
            return [(">=", lo), ("<", _floor(p.major + 1))]
        if p.patch is None:
            return [(">=", lo), ("<", _floor(p.major, p.minor + 1))]
        return [("==", lo)]
    if op == "!=":
        return [("!=", lo)]
    if op == "^":
        if p.major > 0 or p.minor is None:
            return [(">=", lo), ("<", _floor(p.major + 1))]
        if p.minor > 0 or p.patch is None:
            return [(">=", lo), ("<", _floor(0, p.minor + 1))]
        return [(">=", lo), ("<", _floor(0, 0, p.patch + 1))]
    if op == "~":
        if p.minor is None:
            return [(">=", lo), ("<", _floor(p.major + 1))]
        return [(">=", lo), ("<", _floor(p.major, p.minor + 1))]
    if op == "~=":  # PEP 440 compatible release: drop the last given part
        if p.patch is None:
            return [(">=", lo), ("<", _floor(p.major + 1))]
        return [(">=", lo), ("<", _floor(p.major, (p.minor or 0) + 1))]
    if op == ">=":
        return [(">=", lo)]
    if op == ">":
        if p.minor is None:
            return [(">=", _floor(p.major + 1))]
        if p.patch is None:
            return [(">=", _floor(p.major, p.minor + 1))]
        return [(">", lo)]
    if op == "<":
        return [("<", _floor(lo.major, lo.minor, lo.patch) if lo.release else lo)]
    if op == "<=":
        if p.minor is None:
            return [("<", _floor(p.major + 1))]
        if p.patch is None:
            return [("<", _floor(p.major, p.minor + 1))]
        return [("<=", lo)]
    raise RangeError(f"unknown operator {op!r}")


_OP = re.compile(r"^(\^|~=|~|>=|<=|>|<|===|==|=|!=)?\s*(.*)$")


def _strip_protocol(spec: str) -> str:
    spec = spec.strip()
    if spec.startswith("workspace:"):
        spec = spec[len("workspace:"):]
    if spec.startswith("npm:"):  # alias "npm:name@range"
        spec = spec[4:].rpartition("@")[2]
    return spec


def parse_range(spec: str) -> list[list[Comparator]]:
    """Parse ``spec`` into alternatives (OR) of comparator sets (AND). Raises :class:`RangeError`."""
    spec = _strip_protocol(spec)
    if spec in ("", "*", "latest", "x", "X"):
        return [[]]
    alternatives: list[list[Comparator]] = []
    for alt in spec.split("||"):
        alt = alt.strip()
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alt)
        if hyphen:
            alternatives.append(_expand(">=", _parse_partial(hyphen.group(1))) + _expand("<=", _parse_partial(hyphen.group(2))))
            continue
        # Join detached operators (">= 1.2") and split on spaces/commas.
        tokens = re.sub(r"(\^|~=|~|>=|<=|>|<|==|=|!=)\s+", r"\1", alt.replace(",", " ")).split()
        comparators: list[Comparator] = []
        for token in tokens:
            m = _OP.match(token)
            op, version = (m.group(1) or ""), m.group(2)
            if op == "===":
                op = "=="
            comparators += _expand(op, _parse_partial(version))
        alternatives.append(comparators)
    return alternatives


def _test(version: Version, comparator: Comparator) -> bool:
    op, bound = comparator
    return {
        ">=": version >= bound,
        ">": version > bound,
        "<": version < bound,
        "<=": version <= bound,
        "==": version == bound,
        "!=": version != bound,
    }[op]


def satisfies(version: str | Version, spec: str) -> bool:
    """True when ``version`` is inside range ``spec``. Unparsable input raises :class:`RangeError`."""
    v = version if isinstance(version, Version) else parse_version(version)
    if v is None:
        raise RangeError(f"not a version: {version!r}")
    return any(all(_test(v, c) for c in alt) for alt in parse_range(spec))


def min_version(spec: str) -> Version | None:
    """The lowest version a declared spec admits (``^19.1.0`` -> 19.1.0, ``>=2.31,<3`` -> 2.31.0).

    None when the spec has no lower bound (``*``, ``latest``, ``<3``) or cannot be parsed
    (git URLs, file paths, dist-tags).
    """
    try:
        alternatives = parse_range(spec)
    except RangeError:
        return None
    lows = []
    for alt in alternatives:
        bounds = [v for op, v in alt if op in (">=", "==")] + [v for op, v in alt if op == ">"]
        if not bounds:
            return None
        low = max(bounds)
        if all(_test(low, c) for c in alt):
            lows.append(low)
        elif any(op == ">" for op, _ in alt):
            # "> 1.2.3" alone: the bound itself is excluded; the next patch is the floor.
            nxt = Version(low.major, low.minor, low.patch + 1)
            if all(_test(nxt, c) for c in alt):
                lows.append(nxt)
    return min(lows) if lows else None
