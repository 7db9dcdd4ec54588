"""The story study (App. F.5) through a real Label Studio server, on SQLite and PostgreSQL: a window of the
story demo's release, three systems' outputs, ratings pulled back and validated, judge scores, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from annotation_ui.labelstudio.campaigns import load_campaign
from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.story_study import create_study, pull_study, push_study
from curation.errors import NotFoundError, ValidationFailed
from curation.study.rubric import CRITERIA
from curation.study.study import load_study
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, rating
from tests.annotation_ui.labelstudio.server import LsServer
from tests.media_factory import make_image, make_tone

runner = CliRunner()
HOSTILE = "<script>alert(1)</script> **bold**"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from omnicurate.demo.story import build_story_demo

    ws = build_story_demo(tmp_path_factory.mktemp("story") / "demo", log=lambda _m: None)
    ws.close()
    return ws.root / "releases" / "0.1.0"


def window_of(release: Path, size: int = 3) -> list[str]:
    result = runner.invoke(app, ["story", "study", "window", "--release", str(release), "--size", str(size), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["window"]


def write_outputs(folder: Path, window: list[str], extra: str) -> Path:
    """s1 and s2 give text, image and speech; s3 and s4 only text; one line outside the window."""
    folder.mkdir(parents=True, exist_ok=True)
    make_image(folder / "s1.png", "blue", fmt="PNG")
    make_image(folder / "s2.png", "red", fmt="PNG")
    make_tone(folder / "s1.wav", 330.0)
    make_tone(folder / "s2.wav", 440.0)
    lines = []
    for t in window:
        for s in ("s1", "s2"):
            lines.append(
                {
                    "system": s,
                    "transition": t,
                    "text": f"{s} goes on. {HOSTILE}",
                    "image": f"{s}.png",
                    "audio": f"{s}.wav",
                }
            )
        lines += [{"system": s, "transition": t, "text": f"{s} writes."} for s in ("s3", "s4")]
    lines.append({"system": "s1", "transition": extra, "text": "outside"})
    path = folder / "outputs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_bad_outputs_are_named_by_line_and_nothing_is_stored(
    workspace: Workspace, release: Path, tmp_path: Path
) -> None:
    window = window_of(release)
    path = tmp_path / "bad.jsonl"
    make_image(tmp_path / "ok.png", "blue", fmt="PNG")
    path.write_text(
        json.dumps({"system": "s1", "transition": "nope", "text": "x"})
        + "\n"
        + json.dumps({"system": "s1", "transition": window[0]})
        + "\n"
        + json.dumps({"system": "s1", "transition": window[0], "image": "missing.png"})
        + "\n"
        + json.dumps({"system": "s2", "transition": window[0], "image": "ok.png"})
        + "\n"
    )
    with pytest.raises(ValidationFailed) as caught:
        create_study(workspace, "study", release, path, size=3, tracks=("text",))
    text = str(caught.value)
    assert "bad.jsonl:1: transition: 'nope' is not a transition of omnicurate-story-demo 0.1.0" in text
    assert "bad.jsonl:2" in text and "at least one of text, image, audio" in text
    assert "bad.jsonl:3: image: missing.png: file not found" in text
    assert "bad.jsonl:4: system: the output (image) fits none of the tracks text" in text
    with pytest.raises(NotFoundError):
        load_study(workspace, "study")
    assert not workspace.events("study:study")


def test_study_end_to_end_through_label_studio(
    workspace: Workspace, connection: Connection, ls_env: LsServer, release: Path, tmp_path: Path
) -> None:
    for name in ("rev1", "rev2", "rev3"):
        workspace.add_person(name, ["reviewer"], email=EMAILS[name])
    window = window_of(release)
    all_ids = [json.loads(line)["id"] for line in (release / "data" / "transitions.jsonl").read_text().splitlines()]
    outside = next(t for t in all_ids if t not in window)
    outputs = write_outputs(tmp_path / "outputs", window, outside)
    summary = create_study(workspace, "f5", release, outputs, size=3, tracks=("text", "image", "integrated"))
    assert summary["window"] == window and summary["outside_window"] == 1
    # s1, s2: text + image + integrated; s3, s4: text only -> 3 transitions x (3 + 3 + 1 + 1)
    assert (summary["outputs"], summary["units"]) == (12, 24)

    pushed = push_study(workspace, connection, "f5")
    assert pushed.created == 24
    assert push_study(workspace, connection, "f5").created == 0, "pushing again adds nothing"
    client = ls_env.client()
    config = client.projects.get(pushed.project_id).label_config
    assert config.count('maxRating="10"') == 4 and all(f'name="{c}"' in config for c in CRITERIA)
    tasks = list(client.tasks.list(project=pushed.project_id, fields="all"))
    first = load_study(workspace, "f5").pages[window[0]]
    for task in tasks:
        data = task.data
        assert {"instructions", "current", "reference", "output", "context"} <= set(data)
        assert not any(s in data["output"] for s in ("s1 ", "s2 ")) or "goes on" in data["output"]
        assert "<script>" not in json.dumps(data), "text is escaped, never rendered"
        assert "system" not in data
    shown = [t.data for t in tasks if first["next_text"][:20].replace('"', "&quot;") in t.data["reference"]]
    assert shown and all(
        first["current_image"] in d["current"] and first["next_image"] in d["reference"] for d in shown
    )
    tracks_shown = {t.data["instructions"].split(":")[0].removeprefix("<h3>") for t in tasks}
    assert tracks_shown == {"Text track", "Image track", "Integrated track"}
    image_task = next(t for t in tasks if t.data["instructions"].startswith("<h3>Image track"))
    assert "<img" in image_task.data["output"] and "goes on" not in image_task.data["output"]

    # Two raters score every unit; rev3 skips one, rates another out of range (refused).
    _, outputs_by_id, units = load_campaign(workspace, "f5")
    task_of = {}
    from sqlalchemy import select

    from annotation_ui.labelstudio.tables import LsTask

    with workspace.session() as s:
        ids = {
            r.subject: r.task_id for r in s.execute(select(LsTask).where(LsTask.project_key == "campaign:f5")).scalars()
        }
    for u in units:
        task_of[u.key] = ids[f"unit:{u.id}"]
    base = {"s1": 8, "s2": 6, "s3": 4, "s4": 2}
    given: dict[tuple[str, str, str], list[float]] = {}
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    for n, u in enumerate(units):
        transition, system, track = u.key.split("|")
        for rater, bump in ((rev1, 0), (rev2, n % 2)):
            scores = [min(10, base[system] + bump + i % 2) for i in range(4)]
            rater.annotations.create(
                id=task_of[u.key], result=[rating(c, v, "output") for c, v in zip(CRITERIA, scores, strict=True)]
            )
            given.setdefault((transition, system, track), []).append(sum(scores) / 4)
    rev3 = ls_env.annotator(EMAILS["rev3"])
    rev3.annotations.create(id=task_of[units[0].key], result=[], was_cancelled=True)
    rev3.annotations.create(id=task_of[units[1].key], result=[rating(c, 11, "output") for c in CRITERIA])
    pulled = pull_study(workspace, connection, "f5")
    assert (pulled.recorded, pulled.skipped) == (48, 1)
    assert [r["reason"] for r in pulled.refused] == ["metadata_alignment: rating 11 is out of range 1–10"]

    # Judges: j1 on the window and on a transition outside it; j2 gives one invalid answer.
    judge_lines = []
    jbase = {"s1": 7, "s2": 7, "s3": 3, "s4": 4}
    for t in [*window, outside]:
        for s, v in jbase.items():
            judge_lines.append(
                {
                    "judge": "j1",
                    "system": s,
                    "transition": t,
                    "track": "text",
                    "scores": dict.fromkeys(CRITERIA, v + (1 if t == outside and s == "s2" else 0)),
                }
            )
    judge_lines.append({"judge": "j2", "system": "s1", "transition": window[0], "track": "text", "scores": None})
    judges_file = tmp_path / "judges.jsonl"
    judges_file.write_text("".join(json.dumps(line) + "\n" for line in judge_lines))
    result = runner.invoke(
        app, ["-w", str(workspace.root), "story", "study", "judges", "f5", str(judges_file), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"stored": 17, "replaced": 0, "unchanged": 0, "invalid_answers": 1}

    result = runner.invoke(app, ["-w", str(workspace.root), "story", "study", "report", "f5", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["coverage"]["evaluations"] == 48 and report["coverage"]["skips"] == 1
    assert report["coverage"]["judged_transitions"] == 4
    human: dict[str, list[float]] = {}
    for (_, system, track), values in given.items():
        if track == "text":
            human.setdefault(system, []).extend(values)
    h = {s: sum(v) / len(v) for s, v in human.items()}
    j = {s: (3 * v + v + (1 if s == "s2" else 0)) / 4 for s, v in jbase.items()}
    systems = sorted(h)
    text = report["agreement"]["text"]["overall"]
    assert text["systems"] == 4
    assert text["spearman"]["value"] == pytest.approx(
        stats.spearmanr([h[s] for s in systems], [j[s] for s in systems]).statistic, abs=1e-6
    )
    assert text["kendall_tau_b"]["value"] == pytest.approx(
        stats.kendalltau([h[s] for s in systems], [j[s] for s in systems]).statistic, abs=1e-6
    )
    assert text["pearson"]["value"] == pytest.approx(
        stats.pearsonr([h[s] for s in systems], [j[s] for s in systems]).statistic, abs=1e-6
    )
    assert text["loto"]["repetitions"] == 3 and text["loto"]["systems"] == [4, 4]
    assert report["agreement"]["image"]["overall"]["undefined"].startswith("0 system(s)")
    windowed = runner.invoke(
        app, ["-w", str(workspace.root), "story", "study", "report", "f5", "--comparator", "window", "--json"]
    )
    jw = {s: float(v) for s, v in jbase.items()}
    assert json.loads(windowed.stdout)["agreement"]["text"]["overall"]["pearson"]["value"] == pytest.approx(
        stats.pearsonr([h[s] for s in systems], [jw[s] for s in systems]).statistic, abs=1e-6
    )
