"""Specialist templates: schema validation, resolution order, preferred models, system prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import specialists
from harness.cli.mint import main as mint_main
from harness.specialists import TemplateError, load_specialist, resolve_template
from support.specialists import SHIPPED_TEMPLATES, copy_shipped_templates

REPO = Path(__file__).resolve().parents[1]


def _template(**over):
    doc = {
        "$schema": "../harness/schemas/template.schema.json",
        "schema_version": "0.0.1",
        "name": "@acme/py-fixer",
        "displayName": "Py Fixer",
        "version": "1.0.0",
        "persona": {"purpose": "Fix Python bugs with tests first.", "values": ["Reproduce first"],
                    "attributes": ["careful"], "tech_stack": ["Python", "pytest"]},
        "capabilities": {"tags": ["python", "testing"], "descriptions": {"bugfix": "Finds root causes"},
                         "considerations": ["Run the tests"]},
        "documentation": [{"type": "guide", "description": "Pytest guide", "path": "docs/pytest.md"}],
        "preferred_models": [{"model": "claude-sonnet-4-5", "agent": "anthropic", "weight": 1}],
        "prompts": {
            "default": {"systemPrompt": "GENERAL PROMPT"},
            "py-bugs": {
                "default": {"systemPrompt": "BUGFIX PROMPT"},
                "model_specific": {"gpt-4o": {"systemPrompt": "GPT BUGFIX PROMPT"}},
            },
        },
    }
    doc.update(over)
    return doc


def _write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_valid_template_has_no_issues():
    assert specialists.validate_template(_template()) == []


def test_missing_persona_is_rejected_naming_the_field(tmp_path):
    doc = _template()
    del doc["persona"]
    path = _write(tmp_path / "t.json5", doc)
    with pytest.raises(TemplateError) as err:
        specialists.load_template(path)
    assert str(path) in str(err.value)
    assert [i.field for i in err.value.issues] == ["persona"]


def test_missing_persona_purpose_names_nested_field():
    doc = _template(persona={"values": ["x"]})
    assert [i.field for i in specialists.validate_template(doc)] == ["persona.purpose"]


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "1.0.0.0", "01.0.0", ""])
def test_bad_semver_is_rejected_naming_version(version):
    issues = specialists.validate_template(_template(version=version))
    assert [i.field for i in issues] == ["version"]
    assert "semantic version" in issues[0].message


@pytest.mark.parametrize("version", ["0.0.1", "1.2.3-beta.1", "10.20.30+build.7"])
def test_good_semver_is_accepted(version):
    assert specialists.validate_template(_template(version=version)) == []


def test_documentation_with_both_url_and_path_is_rejected_with_its_index():
    docs = [
        {"type": "a", "description": "ok", "path": "a.md"},
        {"type": "b", "description": "ok", "url": "https://example.org/x"},
        {"type": "c", "description": "both", "url": "https://example.org/y", "path": "y.md"},
    ]
    issues = specialists.validate_template(_template(documentation=docs))
    assert [i.field for i in issues] == ["documentation[2]"]
    assert "exactly one of 'url' or 'path'" in issues[0].message


def test_documentation_with_neither_url_nor_path_is_rejected():
    issues = specialists.validate_template(_template(documentation=[{"type": "a", "description": "d"}]))
    assert [i.field for i in issues] == ["documentation[0]"]


def test_unknown_top_level_key_is_a_warning_kept_in_the_template(tmp_path):
    doc = _template(persona_typo={"x": 1})
    assert specialists.validate_template(doc) == []
    assert specialists.unknown_template_keys(doc) == [("persona_typo", " (did you mean 'persona'?)")]
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", doc))
    assert sp.template["persona_typo"] == {"x": 1}
    assert sp.warnings == (f"{tmp_path / 'py-fixer.json5'}: persona_typo: unknown key, kept but not used "
                           "(did you mean 'persona'?)",)
    # Checked as a snapshot is, the schema itself still refuses it.
    strict = specialists.validate_template(doc, strict=True)
    assert strict and "persona_typo" in strict[0].message


def test_bad_name_is_rejected():
    assert [i.field for i in specialists.validate_template(_template(name="My Specialist"))] == ["name"]


def test_json5_syntax_error_names_the_file(tmp_path):
    path = tmp_path / "broken.json5"
    path.write_text("{ name: 'x', ", encoding="utf-8")
    with pytest.raises(TemplateError, match="broken.json5: not valid JSON5"):
        specialists.load_template(path)


def test_resolution_prefers_highest_enriched_then_versioned_then_base(tmp_path):
    base = _write(tmp_path / "py-fixer.json5", _template())
    assert resolve_template(base).path == base
    assert resolve_template(base).kind == "base"
    versioned = _write(tmp_path / "py-fixer" / "1.0.0" / "py-fixer.json5", _template(displayName="V"))
    assert resolve_template(base).path == versioned
    e1 = _write(tmp_path / "py-fixer" / "enriched" / "1.0.0" / "enriched-001.json5", _template())
    e2 = _write(tmp_path / "py-fixer" / "enriched" / "1.0.0" / "enriched-002.json5", _template())
    _write(tmp_path / "py-fixer" / "enriched" / "0.9.0" / "enriched-009.json5", _template())
    resolved = resolve_template(base)
    assert resolved.path == e2 and resolved.kind == "enriched"
    assert resolved.base_dir == tmp_path
    # An explicit path into the family is used as given.
    assert resolve_template(e1).path == e1 and resolve_template(e1).kind == "explicit"
    assert resolve_template(e1).base_dir == tmp_path


def test_resolution_uses_the_base_templates_version_for_enriched_copies(tmp_path):
    base = _write(tmp_path / "py-fixer.json5", _template(version="2.0.0"))
    _write(tmp_path / "py-fixer" / "enriched" / "1.0.0" / "enriched-001.json5", _template())
    assert resolve_template(base).path == base


def test_bare_and_scoped_names_resolve_in_templates_dir(tmp_path):
    _write(tmp_path / "py-fixer.json5", _template())
    e1 = _write(tmp_path / "py-fixer" / "enriched" / "1.0.0" / "enriched-001.json5", _template())
    assert resolve_template("py-fixer", tmp_path).path == e1
    assert resolve_template("@acme/py-fixer", tmp_path).path == e1
    with pytest.raises(TemplateError, match="no specialist template named '@other/py-fixer'"):
        resolve_template("@other/py-fixer", tmp_path)


def test_name_lookup_finds_a_template_whose_file_is_named_differently(tmp_path):
    path = _write(tmp_path / "fixer-template.json5", _template())
    assert resolve_template("@acme/py-fixer", tmp_path).path == path


def test_unknown_name_lists_available_templates(tmp_path):
    _write(tmp_path / "py-fixer.json5", _template())
    with pytest.raises(TemplateError, match=r"available: py-fixer"):
        resolve_template("nope", tmp_path)


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(TemplateError, match="file not found"):
        resolve_template(tmp_path / "absent.json5")


@pytest.mark.parametrize("entry,agent,model", [
    ({"model": "claude-sonnet-4-5", "agent": "anthropic"}, "anthropic", "claude-sonnet-4-5"),
    ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
    ("anthropic/claude-3.5-sonnet", "openrouter", "anthropic/claude-3.5-sonnet"),
    ("claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest"),
    ("gpt-4o", "openai", "gpt-4o"),
    ("o3-mini", "openai", "o3-mini"),
    ({"model": "mystery-model"}, None, "mystery-model"),
])
def test_preferred_model_picks_agent_and_model(entry, agent, model):
    pm = specialists.parse_preferred_model(entry)
    assert (pm.agent, pm.model) == (agent, model)


def test_specialist_exposes_first_preferred_model(tmp_path):
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    assert (sp.name, sp.version) == ("@acme/py-fixer", "1.0.0")
    assert (sp.preferred_agent, sp.preferred_model) == ("anthropic", "claude-sonnet-4-5")


def test_system_prompt_uses_model_specific_then_task_default_then_general(tmp_path):
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    assert "GPT BUGFIX PROMPT" in sp.system_prompt("gpt-4o", task="py-bugs")
    assert "GPT BUGFIX PROMPT" in sp.system_prompt("openai:gpt-4o", task="py-bugs")
    with_task = sp.system_prompt("claude-sonnet-4-5", task="py-bugs")
    assert "BUGFIX PROMPT" in with_task and "GPT" not in with_task
    assert "GENERAL PROMPT" in sp.system_prompt("claude-sonnet-4-5")
    assert "GENERAL PROMPT" in sp.system_prompt("claude-sonnet-4-5", task="unknown-task")
    bound = sp.with_task("py-bugs")
    assert "GPT BUGFIX PROMPT" in bound.system_prompt("gpt-4o")


def test_system_prompt_contains_persona_and_is_deterministic(tmp_path):
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    text = sp.system_prompt("gpt-4o")
    assert text == sp.system_prompt("gpt-4o")
    for piece in ("Py Fixer", "Fix Python bugs with tests first.", "Reproduce first", "Python, pytest",
                  "Run the tests", "Pytest guide (docs/pytest.md)"):
        assert piece in text


def test_system_prompt_includes_enrichment_summaries(tmp_path):
    doc = _template()
    doc["documentation"][0]["enrichment"] = {
        "summary": "Use parametrize for tables of cases.",
        "key_concepts": ["fixtures", "parametrize"],
        "code_patterns": ["@pytest.mark.parametrize('a,b', [(1, 2)])"],
        "relevance_to_specialist": "Tests prove fixes.",
        "enriched_at": "2026-01-01T00:00:00Z", "model_used": "m",
    }
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", doc))
    text = sp.system_prompt(None)
    assert "Summary: Use parametrize for tables of cases." in text
    assert "fixtures; parametrize" in text
    assert "@pytest.mark.parametrize('a,b', [(1, 2)])" in text


def test_task_for_picks_first_matching_candidate(tmp_path):
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    assert sp.task_for(["unicode-slugify", "py-bugs", "python"]) == "py-bugs"
    assert sp.task_for(["nothing"]) is None


def test_the_shipped_templates_are_the_ones_documented():
    text = (REPO / "docs" / "mint.md").read_text("utf-8")
    for name in SHIPPED_TEMPLATES:
        assert f"`templates/{name}.json5`" in text, name


@pytest.mark.parametrize("name", SHIPPED_TEMPLATES)
def test_shipped_templates_are_valid(tmp_path, name):
    path = copy_shipped_templates(tmp_path / "templates") / f"{name}.json5"
    result = CliRunner().invoke(mint_main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    sp = load_specialist(path)
    assert resolve_template(path).kind == "base" and sp.warnings == ()
    assert sp.preferred_agent is not None
    assert specialists.missing_documentation(sp.template, sp.base_dir) == []
    assert sp.task_names and sp.task_prompt(sp.preferred_model, sp.task_names[0])


def test_agent_and_model_come_from_the_first_preferred_model_unless_given(tmp_path):
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    assert sp.agent_and_model(None, None) == ("anthropic", "claude-sonnet-4-5")
    assert sp.agent_and_model(None, "claude-opus-4-5") == ("anthropic", "claude-opus-4-5")
    assert sp.agent_and_model("openai", "gpt-4o") == ("openai", "gpt-4o")
    none = load_specialist(_write(tmp_path / "b" / "x.json5", _template(preferred_models=[])))
    with pytest.raises(TemplateError, match="pass --agent"):
        none.agent_and_model(None, None)


def test_for_scenario_binds_the_task_by_name_then_suite_then_tag(tmp_path):
    from types import SimpleNamespace

    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template()))
    scenario = SimpleNamespace(name="unicode-slugify", suite="py-bugs", tags=["python"])
    assert sp.for_scenario(scenario).task == "py-bugs"
    assert "BUGFIX PROMPT" in sp.for_scenario(scenario).system_prompt("claude-sonnet-4-5")
    other = SimpleNamespace(name="x", suite="node-features", tags=["node"])
    assert sp.for_scenario(other).task is None


def test_run_metadata_names_the_source_and_hashes_the_exact_prompt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sp = load_specialist(_write(tmp_path / "py-fixer.json5", _template())).with_task("py-bugs")
    meta = sp.run_metadata("gpt-4o")
    assert meta["specialistSource"] == "py-fixer.json5" and meta["specialistTask"] == "py-bugs"
    assert meta["specialistPromptSha256"] == sp.run_metadata("gpt-4o")["specialistPromptSha256"]
    assert meta["specialistPromptSha256"] != sp.run_metadata("claude-sonnet-4-5")["specialistPromptSha256"]


def test_resolution_without_a_base_file_uses_the_highest_versioned_copy(tmp_path):
    _write(tmp_path / "py-fixer" / "1.0.0" / "py-fixer.json5", _template())
    newer = _write(tmp_path / "py-fixer" / "1.10.0" / "py-fixer.json5", _template(version="1.10.0"))
    _write(tmp_path / "py-fixer" / "1.9.0" / "py-fixer.json5", _template(version="1.9.0"))
    resolved = resolve_template(tmp_path / "py-fixer.json5")
    assert resolved.path == newer and resolved.kind == "versioned"
    assert resolve_template("py-fixer", tmp_path).path == newer


def test_bare_name_of_a_broken_file_reports_the_parse_error(tmp_path):
    (tmp_path / "py-fixer.json5").write_text("{ name: ", encoding="utf-8")
    with pytest.raises(TemplateError, match="py-fixer.json5: not valid JSON5"):
        load_specialist("py-fixer", tmp_path)
