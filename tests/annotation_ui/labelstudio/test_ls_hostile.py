"""Issue 14: annotators' hostile or careless requests through Label Studio's own REST API, one test per case.

Each test acts as annotators do (their own tokens, the endpoints the web app uses) and asserts what
`curate status`, `curate history` and the pull report show afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from annotation_ui.labelstudio import stages
from curation.config import CONFIG_NAME
from curation.exposure import exposed_people
from curation.reviews import import_reviews
from curation.vocab import CHECKLIST_VIEWS
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, advance, attested, choice, rating, seed, tasks
from tests.annotation_ui.labelstudio.server import LsServer

REV1, REV2 = EMAILS["rev1"], EMAILS["rev2"]


def curate(ws: Workspace, *args: str, code: int = 0) -> Any:
    """Run `curate -w WS ARGS`; JSON output parsed when --json is given."""
    result = CliRunner().invoke(app, ["-w", str(ws.root), *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


def status(ws: Workspace) -> dict[str, tuple[str, str | None, list[str]]]:
    return {r["id"]: (r["state"], r["stage"], r["reasons"]) for r in curate(ws, "status", "--json")}


def history(ws: Workspace, item: str) -> list[dict[str, Any]]:
    return curate(ws, "history", item, "--json")


def pull(ws: Workspace, stage: str, *flags: str, code: int = 0) -> dict[str, Any]:
    (report,) = curate(ws, "ls", "pull", stage, "--json", *flags, code=code)
    return report


def push(ws: Workspace, stage: str, code: int = 0) -> dict[str, Any]:
    return curate(ws, "ls", "push", stage, "--json", code=code)


def answer(ws: Workspace, folder: Path, item: str, value: str) -> None:
    path = folder / f"answer-{item}.jsonl"
    path.write_text(json.dumps({"item": item, "stage": "answer_check", "reviewer": "rev3", "answer": value}) + "\n")
    import_reviews(ws, path)


def set_quorum(ws: Workspace, stage: str, value: int) -> None:
    """Set a stage quorum in curate.toml, as a maintainer does, for this workspace and the CLI alike."""
    setattr(ws.settings.review, f"{stage}_quorum", value)
    ws.settings.save(ws.root / CONFIG_NAME)


def served(ls: LsServer, email: str, project: int) -> dict[str, Any] | None:
    """The task Label Studio's queue (`/next`) gives this annotator, or None."""
    with ls.http(email) as web:
        got = web.get(f"/api/projects/{project}/next")
    return got.json() if got.status_code == 200 else None


# 1 -------------------------------------------------------------------------------------------------------
def test_1_group_project_shows_no_label_until_the_group_is_open_and_records_exposure(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "answer_check")
    answer(workspace, tmp_path, "g1-a", "A")
    assert status(workspace)["g1-b"][:2] == ("in_review", "answer_check")
    first = push(workspace, "group_integration")
    assert (first["created"], first["exposures"]) == (0, 0)
    with ls_env.http(REV1) as web:  # every user can read every project: this one may not name a label yet
        listed = web.get("/api/tasks/", params={"project": first["project"], "fields": "all"})
    assert listed.status_code == 200 and listed.json()["tasks"] == []
    assert not [e for e in history(workspace, "g1-a") if e["action"] == "label.exposed"]

    answer(workspace, tmp_path, "g1-b", "B")
    opened = push(workspace, "group_integration")
    assert opened["created"] == 1 and opened["exposures"] >= 4, "both sisters, for rev1 and rev2 at least"
    with ls_env.http(REV1) as web:
        (task,) = web.get("/api/tasks/", params={"project": first["project"], "fields": "all"}).json()["tasks"]
    assert "answer A" in task["data"]["panel"] and "answer B" in task["data"]["panel"]
    for item in ("g1-a", "g1-b"):
        exposed = {
            (e["after"]["person"], e["subject"]) for e in history(workspace, item) if e["action"] == "label.exposed"
        }
        assert {("rev1", f"item:{item}"), ("rev2", f"item:{item}")} <= exposed
    with workspace.session() as s:
        assert {"ann1", "rev1", "rev2"} <= exposed_people(s, "g1-b")
    assert push(workspace, "group_integration")["exposures"] == 0, "an exposure is recorded once"


# 2 -------------------------------------------------------------------------------------------------------
def test_2_an_annotation_submitted_in_someone_elses_name_is_refused(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    project = push(workspace, "grammar")["project"]
    task = tasks(workspace, "grammar")[("item:g1-a", None)]
    with ls_env.http(REV1) as web:
        forged = web.post(
            f"/api/tasks/{task}/annotations/",
            json={"result": [choice("verdict", "context", "pass")], "completed_by": ls_env.user_id(REV2)},
        )
    assert forged.status_code == 201
    report = pull(workspace, "grammar")
    assert report["recorded"] == 0
    (refusal,) = report["refused"]
    assert f"submitted by {REV1} in the name of {REV2}" in refusal["reason"]
    assert status(workspace)["g1-a"][:2] == ("in_review", "grammar")
    actions = [e["action"] for e in history(workspace, "g1-a")]
    assert "review.refused" in actions and "review.recorded" not in actions
    overlap = ls_env.client().tasks.get(str(task)).overlap
    assert overlap == workspace.settings.review.grammar_quorum + 1, "the forged share is given back"
    assert project


# 3 -------------------------------------------------------------------------------------------------------
def test_3_task_data_changed_on_the_server_is_refused_and_restored(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "subset_checklist")
    push(workspace, "subset_checklist")
    ids = tasks(workspace, "subset_checklist")
    curator = ls_env.client()
    text_task, full_task = ids[("item:g1-a", "text")], ids[("item:g1-a", "text+image+audio")]
    original = curator.tasks.get(str(text_task)).data
    full = curator.tasks.get(str(full_task)).data
    with ls_env.http(REV1) as web:
        changed = web.patch(
            f"/api/tasks/{text_task}/", json={"data": {**full, "omnicurate_ref": original["omnicurate_ref"]}}
        )
    assert changed.status_code == 200
    rev1 = ls_env.annotator(REV1)
    for view in CHECKLIST_VIEWS:
        rev1.annotations.create(
            id=ids[("item:g1-a", view)], result=[choice("consistent", "question", "A", "B"), *attested()]
        )

    report = pull(workspace, "subset_checklist")
    assert (report["recorded"], report["incomplete"]) == (0, 6)
    assert ["changed on the server" in r["reason"] for r in report["refused"]] == [True]
    assert status(workspace)["g1-a"][:2] == ("in_review", "subset_checklist")

    pushed = push(workspace, "subset_checklist")
    assert (pushed["restored"], pushed["created"]) == (1, 0)
    assert curator.tasks.get(str(text_task)).data == original
    assert "labelstudio.task_restored" in [e["action"] for e in history(workspace, "g1-a")]
    again = pull(workspace, "subset_checklist")
    assert (again["recorded"], len(again["refused"])) == (0, 1), "made on the changed data: still refused"

    rev1.annotations.create(id=text_task, result=[choice("consistent", "question", "A", "C"), *attested()])
    redone = pull(workspace, "subset_checklist")
    assert (redone["recorded"], redone["superseded"]) == (1, 0)
    recorded = [e for e in history(workspace, "g1-a") if e["action"] == "review.recorded" and e["actor"] == "rev1"]
    assert recorded[-1]["after"]["consistent"]["text"] == ["A", "C"]


# 4 -------------------------------------------------------------------------------------------------------
def test_4_a_result_pointing_at_no_object_of_the_config_is_refused(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    push(workspace, "grammar")
    ids = tasks(workspace, "grammar")
    ls_env.annotator(REV1).annotations.create(
        id=ids[("item:g1-a", None)], result=[choice("verdict", "nowhere", "fail")]
    )
    report = pull(workspace, "grammar")
    assert report["recorded"] == 0
    assert "points at 'nowhere'" in report["refused"][0]["reason"]
    assert status(workspace)["g1-a"] == ("in_review", "grammar", [])


# 5 -------------------------------------------------------------------------------------------------------
def test_5_config_is_sent_only_when_changed_and_a_misfit_is_named(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "audio_signoff")
    push(workspace, "audio_signoff")
    task = tasks(workspace, "audio_signoff")[("item:g1-a", None)]
    misfit = ls_env.annotator(REV1).annotations.create(id=task, result=[rating("loudness", 3)])
    again = push(workspace, "audio_signoff")
    assert again["config_sent"] is False and again["kept"] == 2

    original = stages.label_config
    changed = original("audio_signoff").replace("Listen to the clip", "Listen to the whole clip")
    monkeypatch.setattr(
        stages, "label_config", lambda stage, *rest: changed if stage == "audio_signoff" else original(stage, *rest)
    )
    refused = curate(workspace, "ls", "push", "audio_signoff", code=2)
    assert f"annotation {misfit.id} (task {task}, by {REV1}): from_name=loudness, to_name=audio, type=rating" in refused
    assert "Pull first" in refused and "delete or correct those annotations" in refused
    assert "unknown field 'loudness'" in pull(workspace, "audio_signoff")["refused"][0]["reason"]


# 6 -------------------------------------------------------------------------------------------------------
def test_6_a_refused_annotation_does_not_starve_its_task(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    project = push(workspace, "grammar")["project"]
    ids = tasks(workspace, "grammar")
    g1a = ids[("item:g1-a", None)]
    quorum = workspace.settings.review.grammar_quorum
    ls_env.annotator(EMAILS["ann1"]).annotations.create(id=g1a, result=[choice("verdict", "context", "pass")])
    for email in [REV1, EMAILS["rev3"]][: quorum - 1]:
        ls_env.annotator(email).annotations.create(id=g1a, result=[choice("verdict", "context", "pass")])
    report = pull(workspace, "grammar")
    assert "authored 'g1-a'" in report["refused"][0]["reason"] and report["reopened"] == 1
    rev2 = ls_env.annotator(REV2)
    offered = []
    while (task := served(ls_env, REV2, project)) is not None:
        offered.append(task["id"])
        rev2.annotations.create(id=task["id"], result=[choice("verdict", "context", "pass")])
    assert g1a in offered, "the author's annotation did not use up the task's share"
    pull(workspace, "grammar")
    assert status(workspace)["g1-a"][:2] == ("in_review", "audio_signoff")


# 7 -------------------------------------------------------------------------------------------------------
def test_7_checklist_views_reach_every_annotator_in_order(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "subset_checklist")
    project = push(workspace, "subset_checklist")["project"]
    ids = tasks(workspace, "subset_checklist")
    rev1 = ls_env.annotator(REV1)
    for view in reversed(CHECKLIST_VIEWS):  # g1-b partly annotated, full view first: Label Studio used to favour these
        rev1.annotations.create(
            id=ids[("item:g1-b", view)], result=[choice("consistent", "question", "B"), *attested()]
        )
    by_task = {task: key for key, task in ids.items()}
    order: dict[str, list[str | None]] = {"item:g1-a": [], "item:g1-b": []}
    rev2 = ls_env.annotator(REV2)
    while (task := served(ls_env, REV2, project)) is not None:
        subject, view = by_task[task["id"]]
        order[subject].append(view)
        rev2.annotations.create(id=task["id"], result=[choice("consistent", "question", "A", "B"), *attested()])
    intended = sorted(CHECKLIST_VIEWS, key=lambda v: (v.count("+"), CHECKLIST_VIEWS.index(v)))
    assert order == {"item:g1-a": intended, "item:g1-b": intended}
    assert pull(workspace, "subset_checklist")["recorded"] == 3


# 8 -------------------------------------------------------------------------------------------------------
def test_8_deleted_and_invalidated_annotations_withdraw_their_votes(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    set_quorum(workspace, "grammar", 1)
    push(workspace, "grammar")
    ids = tasks(workspace, "grammar")
    rev1, rev2 = ls_env.annotator(REV1), ls_env.annotator(REV2)
    first = rev1.annotations.create(id=ids[("item:g1-a", None)], result=[choice("verdict", "context", "pass")])
    second = rev2.annotations.create(id=ids[("item:g1-b", None)], result=[choice("verdict", "context", "pass")])
    assert pull(workspace, "grammar")["recorded"] == 2
    assert {item: st[:2] for item, st in status(workspace).items()} == {
        "g1-a": ("in_review", "audio_signoff"),
        "g1-b": ("in_review", "audio_signoff"),
    }

    rev1.annotations.delete(id=first.id)
    report = pull(workspace, "grammar")
    assert (report["withdrawn"], report["deleted"]) == (1, 1)
    assert status(workspace)["g1-a"][:2] == ("in_review", "grammar")
    withdrawn = [e for e in history(workspace, "g1-a") if e["action"] == "review.withdrawn"]
    assert [(e["actor"], e["before"]["verdict"]) for e in withdrawn] == [("rev1", "pass")]
    assert "deleted in Label Studio" in withdrawn[0]["after"]["reason"]

    rev2.annotations.update(id=second.id, result=[choice("verdict", "context", "maybe")])
    edited = pull(workspace, "grammar")
    assert edited["withdrawn"] == 1 and "unknown option(s) 'maybe'" in edited["refused"][0]["reason"]
    (withdrawn_b,) = [e for e in history(workspace, "g1-b") if e["action"] == "review.withdrawn"]
    assert withdrawn_b["actor"] == "rev2" and "edited and refused" in withdrawn_b["after"]["reason"]
    assert status(workspace)["g1-b"][:2] == ("in_review", "grammar")
    assert pull(workspace, "grammar")["withdrawn"] == 0, "withdrawn once"


# 10 ------------------------------------------------------------------------------------------------------
def test_10_a_revised_items_tasks_are_closed_and_reported_retired_once(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    project = push(workspace, "grammar")["project"]
    old = tasks(workspace, "grammar")[("item:g1-a", None)]
    ls_env.annotator(REV1).annotations.create(id=old, result=[choice("verdict", "context", "pass")])
    assert pull(workspace, "grammar")["recorded"] == 1
    seed(workspace, tmp_path / "revised", revise={"g1-a": {"question": "How does she feel about it?"}})
    pushed = push(workspace, "grammar")
    assert (pushed["retired"], pushed["created"]) == (1, 1)
    closed = ls_env.client().tasks.get(str(old))
    assert (closed.overlap, closed.is_labeled) == (0, True)

    first = pull(workspace, "grammar", "--strict")
    assert (first["retired"], first["refused"]) == (1, [])
    second = pull(workspace, "grammar", "--strict")
    assert (second["retired"], second["refused"]) == (0, [])
    offered = []
    while (task := served(ls_env, REV2, project)) is not None:
        offered.append(task["id"])
        ls_env.annotator(REV2).annotations.create(id=task["id"], result=[], was_cancelled=True)
    assert old not in offered and len(offered) == 2
    assert status(workspace)["g1-a"][:2] == ("in_review", "grammar")


# 11 ------------------------------------------------------------------------------------------------------
def test_11_push_publishes_media_missing_from_the_document_root(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, "answer_check")
    project = push(workspace, "answer_check")["project"]
    shown = [t.data for t in ls_env.client().tasks.list(project=project, fields="all")]
    urls = {data[kind] for data in shown for kind in ("image", "audio")}
    files = {ls_env.document_root / url.split("?d=", 1)[1] for url in urls}
    for path in files:
        path.unlink()
    again = push(workspace, "answer_check")
    assert (again["media_published"], again["kept"]) == (len(files), 2)
    assert all(path.is_file() for path in files)
    with ls_env.http(REV1) as web:
        assert all(web.get(url).status_code == 200 for url in urls)


# minor ---------------------------------------------------------------------------------------------------
def test_minor_localhost_is_the_same_server_and_status_checks_the_document_root(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(workspace, tmp_path / "in")
    push(workspace, "grammar")
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_env.url.replace("127.0.0.1", "localhost") + "/")
    assert pull(workspace, "grammar")["annotations"] == 0
    assert push(workspace, "grammar")["kept"] == 2
    assert "media are published to" in curate(workspace, "ls", "status")
    monkeypatch.setenv("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT", str(tmp_path / "nowhere"))
    broken = curate(workspace, "ls", "status", code=2)
    assert "is not a folder on this machine" in broken


# 4, 8 and 9 in a campaign, and refusals that name the unit ---------------------------------------------
def test_campaign_ratings_are_never_replaced_by_skips_or_misfits_and_deletions_withdraw(
    workspace: Workspace, ls_env: LsServer, tmp_path: Path
) -> None:
    from tests.annotation_ui.labelstudio.test_ls_campaigns import people, unit_tasks, write_outputs

    people(workspace)
    outputs = write_outputs(tmp_path / "outputs", ["s1", "s2"], ["i1"])
    curate(
        workspace, "campaign", "create", "study", "--outputs", str(outputs), "--criterion", "quality", "--scale", "5"
    )
    curate(workspace, "campaign", "push", "study", "--json")
    units = unit_tasks(workspace, "study")
    rev1, rev2 = ls_env.annotator(REV1), ls_env.annotator(REV2)
    rated = rev1.annotations.create(id=units["i1|s1"][0], result=[rating("quality", 4, "output")])
    rev1.annotations.create(id=units["i1|s1"][0], result=[], was_cancelled=True)  # 9: a later skip
    other = rev2.annotations.create(id=units["i1|s2"][0], result=[rating("quality", 2, "output")])
    first = curate(workspace, "campaign", "pull", "study", "--json")
    assert (first["recorded"], first["skipped"], first["refused"]) == (2, 1, [])
    report = curate(workspace, "campaign", "report", "study", "--json")
    assert report["coverage"]["evaluations"] == 2, "the skip did not replace the rating"

    rev1.annotations.update(id=rated.id, result=[rating("quality", 5, "nowhere")])  # 4 and 8: edited to a misfit
    edited = curate(workspace, "campaign", "pull", "study", "--json")
    assert edited["withdrawn"] == 1 and "points at 'nowhere'" in edited["refused"][0]["reason"]
    assert edited["refused"][0]["unit"] == "i1|s1"
    printed = curate(workspace, "campaign", "pull", "study")
    assert f"(task {units['i1|s1'][0]}, unit i1|s1, {REV1})" in printed

    rev2.annotations.delete(id=other.id)  # 8: deleted
    deleted = curate(workspace, "campaign", "pull", "study", "--json")
    assert (deleted["withdrawn"], deleted["recorded"]) == (1, 0)
    coverage = curate(workspace, "campaign", "report", "study", "--json")["coverage"]
    assert (coverage["evaluations"], coverage["skips"]) == (0, 0), "a refused rating is not turned into its skip"
    withdrawn = [e for e in workspace.events("campaign:study") if e.action == "campaign.rating_withdrawn"]
    assert sorted(e.actor for e in withdrawn) == ["rev1", "rev2"]
