"""Issue 21's cases 6–9 in a real headless Chromium against ``streamlit run``.

6. Judge pages: a drafted checklist entry written as Markdown and HTML shows as typed and makes the browser
   fetch nothing; annotators see "Sample N", never a sample id or a system name, in the page or the websocket.
7. Story pages: the maintainer's dashboard and the author pages work in a story workspace; a drop's reason
   reaches the author's inbox as typed (the drop made with the D key).
8. One app for every kind: the sidebar holds only the kinds' and roles' pages, the funnel only the kind's
   stages, no server path unless a maintainer, a signed-out deep link opens after sign-in, and a page that
   fails names the error without a traceback.
9. The dashboard refreshes itself: a record made elsewhere shows without a click.
"""

from __future__ import annotations

import re
import time

import pytest
from judge_helpers import build_judge_template, copy_workspace
from playwright.sync_api import Page, expect
from test_judge_pages import hostile_draft
from test_ui_browser import TIMEOUT, records, settled, sign_in, wait_for_session_cookie
from ui_helpers import PASSWORD, advance, promote_story

from annotation_ui.logic import submit_review
from curation.kinds.judge import sample_store, task_store
from curation.screening.items import STORY_AUTHOR
from curation.workspace import Workspace

pytestmark = pytest.mark.browser
HOSTILE = "Is it **bold**? ![x](http://192.0.2.1/x.png) <img src=http://192.0.2.1/y.png>"


def watch(page: Page) -> tuple[list[str], list[bytes]]:
    """Every URL the page requests, and every websocket frame the server sends it."""
    requests: list[str] = []
    frames: list[bytes] = []
    page.on("request", lambda r: requests.append(r.url))

    def on_socket(socket) -> None:  # type: ignore[no-untyped-def]
        socket.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode()))

    page.on("websocket", on_socket)
    return requests, frames


def sidebar_links(page: Page) -> list[str]:
    """The sidebar's page titles (each link's last line: the first is its icon's name)."""
    return [t.strip().splitlines()[-1] for t in page.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()]


def test_judge_pages_show_entries_as_typed_and_name_no_system(page: Page, tmp_path, serve_app):
    template = build_judge_template(tmp_path / "template", tasks=("t2t-01", "v2t-01"))
    ws = copy_workspace(template, tmp_path / "ws")
    hostile_draft(ws, HOSTILE)
    url = serve_app(ws)
    page.set_default_timeout(TIMEOUT)
    requests, frames = watch(page)

    sign_in(page, url, "ann1")
    assert sidebar_links(page) == [
        "Query screening",
        "Checklist curation",
        "Response review",
        "Score annotation",
        "Pair annotation",
        "Sign in",
    ]  # a judge workspace: no mcq or story review page
    page.get_by_role("link", name="Checklist curation").click()
    expect(page.get_by_role("heading", name="Checklist curation")).to_be_visible()
    settled(page)
    expect(page.get_by_text(HOSTILE, exact=True)).to_be_visible()  # the entry as typed
    assert page.locator('[data-testid="stMain"] strong', has_text="bold").count() == 0
    assert page.locator('[data-testid="stMain"] img[src*="192.0.2.1"]').count() == 0
    assert not [u for u in requests if "192.0.2.1" in u], "the page fetched from another machine"

    page.get_by_role("link", name="Score annotation").click()
    expect(page.get_by_text("Sample 1", exact=True)).to_be_visible()
    settled(page)
    page.get_by_role("link", name="Pair annotation").click()
    expect(page.get_by_text("Sample 1", exact=True)).to_be_visible()
    settled(page)
    page.get_by_role("link", name="Response review").click()
    expect(page.get_by_role("heading", name="Response review")).to_be_visible()
    settled(page)
    html, wire = page.content(), b"".join(frames)
    systems = {r.system for r in task_store.responses(ws)}
    samples = [s.id for s in sample_store.samples(ws, "score")] + [s.id for s in sample_store.samples(ws, "pair")]
    assert systems and samples and len(frames) > 10
    for secret in sorted(systems) + samples:
        assert secret not in html, f"{secret} in the page"
        assert secret.encode() not in wire, f"{secret} in a websocket frame"
    assert not [u for u in requests if not u.startswith(url) and not u.startswith("data:")]


@pytest.fixture
def story_server(tmp_path, serve_app):
    ws = Workspace.init(tmp_path / "ws")  # SQLite only: the domain runs on both backends in the AppTests
    items = promote_story(ws, tmp_path / "corpus", books=6, top=2)
    ws.add_person("maya", ["maintainer"])
    for name in ("rev1", "rev2", "maya", STORY_AUTHOR):
        ws.set_password(name, PASSWORD)
    return serve_app(ws), ws, items


def test_story_workspace_pages_dashboard_and_a_drops_reason(page: Page, story_server):
    url, ws, items = story_server
    page.set_default_timeout(TIMEOUT)
    requests, _ = watch(page)
    # signed out: no server path; a deep link asks to sign in there, then opens that page (not maya's first)
    page.context.clear_cookies()
    page.goto(f"{url}/history")
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()
    assert "Page not found" not in page.content() and str(ws.root) not in page.content()
    page.get_by_label("Your name", exact=True).fill("maya")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Item history")).to_be_visible()  # was: "Page not found"
    wait_for_session_cookie(page)
    settled(page)
    assert page.url.endswith("/history")
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    settled(page)
    expect(page.get_by_text(f"Workspace: {ws.root}")).to_be_visible()  # a maintainer sees it
    assert sidebar_links(page) == ["Dashboard", "Item history", "Sign in"]  # no mcq adjudication, no judging
    main = page.locator('[data-testid="stMain"]')
    assert "KeyError" not in main.inner_text() and "Traceback" not in page.content()
    expect(main.get_by_text("Returned to authors")).to_be_visible()
    funnel = main.locator('[data-testid="stPlotlyChart"]').first
    expect(funnel).to_contain_text("filter")
    assert "grammar" not in funnel.inner_text() and "checklist" not in funnel.inner_text()
    assert "Release blocked" not in main.inner_text()
    returned = main.locator('[data-testid="stMetric"]', has_text="Returned to authors")
    expect(returned).to_contain_text("0")
    stamp = main.get_by_text(re.compile(r"^Updated \d\d:\d\d:\d\d")).inner_text()

    # case 9: a drop recorded elsewhere shows on the open dashboard by itself
    reason = "the next page **does not** follow <b>at all</b>"
    submit_review(ws, {"item": items[0], "stage": "filter", "reviewer": "rev2", "verdict": "drop", "reason": reason})
    started = time.monotonic()
    expect(returned).to_contain_text("1", timeout=15_000)
    assert time.monotonic() - started < 15
    assert main.get_by_text(re.compile(r"^Updated \d\d:\d\d:\d\d")).inner_text() != stamp

    # case 7: a reviewer drops with the D key; the sidebar holds the story stages only
    sign_in(page, url, "rev1")
    assert sidebar_links(page) == ["Story filter", "Story revise", "Sign in"]
    assert str(ws.root) not in page.content()
    page.get_by_role("link", name="Story filter").click()
    expect(page.get_by_role("heading", name="Filter story transitions")).to_be_visible()
    settled(page)
    expect(page.get_by_text("K keep · D drop")).to_be_visible()  # the shortcuts, said on the page
    page.get_by_label("Reason (required to drop)").fill("pages 3 and 4 do not connect")
    page.evaluate("document.activeElement.blur()")  # keys typed into a text box are text, not shortcuts
    page.keyboard.press("d")
    expect(page.get_by_text(f"Recorded your filter verdict on {items[1]}.")).to_be_visible()

    sign_in(page, url, STORY_AUTHOR)
    page.get_by_role("link", name="Returned to you").click()
    expect(page.get_by_text(reason, exact=True)).to_be_visible()  # the reason as typed, not only filter:drop
    expect(page.get_by_text("pages 3 and 4 do not connect", exact=True)).to_be_visible()
    assert page.get_by_role("button", name="Edit this item").count() == 0
    # the authoring form writes mcq items: a story workspace does not offer it (AppTest: it says so, no crash)
    assert sidebar_links(page) == ["Returned to you", "Sign in"]
    # ... and its address says why, not "Page not found"; so does a page of a role the person lacks
    page.goto(f"{url}/author")
    expect(page.get_by_text("works on mcq units, and this workspace holds story_transition")).to_be_visible()
    page.goto(f"{url}/adjudication")
    note = f"is for people with the maintainer role; you are signed in as {STORY_AUTHOR} (author)"
    expect(page.get_by_text(note)).to_be_visible()
    assert "Page not found" not in page.content() and "Adjudicate checklists" not in sidebar_links(page)
    assert not [u for u in requests if not u.startswith(url) and not u.startswith("data:")]


def test_a_failing_page_names_the_error_without_a_traceback(page: Page, story_server):
    url, ws, items = story_server
    page.set_default_timeout(TIMEOUT)
    for path in (ws.root / "media").rglob("*"):  # the media store lost its files behind the app's back
        if path.is_file():
            path.unlink()
    sign_in(page, url, "rev1")
    page.get_by_role("link", name="Story filter").click()
    alert = page.locator('[data-testid="stAlert"]', has_text="unexpected error")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("reference")
    assert "Traceback" not in page.content() and str(ws.root) not in page.content()
    assert page.locator('[data-testid="stException"]').count() == 0


def test_number_keys_tick_the_checklist(page: Page, streamlit_server):
    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    advance(ws, "g1-a", "A", through="audio_signoff")
    sign_in(page, url, "rev1")
    page.get_by_role("link", name="Subset checklist").click()
    expect(page.get_by_text("View 1 of 7")).to_be_visible()
    settled(page)
    boxes = page.locator('[data-testid="stCheckbox"] input')
    expect(page.get_by_text(re.compile(r"^Keyboard: 1–5 tick an option"))).to_be_visible()
    expect(boxes).to_have_count(5)  # A–D and "no option fits"
    page.keyboard.press("2")
    expect(boxes.nth(1)).to_be_checked()
    settled(page)
    page.keyboard.press("n")
    expect(page.get_by_text("View 2 of 7")).to_be_visible()
    expect(page.get_by_text("1 of 7 views answered")).to_be_visible()


def test_number_keys_answer_the_blind_check_and_ctrl_enter_submits(page: Page, streamlit_server):
    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    advance(ws, "g1-a", "A", through="subset_checklist")
    sign_in(page, url, "rev5")
    page.get_by_role("link", name="Blind answer check").click()
    answer = page.get_by_role("radiogroup", name="Your answer")
    expect(answer.locator("input")).to_have_count(4)
    settled(page)
    expect(page.get_by_text(re.compile(r"^Keyboard: 1–4 choose an option"))).to_be_visible()
    page.keyboard.press("2")
    expect(answer.locator("input").nth(1)).to_be_checked()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Recorded your answer for g1-a.")).to_be_visible()
    assert [r.payload["answer"] for r in records(ws, "g1-a", "answer_check")] == ["B"]
