"""The admission record in an mcq release: pseudonyms, blind attestations, the rejected items, card and Croissant."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlmodel import col

from checker.reproduce import replay_verdicts
from curation.config import CONFIG_NAME
from curation.exposure import EXPOSED, record_exposure
from curation.pseudonyms import KEY_FILE
from curation.tables import Event, ReviewRecord
from curation.workspace import Workspace
from exports.build import build_release
from exports.reproduce import reproduce_release
from exports.verify import verify_release
from omnicurate.demo import PEOPLE
from tests.exports.admission_helpers import lines


def _people(folder: Path) -> set[str]:
    """Every pseudonym the record uses for a reviewer or an author."""
    found = {r["reviewer"] for r in lines(folder, "admission/records.jsonl")}
    return found | {u["author"] for u in lines(folder, "admission/units.jsonl")}


def _real_names(ws: Workspace) -> set[str]:
    return {p.name for p in ws.people()} | {p.email for p in ws.people() if p.email}


def test_people_are_pseudonymous_stable_within_a_release_and_differ_across(demo_workspace: Workspace) -> None:
    ws = demo_workspace
    first = ws.root / "releases" / "0.1.0"
    admission = "".join(p.read_text(encoding="utf-8") for p in sorted((first / "admission").iterdir()))
    card = (first / "README.md").read_text(encoding="utf-8")
    for name in _real_names(ws):
        assert f'"{name}"' not in admission and f" {name} " not in card, name
    key = (ws.root / KEY_FILE).read_text(encoding="ascii").strip()
    assert key not in admission and not any(p.name.endswith(".key") for p in first.rglob("*"))

    # as many pseudonyms as people behind the blind checks: one per person, the same on each of their records
    with ws.session() as s:
        blind = dict(
            s.execute(
                select(col(ReviewRecord.id), col(ReviewRecord.reviewer)).where(
                    col(ReviewRecord.stage) == "answer_check"
                )
            ).all()
        )
    released = {r["id"]: r["reviewer"] for r in lines(first, "admission/records.jsonl") if r["stage"] == "answer_check"}
    assert len(set(released.values())) == len({blind[i] for i in released})

    # rebuilding the version gives the same bytes
    again = build_release(ws, "0.1.0", allow_partial=True, name="omnicurate-demo")
    assert again.unchanged
    # another version: the same people, other pseudonyms, and the same structure
    second = build_release(ws, "0.2.0", allow_partial=True, name="omnicurate-demo").path
    assert _people(first).isdisjoint(_people(second))
    assert len(_people(first)) == len(_people(second)) >= 4
    shape = [(r["id"], r["stage"]) for r in lines(first, "admission/records.jsonl")]
    assert shape == [(r["id"], r["stage"]) for r in lines(second, "admission/records.jsonl")]
    assert reproduce_release(second, replay_verdicts).ok


def test_card_croissant_and_manifest_describe_the_record(demo_workspace: Workspace) -> None:
    release = demo_workspace.root / "releases" / "0.1.0"
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    listed = {f["path"] for f in manifest["files"]}
    for name in (
        "settings.json",
        "units.jsonl",
        "records.jsonl",
        "attestations.jsonl",
        "probes.jsonl",
        "rejected.jsonl",
    ):
        assert f"admission/{name}" in listed
    croissant = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    sets = {r["@id"]: r for r in croissant["recordSet"]}
    assert {"admission-records", "admission-attestations", "admission-rejected"} <= set(sets)
    fields = {f["name"] for f in sets["admission-records"]["field"]}
    assert {"reviewer", "stage", "inputs_hash"} <= fields
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "### Admission record" in card and "HMAC-SHA256" in card
    assert "admission/rejected.jsonl" in card
    settings = json.loads((release / "admission" / "settings.json").read_text(encoding="utf-8"))
    assert settings["review"]["combine"] and settings["review"]["group_answers"]
    assert settings["checker"]["replay"] == "admission/probes.jsonl"
    # every item of the workspace is either released or listed as not released, with its reasons
    released = {i["id"] for i in lines(release, "data/items.jsonl")}
    rejected = lines(release, "admission/rejected.jsonl")
    with demo_workspace.session() as s:
        every = {e for (e,) in s.execute(select(col(ReviewRecord.subject))).all() if e.startswith("item:")}
    assert released.isdisjoint({r["id"] for r in rejected})
    assert {e.removeprefix("item:") for e in every} <= released | {r["id"] for r in rejected}
    assert all(r["reasons"] for r in rejected if r["state"] in ("returned", "held"))


def test_an_exposed_blind_checker_cannot_attest(demo_workspace: Workspace, tmp_path: Path) -> None:
    ws = demo_workspace
    with ws.writing() as s:
        record = s.execute(
            select(ReviewRecord).where(
                col(ReviewRecord.stage) == "answer_check", col(ReviewRecord.subject) == "item:kitchen-01-a"
            )
        ).scalar_one()
        checker = record.reviewer
        record_exposure(s, "cli", [checker], ["kitchen-01-a"], "page:label-preview")
    with ws.writing() as s:  # shown the label before answering (the exposure was recorded late)
        event = s.execute(select(Event).where(col(Event.action) == EXPOSED)).scalars().one()
        event.at = datetime(2000, 1, 1, tzinfo=UTC)
        s.add(event)
    ws.settings.release.authors = "named"
    ws.settings.save(ws.root / CONFIG_NAME)
    out = build_release(ws, "0.3.0", out=tmp_path / "r3", allow_partial=True, rejected=False).path
    statements = {a["item"]: a for a in lines(out, "admission/attestations.jsonl")}
    assert statements["kitchen-01-a"]["blind"] is False
    assert statements["kitchen-01-a"]["exposed_by"][0]["via"] == "exposed:shown"
    assert statements["kitchen-01-b"]["blind"] is True
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "not attested for kitchen-01-a." in card
    # the maintainer left the not-admitted items out: the card says so, and the record still reproduces
    assert not (out / "admission" / "rejected.jsonl").exists()
    assert "left out of this release by the maintainer" in card
    # the workspace names its authors: their names ride along; the derivation still runs on pseudonyms
    units = lines(out, "admission/units.jsonl")
    assert {u["author_name"] for u in units} <= set(PEOPLE) and all(u["author"].startswith("p-") for u in units)
    assert verify_release(out).ok
    assert reproduce_release(out, replay_verdicts).ok
