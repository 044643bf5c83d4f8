"""The dashboard's analysis pages in Chromium: leaderboard, regressions, costs, datasets, fleets
and stress tests.

The pages are read over the store of ``tests/support/dashboard_fixture.py`` (real ``bench`` runs: two
scenario batches, a dataset run and a fleet run against the loopback mock model, a stress test).
What each page shows is checked against what the API answers for the same filters, so the
tests follow the data rather than restate it. Empty states are read from a second
``worker dev`` over an empty store.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from support.dashboard_fixture import Dashboard, goto, run_bench, start_worker
from harness.testing.mock_model import MockConfig, MockServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

HOSTILE = '<img src=x onerror="window.__pwned=1">'


@pytest.fixture(scope="module", autouse=True)
def _store_before_browser(dashboard: Dashboard) -> Dashboard:
    """The seeded store is set up before Chromium (seeding runs an event loop of its own)."""
    return dashboard


@pytest.fixture(scope="module")
def empty_store(dashboard: Dashboard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a ``worker dev`` over a store that holds nothing."""
    root = tmp_path_factory.mktemp("dashboard-empty")
    worker = start_worker(root / "empty.db", root)
    try:
        yield worker.url
    finally:
        worker.stop()


class SingleSlotServer(MockServer):
    """The loopback mock answering one request at a time, the others waiting their turn (as a
    llama.cpp server with one slot does): throughput stays flat as concurrency grows while
    latency grows with the queue, so a ramp has a knee."""

    _slot: asyncio.Lock | None = None

    async def _answer(self, raw: bytes, writer: asyncio.StreamWriter) -> bool:
        if self._slot is None:
            self._slot = asyncio.Lock()
        async with self._slot:
            return await super()._answer(raw, writer)


class ServerThread:
    """A mock server on its own event loop in a thread; ``stop()`` closes it from that thread."""

    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(server.start())
            started.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert started.wait(10), "the mock server did not start"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.aclose(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def knee_store(dashboard: Dashboard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    """A copy of the seeded store plus a ramp stress test (``bench stress``) of a server that
    answers one request at a time; the base URL of a ``worker dev`` over it and the stored test."""
    root = tmp_path_factory.mktemp("dashboard-knee")
    with sqlite3.connect(dashboard.db) as source, sqlite3.connect(root / "bench.db") as target:
        source.backup(target)
    mock = ServerThread(SingleSlotServer(MockConfig(delay_ms=40)))
    try:
        test = json.loads(run_bench(root, "stress", "openai-compatible:one-slot", "--base-url", mock.server.base_url,
                                    "--max-concurrency", "8", "--step-requests", "8", "--no-stream", "--json"))
    finally:
        mock.stop()
    worker = start_worker(root / "bench.db", root)
    try:
        yield worker.url, test
    finally:
        worker.stop()


def _api(dashboard: Dashboard, path: str, **params: Any) -> Any:
    answer = httpx.get(f"{dashboard.url}/api{path}", params=params, timeout=30)
    answer.raise_for_status()
    return answer.json()


def _texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def _query(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _no_page_overflow(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    viewport = page.evaluate("() => window.innerWidth")
    assert width <= viewport, f"the page is {width} px wide in a {viewport} px viewport"


def _api_requests(page: Any, route: str) -> list[str]:
    """Every request the page sends to ``/api<route>`` from now on (the list fills as it goes)."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url)
            if urlparse(request.url).path == f"/api{route}" else None)
    return seen


def _ms(text: str) -> float:
    """'34 ms' or '1.20 s' as milliseconds."""
    found = re.fullmatch(r"([0-9.]+) (ms|s)", text.strip())
    assert found, f"not a duration: {text!r}"
    return float(found.group(1)) * (1000 if found.group(2) == "s" else 1)


def _pct(x: float) -> str:
    """A rate as the dashboard writes it: 0.5 -> '50%', 0.375 -> '37.5%'."""
    return f"{x * 100:.1f}".removesuffix(".0") + "%"


def _row(page: Any, key: str) -> Any:
    return page.locator(f'tr[data-key="{key}"]')


# --------------------------------------------------------------------------- leaderboard


def test_leaderboard_shows_each_entry_with_its_rank_range_and_interval(page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, "/leaderboard", by="agent", batchId=dashboard.batch_b)
    assert expected["entries"], expected
    goto(page, f"/leaderboard?batchId={dashboard.batch_b}")
    for entry in expected["entries"]:
        row = _row(page, entry["entry"])
        assert row.locator("td[data-col=rank]").inner_text().strip() == entry["rank"]
        assert row.locator("td[data-col=entry]").inner_text().strip() == entry["entry"]
        if entry["scoreInterval"]:
            assert "[" in row.locator("td[data-col=meanScore]").inner_text()
    bars = page.locator("svg.bar-chart .bar-row")
    assert sorted(bars.evaluate_all("rows => rows.map(r => r.dataset.label)")) == \
        sorted(e["entry"] for e in expected["entries"])
    for entry in expected["entries"]:
        label = page.locator(f'svg.bar-chart .bar-row[data-label="{entry["entry"]}"] text.value').text_content()
        assert f"rank {entry['rank']}" in label


def test_leaderboard_filters_live_in_the_url_and_survive_a_reload(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/leaderboard")
    form = page.locator('form[data-form="leaderboard filters"]')
    form.locator("select[name=by]").select_option("agent,model")
    form.locator("input[name=batchId]").fill(dashboard.batch_b)
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"by=agent%2Cmodel"))
    page.wait_for_selector("#app[data-state=ready] .leaderboard-body table")
    assert _query(page) == {"by": "agent,model", "batchId": dashboard.batch_b}
    expected = _api(dashboard, "/leaderboard", by="agent,model", batchId=dashboard.batch_b)
    page.reload()
    page.wait_for_selector("#app[data-state=ready] .leaderboard-body table")
    assert page.locator("select[name=by]").input_value() == "agent,model"
    assert page.locator("input[name=batchId]").input_value() == dashboard.batch_b
    assert sorted(_texts(page, "td[data-col=entry]")) == sorted(e["entry"] for e in expected["entries"])
    # Sorting is in the URL too.
    page.locator('th button[data-sort="entry"]').click()
    page.wait_for_url(re.compile(r"sort=entry"))
    page.wait_for_selector("#app[data-state=ready] .leaderboard-body table")
    names = _texts(page, "td[data-col=entry]")
    order = _query(page)["order"]
    assert names == sorted(names, reverse=order == "desc")
    page.go_back()
    page.wait_for_url(lambda url: "sort=" not in url)


def test_a_filter_the_api_would_refuse_is_reported_without_asking_it(page: Any, dashboard: Dashboard) -> None:
    asked = _api_requests(page, "/leaderboard")
    goto(page, "/leaderboard?since=yesterday")
    assert "since=yesterday" in page.locator(".error-box").inner_text()
    assert asked == []
    # The form still works: correcting the filter shows the leaderboard.
    page.locator("input[name=since]").fill("30d")
    page.locator('form[data-form="leaderboard filters"] button[type=submit]').click()
    page.wait_for_url(re.compile(r"since=30d"))
    page.wait_for_selector("#app[data-state=ready] .leaderboard-body .cards")
    assert page.locator(".error-box").count() == 0
    assert len(asked) == 1


# --------------------------------------------------------------------------- regressions


def test_regressions_start_with_a_form_and_never_ask_without_batches(page: Any, dashboard: Dashboard) -> None:
    asked = _api_requests(page, "/regressions")
    goto(page, "/regressions")
    assert page.locator('form[data-form="two batches"]').is_visible()
    assert page.locator('form[data-form="latest batches of an agent"]').is_visible()
    assert page.locator("table").count() == 0
    goto(page, f"/regressions?baseline={dashboard.batch_a}")  # one side only: the page says what is missing
    assert "both a baseline and a candidate" in page.locator(".error-box").inner_text()
    assert asked == []


def test_regressions_of_two_batches_show_a_verdict_per_scenario(page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, "/regressions", baseline=dashboard.batch_a, candidate=dashboard.batch_b)
    goto(page, "/regressions")
    form = page.locator('form[data-form="two batches"]')
    form.locator("input[name=baseline]").fill(dashboard.batch_a)
    form.locator("input[name=candidate]").fill(dashboard.batch_b)
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile("candidate="))
    page.wait_for_selector("#app[data-state=ready] .regressions-body table")
    assert _query(page) == {"baseline": dashboard.batch_a, "candidate": dashboard.batch_b}
    comparing = page.locator(".comparing").inner_text()
    assert dashboard.batch_a in comparing and dashboard.batch_b in comparing
    for row in expected["scenarios"]:
        cells = _row(page, f"{row['scenario']}|{row['tier']}|{row['entry']}")
        assert cells.locator("td[data-col=status] .badge").get_attribute("data-status") == row["status"]
    statuses = {r["status"] for r in expected["scenarios"]}
    assert statuses, expected
    # Filter by status: in the URL, and the rows follow.
    status = sorted(statuses)[0]
    page.locator("select[name=status]").select_option(status)
    page.wait_for_url(re.compile(f"status={status}"))
    page.wait_for_selector("#app[data-state=ready] .regressions-body table")
    shown = page.locator("td[data-col=status] .badge").evaluate_all("bs => bs.map(b => b.dataset.status)")
    assert shown == [status] * sum(1 for r in expected["scenarios"] if r["status"] == status)
    page.reload()
    page.wait_for_selector("#app[data-state=ready] .regressions-body table")
    assert page.locator("select[name=status]").input_value() == status


def test_regressions_of_an_agent_compare_its_two_latest_batches(page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, "/regressions", agent="oracle")
    goto(page, "/regressions")
    form = page.locator('form[data-form="latest batches of an agent"]')
    form.locator("select[name=agent]").select_option("oracle")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile("agent=oracle"))
    page.wait_for_selector("#app[data-state=ready] .regressions-body table")
    comparing = page.locator(".comparing").inner_text()
    assert f"Baseline {expected['baseline']} → candidate {expected['candidate']}" in comparing
    assert page.locator("tbody tr").count() == len(expected["scenarios"])


def test_an_api_error_is_shown_and_the_form_stays_usable(page: Any, dashboard: Dashboard) -> None:
    page.problems.allow(r"404.*/api/regressions\?baseline=")
    page.problems.allow(r"Failed to load resource.*404")
    goto(page, f"/regressions?baseline={dashboard.batch_a}&candidate=no-such-batch")
    error = page.locator(".error-box").inner_text()
    assert "404" in error and "no-such-batch" in error
    form = page.locator('form[data-form="two batches"]')
    form.locator("input[name=candidate]").fill(dashboard.batch_b)
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#app[data-state=ready] .regressions-body table")
    assert page.locator(".error-box").count() == 0


# --------------------------------------------------------------------------- costs


def test_costs_draw_and_list_the_pareto_front_and_never_show_an_unknown_cost_as_zero(
        page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, "/costs", by="agent,model")
    goto(page, "/costs")
    assert page.locator("svg.scatter").is_visible()
    front = page.locator(".pareto-list li").evaluate_all("items => items.map(i => i.dataset.entry)")
    assert front == expected["paretoFront"] and front
    highlighted = page.locator("svg.scatter .marker.highlight").count()
    assert highlighted == len(expected["paretoFront"])
    unknown = [e for e in expected["entries"] if e["totalCostUsd"] is None]
    assert unknown, "the mock models have no price: their cost is unknown"
    for entry in expected["entries"]:
        total = _row(page, entry["entry"]).locator("td[data-col=totalCostUsd]").inner_text().strip()
        if entry["totalCostUsd"] is None:
            assert total == "unknown"
        else:
            assert total.startswith("$")
    not_plotted = page.locator(".unplotted").inner_text()
    for entry in unknown:
        assert entry["entry"] in not_plotted


def test_costs_grouping_survives_a_reload(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/costs")
    page.locator("select[name=by]").select_option("agent")
    page.locator('form[data-form="cost filters"] button[type=submit]').click()
    page.wait_for_url(re.compile(r"by=agent(&|$)"))
    page.wait_for_selector("#app[data-state=ready] .costs-body table")
    page.reload()
    page.wait_for_selector("#app[data-state=ready] .costs-body table")
    assert page.locator("select[name=by]").input_value() == "agent"
    expected = _api(dashboard, "/costs", by="agent")
    assert sorted(_texts(page, "td[data-col=entry]")) == sorted(
        ("◆ " if e["paretoOptimal"] else "") + e["entry"] for e in expected["entries"])


# --------------------------------------------------------------------------- datasets


def test_datasets_show_latency_percentiles_and_pass_rates_per_provider(page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, "/datasets", batchId=dashboard.dataset_batch)
    groups = [g for g in expected["groups"] if g["dataset"] == dashboard.dataset_name]
    assert len(groups) == 2, expected
    goto(page, f"/datasets?batchId={dashboard.dataset_batch}")
    block = page.locator(f'section[data-dataset="{dashboard.dataset_name}"]')
    assert block.locator("svg.bar-chart").count() == 2
    for g in groups:
        row = block.locator(f'tr[data-key="{g["provider"]}:{g["model"]}"]')
        rate = row.locator("td[data-col=passRate]").inner_text()
        assert rate.startswith(_pct(g["passRate"])) and "[" in rate
        for p in ("p50", "p95", "p99"):
            assert abs(_ms(row.locator(f"td[data-col={p}]").inner_text()) - g["latencyMs"][p]) <= 1
        assert row.locator("td[data-col=costUsd]").inner_text().strip() == "unknown"
        assert row.locator("td[data-col=provider] a").get_attribute("href").startswith(
            f"/batches/{dashboard.dataset_batch}?agent=")


def test_dataset_filter_lives_in_the_url(page: Any, dashboard: Dashboard) -> None:
    goto(page, "/datasets")
    page.locator("select[name=dataset]").select_option(dashboard.dataset_name)
    page.locator('form[data-form="dataset filters"] button[type=submit]').click()
    page.wait_for_url(re.compile(f"dataset={dashboard.dataset_name}"))
    page.wait_for_selector(f'#app[data-state=ready] section[data-dataset="{dashboard.dataset_name}"]')
    page.reload()
    page.wait_for_selector("#app[data-state=ready]")
    assert page.locator("select[name=dataset]").input_value() == dashboard.dataset_name
    assert _texts(page, "section.dataset h2") == [dashboard.dataset_name]


def _open_from_list(page: Any, section: str, key: str, ready: str) -> None:
    """From the list page ``/<section>``, open the row ``key`` and wait for its page to show ``ready``."""
    goto(page, f"/{section}")
    _row(page, key).locator("a").click()
    page.wait_for_url(re.compile(f"/{section}/{re.escape(key)}$"))
    page.wait_for_selector(f"#app[data-state=ready] {ready}")


# --------------------------------------------------------------------------- fleets


def test_fleet_matrix_shows_repositories_by_providers_with_links_to_the_runs(page: Any, dashboard: Dashboard) -> None:
    expected = _api(dashboard, f"/fleets/{dashboard.fleet_id}")
    _open_from_list(page, "fleets", dashboard.fleet_id, "svg.heatmap")
    heat = page.locator("svg.heatmap")
    labels = heat.locator("text.label").all_text_contents()
    for repo in expected["repositories"]:
        assert repo in labels
    cells = heat.locator("a.cell-link")
    assert cells.count() == len(expected["cells"])
    for cell in expected["cells"]:
        link = heat.locator(f'a.cell-link[data-repo="{cell["repoId"]}"][data-provider="{cell["provider"]}"]')
        text = link.locator("text.cell-text").text_content()
        assert text == f"{_pct(cell['passRate'])} ({cell['passed']}/{cell['runs']})"
        agent, model = cell["provider"].split(":", 1)
        assert link.get_attribute("href") == f"/batches/{dashboard.fleet_id}?agent={agent}&model={model}"
        row = _row(page, f"{cell['repoId']}|{cell['provider']}")
        assert row.locator("td[data-col=repoId]").inner_text().strip() == cell["repoId"]
        assert row.locator("td[data-col=provider]").inner_text().strip() == cell["provider"]
    # Every provider is named: in the columns or in the key under them.
    shown = " ".join(labels + page.locator(".column-key").all_inner_texts())
    for provider in expected["providers"]:
        assert provider.split(":", 1)[-1] in shown
    # A cell opens its runs in the batch.
    first = expected["cells"][0]
    heat.locator(f'a.cell-link[data-repo="{first["repoId"]}"][data-provider="{first["provider"]}"]').click()
    page.wait_for_url(re.compile(f"/batches/{re.escape(dashboard.fleet_id)}\\?agent="))
    page.wait_for_selector("#app[data-state=ready]")


# --------------------------------------------------------------------------- stress


def test_stress_test_shows_throughput_latency_and_the_knee(page: Any, dashboard: Dashboard) -> None:
    test = _api(dashboard, f"/stress/{dashboard.stress_id}")
    _open_from_list(page, "stress", dashboard.stress_id, "svg.stress-chart")
    chart = page.locator("svg.stress-chart")
    assert chart.locator("g.series.series-0 .marker").count() == len(test["steps"])  # throughput per step
    assert chart.locator("g.series.series-1 .marker").count() == sum(1 for s in test["steps"] if s["latencyMs"])
    assert page.locator("table tbody tr").first.locator("td[data-col=label]").inner_text().strip().startswith(
        test["steps"][0]["label"])
    assert page.locator("td[data-col=label]").count() == len(test["steps"])
    knee = test["summary"]["knee"]
    text = page.locator(".knee-text").inner_text()
    if knee is None:
        assert text.startswith("No knee")
        assert chart.locator(".knee").count() == 0
        assert page.locator(".knee-mark").count() == 0
    else:
        assert text.startswith(f"Knee at concurrency {knee['concurrency']}")
        assert chart.locator("g.knee").first.get_attribute("data-knee-step") is not None
        marked = page.locator("tr:has(.knee-mark) td[data-col=concurrency]").inner_text().strip()
        assert marked == str(knee["concurrency"])


def test_the_knee_is_marked_on_the_chart_and_in_the_steps(page: Any, knee_store: tuple[str, dict]) -> None:
    url, test = knee_store
    knee = test["summary"]["knee"]
    assert knee is not None, [(s["label"], s["throughputRps"], s["latencyMs"]) for s in test["steps"]]
    page.goto(f"{url}/stress/{test['id']}")
    page.wait_for_selector("#app[data-state=ready] svg.stress-chart")
    assert page.locator(".knee-text").inner_text().startswith(f"Knee at concurrency {knee['concurrency']}")
    position = [s["index"] for s in test["steps"]].index(knee["stepIndex"])
    mark = page.locator("svg.stress-chart g.knee[data-knee-step]")
    assert mark.get_attribute("data-knee-step") == str(position)
    assert f"knee: c={knee['concurrency']}" in mark.text_content()
    marked = page.locator("tr:has(.knee-mark) td[data-col=concurrency]").inner_text().strip()
    assert marked == str(knee["concurrency"])
    cards = {label.lower(): value for label, value in zip(_texts(page, ".card-label"), _texts(page, ".card-value"))}
    assert cards["knee"] == f"c={knee['concurrency']}"


def test_stress_filters_live_in_the_url(page: Any, dashboard: Dashboard) -> None:
    profile = _api(dashboard, f"/stress/{dashboard.stress_id}")["profile"]
    goto(page, "/stress")
    page.locator("select[name=profile]").select_option(profile)
    page.locator('form[data-form="stress filters"] button[type=submit]').click()
    page.wait_for_url(re.compile(f"profile={profile}"))
    page.wait_for_selector("#app[data-state=ready] table")
    page.reload()
    page.wait_for_selector("#app[data-state=ready] table")
    assert page.locator("select[name=profile]").input_value() == profile
    assert set(_texts(page, "td[data-col=profile]")) == {profile}
    other = "sustained" if profile != "sustained" else "spike"
    page.locator("select[name=profile]").select_option(other)
    page.locator('form[data-form="stress filters"] button[type=submit]').click()
    page.wait_for_url(re.compile(f"profile={other}"))
    page.wait_for_selector("#app[data-state=ready] [data-empty=true]")


# --------------------------------------------------------------------------- escaping


def test_values_from_the_url_are_shown_as_text(page: Any, dashboard: Dashboard) -> None:
    page.problems.allow(r"404.*/api/fleets/")
    page.problems.allow(r"Failed to load resource.*404")
    goto(page, f"/leaderboard?suite={HOSTILE}")
    assert page.locator("input[name=suite]").input_value() == HOSTILE
    goto(page, f"/fleets/{HOSTILE}")
    assert HOSTILE in page.locator("h1").inner_text()
    goto(page, f"/stress?model={HOSTILE}")
    assert page.locator("input[name=model]").input_value() == HOSTILE
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#app img").count() == 0


# --------------------------------------------------------------------------- empty store


def test_an_empty_store_says_what_to_run(page: Any, empty_store: str) -> None:
    expect = {
        "/leaderboard": "bench py-bugs",
        "/regressions": "bench regressions",
        "/costs": "bench costs",
        "/datasets": "bench dataset",
        "/fleets": "bench fleet",
        "/stress": "bench stress",
    }
    for path, command in expect.items():
        page.goto(empty_store + path)
        page.wait_for_selector("#app[data-state=ready]")
        empty = page.locator("[data-empty=true]")
        assert empty.count() == 1, path
        assert command in empty.inner_text(), path


# --------------------------------------------------------------------------- phone


@pytest.mark.parametrize("path", ["/leaderboard?by=agent", "/regressions?agent=oracle", "/costs", "/datasets",
                                  "/fleets", "/fleets/{fleet}", "/stress", "/stress/{stress}"])
def test_phone_renders_without_page_overflow(phone_page: Any, dashboard: Dashboard, path: str) -> None:
    goto(phone_page, path.format(fleet=dashboard.fleet_id, stress=dashboard.stress_id))
    assert phone_page.locator(".error-box").count() == 0
    assert phone_page.locator("h1").first.is_visible()
    _no_page_overflow(phone_page)
