"""Dependency manifests: what a project declares in package.json, pyproject.toml and
requirements*.txt. Used by the workspace diff (dependency changes) and the
``dependency_targets`` evaluator."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness._util.globs import walk_files
from harness._util.trees import read_regular

NODE_SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
# Directories that never hold a project's own manifests.
SKIP_DIRS = frozenset({"node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "build", ".next", ".turbo"})
MANIFEST_CAP = 2 * 1024 * 1024  # bytes: a larger manifest is not read
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


@dataclass(frozen=True)
class DeclaredDependency:
    """One dependency as a manifest declares it."""

    name: str
    spec: str  # the range/specifier as written ("^19.1.0", ">=2.31,<3", "" for any)
    section: str  # "dependencies", "devDependencies", "engines", "project", "optional:dev", "requirements"
    file: str  # manifest path relative to the project root


def is_manifest(rel_path: str) -> bool:
    name = rel_path.rsplit("/", 1)[-1]
    return name in ("package.json", "pyproject.toml") or (name.startswith("requirements") and name.endswith(".txt"))


def normalize_python_name(name: str) -> str:
    """PEP 503 normalised name (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(line: str) -> tuple[str, str] | None:
    """``"requests[socks]>=2.31; python_version>'3'"`` -> ``("requests", ">=2.31")``."""
    line = line.split(";", 1)[0].strip()
    if not line or line.startswith(("#", "-")) or "://" in line:
        return None
    m = _REQUIREMENT.match(line)
    if not m:
        return None
    spec = m.group(3).strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    return m.group(1), spec


class ManifestError(ValueError):
    pass


def _node(text: str, rel: str) -> list[DeclaredDependency]:
    data = json.loads(text)
    if not isinstance(data, dict):
        return []
    out = []
    for section in (*NODE_SECTIONS, "engines"):
        deps = data.get(section)
        if isinstance(deps, dict):
            out += [DeclaredDependency(str(n), str(v), section, rel) for n, v in deps.items()]
    return out


def _poetry_spec(value: object) -> str:
    if isinstance(value, dict):
        value = value.get("version", "")
    spec = str(value).strip()
    return "" if spec == "*" else spec


def _table(value: object, where: str) -> dict:
    """``value`` when it is a TOML table (or absent); a manifest whose shape is wrong is malformed."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ManifestError(f"{where} is not a table (found {type(value).__name__})")
    return value


def _pyproject(text: str, rel: str) -> list[DeclaredDependency]:
    data = tomllib.loads(text)
    out = []

    def add(reqs: object, section: str) -> None:
        for req in reqs if isinstance(reqs, list) else []:
            parsed = parse_requirement(str(req)) if isinstance(req, str) else None
            if parsed:
                out.append(DeclaredDependency(normalize_python_name(parsed[0]), parsed[1], section, rel))

    project = _table(data.get("project"), "[project]")
    add(project.get("dependencies"), "project")
    for extra, reqs in _table(project.get("optional-dependencies"), "[project.optional-dependencies]").items():
        add(reqs, f"optional:{extra}")
    for group, reqs in _table(data.get("dependency-groups"), "[dependency-groups]").items():
        add(reqs, f"group:{group}")
    poetry = _table(_table(data.get("tool"), "[tool]").get("poetry"), "[tool.poetry]")
    tables = [("poetry", poetry.get("dependencies")), ("poetry:dev", poetry.get("dev-dependencies"))]
    tables += [(f"poetry:{g}", _table(t, f"[tool.poetry.group.{g}]").get("dependencies"))
               for g, t in _table(poetry.get("group"), "[tool.poetry.group]").items()]
    for section, table in tables:
        for name, value in _table(table, f"[tool.{section.replace(':', '.')}]").items():
            if name.lower() != "python":
                out.append(DeclaredDependency(normalize_python_name(name), _poetry_spec(value), section, rel))
    return out


def _requirements(text: str, rel: str) -> list[DeclaredDependency]:
    out = []
    for line in text.splitlines():
        parsed = parse_requirement(line.split(" #", 1)[0])
        if parsed:
            out.append(DeclaredDependency(normalize_python_name(parsed[0]), parsed[1], "requirements", rel))
    return out


def parse_manifest_text(text: str, rel_path: str) -> list[DeclaredDependency]:
    """Dependencies declared by one manifest's text. Raises :class:`ManifestError` if malformed."""
    name = rel_path.rsplit("/", 1)[-1]
    try:
        if name == "package.json":
            return _node(text, rel_path)
        if name == "pyproject.toml":
            return _pyproject(text, rel_path)
        return _requirements(text, rel_path)
    except ManifestError as exc:
        raise ManifestError(f"{rel_path}: {exc}") from None
    except (ValueError, TypeError, AttributeError, RecursionError, MemoryError) as exc:
        # Whatever the text holds (a 5,000-digit number, nesting thousands deep, a list
        # where an object belongs), a manifest that cannot be read is the manifest's fault.
        raise ManifestError(f"{rel_path}: cannot parse: {str(exc)[:200]}") from None


# Folders whose manifests describe other people's packages kept beside the project
# (vendored copies), not the project's own dependencies.
VENDORED_DIRS = frozenset({"vendor", "third_party", "third-party"})


def find_manifests(root: Path) -> list[str]:
    """Relative paths of the project's manifests under ``root``.

    Skips node_modules, .git, build output and vendored folders (``vendor/``,
    ``third_party/``): a vendored package's own package.json is not the project's.
    """
    return [rel for rel in walk_files(root, SKIP_DIRS | VENDORED_DIRS) if is_manifest(rel)]


def declared_dependencies(root: Path) -> tuple[list[DeclaredDependency], list[str]]:
    """All dependencies declared under ``root``, and the errors of manifests that did not parse."""
    deps: list[DeclaredDependency] = []
    errors: list[str] = []
    for rel in find_manifests(root):
        data = read_regular(root / rel, MANIFEST_CAP + 1)
        if data is None:
            errors.append(f"{rel}: not a regular file that can be read")
            continue
        if len(data) > MANIFEST_CAP:
            errors.append(f"{rel}: more than {MANIFEST_CAP} bytes")
            continue
        try:
            deps += parse_manifest_text(data.decode("utf-8"), rel)
        except (ManifestError, UnicodeDecodeError) as exc:
            errors.append(str(exc))
    return deps, errors
