"""The story_transition kind end to end on a workspace: promotion, filter and revise, App. C gates, status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from checker.structured import ReplayStructured
from curation.config import CONFIG_NAME
from curation.decisions import decide
from curation.errors import NotFoundError, PermissionDenied, ValidationFailed
from curation.items import export_items, import_items
from curation.reviews import import_reviews
from curation.screening.importer import import_candidates
from curation.screening.items import (
    KIND,
    audit_story_items,
    promote_selected,
    resolve_story_cluster,
    revise_items,
    story_clusters,
    story_item,
)
from curation.screening.pipeline import run_screen
from curation.screening.revise import ReviseRecord, diff_against_proposal, field_provenance
from curation.screening.settings import ScreenSettings
from curation.tables import Asset, Decision, Event, Item, ItemRevision
from curation.workflow import derive_status
from exports.story_release import build_story_release
from omnicurate.cli.main import app
from omnicurate.demo.story_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("story"), books=10)


@pytest.fixture
def story_ws(workspace, corpus):  # type: ignore[no-untyped-def]
    for name in ("rev1", "rev2", "rev3"):
        workspace.add_person(name, ["reviewer"])
    import_candidates(workspace, corpus.candidates)
    run_screen(workspace, ScreenSettings(), ReplayStructured(str(corpus.replay)))
    report = promote_selected(workspace, ScreenSettings())
    assert len(report.created) == len(corpus.books) - 1 and report.new_media > 0
    return workspace


def _states(ws) -> dict[str, tuple[str, str | None, list[str]]]:  # type: ignore[no-untyped-def]
    return {s.id: (s.state, s.stage, s.reasons) for s in derive_status(ws) if s.kind == KIND}


def test_promotion_stores_media_and_keeps_proposals_with_provenance(story_ws, corpus) -> None:  # type: ignore[no-untyped-def]
    states = _states(story_ws)
    assert {state for state, _, _ in states.values()} == {"in_review"}
    assert {stage for _, stage, _ in states.values()} == {"filter"}
    first = sorted(states)[0]
    item = story_item(story_ws, first)
    with story_ws.session() as s:
        asset = s.get(Asset, item.next.image)
    assert asset is not None and story_ws.asset_path(asset).is_file()
    assert item.proposals["conditions"].provenance.model == ReplayStructured(str(corpus.replay)).model_id
    assert diff_against_proposal(item) == []
    again = promote_selected(story_ws, ScreenSettings())
    assert again.created == [] and len(again.unchanged) == len(states)


def _filter_file(tmp_path: Path, items: list[str], dropped: str, reviewer: str = "rev1") -> Path:
    path = tmp_path / "filter.jsonl"
    lines = []
    for i in items:
        record = {"item": i, "stage": "filter", "reviewer": reviewer, "verdict": "drop" if i == dropped else "keep"}
        if i == dropped:
            record["reason"] = "weak link between the pages"
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_filter_then_revise_admits_clean_items_and_the_gates_hold_the_planted_ones(story_ws, corpus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = sorted(_states(story_ws))
    clean = [i for i in items if i.split("-")[0] in ("bk00002", "bk00003", "bk00008", "bk00009")]
    dropped = clean.pop()
    import_reviews(story_ws, _filter_file(tmp_path, items, dropped))
    states = _states(story_ws)
    assert states[dropped] == ("returned", "filter", ["filter:drop"])
    assert states[clean[0]][:2] == ("in_review", "revise")
    proposed = story_item(story_ws, clean[0]).speech.emotion
    emotion = "angry" if proposed != "angry" else "sad"
    edit = ReviseRecord(
        item=clean[0], reviewer="rev2", edits={"speech.emotion": emotion, "conditions.scene": "a wet road"}
    )
    signoffs = [(0, ReviseRecord(item=i, reviewer="rev3")) for i in items if i not in (dropped, clean[0])]
    report = revise_items(story_ws, [(1, edit), *signoffs])
    assert report.revised == [clean[0]] and len(report.signed_off) == len(signoffs)
    revised = story_item(story_ws, clean[0])
    assert revised.speech.emotion == emotion and revised.revised_by == {
        "speech.emotion": "rev2",
        "conditions.scene": "rev2",
    }
    assert field_provenance(revised, "speech.emotion") == {"by": "reviewer", "reviewer": "rev2"}
    with story_ws.session() as s:
        revisions = s.execute(
            select(ItemRevision.revision, ItemRevision.created_by).where(ItemRevision.item_id == clean[0])
        ).all()
    assert sorted(revisions) == [(1, "cli"), (2, "rev2")]
    states = _states(story_ws)
    assert states[clean[0]][0] == "admitted"  # the editor's record signs off the revision it made
    assert states[dropped][0] == "returned"  # a revise sign-off does not undo a drop
    audit_story_items(story_ws)
    states = _states(story_ws)
    original, copy = corpus.planted["republished"].split("|")
    # duplicates = "annotate" (the default): the republished pair is admitted, its cluster a warning
    assert states[original][0] == states[copy][0] == "admitted"
    assert states[original][2][0].startswith("duplicate:dup-") and states[copy][2] == states[original][2]
    assert states[corpus.planted["foreign_span"]] == ("held", None, ["leak:shared_span:scene", "leak:reference_span"])
    first, second = corpus.planted["duplicate_condition"].split("|")
    assert states[first] == states[second] == ("held", None, ["leak:duplicate_condition"])
    assert all(states[i][0] == "admitted" for i in clean)
    # a later edit by someone else asks for a fresh sign-off (and is that person's sign-off)
    revise_items(
        story_ws, [(1, ReviseRecord(item=clean[1], reviewer="rev2", edits={"book_meta.topic": "a lost kite"}))]
    )
    audit_story_items(story_ws)
    assert _states(story_ws)[clean[1]][0] == "admitted"


def test_bad_revisions_are_refused_whole_with_their_lines(story_ws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    item = sorted(_states(story_ws))[0]
    before = story_item(story_ws, item)
    records = [
        (1, ReviseRecord(item=item, reviewer="rev2", edits={"speech.pitch": "low"})),
        (2, ReviseRecord(item=item, reviewer="rev2", edits={"speech.pitch": "very high"})),
        (3, ReviseRecord(item="nope", reviewer="rev2")),
        (4, ReviseRecord(item=item, reviewer="screen")),
    ]
    with pytest.raises(ValidationFailed) as caught:
        revise_items(story_ws, records, "rev.jsonl")
    assert [str(p) for p in caught.value.problems] == [
        "rev.jsonl:2: edits.speech.pitch: Input should be 'normal', 'high' or 'low'",
        "rev.jsonl:3: item: no story transition 'nope' in this workspace",
        "rev.jsonl:4: reviewer: 'screen' is not a reviewer of this workspace",
    ]
    assert story_item(story_ws, item) == before  # line 1 was valid, but nothing of the file was recorded


def test_a_revision_names_what_its_reviewer_saw(story_ws) -> None:  # type: ignore[no-untyped-def]
    item = sorted(_states(story_ws))[0]
    before = story_item(story_ws, item)
    edit = {"book_meta.topic": "a lost kite"}
    records = [  # in file order: line 2 saw the revision line 1 makes
        (1, ReviseRecord(item=item, reviewer="rev2", edits=edit, revision=1)),
        (2, ReviseRecord(item=item, reviewer="rev3", revision=1)),
    ]
    with pytest.raises(ValidationFailed) as caught:
        revise_items(story_ws, records, "rev.jsonl")
    assert [str(p) for p in caught.value.problems] == [
        f"rev.jsonl:2: revision: stale:revise: {item!r} changed since you saw it (revision 1, now 2); nothing was "
        "saved: look at it again"
    ]
    assert story_item(story_ws, item) == before
    records[1] = (2, ReviseRecord(item=item, reviewer="rev3", revision=2))
    report = revise_items(story_ws, records, "rev.jsonl")
    assert (report.revised, report.signed_off) == ([item], [item])
    assert story_item(story_ws, item).book_meta.topic == "a lost kite"


def test_generic_review_import_takes_sign_offs_but_not_edits(story_ws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    item = sorted(_states(story_ws))[0]
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps({"item": item, "stage": "revise", "reviewer": "rev1", "edits": {"speech.pitch": "low"}}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed) as caught:
        import_reviews(story_ws, path)
    assert "curate story revise FILE" in str(caught.value.problems[0])
    path.write_text(
        json.dumps({"item": item, "stage": "filter", "reviewer": "rev1", "verdict": "drop"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(ValidationFailed, match="a drop needs a reason"):
        import_reviews(story_ws, path)


def _block_duplicates(ws) -> None:  # type: ignore[no-untyped-def]
    ws.settings.story.duplicates = "block"
    ws.settings.save(ws.root / CONFIG_NAME)


def test_a_resolved_duplicate_cluster_holds_nothing(story_ws, corpus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _block_duplicates(story_ws)
    items = sorted(_states(story_ws))
    import_reviews(story_ws, _filter_file(tmp_path, items, dropped=""))
    revise_items(story_ws, [(0, ReviseRecord(item=i, reviewer="rev3")) for i in items])
    audit_story_items(story_ws)
    original, copy = corpus.planted["republished"].split("|")
    states = _states(story_ws)
    [code] = states[original][2]
    target = code.removeprefix("duplicate:")
    assert states[copy] == ("held", None, [code]) and set(story_clusters(story_ws)[target].items) == {original, copy}

    story_ws.add_person("maya", ["maintainer"])
    with pytest.raises(PermissionDenied, match="maintainer"):
        resolve_story_cluster(story_ws, target, "rev1", distinct=True, reason="not the same book")
    with pytest.raises(ValidationFailed, match="needs a --reason"):
        resolve_story_cluster(story_ws, target, "maya", distinct=True)
    with pytest.raises(ValidationFailed, match="is not in"):
        resolve_story_cluster(
            story_ws, target, "maya", keep=items[0] if items[0] not in (original, copy) else items[-1]
        )
    with pytest.raises(NotFoundError, match="curate story audit"):
        resolve_story_cluster(story_ws, "dup-0000000000", "maya", keep=original)
    assert _states(story_ws)[original][0] == "held"  # refusals change nothing

    # --keep (the demo's `curate audit resolve dup-… --keep bk00004-p00`): the kept transition is admitted,
    # the copy from the other book is discarded by the resolution; nothing stays held by the cluster
    result = CliRunner().invoke(
        app, ["-w", str(story_ws.root), "audit", "resolve", target, "--by", "maya", "--keep", original]
    )
    assert result.exit_code == 0, result.output
    assert f"{target}: discarded as duplicates of {original}: {copy}" in result.output
    states = _states(story_ws)
    assert states[original] == ("admitted", None, []) and states[copy][0] == "discarded"
    assert not any(r.startswith("duplicate:") for st in states.values() for r in st[2])
    audit_story_items(story_ws)  # a later audit keeps the decision
    assert _states(story_ws)[original][0] == "admitted"
    with story_ws.session() as s:
        [discard] = s.execute(select(Decision).where(Decision.item_id == copy)).scalars().all()
    assert (discard.kind, discard.actor) == ("discard", "maya") and original in discard.reason

    # restoring the copy brings the same cluster back, and the decision on it still holds nothing
    decide(story_ws, copy, "maya", "restore", "an adaptation worth keeping")
    audit_story_items(story_ws)
    assert target in story_clusters(story_ws)
    assert _states(story_ws)[copy][0] == "admitted" and _states(story_ws)[original][0] == "admitted"

    result = CliRunner().invoke(
        app,
        ["-w", str(story_ws.root), "audit", "resolve", target, "--by", "maya", "--distinct", "--reason", "a retelling"],
    )
    assert result.exit_code == 0, result.output
    assert f"{target}: distinct recorded" in result.output
    assert _states(story_ws)[copy][0] == "admitted"
    with story_ws.session() as s:
        events = s.execute(select(Event).where(Event.action == "audit.resolved")).scalars().all()
    assert sorted((e.subject, e.actor, e.after["reason"]) for e in events if e.after["distinct"]) == sorted(
        [(f"item:{original}", "maya", "a retelling"), (f"item:{copy}", "maya", "a retelling")]
    )
    built = build_story_release(story_ws, "1.0.0", out=tmp_path / "release")
    released = [json.loads(line)["id"] for line in (built.path / "data" / "transitions.jsonl").read_text().splitlines()]
    assert original in released and copy in released


def test_exported_story_items_import_to_the_same_content(story_ws, make_workspace, tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = sorted(_states(story_ws))
    revise_items(
        story_ws, [(1, ReviseRecord(item=items[0], reviewer="rev2", edits={"conditions.scene": "a wet road"}))]
    )
    out = tmp_path / "export"
    out.mkdir()
    result = CliRunner().invoke(app, ["-w", str(story_ws.root), "export", "items", str(out / "items.jsonl")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(line["id"] for line in lines) == items
    assert all(line["current"]["image"].startswith("media/") for line in lines)

    other = make_workspace("other")
    other.add_person("rev2", ["reviewer"])  # every person a record names exists (issue 22)
    result = CliRunner().invoke(app, ["-w", str(other.root), "import", "items", str(out / "items.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(json.loads(result.output)["created"]) == items
    with story_ws.session() as s, other.session() as t:
        for item_id in items:
            a, b = s.get(Item, item_id), t.get(Item, item_id)
            assert (b.kind, b.group_id, b.context, b.image, b.content_hash, b.extra) == (
                a.kind,
                a.group_id,
                a.context,
                a.image,
                a.content_hash,
                a.extra,
            )
    imported = story_item(other, items[0])
    assert imported.conditions.scene == "a wet road" and imported.revised_by == {"conditions.scene": "rev2"}
    assert diff_against_proposal(imported) == diff_against_proposal(story_item(story_ws, items[0]))
    assert {s.stage for s in derive_status(other)} == {"filter"}  # reviews are not items: the stages start afresh
    again = tmp_path / "again"
    again.mkdir()
    export_items(other, again / "items.jsonl")
    assert (again / "items.jsonl").read_bytes() == (out / "items.jsonl").read_bytes()
    assert import_items(other, out / "items.jsonl").unchanged == items  # importing twice changes nothing

    bad = tmp_path / "bad"
    (bad / "media").mkdir(parents=True)
    broken = [dict(lines[0]), dict(lines[1], next={**lines[1]["next"], "image": "media/gone.png"}), {"kind": KIND}]
    (bad / "items.jsonl").write_text("".join(json.dumps(line) + "\n" for line in broken), encoding="utf-8")
    fresh = make_workspace("fresh")
    with pytest.raises(ValidationFailed) as caught:
        import_items(fresh, bad / "items.jsonl")
    where = {(p.line, p.field) for p in caught.value.problems}
    assert {(1, "current.image"), (2, "current.image"), (2, "next.image"), (3, "id")} <= where
    assert "gone.png" in str(caught.value)
    with fresh.session() as s:
        assert s.execute(select(Item)).first() is None  # nothing was imported
