"""The human baseline through a real Label Studio server: the open-ended project shows no options, the Standard
one refuses a rater who has not answered open-ended yet, and a rater the campaign did not assign is refused."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.baseline import BaselineProject, project_key, pull_baseline
from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.tables import LsTask
from curation.baseline.campaign import create_campaign
from curation.baseline.report import baseline_report
from curation.reference_tables import BaselineAnswer
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, ITEMS, choice, seed
from tests.annotation_ui.labelstudio.server import LsServer


def task_ids(ws: Workspace, name: str, form: str) -> dict[str, int]:
    with ws.session() as s:
        rows = s.execute(select(LsTask).where(LsTask.project_key == project_key(name, form))).scalars()
        return {r.subject.removeprefix("item:"): r.task_id for r in rows}


def text(answer: str) -> dict:
    return {"from_name": "answer", "to_name": "item", "type": "textarea", "value": {"text": [answer]}}


def test_raters_answer_open_ended_then_standard_in_label_studio(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "src")  # g1-a and g1-b, written by ann1; rev1-3 review nothing yet
    create_campaign(workspace, "hb", size=2, raters_per_item=2, seed=0, pool="all", raters=["rev1", "rev2"])
    pushed = CliRunner().invoke(app, ["-w", str(workspace.root), "baseline", "push", "hb"])
    assert pushed.exit_code == 0, pushed.output
    assert "2 task(s) created" in pushed.stdout
    open_ids, standard_ids = task_ids(workspace, "hb", "open"), task_ids(workspace, "hb", "standard")
    assert set(open_ids) == set(standard_ids) == set(ITEMS)
    shown = ls_env.client().tasks.get(id=open_ids["g1-a"]).data
    assert "options" not in shown and "grateful" not in shown["item"]
    assert BaselineProject(workspace, "hb", "standard").label_config().count("$options") == 1

    rev1, rev2, rev3 = (ls_env.annotator(EMAILS[n]) for n in ("rev1", "rev2", "rev3"))
    rev2.annotations.create(id=standard_ids["g1-a"], result=[choice("answer", "item", "A")])  # before open-ended
    for item, key in ITEMS.items():
        rev1.annotations.create(id=open_ids[item], result=[text(f"my reading of {item}")])
        rev1.annotations.create(id=standard_ids[item], result=[choice("answer", "item", key)])
    rev3.annotations.create(id=open_ids["g1-b"], result=[text("not assigned")])
    opened, standard = pull_baseline(workspace, connection, "hb")
    assert opened.recorded == 2 and [r["reason"] for r in opened.refused] == [
        "'rev3' is not a rater of 'g1-b' in baseline 'hb'"
    ]
    assert standard.recorded == 2
    assert [r["reason"] for r in standard.refused] == [
        "'rev2' has no open-ended answer to 'g1-a' yet: the open form comes first"
    ]
    with workspace.session() as s:
        sources = {a.source for a in s.execute(select(BaselineAnswer)).scalars()}
    assert sources == {"labelstudio"}
    again = pull_baseline(workspace, connection, "hb")
    assert (again[0].recorded, again[1].recorded) == (0, 0)
    report = baseline_report(workspace, "hb", 50, 0, 0.9)
    assert report["human"]["standard"]["acc_q"]["value"] == 1.0 and report["by_rater"] == {"rev1": {"standard": 1.0}}
