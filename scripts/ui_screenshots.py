"""Take the annotation UI screenshots in docs/ (sign-in, subset checklist, dashboard) on the demo data.

The dashboard and sign-in are shot on `curate demo`'s workspace; the checklist on the same items with
only the grammar and audio sign-off reviews recorded, so that items wait at the subset checklist.
Needs the `dev` extra and Debian's chromium. Run: python scripts/ui_screenshots.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
APP = ROOT / "annotation_ui" / "app.py"


@contextmanager
def serve(workspace: Path) -> Iterator[str]:
    from omnicurate.cli.ui import streamlit_command

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "CURATE_WORKSPACE": str(workspace)}
    proc = subprocess.Popen(
        streamlit_command(APP.parent / "entry" / "main.py", "127.0.0.1", port),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def choose(page: Page, label: str, option: str) -> None:
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    if box.get_attribute("aria-expanded") != "true":
        box.press("ArrowDown")
    page.get_by_role("option", name=option, exact=True).click()


def sign_in(page: Page, url: str, name: str, password: str) -> None:
    page.goto(url)
    choose(page, "Your name", name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("You are signed in as")).to_be_visible()


def partial_demo(root: Path) -> Path:
    """The demo's items with only their grammar and audio sign-off reviews: they wait at the checklist."""
    from curation.items import import_items
    from curation.reviews import import_reviews
    from curation.workspace import Workspace
    from omnicurate.demo import DATA, DEMO_PASSWORD, PEOPLE

    ws = Workspace.init(root)
    for name, roles in PEOPLE.items():
        ws.add_person(name, roles)
        ws.set_password(name, DEMO_PASSWORD)
    import_items(ws, DATA / "items.jsonl", actor="demo")
    early = [
        line
        for line in (DATA / "reviews.jsonl").read_text().splitlines()
        if json.loads(line)["stage"] in ("grammar", "audio_signoff")
    ]
    (root / "early-reviews.jsonl").write_text("\n".join(early) + "\n")
    import_reviews(ws, root / "early-reviews.jsonl")
    ws.close()
    return root


def main() -> int:
    from omnicurate.demo import DEMO_PASSWORD, build_demo

    DOCS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ui-shots-") as tmp:
        demo = build_demo(Path(tmp) / "demo", log=lambda _msg: None)
        demo.close()
        partial = partial_demo(Path(tmp) / "partial")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CURATE_CHROMIUM", "/usr/bin/chromium"))
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)
            with serve(demo.root) as url:
                page.goto(url)
                choose(page, "Your name", "rev1")
                page.get_by_label("Password", exact=True).fill("••••••••")
                page.screenshot(path=DOCS / "ui-sign-in.png")
                sign_in(page, url, "maya", DEMO_PASSWORD)
                page.set_viewport_size({"width": 1400, "height": 1900})
                page.get_by_role("link", name="Dashboard").click()
                expect(page.locator(".js-plotly-plot")).to_have_count(3)
                page.wait_for_timeout(1500)  # let plotly finish drawing
                page.screenshot(path=DOCS / "ui-dashboard.png")
            page.set_viewport_size({"width": 1400, "height": 1150})
            with serve(partial) as url:
                sign_in(page, url, "rev1", DEMO_PASSWORD)
                page.get_by_role("link", name="Subset checklist").click()
                for n, view in enumerate(("text", "image", "audio", "text+image", "text+audio"), start=1):
                    expect(page.get_by_text(f"View {n} of 7: {view}")).to_be_visible()
                    page.get_by_role("button", name="Next view").click()
                expect(page.get_by_text("View 6 of 7: image+audio")).to_be_visible()
                ticked = page.locator('[data-testid="stCheckbox"] input:checked')
                expect(ticked).to_have_count(0)
                for n in range(2):
                    page.locator('[data-testid="stCheckbox"] label').nth(n).click()
                    expect(ticked).to_have_count(n + 1)
                page.wait_for_timeout(500)
                page.screenshot(path=DOCS / "ui-subset-checklist.png")
            browser.close()
    for name in ("ui-sign-in.png", "ui-subset-checklist.png", "ui-dashboard.png"):
        print(DOCS / name, (DOCS / name).stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
