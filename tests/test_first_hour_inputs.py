"""Inputs of a first hour: an enrichment that only echoes the requested shape (item 5), and a
manifest of the original fleet format with descriptive metadata (item 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import json5
import pytest
import respx
import yaml
from click.testing import CliRunner

from harness.cli.mint import main as mint
from harness.fleet import ManifestError, load_manifest
from harness.fleet.manifest import parse_manifest
from harness.mint.enrich import enrich_template
from harness.models.providers import ResponseCache, RetryPolicy, get_provider
from harness.specialists import load_specialist, resolve_template

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
BENCH = os.path.join(os.path.dirname(sys.executable), "bench")

# The shape the enrichment prompt asks for, echoed back as it is written there.
ECHOED = {
    "summary": "one or two sentences", "key_concepts": ["..."], "use_cases": ["..."],
    "relevant_for_tasks": ["task names from the list above, or short task descriptions"],
    "code_patterns": ["short code idioms or commands worth reusing"],
    "relevance_to_specialist": "how this helps the specialist do its job",
}
GOOD = {
    "summary": "Write the failing regression test before the fix.",
    "key_concepts": ["regression test", "fixtures"], "use_cases": ["bug fixing"],
    "relevant_for_tasks": ["py-bugs"], "code_patterns": ["pytest -q -x"],
    "relevance_to_specialist": "It is the specialist's method.",
}


def anthropic_reply(text: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 300, "output_tokens": 80},
    })


def _template(tmp_path: Path, names: tuple[str, ...] = ("guide",)) -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    docs = []
    for name in names:
        (tmp_path / "docs" / f"{name}.md").write_text(f"# {name}\nDOC-{name.upper()}: write the test first.\n")
        docs.append({"type": "guide", "description": name, "path": f"docs/{name}.md"})
    path = tmp_path / "fixer.json5"
    path.write_text(json.dumps({"schema_version": "0.0.1", "name": "@acme/fixer", "version": "2.0.0",
                                "persona": {"purpose": "Fix bugs."}, "documentation": docs,
                                "prompts": {"default": {"systemPrompt": "Fix it."}}}))
    return path


@pytest.fixture
def chat(tmp_path):
    provider = get_provider("anthropic", api_key="test-key", cache=ResponseCache(tmp_path / "cache"),
                            retry=RetryPolicy(max_attempts=2, sleep=lambda s: None))
    return lambda request: provider.chat(request, use_cache=False)


# --------------------------------------------------------------------------- item 5


@respx.mock
def test_item5_an_answer_echoing_the_requested_shape_fails_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(ECHOED)))
    path = _template(tmp_path)
    result = CliRunner().invoke(mint, ["enrich", str(path), "--json", "--no-cache"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert (report["enriched"], report["failed"], report["path"]) == (0, 1, None)
    error = report["documents"][0]["error"]
    assert "repeats the placeholders of the requested shape" in error and "summary" in error
    assert "after one retry" in error and model.call_count == 2  # retried once with the reason
    assert not (tmp_path / "fixer" / "enriched").exists()
    # The specialist still resolves to its template, and no placeholder enters its system prompt.
    assert resolve_template(path).path == path
    prompt = load_specialist(path).system_prompt("claude-haiku-4-5")
    assert "one or two sentences" not in prompt and "how this helps the specialist" not in prompt

    plain = CliRunner().invoke(mint, ["enrich", str(path), "--no-cache"])
    assert plain.exit_code == 1
    assert "failed: documentation[0] docs/guide.md: the answer repeats the placeholders" in plain.stderr
    assert "failed: 1" in plain.stdout


@respx.mock
def test_item5_placeholder_fields_fail_their_entry_only(tmp_path, chat):
    partly = {**GOOD, "key_concepts": ["...", "…"], "code_patterns": ["Short code idioms or commands worth reusing."],
              "use_cases": ["", " "]}

    def answer(request: httpx.Request) -> httpx.Response:
        prompt = json.dumps(json.loads(request.content)["messages"])
        return anthropic_reply(json.dumps(partly if "DOC-ECHO" in prompt else GOOD))

    respx.post(ANTHROPIC_URL).mock(side_effect=answer)
    sp = load_specialist(_template(tmp_path, ("echo", "real")))
    result = enrich_template(sp, chat, "claude-haiku-4-5", now=lambda: "2026-01-01T00:00:00Z")
    assert [o.status for o in result.outcomes] == ["failed", "enriched"]
    error = result.outcomes[0].error
    assert "(key_concepts, use_cases, code_patterns)" in error and "summary" not in error
    written = json5.loads(result.path.read_text())
    assert "enrichment" not in written["documentation"][0]  # never written
    assert written["documentation"][1]["enrichment"]["summary"] == GOOD["summary"]


@respx.mock
def test_item5_a_field_equal_to_a_placeholder_or_an_ellipsis_is_refused(tmp_path, chat):
    for echoed in ({**GOOD, "summary": "One or two sentences."}, {**GOOD, "summary": "..."},
                   {**GOOD, "relevance_to_specialist": "how this helps the specialist do its job"},
                   {**GOOD, "relevant_for_tasks": ["task names from the list above, or short task descriptions"]}):
        respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(echoed)))
        sp = load_specialist(_template(tmp_path))
        result = enrich_template(sp, chat, "claude-haiku-4-5")
        assert result.outcomes[0].status == "failed", echoed
        assert "placeholders" in result.outcomes[0].error and result.path is None


@respx.mock
def test_item5_a_retry_that_fills_the_shape_in_is_kept_without_stray_ellipses(tmp_path, chat):
    model = respx.post(ANTHROPIC_URL).mock(side_effect=[
        anthropic_reply(json.dumps(ECHOED)),
        anthropic_reply(json.dumps({**GOOD, "key_concepts": ["regression test", "..."]})),
    ])
    sp = load_specialist(_template(tmp_path))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert result.outcomes[0].status == "enriched" and result.outcomes[0].attempts == 2
    assert "placeholders" in json.dumps(json.loads(model.calls[1].request.content)["messages"])
    enrichment = json5.loads(result.path.read_text())["documentation"][0]["enrichment"]
    assert enrichment["key_concepts"] == ["regression test"]


# --------------------------------------------------------------------------- item 7

DATASET = {"name": "enterprise-tasks", "test_cases": [
    {"id": f"q{i}", "prompt": f"Question {i}?", "assert": [{"type": "contains", "value": str(i)}]} for i in range(3)]}


def _original_manifest(tmp_path: Path, profile_extra: dict | None = None) -> Path:
    (tmp_path / "repo" / "datasets").mkdir(parents=True, exist_ok=True)
    (tmp_path / "repo" / "datasets" / "enterprise-tasks.json").write_text(json.dumps(DATASET))
    profile = {"dataset": "enterprise-tasks.json", "concurrency": 2,
               "metadata": {"domain": "enterprise", "owner": "platform-team", "tags": ["coding", "java"]}}
    profile.update(profile_extra or {})
    doc = {"fleet_id": "enterprise-fleet", "version": "1.0", "description": "Enterprise coding benchmark",
           "metadata": {"owner": "evals", "created": "2025-10-01"},
           "repositories": [{"repo_id": "billing", "path": "repo", "adapter": "native",
                             "scenarios": ["enterprise-coding"], "metadata": {"team": "billing"}}],
           "providers": ["openai:gpt-4o-mini"],
           "scenario_profiles": {"enterprise-coding": profile}}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _bench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BENCH, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OPENAI_API_KEY": ""})


def test_item7_an_original_manifest_with_metadata_validates_and_keeps_it(tmp_path):
    path = _original_manifest(tmp_path)
    done = _bench("fleet", "validate", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "valid (1 repositories × 1 providers; 1 cells, 3 tests" in done.stdout
    manifest = load_manifest(path)
    assert manifest.metadata == {"owner": "evals", "created": "2025-10-01"}
    assert manifest.profiles["enterprise-coding"].metadata["owner"] == "platform-team"
    assert manifest.normalized["metadata"] == manifest.metadata
    assert manifest.normalized["scenario_profiles"]["enterprise-coding"]["metadata"]["domain"] == "enterprise"
    # The normalised manifest (what a run saves and resume reads) is itself a valid manifest.
    again = parse_manifest(manifest.normalized, root=tmp_path)
    assert again.hash == manifest.hash and again.profiles["enterprise-coding"].metadata == \
        manifest.profiles["enterprise-coding"].metadata


def test_item7_metadata_left_out_or_empty_does_not_change_the_hash(tmp_path):
    doc = {"fleet_id": "f", "repositories": [{"repo_id": "r", "path": "."}], "providers": ["openai:gpt-4o-mini"],
           "scenario_profiles": {"reasoning": {"dataset": "reasoning"}}}
    bare = parse_manifest(doc, root=tmp_path)
    assert "metadata" not in bare.normalized
    assert "metadata" not in bare.normalized["scenario_profiles"]["reasoning"]
    empty = parse_manifest({**doc, "metadata": {}, "scenario_profiles": {"reasoning": {"dataset": "reasoning",
                                                                                      "metadata": {}}}},
                           root=tmp_path)
    assert empty.hash == bare.hash
    assert parse_manifest({**doc, "metadata": {"owner": "x"}}, root=tmp_path).hash != bare.hash


def test_item7_a_misspelled_profile_key_is_named_not_not_both(tmp_path):
    path = _original_manifest(tmp_path, {"metadataa": {"domain": "enterprise"}})
    done = _bench("fleet", "validate", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert "scenario_profiles.enterprise-coding: unknown key 'metadataa' (did you mean 'metadata'?)" in done.stderr
    assert "not both" not in done.stderr
    # The rule the x-error words is still reported in its words, beside the real error.
    with pytest.raises(ManifestError) as info:
        parse_manifest({"fleet_id": "f", "repositories": [{"repo_id": "r", "path": "."}],
                        "providers": ["openai:gpt-4o-mini"],
                        "scenario_profiles": {"p": {"dataset": "a", "suite": "b", "descripton": "x"}}})
    assert set(info.value.problems) == {"scenario_profiles.p: names a dataset or a suite, not both",
                                        "scenario_profiles.p: unknown key 'descripton' (did you mean 'description'?)"}


def test_item7_a_repository_with_an_unknown_key_is_not_told_it_lacks_a_path(tmp_path):
    with pytest.raises(ManifestError) as info:
        parse_manifest({"fleet_id": "f", "repositories": [{"repo_id": "r", "path": ".", "metdata": {}}],
                        "providers": ["openai:gpt-4o-mini"], "metdata": {}})
    assert set(info.value.problems) == {
        "repositories[0]: unknown key 'metdata' (did you mean 'metadata'?)",
        "(top level): unknown key 'metdata' (did you mean 'metadata'?)"}
    with pytest.raises(ManifestError) as info:
        parse_manifest({"fleet_id": "f", "repositories": [{"repo_id": "r"}], "providers": ["openai:gpt-4o-mini"]})
    assert info.value.problems == ["repositories[0]: needs a path (a local directory) or a git_url"]


def test_item7_an_x_error_words_only_the_keyword_it_describes():
    from harness._util.jsonschemas import validate, x_error_keyword

    assert x_error_keyword({"not": {}, "additionalProperties": False, "x-error": "e"}) == "not"
    assert x_error_keyword({"additionalProperties": False, "x-error": "e"}) == "additionalProperties"
    assert x_error_keyword({"additionalProperties": False}) is None
    # A template's task block words its unknown keys itself (its only rule).
    template = {"schema_version": "0.0.1", "name": "x", "version": "1.0.0", "persona": {"purpose": "p"},
                "prompts": {"fix": {"default": {"systemPrompt": "s"}, "other": {}}}}
    assert any(i.message == "a task prompt has only 'default' and 'model_specific'" for i in validate("template", template))


def test_item7_the_quick_check_with_metadata_is_never_laxer_than_the_schema():
    from harness.fleet.manifest_checks import _plain_top
    from harness._util.jsonschemas import validate

    for value in (None, "", "x", 1, [], ["a"], {}, {"owner": "x"}, {"nested": {"a": [1]}}):
        for doc in ({"metadata": value}, {"scenario_profiles": {"p": {"dataset": "d", "metadata": value}}}):
            manifest = {"fleet_id": "f", "repositories": [{"repo_id": "r", "path": "."}],
                        "providers": ["openai:gpt-4o-mini"], **doc}
            issues = validate("fleet", manifest)
            if isinstance(value, dict):  # any mapping is accepted, by both checks
                assert _plain_top(manifest) and issues == [], doc
            else:
                assert not _plain_top(manifest) and [str(i) for i in issues] == [
                    f"{'metadata' if 'metadata' in doc else 'scenario_profiles.p.metadata'}: "
                    f"{value!r} is not of type 'object'"], doc
