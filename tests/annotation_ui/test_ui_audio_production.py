"""The audio production pages (issue 45): a producer chooses a take, an independent listener spot-checks a
sampled clip, and audio sign-off refuses a listener who voiced the clip (TRIAD App. B.2, B.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import APP, CONTEXT, add_people, advance

from annotation_ui.components import USER_KEY
from annotation_ui.logic import SignedIn
from curation.audio_production.gates import audio_findings
from curation.audio_production.loaded import load_audio_facts
from curation.audio_production.records import import_takes
from curation.audio_production.spot_check import spot_check_sample
from curation.items import import_items
from curation.workspace import Workspace
from tests.media_factory import item_row, make_tone, write_items

VOICED = {"source": "voice_acting", "license": "CC-BY-4.0", "speakers": ["spk1"], "producer": "prod"}


@pytest.fixture
def voiced_workspace(workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    add_people(workspace)
    workspace.add_person("spk1", ["speaker", "reviewer"])
    workspace.add_person("prod", ["producer"])
    rows = [item_row("g1-a", answer="A", context=CONTEXT), item_row("g1-b", answer="B", context=CONTEXT)]
    for row in rows:
        row["provenance"]["audio"] = dict(VOICED)
    folder = tmp_path / "src"
    import_items(workspace, write_items(folder, rows))
    lines = [
        {"item": "g1-a", "take": f"t{n}", "audio": str(make_tone(folder / f"t{n}.wav", 200.0 * n).relative_to(folder))}
        for n in (1, 2, 3)
    ]
    (folder / "takes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_takes(workspace, folder / "takes.jsonl")
    monkeypatch.setenv("CURATE_WORKSPACE", str(workspace.root))
    return workspace


def open_page(page: str, name: str, roles: tuple[str, ...]) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(name, frozenset(roles))
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def test_the_producer_chooses_a_take_on_the_takes_page(voiced_workspace: Workspace) -> None:
    at = open_page("audio_takes", "prod", ("producer",))
    assert at.selectbox(key="takes-item").options == ["g1-a", "g1-b"]
    assert len(at.get("audio")) == 3 and "takes:not_chosen" in at.markdown[0].value
    at.radio(key="takes-g1-a-pick").set_value("t3")
    at.button(key="takes-g1-a-choose").click().run()
    assert not at.exception, at.exception
    assert load_audio_facts(voiced_workspace).choices["g1-a"].take == "t3"
    assert "Recorded take t3" in at.success[0].value
    # t3 is not the item's audio: the item is held until its author revises the audio to the chosen take
    assert audio_findings(voiced_workspace)["takes"]["g1-a"][0] == ["takes:choice_not_item_audio"]


def test_a_person_who_produces_nothing_is_told_so(voiced_workspace: Workspace) -> None:
    voiced_workspace.add_person("prod2", ["producer"])
    at = open_page("audio_takes", "prod2", ("producer",))
    assert "names you as its producer" in at.info[0].value


def test_the_spot_check_page_offers_the_sample_to_an_independent_listener_only(voiced_workspace: Workspace) -> None:
    sampled = spot_check_sample(voiced_workspace)
    assert len(sampled) == 1
    speaker = open_page("audio_spot_check", "spk1", ("speaker", "reviewer"))
    assert "Nothing waits for you" in speaker.info[0].value
    at = open_page("audio_spot_check", "rev1", ("reviewer",))
    assert at.radio(key="spot-check-pick").options == sampled
    at.radio(key=f"spot-{sampled[0]}-verdict").set_value("inconsistent")
    at.button(key=f"spot-{sampled[0]}-submit").click().run()
    assert not at.exception, at.exception
    assert audio_findings(voiced_workspace)["spot_check"][sampled[0]][0] == ["spot_check:inconsistent"]
    assert "Nothing waits for you" in at.info[0].value  # checked: no longer offered to them


def test_audio_sign_off_refuses_a_listener_who_voiced_the_clip(voiced_workspace: Workspace) -> None:
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(voiced_workspace, item, answer, through="grammar")
    at = open_page("audio_signoff", "spk1", ("speaker", "reviewer"))
    # the queue leaves out the clips spk1 spoke in (TRIAD B.4): nothing to submit, nothing of theirs shown
    assert "Nothing waits for you here" in at.info[0].value and not at.button, [b.key for b in at.button]
    other = open_page("audio_signoff", "rev3", ("reviewer",))
    assert not other.error and "audio-skip" in [b.key for b in other.button]  # an independent listener is offered it
