"""Every page of the app through ``streamlit.testing.v1.AppTest``, with a signed-in person seeded."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import APP, PASSWORD, advance, attest_rules, passing_record

from annotation_ui.components import USER_KEY, label_text
from annotation_ui.logic import SignedIn, submit_review
from curation.authoring import returned_inbox
from curation.decisions import history
from curation.exposure import EXPOSED
from curation.tables import ReviewRecord
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS


@pytest.fixture(autouse=True)
def _workspace_env(monkeypatch, request):
    """Point the app at the test's workspace (the one fixture the test uses)."""
    for name in ("ui_workspace", "demo_workspace"):
        if name in request.fixturenames:
            monkeypatch.setenv("CURATE_WORKSPACE", str(request.getfixturevalue(name).root))


def open_page(page: str, name: str | None = None, roles: tuple[str, ...] = ()) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    if name:
        at.session_state[USER_KEY] = SignedIn(name, frozenset(roles))
    at.run()
    if page != "sign_in":
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def records(ws, stage: str) -> list[ReviewRecord]:
    from sqlalchemy import select

    with ws.session() as s:
        return list(s.execute(select(ReviewRecord).where(ReviewRecord.stage == stage)).scalars())


def texts(at: AppTest) -> str:
    """Every string the page rendered (markdown, captions, alerts, labels and options), each once."""
    parts: list[str] = []
    for node in at.main:  # iterating a block walks all of its descendants
        seen: set[str] = set()
        for attr in ("value", "label", "options", "help", "placeholder"):
            try:
                v = getattr(node, attr, None)
            except Exception:  # some nodes compute attributes from protos they lack
                continue
            for text in [v] if isinstance(v, str) else list(v) if isinstance(v, list | tuple) else []:
                if str(text) not in seen:
                    seen.add(str(text))
                    parts.append(str(text))
    return "\n".join(parts)


def test_sign_in_page(ui_workspace):
    at = open_page("sign_in")
    assert not at.selectbox  # nobody's name is listed
    at.text_input(key="sign-in-name").input("rev1")
    at.text_input(key="sign-in-password").input("wrong-password")
    at.button[0].click().run()
    assert USER_KEY not in at.session_state and "wrong name or password" in at.error[0].value
    at.text_input(key="sign-in-password").input(PASSWORD)
    at.button[0].click().run()
    assert at.session_state[USER_KEY] == SignedIn("rev1", frozenset({"reviewer"}))
    assert "signed in as **rev1**" in at.markdown[0].value


def test_pages_refuse_a_missing_role(ui_workspace):
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        open_page("dashboard", "rev1", ("reviewer",))  # not in a reviewer's navigation at all
    direct = AppTest.from_file(str(APP.parent / "pages" / "dashboard.py"), default_timeout=60)
    direct.session_state[USER_KEY] = SignedIn("rev1", frozenset({"reviewer"}))
    direct.run()
    assert "maintainer role" in direct.error[0].value and not direct.title  # and the page itself refuses


def test_grammar_page_records_a_verdict(ui_workspace):
    at = open_page("grammar", "rev1", ("reviewer",))
    assert at.radio(key="grammar-pick").options == ["g1-a", "g1-b"]
    at.radio[1].set_value("fail")
    at.text_area[0].input("Option C reads oddly.")
    at.button[0].click().run()
    (rec,) = records(ui_workspace, "grammar")
    assert (rec.subject, rec.reviewer, rec.payload) == (
        "item:g1-a",
        "rev1",
        {"verdict": "fail", "note": "Option C reads oddly."},
    )
    assert "Recorded" in at.success[0].value and at.radio(key="grammar-pick").options == ["g1-b"]


def test_own_items_are_not_offered(ui_workspace):
    at = open_page("grammar", "ann1", ("author", "reviewer"))
    assert "Nothing waits for you" in at.info[0].value


def test_audio_signoff_page_records_three_scores(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="grammar")
    at = open_page("audio_signoff", "rev3", ("reviewer",))
    assert len(at.get("audio")) == 1
    at.slider[0].set_value(5)
    at.slider[1].set_value(2)
    at.button[0].click().run()
    (rec,) = records(ui_workspace, "audio_signoff")
    assert rec.payload["scores"] == {"naturalness": 5, "clarity": 2, "artefacts": 3}


def test_subset_checklist_shows_one_view_at_a_time_and_needs_all_seven(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    attest_rules(at, "g1-a")  # the exclusion rules answered first: the views alone decide when Submit opens
    ticks = {view: ["A", "B"] for view in CHECKLIST_VIEWS[:-1]} | {"text+image+audio": ["A"]}
    for n, view in enumerate(CHECKLIST_VIEWS):
        assert f"View {n + 1} of 7: {view}" in at.subheader[0].value
        shown = set(view.split("+"))
        assert len(at.get("image")) == ("image" in shown)
        assert len(at.get("audio")) == ("audio" in shown)
        infos = [i.value for i in at.info]
        assert infos == [PLACEHOLDERS[m] for m in ("image", "text", "audio") if m not in shown]
        assert ("Context" in texts(at)) == ("text" in shown)
        submit = next(b for b in at.button if b.label == "Submit checklist")
        assert submit.disabled  # this view is not answered yet (visiting is not answering)
        for key in ticks[view]:
            at.checkbox(key=f"cl-{'g1-a'}-{view}-{key}").check()
        at.run()
        assert next(b for b in at.button if b.label == "Submit checklist").disabled == (n < 6)
        if n < 6:
            [b for b in at.button if b.label == "Next view"][0].click().run()
    [b for b in at.button if b.label == "Previous view"][0].click().run()
    assert at.checkbox(key="cl-g1-a-image+audio-B").value is True  # ticks survive moving between views
    [b for b in at.button if b.label == "Next view"][0].click().run()
    [b for b in at.button if b.label == "Submit checklist"][0].click().run()
    assert not at.exception
    (rec,) = records(ui_workspace, "subset_checklist")
    assert rec.reviewer == "rev4" and rec.payload["consistent"] == ticks


def test_checklist_ticks_survive_runs_that_do_not_draw_them(ui_workspace):
    """Issue 13, case 11: a checkbox's state is dropped after a run that did not draw it (here: the reviewer
    looks at another item of the queue); the view's ticks must not be lost with it."""
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ui_workspace, item, answer, through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    first = at.radio(key="checklist-pick").value
    other = next(o for o in at.radio(key="checklist-pick").options if o != first)
    at.checkbox(key=f"cl-{first}-text-A").check().run()
    at.radio(key="checklist-pick").set_value(other).run()
    at.radio(key="checklist-pick").set_value(first).run()
    assert at.checkbox(key=f"cl-{first}-text-A").value is True
    [b for b in at.button if b.label == "Next view"][0].click().run()
    assert "1 of 7 views answered" in texts(at) or at.get("progress")[0].proto.text == "1 of 7 views answered"
    [b for b in at.button if b.label == "Previous view"][0].click().run()
    assert at.checkbox(key=f"cl-{first}-text-A").value is True


def test_a_box_ticked_on_screen_counts_even_when_its_callback_was_lost(ui_workspace):
    """A click whose rerun another click interrupted can leave its box ticked on screen with no callback run
    (seen in Chromium: C ticked, the record without C): the boxes drawn are the answer."""
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    for key in ("A", "C"):
        at.checkbox(key=f"cl-g1-a-text-{key}").check()
    at.run()
    at.session_state["cl-ticks-g1-a"] = {"text": ["A"]}  # C's callback never ran; its box stays ticked
    at.run()
    assert at.checkbox(key="cl-g1-a-text-C").value is True
    assert sorted(at.session_state["cl-ticks-g1-a"]["text"]) == ["A", "C"]
    from curation.drafts import load_draft

    assert sorted(load_draft(ui_workspace, "rev4", "subset_checklist", "item:g1-a")["ticks"]["text"]) == ["A", "C"]


@pytest.mark.parametrize(
    ("plan", "submittable"),
    [
        # every view merely visited (no tick, no "no option fits"): not answered
        ({}, False),
        # every view ticked
        ({view: ["A"] for view in CHECKLIST_VIEWS}, True),
        # "no option fits" counts as an answer
        ({**{view: ["A"] for view in CHECKLIST_VIEWS}, "audio": ["none-fits"]}, True),
        # one view left merely visited
        ({view: ["A"] for view in CHECKLIST_VIEWS if view != "image"}, False),
        # a tick and "no option fits" at once is a contradiction, not an answer
        ({**{view: ["A"] for view in CHECKLIST_VIEWS}, "text": ["A", "none-fits"]}, False),
    ],
)
def test_subset_checklist_needs_a_tick_or_no_option_fits_in_every_view(ui_workspace, plan, submittable):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    attest_rules(at, "g1-a")
    for n, view in enumerate(CHECKLIST_VIEWS):
        for key in plan.get(view, []):
            at.checkbox(key=f"cl-g1-a-{view}-{key}").check()
        at.run()
        if n < 6:
            [b for b in at.button if b.label == "Next view"][0].click().run()
    submit = next(b for b in at.button if b.label == "Submit checklist")
    assert submit.disabled != submittable
    if not submittable:
        still_open = [v for v in CHECKLIST_VIEWS if plan.get(v) not in (["A"], ["none-fits"])]
        assert any(("Still open: " + ", ".join(still_open)) in c.value for c in at.caption)
        return
    submit.click().run()
    (rec,) = records(ui_workspace, "subset_checklist")
    assert rec.payload["consistent"] == {v: [] if plan[v] == ["none-fits"] else plan[v] for v in CHECKLIST_VIEWS}


def test_blind_answer_check_never_shows_the_label(ui_workspace):
    advance(ui_workspace, "g1-b", "B", through="subset_checklist")
    at = open_page("answer_check", "maya", ("maintainer", "reviewer"))
    radio = next(r for r in at.radio if r.label == "Your answer")
    shown = ["A. grateful", "B. sarcastic", "C. ambivalent", "D. surprised"]
    assert radio.options == [label_text(o) for o in shown] and radio.value is None
    rendered = texts(at)
    counts = {option: rendered.count(option) for option in ("grateful", "sarcastic", "ambivalent", "surprised")}
    assert len(set(counts.values())) == 1, counts  # every option shown alike: the label is not singled out
    assert "answer: B" not in rendered and "← answer" not in rendered
    radio.set_value(label_text("C. ambivalent"))
    at.button[0].click().run()
    (rec,) = records(ui_workspace, "answer_check")
    assert rec.payload["answer"] == "C"


def test_group_integration_page_shows_sisters_and_checks(ui_workspace):
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ui_workspace, item, answer, through="answer_check")
    at = open_page("group_integration", "maya", ("maintainer", "reviewer"))
    assert at.radio(key="group-pick").options == [
        label_text("g1 (2 sisters) — g1-a: in_review at group_integration; g1-b: in_review at group_integration")
    ]
    page = texts(at)
    assert "This shows the labels (answers) of 2 item(s) you have not seen" in page  # said first
    assert "give up 0 blind check(s)" in page and "← answer" not in page and not at.get("audio")
    next(b for b in at.button if b.label == "Show the labels").click().run()
    assert [e.after["via"] for e in history(ui_workspace, "g1-a") if e.action == EXPOSED] == [
        "page group_integration g1"
    ]
    page = texts(at)
    assert "perturbed modality **audio**" in page and "Automatic checks: all pass." in page
    assert page.count(":orange-badge[perturbed]") == 2 and "differs, but not perturbed" not in page
    assert len(at.get("audio")) == 2
    next(r for r in at.radio if r.label == "Verdict for the group").set_value("pass")
    next(b for b in at.button if b.label == "Submit").click().run()
    (rec,) = records(ui_workspace, "group_integration")
    assert rec.subject == "group:g1" and rec.payload["verdict"] == "pass"


def test_dashboard_page(demo_workspace):
    at = open_page("dashboard", "maya", ("maintainer", "reviewer"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items"] == "12" and metrics["Admitted"] == "2"
    per_stage = next(frame.value for frame in at.dataframe if "stage" in frame.value.columns)
    done = per_stage[per_stage["stage"] == "(every stage passed)"].iloc[0]
    assert (done["admitted"], done["held"]) == (2, 1)  # held and admitted are counted in the per-stage table
    assert per_stage["in_review"].sum() == 4 and per_stage["returned"].sum() == 5
    assert len(at.get("plotly_chart")) == 3  # funnel, taxonomy sunburst, reasons
    assert len(at.dataframe) >= 4
    assert "Gates: agreement, audits, probes" in [h.value for h in at.subheader]
    tables = [frame.value for frame in at.dataframe]
    probe = next(t for t in tables if "verdict" in t.columns)
    assert dict(zip(probe["verdict"], probe["items"], strict=True)) == {
        "reducible": 2,
        "underdetermined": 1,
        "well_posed": 9,
    }
    assert any("cluster" in t.columns and "distinct" in t["decision"].iloc[0] for t in tables)


def test_history_page(demo_workspace):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn("maya", frozenset({"maintainer", "reviewer"}))
    at.session_state["history_item"] = "kitchen-01-a"
    at.run()
    at.switch_page("pages/history.py").run()
    assert "This shows the labels (answers) of 1 item(s)" in texts(at) and not at.dataframe  # said first
    next(b for b in at.button if b.label == "Show the labels").click().run()
    assert "state **admitted**" in at.markdown[0].value
    frame = at.dataframe[0].value
    assert "item.created" in set(frame["action"]) and "review.recorded" in set(frame["action"])


def test_author_page_edits_and_reports_problems_beside_fields(ui_workspace):
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.selectbox(key="author-target").select("g1-a").run()
    at.text_area[0].set_value("Sure, that was a really helpful suggestion!")
    at.button[0].click().run()
    assert not at.exception
    assert ui_workspace.item("g1-a").revision == 2
    assert "saved as a new revision" in at.success[0].value
    # a new item without uploads or a valid id: problems appear, nothing is saved
    at.selectbox(key="author-target").select("New item").run()
    at.text_input(key="author-New item-group").input("g9").run()
    assert at.selectbox(key="author-New item-perturbed").value == "text"  # a new group asks what it perturbs
    at.button[0].click().run()
    errors = [e.value for e in at.error]
    assert any(e.startswith("Image: upload an image") for e in errors), errors  # the form's own words
    assert any(e.startswith("Audio: upload an audio") for e in errors), errors


def test_returned_page_lists_reasons_and_opens_the_editor(ui_workspace):
    submit_review(
        ui_workspace, {"item": "g1-a", "stage": "grammar", "reviewer": "rev1", "verdict": "fail", "note": "Typo."}
    )
    assert [e.id for e in returned_inbox(ui_workspace, "ann1")] == ["g1-a"]
    at = open_page("returned", "ann1", ("author", "reviewer"))
    page = texts(at)
    assert "`grammar`" in page and "**rev1** (grammar):" in page and "\nTypo.\n" in page  # the note as typed
    at.button(key="edit-g1-a").click().run()
    assert at.selectbox(key="author-target").value == "g1-a"
    assert not at.exception


def test_checklist_record_from_page_matches_domain_rules(ui_workspace):
    """A reviewer recording on their own item is refused by the domain even when a page offers it."""
    with pytest.raises(Exception, match="nobody reviews their own item"):
        submit_review(ui_workspace, passing_record("g1-a", "grammar", "ann1", "A"))


def test_adjudication_page_shows_checklists_side_by_side_and_records_a_consensus(ui_workspace):
    from curation.derived import load_derived
    from curation.kinds import ADJUDICATION

    advance(ui_workspace, "g1-a", "A", "audio_signoff")
    good = passing_record("g1-a", "subset_checklist", "rev3", "A")
    determines = {**good["consistent"], "text+image": ["A"]}  # two of three: text+image settles it
    for reviewer in ("rev1", "rev2"):
        submit_review(ui_workspace, {**good, "reviewer": reviewer, "consistent": determines})
    submit_review(ui_workspace, good)
    assert "checklist:disagreement" in load_derived(ui_workspace).status_by_id["g1-a"].reasons

    at = open_page("adjudication", "maya", ("maintainer", "reviewer"))
    assert at.selectbox(key="adj-item").value is None  # nothing picked on arrival: no label, no exposure
    assert "label.exposed" not in {e.action for e in ui_workspace.events("item:g1-a")}
    at.selectbox(key="adj-item").select("g1-a").run()
    assert "shows the labels" in at.warning[0].value and not at.dataframe  # the warning and a confirm first
    assert "label.exposed" not in {e.action for e in ui_workspace.events("item:g1-a")}
    next(b for b in at.button if b.label == "Show the labels").click().run()
    side_by_side = next(f.value for f in at.dataframe if "view" in f.value.columns)
    assert list(side_by_side.columns) == ["view", "rev1", "rev2", "rev3"]
    row = side_by_side[side_by_side["view"] == "text+image"].iloc[0]
    assert (row["rev1"], row["rev3"]) == ("A", "A, B, C, D")
    assert any("checklist:disagreement" in e.value for e in at.error)
    assert "label.exposed" in {e.action for e in ui_workspace.events("item:g1-a")}

    at.radio(key="adj-start-g1-a").set_value("rev3's checklist").run()
    assert at.multiselect(key="adj-g1-a-view-text+image").value == ["A", "B", "C", "D"]
    assert "passes" in at.success[0].value
    at.button(key="adj-record-g1-a").click().run()  # no reason yet: refused, nothing recorded
    assert any("a written reason is required" in e.value for e in at.error)
    assert not records(ui_workspace, ADJUDICATION)
    at.text_area(key="adj-reason-g1-a").input("B and C fit the picture and the words").run()
    at.button(key="adj-record-g1-a").click().run()
    assert not at.exception
    [record] = records(ui_workspace, ADJUDICATION)
    assert record.reviewer == "maya" and record.payload["consistent"]["text+image"] == ["A", "B", "C", "D"]
    assert "checklist:disagreement" not in load_derived(ui_workspace).status_by_id["g1-a"].reasons
    assert "Nothing to adjudicate" in at.info[0].value


def _bomb_png() -> bytes:
    """A small file that decodes to 400 megapixels (a decompression bomb)."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(out, "PNG")
    return out.getvalue()


def _png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(out, "PNG")
    return out.getvalue()


def _wav() -> bytes:
    import io

    import numpy as np
    import soundfile as sf

    out = io.BytesIO()
    sf.write(out, (0.1 * np.sin(np.linspace(0, 2000, 48_000))).astype("float32"), 48_000, format="WAV")
    return out.getvalue()


UPLOAD_CASES = [
    # (name, image upload, audio upload, field, words the author reads beside it)
    ("text file as image", ("notes.png", b"just some text", "image/png"), None, "image", "notes.png: not a readable image"),
    ("decompression bomb", ("huge.png", _bomb_png(), "image/png"), None, "image", "possible decompression bomb"),
    ("broken wav", None, ("voice.wav", _wav()[:200], "audio/wav"), "audio", "voice.wav: audio is truncated"),
    ("garbage wav", None, ("voice.wav", b"RIFF....not a wav at all", "audio/wav"), "audio", "voice.wav: not decodable"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "image", "audio", "field", "words"), UPLOAD_CASES, ids=[c[0] for c in UPLOAD_CASES])
def test_author_upload_errors_are_named_beside_the_field(ui_workspace, name, image, audio, field, words):
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.selectbox(key="author-target").select("New item").run()
    uploader = {u.label: u for u in at.file_uploader}
    if image:
        uploader["Image"].set_value(image)
    if audio:
        uploader["Audio"].set_value(audio)
    at.run()
    assert not at.exception, at.exception
    shown = [e.value for e in at.error]
    assert any(e.startswith(f"{field}: ") and words in e for e in shown), shown  # at once, before saving
    assert not at.get("image")  # nothing is previewed from a bad upload (the audio one is good or absent)
    # submitting reports every problem of the form at once, each once, in the author's words, no server path
    at.button[0].click().run()
    assert not at.exception, at.exception
    shown = [e.value for e in at.error]
    assert sum(words in e for e in shown) == 1, shown
    assert any(e.startswith("Item id: ") for e in shown), shown  # the form's labels, not JSON fields
    assert any(e.startswith("Question: is empty") for e in shown), shown
    other = "audio" if field == "image" else "image"
    assert any(e.startswith(f"{other.capitalize()}: upload an {other}") for e in shown), shown
    page = texts(at)
    assert "/tmp" not in page and "Traceback" not in page and "staging" not in page and "pydantic" not in page


def test_author_page_accepts_good_uploads_after_errors(ui_workspace):
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.selectbox(key="author-target").select("New item").run()
    uploader = {u.label: u for u in at.file_uploader}
    uploader["Image"].set_value(("scene.png", _png(), "image/png"))
    uploader["Audio"].set_value(("voice.wav", _wav(), "audio/wav"))
    at.run()
    assert not at.exception and not at.error
    assert len(at.get("image")) == 1  # the good image is previewed


def test_history_names_the_blind_checks_a_reviewer_gives_up_and_records_the_exposure(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="subset_checklist")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn("maya", frozenset({"maintainer", "reviewer"}))
    at.session_state["history_item"] = "g1-a"
    at.run()
    at.switch_page("pages/history.py").run()
    page = texts(at)
    assert "You would give up 1 blind check(s) you could still do (g1-a)" in page
    assert not at.dataframe and "text+image+audio" not in page
    assert queue_of("maya", "answer_check", ui_workspace) == ["g1-a"]
    next(b for b in at.button if b.label == "Show the labels").click().run()
    assert at.dataframe and not [w for w in at.warning if "labels" in w.value]
    (event,) = [e for e in history(ui_workspace, "g1-a") if e.action == EXPOSED]
    assert (event.actor, event.after) == ("maya", {"person": "maya", "via": "page history"})
    assert queue_of("maya", "answer_check", ui_workspace) == []


def test_author_page_hides_other_authors_sisters_answers_until_confirmed(ui_workspace, tmp_path):
    from curation.items import import_items
    from tests.media_factory import item_row, write_items

    rows = [item_row("g2-a", group="g2", author="ann2"), item_row("g2-b", group="g2", answer="B", author="ann2")]
    import_items(ui_workspace, write_items(tmp_path / "g2", rows))
    advance(ui_workspace, "g2-b", "B", through="subset_checklist")
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.text_input(key="author-New item-group").set_value("g2").run()
    page = texts(at)
    assert "You would give up 2 blind check(s) you could still do (g2-a, g2-b)" in page
    assert "(answer B)" not in page
    next(b for b in at.button if b.label == "Show the labels").click().run()
    assert "g2-b: Sure, that was a really helpful suggestion. (answer B)" in texts(at)
    assert queue_of("ann1", "answer_check", ui_workspace) == []
    at.text_input(key="author-New item-group").set_value("g1").run()  # ann1's own group: known already
    assert "(answer B)" in texts(at) and "give up" not in texts(at)


def queue_of(person: str, stage: str, ws) -> list[str]:
    from curation.review_queues import review_queue

    return review_queue(ws, stage, person)
