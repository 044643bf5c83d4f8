"""Fleet manifests: reading, checking, normalising, hashing, and resolving what they name.

A manifest (JSON or YAML, by extension; the schema is ``harness/schemas/fleet.schema.json``
and the guide docs/fleets.md) lists repositories, providers (``provider:model``) and scenario
profiles. Every problem is reported at once, each naming the file and the field
(``repositories[2].repo_id``); :func:`load_manifest` raises :class:`ManifestError` with all
of them. Relative paths in a manifest (a repository's ``path``, ``output.base_dir``, a
profile's dataset file) are relative to the manifest's own directory.

A profile is either a **dataset** profile (``dataset``: a file or a built-in name, looked up
in each repository in the order of :data:`DATASET_PLACES`) or a **suite** profile
(``suite``, with optional ``scenarios``, ``tier`` and ``iterations``), in which case every
provider runs as the scenario agent of its prefix. A repository ``scenarios`` entry with no
profile of that name is a dataset profile whose dataset has that name (manifests of the
original tool list scenarios that way). The manifest, each repository and each profile may
carry a free-form ``metadata`` mapping, as the original format allows; it is kept with the
normalised manifest and does not change what runs.

The schema checks (the fast path beside jsonschema, the wording of unknown keys) are in
:mod:`harness.fleet.manifest_checks`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

from harness.fleet.manifest_checks import _problem_lines, _schema_issues
from harness.models.providers.registry import Target, parse_target

MANIFEST_VERSION = "1.0"
SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
DATASET_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl", ".csv")
# Where a repository's datasets are looked for, in order, after ``{path}/{name}`` itself.
DATASET_PLACES = ("datasets", "datasets/data", "data", "benchmarks")
DEFAULT_BASE_DIR = "fleet-results"
DEFAULT_FORMATS = ("json", "csv", "html")
DEFAULT_CONCURRENCY = 5
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_TIER = "L1"

# A scenario agent for each provider prefix: the API agents by name, the shipped model as the
# local agent, and every other OpenAI-compatible service as the openai agent at its base URL.
_AGENT_OF_PREFIX = {"anthropic": "anthropic", "openai": "openai", "openrouter": "openrouter", "local": "local"}


class ManifestError(ValueError):
    """A manifest that cannot run; ``problems`` lists each one as ``field: what``."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(str(self))

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return f"{self.source}: {self.problems[0]}"
        lines = "\n".join(f"  - {p}" for p in self.problems)
        return f"{self.source}: {len(self.problems)} problems:\n{lines}"


@dataclass(frozen=True)
class Profile:
    name: str
    kind: str  # dataset | suite
    dataset: str | None = None
    suite: str | None = None
    scenarios: tuple[str, ...] = ()
    tier: str = DEFAULT_TIER
    iterations: int = 1
    concurrency: int = DEFAULT_CONCURRENCY
    num_examples: int | None = None
    request_delay_ms: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)  # descriptive only


@dataclass(frozen=True)
class Repository:
    repo_id: str
    path: Path | None  # resolved; None until a git_url-only repository is cloned
    git_url: str | None
    adapter: str
    profiles: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def source(self) -> str:
        return self.git_url if self.git_url and self.path is None else str(self.path)


@dataclass
class Manifest:
    """A checked manifest with its defaults filled in."""

    fleet_id: str
    description: str
    repositories: list[Repository]
    targets: list[Target]
    profiles: dict[str, Profile]
    base_dir: Path
    formats: tuple[str, ...]
    save_responses: bool
    generate_reports: bool
    continue_on_failure: bool
    random_seed: int | None
    test_timeout_s: float | None  # None: the default per kind (60 s a request; a scenario's own)
    max_retries: int
    custom: dict[str, Any]
    normalized: dict[str, Any]  # the document the hash is taken of (saved with every run)
    source: str = "<manifest>"
    root: Path = Path(".")
    judge: str | None = None  # global_settings.judge (or bench fleet --judge): none or PROVIDER:MODEL
    metadata: dict[str, Any] = field(default_factory=dict)  # the manifest's own, descriptive only

    @property
    def hash(self) -> str:
        return manifest_hash(self.normalized)

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1


# --------------------------------------------------------------------------- reading


def read_document(path: str | os.PathLike[str]) -> Any:
    """The parsed manifest file (ManifestError for an unreadable or unparseable one)."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ManifestError(str(path), [f"unknown manifest format {path.suffix or '(no extension)'!r}: "
                                        "use .json, .yaml or .yml"])
    try:
        text = path.read_text("utf-8-sig")
    except FileNotFoundError:
        raise ManifestError(str(path), ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(str(path), [f"cannot read: {exc}"]) from None
    if kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(str(path), [f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"]) from None
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ManifestError(str(path), [f"{where}invalid YAML: {problem}"]) from None


def load_manifest(path: str | os.PathLike[str], *, base_url: str | None = None, judge: str | None = None) -> Manifest:
    """Read and check the manifest file ``path``; ManifestError lists every problem."""
    path = Path(path)
    return parse_manifest(read_document(path), source=str(path), root=path.resolve().parent, base_url=base_url,
                          judge=judge)


def parse_manifest(document: Any, *, source: str = "<manifest>", root: Path | None = None,
                   base_url: str | None = None, judge: str | None = None) -> Manifest:
    """Check ``document`` against the schema and the rules the schema cannot say, and build
    the :class:`Manifest`. ``base_url`` is used by ``openai-compatible:`` providers given as
    plain strings (``bench fleet --base-url``); ``judge`` (``bench fleet --judge``) replaces
    ``global_settings.judge``."""
    root = (root or Path.cwd()).resolve()
    if judge is not None and isinstance(document, dict):
        document = {**document, "global_settings": {**(document.get("global_settings") or {}), "judge": judge}}
    problems = [line for issue in _schema_issues(document) for line in _problem_lines(issue, document)]
    if not isinstance(document, dict):
        raise ManifestError(source, problems or ["(top level): must be a mapping"])
    if problems:
        raise ManifestError(source, problems)
    profiles = _profiles(document)
    repositories: list[Repository] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(document["repositories"]):
        repo_id = raw["repo_id"]
        if repo_id in seen:
            problems.append(f"repositories[{i}].repo_id: duplicate id {repo_id!r} (also repositories[{seen[repo_id]}])")
        seen.setdefault(repo_id, i)
        names = tuple(raw["scenarios"]) if raw.get("scenarios") else tuple(profiles)
        if not names:
            problems.append(f"repositories[{i}].scenarios: nothing to run (name a profile, or add scenario_profiles)")
        for j, name in enumerate(names):
            if name not in profiles:
                profiles[name] = Profile(name=name, kind="dataset", dataset=name)  # the original's shorthand
            if raw.get("scenarios") and names.index(name) != j:
                problems.append(f"repositories[{i}].scenarios[{j}]: {name!r} is listed twice")
        path = raw.get("path")
        repositories.append(Repository(
            repo_id=repo_id,
            path=(root / os.path.expanduser(path)).resolve() if path else None,
            git_url=raw.get("git_url"),
            adapter=raw.get("adapter", "native"),
            profiles=tuple(dict.fromkeys(names)),
            metadata=dict(raw.get("metadata") or {}),
        ))
    targets: list[Target] = []
    for i, raw in enumerate(document["providers"]):
        spec, url = (raw, None) if isinstance(raw, str) else (raw["provider"], raw.get("base_url"))
        try:
            target = parse_target(spec, base_url=url or (base_url if spec.strip().startswith("openai-compatible:")
                                                          else None))
        except ValueError as exc:
            problems.append(f"providers[{i}]: {exc}")
            continue
        if target in targets:
            problems.append(f"providers[{i}]: {target.spec} is listed twice")
            continue
        targets.append(target)
    for name, profile in profiles.items():
        if profile.kind == "suite" and profile.num_examples is not None:
            problems.append(f"scenario_profiles.{name}.num_examples: applies to dataset profiles only "
                            "(a suite profile names its scenarios)")
        if profile.kind == "suite" and set(profile.settings) - {"temperature"}:
            extra = ", ".join(sorted(set(profile.settings) - {"temperature"}))
            problems.append(f"scenario_profiles.{name}.settings: a suite profile's agents take temperature only "
                            f"(not {extra})")
        if profile.kind == "dataset" and (profile.scenarios or "tier" in document.get("scenario_profiles", {})
                                          .get(name, {}) or "iterations" in document.get("scenario_profiles", {})
                                          .get(name, {})):
            problems.append(f"scenario_profiles.{name}: scenarios, tier and iterations belong to suite profiles "
                            "(add suite: NAME)")
    if problems:
        raise ManifestError(source, problems)
    output = document.get("output") or {}
    settings = document.get("global_settings") or {}
    if settings.get("judge") is not None:
        from harness.grading.evaluators.llm_judge import JudgeChoice

        try:
            JudgeChoice.parse(settings["judge"])
        except ValueError as exc:
            raise ManifestError(source, [f"global_settings.judge: {exc}"]) from None
    manifest = Manifest(
        fleet_id=document["fleet_id"],
        description=document.get("description", ""),
        repositories=repositories,
        targets=targets,
        profiles=profiles,
        base_dir=(root / os.path.expanduser(output.get("base_dir", DEFAULT_BASE_DIR))).resolve(),
        formats=tuple(output.get("formats", DEFAULT_FORMATS)),
        save_responses=bool(output.get("save_responses", True)),
        generate_reports=bool(output.get("generate_reports", True)),
        continue_on_failure=bool(settings.get("continue_on_failure", True)),
        random_seed=settings.get("random_seed"),
        test_timeout_s=float(settings["test_timeout_seconds"]) if "test_timeout_seconds" in settings else None,
        max_retries=int(settings.get("max_retries", DEFAULT_MAX_RETRIES)),
        custom=dict(settings.get("custom") or {}),
        judge=settings.get("judge"),
        metadata=dict(document.get("metadata") or {}),
        normalized={},
        source=source,
        root=root,
    )
    manifest.normalized = normalize(document, manifest)
    return manifest


def _profiles(document: dict[str, Any]) -> dict[str, Profile]:
    out: dict[str, Profile] = {}
    for name, raw in (document.get("scenario_profiles") or {}).items():
        kind = "suite" if raw.get("suite") else "dataset"
        out[name] = Profile(
            name=name, kind=kind,
            dataset=raw.get("dataset", name) if kind == "dataset" else None,
            suite=raw.get("suite"),
            scenarios=tuple(raw.get("scenarios") or ()),
            tier=raw.get("tier", DEFAULT_TIER),
            iterations=int(raw.get("iterations", 1)),
            concurrency=int(raw.get("concurrency", DEFAULT_CONCURRENCY)),
            num_examples=raw.get("num_examples"),
            request_delay_ms=float(raw.get("request_delay_ms", 0.0)),
            settings=dict(raw.get("settings") or {}),
            metadata=dict(raw.get("metadata") or {}),
        )
    return out


# --------------------------------------------------------------------------- identity


def normalize(document: dict[str, Any], manifest: Manifest) -> dict[str, Any]:
    """The manifest as data with every default written out: two manifests that mean the same
    (key order, JSON or YAML, a default left out or spelled) normalise to the same document."""
    def profile(p: Profile) -> dict[str, Any]:
        out: dict[str, Any] = {"concurrency": p.concurrency, "request_delay_ms": p.request_delay_ms,
                               "settings": p.settings}
        if p.kind == "dataset":
            out.update({"dataset": p.dataset, "num_examples": p.num_examples})
        else:
            out.update({"suite": p.suite, "scenarios": list(p.scenarios), "tier": p.tier, "iterations": p.iterations})
        if p.metadata:  # written only when given: manifests without it keep their hash
            out["metadata"] = p.metadata
        return out

    repositories = []
    for raw, repo in zip(document["repositories"], manifest.repositories):
        repositories.append({"repo_id": repo.repo_id, "path": raw.get("path"), "git_url": repo.git_url,
                             "adapter": repo.adapter, "scenarios": list(repo.profiles), "metadata": repo.metadata})
    providers = [{"provider": t.spec, "base_url": t.base_url} if t.prefix == "openai-compatible" else t.spec
                 for t in manifest.targets]
    output = document.get("output") or {}
    return _without_none({
        "fleet_id": manifest.fleet_id,
        "version": MANIFEST_VERSION,
        "description": manifest.description,
        "repositories": repositories,
        "providers": providers,
        "scenario_profiles": {name: profile(p) for name, p in sorted(manifest.profiles.items())},
        "output": {"base_dir": output.get("base_dir", DEFAULT_BASE_DIR), "formats": sorted(manifest.formats),
                   "save_responses": manifest.save_responses, "generate_reports": manifest.generate_reports},
        "global_settings": {"continue_on_failure": manifest.continue_on_failure, "random_seed": manifest.random_seed,
                            "test_timeout_seconds": manifest.test_timeout_s, "max_retries": manifest.max_retries,
                            "custom": manifest.custom, "judge": manifest.judge},
        "metadata": manifest.metadata or None,  # written only when given, as a profile's
    })


def _without_none(value: Any) -> Any:
    """``value`` with every mapping key whose value is None left out (None means "not set")."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def canonical_json(document: Any) -> str:
    """Sorted keys, no spaces, numbers that are whole written as integers (YAML's ``1.0`` and
    JSON's ``1`` are the same setting)."""
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    return json.dumps(clean(document), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def manifest_hash(normalized: dict[str, Any]) -> str:
    """The SHA-256 of the canonical normalised manifest (hex)."""
    return hashlib.sha256(canonical_json(normalized).encode("utf-8")).hexdigest()


def run_id_for(manifest: Manifest, when: Any) -> str:
    """``<fleet_id>-<UTC timestamp>-<8 hex of the manifest hash>``; ``when`` is a datetime."""
    import datetime as _dt

    stamp = when.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{manifest.fleet_id}-{stamp}-{manifest.hash[:8]}"


# --------------------------------------------------------------------------- resolving


@dataclass(frozen=True)
class DatasetLookup:
    """Where a profile's dataset was found for one repository (``ref`` for load_dataset), or
    the places looked when it was not (``ref`` None)."""

    ref: str | None
    tried: tuple[str, ...]  # the candidate files tested, in order (and the built-ins' note last)
    builtin: bool = False
    name: str = ""

    @property
    def looked(self) -> tuple[str, ...]:
        """The places looked, one entry per place (``dir/name.{json,yaml,...}``), in order."""
        looked: list[str] = []
        for candidate in self.tried:
            shown = candidate if candidate == self.ref else _shown(candidate, self.name)
            if shown not in looked:
                looked.append(shown)
        return tuple(looked)


def dataset_candidates(repo_path: Path | None, name: str) -> list[Path]:
    """The files a dataset ``name`` may be in a repository, in lookup order: ``{path}/{name}``,
    then ``{path}/{place}/{name}`` with each dataset extension (or as written when ``name``
    has one) for every place of :data:`DATASET_PLACES`."""
    return [Path(p) for p in _candidate_strings(repo_path, name)]


def _candidate_strings(repo_path: Path | None, name: str) -> Iterator[str]:
    # Strings made as they are needed, not Paths: a 1,000-repository manifest looks up
    # thousands of datasets, most found at the first place.
    if repo_path is None:
        return
    root = os.fspath(repo_path)
    yield os.path.join(root, name)
    has_suffix = os.path.splitext(name)[1].lower() in DATASET_SUFFIXES
    for place in DATASET_PLACES:
        base = os.path.join(root, place)
        if has_suffix:
            yield os.path.join(base, name)
        else:
            for suffix in DATASET_SUFFIXES:
                yield os.path.join(base, name + suffix)


def _shown(candidate: str, name: str) -> str:
    """A candidate as listed among the places looked: one entry per place, dir/name.{json,yaml,...}."""
    if os.path.splitext(name)[1].lower() in DATASET_SUFFIXES:
        return candidate
    for suffix in DATASET_SUFFIXES:
        if candidate.endswith(f"{name}{suffix}"):
            return candidate[: -len(suffix)] + ".{" + ",".join(s.lstrip(".") for s in DATASET_SUFFIXES) + "}"
    return candidate


def find_dataset(repo_path: Path | None, name: str, root: Path, builtins: set[str] | None = None) -> DatasetLookup:
    """Resolve a profile's ``dataset`` for one repository: the repository's candidates in
    order, then the file relative to the manifest's directory, then the built-in datasets (an
    absolute path is that file alone)."""
    if builtins is None:
        from harness.datasets.format import builtin_names

        builtins = set(builtin_names())
    tried: list[str] = []
    for candidate in [name] if os.path.isabs(name) else _candidate_strings(repo_path, name):
        tried.append(candidate)
        if os.path.isfile(candidate):
            return DatasetLookup(candidate, tuple(tried), name=name)
    if not os.path.isabs(name):
        beside = str((root / name).resolve())
        if beside not in tried:
            tried.append(beside)
            if os.path.isfile(beside):
                return DatasetLookup(beside, tuple(tried), name=name)
    if os.path.isabs(name):
        return DatasetLookup(None, tuple(tried), name=name)
    bare = name
    for suffix in DATASET_SUFFIXES:
        if bare.lower().endswith(suffix):
            bare = bare[: -len(suffix)]
            break
    tried.append(f"built-in datasets ({', '.join(sorted(builtins)) or 'none'})")
    if bare in builtins:
        return DatasetLookup(bare, tuple(tried), builtin=True, name=name)
    return DatasetLookup(None, tuple(tried), name=name)


def agent_for(target: Target) -> tuple[str, dict[str, Any]]:
    """The scenario agent a provider runs as in a suite profile, and its options
    (``anthropic:claude-sonnet-4-6`` -> agent ``anthropic``; Groq, vLLM... -> ``openai`` at
    their base URL with their key)."""
    from harness.models.providers.registry import key_for

    agent = _AGENT_OF_PREFIX.get(target.prefix)
    if agent is not None:
        options: dict[str, Any] = {}
        if target.prefix in ("anthropic", "openai", "openrouter") and target.base_url:
            options["base_url"] = target.base_url
        return agent, options
    options = {"base_url": target.base_url}
    key = key_for(target)
    if key:
        options["api_key"] = key
    return "openai", options


def suites_dir_for(repo: Repository) -> Path | None:
    """A native repository's own ``suites/`` (when it has one) holds the suites its suite
    profiles name; a generic repository, or a native one without suites, uses the project's."""
    if repo.adapter == "native" and repo.path is not None and (repo.path / "suites").is_dir():
        return repo.path / "suites"
    return None
