"""A team in real Chromium: N people, each in their own browser context, answer the blind answer check of one
shared queue at once against ``streamlit run`` (issue 21's team test and ``benchmarks/ui_team.py``).

Every click's outcome is what the page says: recorded, or told why not (someone else got there first, the
content changed). The checks: each click has an outcome; every "recorded" has exactly one stored record and
every stored record a "recorded"; no label marker in any page's HTML or websocket frames.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devsupport.media_factory import item_row, write_items
from devsupport.reviews import CHECKLIST, GRAMMAR, LISTENERS, PASSING_EXCLUSIONS, consistent_sets

PASSWORD = "team-password-1"
APP = Path(__file__).resolve().parents[1] / "annotation_ui" / "app.py"
LABEL_MARKERS = (re.compile(rb"\xe2\x86\x90 answer"), re.compile(rb'"answer"\s*:'))
"""What would mark a label in a blind page: the "← answer" mark of label pages, an ``"answer":`` field."""
OUTCOME_TIMEOUT_MS = 60_000
SIGN_IN_TIMEOUT_MS = 180_000
"""Eight password checks at once on a loaded 2-core machine take a while; signing in is not what is timed."""
SIGN_IN_RETRY_MS = 30_000
"""How long a submitted sign-in may show nothing before the settled form is submitted again."""


def team_names(n: int) -> list[str]:
    return [f"t{k:02d}" for k in range(1, n + 1)]


def build_team_workspace(ws: Any, src: Path, items: int, people: int) -> None:
    """Fill the empty workspace WS: ITEMS items (pairs of sisters, half in Chinese; media written under SRC)
    waiting for their blind answer check, and PEOPLE reviewers who hold no role on any of them (each may
    answer any, under TRIAD's separation)."""
    from curation.items import import_items
    from curation.reviews import PendingReview, record_reviews
    from curation.schema import REVIEW_MODELS

    ws.add_person("ann1", ["author"])
    for name in (*GRAMMAR, *LISTENERS, *CHECKLIST):
        if name not in {p.name for p in ws.people()}:
            ws.add_person(name, ["reviewer"])
    for name in team_names(people):
        ws.add_person(name, ["reviewer"])
        ws.set_password(name, PASSWORD)
    rows = []
    for k in range(items):
        group, sister = f"g{k // 2:03d}", "ab"[k % 2]
        context = "她说：“真是个好主意。”" if k % 4 >= 2 else f"Sure, that was a really helpful suggestion ({k // 2})."
        rows.append(
            item_row(
                f"{group}-{sister}",
                group=group,
                answer="AB"[k % 2],
                context=context,
                language="zh" if k % 4 >= 2 else "en",
            )
        )
    import_items(ws, write_items(src, rows))
    records: list[dict[str, Any]] = []
    for row in rows:
        item = row["id"]
        records += [{"item": item, "stage": "grammar", "reviewer": r, "verdict": "pass"} for r in GRAMMAR]
        scores = {"naturalness": 4, "clarity": 5, "artefacts": 4}
        records += [{"item": item, "stage": "audio_signoff", "reviewer": r, "scores": scores} for r in LISTENERS]
        consistent = consistent_sets(row["answer"])
        records += [
            {
                "item": item,
                "stage": "subset_checklist",
                "reviewer": r,
                "consistent": consistent,
                "exclusions": dict(PASSING_EXCLUSIONS),
            }
            for r in CHECKLIST
        ]
    pending = [PendingReview(0, REVIEW_MODELS[r["stage"]].model_validate(r)) for r in records]  # type: ignore[arg-type]
    record_reviews(ws, pending)


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 60) -> None:  # type: ignore[type-arg]
    """Until the Streamlit server at URL answers its health check; RuntimeError with LOG when PROC ends first or
    SECONDS pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not start:\n{log.read_text()}")
        time.sleep(0.2)


@dataclass(frozen=True)
class Served:
    url: str
    pid: int


@contextmanager
def serve(ws_root: Path, log: Path) -> Iterator[str]:
    """``streamlit run`` of the app over the workspace at WS_ROOT on a free port; stopped at the end."""
    with serving(ws_root, log) as served:
        yield served.url


@contextmanager
def serving(ws_root: Path, log: Path) -> Iterator[Served]:
    """:func:`serve`, with the server's process id (whose CPU :class:`CpuSplit` counts)."""
    from omnicurate.cli.ui import streamlit_command

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with log.open("w") as out:
        proc = subprocess.Popen(
            streamlit_command(APP, "127.0.0.1", port),
            env={**os.environ, "CURATE_WORKSPACE": str(ws_root)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc, log)
            yield Served(url, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


class CpuSplit:
    """Where the machine's CPU went while a team worked (Linux, from /proc): the app server's CPU-seconds, and the
    whole machine's busy CPU-seconds out of what its cores could give in that time. On one machine the rest is
    the browsers' (and this process's), which on 2 cores is most of it: the latencies then measure the browsers."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.figures: dict[str, float] = {}

    def __enter__(self) -> CpuSplit:
        self._start = (time.monotonic(), _machine_busy_s(), _process_cpu_s(self.server_pid))
        return self

    def __exit__(self, *exc: object) -> None:
        wall, busy, server = (time.monotonic(), _machine_busy_s(), _process_cpu_s(self.server_pid))
        if busy is None or server is None or self._start[1] is None or self._start[2] is None:
            return  # no /proc here: no split
        capacity = (wall - self._start[0]) * (os.cpu_count() or 1)
        self.figures = {
            "server_cpu_s": round(server - self._start[2], 1),
            "machine_busy_cpu_s": round(busy - self._start[1], 1),
            "machine_capacity_cpu_s": round(capacity, 1),
        }


def _machine_busy_s() -> float | None:
    try:
        ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


def _process_cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@dataclass
class Click:
    person: str
    item: str
    outcome: str
    """``recorded``, ``told`` (someone else's record or a change: not recorded, and said why) or ``none``."""
    seconds: float
    said: str = ""


@dataclass
class TeamRun:
    clicks: list[Click] = field(default_factory=list)
    frames: int = 0
    leaks: list[str] = field(default_factory=list)

    def latencies(self) -> list[float]:
        return sorted(c.seconds for c in self.clicks if c.outcome != "none")


async def _sign_in(page: Any, name: str) -> None:
    """Sign NAME in through the form. A submission can be lost when the page's websocket reconnects (seen in CI
    with 8 browsers beside a vLLM engine: the form stayed, settled, for 180 s): once the page has settled still
    showing the form, fill it and submit again, as a person would, until SIGN_IN_TIMEOUT_MS is up."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    signed_in = page.get_by_text("You are signed in as")
    settled = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    submit = page.get_by_role("button", name="Sign in")
    deadline = time.monotonic() + SIGN_IN_TIMEOUT_MS / 1000
    while True:
        await page.get_by_label("Your name", exact=True).fill(name)
        await page.get_by_label("Password", exact=True).fill(PASSWORD)
        await submit.click()
        try:
            await signed_in.wait_for(timeout=SIGN_IN_RETRY_MS)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
            await settled.wait_for(timeout=SIGN_IN_TIMEOUT_MS)
            if await signed_in.count():
                return


async def _person(browser: Any, url: str, name: str, seconds: float, run: TeamRun) -> None:
    context = await browser.new_context()
    page = await context.new_page()

    def on_socket(socket_: Any) -> None:
        def on_frame(payload: Any) -> None:
            run.frames += 1
            data = payload if isinstance(payload, bytes) else str(payload).encode()
            if any(marker.search(data) for marker in LABEL_MARKERS):
                run.leaks.append(f"{name}: websocket frame")

        socket_.on("framereceived", on_frame)

    page.on("websocket", on_socket)
    page.set_default_timeout(OUTCOME_TIMEOUT_MS)
    await page.goto(url)
    await _sign_in(page, name)
    await page.get_by_role("link", name="Blind answer check").click()
    settled = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    answer = page.get_by_role("radiogroup", name="Your answer")
    empty = page.get_by_text("Nothing waits for you here", exact=False)
    go_on = page.get_by_role("button", name="Go on to the next item")
    deadline = time.monotonic() + seconds  # from the queue page on: signing in is not part of the time
    while time.monotonic() < deadline:
        await settled.wait_for()  # the run a click started has ended: no element of the one before lingers
        await answer.or_(empty).or_(go_on).first.wait_for()
        if await empty.count():
            break
        if await go_on.count():
            await go_on.click()
            await go_on.wait_for(state="detached")
            continue
        picked = page.get_by_role("radiogroup", name="Pick an item").locator("label:has(input:checked)")
        item = (await picked.inner_text()).strip()
        if "\u2190 answer" in await page.content():
            run.leaks.append(f"{name}: page HTML on {item}")
        await answer.locator("label").first.click()
        try:
            await answer.locator("input:checked").wait_for(timeout=5_000)
        except Exception:  # a run replaced the form under the click (nothing was submitted): look again
            continue
        started = time.monotonic()
        await page.get_by_role("button", name=re.compile(r"^Submit")).click()  # the name carries its shortcut
        recorded = page.get_by_text(f"Recorded your answer for {item}.")
        told = page.get_by_text("Not recorded", exact=False)
        try:
            await recorded.or_(told).first.wait_for()
        except Exception:  # no outcome at all: a lost click
            run.clicks.append(Click(name, item, "none", time.monotonic() - started))
            break
        seconds = time.monotonic() - started
        if await recorded.count():
            run.clicks.append(Click(name, item, "recorded", seconds))
        else:
            run.clicks.append(Click(name, item, "told", seconds, (await told.first.inner_text())[:300]))
    await context.close()


async def _team(url: str, names: list[str], seconds: float, chromium: str) -> TeamRun:
    from playwright.async_api import async_playwright

    run = TeamRun()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium)
        await asyncio.gather(*(_person(browser, url, name, seconds, run) for name in names))
        await browser.close()
    return run


def run_team(url: str, names: list[str], seconds: float, chromium: str) -> TeamRun:
    """Each of NAMES signs in and answers blind checks until SECONDS are up or their queue is empty.

    The event loop runs in a thread of its own: in a test session pytest-playwright's sync API may already run
    one in this thread, and ``asyncio.run`` refuses to start a second there."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _team(url, names, seconds, chromium)).result()


def problems(ws: Any, run: TeamRun) -> list[str]:
    """What went wrong: clicks without an outcome, records without a "recorded", "recorded" without a record,
    doubled records, leaked labels."""
    from sqlalchemy import select

    from curation.tables import ReviewRecord

    with ws.session() as s:
        stored = [
            (r.subject.removeprefix("item:"), r.reviewer)
            for r in s.scalars(select(ReviewRecord).where(ReviewRecord.stage == "answer_check"))
        ]
    found = [f"no outcome: {c.person} on {c.item}" for c in run.clicks if c.outcome == "none"]
    if not run.clicks:
        found.append("nobody clicked: the queue page never offered an item")
    recorded = [(c.item, c.person) for c in run.clicks if c.outcome == "recorded"]
    told = {(c.item, c.person) for c in run.clicks if c.outcome == "told"}
    found += [f"doubled record: {pair}" for pair in {p for p in stored if stored.count(p) > 1}]
    found += [f"recorded twice on screen: {pair}" for pair in {p for p in recorded if recorded.count(p) > 1}]
    found += [f"lost: {pair} said recorded, not stored" for pair in set(recorded) - set(stored)]
    found += [f"silent: {pair} stored, never said recorded" for pair in set(stored) - set(recorded)]
    found += [f"told but stored: {pair}" for pair in told & set(stored) - set(recorded)]
    return found + run.leaks


def percentile(values: list[float], q: float) -> float | None:
    """The Q-quantile (nearest rank) of VALUES; None when there are none (never a bare NaN)."""
    ordered = sorted(values)
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 3)


def surplus(ws: Any, quorum: int = 1) -> int:
    """Blind-check records beyond the stage's quorum, summed over items (concurrent submissions must store none)."""
    from collections import Counter

    from sqlalchemy import select

    from curation.tables import ReviewRecord

    with ws.session() as s:
        per_item = Counter(s.scalars(select(ReviewRecord.subject).where(ReviewRecord.stage == "answer_check")))
    return sum(max(0, n - quorum) for n in per_item.values())


def summary(run: TeamRun, ws: Any | None = None) -> dict[str, Any]:
    """The run's figures: clicks and their outcomes, the share of submissions refused after the work was done,
    click-to-outcome p50/p95 and, given the workspace, records beyond the quorum."""
    lat = run.latencies()
    clicks = len(run.clicks)
    told = sum(c.outcome == "told" for c in run.clicks)
    figures: dict[str, Any] = {
        "clicks": clicks,
        "recorded": sum(c.outcome == "recorded" for c in run.clicks),
        "told": told,
        "refused_share": round(told / clicks, 3) if clicks else None,
        "no_outcome": sum(c.outcome == "none" for c in run.clicks),
        "frames": run.frames,
        "p50_s": percentile(lat, 0.5),
        "p95_s": percentile(lat, 0.95),
    }
    if ws is not None:
        figures["surplus"] = surplus(ws)
    return figures
