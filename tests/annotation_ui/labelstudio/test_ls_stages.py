"""Review stages through a real Label Studio server: push, annotate through the API, pull, check records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.connection import Connection, status
from annotation_ui.labelstudio.errors import LabelStudioAuthError, LabelStudioUnavailable, MediaMissing, ProjectDeleted
from annotation_ui.labelstudio.stages import pull_stages, push_stage
from annotation_ui.labelstudio.tables import LsAnnotation, LsProject
from curation.exposure import reveal
from curation.tables import Event, ReviewRecord
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS
from curation.workflow import derive_status
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, advance, attested, choice, note, rating, seed, tasks
from tests.annotation_ui.labelstudio.server import LsServer


def records(ws: Workspace, stage: str) -> dict[tuple[str, str], dict]:
    with ws.session() as s:
        rows = s.execute(select(ReviewRecord).where(ReviewRecord.stage == stage)).scalars()
        return {(r.subject, r.reviewer): {**r.payload, "_source": r.source} for r in rows}


def annotators(ls: LsServer):  # type: ignore[no-untyped-def]
    """rev1 and rev2 annotate with their own tokens."""
    return ls.client(ls.users[1]["token"]), ls.client(ls.users[2]["token"])


def test_status_reports_server_and_user(connection: Connection) -> None:
    info = status(connection)
    assert info["version"] == "1.23.2"
    assert info["user"]["email"] == "curator@omnicurate.test"


def test_status_wrong_token_and_server_down_are_clear(ls_env: LsServer, workspace: Workspace) -> None:
    settings = workspace.settings.labelstudio
    wrong = Connection.resolve(settings, {"LABEL_STUDIO_URL": ls_env.url, "LABEL_STUDIO_API_KEY": "not-a-token"})
    with pytest.raises(LabelStudioAuthError, match="refused the API token"):
        status(wrong)
    down = Connection.resolve(settings, {"LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": "x"})
    with pytest.raises(LabelStudioUnavailable, match="cannot reach Label Studio at http://127.0.0.1:9"):
        status(down)
    result = CliRunner().invoke(app, ["-w", str(workspace.root), "ls", "status"], env={"LABEL_STUDIO_API_KEY": "bad"})
    assert result.exit_code == 2
    assert "refused the API token" in result.output


def test_push_is_idempotent_and_answer_check_has_no_label(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    first = push_stage(workspace, connection, "grammar")
    assert (first.created, first.kept) == (2, 0)
    again = push_stage(workspace, connection, "grammar")
    assert (again.created, again.kept, again.deleted) == (0, 2, 0)
    assert len(list(ls_env.client().tasks.list(project=first.project_id))) == 2

    advance(workspace, tmp_path, "answer_check")
    report = push_stage(workspace, connection, "answer_check")
    assert report.created == 2
    for task in ls_env.client().tasks.list(project=report.project_id, fields="all"):
        data = task.data
        assert set(data) == {"context", "question", "image", "audio", "options", "omnicurate_ref"}
        without_options = json.dumps({k: v for k, v in data.items() if k != "options"})
        assert '"A"' not in without_options and '"B"' not in without_options, "no label anywhere in the task"
        assert [o["value"] for o in data["options"]] == ["A", "B", "C", "D"]
        media = data["audio"]
        assert media.startswith("/data/local-files/?d=omnicurate/")
        served = ls_env.client()._client_wrapper.httpx_client.httpx_client.get(
            f"{ls_env.url}{media}", headers={"Authorization": f"Token {ls_env.token}"}
        )
        assert served.status_code == 200 and served.content[:4] == b"RIFF"


def test_pull_records_reviews_once_and_an_edit_replaces(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push_stage(workspace, connection, "grammar")
    ids = tasks(workspace, "grammar")
    rev1, rev2 = annotators(ls_env)
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "context", "pass")])
    edited = rev2.annotations.create(
        id=ids[("item:g1-b", None)], result=[choice("verdict", "context", "fail"), note("typo in option C", "context")]
    )

    (report,) = pull_stages(workspace, connection, ["grammar"])
    assert (report.recorded, report.replaced, report.unchanged, report.refused) == (2, 0, 0, [])
    got = records(workspace, "grammar")
    assert got[("item:g1-a", "rev1")]["verdict"] == "pass"
    assert got[("item:g1-b", "rev2")] == {"verdict": "fail", "note": "typo in option C", "_source": "labelstudio"}
    states = {st.id: (st.state, st.stage) for st in derive_status(workspace)}
    assert states["g1-b"] == ("returned", "grammar")

    (twice,) = pull_stages(workspace, connection, ["grammar"])
    assert (twice.recorded, twice.replaced, twice.unchanged) == (0, 0, 2)
    assert len(records(workspace, "grammar")) == 2

    rev2.annotations.update(id=edited.id, result=[choice("verdict", "context", "pass")])
    (after_edit,) = pull_stages(workspace, connection, ["grammar"])
    assert (after_edit.recorded, after_edit.replaced, after_edit.unchanged) == (0, 1, 1)
    assert records(workspace, "grammar")[("item:g1-b", "rev2")]["verdict"] == "pass"
    with workspace.session() as s:
        replaced = s.execute(select(Event).where(Event.action == "review.replaced")).scalars().all()
    assert [(e.subject, e.before["verdict"], e.after["verdict"]) for e in replaced] == [("item:g1-b", "fail", "pass")]


def test_pull_refuses_tampered_annotations_and_records_the_rest(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "audio_signoff")
    push_stage(workspace, connection, "audio_signoff")
    ids = tasks(workspace, "audio_signoff")
    rev1, rev2 = annotators(ls_env)
    good = [rating("naturalness", 4), rating("clarity", 5), rating("artefacts", 3)]
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=good)
    out_of_range = [rating("naturalness", 7), rating("clarity", 5), rating("artefacts", 3)]
    rev2.annotations.create(id=ids[("item:g1-a", None)], result=out_of_range)
    unknown_field = [*good, rating("loudness", 3)]
    rev1.annotations.create(id=ids[("item:g1-b", None)], result=unknown_field)
    ls_env.annotator(EMAILS["ann1"]).annotations.create(id=ids[("item:g1-b", None)], result=good)
    ls_env.annotator("stranger@omnicurate.test").annotations.create(id=ids[("item:g1-b", None)], result=good)

    (report,) = pull_stages(workspace, connection, ["audio_signoff"])
    assert report.recorded == 1
    assert records(workspace, "audio_signoff") == {
        ("item:g1-a", "rev1"): {
            "scores": {"naturalness": 4, "clarity": 5, "artefacts": 3},
            "note": "",
            "_source": "labelstudio",
        }
    }
    reasons = sorted((r.subject, r.user, r.reason) for r in report.refused)
    assert len(reasons) == 4
    assert "rating 7 is out of range 1–5" in reasons[0][2] and reasons[0][1] == EMAILS["rev2"]
    by_user = {user: reason for _, user, reason in reasons[1:]}
    assert "authored 'g1-b'" in by_user[EMAILS["ann1"]]
    assert "unknown field 'loudness'" in by_user[EMAILS["rev1"]]
    assert "no person has the e-mail stranger@omnicurate.test" in by_user["stranger@omnicurate.test"]

    (again,) = pull_stages(workspace, connection, ["audio_signoff"])
    assert (again.recorded, again.unchanged, len(again.refused)) == (0, 1, 4)
    with workspace.session() as s:
        refused_events = s.execute(select(Event).where(Event.action == "review.refused")).scalars().all()
    assert len(refused_events) == 4, "a refusal is an event once, not once per pull"


def test_answer_check_unknown_option_is_refused(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "answer_check")
    push_stage(workspace, connection, "answer_check")
    ids = tasks(workspace, "answer_check")
    rev1, rev2 = annotators(ls_env)
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("answer", "question", "E")])
    rev2.annotations.create(id=ids[("item:g1-a", None)], result=[choice("answer", "question", "A", "B")])
    rev2.annotations.create(id=ids[("item:g1-b", None)], result=[choice("answer", "question", "B")])
    (report,) = pull_stages(workspace, connection, ["answer_check"])
    assert report.recorded == 1
    assert records(workspace, "answer_check")[("item:g1-b", "rev2")]["answer"] == "B"
    reasons = sorted(r.reason for r in report.refused)
    assert "2 options chosen where one is asked" in reasons[0]
    assert "unknown option(s) 'E'" in reasons[1]


def test_an_exposed_reviewers_blind_answer_is_refused_alone(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    """Label Studio serves one answer-check project to everyone, so it cannot hide an item from a person who saw
    its label: the pull refuses that person's annotation (named) and records the others."""
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "answer_check")
    push_stage(workspace, connection, "answer_check")
    reveal(workspace, "rev1", ["g1-a"], "page author g1")
    ids = tasks(workspace, "answer_check")
    rev1, rev2 = annotators(ls_env)
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("answer", "question", "A")])
    rev2.annotations.create(id=ids[("item:g1-b", None)], result=[choice("answer", "question", "B")])
    (report,) = pull_stages(workspace, connection, ["answer_check"])
    assert report.recorded == 1 and list(records(workspace, "answer_check")) == [("item:g1-b", "rev2")]
    (refused,) = report.refused
    assert refused.subject == "item:g1-a" and refused.reason.startswith("exposed:shown: 'rev1' has seen the label")
    assert report.reopened == 1, "the refused answer does not use up the task"


def test_skips_are_recorded_as_skips_never_as_votes(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push_stage(workspace, connection, "grammar")
    ids = tasks(workspace, "grammar")
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[], was_cancelled=True)
    (report,) = pull_stages(workspace, connection, ["grammar"])
    assert (report.skipped, report.recorded) == (1, 0)
    assert records(workspace, "grammar") == {}
    with workspace.session() as s:
        rows = s.execute(select(LsAnnotation)).scalars().all()
        skips = s.execute(select(Event).where(Event.action == "review.skipped")).scalars().all()
    assert [(r.subject, r.person, r.outcome) for r in rows] == [("item:g1-a", "rev1", "skipped")]
    assert len(skips) == 1
    assert {st.id: st.stage for st in derive_status(workspace)}["g1-a"] == "grammar"


def test_checklist_tasks_show_one_view_each_and_need_all_seven(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "subset_checklist")
    report = push_stage(workspace, connection, "subset_checklist")
    assert report.created == 2 * 7
    server_tasks = sorted(ls_env.client().tasks.list(project=report.project_id, fields="all"), key=lambda t: t.id)
    shown = [t.data["view_title"].split()[1] for t in server_tasks]
    assert shown[:6] == ["text", "text", "image", "image", "audio", "audio"], "single modalities come first"
    assert shown[-2:] == ["text+image+audio"] * 2
    text_only = server_tasks[0].data["panel"]
    assert PLACEHOLDERS["image"] in text_only and PLACEHOLDERS["audio"] in text_only
    assert "<img" not in text_only and "<audio" not in text_only
    full = server_tasks[-1].data["panel"]
    assert "<img" in full and "<audio" in full and "[no " not in full

    ids = tasks(workspace, "subset_checklist")
    rev1, rev2 = annotators(ls_env)
    for view in CHECKLIST_VIEWS:
        chosen = ["A"] if view == "text+image+audio" else ["A", "C"]
        result = [choice("consistent", "question", *chosen), *attested()]
        rev1.annotations.create(id=ids[("item:g1-a", view)], result=result)
    for view in CHECKLIST_VIEWS[:3]:
        result = [choice("consistent", "question", "A", "B"), *attested()]
        rev2.annotations.create(id=ids[("item:g1-a", view)], result=result)
    (pulled,) = pull_stages(workspace, connection, ["subset_checklist"])
    assert (pulled.recorded, pulled.incomplete) == (1, 3)
    consistent = records(workspace, "subset_checklist")[("item:g1-a", "rev1")]["consistent"]
    assert consistent["text+image+audio"] == ["A"] and consistent["text"] == ["A", "C"]
    assert set(consistent) == set(CHECKLIST_VIEWS)


def test_tasks_of_items_that_left_the_stage_are_deleted_or_retired(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push_stage(workspace, connection, "grammar")
    ids = tasks(workspace, "grammar")
    for annotator in annotators(ls_env):  # grammar needs two sign-offs (TRIAD §4.2)
        annotator.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "context", "pass")])
    pull_stages(workspace, connection, ["grammar"])
    seed(workspace, tmp_path / "revised", revise={"g1-b": {"question": "How does she feel about it?"}})

    report = push_stage(workspace, connection, "grammar")
    assert (report.created, report.deleted, report.retired) == (1, 1, 1)
    assert set(tasks(workspace, "grammar")) == {("item:g1-b", None)}
    assert tasks(workspace, "grammar", "retired") == {("item:g1-a", None): ids[("item:g1-a", None)]}
    remaining = {t.id for t in ls_env.client().tasks.list(project=report.project_id)}
    assert ids[("item:g1-b", None)] not in remaining and ids[("item:g1-a", None)] in remaining


def test_stale_annotation_of_a_revised_item_is_refused(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push_stage(workspace, connection, "grammar")
    ids = tasks(workspace, "grammar")
    seed(workspace, tmp_path / "revised", revise={"g1-a": {"question": "How does she feel about it?"}})
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "context", "pass")])
    (report,) = pull_stages(workspace, connection, ["grammar"])
    assert report.recorded == 0
    assert [r.reason.split(":")[0] for r in report.refused] == ["stale"]


def test_deleted_project_is_reported_and_nothing_is_imported(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    grammar = push_stage(workspace, connection, "grammar")
    advance(workspace, tmp_path, "audio_signoff")
    push_stage(workspace, connection, "audio_signoff")
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(
        id=tasks(workspace, "audio_signoff")[("item:g1-a", None)],
        result=[rating("naturalness", 4), rating("clarity", 4), rating("artefacts", 4)],
    )
    ls_env.client().projects.delete(id=grammar.project_id)

    with pytest.raises(ProjectDeleted, match=f"project {grammar.project_id} \\(stage:grammar\\) was deleted"):
        pull_stages(workspace, connection, ["audio_signoff", "grammar"])
    assert records(workspace, "audio_signoff") == {}, "the other stage's annotations were not half-imported"
    with pytest.raises(ProjectDeleted, match="--recreate"):
        push_stage(workspace, connection, "grammar")
    # the items are past grammar now: a recreated project has nothing to show
    recreated = push_stage(workspace, connection, "grammar", recreate=True)
    assert recreated.project_id != grammar.project_id and recreated.created == 0


def test_missing_media_stops_the_push_before_the_server_is_touched(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "audio_signoff")
    for blob in workspace.media.root.glob("*/*.wav"):
        blob.unlink()
    with pytest.raises(MediaMissing, match="item:g1-a: .*wav.*nothing was pushed"):
        push_stage(workspace, connection, "audio_signoff")
    with workspace.session() as s:
        assert s.execute(select(LsProject)).scalars().all() == []


def test_cli_push_and_pull_json(workspace: Workspace, ls_env: LsServer, tmp_path: Path) -> None:
    seed(workspace, tmp_path / "in")
    runner = CliRunner()
    pushed = runner.invoke(app, ["-w", str(workspace.root), "ls", "push", "grammar", "--json"])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["created"] == 2
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(
        id=tasks(workspace, "grammar")[("item:g1-a", None)], result=[choice("verdict", "context", "ok")]
    )
    pulled = runner.invoke(app, ["-w", str(workspace.root), "ls", "pull", "--json", "--strict"])
    assert pulled.exit_code == 1
    (doc,) = json.loads(pulled.stdout)
    assert doc["stage"] == "grammar" and doc["recorded"] == 0
    assert "unknown option(s) 'ok'" in doc["refused"][0]["reason"]


def test_group_integration_reviews_groups_and_refuses_an_author(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "group_integration")
    report = push_stage(workspace, connection, "group_integration")
    assert report.created == 1
    (task,) = ls_env.client().tasks.list(project=report.project_id, fields="all")
    assert "g1-a" in task.data["panel"] and "g1-b" in task.data["panel"] and "answer B" in task.data["panel"]
    task_id = tasks(workspace, "group_integration")[("group:g1", None)]
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(id=task_id, result=[choice("verdict", "group", "pass")])
    ls_env.annotator(EMAILS["ann1"]).annotations.create(id=task_id, result=[choice("verdict", "group", "pass")])
    (pulled,) = pull_stages(workspace, connection, ["group_integration"])
    assert pulled.recorded == 1
    assert "authored an item of group 'g1'" in pulled.refused[0].reason
    assert records(workspace, "group_integration")[("group:g1", "rev1")]["verdict"] == "pass"
    assert {st.state for st in derive_status(workspace)} == {"admitted"}


def test_pull_with_the_server_down_changes_nothing(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push_stage(workspace, connection, "grammar")
    rev1, _ = annotators(ls_env)
    rev1.annotations.create(
        id=tasks(workspace, "grammar")[("item:g1-a", None)], result=[choice("verdict", "context", "pass")]
    )
    down = Connection.resolve(
        workspace.settings.labelstudio, {"LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": ls_env.token}
    )
    with pytest.raises(ProjectDeleted, match="lives on http://127.0.0.1:\\d+, but the bridge is connected to"):
        pull_stages(workspace, down, ["grammar"])
    with workspace.writing() as s:  # as if the server the project lives on had gone down
        s.get(LsProject, "stage:grammar").server_url = "http://127.0.0.1:9"
    with pytest.raises(LabelStudioUnavailable, match="is the server running"):
        pull_stages(workspace, down, ["grammar"])
    assert records(workspace, "grammar") == {}
