"""The proof workflow end to end: enrich, baseline batch, specialist batch, mint, mint again.

The model is the Anthropic Messages API mocked with respx, driven through the real
``anthropic`` agent, tool loop, evaluators and embedded results store. The mocked model only
knows how to fix the bug when the system prompt carries the documentation's key idioms —
which reach it only through the specialist: the documentation file is read by
``mint enrich``, whose (mocked) model lifts the idioms into ``code_patterns``, which the
specialist's system prompt includes. So the snapshot's improvement is caused by the
specialist's documentation, not by the test deciding scores.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import json5
import pytest
import respx
from click.testing import CliRunner

from support.specialists import copy_shipped_templates

REPO = Path(__file__).resolve().parents[1]
ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
MODEL = "claude-sonnet-4-6"

# What the model must find in its system prompt to know the fix, per scenario (found via the prompt).
KNOWLEDGE = {
    "pagination-off-by-one": ("pagekit", "offset = (page - 1) * per_page"),
    "date-range-merge": ("booking", "next.start <= current.end + 1"),
    "unicode-slugify": ("textkit.slugify", 'unicodedata.normalize("NFKD", s)'),
}
# Three scenarios: repeats of one scenario are clustered, and two clusters leave one degree of
# freedom, too few for a clear effect to reach p < 0.05.

pytestmark = pytest.mark.integration


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def _reply(content, stop="end_turn") -> httpx.Response:
    return httpx.Response(200, json={
        "id": "msg_e2e", "type": "message", "role": "assistant", "model": MODEL, "content": content,
        "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1200, "output_tokens": 300},
    })


class DocumentationAwareModel:
    """A stand-in for the model API whose skill depends on what its system prompt teaches."""

    def __init__(self) -> None:
        self.agent_calls = 0
        self.enrich_calls = 0
        self.solved_with_system_prompt: list[bool] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body.get("tools"):
            return self._agent(body)
        if "# How to answer" in _text_of(body["messages"][-1]["content"]):
            return self._judge(body)
        return self._enrich(body)

    def _judge(self, body) -> httpx.Response:
        # The scenario's LLM judge: a neutral 3/5 on every category, the same for both sides.
        prompt = _text_of(body["messages"][-1]["content"])
        example = json.loads(prompt[prompt.rindex("{", 0, prompt.index('"scores"')):])
        scores = {slug: {"score": 3, "reasoning": "neutral"} for slug in example["scores"]}
        return _reply([{"type": "text", "text": json.dumps({"scores": scores, "summary": "neutral"})}])

    def _enrich(self, body) -> httpx.Response:
        # Enrichment: summarise the document, lifting its inline-code idioms into code_patterns.
        self.enrich_calls += 1
        prompt = _text_of(body["messages"][-1]["content"])
        doc = prompt.split("DOCUMENTATION:\n---\n", 1)[1].rsplit("\n---\n", 1)[0]
        patterns = sorted(set(re.findall(r"`([^`\n]{6,80})`", doc)))
        title = doc.strip().splitlines()[0].lstrip("# ")
        return _reply([{"type": "text", "text": json.dumps({
            "summary": f"{title}.", "key_concepts": [], "use_cases": [], "relevant_for_tasks": ["py-bugs"],
            "code_patterns": patterns, "relevance_to_specialist": "Reference for the fixes.",
        })}])

    def _agent(self, body) -> httpx.Response:
        self.agent_calls += 1
        system = _text_of(body.get("system") or "")
        task = _text_of(body["messages"][0]["content"])
        messages = body["messages"]
        answered = any(isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
                       for m in messages)
        if answered:
            return _reply([{"type": "text", "text": "Done: the fix is written."}])
        for scenario, (package, idiom) in KNOWLEDGE.items():
            if package in task:
                break
        else:
            raise AssertionError(f"unexpected task: {task[:200]}")
        knows = idiom in system
        self.solved_with_system_prompt.append(knows)
        if not knows:
            return _reply([{"type": "text", "text": "I could not find the cause of these bugs."}])
        solution = REPO / "suites" / "py-bugs" / "scenarios" / scenario / "solution"
        calls = [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "write_file",
             "input": {"path": str(f.relative_to(solution)), "content": f.read_text()}}
            for i, f in enumerate(sorted(p for p in solution.rglob("*") if p.is_file()))
        ]
        return _reply(calls, stop="tool_use")


@pytest.fixture
def env(tmp_path, monkeypatch):
    # Only the shipped base templates and their docs: no enrichments or templates a user added.
    templates = copy_shipped_templates(tmp_path / "templates")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_TEMPLATES_DIR", str(templates))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    return tmp_path


def _bench(*args: str):
    from harness.cli.bench import main

    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_specialist_documentation_improves_the_mocked_model_and_the_snapshot_proves_it(env):
    from harness.cli.mint import main as mint

    model = DocumentationAwareModel()
    with respx.mock(assert_all_called=False) as mock:
        mock.post(ANTHROPIC_URL).mock(side_effect=model)

        enriched = CliRunner().invoke(mint, ["enrich", "python-bugfixer", "--json"])
        assert enriched.exit_code == 0, enriched.output
        assert json.loads(enriched.output)["enriched"] == 2

        for scenario in KNOWLEDGE:
            _bench("py-bugs", scenario, "--tier", "L1", "--agent", "anthropic", "--model", MODEL,
                   "--batch-id", "proof", "--iterations", "2", "--parallel", "2")
        _bench("py-bugs", "pagination-off-by-one", "--tier", "L1", "--specialist", "python-bugfixer",
               "--batch-id", "proof", "--iterations", "2", "--parallel", "2")
        _bench("py-bugs", "unicode-slugify", "--tier", "L1", "--specialist", "python-bugfixer",
               "--batch-id", "proof", "--iterations", "2", "--parallel", "2")
        integrated = _bench("py-bugs", "date-range-merge", "--tier", "L1", "--specialist", "@zebench/python-bugfixer",
                            "--batch-id", "proof", "--iterations", "2", "--parallel", "2",
                            "--mint-template", "python-bugfixer", "--mint-output", "snapshots")

    # The model solved exactly the runs whose system prompt carried the documentation.
    assert model.solved_with_system_prompt == [False] * 6 + [True] * 6
    assert "snapshot-001.json5" in integrated.output

    second = CliRunner().invoke(mint, ["snapshot", "python-bugfixer", "--batch-id", "proof", "--output", "snapshots",
                                       "--json"])
    assert second.exit_code == 0, second.output
    out = json.loads(second.output)
    assert out["path"].endswith("snapshots/python-bugfixer/1.0.0/snapshot-002.json5")

    snap = json5.loads(Path(out["path"]).read_text())
    comp = snap["benchmarks"]["comparison"]
    assert (comp["baseline_runs"], comp["specialist_runs"]) == (6, 6)
    # Same agent and model on both sides: only the specialist differs, in every pair's config parts.
    assert comp["refused"] == [] and comp["configuration"]["differing_parts"] == ["specialist"]
    assert comp["cells"] == {"paired": 6, "baseline_only": 0, "specialist_only": 0}
    # Two iterations of three scenarios: repeats, so the test clusters by scenario.
    assert comp["test"] == "cluster_paired" and (comp["paired_samples"], comp["clusters"]) == (6, 3)
    assert comp["specialist_avg_score"] > comp["baseline_avg_score"]
    assert comp["improvement"] == pytest.approx(comp["specialist_avg_score"] - comp["baseline_avg_score"], abs=1e-6)
    assert 0 < comp["ci_low"] <= comp["improvement"] <= comp["ci_high"]
    assert comp["p_value"] < 0.05 and comp["verdict"] == "specialist better"
    success = next(m for m in comp["metrics"] if m["metric"] == "success")
    assert (success["baseline_mean"], success["specialist_mean"]) == (0.0, 1.0)
    assert comp["models_compared"][0]["model"] == MODEL

    runs = snap["benchmarks"]["runs"]
    assert all(r["specialist_name"] == "@zebench/python-bugfixer" for r in runs if r["specialist_enabled"])
    assert all(r["is_successful"] for r in runs if r["specialist_enabled"])
    assert all(r["specialist_source"].endswith("enriched/1.0.0/enriched-001.json5") for r in runs if r["specialist_enabled"])
    assert all(r["system_prompt_sha256"] for r in runs if r["specialist_enabled"])
    assert not any(r["is_successful"] for r in runs if not r["specialist_enabled"])
    assert snap["snapshot_metadata"]["batch_id"] == "proof"
    assert snap["snapshot_metadata"]["template_source"].endswith("enriched-001.json5")
    assert {s["path"] for s in snap["benchmarks"]["test_suites"]} == {f"py-bugs/{name}" for name in KNOWLEDGE}
