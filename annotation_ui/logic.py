"""Page logic of the annotation UI as plain functions: no Streamlit here, so all of it is unit-tested.

Every action goes through the domain (``curation.reviews.record_reviews``, ``curation.authoring``),
which enforces roles and the no-self-review rule again whatever the page offered.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import select

from curation.decisions import history
from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.jsonl import pydantic_problems
from curation.kinds import kinds as kinds_registered
from curation.kinds import stage_named
from curation.notes import item_notes
from curation.review_queues import QueueReport, queue_report_from
from curation.reviews import PendingReview, ReviewReport, record_reviews, split_seen
from curation.sister_content import content, normalized
from curation.tables import Asset, Person
from curation.vocab import MODALITIES, PLACEHOLDERS, view_modalities
from curation.workflow import ItemFacts
from curation.workspace import Workspace

from .snapshot import Snapshot

# ----- sign-in and navigation ------------------------------------------------------------------


@dataclass(frozen=True)
class SignedIn:
    """Who is using this browser session; kept in ``st.session_state``."""

    name: str
    roles: frozenset[str]


def sign_in_by_email(ws: Workspace, email: str) -> SignedIn:
    """An OIDC sign-in: the provider vouches for the e-mail, which must belong to a person here."""
    wanted = email.strip().casefold()
    with ws.session() as s:
        people = [p for p in s.execute(select(Person)).scalars() if (p.email or "").casefold() == wanted]
    if len(people) != 1:
        raise PermissionDenied(
            f"no single person here has the e-mail {email!r}; a maintainer sets it with "
            "`curate people add NAME --role ... --email ...`"
        )
    return SignedIn(people[0].name, frozenset(people[0].role_set))


def oidc_providers(secrets: Any) -> list[str | None]:
    """Providers for ``st.login`` from the ``[auth]`` section of secrets.toml: [] when none is set up,
    ``[None]`` for the single default provider, else the names of ``[auth.NAME]`` sections."""
    try:
        auth = secrets.get("auth") if secrets is not None else None
    except Exception:  # st.secrets raises when there is no secrets file at all
        return []
    if not auth or not auth.get("redirect_uri"):
        return []
    named = sorted(k for k, v in auth.items() if hasattr(v, "get") and v.get("client_id"))
    if named:
        return list(named)
    return [None] if auth.get("client_id") else []


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    icon: str
    kinds: frozenset[str] | None = None
    """The kinds whose units the page works on; None: a page of every kind."""


MCQ_ONLY = frozenset({"mcq"})
IN_ITEM_TABLE = frozenset({"mcq", "story_transition"})
SIGN_IN = PageSpec("pages/sign_in.py", "Sign in", ":material/login:")
PAGES_BY_ROLE: dict[str, list[PageSpec]] = {  # reviewers get one page per registered stage (stage_pages)
    "author": [
        PageSpec("pages/author.py", "Write or edit an item", ":material/edit_note:", MCQ_ONLY),
        PageSpec("pages/returned.py", "Returned to you", ":material/undo:", IN_ITEM_TABLE),
    ],
    "maintainer": [
        PageSpec("pages/dashboard.py", "Dashboard", ":material/monitoring:"),
        PageSpec("pages/adjudication.py", "Adjudicate checklists", ":material/gavel:", MCQ_ONLY),
        PageSpec("pages/history.py", "Item history", ":material/history:", IN_ITEM_TABLE),
    ],
    "reviewer": [
        PageSpec("pages/audio_spot_check.py", "Spot check", ":material/hearing:", MCQ_ONLY),
        PageSpec("pages/baseline.py", "Human baseline", ":material/groups:", MCQ_ONLY),
    ],
    "producer": [PageSpec("pages/audio_takes.py", "Takes", ":material/mic:", MCQ_ONLY)],
}
SECTIONS = {"author": "Authoring", "reviewer": "Review", "producer": "Audio production", "maintainer": "Maintain"}


def pages_for(user: SignedIn | None, present: Iterable[str] = ("mcq",)) -> dict[str, list[PageSpec]]:
    """The navigation of one person: sections in a fixed order, only for roles they hold and only pages of
    the kinds PRESENT in the workspace (an empty workspace counts as mcq: its first item is written here)."""
    if user is None:
        return {"": [SIGN_IN]}
    kinds = set(present) or {"mcq"}
    pages: dict[str, list[PageSpec]] = {}
    for role in SECTIONS:
        if role not in user.roles:
            continue
        offered = [*stage_pages(), *PAGES_BY_ROLE[role]] if role == "reviewer" else PAGES_BY_ROLE[role]
        shown = [p for p in offered if p.kinds is None or p.kinds & kinds]
        if shown:
            pages[SECTIONS[role]] = shown
    pages["Account"] = [SIGN_IN]
    return pages


def closed_page_note(spec: PageSpec, roles: Iterable[str], user: SignedIn, present: Iterable[str]) -> str:
    """Why a signed-in person cannot open a page they reached by its address (a bookmark, a colleague's link):
    the page named, what it needs (ROLES, any one of them; its kinds), and what to do instead."""
    needed = list(dict.fromkeys(roles))  # in the order given: the first is the one to ask for
    if not set(needed) & user.roles:
        held = ", ".join(sorted(user.roles)) or "no role"
        return (
            f"“{spec.title}” is for people with the {' or '.join(needed)} role; you are signed in as {user.name} "
            f"({held}). Open one of your pages from the sidebar, or ask a maintainer for the role "
            f"(`curate people add {user.name} --role {needed[0]}`)."
        )
    wanted = ", ".join(sorted(spec.kinds or ()))
    held_kinds = ", ".join(sorted(set(present))) or "nothing yet"
    return (
        f"“{spec.title}” works on {wanted} units, and this workspace holds {held_kinds}. "
        "Open one of your pages from the sidebar."
    )


def every_page() -> list[PageSpec]:
    """Every page the app has (whoever may open it): a signed-out deep link must name a known page."""
    return [
        *PAGES_BY_ROLE["author"],
        *stage_pages(),
        *PAGES_BY_ROLE["reviewer"],
        *PAGES_BY_ROLE["producer"],
        *PAGES_BY_ROLE["maintainer"],
    ]


def stage_pages() -> list[PageSpec]:
    """The review pages, one per registered stage that declares one, in the stages' order."""
    return [
        PageSpec(s.page.path, s.page.title, s.page.icon, frozenset({k.name}))
        for k in kinds_registered()
        for s in k.stages
        if s.page is not None
    ]


# ----- queues -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueuePage:
    ids: list[str]
    total: int
    page: int
    pages: int


def queue(ws: Workspace, snap: Snapshot, stage: str, reviewer: str) -> list[str]:
    """What REVIEWER may review next at STAGE (items, or groups for group integration: open groups only).

    The rule of ``curation.review_queues.review_queue`` (``queue_report_from``), read from the cached snapshot's
    derivation plus a query for the reviewer's own records and exposures; cached per snapshot.
    """
    return queue_report(ws, snap, stage, reviewer).offered


def queue_report(ws: Workspace, snap: Snapshot, stage: str, reviewer: str) -> QueueReport:
    """:func:`queue` with what else waits at STAGE that REVIEWER is not offered, and why."""
    ws.require_role(reviewer, "reviewer")
    cached = snap.queues.get((stage, reviewer))
    if cached is None:
        found = stage_named(stage)
        if found is None:
            raise ValidationFailed([Problem(f"unknown stage {stage!r}", "stage")])
        assert snap.derived is not None
        cached = snap.queues[(stage, reviewer)] = queue_report_from(ws, snap.derived, found, reviewer)
    return cached


def page_of(ids: list[str], page: int, page_size: int) -> QueuePage:
    """One page (numbered from 1, clamped to the last) of a queue; only these rows are rendered."""
    pages = max(1, math.ceil(len(ids) / page_size))
    page = min(max(1, page), pages)
    start = (page - 1) * page_size
    return QueuePage(ids[start : start + page_size], len(ids), page, pages)


# ----- what a reviewer sees ---------------------------------------------------------------------


@dataclass(frozen=True)
class MediaRef:
    sha256: str
    mime: str
    path: str


def media_ref(ws: Workspace, sha256: str) -> MediaRef:
    with ws.session() as s:
        asset = s.get(Asset, sha256)
    if asset is None:
        raise NotFoundError(f"medium {sha256[:12]}… is not in the media store")
    return MediaRef(sha256, asset.mime, str(ws.asset_path(asset)))


@dataclass(frozen=True)
class ViewContent:
    """One modality view of an item: hidden modalities are replaced by the probe checker's placeholders."""

    item: str
    view: str
    context: str | None
    image: str | None
    audio: str | None
    placeholders: dict[str, str]
    question: str
    options: dict[str, str]
    notes: dict[str, str] = field(default_factory=dict)
    """The item's notes (``curation.notes``) on the view's own modalities only: a note on a hidden modality would
    tell what the view hides."""


def checklist_view(item: ItemFacts, view: str) -> ViewContent:
    """Only VIEW's modalities (placeholders for the item's other ones) and their notes; the answer is not part of
    it."""
    shown = view_modalities(view)
    notes = item_notes(item.extra) if item.kind == "mcq" else {}
    return ViewContent(
        item=item.id,
        view=view,
        context=item.context if "text" in shown else None,
        image=item.image if "image" in shown else None,
        audio=item.audio if "audio" in shown else None,
        placeholders={m: PLACEHOLDERS[m] for m in item.modalities if m not in shown},
        question=item.question,
        options=dict(item.options),
        notes={m: text for m, text in notes.items() if m in shown},
    )


@dataclass(frozen=True)
class BlindItem:
    """What the blind answer check shows: the full item and its options, and nothing that holds the label."""

    item: str
    context: str
    image: str
    audio: str
    question: str
    options: dict[str, str]


def blind_item(item: ItemFacts) -> BlindItem:
    return BlindItem(item.id, item.context, item.image, item.audio, item.question, dict(item.options))


@dataclass(frozen=True)
class GroupPanel:
    group: str
    perturbed: str
    sisters: list[ItemFacts]
    """The live sisters, in id order (the group reviewer sees their labels)."""
    varying: frozenset[str]
    """Modalities whose content differs between sisters: the perturbed one, and any other is a finding."""
    rule_reasons: list[str]


def group_panel(ws: Workspace, snap: Snapshot, group: str) -> GroupPanel:
    """Sisters side by side with the perturbed modality marked, and the automatic group checks."""
    if group not in snap.perturbed:
        raise NotFoundError(f"no group {group!r}")
    sisters = snap.live_sisters(group)
    contents = [normalized(content(i.context, i.image, i.audio, i.modalities)) for i in sisters]  # as the rules do
    varying = frozenset(m for n, m in enumerate(MODALITIES) if len({c[n] for c in contents}) > 1)
    return GroupPanel(group, snap.perturbed[group], sisters, varying, snap.group_rule_reasons(ws, group))


def group_summary(snap: Snapshot, group: str) -> str:
    """One line per group for the picker: its id and each live sister's state (no labels)."""
    sisters = snap.live_sisters(group)
    states = []
    for sister in sisters:
        st = snap.status_by_id[sister.id]
        states.append(f"{sister.id}: {st.state}" + (f" at {st.stage}" if st.stage else ""))
    return f"{group} ({len(sisters)} sisters) — " + "; ".join(states)


# ----- recording --------------------------------------------------------------------------------


def submit_review(ws: Workspace, record: dict[str, Any]) -> ReviewReport:
    """Parse one review record (the JSONL shape of design.md, with the ``revision`` or group ``content`` the
    page showed) and record it through the domain, which refuses it as ``stale:<stage>`` if that changed."""
    found = stage_named(str(record.get("stage")))
    model: type[BaseModel] | None = found.record_model if found else None
    if model is None:
        raise ValidationFailed([Problem(f"unknown stage {record.get('stage')!r}", "stage")])
    fields, seen, seen_problems = split_seen(record)
    if seen_problems:
        raise ValidationFailed([Problem(message, name) for name, message in seen_problems], "nothing was recorded")
    try:
        review = model.model_validate(fields)
    except ValidationError as exc:
        raise ValidationFailed(_unlocated(pydantic_problems(exc, "", 0)), "nothing was recorded") from None
    try:
        return record_reviews(ws, [PendingReview(0, review, seen)], source="ui", needed_only=True)  # type: ignore[arg-type]
    except ValidationFailed as exc:
        raise ValidationFailed(_unlocated(exc.problems), "nothing was recorded") from None


def _unlocated(problems: list[Problem]) -> list[Problem]:
    """Drop the line number a JSONL import would show: the page has no lines."""
    return [Problem(p.message, field=p.field) for p in problems]


# ----- history ----------------------------------------------------------------------------------


def history_rows(ws: Workspace, item_id: str) -> list[dict[str, Any]]:
    """The item's (and its group's) events, oldest first, as table rows."""
    return [
        {
            "at": e.at.strftime("%Y-%m-%d %H:%M:%S"),
            "actor": e.actor,
            "action": e.action,
            "subject": e.subject,
            "before": e.before,
            "after": e.after,
        }
        for e in history(ws, item_id)
    ]
