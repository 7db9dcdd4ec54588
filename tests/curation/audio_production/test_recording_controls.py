"""TRIAD B.5's recording controls documented per audio-perturbed group in a release (issue 45): whether the
released sisters share each control their clips name, from the records only; nothing for groups naming none."""

from __future__ import annotations

import json
from pathlib import Path

from curation.items import import_items
from curation.workspace import Workspace
from exports.recording_controls import PATH, card_lines, write_recording_controls
from exports.writer import ReleaseWriter
from tests.media_factory import item_row, write_items


def test_each_group_naming_controls_states_whether_its_sisters_match(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    for name in ("spk1", "spk2"):
        workspace.add_person(name, ["speaker"])
    rows = [item_row(f"g1-{x}", answer=x) for x in "AB"]  # one actor, two sessions, no equipment named
    rows += [item_row(f"g2-{x}", "g2", answer=x) for x in "AB"]  # two actors, one session and microphone
    rows += [item_row(f"g3-{x}", "g3", answer=x) for x in "AB"]  # names nothing
    rows += [item_row(f"g4-{x}", "g4", answer=x, perturbed="text") for x in "AB"]  # not audio-perturbed
    for row in rows[:2]:
        row["provenance"]["audio"] |= {"speakers": ["spk1"], "session": f"s-{row['answer']}"}
    for row, speaker in zip(rows[2:4], ("spk1", "spk2"), strict=True):
        row["provenance"]["audio"] |= {"speakers": [speaker], "session": "s1", "equipment": "mic-1"}
    for row in rows[6:]:
        row["provenance"]["audio"] |= {"speakers": ["spk1"], "session": row["answer"]}
    import_items(workspace, write_items(tmp_path / "in", rows))
    writer = ReleaseWriter(tmp_path / "release")
    released = [r["id"] for r in rows]
    groups = write_recording_controls(writer, workspace, released)
    written = json.loads((tmp_path / "release" / PATH).read_text())
    assert (
        written["groups"]
        == groups
        == [
            {"group": "g1", "sisters": 2, "controls": {"actor": True, "session": False}, "match": False},
            {
                "group": "g2",
                "sisters": 2,
                "controls": {"actor": False, "session": True, "equipment": True},
                "match": False,
            },
        ]
    )
    assert "spk1" not in json.dumps(written) and "mic-1" not in json.dumps(written)  # whether, never who or what
    assert [e.path for e in writer.entries()] == [PATH]  # listed in the manifest like every file
    # only the released sisters count: g1-A alone matches itself
    assert write_recording_controls(ReleaseWriter(tmp_path / "r2"), workspace, ["g1-A", "g3-A"]) == [
        {"group": "g1", "sisters": 1, "controls": {"actor": True, "session": True}, "match": True}
    ]
    assert "0 of 2 audio-perturbed group(s)" in card_lines(groups)[0]


def test_a_release_whose_groups_name_no_control_has_no_such_file(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    import_items(workspace, write_items(tmp_path / "in", [item_row(f"g1-{x}", answer=x) for x in "AB"]))
    writer = ReleaseWriter(tmp_path / "release")
    assert write_recording_controls(writer, workspace, ["g1-A", "g1-B"]) == []
    assert not (tmp_path / "release").exists() or not any((tmp_path / "release").iterdir())
    assert writer.entries() == [] and card_lines([]) == []
