"""Dashboard render time on the demo workspace (`curate demo`): its first render (goal: 2 s or less, issue 39) and a
render right after a change (goal: under 2 s).

First render: the page a maintainer meets on a server that has just started. Each repeat is a fresh Python
process (nothing imported beyond what starting the app imports, nothing derived, nothing cached) that renders
the sign-in page as a browser first shows it, signs in as a maintainer and opens the dashboard, through
``streamlit.testing.v1.AppTest``; the figure is that one page run: deriving every item's state, the figures,
the gates, and importing every module the page needs first. The app imports pandas and Plotly in the background
from the first page a server shows (``annotation_ui.components._warm_up``), so the repeat lets that finish
first, as the time a person takes to type their password does; the run says whether the page itself still
imported pandas.

With --browser (Chromium and Playwright, as the browser tests use them), the first render is also timed in
real Chromium against ``streamlit run``, with a fresh server and browser each repeat: from the click on
"Dashboard" in the sidebar to every chart and table drawn and the run finished. That adds what the browser
does: above all fetching and running Streamlit's chart code (plotly.js, 4.7 MB) and table code (1.2 MB),
which nothing in the page's Python changes. Timings on a shared 2-core machine move with its load; the load
average is printed with them.

After a change: the dashboard rendered again with nothing changed (every cache warm) is the baseline; then,
repeatedly, one change (a maintainer's decision written as an event, which moves the workspace stamp)
followed by one render: the cost a maintainer meets after each review or decision.

The run fails when a figure misses its goal (not with --smoke).

Run: python benchmarks/dashboard_demo.py [--repeats 5] [--browser] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "annotation_ui" / "app.py"
GOAL_S = 2.0
MAINTAINER = "maya"
BROWSER_TIMEOUT_MS = 180_000
"""A loaded 2-core machine can take long; what is timed is measured, not bounded by this."""
RUN_FINISHED = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
"""Streamlit shows its status widget ("Running…") while a script run is under way."""


def first_render(ws_root: str) -> dict[str, object]:
    """In this (fresh) process: the sign-in page, then the dashboard's first render as the maintainer."""
    os.environ["CURATE_WORKSPACE"] = ws_root
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from streamlit.testing.v1 import AppTest

    from annotation_ui.components import USER_KEY
    from annotation_ui.logic import SignedIn

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.run()  # the sign-in page, as a browser first shows it
    at.session_state[USER_KEY] = SignedIn(MAINTAINER, frozenset({"maintainer", "reviewer"}))
    at.switch_page("pages/sign_in.py").run()  # signed in: "You are signed in as …", nothing derived yet
    assert not at.exception, at.exception
    import threading

    for thread in threading.enumerate():  # the password's worth of time: the app's warm-up imports end
        if thread.name == "omnicurate-warm-up":
            thread.join()
    pandas_before = "pandas" in sys.modules
    start = time.perf_counter()
    at.switch_page("pages/dashboard.py").run()
    elapsed = time.perf_counter() - start
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Dashboard"], [t.value for t in at.title]
    return {
        "seconds": elapsed,
        "pandas_imported": "pandas" in sys.modules and not pandas_before,
        "charts": len(at.get("plotly_chart")),
        "tables": len(at.dataframe),
    }


def first_render_in_fresh_process(ws_root: Path) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, __file__, "--first-render-of", str(ws_root)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        raise SystemExit(f"the first render failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def chromium() -> str | None:
    """Debian's chromium (or $CURATE_CHROMIUM) when it and Playwright are there, else None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return None
    found = os.environ.get("CURATE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return found if Path(found).is_file() else None


def browser_first_render(ws_root: Path, browser_path: str, charts: int, tables: int) -> float:
    """Seconds from the click on "Dashboard" to its CHARTS charts and TABLES tables drawn and the run finished,
    in real Chromium against a freshly started server, after signing in there."""
    from playwright.sync_api import expect, sync_playwright

    from devsupport.ui_team import serve
    from omnicurate.demo import DEMO_PASSWORD

    with (
        tempfile.TemporaryDirectory(prefix="dash-browser-") as tmp,
        serve(ws_root, Path(tmp) / "st.log") as url,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=browser_path)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(BROWSER_TIMEOUT_MS)
            page.goto(url)
            page.get_by_label("Your name", exact=True).fill(MAINTAINER)
            page.get_by_label("Password", exact=True).fill(DEMO_PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_text("You are signed in as").wait_for()
            page.wait_for_function(RUN_FINISHED)
            start = time.perf_counter()
            page.get_by_role("link", name="Dashboard").click()
            page.get_by_role("heading", name="Items", exact=True).wait_for()
            drawn = page.locator('[data-testid="stPlotlyChart"]:has(.main-svg)')
            expect(drawn).to_have_count(charts, timeout=BROWSER_TIMEOUT_MS)
            grids = page.locator('[data-testid="stDataFrame"]:has(canvas)')
            expect(grids).to_have_count(tables, timeout=BROWSER_TIMEOUT_MS)
            page.wait_for_function(RUN_FINISHED)
            return time.perf_counter() - start
        finally:
            browser.close()


def load_average() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def verdict(seconds: float, strict: bool) -> str:
    ok = seconds < GOAL_S if strict else seconds <= GOAL_S
    return "ok" if ok else "OVER GOAL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--browser", action="store_true", help="also time the first render in real Chromium")
    parser.add_argument("--smoke", action="store_true", help="one repeat (CI smoke run)")
    parser.add_argument("--first-render-of", metavar="WORKSPACE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.first_render_of:  # the child process of a first render
        print(json.dumps(first_render(args.first_render_of)))
        return 0
    repeats = 1 if args.smoke else args.repeats
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from streamlit.testing.v1 import AppTest

    from annotation_ui.components import USER_KEY
    from annotation_ui.logic import SignedIn
    from curation.tables import Event
    from omnicurate.demo import build_demo

    browser_path = chromium() if args.browser else None
    print(load_average(), "(before)")
    with tempfile.TemporaryDirectory(prefix="dash-bench-") as tmp:
        ws = build_demo(Path(tmp) / "demo", log=lambda _m: None)
        firsts = [first_render_in_fresh_process(ws.root) for _ in range(repeats)]
        first = statistics.median(float(r["seconds"]) for r in firsts)  # type: ignore[arg-type]
        in_browser: list[float] = []
        if browser_path is not None:
            charts, tables = int(firsts[0]["charts"]), int(firsts[0]["tables"])  # type: ignore[call-overload]
            in_browser = [browser_first_render(ws.root, browser_path, charts, tables) for _ in range(repeats)]

        os.environ["CURATE_WORKSPACE"] = str(ws.root)
        at = AppTest.from_file(str(APP), default_timeout=600)
        at.session_state[USER_KEY] = SignedIn(MAINTAINER, frozenset({"maintainer", "reviewer"}))
        at.run()
        at.switch_page("pages/dashboard.py").run()  # warm-up: imports, first derivation
        assert not at.exception, at.exception

        def render() -> float:
            start = time.perf_counter()
            at.run()
            elapsed = time.perf_counter() - start
            assert not at.exception, at.exception
            return elapsed

        def change() -> None:
            with ws.writing() as s:
                s.add(Event(actor="bench", action="bench.touch", subject="item:kitchen-01-a"))

        warm = [render() for _ in range(repeats)]
        after_change = []
        for _ in range(repeats):
            change()
            after_change.append(render())
        ws.close()
    base, changed = statistics.median(warm), statistics.median(after_change)
    spread = ", ".join(f"{float(r['seconds']):.3f}" for r in firsts)  # type: ignore[arg-type]
    pandas = "yes" if any(r["pandas_imported"] for r in firsts) else "no"
    print(f"{'what':<44} {'seconds':>9}")
    print(
        f"{'dashboard, first render (fresh process)':<44} {first:>9.3f}  (median of {spread}; pandas imported: {pandas})"
    )
    if in_browser:
        seen = ", ".join(f"{s:.2f}" for s in in_browser)
        print(f"{'dashboard, first render in Chromium':<44} {statistics.median(in_browser):>9.3f}  (median of {seen})")
    print(f"{'dashboard, nothing changed':<44} {base:>9.3f}  (baseline)")
    print(f"{'dashboard, after a change':<44} {changed:>9.3f}  ({changed / base:.1f}x the baseline)")
    goals = [(first, False), (changed, True)]
    print(f"first render: {first:.2f} s (goal <= {GOAL_S:g} s: {verdict(first, strict=False)})")
    if in_browser:
        seen_median = statistics.median(in_browser)
        goals.append((seen_median, False))
        print(f"first render in Chromium: {seen_median:.2f} s (goal <= {GOAL_S:g} s: {verdict(seen_median, False)})")
    elif args.browser:
        print("first render in Chromium: not measured (no chromium or no playwright; set CURATE_CHROMIUM)")
    print(f"render after a change: {changed:.2f} s (goal < {GOAL_S:g} s: {verdict(changed, strict=True)})")
    print(load_average(), "(after)")
    ok = all(verdict(seconds, strict) == "ok" for seconds, strict in goals)
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    raise SystemExit(main())
