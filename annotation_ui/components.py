"""Streamlit pieces every page shares: the workspace, the signed-in person, media, errors and queue paging."""

from __future__ import annotations

import logging
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from curation.blind_checks import blind_checks_given_up
from curation.drafts import discard_draft
from curation.errors import CurateError, ValidationFailed
from curation.exposure import exposed_items, reveal
from curation.guidelines import stage_guidelines
from curation.reservations import claim_open, release, renew
from curation.review_queues import group_content, wanted
from curation.reviews import NO_LONGER_NEEDED
from curation.workspace import Workspace

from .conflicts import exposed_since, subject_of, why_not_waiting
from .dashboard import DashboardCache, GatesCache
from .logic import QueuePage, SignedIn, media_ref, page_of, queue, queue_report, submit_review
from .page_drafts import VERDICTS, PageDraft, verdict_fields
from .snapshot import Snapshot, SnapshotCache

USER_KEY = "user"
TOKEN_KEY = "session-token"
FLASH_KEY = "flash"
COOKIE_PENDING = "session-cookie-pending"
SIGNED_OUT = "signed-out"
HELD = "held-entry-key"
"""The session key under which the current review page holds its picked entry."""
CONFLICT = "held-entry-conflict"
"""Why the held entry no longer waits for the person (None while it does): such a submission is not made."""
SHOWN = "shown-before"
"""(stage, entry, "revision" | "content", what the previous run showed): what a submission names."""
PAGE_SIZES = (10, 25, 50, 100)


_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_ICON_SHORTCODE = re.compile(r"\\:(?=material)", re.IGNORECASE)


def label_text(text: str) -> str:
    """``text`` for a widget label (which Streamlit renders as Markdown), so that it shows as typed.

    Every ASCII punctuation mark is backslash-escaped (CommonMark), so no emphasis, link, image, HTML, maths
    or colour directive is formed and nothing is fetched; an invisible word joiner after a colon keeps
    ``:material/icon:`` from becoming an icon (Streamlit matches that after parsing).
    """
    return _ICON_SHORTCODE.sub("\\:\u2060", _MARKDOWN_PUNCTUATION.sub(r"\\\1", text))


def show_text(heading: str, text: str) -> None:
    """A heading and text people typed, shown as the characters they typed (never Markdown or HTML)."""
    st.markdown(f"**{heading}**")
    st.text(text)


def show_options(options: dict[str, str], answer: str | None = None) -> None:
    """Options as typed, one per line (``answer`` marks the label, on pages allowed to show it)."""
    st.text("\n".join(f"{key}. {text}" + ("   ← answer" if key == answer else "") for key, text in options.items()))


def with_article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


OTHER_KIND_HINTS = {
    "story_transition": "Story transitions are corrected by reviewers on the “Revise story annotations” page; "
    "a dropped transition stays out of the release unless a maintainer restores it (`curate decide`).",
    "judge_task": "Judge tasks are curated on the Judging pages and imported with `curate judge import`.",
}


def other_kind_hint(kind: str) -> str:
    """Where an item of a kind the authoring form cannot edit is worked on instead."""
    return OTHER_KIND_HINTS.get(kind, f"Items of the {kind} kind are imported with the command line (`curate`).")


def workspace_root() -> str:
    """``$CURATE_WORKSPACE`` (set by ``curate ui``), else the current folder."""
    return str(Path(os.environ.get("CURATE_WORKSPACE") or Path.cwd()).resolve())


@st.cache_resource(show_spinner=False)
def _open(root: str) -> tuple[Workspace, SnapshotCache, DashboardCache, GatesCache]:
    ws = Workspace.open(Path(root))
    _warm_up()
    return ws, SnapshotCache(ws), DashboardCache(), GatesCache()


WARM_UP = ("pandas", "plotly.graph_objects")
"""What the first table or chart a page draws would import: pandas (``st.dataframe`` of rows) and Plotly."""


def _warm_up() -> None:
    """Import WARM_UP in the background once per server process, when the first page opens (while the first
    person signs in), so that nobody's first dashboard waits for it: importing pandas inside the served app was
    0.6-0.8 s of the dashboard's first render on 2 cores."""
    import contextlib
    import importlib
    import threading

    def load() -> None:
        for name in WARM_UP:
            with contextlib.suppress(ImportError):  # a page that needs it says so when it draws
                importlib.import_module(name)

    threading.Thread(target=load, name="omnicurate-warm-up", daemon=True).start()


def workspace() -> Workspace:
    return _open(workspace_root())[0]


def snapshot() -> Snapshot:
    """The derived state of the workspace; recomputed (with a spinner) only after a change."""
    cache = _open(workspace_root())[1]
    if cache.is_fresh():
        return cache.get()
    with st.spinner("Deriving every item's state…"):
        return cache.get()


def dashboard_cache() -> DashboardCache:
    return _open(workspace_root())[2]


def gates_cache() -> GatesCache:
    return _open(workspace_root())[3]


def current_user() -> SignedIn | None:
    """The person signed in to this session, else the one a valid session cookie names (a reload or a
    deep link starts a new session: the signed cookie keeps the person signed in).

    Every run checks the session on the server: once it ended (signed out in any tab, the password changed,
    expired) this tab is signed out too and keeps nothing of the person."""
    from .signin import COOKIE, record_sign_in, verify_token

    user = st.session_state.get(USER_KEY)
    if isinstance(user, SignedIn):
        token = st.session_state.get(TOKEN_KEY)
        if token is None or verify_token(workspace(), token) == user:  # None: seeded by a test, never a browser
            return user
        _forget_everyone()
        return None
    if st.session_state.get(SIGNED_OUT):
        return None  # the browser still sent the old cookie with this session's first request
    token = st.context.cookies.get(COOKIE)
    restored = verify_token(workspace(), token)
    if restored is not None:
        st.session_state[USER_KEY] = restored
        st.session_state[TOKEN_KEY] = token
        record_sign_in(workspace(), restored, via="session")
    return restored


def remember(user: SignedIn) -> None:
    """Sign USER in to this session and, on the next run, into a signed session cookie. The tab holds nothing
    of anyone before (a sign-out or an ended session cleared it), so what an anonymous visit kept (a deep
    link's target) stays."""
    from .signin import issue_token

    st.session_state.pop(SIGNED_OUT, None)
    token = issue_token(workspace(), user.name)
    st.session_state[USER_KEY] = user
    st.session_state[TOKEN_KEY] = token
    st.session_state[COOKIE_PENDING] = token


def sign_out() -> None:
    """End the session on the server (a copied cookie stops working) and forget every value of the person."""
    from .signin import end_session

    end_session(workspace(), st.session_state.get(TOKEN_KEY))
    _forget_everyone()


def _forget_everyone() -> None:
    """Clear every per-person value of this tab (picks, ticks, drafts on screen, flashes): the next person
    to sign in here starts clean; the cookie is cleared on the next run."""
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.session_state[SIGNED_OUT] = True
    st.session_state[COOKIE_PENDING] = ""


def write_session_cookie() -> None:
    """Set (or clear) the session cookie in the browser; the token is base64url and hex, safe to embed."""
    from .signin import COOKIE, SESSION_HOURS

    token = st.session_state.pop(COOKIE_PENDING, None)
    if token is None:
        return
    age = SESSION_HOURS * 3600 if token else 0
    st.html(
        "<script>document.cookie = '"
        + f"{COOKIE}={token}; path=/; SameSite=Strict; max-age={age}"
        + "' + (location.protocol === 'https:' ? '; Secure' : '');</script>",
        unsafe_allow_javascript=True,
    )


def require(role: str) -> SignedIn:
    """Stop the page unless someone with ROLE is signed in (the navigation already hides it otherwise)."""
    user = current_user()
    if user is None or role not in user.roles:
        st.error(f"This page is for people with the {role} role. Sign in first.")
        st.stop()
    show_flash()
    return user


def flash(message: str) -> None:
    """A confirmation shown once, on the next run (a rerun right after an action would swallow a toast)."""
    st.session_state[FLASH_KEY] = message


def show_flash() -> None:
    message = st.session_state.pop(FLASH_KEY, None)
    if message:
        st.success(message, icon=":material/check_circle:")


def show_error(exc: CurateError) -> None:
    """A domain refusal, worded for the person: every problem of a ValidationFailed, one line each."""
    if isinstance(exc, ValidationFailed):
        st.error("\n".join(f"- **{p.field}**: {p.message}" if p.field else f"- {p.message}" for p in exc.problems))
    else:
        st.error(str(exc))


log = logging.getLogger("annotation_ui")


@contextmanager
def guarded(where: str) -> Iterator[None]:
    """Render a page (or a fragment of one) so that no traceback reaches the browser: a domain refusal is
    shown in its own words; anything else is logged on the server with a reference, and the page names the
    error and that reference. Streamlit's own stop and rerun signals are BaseExceptions and pass through."""
    try:
        yield
    except CurateError as exc:
        show_error(exc)
    except Exception as exc:
        reference = secrets.token_hex(4)
        log.error("%s failed (reference %s)", where, reference, exc_info=exc)
        st.error(
            f"This page stopped on an unexpected error ({type(exc).__name__}). It is logged on the server with "
            f"the reference {reference}: tell a maintainer, and reload the page to try again.",
            icon=":material/error:",
        )


def checked_upload(ws: Workspace, kind: str, uploaded: Any, shown: Mapping[str, list[str]]) -> bool:
    """Decode an uploaded medium once per upload and show what is wrong with it right here (messages
    ``shown`` already lists are not repeated); True when it can be previewed."""
    from curation.authoring import Upload, upload_problems

    checked: dict[str, list[str]] = st.session_state.setdefault("upload-checks", {})
    key = f"{kind}:{uploaded.file_id}"
    if key not in checked:
        found = upload_problems(ws, kind, Upload(uploaded.name, uploaded.getvalue()))
        checked[key] = [p.message for p in found]
    for message in checked[key]:
        if message not in shown.get(kind, []):
            st.error(f"{kind}: {message}", icon=":material/error:")
    return not checked[key]


def show_image(ws: Workspace, sha256: str, caption: str | None = None) -> None:
    st.image(media_ref(ws, sha256).path, caption=caption)


def show_audio(ws: Workspace, sha256: str) -> None:
    ref = media_ref(ws, sha256)
    st.audio(ref.path, format=ref.mime)


def queue_picker(
    key: str, ids: list[str], noun: str = "item", describe: Callable[[str], str] | None = None
) -> str | None:
    """Page through a queue and pick one entry; only the current page's ids are ever rendered.

    ``describe`` gives each entry's label (shown as typed, never as Markdown); the default is its id."""
    if not ids:
        st.info(f"Nothing waits for you here. Every {noun} at this stage is done, yours, or not ready yet.")
        return None
    left, right = st.columns(2)
    size = left.selectbox("Per page", PAGE_SIZES, index=1, key=f"{key}-size")
    pages = max(1, -(-len(ids) // size))
    number = right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1, key=f"{key}-page")
    page: QueuePage = page_of(ids, int(number), int(size))
    st.caption(f"{page.total} {noun}(s) waiting for you · page {page.page} of {page.pages}")
    if describe is None:
        return st.radio(f"Pick {with_article(noun)}", page.ids, key=f"{key}-pick", horizontal=True)
    return st.radio(
        f"Pick {with_article(noun)}", page.ids, key=f"{key}-pick", format_func=lambda x: label_text(describe(x))
    )


def guidelines_panel(page: str) -> None:
    """The maintainer's guidelines of this stage or page (``guidelines/<page>.md``), in a panel; nothing
    when there are none. They are maintainer text, so they are rendered as Markdown."""
    try:
        text = stage_guidelines(workspace(), page)
    except CurateError as exc:
        show_error(exc)
        return
    if text:
        with st.expander("Guidelines", icon=":material/menu_book:"):
            st.markdown(text)


def review_queue(
    title: str,
    caption: str,
    picker_key: str,
    stage: str,
    noun: str = "item",
    describe: Callable[[Snapshot, str], str] | None = None,
) -> tuple[SignedIn, Workspace, Snapshot, str]:
    """The head every review page shares: the reviewer, the page title, and the entry picked from the
    stage's queue; the page stops here when the queue is empty.

    The picked entry is held: when someone else's record (or an edit) takes it out of the queue, the page keeps
    it on screen with the person's input, says who and why, and moves on only when asked. What the page showed
    (the item revision, or the group's content hash) is remembered for the next run, where a submission names
    it, so a record is never stored against content its reviewer did not see (``stale:<stage>``).
    """
    user = require("reviewer")
    ws = workspace()
    st.title(title)
    st.caption(caption)
    guidelines_panel(stage)
    snap = snapshot()
    held_key = f"{picker_key}-held"
    st.session_state[HELD] = held_key
    st.session_state[CONFLICT] = None
    ids = queue(ws, snap, stage, user.name)
    held = st.session_state.get(held_key)
    if held is not None and held not in ids and exposed_since(ws, stage, held, user.name):
        st.info(f"{held} left your queue: you have seen its label since, so its blind check is someone else's.")
        st.session_state.pop(held_key, None)
        held = None
    if held is not None and held not in ids and (held in snap.facts or held in snap.perturbed):
        why = why_not_waiting(ws, snap, stage, held, user.name)
        st.session_state[CONFLICT] = why
        st.warning(why + " Nothing you typed here was recorded; it stays below.", icon=":material/group:")
        if st.button(f"Go on to the next {noun}", key=f"{picker_key}-go-on", icon=":material/skip_next:"):
            st.session_state.pop(held_key, None)
            st.rerun()
        picked: str | None = held
    else:
        label = (lambda x: describe(snap, x)) if describe else None
        offered = _reserve(ws, snap, stage, user.name, ids, picker_key, held)
        picked = queue_picker(picker_key, offered, noun=noun, describe=label)
        _why_not_offered(ws, snap, stage, user.name, noun)
        if picked is None:
            st.session_state.pop(held_key, None)
            st.stop()
        if picked != st.session_state.get(f"{picker_key}-reserved"):
            st.warning(
                f"{picked} is being worked on by someone else right now: pick another {noun}.",
                icon=":material/group:",
            )
            st.stop()
        st.session_state[held_key] = picked
        _skip_button(ws, stage, user.name, picked, picker_key, noun)
        _keep_reserved(ws, stage, user.name, picked)
    assert picked is not None
    _remember_shown(ws, snap, stage, picked)
    return user, ws, snap, picked


CLAIM_WINDOW = 100
"""How many queue entries, from the head, a page checks against the live reservations and records each time it
draws: what a person pages through first. Later entries are offered as the queue has them and checked when
picked, so a page of a 10,000-item queue costs what one of 100 does."""


def _reserve(
    ws: Workspace, snap: Snapshot, stage: str, person: str, ids: list[str], picker_key: str, held: str | None
) -> list[str]:
    """Reserve an entry of the queue IDS for PERSON and return the queue as offered to them: the entry they hold
    first, then those nobody holds, then those others hold with room to spare; entries held by as many others
    as they still need, and entries finished since this run's snapshot, are left out (design.md, "Work
    distribution"). The reserved entry becomes the pick."""
    assert snap.derived is not None
    pick_key, reserved_key = f"{picker_key}-pick", f"{picker_key}-reserved"
    skipped: list[str] = st.session_state.setdefault(f"{picker_key}-skipped", [])
    current = st.session_state.get(pick_key)
    prefer = current if current in ids else (held if held in ids else None)
    order = [x for x in ids if x not in skipped] + [x for x in ids if x in skipped]
    window = list(dict.fromkeys([*([prefer] if prefer else []), *order[:CLAIM_WINDOW]]))
    found = claim_open(
        ws, stage, person, wanted(snap.derived, stage, window), prefer=subject_of(stage, prefer) if prefer else None
    )
    chosen = found.chosen.partition(":")[2] if found.chosen else None
    if prefer is not None and chosen != prefer and current == prefer:
        st.info(
            f"{prefer} is being worked on by someone else now" + (f"; you have {chosen} instead." if chosen else "."),
            icon=":material/group:",
        )
    st.session_state[reserved_key] = chosen
    if chosen is not None:
        st.session_state[pick_key] = chosen
    checked = set(window)
    return [subject.partition(":")[2] for subject in found.open] + [x for x in order if x not in checked]


SKIP_HELP = "Hand it back for someone else to take now, and go on to another (it comes last for you)."


def _skip_button(ws: Workspace, stage: str, person: str, picked: str, picker_key: str, noun: str) -> None:
    """Hand the entry back (its reservation released) and go on to another: it comes last in this session.
    In the sidebar, so that the page's own buttons keep their places."""
    if st.sidebar.button(f"Skip {picked}", key=f"{picker_key}-skip", icon=":material/redo:", help=SKIP_HELP):
        release(ws, person, stage, subject_of(stage, picked))
        skipped: list[str] = st.session_state.setdefault(f"{picker_key}-skipped", [])
        if picked not in skipped:
            skipped.append(picked)
        for key in (f"{picker_key}-pick", f"{picker_key}-reserved", f"{picker_key}-held"):
            st.session_state.pop(key, None)
        st.rerun()


def _keep_reserved(ws: Workspace, stage: str, person: str, picked: str) -> None:
    """Renew the reservation while the page is open (a fragment that runs every third of a lease)."""
    every = max(5.0, ws.settings.review.reservation_minutes * 20)

    @st.fragment(run_every=every)
    def renewer() -> None:
        renew(ws, stage, person, subject_of(stage, picked))

    renewer()


def _why_not_offered(ws: Workspace, snap: Snapshot, stage: str, person: str, noun: str) -> None:
    """Entries waiting at the stage that the person is not offered for their language, qualification or the
    staffing of later stages, with why (asked for: a collapsed panel)."""
    withheld = queue_report(ws, snap, stage, person).withheld
    if withheld:
        with st.expander(f"Why {len(withheld)} other {noun}(s) at this stage are not offered to you"):
            for ident, why in withheld.items():
                st.text(f"{ident}: {why}")


def release_held() -> None:
    """The page recorded the held entry itself (without ``record_review``): the queue may move on."""
    key = st.session_state.get(HELD)
    if key:
        st.session_state.pop(key, None)


def _remember_shown(ws: Workspace, snap: Snapshot, stage: str, ident: str) -> None:
    """Keep what this run shows of IDENT for the next run's submission, and say so when it changed since the
    previous run showed it (the person is looking at new content)."""
    if ident in snap.facts:
        field, now = "revision", snap.facts[ident].revision
    else:
        assert snap.derived is not None
        field, now = "content", group_content(snap.derived, stage, ident)
    key = f"shown:{stage}:{ident}"
    before = st.session_state.get(key, now)
    st.session_state[key] = now
    st.session_state[SHOWN] = (stage, ident, field, before)
    if before != now:
        change = f" (revision {before} → {now})" if field == "revision" else ""
        st.warning(
            f"{ident} changed since you opened it{change}: what you see now is the new content. "
            "Your input is kept; check it against the new content before you submit.",
            icon=":material/update:",
        )


def _with_seen(record: dict[str, Any]) -> dict[str, Any]:
    """The record with the revision (or group content) the page showed before this run, unless it names one."""
    shown = st.session_state.get(SHOWN)
    if shown is None or "revision" in record or "content" in record:
        return record
    stage, ident, field, before = shown
    if record.get("stage") != stage or ident not in (record.get("item"), record.get("group")):
        return record
    return {**record, field: before}


def reveal_gate(ws: Workspace, snap: Snapshot, user: SignedIn, items: list[str], what: str, via: str) -> bool:
    """Before a page shows labels: True when USER already knows every one of ITEMS' labels (or just confirmed).

    Otherwise say so first — which labels, and how many blind checks USER would give up by seeing them (items
    they could still check blind) — and offer an explicit confirm; confirming records the exposure
    (``curation.exposure``, via VIEW) and redraws, and the page then shows the labels. Returns False meanwhile.
    """
    with ws.session() as s:
        known = exposed_items(s, user.name, items)
    new = [i for i in items if i not in known]
    if not new:
        return True
    assert snap.derived is not None
    lost = blind_checks_given_up(ws, snap.derived, user.name, new)
    st.warning(
        f"This shows the labels (answers) of {len(new)} item(s) you have not seen: {what}. "
        f"You would give up {len(lost)} blind check(s) you could still do"
        + (f" ({', '.join(lost)})" if lost else "")
        + ". Seeing a label is recorded, and nobody does the blind check of an item whose label they saw.",
        icon=":material/visibility:",
    )
    if st.button("Show the labels", key=f"reveal-{via}-{','.join(new)}"):
        reveal(ws, user.name, new, via)
        st.rerun()
    return False


def verdict_form(
    key: str, question: str, note_label: str, note_placeholder: str, draft: PageDraft | None = None
) -> tuple[str, str] | None:
    """A pass-or-fail choice with a note and a Submit button; the verdict and note once submitted with a verdict,
    else None.

    With a ``draft`` (over ``verdict_fields(key)``) the verdict and note are the person's draft: restored when this
    tab does not hold them (a reload, a new session), kept on the server as they are chosen and typed (no
    ``st.form``: a form sends nothing before its submit), and discarded by ``record_review(..., draft=...)``."""
    fields = draft.fields if draft is not None else verdict_fields(key)
    keep = None
    if draft is not None:
        draft.restore()
        keep = draft.keep
    verdict = st.radio(question, list(VERDICTS), index=None, horizontal=True, key=fields["verdict"].key, on_change=keep)
    note = st.text_area(note_label, placeholder=note_placeholder, key=fields["note"].key, on_change=keep)
    submitted = st.button("Submit", type="primary", key=f"{key}-submit")
    if not submitted:
        return None
    if verdict is None:
        st.error("Choose pass or fail.")
        return None
    return verdict, note


def record_review(
    ws: Workspace,
    record: dict[str, Any],
    done: str,
    forget: Iterable[str] = (),
    draft: tuple[str, str] | None = None,
) -> None:
    """Submit a review from a page, naming what the page showed: on success drop the page's session keys and
    the held entry, confirm on the next run and redraw (the queue moves on). A refusal is shown instead and the
    input stays: an entry that no longer waits for the person is not submitted (``review_queue`` says why), and
    a ``stale:<stage>`` refusal asks to check the new content shown. ``draft`` (page, subject): the reviewer's
    draft of this form, discarded once the record is stored."""
    conflict = st.session_state.get(CONFLICT)
    if conflict:
        st.error(f"Not recorded. {conflict}", icon=":material/block:")
        return
    try:
        submit_review(ws, _with_seen(record))
    except CurateError as exc:
        stale = [p.message for p in getattr(exc, "problems", []) if p.message.startswith("stale:")]
        gone = [p.message for p in getattr(exc, "problems", []) if p.message.startswith(f"{NO_LONGER_NEEDED}:")]
        if gone:
            st.error(
                f"Not recorded: {gone[0].split(': ', 1)[1]}. Someone else's record got there first; what you "
                "typed stays below.",
                icon=":material/block:",
            )
        elif stale:
            st.warning(
                f"Not recorded: {stale[0]}. The page now shows the new content and keeps your input: "
                "check it and submit again.",
                icon=":material/update:",
            )
        else:
            show_error(exc)
        return
    if draft is not None:
        discard_draft(ws, str(record["reviewer"]), *draft)
    for key in forget:
        st.session_state.pop(key, None)
    release_held()
    flash(done)
    st.rerun()
