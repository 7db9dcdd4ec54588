"""The kinds registry: a stage defined only here goes end to end (import, reviews, status, release)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from curation.errors import ValidationFailed
from curation.kinds import LabelStudioSpec, Stage, UiPage, kind_of, stage_named, stage_registered
from curation.kinds.mcq.controls import NOTE, VERDICT
from curation.review_queues import review_queue
from curation.reviews import import_reviews
from curation.workflow import derive_status, funnel
from curation.workspace import Workspace
from exports.build import build_release
from tests.exports.workspace_factory import fill_workspace, group_rows


class ToneReview(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str
    stage: Literal["tone_check"]
    reviewer: str
    verdict: Literal["pass", "fail"]
    note: str = ""


class ToneCheck(Stage):
    """Is the question's tone neutral? A stage the core does not know."""

    name = "tone_check"
    record_model = ToneReview
    default_quorum = 1
    page = UiPage("pages/tone_check.py", "Tone check")
    labelstudio = LabelStudioSpec("<View/>", {"verdict": VERDICT, "note": NOTE}, ("question",))


def write(path: Path, rows: list[dict]) -> Path:  # type: ignore[type-arg]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_mcq_is_registered_with_triads_stages_in_order() -> None:
    mcq = kind_of("mcq")
    assert mcq.stage_names == (
        "grammar",
        "image_screening",  # AI-generated images only (TRIAD §4.2)
        "audio_signoff",
        "subset_checklist",
        "answer_check",
        "group_integration",
    )
    assert [s.name for s in mcq.group_stages] == ["group_integration"]
    assert stage_named("tone_check") is None
    with pytest.raises(KeyError, match="unknown kind"):
        kind_of("nope")


def test_a_stage_defined_only_in_a_test_goes_end_to_end(
    make_workspace: Callable[[str], Workspace], tmp_path: Path
) -> None:
    ws = make_workspace("ws")
    no_rev2 = ToneCheck(separation=lambda reviewer, item, records: "rev2 may not" if reviewer == "rev2" else None)
    with stage_registered("mcq", no_rev2, before="answer_check"):
        fill_workspace(ws, tmp_path / "input", group_rows("g1"))  # every TRIAD stage passed, no tone check yet
        statuses = {st.id: st for st in derive_status(ws)}
        assert {(st.state, st.stage) for st in statuses.values()} == {("in_review", "tone_check")}
        assert review_queue(ws, "tone_check", "rev1") == ["g1-a", "g1-b"]
        assert review_queue(ws, "tone_check", "rev2") == []  # the stage's own separation rule
        assert funnel(list(statuses.values()))["stages"]["tone_check"] == {"in_review": 2}
        refused = {"item": "g1-a", "stage": "tone_check", "reviewer": "rev2", "verdict": "pass"}
        with pytest.raises(ValidationFailed) as exc:
            import_reviews(ws, write(tmp_path / "rev2.jsonl", [refused]))
        assert "rev2 may not" in str(exc.value.problems[0])

        rows = [{"item": i, "stage": "tone_check", "reviewer": "rev1", "verdict": "pass"} for i in ("g1-a", "g1-b")]
        assert import_reviews(ws, write(tmp_path / "tone.jsonl", rows)).recorded == 2
        assert {st.state for st in derive_status(ws)} == {"admitted"}

        result = build_release(ws, "1.0.0", out=tmp_path / "release")
        admission = [json.loads(line) for line in (result.path / "admission.jsonl").read_text().splitlines()]
        assert [a["stages"]["tone_check"] for a in admission] == [{"reviews": 1, "verdicts": {"pass": 1}}] * 2

    assert stage_named("tone_check") is None  # taken out again; the stored records no longer name a known stage
    with pytest.raises(ValidationFailed, match="unknown stage 'tone_check'"):
        import_reviews(ws, write(tmp_path / "again.jsonl", rows))


def test_status_json_rows_carry_the_kind(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> None:
    ws = make_workspace("ws")
    fill_workspace(ws, tmp_path / "input", group_rows("g1"))
    rows = [st.as_json() for st in derive_status(ws)]
    assert [list(r) for r in rows] == [["id", "group", "kind", "state", "stage", "reasons"]] * 2
    assert {r["kind"] for r in rows} == {"mcq"}
