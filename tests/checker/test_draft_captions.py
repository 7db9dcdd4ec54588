"""The checklist drafter's captions are the caption route's (issue 46; Judge Anything §2.2, App. C.3): a medium
the drafting model already captioned (for another task, in an earlier draft) is not captioned again, and the
captions it asks for are stored in ``judge_caption`` with its model and the caption prompt, so one caption per
medium and model serves drafting and judging. Replay drafters here; the ``openai:`` drafter sharing captions
with a judge run: tests/checker/test_drafting_openai.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from checker.drafting import ReplayDrafter, draft_checklists
from curation.errors import ValidationFailed
from curation.kinds.judge import task_store
from curation.kinds.judge.caption_draw_tables import JudgeCaption
from curation.kinds.judge.captioning import prompt_sha256
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.tables import JudgeDraft
from curation.workspace import Workspace
from omnicurate.demo.judge_sources import write_sources

VIDEO = "Coloured tiles with a bright white bar sweeping from left to right."
AUDIO = "A steady tone that rises."
CHECKLIST = {r: [f"Is the {r} right?"] for r in RUBRICS}


class CountingDrafter(ReplayDrafter):
    """A replay drafter that counts what it is asked to caption."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.asked: list[tuple[str, str]] = []

    def caption(self, task: str, modality: str, path: Path) -> str:
        self.asked.append((task, modality))
        return super().caption(task, modality, path)


def tasks_sharing_a_video(ws: Workspace, folder: Path) -> dict[str, str]:
    """v2t-01 (video) and av2t-01 (audio + the same video); returns av2t-01's media (modality -> sha256)."""
    sources = write_sources(folder)
    lines = [json.loads(x) for x in sources["tasks"].read_text().splitlines() if '"v2t-01"' in x]
    lines.append({"id": "av2t-01", "instruction": "Does the sound match the moving bar?", "output": "text",
                  "source": "AVQA", "license": "CC-BY-4.0",
                  "inputs": {"audio": "media/a2t-01-in.wav", "video": "media/v2t-01-in.mp4"}})  # fmt: skip
    (folder / "av.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    task_store.import_tasks(ws, folder / "av.jsonl")
    return dict(task_store.task(ws, "av2t-01").inputs)


def drafts_file(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps({"model": "gemini-1.5-pro", "checklist": CHECKLIST, **x}) + "\n" for x in lines))
    return path


def stored(ws: Workspace) -> list[tuple[str, str, str, str, str]]:
    with ws.session() as s:
        rows = s.execute(select(JudgeCaption).order_by(JudgeCaption.id)).scalars()  # type: ignore[arg-type]
        return [(r.asset, r.modality, r.model, r.prompt_sha256, r.caption) for r in rows]


def draft_captions(ws: Workspace, task: str) -> dict[str, str]:
    with ws.session() as s:
        output = s.execute(select(JudgeDraft.output).where(JudgeDraft.task == task)).scalar_one()  # type: ignore[arg-type]
    return dict(output["captions"])


def test_a_medium_the_drafting_model_captioned_is_not_captioned_again(workspace: Workspace, tmp_path: Path) -> None:
    media = tasks_sharing_a_video(workspace, tmp_path / "src")
    # av2t-01's line leaves its video out: the file captions that video on v2t-01's line
    drafter = CountingDrafter(str(drafts_file(tmp_path / "drafts.jsonl", [
        {"task": "v2t-01", "captions": {"video": VIDEO}},
        {"task": "av2t-01", "captions": {"audio": AUDIO}},
    ])))  # fmt: skip

    assert draft_checklists(workspace, drafter, ["v2t-01"]).drafted == ["v2t-01"]
    assert drafter.asked == [("v2t-01", "video")]
    assert stored(workspace) == [(media["video"], "video", drafter.caption_model, prompt_sha256("video"), VIDEO)]

    # the second draft asks only for the audio: the video's caption is the stored one
    assert draft_checklists(workspace, drafter, ["av2t-01"]).drafted == ["av2t-01"]
    assert drafter.asked == [("v2t-01", "video"), ("av2t-01", "audio")]
    assert draft_captions(workspace, "av2t-01") == {"audio": AUDIO, "video": VIDEO}
    assert [(r[1], r[4]) for r in stored(workspace)] == [("video", VIDEO), ("audio", AUDIO)]

    # a run with nothing left to draft asks the captioner nothing
    asked = len(drafter.asked)
    assert draft_checklists(workspace, drafter).cached == ["av2t-01", "v2t-01"]
    assert len(drafter.asked) == asked and len(stored(workspace)) == 2


def test_one_file_gives_a_shared_medium_one_caption(workspace: Workspace, tmp_path: Path) -> None:
    tasks_sharing_a_video(workspace, tmp_path / "src")
    split = drafts_file(tmp_path / "split.jsonl", [
        {"task": "v2t-01", "captions": {"video": VIDEO}},
        {"task": "av2t-01", "captions": {"audio": AUDIO, "video": "Something else entirely."}},
    ])  # fmt: skip
    with pytest.raises(ValidationFailed) as refused:
        draft_checklists(workspace, ReplayDrafter(str(split)))
    [problem] = refused.value.problems
    # tasks are checked in id order: v2t-01's line (line 1) meets the caption av2t-01's line gave
    assert (problem.file, problem.line, problem.field) == (str(split), 1, "captions")
    assert "task v2t-01's video" in problem.message and "the line of task av2t-01" in problem.message
    assert stored(workspace) == [], "a refused file stores no caption"

    # drafted one task at a time, the second line's other caption meets the stored one
    drafter = ReplayDrafter(str(split))
    draft_checklists(workspace, drafter, ["v2t-01"])
    with pytest.raises(ValidationFailed, match=r"captioned otherwise than in the caption this file already gave"):
        draft_checklists(workspace, drafter, ["av2t-01"])
    assert [r[4] for r in stored(workspace)] == [VIDEO]

    missing = drafts_file(tmp_path / "missing.jsonl", [{"task": "av2t-01", "captions": {"audio": AUDIO}}])
    with pytest.raises(ValidationFailed, match="task av2t-01 has a video input: its line needs a video caption"):
        draft_checklists(workspace, ReplayDrafter(str(missing)), ["av2t-01"])
