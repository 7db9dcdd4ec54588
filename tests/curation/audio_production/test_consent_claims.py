"""What a release may say about consent (issue 45; design.md, "Releases — what a release may claim"): consent is
stated only for clips whose every named speaker has a standing consent record, and not at all without one."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from curation.audio_production.claims import ConsentSummary, consent_summary
from curation.audio_production.records import ConsentIn, record_consent
from curation.items import import_items
from curation.workspace import Workspace
from exports.claims import consent_sentences
from tests.media_factory import item_row, write_items


def test_consent_is_stated_only_for_clips_whose_speakers_consented(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    for name in ("spk1", "spk2"):
        workspace.add_person(name, ["speaker"])
    rows = [item_row(f"g1-{x}", answer=x) for x in "AB"] + [item_row("g2-a", "g2", answer="A")]
    for row, speakers in zip(rows, (["spk1"], ["spk1", "spk2"], None), strict=True):
        if speakers:
            row["provenance"]["audio"]["speakers"] = speakers
    import_items(workspace, write_items(tmp_path / "in", rows))
    released = ["g1-A", "g1-B", "g2-a"]
    assert consent_summary(workspace, released) == ConsentSummary(3, 2, 0, {})
    assert consent_sentences(consent_summary(workspace, released)) == []  # no record: no word of consent
    given = ConsentIn(speaker="spk1", scope="benchmark distribution", signed_on=date(2026, 1, 5), document="box 3/17")
    record_consent(workspace, given)
    summary = consent_summary(workspace, released)
    assert summary == ConsentSummary(3, 2, 1, {"benchmark distribution": 1})
    (sentence,) = consent_sentences(summary)
    assert "1 of 3 released audio clip(s)" in sentence and "other 2 clip(s)" in sentence
    assert "box 3/17" not in sentence  # the record's reference stays in the workspace
    assert consent_summary(workspace, ["g1-B"]).consented == 0  # spk2 has not consented


def test_the_release_gates_judge_the_candidates_as_status_does(workspace: Workspace, tmp_path: Path) -> None:
    from curation.audio_production.gates import consent_gate, recording_gate, refresh_audio_gates, takes_gate

    workspace.add_person("ann1", ["author"])
    workspace.add_person("spk1", ["speaker"])
    workspace.add_person("prod", ["producer"])
    rows = [item_row(f"g1-{x}", answer=x) for x in "AB"]
    for row in rows:
        row["provenance"]["audio"] |= {"speakers": ["spk1"], "producer": "prod", "session": f"s-{row['answer']}"}
    import_items(workspace, write_items(tmp_path / "in", rows))
    stored = refresh_audio_gates(workspace)
    assert consent_gate(workspace, ["g1-A"]) == {"g1-A": ["consent:missing"]}  # only the candidates asked
    assert takes_gate(workspace, ["g1-A", "g1-B"]) == {i: stored["takes"][i][0] for i in ("g1-A", "g1-B")}
    assert recording_gate(workspace, ["g1-B"]) == {"g1-B": ["group:recording_mismatch"]}
    assert stored["recording"]["g1-A"][1] == {"differ": ["session"]}
