"""Rating campaigns through a real Label Studio server, with report figures checked against hand computations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.campaigns import (
    PRESETS,
    campaign_spec,
    create_campaign,
    load_campaign,
    pull_campaign,
    push_campaign,
)
from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.report import campaign_report
from annotation_ui.labelstudio.tables import LsTask
from curation.errors import NotFoundError, ValidationFailed
from curation.tables import Event
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, choice, rating
from tests.annotation_ui.labelstudio.server import LsServer
from tests.media_factory import make_image, make_tone


def people(ws: Workspace) -> None:
    for name in ("rev1", "rev2", "rev3"):
        ws.add_person(name, ["reviewer"], email=EMAILS[name])


def write_outputs(folder: Path, systems: list[str], items: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    make_image(folder / "s1-i1.png", "blue", fmt="PNG")
    make_tone(folder / "s2-i1.wav", 330.0)
    lines = []
    for item in items:
        for system in systems:
            line = {"system": system, "item": item, "prompt": f"Continue story {item}.", "text": f"{system} on {item}"}
            if (system, item) == ("s1", "i1"):
                line["image"] = "s1-i1.png"
            if (system, item) == ("s2", "i1"):
                line["audio"] = "s2-i1.wav"
            lines.append(line)
    path = folder / "outputs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def unit_tasks(ws: Workspace, name: str) -> dict[str, tuple[int, str, str | None]]:
    """unit key -> (task id, system shown as A / rated, system shown as B)."""
    campaign, outputs, units = load_campaign(ws, name)
    with ws.session() as s:
        rows = {
            r.subject: r.task_id
            for r in s.execute(select(LsTask).where(LsTask.project_key == f"campaign:{name}")).scalars()
        }
    return {
        u.key: (rows[f"unit:{u.id}"], outputs[u.output_a].system, outputs[u.output_b].system if u.output_b else None)
        for u in units
    }


def test_defaults_are_the_storybench_rubric_on_1_to_10() -> None:
    spec = campaign_spec("study", "rating")
    assert spec.criteria == ("metadata_alignment", "continuity", "condition_compliance", "ground_truth_consistency")
    assert (spec.scale_max, spec.redundancy) == (10, 2)
    assert campaign_spec("s", "rating", preset="judge-anything").criteria == PRESETS["judge-anything"][0] == ("score",)
    with pytest.raises(ValidationFailed, match="scale 1–12"):
        campaign_spec("s", "rating", scale_max=12)


def test_outputs_are_validated_whole(workspace: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"system": "s1", "item": "i1"})
        + "\n"
        + json.dumps({"system": "s1", "item": "i2", "image": "missing.png"})
        + "\n"
    )
    with pytest.raises(ValidationFailed) as caught:
        create_campaign(workspace, campaign_spec("c", "rating"), path)
    text = str(caught.value)
    assert "bad.jsonl:1" in text and "at least one of text, image, audio" in text
    assert "bad.jsonl:2: image: missing.png: file not found" in text
    assert not workspace.events("campaign:c")
    with pytest.raises(NotFoundError):
        load_campaign(workspace, "c")


def test_rating_campaign_end_to_end_with_hand_computed_report(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    people(workspace)
    outputs = write_outputs(tmp_path / "outputs", ["s1", "s2"], ["i1", "i2"])
    spec = campaign_spec("study", "rating", criteria=["quality"], scale_max=5)
    assert create_campaign(workspace, spec, outputs)["units"] == 4
    pushed = push_campaign(workspace, connection, "study")
    assert pushed.created == 4
    published = {f.suffix for f in (ls_env.document_root / "omnicurate").iterdir()}
    assert {".png", ".wav"} <= published, "the image and audio outputs are served as local files"
    assert push_campaign(workspace, connection, "study").created == 0
    project = ls_env.client().projects.get(pushed.project_id)
    assert 'maxRating="5"' in project.label_config
    overlaps = {t.overlap for t in ls_env.client().tasks.list(project=pushed.project_id, fields="all")}
    assert overlaps == {2}, "each task asks for the redundancy target"
    for task in ls_env.client().tasks.list(project=pushed.project_id, fields="all"):
        assert "s1" not in task.data["prompt"] and set(task.data) == {"prompt", "output", "omnicurate_ref"}

    tasks = unit_tasks(workspace, "study")
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    scores = {"i1|s1": (3, 3), "i1|s2": (3, 5), "i2|s1": (5, 5), "i2|s2": (5, 5)}
    edit_me = None
    for key, (first, second) in scores.items():
        rev1.annotations.create(id=tasks[key][0], result=[rating("quality", first, "output")])
        made = rev2.annotations.create(id=tasks[key][0], result=[rating("quality", second, "output")])
        edit_me = made if key == "i1|s2" else edit_me
    rev3 = ls_env.annotator(EMAILS["rev3"])
    rev3.annotations.create(id=tasks["i1|s1"][0], result=[], was_cancelled=True)
    rev3.annotations.create(id=tasks["i2|s1"][0], result=[rating("quality", 6, "output")])

    pulled = pull_campaign(workspace, connection, "study")
    assert (pulled.recorded, pulled.skipped) == (8, 1)
    assert [r["reason"] for r in pulled.refused] == ["quality: rating 6 is out of range 1–5"]
    again = pull_campaign(workspace, connection, "study")
    assert (again.recorded, again.replaced, again.unchanged) == (0, 0, 9)

    judges = tmp_path / "judges.jsonl"
    judge = {("i1", "s1"): 2, ("i1", "s2"): 5, ("i2", "s1"): 4, ("i2", "s2"): 6}
    judges.write_text(
        "".join(
            json.dumps({"judge": "j1", "item": i, "system": s, "scores": {"quality": v}}) + "\n"
            for (i, s), v in judge.items()
        )
    )
    report = campaign_report(workspace, "study", judges, resamples=2000)

    assert report["coverage"] == {
        "units": 4,
        "target": 2,
        "evaluations": 8,
        "skips": 1,
        "raters": 3,
        "units_at_target": 4,
        "ratings_per_unit": {"2": 4},
        "mean_ratings_per_unit": 2.0,
    }
    # Ordinal alpha by hand: pairable values 3,3 | 3,5 | 5,5 | 5,5 -> n3 = 3, n5 = 5, n = 8, one disagreeing unit.
    # With two values every metric is one constant, so alpha = 1 - (n - 1) * 2 o35 / (2 n3 n5) = 1 - 7 * 2 / 30.
    assert report["agreement"]["quality"]["value"] == pytest.approx(1 - 7 * 2 / 30, abs=1e-4)
    systems = {row["system"]: row for row in report["systems"]}
    assert systems["s1"]["overall"]["mean"] == 4.0 and systems["s2"]["overall"]["mean"] == 4.5
    # s1's two outputs average 3 and 5: resampling the two outputs gives means 3, 4 or 5.
    assert (systems["s1"]["overall"]["low"], systems["s1"]["overall"]["high"]) == (3.0, 5.0)
    # Elo from per-item output means: i1 s2 beats s1 (4 > 3), i2 a tie (5 = 5); K = 32, in that order.
    s1 = 1000 + 32 * (0 - 0.5)
    expected = 1 / (1 + 10 ** ((2000 - s1 - s1) / 400))
    s1 += 32 * (0.5 - expected)
    assert report["elo"]["ratings"] == {"s1": round(s1, 2), "s2": round(2000 - s1, 2)}
    # Judge-human: human output means 3, 4, 5, 5 against the judge's 2, 5, 4, 6.
    human, judged = [3, 4, 5, 5], [2, 5, 4, 6]
    h_ranks, j_ranks = [1, 2, 3.5, 3.5], [1, 3, 2, 4]
    assert report["judges"]["j1"]["outputs"]["spearman"] == pytest.approx(_pearson(h_ranks, j_ranks), abs=1e-4)
    assert report["judges"]["j1"]["outputs"]["pearson"] == pytest.approx(_pearson(human, judged), abs=1e-4)
    assert report["judges"]["j1"]["outputs"]["mean_absolute_difference"] == 1.0
    assert report["judges"]["j1"]["systems"]["undefined"].endswith("needs at least three systems; there are 2")

    assert edit_me is not None
    rev2.annotations.update(id=edit_me.id, result=[rating("quality", 3, "output")])
    edited = pull_campaign(workspace, connection, "study")
    assert (edited.replaced, edited.unchanged) == (1, 8)
    with workspace.session() as s:
        replaced = s.execute(select(Event).where(Event.action == "campaign.rating_replaced")).scalars().all()
    assert [(e.before["scores"], e.after["scores"]) for e in replaced] == [({"quality": 5}, {"quality": 3})]
    after = campaign_report(workspace, "study")
    assert after["agreement"]["quality"]["value"] == 1.0


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return cov / (sum((a - mx) ** 2 for a in x) ** 0.5 * sum((b - my) ** 2 for b in y) ** 0.5)


def test_pairwise_campaign_sides_are_seeded_and_recorded(
    workspace: Workspace,
    make_workspace,
    connection: Connection,
    ls_env: LsServer,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    people(workspace)
    outputs = write_outputs(tmp_path / "outputs", ["s1", "s2", "s3"], ["i1", "i2"])
    create_campaign(workspace, campaign_spec("arena", "pairwise", seed=7), outputs)
    other = make_workspace("other")
    create_campaign(other, campaign_spec("arena", "pairwise", seed=7), outputs)
    _, out_a, units_a = load_campaign(workspace, "arena")
    _, out_b, units_b = load_campaign(other, "arena")
    shown = [(u.key, out_a[u.output_a].system) for u in units_a]
    assert shown == [(u.key, out_b[u.output_a].system) for u in units_b], "the same seed draws the same sides"
    swapped = [key for key, first in shown if first != key.split("|")[1]]
    assert 0 < len(swapped) < len(shown), "some pairs are shown in reverse order"

    pushed = push_campaign(workspace, connection, "arena")
    assert pushed.created == 6
    tasks = unit_tasks(workspace, "arena")
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    winners = {"s1|s2": "s2", "s1|s3": "s3", "s2|s3": "tie"}
    for key, (task_id, left, _right) in tasks.items():
        if not key.startswith("i1|"):
            continue
        winner = winners[key.removeprefix("i1|")]
        side = "tie" if winner == "tie" else "A" if winner == left else "B"
        for client in (rev1, rev2):
            client.annotations.create(id=task_id, result=[choice("preference", "output_a", side)])
    rev1.annotations.create(id=tasks["i2|s1|s2"][0], result=[choice("preference", "output_a", "C")])
    pulled = pull_campaign(workspace, connection, "arena")
    assert pulled.recorded == 6
    assert "unknown option(s) 'C'" in pulled.refused[0]["reason"]

    judges = tmp_path / "pairs.jsonl"
    verdicts = [("s1", "s2", "s2"), ("s1", "s3", "s1"), ("s2", "s3", "tie")]
    judges.write_text(
        "".join(json.dumps({"judge": "j1", "item": "i1", "a": a, "b": b, "winner": w}) + "\n" for a, b, w in verdicts)
    )
    result = CliRunner().invoke(
        app, ["-w", str(workspace.root), "campaign", "report", "arena", "--judges", str(judges), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["agreement"]["preference"]["value"] == 1.0
    rates = {row["system"]: (row["wins"], row["losses"], row["ties"], row["win_rate"]) for row in report["systems"]}
    assert rates == {"s1": (0, 4, 0, 0.0), "s2": (2, 0, 2, 0.75), "s3": (2, 0, 2, 0.75)}
    accuracy = report["judges"]["j1"]["accuracy"]
    assert accuracy["with_ties"] == pytest.approx(2 / 3) and accuracy["without_ties"] == pytest.approx(1 / 2)
    assert report["coverage"]["units_at_target"] == 3 and report["coverage"]["ratings_per_unit"] == {"0": 3, "2": 3}


def test_cli_campaign_round(workspace: Workspace, ls_env: LsServer, tmp_path: Path) -> None:
    people(workspace)
    outputs = write_outputs(tmp_path / "outputs", ["s1", "s2", "s3"], ["i1"])
    runner = CliRunner()
    ws = ["-w", str(workspace.root)]
    created = runner.invoke(app, [*ws, "campaign", "create", "cli", "--outputs", str(outputs), "--json"])
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["criteria"] == list(PRESETS["storybench"][0])
    again = runner.invoke(app, [*ws, "campaign", "create", "cli", "--outputs", str(outputs)])
    assert again.exit_code == 2 and "exists already" in again.output
    pushed = runner.invoke(app, [*ws, "campaign", "push", "cli", "--json"])
    assert pushed.exit_code == 0 and json.loads(pushed.stdout)["created"] == 3
    tasks = unit_tasks(workspace, "cli")
    rev1 = ls_env.client(ls_env.users[1]["token"])
    full = [rating(c, 7, "output") for c in PRESETS["storybench"][0]]
    rev1.annotations.create(id=tasks["i1|s1"][0], result=full)
    rev1.annotations.create(id=tasks["i1|s2"][0], result=full[:3])
    pulled = runner.invoke(app, [*ws, "campaign", "pull", "cli", "--strict"])
    assert pulled.exit_code == 1
    assert "1 recorded" in pulled.stdout and "'ground_truth_consistency' is required but missing" in pulled.output
    shown = runner.invoke(app, [*ws, "campaign", "report", "cli"])
    assert shown.exit_code == 0, shown.output
    assert "1 evaluation(s) of 3 unit(s)" in shown.stdout and "no unit has two ratings" not in shown.stdout
    assert "s1" in shown.stdout and "7.00" in shown.stdout
