"""mint enrich: documentation fetched (respx for URLs), the model mocked at the HTTP layer."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import json5
import pytest
import respx

from harness.mint.documents import html_to_text
from harness.mint.enrich import enrich_template, parse_enrichment, InvalidEnrichment
from harness.models.providers import ResponseCache, RetryPolicy, get_provider
from harness.specialists import load_specialist, resolve_template

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
DOC_URL = "https://docs.example.org/guide.html"

GOOD = {
    "summary": "How to write regression tests first.",
    "key_concepts": ["regression test", "fixtures"],
    "use_cases": ["bug fixing"],
    "relevant_for_tasks": ["py-bugs"],
    "code_patterns": ["pytest -q"],
    "relevance_to_specialist": "It is the specialist's method.",
}


def anthropic_reply(text: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 300, "output_tokens": 80},
    })


def _prompt_of(request: httpx.Request) -> str:
    body = json.loads(request.content)
    return "\n".join(
        block["text"] if isinstance(block, dict) else str(block)
        for m in body["messages"]
        for block in (m["content"] if isinstance(m["content"], list) else [m["content"]])
        if not isinstance(block, dict) or block.get("type") == "text"
    )


@pytest.fixture
def chat(tmp_path):
    provider = get_provider("anthropic", api_key="test-key", cache=ResponseCache(tmp_path / "cache"),
                            retry=RetryPolicy(max_attempts=2, sleep=lambda s: None))
    return lambda request: provider.chat(request, use_cache=False)


def _make_template(tmp_path: Path, docs: list[dict]) -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "testing.md").write_text("# Testing\nWrite the failing test first. MARKER-LOCAL-DOC\n")
    doc = {
        "$schema": "../harness/schemas/template.schema.json",
        "schema_version": "0.0.1", "name": "py-fixer", "version": "1.0.0",
        "persona": {"purpose": "Fix Python bugs.", "tech_stack": ["Python"]},
        "documentation": docs,
        "prompts": {"default": {"systemPrompt": "x"}, "py-bugs": {"default": {"systemPrompt": "y"}}},
    }
    path = tmp_path / "py-fixer.json5"
    path.write_text(json.dumps(doc))
    return path


LOCAL = {"type": "guide", "description": "Testing guide", "path": "docs/testing.md"}
REMOTE = {"type": "web", "description": "Web guide", "url": DOC_URL}


@respx.mock
def test_enrich_success_writes_next_enriched_template(tmp_path, chat):
    respx.get(DOC_URL).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/html"},
        html="<html><head><style>p{}</style><script>var x=1</script></head>"
             "<body><nav>menu</nav><h1>Guide</h1><p>Remote MARKER-REMOTE text</p></body></html>"))
    model = respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(GOOD)))
    sp = load_specialist(_make_template(tmp_path, [LOCAL, REMOTE]))
    result = enrich_template(sp, chat, "claude-haiku-4-5", now=lambda: "2026-01-01T00:00:00Z")
    assert [o.status for o in result.outcomes] == ["enriched", "enriched"]
    assert result.path == tmp_path / "py-fixer" / "enriched" / "1.0.0" / "enriched-001.json5"
    prompts = sorted(_prompt_of(call.request) for call in model.calls)
    assert any("MARKER-LOCAL-DOC" in p for p in prompts)
    remote_prompt = next(p for p in prompts if "MARKER-REMOTE" in p)
    assert "<p>" not in remote_prompt and "var x=1" not in remote_prompt and "menu" not in remote_prompt
    written = json5.loads(result.path.read_text())
    enrichment = written["documentation"][0]["enrichment"]
    assert enrichment == {**GOOD, "enriched_at": "2026-01-01T00:00:00Z", "model_used": "claude-haiku-4-5"}
    assert written["$schema"] == "../../../../harness/schemas/template.schema.json"
    # Resolution now picks the enriched copy, and the documentation path still resolves.
    assert resolve_template(tmp_path / "py-fixer.json5").path == result.path
    again = load_specialist(tmp_path / "py-fixer.json5")
    assert (again.base_dir / again.template["documentation"][0]["path"]).is_file()
    assert "How to write regression tests first." in again.system_prompt("claude-haiku-4-5")


@respx.mock
def test_invalid_json_is_retried_once_with_the_reason(tmp_path, chat):
    model = respx.post(ANTHROPIC_URL).mock(side_effect=[
        anthropic_reply("Sure! Here is the summary: {summary: oops"),
        anthropic_reply("```json\n" + json.dumps(GOOD) + "\n```"),
    ])
    sp = load_specialist(_make_template(tmp_path, [LOCAL]))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert result.outcomes[0].status == "enriched" and result.outcomes[0].attempts == 2
    retry_body = json.loads(model.calls[1].request.content)
    assert len(retry_body["messages"]) == 3
    assert "not usable" in _prompt_of(model.calls[1].request)
    assert json5.loads(result.path.read_text())["documentation"][0]["enrichment"]["summary"] == GOOD["summary"]


@respx.mock
def test_invalid_json_twice_fails_the_document_and_writes_nothing(tmp_path, chat):
    respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply("no json here"))
    sp = load_specialist(_make_template(tmp_path, [LOCAL]))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert result.outcomes[0].status == "failed"
    assert "after one retry" in result.outcomes[0].error
    assert result.path is None
    assert not (tmp_path / "py-fixer" / "enriched").exists()


@respx.mock
def test_404_document_fails_alone_and_others_are_written(tmp_path, chat):
    respx.get(DOC_URL).mock(return_value=httpx.Response(404, text="not found"))
    respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(GOOD)))
    sp = load_specialist(_make_template(tmp_path, [LOCAL, REMOTE]))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert [o.status for o in result.outcomes] == ["enriched", "failed"]
    assert "HTTP 404" in result.failed[0].error
    written = json5.loads(result.path.read_text())
    assert "enrichment" in written["documentation"][0]
    assert "enrichment" not in written["documentation"][1]  # the failed entry stays unenriched


@respx.mock
def test_document_timeout_is_reported(tmp_path, chat):
    respx.get(DOC_URL).mock(side_effect=httpx.ReadTimeout("slow"))
    respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(GOOD)))
    sp = load_specialist(_make_template(tmp_path, [REMOTE]))
    result = enrich_template(sp, chat, "claude-haiku-4-5", timeout_s=2)
    assert result.outcomes[0].status == "failed"
    assert "timed out after 2s" in result.outcomes[0].error
    assert result.path is None


@respx.mock
def test_missing_local_file_is_reported(tmp_path, chat):
    sp = load_specialist(_make_template(tmp_path, [{"type": "g", "description": "gone", "path": "docs/absent.md"}]))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert result.outcomes[0].status == "failed" and "file not found" in result.outcomes[0].error


@respx.mock
def test_file_url_is_read(tmp_path, chat):
    respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(GOOD)))
    target = tmp_path / "page.html"
    target.write_text("<html><body><p>FILE-URL-MARKER</p></body></html>")
    sp = load_specialist(_make_template(tmp_path, [{"type": "f", "description": "f", "url": target.as_uri()}]))
    result = enrich_template(sp, chat, "claude-haiku-4-5")
    assert result.outcomes[0].status == "enriched"


@respx.mock
def test_concurrency_never_exceeds_the_limit(tmp_path, chat):
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow_model(request: httpx.Request) -> httpx.Response:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)  # hold the slot so that overlapping requests would be seen
        with lock:
            state["now"] -= 1
        return anthropic_reply(json.dumps(GOOD))

    respx.post(ANTHROPIC_URL).mock(side_effect=slow_model)
    docs = []
    for i in range(7):
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / f"d{i}.md").write_text(f"doc {i}")
        docs.append({"type": "g", "description": f"doc {i}", "path": f"docs/d{i}.md"})
    sp = load_specialist(_make_template(tmp_path, docs))
    seen: list[int] = []
    result = enrich_template(sp, chat, "claude-haiku-4-5", concurrency=2, on_done=lambda o: seen.append(o.index))
    assert result.count("enriched") == 7
    assert sorted(seen) == list(range(7))
    assert state["max"] <= 2
    assert state["max"] == 2  # the pool really runs two at a time


@respx.mock
def test_already_enriched_entries_are_skipped_unless_forced(tmp_path, chat):
    model = respx.post(ANTHROPIC_URL).mock(return_value=anthropic_reply(json.dumps(GOOD)))
    sp = load_specialist(_make_template(tmp_path, [LOCAL]))
    first = enrich_template(sp, chat, "m")
    assert first.path.name == "enriched-001.json5"
    enriched = load_specialist(tmp_path / "py-fixer.json5")
    skipped = enrich_template(enriched, chat, "m")
    assert [o.status for o in skipped.outcomes] == ["skipped"] and skipped.path is None
    assert model.call_count == 1
    forced = enrich_template(enriched, chat, "m", force=True)
    assert forced.path.name == "enriched-002.json5" and model.call_count == 2


def test_parse_enrichment_rejects_wrong_shapes():
    with pytest.raises(InvalidEnrichment, match="summary"):
        parse_enrichment(json.dumps({"key_concepts": []}))
    with pytest.raises(InvalidEnrichment, match="not a list"):
        parse_enrichment(json.dumps({"summary": "s", "use_cases": 3}))
    assert parse_enrichment('Here: {"summary": "s", "use_cases": "one"} thanks')["use_cases"] == ["one"]


def test_html_to_text_keeps_text_and_code_layout():
    text = html_to_text("<h1>T</h1><p>a &amp; b</p><pre>def f():\n    return 1</pre><ul><li>x</li></ul>")
    assert "a & b" in text and "def f():\n    return 1" in text and "- x" in text and "<" not in text


@respx.mock
def test_remote_document_is_cut_at_the_size_cap():
    from harness.mint.documents import fetch_document

    respx.get(DOC_URL).mock(return_value=httpx.Response(200, headers={"content-type": "text/plain"},
                                                        content=b"x" * 10_000))
    with httpx.Client() as client:
        doc = fetch_document({"url": DOC_URL}, Path("."), client, max_bytes=1000)
    assert doc.truncated and len(doc.text) == 1000
