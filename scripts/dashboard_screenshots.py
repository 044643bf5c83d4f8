"""Screenshots of every page of the web dashboard, for docs/dashboard.md.

Seeds a store the way the browser tests do (tests/support/dashboard_fixture.py: real ``bench`` runs
with the oracle, echo and openai agents, a dataset run, a fleet run and a stress test against
the loopback mock model server), starts ``worker dev`` over it, opens each page in the
system's Chromium at 1366x900 (and the overview once as a phone, 390x844), waits for
``#app[data-state=ready]`` and saves ``docs/dashboard/<page>.png``.

    .venv/bin/python scripts/dashboard_screenshots.py                  # every page
    .venv/bin/python scripts/dashboard_screenshots.py --only run,batch # some pages
    .venv/bin/python scripts/dashboard_screenshots.py --list           # the pages and their URLs

The worker serves the dashboard from worker/dashboard_assets.py: run
``.venv/bin/python scripts/build_dashboard.py`` first when worker/dashboard/ changed.
Exit status 1 when a page did not become ready or reported a console error, a page error or
a failed request (its screenshot is still written).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (str(ROOT), str(ROOT / "tests")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from support.dashboard_fixture import (  # noqa: E402
    PHONE_VIEWPORT,
    READY_TIMEOUT_MS,
    SELECTOR_READY,
    VIEWPORT,
    Dashboard,
    ProblemLog,
    browser_problem,
    launch_chromium,
    seeded_dashboard,
)

OUT = ROOT / "docs" / "dashboard"

#: (file name, URL path from the seeded ids, phone?)
PAGES: list[tuple[str, Callable[[Dashboard], str], bool]] = [
    ("overview", lambda d: "/", False),
    ("batches", lambda d: "/batches", False),
    ("batch", lambda d: f"/batches/{d.batch_b}", False),
    ("run", lambda d: f"/runs/{d.run_id(d.batch_a, 'oracle')}", False),
    ("run-transcript", lambda d: f"/runs/{d.run_id(d.batch_b, 'openai')}?tab=transcript", False),
    ("compare", lambda d: f"/compare?a={d.batch_a}&b={d.batch_b}", False),
    ("compare-runs", lambda d: f"/compare?runA={d.run_id(d.batch_a, 'oracle')}&runB={d.run_id(d.batch_b, 'oracle')}",
     False),
    ("leaderboard", lambda d: "/leaderboard?by=agent,model", False),
    ("regressions", lambda d: f"/regressions?baseline={d.batch_a}&candidate={d.batch_b}", False),
    ("costs", lambda d: "/costs", False),
    ("datasets", lambda d: f"/datasets?batchId={d.dataset_batch}", False),
    ("fleets", lambda d: "/fleets", False),
    ("fleet", lambda d: f"/fleets/{d.fleet_id}", False),
    ("stress", lambda d: "/stress", False),
    ("stress-test", lambda d: f"/stress/{d.stress_id}", False),
    ("overview-phone", lambda d: "/", True),
]


def shoot(dashboard: Dashboard, out: Path, only: set[str] | None, full_page: bool) -> list[str]:
    """Write the screenshots; return the problems found (empty when every page was clean)."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for name, path_of, phone in PAGES:
                if only and name not in only:
                    continue
                path = path_of(dashboard)
                options = (dict(viewport=PHONE_VIEWPORT, is_mobile=True, has_touch=True, device_scale_factor=2)
                           if phone else dict(viewport=VIEWPORT))
                context = browser.new_context(base_url=dashboard.url, **options)
                page = context.new_page()
                log = ProblemLog()
                log.attach(page)
                try:
                    page.goto(path)
                    page.wait_for_selector(SELECTOR_READY, timeout=READY_TIMEOUT_MS)
                    page.wait_for_load_state("networkidle", timeout=5_000)
                except Exception as exc:  # noqa: BLE001 - reported, the screenshot is still taken
                    log.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
                target = out / f"{name}.png"
                page.screenshot(path=str(target), full_page=full_page)
                context.close()
                found = log.unexpected()
                problems += [f"{name} ({path}): {p}" for p in found]
                print(f"{'!' if found else ' '} {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
                      f"  {path}", flush=True)
        finally:
            browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--out", type=Path, default=OUT, help=f"directory of the PNGs (default {OUT.relative_to(ROOT)})")
    parser.add_argument("--only", default="", help="comma-separated page names (see --list)")
    parser.add_argument("--viewport-only", action="store_true",
                        help="capture the viewport only, not the whole page")
    parser.add_argument("--list", action="store_true", help="print the page names and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, _, phone in PAGES:
            print(name + ("  (390x844)" if phone else ""))
        return 0
    only = {n.strip() for n in args.only.split(",") if n.strip()} or None
    unknown = (only or set()) - {name for name, _, _ in PAGES}
    if unknown:
        parser.error(f"unknown page(s): {', '.join(sorted(unknown))} (see --list)")
    problem = browser_problem()
    if problem:
        print(f"dashboard_screenshots: {problem}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="zebench-screenshots-") as tmp:
        print("seeding a store through bench (about 15 s)...", flush=True)
        with seeded_dashboard(Path(tmp)) as dashboard:
            print(f"worker dev on {dashboard.url}", flush=True)
            problems = shoot(dashboard, args.out, only, full_page=not args.viewport_only)
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
