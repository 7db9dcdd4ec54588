"""AI-image screening through a real Label Studio server: push the generated images, annotate, pull records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.stages import pull_stages, push_stage
from curation.tables import ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, advance, choice, seed, tasks
from tests.annotation_ui.labelstudio.server import LsServer

GENERATED = {
    "provenance": {
        "image": {"source": "ai_generated", "license": "CC0-1.0"},
        "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
    }
}


def reason(text: str) -> dict[str, Any]:
    return {"from_name": "reason", "to_name": "image", "type": "textarea", "value": {"text": [text]}}


def test_screenings_go_through_label_studio(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in", revise={"g1-a": GENERATED, "g1-b": GENERATED})
    advance(workspace, tmp_path, "audio_signoff")  # grammar signed off: the items wait for their screenings
    assert {s.stage for s in derive_status(workspace)} == {"image_screening"}
    push_stage(workspace, connection, "image_screening")
    ids = tasks(workspace, "image_screening")
    assert set(ids) == {("item:g1-a", None), ("item:g1-b", None)}
    task = ls_env.client().tasks.get(ids[("item:g1-a", None)])
    assert task.data["image"] and "$" not in task.data["image"]  # the image is published, not a placeholder

    rev1, rev2 = ls_env.annotator(EMAILS["rev1"]), ls_env.annotator(EMAILS["rev2"])
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "image", "pass")])
    rev2.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "image", "pass")])
    rev1.annotations.create(
        id=ids[("item:g1-b", None)], result=[choice("verdict", "image", "fail"), reason("melted hands")]
    )
    rev2.annotations.create(id=ids[("item:g1-b", None)], result=[choice("verdict", "image", "fail")])  # no reason
    ls_env.annotator(EMAILS["ann1"]).annotations.create(
        id=ids[("item:g1-a", None)], result=[choice("verdict", "image", "pass")]
    )

    (report,) = pull_stages(workspace, connection, ["image_screening"])
    assert report.recorded == 3
    with workspace.session() as s:
        rows = s.execute(select(ReviewRecord).where(ReviewRecord.stage == "image_screening")).scalars()
        got = {(r.subject, r.reviewer): r.payload for r in rows}
    assert got[("item:g1-b", "rev1")] == {"verdict": "fail", "reason": "melted hands"}
    assert set(got) == {("item:g1-a", "rev1"), ("item:g1-a", "rev2"), ("item:g1-b", "rev1")}
    refused = {r.user: r.reason for r in report.refused}
    assert "authored 'g1-a'" in refused[EMAILS["ann1"]]
    assert "artefact" in refused[EMAILS["rev2"]]
    states = {s.id: (s.state, s.stage, s.reasons) for s in derive_status(workspace)}
    assert states["g1-a"][1] == "audio_signoff"  # screened: on to the listeners
    assert states["g1-b"] == ("returned", "image_screening", ["ai_image:artefact"])
