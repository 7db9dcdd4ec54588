"""The exclusion rules in a release: per released item and rule, the attestations behind it in the admission
record (reviewers pseudonymous), re-derived by ``release reproduce``, and stated on the card from the records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.config import CONFIG_NAME
from curation.errors import CheckFailed
from curation.exclusion_rules import TRIAD_RULES
from curation.workflow import derive_status
from curation.workspace import Workspace
from exports.build import build_release
from exports.exclusions import FILE
from exports.reproduce import reproduce_release
from exports.verify import verify_release
from tests.exports.admission_helpers import edit_line, lines

RELEASED = ["g1-a", "g1-b", "g2-a", "g2-b"]


def test_the_admission_record_shows_each_released_items_attestations_per_rule(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    release = build_release(admitted_ws, "1.0.0", out=tmp_path / "release").path
    rows = lines(release, FILE)
    assert [(r["item"], r["rule"]) for r in rows] == [(i, rule) for i in RELEASED for rule in TRIAD_RULES]
    assert all(r["attested"] for r in rows)
    records = {r["id"]: r for r in lines(release, "admission/records.jsonl")}
    real = {p.name for p in admitted_ws.people()}
    for row in rows:
        assert len(row["attestations"]) == 3  # the three counted checklist reviewers
        for a in row["attestations"]:
            record = records[a["record"]]
            assert record["stage"] == "subset_checklist" and record["subject"] == f"item:{row['item']}"
            assert a["reviewer"] == record["reviewer"] and a["reviewer"] not in real, "pseudonymous, as the records"
            assert a["verdict"] == record["payload"]["exclusions"][row["rule"]] == "pass"
    settings = json.loads((release / "admission" / "settings.json").read_text(encoding="utf-8"))
    assert settings["review"]["exclusion_rules"] == dict(TRIAD_RULES)
    assert FILE in settings["files"]
    summaries = {json.loads(x)["id"]: json.loads(x) for x in (release / "admission.jsonl").read_text().splitlines()}
    assert summaries["g2-a"]["stages"]["subset_checklist"]["exclusions"] == {
        rule: {"pass": 3, "fail": 0} for rule in TRIAD_RULES
    }

    card = (release / "README.md").read_text(encoding="utf-8")
    assert (
        "attested per item by the subset-checklist reviewers: ethics on 4 of 4 released item(s), identifying on 4 of 4 released item(s)"
        in card
    )
    for rule, sentence in TRIAD_RULES.items():
        assert f"- `{rule}`: {sentence}" in card
    croissant = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    assert any(d.get("contentUrl") == FILE for d in croissant["distribution"])
    assert any(s.get("@id") == "admission-exclusions" for s in croissant["recordSet"])

    assert reproduce_release(release).ok
    assert verify_release(release).ok


def test_reproduce_finds_a_changed_attestation_by_file_and_line(admitted_ws: Workspace, tmp_path: Path) -> None:
    release = build_release(admitted_ws, "1.0.0", out=tmp_path / "release").path
    n = edit_line(release, FILE, lambda r: r["item"] == "g2-a" and r["rule"] == "identifying", _unattest)
    found = reproduce_release(release).differences
    assert any(d.startswith(f"{FILE}:{n}: g2-a: rule identifying: stated attested=False") for d in found), found

    # a record turned into a fail: the outcome and the attestation both re-derive otherwise
    other = build_release(admitted_ws, "1.0.1", out=tmp_path / "other").path
    edit_line(
        other,
        "admission/records.jsonl",
        lambda r: r["subject"] == "item:g1-a" and r["stage"] == "subset_checklist",
        lambda r: r["payload"]["exclusions"].update(ethics="fail"),
    )
    found = reproduce_release(other).differences
    assert any("g1-a" in d and "exclusion:ethics" in d for d in found), found
    assert any(d.startswith(f"{FILE}:1: g1-a: rule ethics") for d in found), found


def _unattest(row: dict) -> None:
    row["attested"] = False
    row["attestations"] = []


def test_a_workspace_without_rules_says_nothing_about_exclusions(admitted_ws: Workspace, tmp_path: Path) -> None:
    admitted_ws.settings.review.exclusion_rules = {}
    admitted_ws.settings.save(admitted_ws.root / CONFIG_NAME)
    ws = Workspace.open(admitted_ws.root)
    release = build_release(ws, "1.0.0", out=tmp_path / "release").path
    assert not (release / FILE).exists()
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "Exclusion rule" not in card and "exclusions.jsonl" not in card
    settings = json.loads((release / "admission" / "settings.json").read_text(encoding="utf-8"))
    assert settings["review"]["exclusion_rules"] == {} and FILE not in settings["files"]
    assert reproduce_release(release).ok


def test_an_item_held_for_an_unattested_rule_is_not_released(admitted_ws: Workspace, tmp_path: Path) -> None:
    admitted_ws.settings.review.exclusion_rules = {**TRIAD_RULES, "consent": "Every speaker signed a release."}
    admitted_ws.settings.save(admitted_ws.root / CONFIG_NAME)
    ws = Workspace.open(admitted_ws.root)
    statuses = {st.id: st for st in derive_status(ws)}
    for item in RELEASED:
        assert (statuses[item].state, statuses[item].reasons) == ("held", ["exclusion_unattested:consent"])
    with pytest.raises(CheckFailed, match="no item is admitted"):
        build_release(ws, "1.0.0", out=tmp_path / "release")
