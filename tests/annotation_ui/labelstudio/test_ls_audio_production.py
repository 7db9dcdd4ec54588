"""Audio production through a real Label Studio server (issue 45, TRIAD B.2/B.4): the spot check (the sampled clip
pushed beside its sister, an independent listener's verdict stored as the CLI stores it, a listener who spoke in
the clip or wrote its item refused with the rule) and the producer's choice of a take (only the clip's producer)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.audio_spot_check import KEY, SpotCheckProject, pull_spot_check
from annotation_ui.labelstudio.audio_takes import KEY as TAKES_KEY
from annotation_ui.labelstudio.audio_takes import pull_takes
from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.tables import LsTask
from curation.audio_production.gates import audio_findings
from curation.audio_production.records import import_takes, takes_of
from curation.audio_production.spot_check import spot_check_sample
from curation.audio_production.tables import SpotCheck
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, choice, seed
from tests.annotation_ui.labelstudio.server import LsServer
from tests.media_factory import make_tone

SPEAKERS = {"g1-a": "rev1", "g1-b": "rev2"}
PRODUCERS = {"prod": "prod@omnicurate.test", "prod2": "prod2@omnicurate.test"}


def voiced_seed(ws: Workspace, folder: Path) -> None:
    """g1-a voiced by rev1, g1-b by rev2 (both also reviewers), produced by prod; ann1 wrote both."""
    for name, email in (("rev1", EMAILS["rev1"]), ("rev2", EMAILS["rev2"])):
        ws.add_person(name, ["reviewer", "speaker"], email=email)
    ws.add_person("prod", ["producer"], email=PRODUCERS["prod"])
    ws.add_person("prod2", ["producer"], email=PRODUCERS["prod2"])
    audio = {"source": "voice_acting", "license": "CC-BY-4.0", "producer": "prod", "session": "s1"}
    seed(
        ws,
        folder,
        {i: {"provenance": {"image": {"source": "photo", "license": "CC0-1.0"}, "audio": {**audio, "speakers": [s]}}}
         for i, s in SPEAKERS.items()},
    )  # fmt: skip


def test_a_listener_checks_the_sampled_clip_in_label_studio_and_its_speaker_is_refused(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    voiced_seed(workspace, tmp_path / "src")
    (sampled,) = spot_check_sample(workspace)
    sister = next(i for i in SPEAKERS if i != sampled)
    pushed = CliRunner().invoke(app, ["-w", str(workspace.root), "audio", "spot-push", "--json"])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["key"] == KEY and json.loads(pushed.stdout)["created"] == 1
    with workspace.session() as s:
        (task,) = s.execute(select(LsTask).where(LsTask.project_key == KEY)).scalars()
    assert task.subject == f"item:{sampled}" and task.inputs_hash == workspace.item(sampled).audio
    shown = ls_env.client().tasks.get(id=task.task_id).data["clip"]
    assert shown.count("<audio") == 2 and sister in shown  # the clip beside the other actor's

    speaker, listener, author = (ls_env.annotator(EMAILS[n]) for n in (SPEAKERS[sampled], "rev3", "ann1"))
    speaker.annotations.create(id=task.task_id, result=[choice("verdict", "clip", "consistent")])
    author.annotations.create(id=task.task_id, result=[choice("verdict", "clip", "consistent")])
    listener.annotations.create(id=task.task_id, result=[choice("verdict", "clip", "inconsistent")])
    report = pull_spot_check(workspace, connection)
    assert report.recorded == 1
    reasons = sorted(r["reason"] for r in report.refused)
    assert reasons[0] == f"'ann1' authored {sampled!r}: nobody reviews their own item"
    assert reasons[1].startswith(f"separation:recording: {SPEAKERS[sampled]!r} spoke in or produced the audio")
    with workspace.session() as s:
        checks = [(c.item_id, c.listener, c.verdict, c.sha256) for c in s.execute(select(SpotCheck)).scalars()]
    assert checks == [(sampled, "rev3", "inconsistent", workspace.item(sampled).audio)]
    assert audio_findings(workspace)["spot_check"][sampled] == (["spot_check:inconsistent"], {"listeners": ["rev3"]})

    again = CliRunner().invoke(app, ["-w", str(workspace.root), "audio", "spot-pull", "--json"])
    assert again.exit_code == 0, again.output
    assert (json.loads(again.stdout)["recorded"], json.loads(again.stdout)["unchanged"]) == (0, 1)
    assert SpotCheckProject(workspace).controls()["verdict"].choices == ("consistent", "inconsistent")


def test_the_clips_producer_chooses_a_take_in_label_studio_and_another_producer_is_refused(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    voiced_seed(workspace, tmp_path / "src")
    folder = tmp_path / "takes"
    lines = [
        {"item": "g1-a", "take": f"t{n}", "audio": make_tone(folder / f"t{n}.wav", 200.0 * n).name} for n in (1, 2, 3)
    ]
    (folder / "takes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_takes(workspace, folder / "takes.jsonl")
    pushed = CliRunner().invoke(app, ["-w", str(workspace.root), "audio", "takes-push", "--json"])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["created"] == 1  # g1-b has no take: nothing to choose
    with workspace.session() as s:
        (task,) = s.execute(select(LsTask).where(LsTask.project_key == TAKES_KEY)).scalars()
    data = ls_env.client().tasks.get(id=task.task_id).data
    assert [o["value"] for o in data["options"]] == ["t1", "t2", "t3"] and data["takes"].count("<audio") == 3

    other, producer = (ls_env.annotator(PRODUCERS[n]) for n in ("prod2", "prod"))
    other.annotations.create(id=task.task_id, result=[choice("take", "takes", "t1")])
    producer.annotations.create(id=task.task_id, result=[choice("take", "takes", "t2")])
    pulled = CliRunner().invoke(app, ["-w", str(workspace.root), "audio", "takes-pull"])
    assert pulled.exit_code == 0, pulled.output
    assert "'prod2' cannot choose the take of 'g1-a': its producer is 'prod'" in pulled.output
    chosen = [(e.actor, e.after) for e in workspace.events("item:g1-a") if e.action == "take.chosen"]
    takes = {t.take: t.sha256 for t in takes_of(workspace, "g1-a")}
    assert chosen == [("prod", {"take": "t2", "sha256": takes["t2"]})]  # once, by the clip's producer
    findings = audio_findings(workspace)["takes"]["g1-a"]
    assert findings[1]["chosen"] == "t2" and "takes:not_chosen" not in findings[0]
    assert "takes:choice_not_item_audio" in findings[0] and takes["t2"] != workspace.item("g1-a").audio
    again = pull_takes(workspace, connection)
    assert (again.recorded, again.unchanged, len(again.refused)) == (0, 1, 1)
