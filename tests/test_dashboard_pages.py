"""The dashboard's overview, batches, batch, run and compare pages in Chromium.

The pages are read over the store of ``tests/support/dashboard_fixture.py`` (real ``bench`` runs). Runs
whose agent made tool calls, a long transcript and a stored diff come from a copy of that store
to which :func:`add_agent_runs` posts three runs through the harness's results client, served
by a second ``worker dev``: the shared store stays as the other page tests expect it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.dashboard_fixture import Dashboard, goto, start_worker

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SUITE, SCENARIO = "py-bugs", "pagination-off-by-one"
EXTRA_BATCH = "dash-agent-calls"
RUN_A, RUN_B, RUN_LONG = "run-dash-calls-a", "run-dash-calls-b", "run-dash-long"
LONG_ENTRIES = 181
CUT_CHARS = 5_000
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
VERDICTS = {"A better", "B better", "no detectable difference", "not enough runs", "not comparable"}

PATCH = """diff --git a/pager.py b/pager.py
--- a/pager.py
+++ b/pager.py
@@ -1,4 +1,4 @@
 def page_count(total, size):
-    return total // size
+    return -(-total // size)
 
 def offset(page, size):
"""


def _call(i: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"call_{i}", "name": name, "arguments": arguments}


def _transcript(calls: list[dict[str, Any]], prompt: str = "Fix the pagination.") -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."},
                                     {"role": "user", "content": prompt}]
    for call in calls:
        entries.append({"role": "assistant", "content": "", "tool_calls": [call]})
        entries.append({"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                        "content": f"result of {call['name']}", "is_error": False})
    entries.append({"role": "assistant", "content": "Done."})
    return entries


def add_agent_runs(db: Path, spool: Path) -> None:
    """Post three runs of one scenario to ``db`` through the results client: A and B made the
    same first two tool calls, then different ones; A has a diff and an unknown cost; the third
    has a transcript of :data:`LONG_ENTRIES` entries, some longer than a page shows."""
    from harness.results.factory import open_client
    from harness.results.records import EvaluationRecord, RunRecord, Telemetry

    shared = [_call(0, "list_directory", path="."), _call(1, "read_file", path="pager.py")]
    calls_a = shared + [_call(2, "write_file", path="pager.py", content="..."),
                        _call(3, "run_command", command="python -m pytest -q")]
    calls_b = shared + [_call(2, "run_command", command="python -m pytest -q")]
    long_calls = [_call(i, "read_file", path=f"src/module_{i}.py") for i in range((LONG_ENTRIES - 3) // 2)]
    long_transcript = _transcript(long_calls, prompt="Read everything. " + HOSTILE)
    for i, entry in enumerate(long_transcript):
        if entry["role"] == "tool" and i % 10 == 3:
            entry["content"] = f"BEGIN-{i} " + "x" * CUT_CHARS + f" END-OF-ENTRY-{i}"
    assert len(long_transcript) == LONG_ENTRIES

    def record(run_id: str, transcript: list[dict[str, Any]], score: float, cost: float | None,
               diff: str | None) -> RunRecord:
        return RunRecord(
            run_id=run_id, suite=SUITE, scenario=SCENARIO, tier="L1", agent="openai", model="mock-model",
            batch_id=EXTRA_BATCH, status="completed" if score >= 1 else "failed",
            failure_class=None if score >= 1 else "validation",
            started_at="2026-01-05T10:00:00Z", completed_at="2026-01-05T10:01:00Z", total_score=score,
            weighted_score=score, is_successful=score >= 1, success_metric=score,
            metadata={"iteration": 0},
            evaluations=[EvaluationRecord("test", score, 1.0, "ok", f"{int(score * 4)}/4 tests passed\n$ pytest -q")],
            telemetry=Telemetry(tool_calls=sum(len(e.get("tool_calls") or []) for e in transcript), tokens_in=1200,
                                tokens_out=300, cost_usd=cost, turns=3, duration_ms=61_000.0),
            transcript=transcript, diff=diff)

    client = open_client(db_path=str(db), spool_dir=str(spool), sync_spool=False)
    for run in (record(RUN_A, _transcript(calls_a), 1.0, None, PATCH),
                record(RUN_B, _transcript(calls_b), 0.25, 0.0123, None),
                record(RUN_LONG, long_transcript, 0.5, 0.5, None)):
        assert client.post_run(run) in ("stored", "duplicate")


@pytest.fixture(scope="module", autouse=True)
def _store_before_browser(dashboard: Dashboard) -> Dashboard:
    """The seeded store is set up before Chromium: seeding stops the mock model server on an
    event loop, which cannot run once Playwright's loop is running in this thread."""
    return dashboard


@pytest.fixture(scope="module")
def agent_store(dashboard: Dashboard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a ``worker dev`` over a copy of the seeded store plus :func:`add_agent_runs`."""
    root = tmp_path_factory.mktemp("dashboard-agent-runs")
    copy = root / "bench.db"
    with sqlite3.connect(dashboard.db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    add_agent_runs(copy, root / "spool")
    worker = start_worker(copy, root)
    try:
        yield worker.url
    finally:
        worker.stop()


def _texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def _no_page_overflow(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    viewport = page.evaluate("() => window.innerWidth")
    assert width <= viewport, f"the page is {width} px wide in a {viewport} px viewport"


# --------------------------------------------------------------------------- overview


def test_overview_shows_totals_trend_batches_and_regressions(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/")
    cards = page.locator(".card")
    labels = [t.lower() for t in _texts(page, ".card-label")]
    assert {"runs", "pass rate", "mean score", "batches"} <= set(labels)
    runs_value = cards.filter(has_text=re.compile("^runs", re.I)).first.locator(".card-value").inner_text()
    assert int(runs_value.replace(",", "")) >= len(dashboard.runs[dashboard.batch_a]) + len(dashboard.runs[dashboard.batch_b])
    chart = page.locator("svg.line-chart[role=img]")
    assert chart.count() == 1
    assert "pass rate" in chart.locator("title").first.text_content().lower()
    # Each series has its own marker shape and a direct label, not a colour only.
    assert chart.locator(".series-label").count() == 2
    batch_links = _texts(page, "section:has(h2:text('Recent batches')) td[data-col=batchId] a")
    assert dashboard.batch_a in batch_links and dashboard.batch_b in batch_links
    # Regressions come after the first content, in their own request.
    slot = page.locator(".regressions-slot")
    slot.locator(".spinner").wait_for(state="detached")
    assert re.search(r"regressed|No scenario regressed|Nothing to compare yet", slot.inner_text())


def test_item3_overview_shows_scenario_runs_and_switches_to_dataset_requests(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/")
    def runs_card() -> int:
        cards = page.locator(".card")
        value = cards.filter(has_text=re.compile("^(runs|requests)", re.I)).first.locator(".card-value").inner_text()
        return int(value.replace(",", ""))
    scenario_runs = len(dashboard.runs[dashboard.batch_a]) + len(dashboard.runs[dashboard.batch_b])
    assert runs_card() == scenario_runs
    recent = _texts(page, "section:has(h2:text('Recent batches')) td[data-col=batchId] a")
    assert dashboard.dataset_batch not in recent
    page.locator(".kind-switch a", has_text="Dataset requests").click()
    page.wait_for_url(re.compile(r"kind=dataset"))
    page.wait_for_selector("section:has(h2:text('Recent batches')) td[data-col=batchId] a")
    recent = _texts(page, "section:has(h2:text('Recent batches')) td[data-col=batchId] a")
    assert dashboard.dataset_batch in recent and dashboard.batch_a not in recent
    assert runs_card() > 0 and "requests" in " ".join(_texts(page, ".card-label")).lower()


# --------------------------------------------------------------------------- batches


def test_batches_search_sort_and_pages_live_in_the_url(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/batches")
    ids = _texts(page, "td[data-col=batchId]")
    assert dashboard.batch_a in ids and dashboard.batch_b in ids
    assert "batch" in page.locator(".result-count").inner_text()

    page.locator("th button[data-sort=runs]").click()
    page.wait_for_url(re.compile(r"sort=runs"))
    page.wait_for_selector("#app[data-state=ready]")
    assert page.locator("th[aria-sort=descending] button[data-sort=runs]").count() == 1
    counts = [int(t.replace(",", "")) for t in _texts(page, "td[data-col=runs]")]
    assert counts == sorted(counts, reverse=True)

    page.fill("input[name=q]", dashboard.batch_a)
    page.press("input[name=q]", "Enter")
    page.wait_for_url(re.compile(r"q=" + re.escape(dashboard.batch_a)))
    page.wait_for_selector("#app[data-state=ready]")
    assert _texts(page, "td[data-col=batchId]") == [dashboard.batch_a]
    assert "sort=runs" in page.url

    page.go_back()
    page.wait_for_selector("#app[data-state=ready]")
    assert "q=" not in page.url
    assert dashboard.batch_b in _texts(page, "td[data-col=batchId]")

    goto(page, "/batches?q=no-such-batch-anywhere")
    assert "No batch matches" in page.locator("table").inner_text()


# --------------------------------------------------------------------------- batch -> run


def test_click_from_batches_to_a_run_and_its_transcript(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/batches")
    page.locator(f"td[data-col=batchId] a:text-is('{dashboard.batch_b}')").click()
    page.wait_for_url(re.compile(f"/batches/{dashboard.batch_b}$"))
    page.wait_for_selector("#app[data-state=ready]")
    assert dashboard.batch_b in page.locator("h1").inner_text()
    breakdowns = page.locator(".breakdown")
    assert breakdowns.filter(has_text=SCENARIO).count() >= 1
    agents = _texts(page, ".breakdown[data-dimension=agent] td[data-col=key]")
    assert {"oracle", "echo"} <= set(agents)

    runs = page.locator(".runs td[data-col=runId] a")
    runs.first.wait_for()
    seeded = {r["runId"] for r in dashboard.runs[dashboard.batch_b]}
    assert set(_texts(page, ".runs td[data-col=runId] a")) == seeded

    page.select_option("select[name=agent]", "oracle")
    page.wait_for_url(re.compile(r"agent=oracle"))
    page.locator(".runs td[data-col=agent]").first.wait_for()
    assert set(_texts(page, ".runs td[data-col=agent]")) == {"oracle"}
    oracle_runs = {r["runId"] for r in dashboard.runs[dashboard.batch_b] if r["agent"] == "oracle"}
    assert set(_texts(page, ".runs td[data-col=runId] a")) == oracle_runs

    page.select_option("select[name=status]", "error")
    page.wait_for_url(re.compile(r"status=error"))
    page.locator(".runs tr.empty").wait_for()
    page.go_back()
    page.wait_for_url(re.compile(r"agent=oracle$"))
    page.locator(".runs td[data-col=runId] a").first.wait_for()

    run_id = page.locator(".runs td[data-col=runId] a").first.inner_text()
    page.locator(".runs td[data-col=runId] a").first.click()
    page.wait_for_url(re.compile(f"/runs/{run_id}$"))
    page.wait_for_selector("#app[data-state=ready]")
    assert run_id in page.locator("h1").inner_text()
    assert page.locator("details.evaluation").count() >= 1

    page.locator("button[data-tab=transcript]").click()
    page.wait_for_url(re.compile(r"tab=transcript"))
    page.wait_for_selector("#app[data-state=ready]")
    entries = page.locator(".transcript .entry")
    entries.first.wait_for()
    assert entries.first.locator(".entry-role").inner_text().lower() in ("user", "system")
    assert "entries shown" in page.locator(".transcript-count").inner_text()

    page.locator("button[data-tab=diff]").click()
    page.wait_for_url(re.compile(r"tab=diff"))
    page.locator(".diff-view").wait_for()
    assert page.locator(".diff .d-add").count() >= 1  # the oracle changed the fixture
    page.go_back()
    page.wait_for_url(re.compile(r"tab=transcript"))
    page.locator(".transcript .entry").first.wait_for()


def test_run_page_scores_telemetry_and_phases(page: Any, dashboard: Dashboard) -> None:
    run_id = dashboard.run_id(dashboard.batch_a, "oracle")
    goto(page, f"/runs/{run_id}")
    assert "completed" in page.locator("h1 .badge").inner_text()
    score = page.locator(".card").filter(has_text=re.compile("^score", re.I)).first.locator(".card-value")
    assert score.inner_text() == "1"
    evaluation = page.locator("details.evaluation").first
    details = evaluation.locator("pre.eval-details")
    assert not details.is_visible()
    evaluation.locator("summary").click()
    assert details.is_visible() and details.inner_text().strip()
    telemetry = page.locator("section:has(h2:text('Telemetry'))")
    assert {"tokens", "cost", "turns", "tool calls", "duration"} <= {t.lower() for t in
                                                                   telemetry.locator(".card-label").all_inner_texts()}
    timeline = page.locator("svg.timeline[role=img]")
    timeline.wait_for()
    assert timeline.locator(".phase-row").count() >= 3
    assert timeline.locator(".phase-row[data-phase=workspace]").count() == 1
    others = page.locator(".other-runs a:text-is('compare')")
    others.first.wait_for()
    assert others.count() >= 1


def test_item4_a_failed_evaluator_is_shown_failed_not_ok(page: Any, dashboard: Dashboard) -> None:
    goto(page, f"/runs/{dashboard.run_id(dashboard.batch_a, 'echo')}")
    validation = page.locator("details.evaluation[data-evaluator=test] summary")
    assert validation.locator(".eval-score").inner_text().startswith("0")
    badge = validation.locator(".badge").inner_text()
    assert "failed" in badge and "ok" not in badge
    goto(page, f"/runs/{dashboard.run_id(dashboard.batch_a, 'oracle')}")
    badge = page.locator("details.evaluation[data-evaluator=test] summary .badge").inner_text()
    assert "passed" in badge


# --------------------------------------------------------------------------- compare


def test_compare_two_batches_shows_verdicts(page: Any, dashboard: Dashboard) -> None:
    goto(page, f"/batches/{dashboard.batch_a}")
    page.locator("a:text('Compare with…')").click()
    page.wait_for_url(re.compile(r"/compare\?a="))
    page.wait_for_selector("#app[data-state=ready]")
    assert page.locator("input[name=a]").input_value() == dashboard.batch_a
    page.fill("input[name=a]", f"{dashboard.batch_a},agent=oracle")
    page.fill("input[name=b]", f"{dashboard.batch_b},agent=oracle")
    page.locator(".compare-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"b="))
    page.wait_for_selector("#app[data-state=ready]")
    page.locator(".overall [data-verdict]").wait_for()
    assert page.locator(".overall [data-verdict]").get_attribute("data-verdict") in VERDICTS
    metrics = page.locator("section:has(h2:text('Per metric')) td[data-col=verdict] [data-verdict]")
    assert metrics.count() == 6
    assert {metrics.nth(i).get_attribute("data-verdict") for i in range(6)} <= VERDICTS
    scenarios = page.locator("section:has(h2:text('Per scenario'))")
    assert f"{SUITE}/{SCENARIO}" in _texts(scenarios, "td[data-col=scenario]")
    assert scenarios.locator("td[data-col=verdict] [data-verdict]").count() >= 1
    assert scenarios.locator("svg.bar-chart[role=img]").count() == 1
    # Intervals by scenario come after the first content (the runs are read once more).
    scenarios.locator(".scenario-slot[data-intervals=loaded]").wait_for()
    assert "interval (Welch)" in scenarios.locator("thead").inner_text()

    # Both batches hold two agents in the same cells: refused, and said so.
    goto(page, f"/compare?a={dashboard.batch_a}&b={dashboard.batch_b}")
    assert page.locator(".overall [data-verdict]").get_attribute("data-verdict") == "not comparable"
    assert "narrow it to one" in page.locator(".refusals").inner_text()


def test_scenario_intervals_match_the_worker_statistics(page: Any, dashboard: Dashboard) -> None:
    """The page's Welch interval and t quantile against worker.analysis.stats on the same values."""
    from worker.analysis import stats

    goto(page, "/compare")
    cases = [([1.0, 0.5, 0.75], [0.2, 0.3, 0.1, 0.25]), ([0.1, 0.9], [0.5, 0.6]),
             ([1.0, 1.0, 0.9, 0.8, 1.0], [0.3, 0.2, 0.35]), ([0.5, 0.5], [0.5, 0.5]), ([1.0, 1.0], [0.5, 0.5]),
             ([0.7], [0.1, 0.2])]
    found = page.evaluate("""async (cases) => {
        const m = await import('/assets/js/pages/compare.js');
        return {cis: cases.map(([a, b]) => m.welchInterval(a, b, 0.95)),
                q: [m.tQuantile(0.975, 1), m.tQuantile(0.975, 3.5), m.tQuantile(0.995, 40)]};
    }""", [list(c) for c in cases])
    for (a, b), ci in zip(cases, found["cis"]):
        expected = stats.welch_t(a, b, level=0.95)
        if expected.ci_low is None or stats.is_degenerate(expected):
            assert ci is None
        else:
            assert ci == pytest.approx([expected.ci_low, expected.ci_high], rel=1e-9, abs=1e-12)
    assert found["q"] == pytest.approx([stats.t_ppf(0.975, 1), stats.t_ppf(0.975, 3.5), stats.t_ppf(0.995, 40)],
                                       rel=1e-9)


def test_two_runs_show_where_their_tool_calls_diverge_and_both_diffs(page: Any, agent_store: str) -> None:
    goto(page, f"{agent_store}/compare?runA={RUN_A}&runB={RUN_B}")
    sentence = page.locator(".divergence")
    assert sentence.get_attribute("data-diverges-at") == "2"
    assert "diverge at call #2" in sentence.inner_text()
    assert "write_file" in sentence.inner_text() and "run_command" in sentence.inner_text()
    for side, name in ((".side-a", "write_file"), (".side-b", "run_command")):
        marked = page.locator(f"section:has(h2:text('Tool calls')) {side} li.diverge")
        assert marked.count() == 1 and name in marked.inner_text()
        assert page.locator(f"section:has(h2:text('Tool calls')) {side} li.same").count() == 2
    diffs = page.locator("section:has(h2:text('Diffs'))")
    diffs.locator(".side-a .diff").wait_for()
    assert diffs.locator(".side-a .d-file").count() >= 3  # diff --git, ---, +++
    assert diffs.locator(".side-a .d-hunk").count() == 1
    assert diffs.locator(".side-a .d-del").all_inner_texts() == ["-    return total // size"]
    assert diffs.locator(".side-a .d-add").all_inner_texts() == ["+    return -(-total // size)"]
    diffs.locator(".side-b .no-diff").wait_for()


def test_long_transcript_loads_in_pages_and_escapes_its_content(page: Any, agent_store: str) -> None:
    goto(page, f"{agent_store}/runs/{RUN_LONG}?tab=transcript")
    entries = page.locator(".transcript .entry")
    assert entries.count() == 50
    assert page.locator(".transcript-count").inner_text().startswith(f"50 of {LONG_ENTRIES}")
    # Data is text, never markup.
    assert HOSTILE in entries.nth(1).inner_text()
    assert page.locator(".transcript img, .transcript script").count() == 0
    assert page.evaluate("() => window.__pwned === undefined")
    # Tool calls and tool results are folded.
    call = entries.nth(2).locator("details.tool-call")
    assert call.count() == 1 and call.get_attribute("open") is None
    assert "read_file" in call.locator("summary").inner_text()

    page.locator("button.load-more").click()
    page.wait_for_function("() => document.querySelectorAll('.transcript .entry').length === 100")
    page.locator("button.load-more").click()
    page.wait_for_function(f"() => document.querySelectorAll('.transcript .entry').length === 150")
    page.locator("button.load-more").click()
    page.wait_for_function(f"() => document.querySelectorAll('.transcript .entry').length === {LONG_ENTRIES}")
    assert page.locator("button.load-more").count() == 0

    long_entry = page.locator(".transcript .entry[data-index='13']")
    content = long_entry.locator(".content")
    assert "END-OF-ENTRY-13" not in content.text_content()  # cut by the server
    long_entry.locator("button.show-all").click()
    page.wait_for_function("() => document.querySelector(\".entry[data-index='13'] .content\")"
                           ".textContent.includes('END-OF-ENTRY-13')")
    assert len(content.text_content()) > CUT_CHARS


def test_unknown_cost_is_shown_as_unknown(page: Any, agent_store: str) -> None:
    goto(page, f"{agent_store}/runs/{RUN_A}")
    cost = page.locator(".card").filter(has_text=re.compile("^cost", re.I)).first.locator(".card-value")
    assert cost.inner_text() == "unknown"
    goto(page, f"{agent_store}/runs/{RUN_B}")
    assert page.locator(".card").filter(has_text=re.compile("^cost", re.I)).first.locator(".card-value").inner_text() \
        == "$0.01"


# --------------------------------------------------------------------------- phone


def test_phone_renders_the_overview_and_a_batch_without_page_overflow(phone_page: Any, dashboard: Dashboard) -> None:
    goto(phone_page, "/")
    phone_page.locator(".regressions-slot .spinner").wait_for(state="detached")
    assert phone_page.locator("svg.line-chart").is_visible()
    _no_page_overflow(phone_page)
    goto(phone_page, f"/batches/{dashboard.batch_b}")
    phone_page.locator(".runs td[data-col=runId] a").first.wait_for()
    assert phone_page.locator(".runs td[data-col=runId] a").first.is_visible()
    _no_page_overflow(phone_page)
    goto(phone_page, f"/runs/{dashboard.run_id(dashboard.batch_b, 'oracle')}")
    phone_page.locator("svg.timeline").wait_for()
    _no_page_overflow(phone_page)
