"""Specialist templates: loading, validation, resolution, and the system prompt they give an agent.

A template is a JSON5 file validated against ``harness/schemas/template.schema.json``. A key
the schema does not name (anywhere in the template) is kept, reported as a warning, and left
out of the check; the rest must follow the schema. One resolution convention (docs/mint.md,
"Resolution") is shared by ``bench --specialist``, ``mint snapshot``, ``mint enrich`` and
``mint validate``. For ``<dir>/<name>.json5`` the first match wins:

1. ``<dir>/<name>/enriched/<version>/enriched-<NNN>.json5`` with the highest NNN
2. ``<dir>/<name>/<version>/<name>.json5``
3. ``<dir>/<name>.json5``

``<version>`` is the base template's ``version`` (or, when only versioned copies exist, the
highest version directory). A reference may be a path (``templates/py-testing.json5``), a bare
name (``py-testing``) or a scoped name (``@zebench/py-testing``); names are looked up in the
templates directory (``--templates-dir``, env ``ZE_BENCHMARKS_TEMPLATES_DIR``, default the
repository's ``templates/``). A path that points inside a family (an enriched file, a versioned
copy) is used exactly as given.

Documentation ``path`` entries are relative to the base template's directory (``<dir>``), so
they stay valid in enriched and versioned copies.

The system prompt's instructions come from named prompts, layered key by key (later wins):
``prompts.default``, ``prompts.model_specific[<model>]``, then, for a task,
``prompts.<task>.default`` and ``prompts.<task>.model_specific[<model>]``.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

import json5

from harness._util.jsonschemas import SchemaIssue, field_path, load_schema, validate
from harness._util.suggest import did_you_mean

TEMPLATES_DIR_ENV = "ZE_BENCHMARKS_TEMPLATES_DIR"
_ENRICHED_RE = re.compile(r"^enriched-(\d+)\.json5$")
_SEMVER_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
# Agents a preferred model may name as "agent:model".
_AGENT_PREFIXES = ("anthropic", "openai", "openrouter", "claude-code", "local", "echo", "oracle")
# Keys of ``prompts`` that are not task prompts.
_PROMPTS_KEYS = ("default", "model_specific", "prompt_strategy")
# Named prompts with a role of their own: systemPrompt is the main text of the system prompt,
# spawnerPrompt is for whoever spawns the specialist and is not given to it.
_SYSTEM_PROMPT, _SPAWNER_PROMPT = "systemPrompt", "spawnerPrompt"


class TemplateError(ValueError):
    """A template that cannot be found, parsed or validated. The message names file and field."""

    def __init__(self, message: str, issues: list[SchemaIssue] | None = None) -> None:
        super().__init__(message)
        self.issues = issues or []


@dataclass(frozen=True)
class ResolvedTemplate:
    """Where a template reference led: the file to read and the family it belongs to."""

    path: Path  # the file chosen by resolution
    family_dir: Path  # <dir>/<name>/ : holds versioned and enriched copies
    base_dir: Path  # <dir>/ : documentation paths are relative to it
    kind: str  # "enriched" | "versioned" | "base" | "explicit"


@dataclass(frozen=True)
class PreferredModel:
    """A preferred model, with the agent that runs it (``None`` when it cannot be inferred)."""

    agent: str | None
    model: str
    weight: float | None = None


def default_templates_dir() -> Path:
    """``$ZE_BENCHMARKS_TEMPLATES_DIR``, else the repository's ``templates/``, else ``./templates``."""
    env = os.environ.get(TEMPLATES_DIR_ENV)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[1] / "templates"
    return repo if repo.is_dir() else Path("templates")


def semver_key(version: str) -> tuple[Any, ...]:
    """Sort key for semantic versions; a pre-release sorts before its release, junk sorts first."""
    m = _SEMVER_RE.match(version)
    if not m:
        return (-1,)
    major, minor, patch, pre = m.groups()
    pre_key: tuple[Any, ...] = (1,) if pre is None else (0, *[
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")
    ])
    return (int(major), int(minor), int(patch), pre_key)


def numbered_files(directory: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    """Files in ``directory`` whose name matches ``pattern`` (one number group), sorted by number."""
    if not directory.is_dir():
        return []
    found = []
    for entry in directory.iterdir():
        m = pattern.match(entry.name)
        if m and entry.is_file():
            found.append((int(m.group(1)), entry))
    return sorted(found)


def read_json5(path: Path) -> Any:
    """Parse a JSON5 file; a syntax error becomes a :class:`TemplateError` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateError(f"{path}: file not found") from None
    except OSError as exc:
        raise TemplateError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return json5.loads(text)
    except ValueError as exc:
        raise TemplateError(f"{path}: not valid JSON5: {exc}") from None


def template_family(path: Path) -> tuple[Path, Path]:
    """``(family_dir, base_dir)`` of a template file, whichever copy of the family it is."""
    parent = path.parent
    if _ENRICHED_RE.match(path.name) and parent.parent.name == "enriched":
        family = parent.parent.parent
        return family, family.parent
    if parent.parent.name == path.stem:  # <dir>/<name>/<version>/<name>.json5
        family = parent.parent
        return family, family.parent
    return parent / path.stem, parent


def _version_dirs(family: Path, stem: str) -> list[str]:
    versions = set()
    if family.is_dir():
        for entry in family.iterdir():
            if entry.is_dir() and _SEMVER_RE.match(entry.name) and (entry / f"{stem}.json5").is_file():
                versions.add(entry.name)
        enriched = family / "enriched"
        if enriched.is_dir():
            versions.update(e.name for e in enriched.iterdir() if e.is_dir() and _SEMVER_RE.match(e.name))
    return sorted(versions, key=semver_key)


def resolve_path(base: Path) -> ResolvedTemplate:
    """Apply the resolution order to ``<dir>/<name>.json5`` (which need not exist itself)."""
    family, base_dir = template_family(base)
    if family != base.parent / base.stem:
        if not base.is_file():
            raise TemplateError(f"{base}: file not found")
        return ResolvedTemplate(base, family, base_dir, "explicit")
    stem = base.stem
    version: str | None = None
    if base.is_file():
        doc = read_json5(base)
        if isinstance(doc, dict) and isinstance(doc.get("version"), str):
            version = doc["version"]
    else:
        versions = _version_dirs(family, stem)
        version = versions[-1] if versions else None
    if version is not None:
        enriched = numbered_files(family / "enriched" / version, _ENRICHED_RE)
        if enriched:
            return ResolvedTemplate(enriched[-1][1], family, base_dir, "enriched")
        versioned = family / version / f"{stem}.json5"
        if versioned.is_file():
            return ResolvedTemplate(versioned, family, base_dir, "versioned")
    if base.is_file():
        return ResolvedTemplate(base, family, base_dir, "base")
    raise TemplateError(f"{base}: file not found (nor any versioned or enriched copy under {family})")


def _looks_like_path(ref: str) -> bool:
    if ref.endswith((".json5", ".json")):
        return True
    if ref.startswith("@"):
        return False
    return os.sep in ref or "/" in ref or Path(ref).is_file()


def _unscoped(name: str) -> str:
    return name.split("/", 1)[1] if name.startswith("@") and "/" in name else name


def resolve_template(ref: str | os.PathLike[str], templates_dir: Path | None = None) -> ResolvedTemplate:
    """Resolve a path, a bare name or an ``@scope/name`` to the template file to use."""
    ref_s = os.fspath(ref)
    if _looks_like_path(ref_s):
        return resolve_path(Path(ref_s))
    tdir = templates_dir or default_templates_dir()
    stem = _unscoped(ref_s)
    candidate = tdir / f"{stem}.json5"
    if candidate.is_file() or (tdir / stem).is_dir():
        # By convention <dir>/<name>.json5 is the template for a bare name; a scoped name must
        # also match the file's own name field. Errors here (bad JSON5) name the file.
        resolved = resolve_path(candidate)
        if not ref_s.startswith("@") or _name_matches(resolved.path, ref_s):
            return resolved
    # The file may be named differently from the template's own name: look inside.
    for path in sorted(tdir.glob("*.json5")) if tdir.is_dir() else []:
        if _name_matches(path, ref_s):
            return resolve_path(path)
    available = sorted(p.stem for p in tdir.glob("*.json5")) if tdir.is_dir() else []
    hint = f" (available: {', '.join(available)})" if available else ""
    raise TemplateError(f"no specialist template named {ref_s!r} in {tdir}{hint}")


def _name_matches(path: Path, ref: str) -> bool:
    try:
        doc = read_json5(path)
    except TemplateError:
        return False
    name = doc.get("name") if isinstance(doc, dict) else None
    if not isinstance(name, str):
        return False
    return name == ref or (not ref.startswith("@") and _unscoped(name) == ref)


def _schema_node(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` followed."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/$defs/"):
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema if isinstance(schema, dict) else {}


def _object_keys(schema: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """``(properties, additionalProperties)`` of an object schema, its oneOf/anyOf/allOf branches included."""
    props = dict(schema.get("properties") or {})
    extra = schema.get("additionalProperties")
    for keyword in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(keyword) or []:
            branch = _schema_node(branch, root)
            props.update(branch.get("properties") or {})
            if extra is None and "additionalProperties" in branch:
                extra = branch["additionalProperties"]
    return props, extra


def _unknown_keys(data: Any, schema: Any, root: dict[str, Any],
                  path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
    node = _schema_node(schema, root)
    found: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(data, dict):
        props, extra = _object_keys(node, root)
        if not props and extra is None:
            return found  # a free-form object such as benchmarks or prompt_strategy
        for key, value in data.items():
            if key in props:
                found += _unknown_keys(value, props[key], root, (*path, key))
            elif isinstance(extra, dict):  # a map: every key is a name (a model, a task, a prompt)
                found += _unknown_keys(value, extra, root, (*path, key))
            elif extra is not True:
                found.append(((*path, key), did_you_mean(str(key), props, cutoff=0.6)))
    elif isinstance(data, list) and isinstance(node.get("items"), dict):
        for i, item in enumerate(data):
            found += _unknown_keys(item, node["items"], root, (*path, i))
    return found


def unknown_template_keys(document: Any) -> list[tuple[str, str]]:
    """``(field path, suggestion)`` of every key the template schema does not name, in document order.

    The suggestion is `` (did you mean 'x'?)`` for a likely misspelling, else empty.
    """
    root = load_schema("template")
    return [(field_path(path), tip) for path, tip in _unknown_keys(document, root, root, ())]


def without_unknown_keys(document: Any) -> Any:
    """A copy of ``document`` without the keys the template schema does not name."""
    root = load_schema("template")
    out = copy.deepcopy(document)
    for path, _ in _unknown_keys(document, root, root, ()):
        parent = out
        for part in path[:-1]:
            parent = parent[part]
        parent.pop(path[-1], None)
    return out


def validate_template(document: Any, *, strict: bool = False) -> list[SchemaIssue]:
    """Schema violations of a template document (empty when valid).

    Keys the schema does not name are left out of the check (:func:`unknown_template_keys`
    lists them) unless ``strict``, where each is a violation, as in a minted snapshot.
    """
    return validate("template", document if strict else without_unknown_keys(document))


def template_warnings(document: Any, path: Path | str) -> list[str]:
    """One line per unknown key: ``<file>: <field>: unknown key, kept but not used``."""
    return [f"{path}: {where}: unknown key, kept but not used{tip}" for where, tip in unknown_template_keys(document)]


def documentation_file(entry: dict[str, Any], base_dir: Path) -> Path | None:
    """The local file a documentation entry points at: its ``path`` (relative to ``base_dir``
    unless absolute) or its ``file://`` URL; None for an http(s) URL."""
    if isinstance(entry.get("url"), str) and entry["url"]:
        parsed = urlparse(entry["url"])
        return Path(unquote(parsed.path)) if parsed.scheme == "file" else None
    if isinstance(entry.get("path"), str) and entry["path"]:
        path = Path(entry["path"])
        return path if path.is_absolute() else base_dir / path
    return None


def missing_documentation(document: Any, base_dir: Path) -> list[SchemaIssue]:
    """Documentation entries whose local file (a path, a file:// URL) does not exist. Other
    URLs are not checked."""
    issues = []
    docs = document.get("documentation") if isinstance(document, dict) else None
    for i, entry in enumerate(docs if isinstance(docs, list) else []):
        if not isinstance(entry, dict):
            continue
        target = documentation_file(entry, base_dir)
        if target is None or target.is_file():
            continue
        key = "url" if entry.get("url") else "path"
        what = "is a directory, not a file" if target.is_dir() else "no such file"
        issues.append(SchemaIssue(f"documentation[{i}].{key}", f"{what}: {target}"))
    return issues


def load_template_with_warnings(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Read and validate one template file: the document as read (unknown keys kept) and one
    warning per unknown key. Raise :class:`TemplateError` naming file and fields."""
    doc = read_json5(path)
    issues = validate_template(doc)
    if issues:
        listed = "; ".join(str(i) for i in issues)
        raise TemplateError(f"{path}: invalid template: {listed}", issues)
    return doc, template_warnings(doc, path)


def load_template(path: Path) -> dict[str, Any]:
    """Read and validate one template file; raise :class:`TemplateError` naming file and fields."""
    return load_template_with_warnings(path)[0]


def parse_preferred_model(entry: str | dict[str, Any]) -> PreferredModel:
    """Agent and model of a ``preferred_models`` entry.

    ``{"agent": "anthropic", "model": "claude-sonnet-4-5"}`` is explicit;
    ``"anthropic:claude-sonnet-4-5"`` names the agent before the colon; ``"vendor/model"``
    is an OpenRouter model id; a bare ``claude-*`` model runs on ``anthropic``, a bare
    ``gpt-*``/``o<digit>*`` model on ``openai``; anything else has no inferable agent.
    """
    weight = None
    if isinstance(entry, dict):
        weight = entry.get("weight")
        if entry.get("agent"):
            return PreferredModel(entry["agent"], entry["model"], weight)
        entry = entry["model"]
    prefix, sep, rest = entry.partition(":")
    if sep and prefix in _AGENT_PREFIXES and rest:
        return PreferredModel(prefix, rest, weight)
    if "/" in entry:
        return PreferredModel("openrouter", entry, weight)
    if entry.startswith("claude"):
        return PreferredModel("anthropic", entry, weight)
    if entry.startswith("gpt-") or re.match(r"^o\d", entry):
        return PreferredModel("openai", entry, weight)
    return PreferredModel(None, entry, weight)


def _bare_model(model: str) -> str:
    """``anthropic:claude-x`` and ``anthropic/claude-x`` -> ``claude-x``."""
    prefix, sep, rest = model.partition(":")
    if sep and prefix in _AGENT_PREFIXES:
        model = rest
    return model.rsplit("/", 1)[-1]


def _model_keys_match(key: str, model: str) -> bool:
    return key == model or _bare_model(key) == _bare_model(model)


def _model_entry(specific: Any, model: str | None) -> dict[str, Any]:
    """The entry of a ``model_specific`` map for ``model``: its exact id, else the first key (in
    sorted order) that matches without an ``agent:``/``vendor/`` prefix; ``{}`` when none."""
    if not model or not isinstance(specific, dict):
        return {}
    if isinstance(specific.get(model), dict):
        return specific[model]
    for key in sorted(specific):
        if _model_keys_match(key, model) and isinstance(specific[key], dict):
            return specific[key]
    return {}


def _strings(block: Any) -> dict[str, str]:
    return {k: v for k, v in block.items() if isinstance(v, str)} if isinstance(block, dict) else {}


@dataclass(frozen=True)
class Specialist:
    """A loaded, validated specialist template, as the runner and mint use it."""

    name: str
    version: str
    template: dict[str, Any] = field(compare=False, repr=False)
    source: Path = field(default=Path("."))
    base_dir: Path = field(default=Path("."))
    family_dir: Path = field(default=Path("."))
    task: str | None = None  # the task prompt to use when system_prompt() is called without one
    warnings: tuple[str, ...] = field(default=(), compare=False)  # unknown keys, one line each

    @property
    def display_name(self) -> str:
        return self.template.get("displayName") or self.name

    @property
    def unscoped_name(self) -> str:
        return _unscoped(self.name)

    @property
    def preferred_models(self) -> list[PreferredModel]:
        return [parse_preferred_model(e) for e in self.template.get("preferred_models") or []]

    @property
    def preferred_agent(self) -> str | None:
        models = self.preferred_models
        return models[0].agent if models else None

    @property
    def preferred_model(self) -> str | None:
        models = self.preferred_models
        return models[0].model if models else None

    @property
    def task_names(self) -> list[str]:
        prompts = self.template.get("prompts") or {}
        return sorted(k for k, v in prompts.items() if k not in _PROMPTS_KEYS and isinstance(v, dict))

    def task_for(self, candidates: Iterable[str | None]) -> str | None:
        """The first candidate (scenario name, suite, tags...) that names a task prompt."""
        tasks = set(self.task_names)
        for c in candidates:
            if c and c in tasks:
                return c
        return None

    def with_task(self, task: str | None) -> "Specialist":
        return replace(self, task=task)

    def for_scenario(self, scenario: Any) -> "Specialist":
        """Bound to the task prompt named by the scenario's name, else its suite, else a tag."""
        candidates = [getattr(scenario, "name", None), getattr(scenario, "suite", None),
                      *(getattr(scenario, "tags", None) or [])]
        return self.with_task(self.task_for(candidates))

    def run_metadata(self, model: str | None) -> dict[str, Any]:
        """What a run stores about the specialist beyond name and version: the file it came from
        (base, versioned or enriched copy) and a hash of the exact system prompt it gave."""
        try:
            source = str(self.source.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            source = str(self.source)
        digest = hashlib.sha256(self.system_prompt(model).encode("utf-8")).hexdigest()
        return {"specialistSource": source, "specialistTask": self.task, "specialistPromptSha256": digest}

    def agent_and_model(self, agent: str | None, model: str | None) -> tuple[str, str | None]:
        """The agent and model for a run: the ones given, else the first preferred model's.

        An explicit ``agent`` keeps the given ``model`` (possibly None, the agent's default).
        Raises :class:`TemplateError` when neither an agent nor a usable preferred model exists.
        """
        if agent:
            return agent, model
        models = self.preferred_models
        if not models:
            raise TemplateError(f"{self.source}: preferred_models is empty; pass --agent")
        first = models[0]
        if first.agent is None:
            raise TemplateError(f"{self.source}: preferred_models[0]: cannot tell which agent runs "
                                f"{first.model!r}; write it as 'agent:model' or pass --agent")
        return first.agent, model or first.model

    def named_prompts(self, model: str | None = None, task: str | None = None) -> dict[str, str]:
        """The named prompts for ``model`` and ``task``, layered key by key (later wins):
        ``prompts.default``, ``prompts.model_specific[model]``, ``prompts[task].default``,
        ``prompts[task].model_specific[model]``. A model key matches the model id exactly or
        without an ``agent:``/``vendor/`` prefix."""
        prompts = self.template.get("prompts") or {}
        task = task or self.task
        blocks = [prompts]
        if task and task in self.task_names:
            blocks.append(prompts[task])
        merged: dict[str, str] = {}
        for block in blocks:
            merged.update(_strings(block.get("default")))
            merged.update(_strings(_model_entry(block.get("model_specific"), model)))
        return merged

    def task_prompt(self, model: str | None = None, task: str | None = None) -> str | None:
        """The ``systemPrompt`` of :meth:`named_prompts`: the task's model-specific one, else the
        task's default, else the general model-specific one, else the general default."""
        return self.named_prompts(model, task).get(_SYSTEM_PROMPT)

    @property
    def prompt_strategy(self) -> dict[str, Any]:
        """The template's ``prompt_strategy`` values as written, by where they are
        (``prompts.prompt_strategy``, ``prompt_strategy``). Informational: no resolution reads them."""
        found = {"prompts.prompt_strategy": (self.template.get("prompts") or {}).get("prompt_strategy"),
                 "prompt_strategy": self.template.get("prompt_strategy")}
        return {k: v for k, v in found.items() if v is not None}

    def system_prompt(self, model: str | None = None, task: str | None = None) -> str:
        """The system prompt for ``model`` (and ``task``), built only from the template's content.

        Sections, in order: identity, persona, capabilities, the resolved ``systemPrompt``, the
        other named prompts (``spawnerPrompt`` is not one of them), documentation (with the
        enrichment summaries, concepts and code patterns when present). The same template,
        model and task always give the same text.
        """
        t = self.template
        persona = t.get("persona") or {}
        caps = t.get("capabilities") or {}
        parts: list[str] = [f"You are {self.display_name} (specialist {self.name} v{self.version})."]
        parts.append(f"Purpose: {persona.get('purpose', '').strip()}")
        for key, title in (("values", "Values"), ("attributes", "Attributes")):
            if persona.get(key):
                parts.append(title + ":\n" + "\n".join(f"- {v}" for v in persona[key]))
        if persona.get("tech_stack"):
            parts.append("Tech stack: " + ", ".join(persona["tech_stack"]))
        if caps.get("tags"):
            parts.append("Capabilities: " + ", ".join(caps["tags"]))
        if caps.get("descriptions"):
            parts.append("\n".join(f"- {k}: {v}" for k, v in sorted(caps["descriptions"].items())))
        if caps.get("considerations"):
            parts.append("Considerations:\n" + "\n".join(f"- {c}" for c in caps["considerations"]))
        named = self.named_prompts(model, task)
        if named.get(_SYSTEM_PROMPT, "").strip():
            parts.append(named[_SYSTEM_PROMPT].strip())
        others = [(k, v.strip()) for k, v in named.items() if k not in (_SYSTEM_PROMPT, _SPAWNER_PROMPT) and v.strip()]
        if others:
            lines = ["Named prompts:"]
            for name, text in others:
                first, *rest = text.splitlines()
                lines.append(f"- {name}: {first}")
                lines.extend(f"  {line}" if line.strip() else "" for line in rest)
            parts.append("\n".join(lines))
        docs = self._documentation_section()
        if docs:
            parts.append(docs)
        return "\n\n".join(p for p in parts if p.strip()) + "\n"

    def _documentation_section(self) -> str:
        lines: list[str] = []
        for doc in self.template.get("documentation") or []:
            where = doc.get("url") or doc.get("path")
            title = f"{doc['title']}: {doc['description']}" if doc.get("title") else doc.get("description")
            lines.append(f"- {title} ({where})")
            e = doc.get("enrichment") or {}
            if e.get("summary"):
                lines.append(f"  Summary: {e['summary']}")
            if e.get("key_concepts"):
                lines.append("  Key concepts: " + "; ".join(e["key_concepts"]))
            if e.get("use_cases"):
                lines.append("  Use cases: " + "; ".join(e["use_cases"]))
            if e.get("code_patterns"):
                lines.append("  Code patterns:")
                lines.extend(f"    - {p}" for p in e["code_patterns"])
            if e.get("relevance_to_specialist"):
                lines.append(f"  Why it matters: {e['relevance_to_specialist']}")
        return ("Reference documentation:\n" + "\n".join(lines)) if lines else ""


def specialist_from_file(resolved: ResolvedTemplate) -> Specialist:
    """Load and validate the resolved file into a :class:`Specialist`."""
    doc, warnings = load_template_with_warnings(resolved.path)
    return Specialist(
        name=doc["name"],
        version=doc["version"],
        template=doc,
        source=resolved.path,
        base_dir=resolved.base_dir,
        family_dir=resolved.family_dir,
        warnings=tuple(warnings),
    )


def load_specialist(ref: str | os.PathLike[str], templates_dir: Path | None = None) -> Specialist:
    """Resolve ``ref`` (path, name or @scope/name), then load and validate it."""
    return specialist_from_file(resolve_template(ref, templates_dir))
