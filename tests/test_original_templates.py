"""Templates in the shapes the original TypeScript system shipped: they validate and resolve.

The shapes: ``prompts.model_specific`` (named prompts per model) beside ``prompts.default``
(``spawnerPrompt``, ``systemPrompt`` and other named prompts), task blocks
``prompts.<task>{default, model_specific}``, ``prompt_strategy`` inside ``prompts`` and at the
top level, and the top-level keys ``version_metadata``, ``from``, ``license``,
``availability``, ``maintainers``, ``dependencies``, ``preferred_models`` objects,
``spawnable_sub_agent_specialists`` and ``benchmarks``. Each fixture below is written the way
the originals were (JSONC with comments, JSON5, plain JSON). Keys no schema names are kept
with a warning; a documentation file that is missing makes ``mint validate`` fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import json5
import pytest
import respx
from click.testing import CliRunner

from harness.cli.mint import main as mint
from harness._util.jsonschemas import validate
from harness.mint.snapshot import mint_snapshot, validate_snapshot
from harness.results import BatchRecord, EvaluationRecord, RunRecord, open_client
from harness.specialists import load_specialist, validate_template

# --------------------------------------------------------------------------- the fixtures

# 1. JSONC: prompts.default without a systemPrompt, only a spawner prompt and named prompts
#    with {placeholders}; prompts.model_specific keyed by the original's model ids; task blocks
#    with default and model_specific; prompts.prompt_strategy.
NEXTJS = """// Next.js Specialist
// App Router development and migrations
{
  "$schema": "../schemas/template.schema.jsonc",
  "schema_version": "0.0.1",
  "name": "nextjs-specialist",
  "displayName": "Next.js App Router Expert",
  "version": "0.0.1",
  "license": "MIT",
  "availability": "public",
  "maintainers": [
    {"name": "Research Team", "email": "research@example.dev"}
  ],
  "persona": {
    "purpose": "Expert Next.js specialist for App Router development and migrations",
    "values": ["Performance first", "Type safety"],
    "attributes": ["Expert in React Server Components"],
    "tech_stack": ["TypeScript", "Next.js 15"]
  },
  "capabilities": {
    "tags": ["nextjs-app-router", "migration"],
    "descriptions": {
      "nextjs-app-router": "Build applications with the App Router",
      "migration": "Migrate from the Pages Router"
    },
    "considerations": ["Server Components are the default"]
  },
  "dependencies": {
    "subscription": {"required": false, "purpose": "No subscription required"},
    "available_tools": ["file_system", "terminal", "git"],
    "mcps": []
  },
  "documentation": [
    {"type": "official", "url": "https://nextjs.org/docs/app", "description": "App Router documentation"}
  ],
  "preferred_models": [
    {"model": "claude-sonnet-4.5"},
    {"model": "gpt-4o"}
  ],
  "prompts": {
    "default": {
      "spawnerPrompt": "I'm a Next.js App Router specialist.",
      "migration": "Migrate from Pages Router to App Router: {description}",
      "troubleshoot": "Debug {issueType} issue in Next.js App Router: {description}"
    },
    "model_specific": {
      "claude-sonnet-4.5": {
        "spawnerPrompt": "I'm a Next.js App Router specialist powered by Claude Sonnet 4.5.",
        "migration": "I'll migrate this project:\\n\\n1. Analyze pages/\\n2. Create app/layout.tsx\\n\\nI'll handle: {description}"
      }
    },
    "migration": {
      "default": {
        "systemPrompt": "You are a Next.js App Router specialist focused on migrations."
      },
      "model_specific": {
        "claude-sonnet-4.5": {
          "systemPrompt": "You are a Next.js App Router specialist powered by Claude Sonnet 4.5, focused on migrations."
        }
      }
    },
    "prompt_strategy": {
      "fallback": "default",
      "model_detection": "auto",
      "allow_override": true,
      "interpolation": {"style": "mustache", "escape_html": false}
    }
  },
  "spawnable_sub_agent_specialists": []
}
"""

NEXTJS_HEAD = """You are Next.js App Router Expert (specialist nextjs-specialist v0.0.1).

Purpose: Expert Next.js specialist for App Router development and migrations

Values:
- Performance first
- Type safety

Attributes:
- Expert in React Server Components

Tech stack: TypeScript, Next.js 15

Capabilities: nextjs-app-router, migration

- migration: Migrate from the Pages Router
- nextjs-app-router: Build applications with the App Router

Considerations:
- Server Components are the default"""

NEXTJS_DOCS = """Reference documentation:
- App Router documentation (https://nextjs.org/docs/app)"""

# 2. JSON5: a systemPrompt and a named prompt in prompts.default, a model-specific systemPrompt,
#    prompt_strategy both in prompts and at the top level, from and version_metadata, a local
#    documentation file.
SHADCN = """// shadcn/ui specialist
{
  $schema: 'https://example.dev/schemas/specialist-template.json',
  schema_version: '0.0.1',
  name: '@zephyr-cloud/shadcn-specialist',
  displayName: 'shadcn/ui Expert',
  version: '1.2.0',
  from: '@zephyr-cloud/base-react',
  version_metadata: {
    tags: ['stable'],
    notes: 'Theming prompts',
    changelog: [{version: '1.2.0', changes: ['theming task']}, 'initial release'],
    released_at: '2025-11-01',
  },
  persona: {
    purpose: 'Build accessible interfaces with shadcn/ui',
    values: ['Accessibility'],
    attributes: [],
    tech_stack: ['React', 'Tailwind CSS'],
  },
  capabilities: {
    tags: ['shadcn-ui'],
    descriptions: {'shadcn-ui': 'Add and theme shadcn/ui components'},
  },
  documentation: [
    {type: 'reference', title: 'CLI', description: 'The shadcn CLI', path: 'docs/shadcn-cli.md'},
  ],
  preferred_models: [
    {model: 'gpt-4o', specialist_enabled: true, weight: 0.9, benchmarks: {component_generation: 0.8}},
  ],
  prompts: {
    default: {
      spawnerPrompt: 'I add and theme shadcn/ui components.',
      systemPrompt: 'You build interfaces with shadcn/ui.',
      component_add: 'Add the {component} component with the CLI.',
    },
    model_specific: {
      'gpt-4o': {systemPrompt: 'You build interfaces with shadcn/ui. Answer with complete files.'},
    },
    theming: {
      default: {systemPrompt: 'Theme with CSS variables in globals.css.'},
    },
    prompt_strategy: {fallback: 'default', model_detection: 'auto'},
  },
  prompt_strategy: {fallback: 'default', allow_override: false},
}
"""

SHADCN_HEAD = """You are shadcn/ui Expert (specialist @zephyr-cloud/shadcn-specialist v1.2.0).

Purpose: Build accessible interfaces with shadcn/ui

Values:
- Accessibility

Tech stack: React, Tailwind CSS

Capabilities: shadcn-ui

- shadcn-ui: Add and theme shadcn/ui components"""

SHADCN_DOCS = """Reference documentation:
- CLI: The shadcn CLI (docs/shadcn-cli.md)"""

# 3. JSONC: MCP dependencies, weighted preferred models (one without the specialist), a general
#    and a task model-specific systemPrompt for the same model.
FIGMA = """// Figma MCP specialist
{
  "$schema": "./specialist-template.schema.json",
  "schema_version": "0.0.1",
  "name": "@figma-research/figma-mcp-specialist",
  "version": "0.3.0",
  "availability": "paid",
  "persona": {"purpose": "Turn Figma designs into code through the Figma MCP server"},
  "dependencies": {
    "subscription": {"required": true, "purpose": "A Figma plan with API access"},
    "available_tools": ["file_system"],
    "mcps": [
      {"name": "figma", "version": "^1.0.0", "permissions": ["read"], "description": "Figma files",
       "required": true, "allowed_tools": ["figma_get_me", "figma_get_file"]}
    ]
  },
  "preferred_models": [
    {"model": "claude-sonnet-4.5", "specialist_enabled": true, "weight": 1, "benchmarks": {"design_to_code": 0.9}},
    {"model": "gpt-4o", "specialist_enabled": false, "weight": 0.4}
  ],
  "prompts": {
    "default": {
      "spawnerPrompt": "I turn Figma frames into components.",
      "systemPrompt": "Read the design with the Figma tools before writing code."
    },
    "model_specific": {
      "claude-sonnet-4.5": {"systemPrompt": "Read the design with figma_get_file, then write code."}
    },
    "design_to_code": {
      "default": {"systemPrompt": "Map each frame to a component."},
      "model_specific": {
        "claude-sonnet-4.5": {"systemPrompt": "Map each frame to a component; reuse tokens from the file."}
      }
    }
  }
}
"""

FIGMA_HEAD = """You are @figma-research/figma-mcp-specialist (specialist @figma-research/figma-mcp-specialist v0.3.0).

Purpose: Turn Figma designs into code through the Figma MCP server"""

# 4. Plain JSON: benchmarks and sub-agent specialists at the top level, a file:// URL, a model
#    entry that overrides a named prompt only, a task model entry that adds one; prompt_strategy
#    at the top level only.
QA_BACKEND = """{
  "schema_version": "0.0.1",
  "name": "@qa/qa-backend-engineer",
  "displayName": "QA Backend Engineer",
  "version": "2.0.0",
  "license": "UNLICENSED",
  "availability": "private",
  "maintainers": ["QA Guild"],
  "persona": {"purpose": "Test HTTP APIs", "tech_stack": ["pytest", "httpx"]},
  "capabilities": {"tags": ["api-testing"], "considerations": ["Never call production"]},
  "documentation": [
    {"type": "control", "description": "Checklist", "url": "file://@CHECKLIST@"},
    {"type": "recipes", "description": "Fixtures", "path": "docs/fixtures.md"}
  ],
  "preferred_models": [{"model": "gpt-4o-mini", "weight": 0.7}],
  "prompts": {
    "default": {
      "spawnerPrompt": "I test backends.",
      "systemPrompt": "Write API tests with pytest and httpx.",
      "api_test": "Test the {endpoint} endpoint."
    },
    "model_specific": {
      "gpt-4o-mini": {"api_test": "Test {endpoint}: status codes first, then bodies."}
    },
    "api_testing": {
      "default": {"systemPrompt": "Cover every status code the API documents."},
      "model_specific": {
        "gpt-4o-mini": {"systemPrompt": "Cover every documented status code, one test each.",
                        "checklist": "Auth, validation, pagination."}
      }
    }
  },
  "prompt_strategy": {"fallback": "default"},
  "spawnable_sub_agent_specialists": [
    {"name": "@qa/qa-testdata-specialist", "version": "1.0.0", "purpose": "Test data"}
  ],
  "benchmarks": {"test_suites": [{"name": "api", "path": "suites/api", "type": "functional"}], "scoring": {}}
}
"""

QA_HEAD = """You are QA Backend Engineer (specialist @qa/qa-backend-engineer v2.0.0).

Purpose: Test HTTP APIs

Tech stack: pytest, httpx

Capabilities: api-testing

Considerations:
- Never call production"""

QA_DOCS = """Reference documentation:
- Checklist (file://@CHECKLIST@)
- Fixtures (docs/fixtures.md)"""

# 5. JSON5: a task block with model_specific only (no default of its own).
MCP_DEMO = """{
  schema_version: '0.0.1',
  name: 'mcp-demo-specialist',
  version: '0.0.2',
  persona: {purpose: 'Demonstrate MCP tools'},
  prompts: {
    default: {systemPrompt: 'Use the demo MCP tools.'},
    model_specific: {'claude-haiku-4-5': {systemPrompt: 'Use the demo MCP tools; be brief.'}},
    demo: {
      model_specific: {'claude-haiku-4-5': {systemPrompt: 'Run the demo tool once, then report.'}},
    },
    prompt_strategy: 'default-first',
  },
}
"""

MCP_HEAD = """You are mcp-demo-specialist (specialist mcp-demo-specialist v0.0.2).

Purpose: Demonstrate MCP tools"""

# 6. JSONC from an older original: keys our schema does not name, at several depths (kept, each
#    a warning), and an enrichment written by the original's enricher.
LEGACY = """// An older template
{
  "schema_version": "0.0.1",
  "name": "legacy-specialist",
  "version": "0.1.0",
  "maintainers": [{"name": "Ops", "github": "ops-team"}],
  "persona": {"purpose": "Keep legacy services running", "tone": "calm"},
  "documentation": [
    {"type": "reference", "description": "Runbook", "path": "docs/runbook.md",
     "enrichment": {"summary": "Restart in order.", "last_enriched": "2025-10-01T00:00:00Z",
                    "enrichment_model": "anthropic/claude-3.5-haiku"}}
  ],
  "prompts": {
    "default": {"systemPrompt": "Change as little as possible."},
    "hotfix": {"default": {"systemPrompt": "Patch, test, ship."}, "notes": "for incidents"}
  },
  "spawnable_sub-agent_specialists": [{"name": "db-helper", "version": "1.0.0", "purpose": "SQL"}]
}
"""

LEGACY_HEAD = """You are legacy-specialist (specialist legacy-specialist v0.1.0).

Purpose: Keep legacy services running"""

LEGACY_DOCS = """Reference documentation:
- Runbook (docs/runbook.md)
  Summary: Restart in order."""

FIXTURES = {
    "nextjs": ("nextjs-specialist-template.jsonc", NEXTJS),
    "shadcn": ("shadcn-specialist-template.json5", SHADCN),
    "figma": ("figma-mcp-specialist-template.jsonc", FIGMA),
    "qa-backend": ("qa-backend-engineer.json", QA_BACKEND),
    "mcp-demo": ("mcp-demo-specialist-template.json5", MCP_DEMO),
    "legacy": ("legacy-specialist.jsonc", LEGACY),
}


def write_fixture(tmp_path: Path, key: str) -> Path:
    """The fixture's file in ``tmp_path``, with the local documentation it refers to."""
    name, text = FIXTURES[key]
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for doc in ("shadcn-cli.md", "fixtures.md", "runbook.md"):
        (docs / doc).write_text(f"# {doc}\n", encoding="utf-8")
    checklist = tmp_path / "shared" / "checklist.md"
    checklist.parent.mkdir(exist_ok=True)
    checklist.write_text("# Checklist\n", encoding="utf-8")
    path = tmp_path / name
    path.write_text(text.replace("@CHECKLIST@", str(checklist)), encoding="utf-8")
    return path


def _prompt(head: str, *sections: str) -> str:
    return "\n\n".join([head, *[s for s in sections if s]]) + "\n"


# (fixture, model, task) -> (the text after the head, before the documentation)
CASES = [
    # The model has an entry (its OpenRouter id matches the key without the vendor): its named
    # prompts override the default's; there is no systemPrompt; spawnerPrompt is not included.
    ("nextjs", "anthropic/claude-sonnet-4.5", None,
     "Named prompts:\n"
     "- migration: I'll migrate this project:\n"
     "\n"
     "  1. Analyze pages/\n"
     "  2. Create app/layout.tsx\n"
     "\n"
     "  I'll handle: {description}\n"
     "- troubleshoot: Debug {issueType} issue in Next.js App Router: {description}"),
    ("nextjs", "gpt-4o", None,
     "Named prompts:\n"
     "- migration: Migrate from Pages Router to App Router: {description}\n"
     "- troubleshoot: Debug {issueType} issue in Next.js App Router: {description}"),
    ("nextjs", "openrouter:anthropic/claude-sonnet-4.5", "migration",
     "You are a Next.js App Router specialist powered by Claude Sonnet 4.5, focused on migrations.\n\n"
     "Named prompts:\n"
     "- migration: I'll migrate this project:\n"
     "\n"
     "  1. Analyze pages/\n"
     "  2. Create app/layout.tsx\n"
     "\n"
     "  I'll handle: {description}\n"
     "- troubleshoot: Debug {issueType} issue in Next.js App Router: {description}"),
    ("nextjs", "gpt-4o", "migration",
     "You are a Next.js App Router specialist focused on migrations.\n\n"
     "Named prompts:\n"
     "- migration: Migrate from Pages Router to App Router: {description}\n"
     "- troubleshoot: Debug {issueType} issue in Next.js App Router: {description}"),
    # A model-specific systemPrompt replaces the default one; a task's own default beats it.
    ("shadcn", "openai:gpt-4o", None,
     "You build interfaces with shadcn/ui. Answer with complete files.\n\n"
     "Named prompts:\n- component_add: Add the {component} component with the CLI."),
    ("shadcn", "claude-sonnet-4-6", None,
     "You build interfaces with shadcn/ui.\n\n"
     "Named prompts:\n- component_add: Add the {component} component with the CLI."),
    ("shadcn", "gpt-4o", "theming",
     "Theme with CSS variables in globals.css.\n\n"
     "Named prompts:\n- component_add: Add the {component} component with the CLI."),
    ("figma", "claude-sonnet-4.5", None, "Read the design with figma_get_file, then write code."),
    ("figma", "gpt-4o", None, "Read the design with the Figma tools before writing code."),
    # A date suffix is not a prefix: such an id gets the default prompts.
    ("figma", "claude-sonnet-4.5-20250929", None, "Read the design with the Figma tools before writing code."),
    ("figma", "claude-sonnet-4.5", "design_to_code", "Map each frame to a component; reuse tokens from the file."),
    ("figma", "gpt-4o", "design_to_code", "Map each frame to a component."),
    # The model entry overrides a named prompt only; the task's model entry adds one.
    ("qa-backend", "gpt-4o-mini", None,
     "Write API tests with pytest and httpx.\n\n"
     "Named prompts:\n- api_test: Test {endpoint}: status codes first, then bodies."),
    ("qa-backend", "gpt-4o", None,
     "Write API tests with pytest and httpx.\n\n"
     "Named prompts:\n- api_test: Test the {endpoint} endpoint."),
    ("qa-backend", "openai:gpt-4o-mini", "api_testing",
     "Cover every documented status code, one test each.\n\n"
     "Named prompts:\n"
     "- api_test: Test {endpoint}: status codes first, then bodies.\n"
     "- checklist: Auth, validation, pagination."),
    ("qa-backend", "gpt-4o", "api_testing",
     "Cover every status code the API documents.\n\n"
     "Named prompts:\n- api_test: Test the {endpoint} endpoint."),
    ("mcp-demo", "anthropic:claude-haiku-4-5", None, "Use the demo MCP tools; be brief."),
    ("mcp-demo", "claude-sonnet-4-6", None, "Use the demo MCP tools."),
    ("mcp-demo", "claude-haiku-4-5", "demo", "Run the demo tool once, then report."),
    # A task without a default of its own, for a model without an entry: the general default.
    ("mcp-demo", "claude-sonnet-4-6", "demo", "Use the demo MCP tools."),
    ("legacy", "gpt-4o", None, "Change as little as possible."),
    ("legacy", "gpt-4o", "hotfix", "Patch, test, ship."),
]

HEADS = {"nextjs": (NEXTJS_HEAD, NEXTJS_DOCS), "shadcn": (SHADCN_HEAD, SHADCN_DOCS), "figma": (FIGMA_HEAD, ""),
         "qa-backend": (QA_HEAD, QA_DOCS), "mcp-demo": (MCP_HEAD, ""), "legacy": (LEGACY_HEAD, LEGACY_DOCS)}

LEGACY_WARNINGS = [
    "maintainers[0].github: unknown key, kept but not used",
    "persona.tone: unknown key, kept but not used",
    "documentation[0].enrichment.last_enriched: unknown key, kept but not used (did you mean 'enriched_at'?)",
    "documentation[0].enrichment.enrichment_model: unknown key, kept but not used",
    "prompts.hotfix.notes: unknown key, kept but not used",
    "spawnable_sub-agent_specialists: unknown key, kept but not used (did you mean 'spawnable_sub_agent_specialists'?)",
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_TEMPLATES_DIR", str(tmp_path))
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("key", FIXTURES)
def test_original_template_validates_with_mint_validate(tmp_path, key):
    path = write_fixture(tmp_path, key)
    with respx.mock(assert_all_mocked=True):  # no URL is fetched
        result = CliRunner().invoke(mint, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    doc = json5.loads(path.read_text())
    assert result.stdout == f"valid: {path} ({doc['name']} {doc['version']})\n"
    expected = [f"warning: {path}: {w}" for w in LEGACY_WARNINGS] if key == "legacy" else []
    assert result.stderr.splitlines() == expected


@pytest.mark.parametrize("key", FIXTURES)
def test_original_template_validates_as_json(tmp_path, key):
    path = write_fixture(tmp_path, key)
    result = CliRunner().invoke(mint, ["validate", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["valid"] is True and report["files"][0]["issues"] == []
    assert len(report["files"][0]["warnings"]) == (len(LEGACY_WARNINGS) if key == "legacy" else 0)


# --------------------------------------------------------------------------- resolution


@pytest.mark.parametrize(("key", "model", "task", "section"), CASES,
                         ids=[f"{k}-{m}-{t or 'no-task'}" for k, m, t, _ in CASES])
def test_original_template_builds_exactly_the_expected_system_prompt(tmp_path, key, model, task, section):
    path = write_fixture(tmp_path, key)
    sp = load_specialist(path)
    head, docs = HEADS[key]
    expected = _prompt(head, section, docs.replace("@CHECKLIST@", str(tmp_path / "shared" / "checklist.md")))
    assert sp.system_prompt(model, task) == expected
    assert sp.with_task(task).system_prompt(model) == expected


def test_model_specific_entry_picks_the_exact_id_before_a_prefixed_match(tmp_path):
    path = write_fixture(tmp_path, "shadcn")
    doc = json5.loads(path.read_text())
    doc["prompts"]["model_specific"]["openai/gpt-4o"] = {"systemPrompt": "VENDOR-PREFIXED"}
    path.write_text(json.dumps(doc))
    sp = load_specialist(path)
    assert sp.named_prompts("openai/gpt-4o")["systemPrompt"] == "VENDOR-PREFIXED"
    assert sp.named_prompts("gpt-4o")["systemPrompt"].endswith("Answer with complete files.")


def test_task_names_leave_out_model_specific_and_prompt_strategy(tmp_path):
    assert load_specialist(write_fixture(tmp_path, "nextjs")).task_names == ["migration"]
    assert load_specialist(write_fixture(tmp_path, "mcp-demo")).task_names == ["demo"]


def test_a_scenario_binds_an_original_task_block(tmp_path):
    from types import SimpleNamespace

    sp = load_specialist(write_fixture(tmp_path, "figma"))
    bound = sp.for_scenario(SimpleNamespace(name="landing-page", suite="design_to_code", tags=[]))
    assert bound.task == "design_to_code"
    assert "reuse tokens from the file" in bound.system_prompt("claude-sonnet-4.5")


def test_prompt_strategy_at_both_levels_is_kept_and_does_not_change_the_prompt(tmp_path):
    path = write_fixture(tmp_path, "shadcn")
    sp = load_specialist(path)
    assert sp.prompt_strategy == {"prompts.prompt_strategy": {"fallback": "default", "model_detection": "auto"},
                                  "prompt_strategy": {"fallback": "default", "allow_override": False}}
    doc = json5.loads(path.read_text())
    del doc["prompt_strategy"], doc["prompts"]["prompt_strategy"]
    bare = tmp_path / "bare" / "shadcn.json5"
    bare.parent.mkdir()
    bare.write_text(json.dumps(doc))
    (bare.parent / "docs").mkdir()
    (bare.parent / "docs" / "shadcn-cli.md").write_text("# CLI\n")
    without = load_specialist(bare)
    for model, task in (("gpt-4o", None), ("claude-sonnet-4-6", None), ("gpt-4o", "theming")):
        assert sp.system_prompt(model, task) == without.system_prompt(model, task)


# --------------------------------------------------------------------------- unknown keys


def test_unknown_keys_are_kept_in_the_loaded_template_with_one_warning_each(tmp_path):
    path = write_fixture(tmp_path, "legacy")
    sp = load_specialist(path)
    assert list(sp.warnings) == [f"{path}: {w}" for w in LEGACY_WARNINGS]
    assert sp.template["spawnable_sub-agent_specialists"][0]["name"] == "db-helper"
    assert sp.template["persona"]["tone"] == "calm"
    assert sp.template["documentation"][0]["enrichment"]["enrichment_model"] == "anthropic/claude-3.5-haiku"
    assert sp.template["prompts"]["hotfix"]["notes"] == "for incidents"
    # The known part is checked as usual: a wrong type next to an unknown key still fails.
    doc = json5.loads(path.read_text())
    doc["persona"]["values"] = "calm"
    assert [i.field for i in validate_template(doc)] == ["persona.values"]


def test_unknown_key_does_not_fail_mint_validate_but_a_schema_error_still_does(tmp_path):
    path = write_fixture(tmp_path, "legacy")
    doc = json5.loads(path.read_text())
    doc["version"] = "0.1"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(mint, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"invalid: {path}: version: must be a semantic version" in result.stderr
    assert f"warning: {path}: persona.tone: unknown key, kept but not used" in result.stderr


def test_enriched_copy_keeps_unknown_keys(tmp_path):
    from harness.mint.enrich import enrich_template
    from harness.models.providers.types import ChatResponse, Usage

    enrichment = {"summary": "Restart services in dependency order.", "key_concepts": ["order"], "use_cases": [],
                  "relevant_for_tasks": ["hotfix"], "code_patterns": [], "relevance_to_specialist": "Runbook."}

    def chat(request):
        return ChatResponse(text=json.dumps(enrichment), tool_calls=[], usage=Usage(), model="m",
                            stop_reason="end_turn", latency_ms=1.0, cost_usd=None)

    sp = load_specialist(write_fixture(tmp_path, "legacy"))
    result = enrich_template(sp, chat, "m", force=True, now=lambda: "2026-01-01T00:00:00Z")
    assert result.path == tmp_path / "legacy-specialist" / "enriched" / "0.1.0" / "enriched-001.json5"
    written = json5.loads(result.path.read_text())
    assert written["spawnable_sub-agent_specialists"] == sp.template["spawnable_sub-agent_specialists"]
    assert written["persona"]["tone"] == "calm"
    # The re-done enrichment replaces the old one as a whole, with its stale stamps.
    assert written["documentation"][0]["enrichment"] == {**enrichment, "enriched_at": "2026-01-01T00:00:00Z",
                                                         "model_used": "m"}
    again = load_specialist(tmp_path / "legacy-specialist.jsonc")
    assert again.source == result.path
    assert list(again.warnings) == [f"{result.path}: {w}" for w in LEGACY_WARNINGS if "enrichment." not in w]
    assert "Summary: Restart services in dependency order." in again.system_prompt("gpt-4o")


def test_snapshot_of_an_original_template_validates_strictly_and_leaves_unknown_keys_out(tmp_path):
    db = tmp_path / "bench.db"
    with open_client(db_path=str(db)) as client:
        client.post_batch(BatchRecord(batch_id="cmp"))
        for i, (spec, score) in enumerate([(False, 0.2), (False, 0.3), (True, 0.9), (True, 1.0)]):
            client.post_run(RunRecord(
                run_id=f"run_{i}", batch_id="cmp", suite="ops", scenario="restart", tier="L1", agent="echo",
                total_score=score, is_successful=score >= 0.7, specialist_enabled=spec,
                specialist_name="legacy-specialist" if spec else None, specialist_version="0.1.0" if spec else None,
                metadata={"iteration": i % 2}, evaluations=[EvaluationRecord("validation", score)]))
    sp = load_specialist(write_fixture(tmp_path, "legacy"))
    with open_client(db_path=str(db)) as client:
        result = mint_snapshot(sp, "cmp", tmp_path / "snapshots", client)
    snapshot = json5.loads(result.path.read_text())
    assert validate_snapshot(snapshot) == []
    assert validate("template", {k: v for k, v in snapshot.items()}) == []
    assert "spawnable_sub-agent_specialists" not in snapshot and "tone" not in snapshot["persona"]
    assert snapshot["prompts"]["hotfix"] == {"default": {"systemPrompt": "Patch, test, ship."}}
    assert result.left_out == [w.split(":", 1)[0] for w in LEGACY_WARNINGS]
    # The CLI says so, one line per key.
    cli = CliRunner().invoke(mint, ["snapshot", str(sp.source), "--batch-id", "cmp", "--db", str(db),
                                    "--output", str(tmp_path / "snapshots"), "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["left_out_keys"] == result.left_out
    assert f"warning: {sp.source}: persona.tone: unknown key, left out of the snapshot" in cli.stderr


@pytest.mark.parametrize("key", [k for k in FIXTURES if k != "legacy"])
def test_snapshots_of_the_other_originals_keep_every_key(tmp_path, key):
    from harness.mint.snapshot import build_snapshot

    sp = load_specialist(write_fixture(tmp_path, key))
    snapshot, _ = build_snapshot(sp, BatchRecord(batch_id="b"), [], created_at="2026-01-01T00:00:00Z")
    assert {k: v for k, v in snapshot.items() if k not in ("benchmarks", "snapshot_metadata")} == {
        k: v for k, v in sp.template.items() if k not in ("$schema", "benchmarks", "snapshot_metadata")}
    assert validate_template(snapshot, strict=True) == []


# --------------------------------------------------------------------------- documentation files


def test_missing_documentation_path_is_an_error_naming_file_and_entry(tmp_path):
    path = write_fixture(tmp_path, "qa-backend")
    (tmp_path / "docs" / "fixtures.md").unlink()
    result = CliRunner().invoke(mint, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"invalid: {path}: documentation[1].path: no such file: {tmp_path / 'docs' / 'fixtures.md'}"]
    assert result.stdout == ""


def test_missing_file_url_is_an_error_and_http_urls_are_not_fetched(tmp_path):
    path = write_fixture(tmp_path, "qa-backend")
    (tmp_path / "shared" / "checklist.md").unlink()
    doc = json.loads(path.read_text())
    doc["documentation"].append({"type": "official", "description": "Web", "url": "https://docs.example.org/x"})
    path.write_text(json.dumps(doc))
    with respx.mock(assert_all_mocked=True):  # any request would fail the test
        result = CliRunner().invoke(mint, ["validate", str(path), "--json"])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert report["files"][0]["issues"] == [
        {"field": "documentation[0].url", "message": f"no such file: {tmp_path / 'shared' / 'checklist.md'}"}]


def test_documentation_path_that_is_a_directory_is_an_error(tmp_path):
    path = write_fixture(tmp_path, "shadcn")
    (tmp_path / "docs" / "shadcn-cli.md").unlink()
    (tmp_path / "docs" / "shadcn-cli.md").mkdir()
    result = CliRunner().invoke(mint, ["validate", str(path)])
    assert result.exit_code == 2
    assert "documentation[0].path: is a directory, not a file:" in result.stderr


def test_documentation_of_an_enriched_copy_resolves_from_the_base_directory(tmp_path):
    path = write_fixture(tmp_path, "shadcn")
    family = tmp_path / "shadcn-specialist-template" / "enriched" / "1.2.0"
    family.mkdir(parents=True)
    enriched = family / "enriched-001.json5"
    enriched.write_text(path.read_text())
    by_name = CliRunner().invoke(mint, ["validate", "@zephyr-cloud/shadcn-specialist"])
    assert by_name.exit_code == 0, by_name.output
    assert by_name.stdout == f"valid: {enriched} (@zephyr-cloud/shadcn-specialist 1.2.0)\n"
    (tmp_path / "docs" / "shadcn-cli.md").unlink()
    both = CliRunner().invoke(mint, ["validate", str(path)])  # the base file and the copy it resolves to
    assert both.exit_code == 2
    assert both.stderr.splitlines() == [
        f"invalid: {path}: documentation[0].path: no such file: {tmp_path / 'docs' / 'shadcn-cli.md'}",
        f"invalid: {enriched}: documentation[0].path: no such file: {tmp_path / 'docs' / 'shadcn-cli.md'}"]
