"""AI-image screening (TRIAD §4.2): two reviewers screen an AI-generated image before its item is admitted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.kinds import kind_of
from curation.workflow import derive_status
from curation.workspace import Workspace
from devsupport.reviews import REVIEWERS, admitting_reviews
from exports.build import build_release
from omnicurate.cli.main import app
from tests.exports.workspace_factory import distinct_media, group_rows
from tests.media_factory import write_items

runner = CliRunner()


def ai_rows(group: str = "g1") -> list[dict]:
    rows = group_rows(group)
    for row in rows:
        row["provenance"] = {**row["provenance"], "image": {"source": "ai_generated", "license": "CC0-1.0"}}
    return rows


def invoke(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), *args])


def import_records(ws: Workspace, folder: Path, records: list[dict], name: str = "reviews.jsonl"):  # type: ignore[no-untyped-def]
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return invoke(ws, "import", "reviews", str(path))


def screening(item: str, reviewer: str, verdict: str = "pass", reason: str = "") -> dict:
    return {"item": item, "stage": "image_screening", "reviewer": reviewer, "verdict": verdict, "reason": reason}


@pytest.fixture
def ai_ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    """Two sisters with one AI-generated image, every other stage passed by TRIAD's separation of roles."""
    for name, roles in {"ann1": ["author", "reviewer"], **{r: ["reviewer"] for r in REVIEWERS}}.items():
        workspace.add_person(name, roles)
    rows = ai_rows() + group_rows("g2")  # g2: photos, no screening
    distinct_media(tmp_path / "in", rows)
    result = invoke(workspace, "import", "items", str(write_items(tmp_path / "in", rows)))
    assert result.exit_code == 0, result.output
    assert import_records(workspace, tmp_path, admitting_reviews(rows)).exit_code == 0
    return workspace


def states(ws: Workspace) -> dict[str, tuple[str, str | None, list[str]]]:
    return {s.id: (s.state, s.stage, s.reasons) for s in derive_status(ws)}


def test_the_stage_is_registered_after_grammar_for_ai_images_only() -> None:
    names = kind_of("mcq").stage_names
    assert names.index("image_screening") == names.index("grammar") + 1


def test_an_ai_image_waits_for_two_screenings_then_is_admitted(ai_ws: Workspace, tmp_path: Path) -> None:
    before = states(ai_ws)
    assert before["g1-a"] == ("in_review", "image_screening", ["ai_image:unscreened"])
    assert before["g2-a"][0] == "admitted"  # photos need no screening
    status = invoke(ai_ws, "status", "--json")
    assert {r["id"]: r["reasons"] for r in json.loads(status.stdout)}["g1-b"] == ["ai_image:unscreened"]

    one = [screening("g1-a", "rev1"), screening("g1-b", "rev1")]
    assert import_records(ai_ws, tmp_path, one, "one.jsonl").exit_code == 0
    assert states(ai_ws)["g1-a"] == ("in_review", "image_screening", ["ai_image:unscreened"])
    two = [screening("g1-a", "rev5"), screening("g1-b", "rev5")]  # the blind checker may screen: no label shown
    assert import_records(ai_ws, tmp_path, two, "two.jsonl").exit_code == 0
    assert states(ai_ws)["g1-a"] == ("admitted", None, []) and states(ai_ws)["g1-b"][0] == "admitted"

    folder = tmp_path / "release"
    build_release(ai_ws, "1.0.0", out=folder)
    card = (folder / "README.md").read_text()
    image = ai_ws.item("g1-a").image
    assert "AI-generated images, with their items' passing artefact screenings (`image_screening` records):" in card
    quorum = ai_ws.settings.review.image_screening_quorum  # the stage line names the quorum in force
    assert f"image_screening (quorum {quorum} per item; 2 released item(s))" in card
    assert "(items g1-a, g1-b): 2 passing screening(s) per item" in card and image[:12] in card
    admission = {json.loads(line)["id"]: json.loads(line) for line in (folder / "admission.jsonl").open()}
    assert admission["g1-a"]["stages"]["image_screening"]["verdicts"] == {"pass": 2}
    assert "image_screening" not in admission["g2-a"]["stages"]


def test_a_failed_screening_returns_the_item_with_its_reason(ai_ws: Workspace, tmp_path: Path) -> None:
    records = [screening("g1-a", "rev1"), screening("g1-a", "rev2", "fail", "six fingers on the left hand")]
    assert import_records(ai_ws, tmp_path, records).exit_code == 0
    assert states(ai_ws)["g1-a"] == ("returned", "image_screening", ["ai_image:artefact"])


def test_screenings_are_refused_without_a_reason_by_the_author_and_for_photos(ai_ws: Workspace, tmp_path: Path) -> None:
    no_reason = import_records(ai_ws, tmp_path, [screening("g1-a", "rev1", "fail")], "a.jsonl")
    assert no_reason.exit_code == 2 and "a.jsonl:1" in no_reason.output and "reason" in no_reason.output
    own = import_records(ai_ws, tmp_path, [screening("g1-a", "ann1")], "b.jsonl")
    assert own.exit_code == 2 and "authored" in own.output
    photo = import_records(ai_ws, tmp_path, [screening("g2-a", "rev1")], "c.jsonl")
    assert photo.exit_code == 2 and "b.jsonl" not in photo.output
    assert states(ai_ws)["g1-a"] == ("in_review", "image_screening", ["ai_image:unscreened"])  # nothing stored
