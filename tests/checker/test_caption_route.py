"""The caption route (issue 46, row 2; Judge Anything App. C.3): a judge declared audio-only judges an audio+video
task with the video given as its caption — through `curate judge run` with replay backends, and through the
tiny random omni model (real audio through the model, the caption in its prompt). Captions are stored with
their model and reused by later runs; the route is recorded per judgment; without a captioning backend the
run is refused by name; a system answers through captions too (`curate judge respond`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlmodel import col
from typer.testing import CliRunner

from checker.drafting import ReplayDrafter, draft_checklists
from checker.generation import open_generator
from curation.kinds.judge import draft_store, record_store, sample_store, task_store
from curation.kinds.judge.caption_draw_tables import JudgeCaption
from curation.kinds.judge.captioning import Captioner, route_prompt
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.judging import JudgePrompt, criteria_of, run_judge
from curation.kinds.judge.responding import response_provenance
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.schema import ChecklistSelectionRecord, ResponseReviewRecord
from curation.kinds.judge.tables import JudgeOutput
from curation.tables import Asset
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources

runner = CliRunner()
TASK = "av2t-01"
VIDEO_CAPTION = "Coloured tiles with a bright white bar sweeping from left to right."


def seeded(ws: Workspace, folder: Path) -> dict[str, str]:
    """One audio+video->text task with two reviewed text responses, a final checklist and its samples; returns
    the task's media (modality -> sha256)."""
    write_sources(folder)
    line = {"id": TASK, "instruction": "Does the sound match the moving bar?", "output": "text", "source": "AVQA",
            "license": "CC-BY-4.0", "inputs": {"audio": "media/a2t-01-in.wav", "video": "media/v2t-01-in.mp4"}}  # fmt: skip
    (folder / "av.jsonl").write_text(json.dumps(line) + "\n")
    answers = [{"task": TASK, "system": s, "output": {"text": f"Answer of {s}."}} for s in ("sys-a", "sys-b")]
    (folder / "av-responses.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    draft = {"task": TASK, "model": "gemini-1.5-pro",
             "captions": {"audio": "A rising tone.", "video": VIDEO_CAPTION},
             "checklist": {r: [f"Is the {r} right?"] for r in RUBRICS}}  # fmt: skip
    (folder / "av-drafts.jsonl").write_text(json.dumps(draft) + "\n")
    for name in ("ann1", "ann2"):
        ws.add_person(name, ["reviewer"])
    task_store.import_tasks(ws, folder / "av.jsonl")
    task_store.import_responses(ws, folder / "av-responses.jsonl")
    draft_checklists(ws, ReplayDrafter(str(folder / "av-drafts.jsonl")))
    chosen = first_per_rubric(draft_store.drafted_candidates(ws, TASK))
    for stage, who in (("checklist_curation", "ann1"), ("checklist_crosscheck", "ann2")):
        record_store.record_selection(
            ws, ChecklistSelectionRecord(task=TASK, stage=stage, reviewer=who, selected=chosen)
        )
    for r in task_store.responses(ws):
        record_store.record_response_review(ws, ResponseReviewRecord(response=r.id, reviewer="ann2", usable=True))
    sample_store.build_samples(ws)
    return dict(task_store.task(ws, TASK).inputs)


def judge_answers(ws: Workspace) -> list[dict[str, Any]]:
    """A valid recorded answer for every call of an overall-setting run with one sample per judgment."""
    lines = []
    for kind in ("score", "pair"):
        answer = {"overall": {"comment": "Fine.", "score" if kind == "score" else "choice": 1}}
        orders = ("shown",) if kind == "score" else ("shown", "swapped")
        for sample in sample_store.samples(ws, kind):
            for order in orders:
                lines.append(
                    {"key": f"{sample.id}|overall|{order}|1|0", "output": json.dumps(answer), "model": "gpt-4o"}
                )
    return lines


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def captions_stored(ws: Workspace) -> int:
    with ws.session() as s:
        return int(s.execute(select(func.count()).select_from(JudgeCaption)).scalar_one())


def captions_by(ws: Workspace, model: str) -> list[JudgeCaption]:
    with ws.session() as s:
        return list(s.execute(select(JudgeCaption).where(col(JudgeCaption.model) == model)).scalars())


def routes(ws: Workspace, judge: str) -> list[dict[str, Any]]:
    with ws.session() as s:
        payloads = s.execute(select(JudgeOutput.payload).where(JudgeOutput.judge == judge)).scalars()
        return [p["runs"] for p in payloads]


def test_an_audio_only_judge_judges_an_audio_video_task_through_captions(workspace: Workspace, tmp_path: Path) -> None:
    media = seeded(workspace, tmp_path / "src")
    drafted = captions_stored(workspace)
    assert drafted == 2, "the drafter's captions of the audio and the video are stored (by the drafting model)"
    judge = write(tmp_path / "judge.jsonl", judge_answers(workspace))
    captions = write(tmp_path / "captions.jsonl", [
        {"key": f"caption|video|{media['video']}", "output": VIDEO_CAPTION, "model": "gemini-1.5-pro"},
    ])  # fmt: skip
    base = ["-w", str(workspace.root), "judge", "run", "--judge", "gpt4o", "--backend", f"replay:{judge}",
            "--setting", "overall", "--samples", "1", "--takes", "text,audio"]  # fmt: skip

    refused = runner.invoke(app, base)
    assert refused.exit_code == 2
    assert "judge gpt4o takes audio, text, not video; configure a captioning backend" in " ".join(
        refused.output.split()
    )
    assert routes(workspace, "gpt4o/overall") == []

    done = runner.invoke(app, [*base, "--caption-backend", f"replay:{captions}", "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    samples = len(sample_store.samples(workspace, "score")) + len(sample_store.samples(workspace, "pair"))
    assert result["judged"] == samples > 0 and result["invalid"] == 0
    captioner = open_generator(f"replay:{captions}").model_id
    recorded = routes(workspace, "gpt4o/overall")
    assert len(recorded) == samples
    assert all(r["1"]["route"] == {"audio": "native", "video": f"caption:{captioner}"} for r in recorded)
    [stored] = captions_by(workspace, captioner)
    assert (stored.asset, stored.modality, stored.model, stored.caption) == (
        media["video"],
        "video",
        captioner,
        VIDEO_CAPTION,
    )

    # a second run reuses the stored caption: the same prompts, nothing captioned again
    run2 = write(
        tmp_path / "judge2.jsonl", [{**x, "key": x["key"].replace("|1|", "|2|")} for x in judge_answers(workspace)]
    )
    again = [a.replace(str(judge), str(run2)) for a in base]
    done = runner.invoke(app, [*again, "--run", "2", "--caption-backend", f"replay:{captions}", "--json"])
    assert done.exit_code == 0, done.output
    assert captions_stored(workspace) == drafted + 1
    assert all(r["2"]["prompts_sha256"] == r["1"]["prompts_sha256"] for r in routes(workspace, "gpt4o/overall"))

    # a system that takes text and audio answers the task through the same caption
    system = write(tmp_path / "system.jsonl", [{"key": TASK, "output": "They match.", "model": "gpt-4o"}])
    answered = runner.invoke(app, ["-w", str(workspace.root), "judge", "respond", "--system", "gpt4o",
                                   "--backend", f"replay:{system}", "--accepts", "text,audio",
                                   "--caption-backend", f"replay:{captions}", "--json"])  # fmt: skip
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)["answered"] == [TASK]
    provenance = response_provenance(workspace, f"{TASK}:gpt4o")
    assert provenance is not None and provenance["route"] == {"audio": "native", "video": f"caption:{captioner}"}


def test_the_tiny_omni_model_hears_the_audio_and_reads_the_video_caption(
    workspace: Workspace, tiny_omni: Path, tmp_path: Path
) -> None:
    media = seeded(workspace, tmp_path / "src")
    generator = open_generator(f"transformers:{tiny_omni}")
    assert {"text", "image", "audio"} <= generator.takes, "the probe finds what the processor takes"
    asked: list[tuple[str, str]] = []
    seen: list[JudgePrompt] = []

    def describe(modality: str, asset: str) -> str:
        asked.append((modality, asset))
        return VIDEO_CAPTION

    captioner = Captioner("captioner-a", describe)
    takes = frozenset({"text", "audio"})  # declared audio-only

    def route(prompt: JudgePrompt) -> tuple[JudgePrompt, dict[str, str]]:
        return route_prompt(workspace, prompt, takes, captioner)

    with workspace.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}

    def generate(key: str, prompt: JudgePrompt, index: int) -> str:
        seen.append(prompt)
        paths = [(m, workspace.asset_path(assets[sha])) for m, sha in prompt.media]
        return generator.generate(key, prompt.system, prompt.user, paths, 0.7, index)

    result = run_judge(workspace, "tiny", generator.model_id, "overall", generate, ("score",), 1, route=route)
    assert result.judged == len(sample_store.samples(workspace, "score")) > 0
    assert asked == [("video", media["video"])], "captioned once, then read from the store"
    assert all(p.media == (("audio", media["audio"]),) for p in seen), "the audio goes to the model as audio"
    assert all("Caption of the input video (video, given as text" in p.user and VIDEO_CAPTION in p.user for p in seen)
    for runs in routes(workspace, "tiny/overall"):
        assert runs["1"]["route"] == {"audio": "native", "video": "caption:captioner-a"}
        assert runs["1"]["answers"]["shown"].keys() == set(criteria_of("overall"))
