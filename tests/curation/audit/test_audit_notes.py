"""Leaks in item notes (TRIAD App. E.3): an option's text, a leaf of the item, a sister's id; clean notes pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curation.audit.note_leaks import note_leaks
from curation.audit.run import AuditSubject, run_audit
from curation.config import Settings
from curation.workflow import derive_status
from curation.workspace import Workspace
from exports.build import build_release
from exports.publish import GatesFailed
from omnicurate.cli.main import app
from tests.exports.workspace_factory import fill_workspace, group_rows

OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ice cream", "D": "surprised"}
LEAVES = ("pragmatic", "prosodic", "semiotic")


def subject(item: str, notes: dict[str, str], group: str = "g1", language: str = "en", **kw: Any) -> AuditSubject:
    options = kw.pop("options", OPTIONS)
    return AuditSubject(item, group, "A context.", options, "A", None, None, language, notes=notes, leaves=LEAVES)


def found(*subjects: AuditSubject, note_option: str = "block") -> list[tuple[str, str, dict[str, object]]]:
    return [(leak.kind, leak.items[0], leak.evidence) for leak in note_leaks(subjects, note_option)]


def test_a_clean_note_passes() -> None:
    clean = subject(
        "a",
        {
            "audio": "A woman, flat and slow: 'Sure, that was a really helpful suggestion.' A long sigh; the "
            "prosody falls at the end. Gratefully is not a word she uses; icecream vans ring outside.",
            "image": "A kitchen table with burnt toast; item g1-bb is written on a sticky note.",
        },
    )
    sister = subject("g1-b", {})
    assert found(clean, sister) == []
    assert run_audit([clean, sister], {}, {}).gate_reasons() == {}


def test_a_note_naming_an_option_is_flagged_whole_words_only() -> None:
    leaks = found(subject("a", {"audio": "She says 'Ice  Cream!' and laughs.", "image": "A grateful dog."}))
    assert [(kind, item, evidence["note"], evidence["option"]) for kind, item, evidence in leaks] == [
        ("note_option", "a", "audio", "C"),
        ("note_option", "a", "image", "A"),
    ]
    assert leaks[1][2]["is_answer"] is True and leaks[0][2]["is_answer"] is False
    assert leaks[0][2]["severity"] == "block"
    assert found(subject("a", {"audio": "Ungrateful, surprisedly, ice-creamy."})) == []  # no whole option text
    warned = found(subject("a", {"audio": "grateful"}), note_option="warn")
    assert [evidence["severity"] for *_, evidence in warned] == ["warning"]


def test_a_chinese_note_is_matched_by_characters() -> None:
    options = {"A": "感激", "B": "讽刺", "C": "冷漠", "D": "惊讶"}
    leaks = found(
        subject("zh", {"audio": "她语气平淡地说：“真是太感激了。”然后叹了口气。"}, language="zh", options=options)
    )
    assert [(kind, evidence["option"]) for kind, _, evidence in leaks] == [("note_option", "A")]
    leaf = found(subject("zh", {"audio": "语调平淡（prosodic 线索）。"}, language="zh", options=options))
    assert [(kind, evidence.get("leaf")) for kind, _, evidence in leaf] == [("note_leaf", "prosodic")]
    assert found(subject("zh", {"image": "厨房里的一张桌子，桌上有烤焦的吐司。"}, language="zh", options=options)) == []


def test_a_leaf_of_the_item_is_flagged_as_a_whole_word() -> None:
    leaks = found(subject("a", {"audio": "A clear Prosodic cue: the pitch rises.", "image": "A semiotic gesture."}))
    assert [(kind, evidence["note"], evidence["leaf"]) for kind, _, evidence in leaks] == [
        ("note_leaf", "audio", "prosodic"),
        ("note_leaf", "image", "semiotic"),
    ]
    # inside another word, or another leaf than the item's, is no finding
    assert found(subject("a", {"audio": "Unprosodically spatial, with environmental noise."})) == []


def test_a_sister_id_is_flagged_not_a_longer_id_nor_another_group() -> None:
    note = subject("g1-a", {"audio": "Unlike G1-B. the voice is warm; g1-bb and g1-b2 and x.g1-b differ."})
    leaks = found(note, subject("g1-b", {}), subject("g1-c", {}), subject("g1-b2", {}, group="g9"))
    assert [(kind, item, evidence["sister"]) for kind, item, evidence in leaks] == [("note_sister", "g1-a", "g1-b")]
    assert found(subject("g1-a", {"image": "Same scene as g1-a."}), subject("g1-b", {})) == []  # its own id


@pytest.fixture
def noted_ws(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> Workspace:
    """Six items through every stage (admitted until an audit runs): g1's notes name an option (g1-a its answer),
    g2-a's a leaf of the item, g2-b's its sister; g3's notes are clean."""
    rows = group_rows("g1") + group_rows("g2") + group_rows("g3")
    notes = [
        {"audio": "She sighs: 'I am so grateful.'", "image": "A kitchen."},
        {"image": "A sarcastic grin."},
        {"audio": "A prosodic rise at the end."},
        {"image": "The same picture as g2-a."},
        {"audio": "A woman, flat and slow: 'Sure, thanks a lot.' A sigh.", "image": "A bright kitchen."},
        {"audio": "A woman, warm and quick: 'Sure, thanks a lot!' She laughs."},
    ]
    for row, note in zip(rows, notes, strict=True):
        row["notes"] = note
    ws = make_workspace("ws")
    ws.add_person("maya", ["maintainer"])
    fill_workspace(ws, tmp_path / "input", rows)
    return ws


def test_curate_audit_reports_note_leaks_and_they_hold_admission(noted_ws: Workspace) -> None:
    root = str(noted_ws.root)
    runner = CliRunner()
    assert {st.state for st in derive_status(noted_ws)} == {"admitted"}
    audit = runner.invoke(app, ["-w", root, "audit", "--json"], catch_exceptions=False)
    assert audit.exit_code == 0
    leaks = [leak for leak in json.loads(audit.stdout)["leaks"] if leak["kind"].startswith("note_")]
    assert sorted((leak["kind"], leak["items"][0]) for leak in leaks) == [
        ("note_leaf", "g2-a"),
        ("note_option", "g1-a"),
        ("note_option", "g1-b"),
        ("note_sister", "g2-b"),
    ]
    assert all(leak["id"].startswith("leak-") and leak["evidence"]["severity"] == "block" for leak in leaks)
    status = {r["id"]: r for r in json.loads(runner.invoke(app, ["-w", root, "status", "--json"]).stdout)}
    assert status["g1-a"]["state"] == "held" and "leak:note_option" in status["g1-a"]["reasons"]
    assert status["g2-a"]["state"] == "held" and "leak:note_leaf" in status["g2-a"]["reasons"]
    assert status["g2-b"]["state"] == "held" and "leak:note_sister" in status["g2-b"]["reasons"]
    assert status["g3-a"]["state"] == status["g3-b"]["state"] == "admitted"

    for leak in leaks:
        if leak["items"][0].startswith("g1-"):
            decided = ["-w", root, "audit", "resolve", leak["id"], "--by", "maya", "--distinct", "--reason", "quoted"]
            assert runner.invoke(app, decided).exit_code == 0
    assert {st.id: st.state for st in derive_status(noted_ws)}["g1-a"] == "admitted"


def test_the_release_build_reruns_the_audit_and_refuses_leaking_notes(noted_ws: Workspace, tmp_path: Path) -> None:
    with pytest.raises(GatesFailed) as refused:
        build_release(noted_ws, "1.0.0", out=tmp_path / "r")
    assert refused.value.items == {
        "g1-a": ["leak:note_option"],
        "g1-b": ["leak:note_option"],
        "g2-a": ["leak:note_leaf"],
        "g2-b": ["leak:note_sister"],
    }
    build_release(noted_ws, "1.0.0", out=tmp_path / "r", allow_partial=True)
    released = [json.loads(line) for line in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()]
    assert [row["id"] for row in released] == ["g3-a", "g3-b"]


def test_note_option_warns_under_the_setting(noted_ws: Workspace) -> None:
    settings = Settings.load(noted_ws.root / "curate.toml")
    settings.gates.note_option = "warn"
    settings.save(noted_ws.root / "curate.toml")
    ws = Workspace.open(noted_ws.root)
    try:
        result = CliRunner().invoke(app, ["-w", str(ws.root), "audit", "--json"], catch_exceptions=False)
        leak = next(leak for leak in json.loads(result.stdout)["leaks"] if leak["items"] == ["g1-a"])
        assert leak["evidence"]["severity"] == "warning" and leak["evidence"]["is_answer"] is True
        states = {st.id: st.state for st in derive_status(ws)}
        assert states["g1-a"] == states["g1-b"] == "admitted" and states["g2-a"] == "held"  # a leaf still blocks
    finally:
        ws.close()
