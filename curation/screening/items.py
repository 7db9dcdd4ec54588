"""Story transitions as workspace items: promotion of the screened selection, revisions, the App. C gates.

Promotion is where a candidate's media are finally hashed, decoded and copied into the content-addressed
store; the item keeps the current page in ``context``/``image`` and everything else of the transition in
``item.extra`` (a :class:`StoryTransition` with media as hashes). Its author is the screening pipeline
(person ``screen``), so every human reviewer may filter and revise it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.audit.clusters import Cluster, cluster_from_dict
from curation.audit.normalize import put_gate
from curation.audit.run import Resolution
from curation.audit.workspace import RESOLVED, resolutions
from curation.errors import MediaError, NotFoundError, Problem, ValidationFailed, WorkspaceError
from curation.facts import ItemFacts, canonical_json
from curation.import_report import ImportReport
from curation.jsonl import read_jsonl, validate_line
from curation.kinds import kind_of
from curation.licences import licence_problem
from curation.media import MediaInfo, MediaPaths, inspect_image, sha256_file
from curation.tables import (
    Asset,
    Decision,
    GateResult,
    Item,
    ItemRevision,
    Person,
    ReviewRecord,
    SceneGroup,
    utcnow,
)
from curation.workflow import discarded_items
from curation.workspace import Workspace, record_event

from .audits import AuditedTransition, StoryAudit, audit_transitions
from .pipeline import selected_candidates
from .revise import ReviseRecord, apply_revision, transition_from_record, unattributed
from .schema import StoryTransition
from .settings import ScreenSettings
from .transitions import image_phash, transition_records

KIND = "story_transition"
STORY_AUTHOR = "screen"
"""The person that stands for the screening pipeline (model-written annotations) as an item's author."""


def transition_hash(transition: StoryTransition) -> str:
    data = transition.model_dump(mode="json")
    if data.get("origin") is None:
        data.pop("origin", None)  # items from before origins hash as they did
    return hashlib.sha256(canonical_json(data)).hexdigest()


@dataclass
class PromoteReport:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    new_media: int = 0

    def summary(self) -> str:
        return (
            f"{len(self.created)} story items created, {len(self.unchanged)} already items, {self.new_media} new media"
        )


def _inspect(path: Path, ws: Workspace, seen: dict[str, MediaInfo]) -> MediaInfo:
    key = str(path)
    if key not in seen:
        if not path.is_file():
            raise MediaError(f"{path}: file not found (the candidate's media moved since import)")
        seen[key] = inspect_image(path, sha256_file(path), ws.settings.media.max_image_pixels)
    return seen[key]


def _ensure_author(s, actor: str) -> None:  # type: ignore[no-untyped-def]
    if s.get(Person, STORY_AUTHOR) is None:
        s.add(Person(name=STORY_AUTHOR, roles="author"))
        record_event(s, actor, "person.created", f"person:{STORY_AUTHOR}", None, {"roles": ["author"]})


def promote_selected(ws: Workspace, settings: ScreenSettings, actor: str = "cli") -> PromoteReport:
    """Make every candidate the last screen kept into a ``story_transition`` item (one transaction).

    Items that exist already are left as they are: their human revisions are never overwritten.
    """
    report = PromoteReport()
    with ws.session() as s:
        existing = set(s.execute(select(col(Item.id))).scalars())
    records = [r for r in transition_records(ws, selected_candidates(ws, settings)) if r["id"] not in existing]
    report.unchanged = sorted(set(selected_candidates(ws, settings)) & existing)
    seen: dict[str, MediaInfo] = {}
    problems: list[Problem] = []
    prepared: list[tuple[StoryTransition, dict[str, tuple[MediaInfo, Path]]]] = []
    for record in records:
        try:
            media = {
                side: (_inspect(Path(record[side]["image"]), ws, seen), Path(record[side]["image"]))
                for side in ("current", "next")
            }
            transition = transition_from_record(record)
        except MediaError as exc:
            problems.append(Problem(str(exc), "image", file=record["id"]))
            continue
        except ValidationFailed as exc:
            problems.extend(Problem(p.message, p.field, file=record["id"]) for p in exc.problems)
            continue
        transition = transition.model_copy(
            update={
                "current": transition.current.model_copy(update={"image": media["current"][0].sha256}),
                "next": transition.next.model_copy(update={"image": media["next"][0].sha256}),
            }
        )
        prepared.append((transition, media))
    if problems:
        raise ValidationFailed(problems, "nothing was promoted")
    report.new_media, taken = _store_new(ws, prepared, actor, "item.promoted", skip_taken=True)
    report.created = [t.id for t, _ in prepared if t.id not in taken]
    report.unchanged = sorted({*report.unchanged, *taken})  # a promote running at the same time made them
    return report


Prepared = list[tuple[StoryTransition, dict[str, tuple[MediaInfo, Path]]]]
"""Transitions with media as hashes, and per side the inspected medium and the file it is copied from."""


def _store_new(ws: Workspace, prepared: Prepared, actor: str, action: str, skip_taken: bool) -> tuple[int, list[str]]:
    """Store new story items, their media and books in one transaction (media staged, kept on commit); returns
    how many media were new and which items another command created meanwhile.

    Items and assets are read again inside the write transaction, so that two commands at once serialize
    instead of both inserting one row: a taken item is skipped (``skip_taken``) or refuses the whole batch."""
    new_media = 0
    staging = ws.media.stage()
    try:
        with ws.writing() as s:
            _ensure_author(s, actor)
            ids = [t.id for t, _ in prepared]
            taken = sorted(set(s.execute(select(col(Item.id)).where(col(Item.id).in_(ids))).scalars()))
            if taken and not skip_taken:
                raise WorkspaceError(
                    f"another command created {', '.join(taken[:5])} while this one ran; nothing was imported — "
                    "run it again"
                )
            prepared = [(t, m) for t, m in prepared if t.id not in taken]
            known_assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
            groups = set(s.execute(select(col(SceneGroup.id))).scalars())
            now = utcnow()
            for transition, media in prepared:
                for info, source in media.values():
                    if info.sha256 not in known_assets:
                        asset = Asset(
                            **info.asset_columns(source.name),
                            provenance={"source": "drawing", "license": transition.source.license},
                        )
                        s.add(asset)
                        known_assets[info.sha256] = asset
                        new_media += 1
                    staging.keep(staging.intake(source, info.sha256), info.sha256, info.ext)
                if transition.book not in groups:
                    s.add(SceneGroup(id=transition.book, perturbed="mixed"))
                    groups.add(transition.book)
            s.flush()
            for transition, _ in prepared:
                content = transition.model_dump(mode="json")
                digest = transition_hash(transition)
                s.add(
                    Item(
                        id=transition.id,
                        group_id=transition.book,
                        revision=1,
                        author=STORY_AUTHOR,
                        language="en",
                        kind=KIND,
                        modalities=["text", "image"],
                        context=transition.current.text,
                        question="",
                        options={},
                        answer="",
                        taxonomy={},
                        ambiguous=[],
                        image=transition.current.image,
                        audio=None,
                        provenance={"image": {"source": "drawing", "license": transition.source.license}},
                        content_hash=digest,
                        extra=content,
                        created_at=now,
                        updated_at=now,
                    )
                )
                s.flush()
                s.add(
                    ItemRevision(
                        item_id=transition.id, revision=1, content=content, content_hash=digest, created_by=actor
                    )
                )
                record_event(s, actor, action, f"item:{transition.id}", None, {"kind": KIND, "revision": 1})
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return new_media, taken


def story_item(ws: Workspace, item_id: str) -> StoryTransition:
    return story_item_at(ws, item_id)[0]


def story_item_at(ws: Workspace, item_id: str) -> tuple[StoryTransition, int]:
    """A transition and its revision, read together: a page shows the one and names the other when it saves."""
    with ws.session() as s:
        item = s.get(Item, item_id)
    if item is None or item.kind != KIND:
        raise NotFoundError(f"no story transition {item_id!r} in this workspace")
    return StoryTransition.model_validate(item.extra), item.revision


@dataclass
class ReviseReport:
    revised: list[str] = field(default_factory=list)
    signed_off: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.revised)} revision(s) recorded, {len(self.signed_off)} sign-off(s) without edits"


def revise_items(
    ws: Workspace,
    records: list[tuple[int, ReviseRecord]],
    file: str = "",
    actor: str | None = None,
    source: str = "revise",
) -> ReviseReport:
    """Apply reviewers' edits, each as a new revision of its item, and store each record as its reviewer's
    sign-off of the resulting annotation — the whole file in one transaction, or nothing. ``source`` (where
    the edits came from: ``revise``, ``labelstudio``) goes on each revision's event and sign-off record.

    Every record is checked first (reviewer, item, edits valid for the field group, in file order on the
    item as the earlier lines left it); all problems are reported together as FILE:LINE: field: problem.
    """
    stage = kind_of(KIND).stage("revise")
    report = ReviseReport()
    with ws.writing() as s:
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        items: dict[str, Item] = {}
        current: dict[str, StoryTransition] = {}
        problems: list[Problem] = []
        planned: list[tuple[ReviseRecord, StoryTransition, StoryTransition]] = []
        revisions: dict[str, int] = {}  # item -> its revision as the earlier lines of the file leave it
        for line, record in records:
            where: dict[str, Any] = {"line": line or None, "file": file}
            person = people.get(record.reviewer)
            if person is None or "reviewer" not in person.role_set:
                problems.append(
                    Problem(f"{record.reviewer!r} is not a reviewer of this workspace", "reviewer", **where)
                )
                continue
            if record.item not in items:
                found = s.get(Item, record.item)
                if found is None or found.kind != KIND:
                    problems.append(Problem(f"no story transition {record.item!r} in this workspace", "item", **where))
                    continue
                items[record.item] = found
                current[record.item] = StoryTransition.model_validate(found.extra)
                revisions[record.item] = found.revision
            item = items[record.item]
            if record.revision is not None and record.revision != revisions[record.item]:
                problems.append(
                    Problem(
                        f"stale:revise: {item.id!r} changed since you saw it (revision {record.revision}, now "
                        f"{revisions[record.item]}); nothing was saved: look at it again",
                        "revision",
                        **where,
                    )
                )
                continue
            if person.name == item.author:
                problems.append(
                    Problem(f"{person.name!r} authored {item.id!r}: nobody reviews their own item", "reviewer", **where)
                )
                continue
            before = current[record.item]
            try:
                after = apply_revision(before, record) if record.edits else before
            except ValidationFailed as exc:
                problems.extend(Problem(p.message, f"edits.{p.field}", **where) for p in exc.problems)
                continue
            current[record.item] = after
            revisions[record.item] += 1 if record.edits else 0
            planned.append((record, before, after))
        if problems:
            raise ValidationFailed(
                problems, f"{len(problems)} problem(s) in {file or 'the revisions'}; nothing was recorded"
            )
        now = utcnow()
        for record, _before, after in planned:
            item = items[record.item]
            content = after.model_dump(mode="json")
            if record.edits:
                item.revision += 1
                item.extra = content
                item.content_hash = transition_hash(after)
                item.updated_at = now
                s.add(item)
                s.flush()
                s.add(
                    ItemRevision(
                        item_id=item.id,
                        revision=item.revision,
                        content=content,
                        content_hash=item.content_hash,
                        created_by=record.reviewer,
                    )
                )
                record_event(
                    s,
                    actor or record.reviewer,
                    "item.revised",
                    f"item:{item.id}",
                    {"revision": item.revision - 1},
                    {"revision": item.revision, "edits": record.edits, "source": source},
                )
                report.revised.append(item.id)
            else:
                report.signed_off.append(item.id)
            facts = ItemFacts(
                item.id,
                item.group_id,
                item.author,
                item.revision,
                item.context,
                "",
                {},
                "",
                item.image or "",
                "",
                "",
                item.content_hash,
                KIND,
                ("text", "image"),
                content,
            )
            key = (f"item:{item.id}", "revise", record.reviewer, item.revision)
            prior = s.execute(
                select(ReviewRecord).where(
                    col(ReviewRecord.subject) == key[0],
                    col(ReviewRecord.stage) == key[1],
                    col(ReviewRecord.reviewer) == key[2],
                    col(ReviewRecord.revision) == key[3],
                )
            ).scalar_one_or_none()
            payload = {"edits": record.edits, "note": record.note}
            if prior is None:
                s.add(
                    ReviewRecord(
                        subject=key[0],
                        stage="revise",
                        reviewer=record.reviewer,
                        revision=item.revision,
                        inputs_hash=stage.inputs(facts),
                        payload=payload,
                        source=source,
                    )
                )
            else:
                prior.payload, prior.inputs_hash, prior.updated_at = payload, stage.inputs(facts), now
                s.add(prior)
            s.flush()
    return report


def _audited(item_id: str, transition: StoryTransition, ws: Workspace, assets: dict[str, Asset]) -> AuditedTransition:
    def phash(sha: str) -> int | None:
        asset = assets.get(sha)
        return image_phash(str(ws.asset_path(asset))) if asset else None

    return AuditedTransition(
        id=item_id,
        book=transition.book,
        page=transition.page,
        current_text=transition.current.text,
        next_text=transition.next.text,
        topic=transition.book_meta.topic,
        conditions=transition.conditions.model_dump(mode="json"),
        image_hashes=(phash(transition.current.image), phash(transition.next.image)),
    )


def audit_story_items(ws: Workspace, actor: str = "cli") -> StoryAudit:
    """Run App. C over every live story item and store the findings as the ``story_audit`` (blocking) and
    ``story_overlap`` (warning) gates on each item's current content."""
    with ws.session() as s:
        gone = discarded_items(s.execute(select(Decision)).scalars())
        items = [
            i
            for i in s.execute(select(Item).where(col(Item.kind) == KIND).order_by(col(Item.id))).scalars()
            if i.id not in gone
        ]
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    transitions = {i.id: StoryTransition.model_validate(i.extra) for i in items}
    report = audit_transitions([_audited(i.id, transitions[i.id], ws, assets) for i in items])
    policy = ws.settings.story.duplicates
    reasons, warnings = report.item_reasons(resolutions(ws), policy), report.item_warnings(policy)
    spans = {leak.item: leak for leak in report.span_leaks}
    with ws.writing() as s:
        for item in items:
            details: dict[str, Any] = {
                "reference_span": report.reference.longest.get(item.id, 0),
                "clusters": [c.to_dict() for c in report.clusters if item.id in c.items],
            }
            if item.id in spans:
                leak = spans[item.id]
                details["shared_span"] = {
                    "field": leak.field,
                    "span": leak.span,
                    "book": leak.page[0],
                    "page": leak.page[1],
                }
            put_gate(s, item.id, "story_audit", item.content_hash, reasons.get(item.id, []), details)
            put_gate(s, item.id, "story_overlap", item.content_hash, warnings.get(item.id, []), details)
        record_event(s, actor, "audit.story", "workspace", None, {"items": len(items), "blocked": len(reasons)})
    return report


def story_clusters(ws: Workspace) -> dict[str, Cluster]:
    """The duplicate clusters of the latest story audit (``curate story audit``), by id."""
    found: dict[str, Cluster] = {}
    with ws.session() as s:
        rows = s.execute(select(GateResult).where(col(GateResult.gate) == "story_audit")).scalars()
        for row in rows:
            for data in (row.details or {}).get("clusters", []):
                found.setdefault(data["id"], cluster_from_dict(data))
    return found


def resolve_story_cluster(
    ws: Workspace, target: str, by: str, keep: str | None = None, distinct: bool = False, reason: str = ""
) -> Resolution:
    """A maintainer keeps one transition of a duplicate cluster, or declares its members distinct (with a
    reason); an event on every member, then the story gates are stored again with the decision applied.

    A resolved cluster holds nothing: ``--keep ITEM`` discards the members from other books than ITEM's
    (a ``discard`` decision each, undone with ``curate decide ITEM restore``), ``--distinct`` frees them all."""
    ws.require_role(by, "maintainer")
    if (keep is None) == (not distinct):
        raise ValidationFailed([Problem("give exactly one of --keep ITEM or --distinct", field="resolution")])
    if not reason.strip() and distinct:
        raise ValidationFailed([Problem("--distinct needs a --reason (kept in the event log)", field="reason")])
    found = story_clusters(ws).get(target)
    if found is None:
        raise NotFoundError(
            f"no duplicate cluster {target!r} in the latest story audit; run `curate story audit` to list them"
        )
    if keep is not None and keep not in found.items:
        raise ValidationFailed([Problem(f"{keep!r} is not in {target} ({', '.join(found.items)})", field="keep")])
    decision = Resolution(target, keep, distinct, reason.strip(), tuple(found.items))
    with ws.writing() as s:
        after = {"target": target, "keep": keep, "distinct": distinct, "reason": decision.reason}
        for item_id in found.items:
            record_event(s, by, RESOLVED, f"item:{item_id}", None, {**after, "items": list(found.items)})
        if keep is not None:
            _discard_copies(s, found, keep, by, decision.reason)
    audit_story_items(ws, actor=by)
    return decision


def _discard_copies(s, cluster: Cluster, keep: str, by: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """Discard the members of ``cluster`` outside the kept item's book, in the resolution's transaction."""
    members = {i.id: i for i in s.execute(select(Item).where(col(Item.id).in_(cluster.items))).scalars()}
    book = members[keep].extra.get("book")
    why = f"duplicate of {keep} ({cluster.id}), resolved with --keep" + (f": {reason}" if reason else "")
    for item_id, item in sorted(members.items()):
        if item.extra.get("book") == book:
            continue
        s.add(Decision(item_id=item_id, kind="discard", reason=why, actor=by, revision=item.revision))
        record_event(s, by, "item.discard", f"item:{item_id}", None, {"reason": why, "revision": item.revision})


def _provenance_problems(item: StoryTransition, people: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(field, message) for what an imported transition claims of its authors that the workspace cannot back:
    a reviser who is nobody here, or a value that differs from the model's proposal, or has none (any subset of
    the proposal groups may be missing), with no reviser named (the model would be credited with a person's
    words)."""
    found = []
    for path, person in sorted(item.revised_by.items()):
        if person not in people:
            found.append((f"revised_by.{path}", f"{person!r} is not a person of this workspace; add them first"))
        elif not people[person] & {"reviewer", "maintainer"}:
            found.append((f"revised_by.{path}", f"{person!r} has neither the reviewer nor the maintainer role"))
    return found + unattributed(item)


def import_story_items(ws: Workspace, path: Path, actor: str = "cli") -> ImportReport:
    """Import story transitions as ``curate export items`` writes them (the item's content, media paths
    relative to the file): every line checked first (FILE:LINE: field: problem), then all in one transaction.

    An item that exists with the same content is unchanged; with other content it is refused (its revisions
    are made with ``curate story revise``, never by an import over them). Returns what it did.
    """
    ws.recover_media()
    file = str(path)
    report = ImportReport()
    with ws.session() as s:
        existing = dict(s.execute(select(col(Item.id), col(Item.content_hash))).all())
        people = {p.name: p.role_set for p in s.execute(select(Person)).scalars()}
    problems: list[Problem] = []
    prepared: Prepared = []
    first_line: dict[str, int] = {}
    seen: dict[str, MediaInfo] = {}
    media_paths = MediaPaths(path.parent)  # one realpath per folder, not two per image
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        parsed = validate_line(StoryTransition, obj, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
            continue
        assert isinstance(parsed, StoryTransition)
        if parsed.id in first_line:
            problems.append(
                Problem(f"duplicate id {parsed.id!r} (first on line {first_line[parsed.id]})", "id", number, file)
            )
            continue
        problems += [Problem(m, f, number, file) for f, m in _provenance_problems(parsed, people)]
        if why := licence_problem(parsed.source.license, ws.settings.licences.accepted()):
            problems.append(Problem(why, "source.license", number, file))
        first_line[parsed.id] = number
        media: dict[str, tuple[MediaInfo, Path]] = {}
        for side in ("current", "next"):
            try:
                source = media_paths.resolve(getattr(parsed, side).image)
                if not source.is_file():
                    raise MediaError(f"{getattr(parsed, side).image}: file not found beside {path.name}")
                media[side] = (_inspect(source, ws, seen), source)
            except MediaError as exc:
                problems.append(Problem(str(exc), f"{side}.image", number, file))
        if len(media) < 2:
            continue
        transition = parsed.model_copy(
            update={side: getattr(parsed, side).model_copy(update={"image": media[side][0].sha256}) for side in media}
        )
        if parsed.id in existing:
            if existing[parsed.id] == transition_hash(transition):
                report.unchanged.append(parsed.id)
            else:
                problems.append(
                    Problem(
                        f"{parsed.id!r} is already an item with other content; revise it with `curate story revise`",
                        "id",
                        number,
                        file,
                    )
                )
            continue
        prepared.append((transition, media))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")
    if prepared:
        report.new_media, _ = _store_new(ws, prepared, actor, "item.created", skip_taken=False)
    report.created = [t.id for t, _ in prepared]
    return report
