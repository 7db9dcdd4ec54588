"""End to end in a real headless Chromium against ``streamlit run``: an author uploads a sister item,
reviewers complete the subset checklist and the blind answer check, and the blind page's HTML is
searched for any mark of the label."""

from __future__ import annotations

import re
import time
import weakref
from pathlib import Path

import pytest
from media_factory import make_tone
from playwright.sync_api import Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from ui_helpers import CONTEXT, PASSWORD, advance, passing_record

from annotation_ui.exclusion_form import CHOICE_LABELS
from annotation_ui.logic import submit_review
from curation.tables import ReviewRecord
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS
from devsupport.reviews import PASSING_EXCLUSIONS

pytestmark = pytest.mark.browser
OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}
TIMEOUT = 30_000
expect.set_options(timeout=TIMEOUT)  # every expectation waits as long as an action: CI's machines are shared


def attest_in_browser(page: Page) -> None:
    """Answer every exclusion rule of the subset-checklist page ``pass``."""
    for rule in PASSING_EXCLUSIONS:
        group = page.locator('[data-testid="stRadio"]').filter(has_text=f"{rule}:")
        settled(page)
        group.get_by_text(CHOICE_LABELS["pass"], exact=True).click()
        settled(page)
        expect(group.locator("input:checked")).to_have_count(1)


def settled(page: Page) -> None:
    """Wait until the app has finished the run the last interaction started (state, not time): a click on an
    element that a run is replacing can be lost."""
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute(
        "data-test-script-state", "notRunning", timeout=TIMEOUT
    )


_WATCHED: weakref.WeakKeyDictionary[Page, ServerRuns] = weakref.WeakKeyDictionary()


class ServerRuns:
    """The app's full runs as the server announces them on the page's websocket (``new_session`` begins one,
    ``script_finished`` ends it; fragment runs are left out). ``settled`` reads what the browser has heard so
    far: under load a test that changes the store right after an input can act before the browser has heard of
    the run that input started, and that run then shows the change before the test's next click. ``sign_in``
    starts one for each page before it opens the app; ``ServerRuns.of(page)`` finds it."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.started: list[str] = []
        self.ended: dict[str, int] = {}
        page.on("websocket", lambda socket: socket.on("framereceived", self._frame))
        _WATCHED[page] = self

    @classmethod
    def of(cls, page: Page) -> ServerRuns:
        """The page's watcher (``sign_in`` starts one for every page it opens the app in)."""
        return _WATCHED.get(page) or cls(page)

    def _frame(self, payload: bytes | str) -> None:
        if isinstance(payload, str):
            return
        message = ForwardMsg()
        message.ParseFromString(payload)
        kind, run = message.WhichOneof("type"), message.metadata.run
        if run.fragment_ids:
            return
        if kind == "new_session":
            self.started.append(run.script_run_id)
        elif kind == "script_finished" and self.started:  # a run the server could not name is the last begun
            self.ended[run.script_run_id or self.started[-1]] = message.script_finished

    def mark(self) -> int:
        """Where the runs stand before an input: pass it to :meth:`wait_ended`."""
        return len(self.started)

    def wait_ended(self, mark: int) -> None:
        """Until a run begun after MARK has ended on the server, and did not give way to another."""
        deadline = time.monotonic() + TIMEOUT / 1000
        while not (
            len(self.started) > mark
            and self.ended.get(self.started[-1], ForwardMsg.FINISHED_EARLY_FOR_RERUN)
            != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            assert time.monotonic() < deadline, f"no run of the app ended after run {mark} ({self.started})"
            self.page.wait_for_timeout(50)  # the sync API delivers the websocket's frames while it waits
        settled(self.page)


def pick_radio(page: Page, group: str, option: str) -> None:
    """Choose OPTION of the radio group named GROUP, and wait for the run the choice starts to end on the server.

    Under load a click on a group that a run is still drawing (or has marked stale, to replace it) can be lost:
    the group then shows nothing chosen (seen in a loaded run: Submit answered "Choose pass or fail." under an
    empty verdict). A person sees that and clicks again; so does this, up to three times."""
    runs = ServerRuns.of(page)
    live = page.locator('[data-testid="stElementContainer"]:not([data-stale="true"])')
    radios = live.get_by_role("radiogroup", name=group, exact=True)
    for attempt in range(3):
        settled(page)
        mark = runs.mark()
        radios.get_by_text(option, exact=True).click()
        try:
            expect(radios.get_by_role("radio", name=option, exact=True)).to_be_checked(timeout=TIMEOUT // 3)
        except AssertionError:
            if attempt == 2:
                raise
            continue
        runs.wait_ended(mark)
        return


def choose(page: Page, label: str, option: str) -> None:
    """Pick an option of a selectbox or multiselect.

    After a rerun a click sometimes only focuses the box; typing the option's text opens the list either way
    and leaves only matching options, so the option is clicked once it is listed.
    """
    settled(page)
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    box.press_sequentially(option)
    page.get_by_role("option", name=option, exact=True).click()
    settled(page)


def type_into(page: Page, label: str, text: str, *, exact: bool = False) -> None:
    """Type a field and leave it, as a person does (Tab): the value is committed and the run it starts has
    ended before the next step, so no later click lands on an element that run is replacing."""
    field = page.get_by_label(label, exact=exact)
    field.fill(text)
    field.press("Tab")
    settled(page)


def upload(page: Page, uploader: int, path: Path) -> None:
    """Drop a file on the page's n-th uploader and wait for the run the upload starts to end on the server.

    The file's name shows before that run starts (under load, seconds before), so waiting for the page to be
    settled is not enough: an element clicked before that run ends can be replaced by it and the click lost.
    The page's script-state attribute cannot say it either: a run that starts and ends within one of the
    browser's renders never changes it (seen in CI: a wait for the change timed out)."""
    settled(page)
    runs = ServerRuns.of(page)
    mark = runs.mark()
    page.locator('[data-testid="stFileUploader"]').nth(uploader).locator(
        '[data-testid="stFileUploaderDropzoneInput"]'
    ).set_input_files(str(path))
    expect(page.locator('[data-testid="stFileUploader"]').nth(uploader)).to_contain_text(path.name)
    runs.wait_ended(mark)


def expect_said(page: Page, text: str) -> None:
    """Expect a message on the page; when it does not come, fail with what the page said instead."""
    try:
        expect(page.get_by_text(text)).to_be_visible()
    except AssertionError:
        said = page.locator('[data-testid="stAlert"], [data-testid="stException"]').all_inner_texts()
        raise AssertionError(f"{text!r} was not shown; the page said: {said}") from None


def sign_in(page: Page, url: str, name: str) -> None:
    ServerRuns.of(page)  # watching the page's websocket from before it opens the app
    page.context.clear_cookies()  # else the session cookie signs the previous person back in
    page.goto(url)  # a fresh browser session
    page.get_by_label("Your name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("You are signed in as")).to_be_visible(timeout=TIMEOUT)
    wait_for_session_cookie(page)


def wait_for_session_cookie(page: Page) -> None:
    """The cookie is written by a script the page runs after it shows "signed in"; a reload before that
    script ran starts an anonymous session (a person does not reload within milliseconds; a test does)."""
    from annotation_ui.signin import COOKIE

    page.wait_for_function(f"document.cookie.includes('{COOKIE}=')", timeout=TIMEOUT)


def records(ws, item: str, stage: str) -> list[ReviewRecord]:
    from sqlalchemy import select

    with ws.session() as s:
        rows = s.execute(
            select(ReviewRecord).where(ReviewRecord.subject == f"item:{item}", ReviewRecord.stage == stage)
        )
        return list(rows.scalars())


def item_ids(ws) -> set[str]:
    from sqlalchemy import select

    from curation.tables import Item

    with ws.session() as s:
        return set(s.execute(select(Item.id)).scalars())


def test_author_then_reviewers_in_a_browser(page: Page, streamlit_server, tmp_path):
    url, ws, media = streamlit_server
    page.set_default_timeout(TIMEOUT)

    # ----- the author writes a sister of g1-a: same image and text, its own audio, answer B -----
    sign_in(page, url, "ann1")
    page.get_by_role("link", name="Write or edit an item").click()
    expect(page.locator('[data-testid="stFileUploader"]')).to_have_count(2)
    upload(page, 0, media / "shared.jpg")
    expect(page.locator('[data-testid="stImage"]')).to_have_count(1)
    upload(page, 1, make_tone(tmp_path / "sarcastic take.wav", freq=523.0, seconds=1.5))
    expect(page.locator('[data-testid="stAudio"]')).to_have_count(1)
    group = page.get_by_label("Scene group id (an existing group, or a new one)")
    group.fill("g1")
    group.press("Enter")
    expect(page.get_by_text("sisters: g1-a")).to_be_visible()
    settled(page)
    type_into(page, "Item id", "g1-b", exact=True)
    type_into(page, "Context (the text modality)", CONTEXT)
    type_into(page, "Question", "How does the speaker feel about the suggestion?", exact=True)
    for key, text in OPTIONS.items():
        type_into(page, f"Option {key}", text, exact=True)
    choose(page, "Answer", "B")
    choose(page, "Text leaf", "pragmatic")
    choose(page, "Image leaf", "semiotic")
    choose(page, "Audio leaf", "prosodic")
    ambiguous = "Ambiguous modalities (each is ambiguous alone; the count is the tier)"
    choose(page, ambiguous, "text")
    choose(page, ambiguous, "audio")
    page.keyboard.press("Escape")
    type_into(page, "Image licence (SPDX)", "CC0-1.0")
    choose(page, "Audio source", "voice_acting")
    type_into(page, "Audio licence (SPDX)", "CC-BY-4.0")
    page.get_by_role("button", name="Save item").click()
    expect_said(page, "Item g1-b created.")
    item = ws.item("g1-b")
    assert (item.author, item.answer, item.image) == ("ann1", "B", ws.item("g1-a").image)

    # grammar and audio sign-off are recorded through the domain (their pages have AppTest tests)
    for stage, reviewers in (("grammar", ["rev1", "rev2"]), ("audio_signoff", ["rev3", "rev5"])):
        for reviewer in reviewers:  # TRIAD's separation: grammar reviewers do not also listen
            submit_review(ws, passing_record("g1-b", stage, reviewer, "B"))

    # ----- a reviewer completes the subset checklist, one view at a time -----------------------
    sign_in(page, url, "rev3")
    page.get_by_role("link", name="Subset checklist").click()
    for n, view in enumerate(CHECKLIST_VIEWS):
        expect(page.get_by_text(f"View {n + 1} of 7: {view}")).to_be_visible()
        settled(page)  # the previous view's elements are gone only once the run has finished
        shown = set(view.split("+"))
        expect(page.locator('[data-testid="stImage"]')).to_have_count(1 if "image" in shown else 0)
        expect(page.locator('[data-testid="stAudio"]')).to_have_count(1 if "audio" in shown else 0)
        for modality in {"text", "image", "audio"} - shown:
            expect(page.get_by_text(PLACEHOLDERS[modality])).to_be_visible()
        ticked = page.locator('[data-testid="stCheckbox"] input:checked')
        expect(ticked).to_have_count(0)  # this view's boxes have replaced the previous view's
        ticks = ["B"] if view == "text+image+audio" else list(OPTIONS)
        for n_ticked, key in enumerate(ticks, start=1):
            page.get_by_text(f"{key}. {OPTIONS[key]}", exact=True).click()
            expect(ticked).to_have_count(n_ticked)
            settled(page)
        expect(page.get_by_text(f"{n + 1} of 7 views answered")).to_be_visible()  # this view counts, none lost
        if n < len(CHECKLIST_VIEWS) - 1:
            page.get_by_role("button", name="Next view").click()
            settled(page)  # the previous view's elements linger until the run that replaces them ends
    attest_in_browser(page)
    page.get_by_role("button", name="Submit checklist").click()
    expect(page.get_by_text("Recorded your checklist for g1-b.")).to_be_visible()
    (checklist,) = records(ws, "g1-b", "subset_checklist")
    assert checklist.reviewer == "rev3" and checklist.payload["consistent"]["text+image+audio"] == ["B"]
    assert checklist.payload["consistent"]["image+audio"] == list(OPTIONS)
    for reviewer in ("rev1", "rev2"):
        submit_review(ws, passing_record("g1-b", "subset_checklist", reviewer, "B"))

    # ----- another reviewer answers blind; the label must not be anywhere in the page ---------
    sign_in(page, url, "rev4")
    page.get_by_role("link", name="Blind answer check").click()
    expect(page.get_by_text("How does the speaker feel about the suggestion?", exact=True)).to_be_visible()
    question = page.get_by_role("radiogroup", name="Your answer")
    expect(question.get_by_role("radio")).to_have_count(4)
    expect(page.locator('[data-testid="stImage"]')).to_have_count(1)
    expect(page.locator('[data-testid="stAudio"]')).to_have_count(1)
    html = page.content()
    inside = question.inner_html()
    for key, text in OPTIONS.items():
        # every option is shown alike, and only inside the question's radio group
        assert html.count(text) == inside.count(text) == 1, (key, html.count(text), inside.count(text))
    expect(question.locator("input:checked")).to_have_count(0)  # nothing preselected
    assert not re.search(r"answer[\"'\s:=]*\"?B\b", html, re.IGNORECASE)
    assert "← answer" not in html and "label" not in page.inner_text("[data-testid='stMain']").lower()
    question.get_by_text("C. ambivalent").click()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Recorded your answer for g1-b.")).to_be_visible()
    (blind,) = records(ws, "g1-b", "answer_check")
    assert (blind.reviewer, blind.payload["answer"]) == ("rev4", "C")


MARKDOWN_CONTEXT = "2*3*4 is 24; see ![x](http://example.invalid/context.png) and <b>this</b> :material/home:"
MARKDOWN_OPTIONS = {
    "A": "2*3*4",
    "B": "![pic](http://example.invalid/option.png)",
    "C": "**bold** and _under_ :red[red]",
    "D": "$x^2$ <i>html</i>",
}


def test_typed_text_shows_as_typed_and_views_need_an_answer(page: Page, streamlit_server, tmp_path):
    """Markdown in an item renders as the characters typed and fetches nothing (an image in an option never
    appears, not even in the audio-only view); the checklist cannot be submitted with views merely visited."""
    from media_factory import item_row, write_items

    from curation.items import import_items

    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    row = item_row("md-a", group="md", context=MARKDOWN_CONTEXT, options=MARKDOWN_OPTIONS, answer="A")
    row["question"] = "Which *one* is it? [link](http://example.invalid/q)"
    import_items(
        ws, write_items(tmp_path / "md", [row, item_row("md-b", group="md", options=MARKDOWN_OPTIONS, answer="B")])
    )
    for stage, reviewers in (("grammar", ["rev1", "rev2"]), ("audio_signoff", ["rev3", "rev5"])):
        for reviewer in reviewers:
            submit_review(ws, passing_record("md-a", stage, reviewer, "A"))

    sign_in(page, url, "rev3")
    page.get_by_role("link", name="Subset checklist").click()
    main = page.locator('[data-testid="stMain"]')
    submit = page.get_by_role("button", name="Submit checklist")
    for n, view in enumerate(CHECKLIST_VIEWS):
        expect(page.get_by_text(f"View {n + 1} of 7: {view}")).to_be_visible()
        for typed in [*MARKDOWN_OPTIONS.values(), row["question"]]:
            expect(main).to_contain_text(typed)  # as typed: stars, brackets, dollars and tags
        if "text" in view.split("+"):
            expect(main).to_contain_text(MARKDOWN_CONTEXT)
        else:
            expect(main).not_to_contain_text(MARKDOWN_CONTEXT)
        # no <img> but the item's own picture, and none at all where the view hides the image
        expect(main.locator("img")).to_have_count(1 if "image" in view.split("+") else 0)
        expect(main.locator("strong:has-text('bold'), em:has-text('under'), .katex")).to_have_count(0)
        expect(submit).to_be_disabled()  # this view has neither a tick nor "no option fits"
        label = "No option fits this view" if view == "audio" else f"A. {MARKDOWN_OPTIONS['A']}"
        box = page.locator('[data-testid="stCheckbox"]').get_by_text(label, exact=True)
        expect(box).to_have_count(1)  # the previous view's boxes are gone
        settled(page)  # a click on a box that a run is replacing can be lost
        box.click()
        settled(page)
        expect(page.locator('[data-testid="stCheckbox"] input:checked')).to_have_count(1)
        if n < len(CHECKLIST_VIEWS) - 1:
            page.get_by_role("button", name="Next view").click()
            settled(page)
    expect(submit).to_be_disabled()  # every view answered, the exclusion rules not yet
    attest_in_browser(page)
    expect(submit).to_be_enabled()
    submit.click()
    expect(page.get_by_text("Recorded your checklist for md-a.")).to_be_visible()
    (checklist,) = records(ws, "md-a", "subset_checklist")
    assert checklist.payload["consistent"]["audio"] == [] and checklist.payload["consistent"]["text"] == ["A"]
    outside = [u for u in requests if not u.startswith(url) and not u.startswith("data:")]
    assert outside == [], outside  # nothing fetched from another machine (page icons are local)


def test_a_reviewer_shown_a_groups_answers_is_not_offered_their_blind_checks(page: Page, streamlit_server, tmp_path):
    """ann1 (author and reviewer) opens another author's group on the author page: the page says first how many
    blind checks she gives up, shows the answers only after she confirms, and from then on the blind answer check
    neither offers her those items nor accepts her answer."""
    from media_factory import item_row, write_items

    from curation.errors import ValidationFailed
    from curation.items import import_items

    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    rows = [item_row("g2-a", group="g2", author="ann2"), item_row("g2-b", group="g2", answer="B", author="ann2")]
    import_items(ws, write_items(tmp_path / "g2", rows))
    for item, answer in (("g2-a", "A"), ("g2-b", "B")):
        advance(ws, item, answer, through="subset_checklist")

    sign_in(page, url, "ann1")
    page.get_by_role("link", name="Blind answer check").click()
    expect(page.get_by_text("2 item(s) waiting for you")).to_be_visible()

    page.get_by_role("link", name="Write or edit an item").click()
    group = page.get_by_label("Scene group id (an existing group, or a new one)")
    group.fill("g2")
    group.press("Enter")
    settled(page)
    main = page.locator('[data-testid="stMain"]')
    expect(main).to_contain_text("You would give up 2 blind check(s) you could still do (g2-a, g2-b)")
    expect(main).not_to_contain_text("(answer B)")  # said first, nothing shown yet
    page.get_by_role("button", name="Show the labels").click()
    expect(page.get_by_text("g2-b: Sure, that was a really helpful suggestion. (answer B)")).to_be_visible()

    page.get_by_role("link", name="Blind answer check").click()
    expect(page.get_by_text("Nothing waits for you here.", exact=False)).to_be_visible()
    with pytest.raises(ValidationFailed, match="exposed:shown: 'ann1' has seen the label of 'g2-a'"):
        submit_review(ws, passing_record("g2-a", "answer_check", "ann1", "A"))


def test_a_reload_and_a_deep_link_keep_the_person_signed_in(page: Page, streamlit_server):
    from annotation_ui.signin import FAILED, SIGNED_IN
    from curation.tables import Event

    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    page.goto(url)
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()
    html = page.content()
    assert not any(name in html for name in ("rev2", "maya", "ann2"))  # nobody's name is listed
    page.get_by_label("Your name", exact=True).fill("maya")
    page.get_by_label("Password", exact=True).fill("not-her-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("wrong name or password")).to_be_visible()
    sign_in(page, url, "rev3")
    page.reload()
    expect(page.get_by_text("You are signed in as")).to_be_visible()
    page.goto(f"{url}/subset_checklist")  # a deep link: a new session, the cookie signs rev3 in
    expect(page.get_by_role("heading", name="Subset checklist")).to_be_visible()
    page.goto(f"{url}/sign_in")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()
    page.reload()
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()  # signed out stays signed out
    from sqlalchemy import select

    with ws.session() as s:
        seen = [(e.action, e.subject) for e in s.execute(select(Event).order_by(Event.id)).scalars()]
    assert (FAILED, "person:maya") in seen and (SIGNED_IN, "person:rev3") in seen


def test_bad_uploads_are_named_beside_their_fields_and_every_problem_shows_at_once(
    page: Page, streamlit_server, tmp_path
):
    url, ws, _media = streamlit_server
    page.set_default_timeout(TIMEOUT)
    before = item_ids(ws)
    not_an_image = tmp_path / "notes.png"
    not_an_image.write_text("just some text, not a picture")
    broken = make_tone(tmp_path / "voice.wav", freq=440.0, seconds=1.0)
    broken.write_bytes(broken.read_bytes()[:200])  # cut off inside the samples

    sign_in(page, url, "ann1")
    page.get_by_role("link", name="Write or edit an item").click()
    expect(page.locator('[data-testid="stFileUploader"]')).to_have_count(2)
    upload(page, 0, not_an_image)
    upload(page, 1, broken)
    # named at once, before saving, and nothing is previewed from either upload
    expect(page.get_by_text("image: notes.png: not a readable image")).to_be_visible()
    expect(page.get_by_text("audio: voice.wav: audio is truncated")).to_be_visible()
    expect(page.locator('[data-testid="stImage"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAudio"]')).to_have_count(0)

    page.get_by_role("button", name="Save item").click()
    settled(page)
    alerts = page.locator('[data-testid="stAlertContentError"]')
    expect(alerts.filter(has_text="Question: is empty")).to_have_count(1)  # every problem of the form at once
    expect(alerts.filter(has_text="not a readable image")).to_have_count(1)  # each once
    expect(alerts.filter(has_text="audio is truncated")).to_have_count(1)
    said = " ".join(alerts.all_inner_texts())
    assert "Traceback" not in page.content() and "/tmp/" not in said and "staging" not in said, said
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    assert item_ids(ws) == before  # nothing was saved
