"""Issue 45's audio production rows as a user meets them through ``curate``: speakers and consent, takes and the
producer's choice, the spot check, separation of listeners, and the recording controls of audio-perturbed groups
(TRIAD App. B.1-B.5). Each test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from curation.audio_production.spot_check import draw
from curation.tables import Asset, ReviewRecord
from curation.workspace import Workspace
from tests.annotation_ui.ui_helpers import passing_record
from tests.curation.kinds.mcq.test_group_content_rules import COLOURS, TONES, admit_all, invoke, sister
from tests.media_factory import make_image, make_tone, write_items

CREDITS = {"producer": "prod", "session": "s1", "equipment": "mic-1"}


def voiced(id_: str, answer: str, tone: str, speaker: str, **credits: Any) -> dict[str, Any]:
    row = sister(id_, answer, "imgA", tone)
    row["provenance"]["audio"] |= {"speakers": [speaker], **CREDITS, **credits}
    return row


def status(ws: Workspace) -> dict[str, dict[str, Any]]:
    result = invoke(ws, "status", "--json")
    assert result.exit_code == 0, result.output
    return {r["id"]: r for r in json.loads(result.stdout)}


def admitted_pair(ws: Workspace, folder: Path, second_speaker: str = "spk1") -> dict[str, dict[str, Any]]:
    for name, role in (("spk1", "speaker"), ("spk2", "speaker"), ("prod", "producer")):
        ws.add_person(name, [role])
    rows = [voiced("g1-a", "A", "a", "spk1"), voiced("g1-b", "B", "b", second_speaker)]
    return admit_all(ws, folder, rows)


def consent(ws: Workspace, speaker: str) -> None:
    result = invoke(
        ws, "audio", "consent", speaker, "--scope", "benchmark distribution", "--signed-on", "2026-01-05",
        "--document", "archive:releases/2026/" + speaker,
    )  # fmt: skip
    assert result.exit_code == 0, result.output


def three_takes(ws: Workspace, folder: Path, item: str, chosen_audio: Path) -> Path:
    """Takes t1-t3 of ``item``; t2 holds the bytes of the item's audio."""
    lines = []
    for n, freq in ((1, 300.0), (2, None), (3, 900.0)):
        path = chosen_audio if freq is None else make_tone(folder / f"takes/{item}-t{n}.wav", freq)
        lines.append({"item": item, "take": f"t{n}", "audio": str(path.relative_to(folder))})
    takes = folder / f"takes-{item}.jsonl"
    takes.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return takes


def test_a_clip_without_consent_is_held_from_its_import_until_its_speaker_consents(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = admitted_pair(workspace, tmp_path / "in")
    # the import judged the clips already: a named speaker with no consent record holds the item at once
    assert {k: v["state"] for k, v in before.items()} == {"g1-a": "held", "g1-b": "held"}
    assert "consent:missing" in before["g1-a"]["reasons"]
    checked = invoke(workspace, "audio", "check", "--json")
    assert checked.exit_code == 0, checked.output
    found = {(r["item"], r["gate"]): r for r in json.loads(checked.stdout)}
    assert found[("g1-a", "consent")]["reasons"] == ["consent:missing"]
    assert found[("g1-a", "consent")]["details"] == {"speakers": ["spk1"]}
    after = status(workspace)
    assert after["g1-a"]["state"] == "held" and "consent:missing" in after["g1-a"]["reasons"]
    consent(workspace, "spk1")
    assert "consent:missing" not in status(workspace)["g1-a"]["reasons"]
    withdrawn = invoke(
        workspace, "audio", "consent", "spk1", "--scope", "benchmark distribution", "--signed-on", "2026-02-01",
        "--document", "archive:withdrawals/spk1", "--withdrawn",
    )  # fmt: skip
    assert withdrawn.exit_code == 0, withdrawn.output
    assert "consent:missing" in status(workspace)["g1-a"]["reasons"]
    refused = invoke(
        workspace, "audio", "consent", "prod", "--scope", "x", "--signed-on", "2026-01-05", "--document", "d"
    )
    assert refused.exit_code == 2 and "speaker role" in refused.output


def test_three_takes_one_chosen_by_the_producer_and_only_it_is_the_released_clip(
    workspace: Workspace, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    admitted_pair(workspace, folder)
    consent(workspace, "spk1")
    reasons = status(workspace)["g1-a"]["reasons"]
    assert {"takes:too_few", "takes:not_chosen"} <= set(reasons)
    for item in ("g1-a", "g1-b"):
        result = invoke(
            workspace, "audio", "takes", str(three_takes(workspace, folder, item, folder / f"media/{item[-1]}.wav"))
        )
        assert result.exit_code == 0 and "3 take(s) added" in result.output, result.output
    again = invoke(workspace, "audio", "takes", str(folder / "takes-g1-a.jsonl"))
    assert "0 take(s) added, 3 unchanged" in again.output
    wrong = invoke(workspace, "audio", "choose", "g1-a", "t2", "--producer", "spk1")
    assert wrong.exit_code == 2 and "producer" in wrong.output
    assert invoke(workspace, "audio", "choose", "g1-a", "t1", "--producer", "prod").exit_code == 0
    assert "takes:choice_not_item_audio" in status(workspace)["g1-a"]["reasons"]
    for item in ("g1-a", "g1-b"):
        assert invoke(workspace, "audio", "choose", item, "t2", "--producer", "prod").exit_code == 0
    listed = json.loads(invoke(workspace, "audio", "list-takes", "g1-a", "--json").stdout)
    assert [(t["take"], t["chosen"]) for t in listed] == [("t1", False), ("t2", True), ("t3", False)]
    assert not [r for r in status(workspace)["g1-a"]["reasons"] if r.startswith("takes:")]
    item_audio = workspace.item("g1-a").audio
    assert item_audio == next(t["sha256"] for t in listed if t["chosen"])
    others = {t["sha256"] for t in listed if not t["chosen"]}
    assert len(others) == 2 and item_audio not in others  # kept in the store, never an item's (released) audio
    assert all(workspace.media.has(sha, ".wav") for sha in others)


def test_the_spot_check_sample_is_drawn_the_same_way_twice_and_refuses_the_clips_speaker(
    workspace: Workspace, tmp_path: Path
) -> None:
    admitted_pair(workspace, tmp_path / "in")
    first = json.loads(invoke(workspace, "audio", "spot-sample", "--json").stdout)
    second = json.loads(invoke(workspace, "audio", "spot-sample", "--json").stdout)
    assert first == second == draw(["g1-a", "g1-b"], 0.05, 0) and len(first) == 1
    sampled = first[0]
    assert invoke(workspace, "audio", "check").exit_code == 0  # stores the gates' results that status reads
    assert "spot_check:pending" in status(workspace)[sampled]["reasons"]
    speaker = "spk1"
    workspace.add_person(speaker, ["reviewer"])
    refused = invoke(workspace, "audio", "spot-check", sampled, "--listener", speaker, "--verdict", "consistent")
    assert refused.exit_code == 2 and "separation:recording" in refused.output
    done = invoke(workspace, "audio", "spot-check", sampled, "--listener", "rev6", "--verdict", "inconsistent")
    assert done.exit_code == 0, done.output
    assert "spot_check:inconsistent" in status(workspace)[sampled]["reasons"]
    invoke(workspace, "audio", "spot-check", sampled, "--listener", "rev6", "--verdict", "consistent")
    assert not [r for r in status(workspace)[sampled]["reasons"] if r.startswith("spot_check:")]


def test_an_audio_group_with_two_actors_is_flagged_as_a_heads_up(workspace: Workspace, tmp_path: Path) -> None:
    admitted_pair(workspace, tmp_path / "in", second_speaker="spk2")
    for speaker in ("spk1", "spk2"):
        consent(workspace, speaker)
    rows = json.loads(invoke(workspace, "audio", "check", "--json").stdout)
    flagged = {r["item"]: r["details"] for r in rows if r["gate"] == "recording"}
    assert flagged == {"g1-a": {"differ": ["actor"]}, "g1-b": {"differ": ["actor"]}}
    assert "group:recording_mismatch" in status(workspace)["g1-a"]["reasons"]


def test_a_release_ships_the_chosen_take_and_no_other(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    admitted_pair(workspace, folder)
    for item in ("g1-a", "g1-b"):
        assert (
            invoke(
                workspace, "audio", "takes", str(three_takes(workspace, folder, item, folder / f"media/{item[-1]}.wav"))
            ).exit_code
            == 0
        )
        assert invoke(workspace, "audio", "choose", item, "t2", "--producer", "prod").exit_code == 0
    consent(workspace, "spk1")
    sample = json.loads(invoke(workspace, "audio", "spot-sample", "--json").stdout)
    assert (
        invoke(workspace, "audio", "spot-check", sample[0], "--listener", "rev6", "--verdict", "consistent").exit_code
        == 0
    )
    assert {k: (v["state"], v["reasons"]) for k, v in status(workspace).items()} == {
        "g1-a": ("admitted", []),
        "g1-b": ("admitted", []),
    }
    assert invoke(workspace, "media", "normalize").exit_code == 0
    out = tmp_path / "release"
    built = invoke(workspace, "release", "build", "1.0.0", "--out", str(out))
    assert built.exit_code == 0, built.output
    released = [json.loads(line) for line in (out / "data/items.jsonl").read_text().splitlines()]
    with workspace.session() as session:
        origin = {a.sha256: a.derived_from or a.sha256 for a in session.execute(select(Asset)).scalars()}
    for item in ("g1-a", "g1-b"):
        takes = {
            t["take"]: t["sha256"] for t in json.loads(invoke(workspace, "audio", "list-takes", item, "--json").stdout)
        }
        shipped = [origin[r["audio_sha256"]] for r in released if r["id"] == item]
        assert shipped == [takes["t2"]] and takes["t1"] != takes["t2"] != takes["t3"]
    in_release = {p.stem for p in (out / "media").glob("*.wav")}
    assert {origin[sha] for sha in in_release} == {workspace.item("g1-a").audio, workspace.item("g1-b").audio}
    # both clips name speaker spk1, producer prod, session s1 and mic-1: the group's controls match (TRIAD B.5)
    controls = json.loads((out / "recording_controls.json").read_text(encoding="utf-8"))
    assert controls["groups"] == [
        {"group": "g1", "sisters": 2, "controls": {"actor": True, "session": True, "equipment": True}, "match": True}
    ]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "recording_controls.json" in json.dumps(manifest)
    assert "Recording controls (TRIAD B.5): 1 of 1" in (out / "README.md").read_text(encoding="utf-8")


def test_a_bad_takes_file_or_consent_is_refused_whole_naming_file_line_and_field(
    workspace: Workspace, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    admitted_pair(workspace, folder)
    make_tone(folder / "takes/ok.wav", 300.0)
    (folder / "takes/not-audio.wav").write_text("hello", encoding="utf-8")
    lines = [
        {"item": "g1-a", "take": "t1", "audio": "takes/ok.wav"},
        {"item": "nope", "take": "t1", "audio": "takes/ok.wav"},
        {"item": "g1-a", "take": "t1", "audio": "takes/ok.wav"},
        {"item": "g1-b", "take": "t1", "audio": "takes/not-audio.wav"},
        {"item": "g1-b", "take": "t2"},
    ]
    takes = folder / "bad.jsonl"
    takes.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = invoke(workspace, "audio", "takes", str(takes))
    assert result.exit_code == 2, result.output
    for where in (
        ":2: item: no item 'nope'",
        ":3: take: take 't1' of 'g1-a' again (line 1)",
        ":4: audio:",
        ":5: audio",
    ):
        assert where in result.output, result.output
    assert "nothing was imported" in result.output
    assert json.loads(invoke(workspace, "audio", "list-takes", "g1-a", "--json").stdout) == []
    bad = invoke(
        workspace, "audio", "consent", "spk1", "--scope", "distribution", "--signed-on", "5 Jan",
        "--document", "data:application/pdf;base64,JVBERi0=",
    )  # fmt: skip
    assert bad.exit_code == 2 and "signed_on" in bad.output
    blob = invoke(
        workspace, "audio", "consent", "spk1", "--scope", "distribution", "--signed-on", "2026-01-05",
        "--document", "data:application/pdf;base64,JVBERi0=",
    )  # fmt: skip
    assert blob.exit_code == 2 and "never the document itself" in blob.output
    assert json.loads(invoke(workspace, "audio", "consents", "--json").stdout) == []


def test_an_audio_sign_off_by_the_clips_speaker_is_refused_whole_by_import_reviews(
    workspace: Workspace, tmp_path: Path
) -> None:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("spk1", ["speaker", "reviewer"])
    folder = tmp_path / "in"
    rows = [voiced("g1-a", "A", "a", "spk1"), voiced("g1-b", "B", "b", "spk1")]
    for row in rows:
        make_image(folder / row["image"], COLOURS[Path(row["image"]).stem])
        make_tone(folder / row["audio"], TONES[Path(row["audio"]).stem])
    assert invoke(workspace, "import", "items", str(write_items(folder, rows))).exit_code == 0
    reviews = tmp_path / "spk1.jsonl"
    reviews.write_text(json.dumps(passing_record("g1-a", "audio_signoff", "spk1", "A")) + "\n", encoding="utf-8")
    result = invoke(workspace, "import", "reviews", str(reviews))
    assert result.exit_code == 2, result.output
    assert "separation:recording: 'spk1' spoke in or produced the audio of 'g1-a'" in result.output, result.output
    with workspace.session() as s:
        assert s.execute(select(func.count()).select_from(ReviewRecord)).scalar_one() == 0
