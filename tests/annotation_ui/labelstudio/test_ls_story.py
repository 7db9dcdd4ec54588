"""The story kind's filter and revise stages through a real Label Studio server: push, annotate through the
API as the reviewers, pull; drops need reasons, edits become revisions with their provenance, and nothing
the server sends back is trusted."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select

from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.stages import pull_stages, push_stage
from curation.kinds.story.stages import control_name
from curation.screening.items import story_item
from curation.screening.revise import CHOICES, diff_against_proposal, revisable_fields
from curation.tables import Event, ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from tests.annotation_ui.labelstudio.lsfixtures import choice, tasks
from tests.annotation_ui.labelstudio.server import LsServer


def text(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "current_text", "type": "textarea", "value": {"text": [value]}}


def prefilled(ls: LsServer, task: int) -> list[dict[str, Any]]:
    """What a reviewer submits untouched: the form's starting values (the task's prediction), as they are."""
    [prediction] = ls.client().predictions.list(task=task)
    return [{k: r[k] for k in ("from_name", "to_name", "type", "value")} for r in prediction.result]


def states(ws: Workspace) -> dict[str, tuple[str, str | None]]:
    return {s.id: (s.state, s.stage) for s in derive_status(ws)}


def test_story_filter_and_revise_round_trip(
    story_workspace: Workspace, connection: Connection, ls_env: LsServer
) -> None:
    ws = story_workspace
    a, b, c = sorted(states(ws))
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])

    pushed = push_stage(ws, connection, "filter")
    assert pushed.created == 3  # (media are shared by the session's server: published once)
    ids = tasks(ws, "filter")
    task = ls_env.client().tasks.get(id=ids[(f"item:{a}", None)])
    transition = story_item(ws, a)
    assert task.data["current_text"] == transition.current.text and task.data["next_text"] == transition.next.text
    for side in ("current_image", "next_image"):
        served = ls_env.client()._client_wrapper.httpx_client.httpx_client.get(
            f"{ls_env.url}{task.data[side]}", headers={"Authorization": f"Token {ls_env.token}"}
        )
        sha = getattr(transition, side.removesuffix("_image")).image
        assert served.status_code == 200 and hashlib.sha256(served.content).hexdigest() == sha, side

    rev1.annotations.create(id=ids[(f"item:{a}", None)], result=[choice("verdict", "current_text", "keep")])
    rev1.annotations.create(id=ids[(f"item:{b}", None)], result=[choice("verdict", "current_text", "drop")])
    rev1.annotations.create(
        id=ids[(f"item:{c}", None)],
        result=[choice("verdict", "current_text", "drop"), text("reason", "the pages do not connect")],
    )
    (report,) = pull_stages(ws, connection, ["filter"])
    assert report.recorded == 2
    assert [(r.subject, r.reason) for r in report.refused] == [(f"item:{b}", "a drop needs a reason")]
    now = states(ws)
    assert (now[a], now[b], now[c]) == (("in_review", "revise"), ("in_review", "filter"), ("returned", "filter"))

    rev1.annotations.create(id=ids[(f"item:{b}", None)], result=[choice("verdict", "current_text", "keep")])
    (again,) = pull_stages(ws, connection, ["filter"])
    assert (again.recorded, again.unchanged) == (1, 2)
    assert states(ws)[b] == ("in_review", "revise")

    revise = push_stage(ws, connection, "revise")
    assert revise.created == 2
    project = ls_env.client().projects.get(id=revise.project_id)
    assert (project.model_version, project.show_collab_predictions) == ("omnicurate", True)  # the form starts filled
    ids = tasks(ws, "revise")
    data_a = ls_env.client().tasks.get(id=ids[(f"item:{a}", None)]).data
    current = revisable_fields(story_item(ws, a))
    assert f"speech.pitch: {current['speech.pitch'][0]}" in data_a["changes"]
    start = prefilled(ls_env, ids[(f"item:{a}", None)])  # every field starts with its current value
    assert {r["from_name"]: r["value"].get("text", r["value"].get("choices")) for r in start} == {
        control_name(path): [value] for path, (value, _) in current.items() if value != ""
    }
    pitch = next(p for p in CHOICES["speech.pitch"] if p != current["speech.pitch"][0])
    edited = [
        text("conditions__scene", "a wet road at dusk")
        if r["from_name"] == "conditions__scene"
        else choice("speech__pitch", "current_text", pitch)
        if r["from_name"] == "speech__pitch"
        else r
        for r in start
    ]
    rev2.annotations.create(id=ids[(f"item:{a}", None)], result=edited)
    rev2.annotations.create(id=ids[(f"item:{b}", None)], result=prefilled(ls_env, ids[(f"item:{b}", None)]))

    (pulled,) = pull_stages(ws, connection, ["revise"])
    assert (pulled.recorded, pulled.revised, pulled.refused) == (2, 1, [])
    revised = story_item(ws, a)
    assert (revised.conditions.scene, revised.speech.pitch) == ("a wet road at dusk", pitch)
    assert revised.revised_by == {"conditions.scene": "rev2", "speech.pitch": "rev2"}
    assert {ch.path for ch in diff_against_proposal(revised)} == {"conditions.scene", "speech.pitch"}
    assert story_item(ws, b).revised_by == {}
    with ws.session() as s:
        records = {
            (r.subject, r.revision): (r.reviewer, r.source, r.payload["edits"])
            for r in s.execute(select(ReviewRecord).where(ReviewRecord.stage == "revise")).scalars()
        }
        [event] = s.execute(select(Event).where(Event.action == "item.revised")).scalars().all()
    assert records == {
        (f"item:{a}", 2): ("rev2", "labelstudio", {"conditions.scene": "a wet road at dusk", "speech.pitch": pitch}),
        (f"item:{b}", 1): ("rev2", "labelstudio", {}),
    }
    assert (event.actor, event.subject, event.after["source"]) == ("rev2", f"item:{a}", "labelstudio")
    now = states(ws)
    assert now[a][0] != "in_review" and now[b][0] != "in_review"  # both signed off

    (twice,) = pull_stages(ws, connection, ["revise"])
    assert (twice.recorded, twice.revised) == (0, 0)  # the edit is not applied a second time
    assert story_item(ws, a).model_dump() == revised.model_dump()


def test_story_revise_refuses_what_would_not_make_a_valid_annotation(
    story_workspace: Workspace, connection: Connection, ls_env: LsServer
) -> None:
    ws = story_workspace
    items = sorted(states(ws))
    push_stage(ws, connection, "filter")
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    filter_ids = tasks(ws, "filter")
    shown = ls_env.client().tasks.get(id=filter_ids[(f"item:{items[0]}", None)]).data
    ls_env.client().tasks.update(  # someone changes the next page the reviewers see
        id=str(filter_ids[(f"item:{items[0]}", None)]), data={**shown, "next_text": "A different next page."}
    )
    made = {
        subject: rev1.annotations.create(id=task_id, result=[choice("verdict", "current_text", "keep")])
        for (subject, _), task_id in filter_ids.items()
    }
    (tampered,) = pull_stages(ws, connection, ["filter"])
    assert [(r.subject, "changed on the server" in r.reason) for r in tampered.refused] == [(f"item:{items[0]}", True)]
    assert states(ws)[items[0]] == ("in_review", "filter")
    assert push_stage(ws, connection, "filter").restored == 1
    rev1.annotations.update(id=made[f"item:{items[0]}"].id, result=[choice("verdict", "current_text", "keep")])
    (restored,) = pull_stages(ws, connection, ["filter"])
    assert restored.refused == [] and states(ws)[items[0]] == ("in_review", "revise")
    push_stage(ws, connection, "revise")
    ids = tasks(ws, "revise")
    first, second, third = (ids[(f"item:{i}", None)] for i in items)
    characters = len(story_item(ws, items[0]).conditions.characters)
    missing = f"conditions__characters__{characters}__action"  # a slot the transition does not have
    rev2.annotations.create(id=first, result=[text(missing, "waves")])
    rev2.annotations.create(id=second, result=[text("speech__utterance", "   ")])
    rev2.annotations.create(id=third, result=[choice("speech__emotion", "current_text", "furious")])
    (report,) = pull_stages(ws, connection, ["revise"])
    reasons = {r.subject: r.reason for r in report.refused}
    assert f"edits.conditions.characters.{characters}.action" in reasons[f"item:{items[0]}"] or (
        f"conditions.characters.{characters}.action" in reasons[f"item:{items[0]}"]
    )
    assert "speech.utterance" in reasons[f"item:{items[1]}"]
    assert "unknown option(s) 'furious'" in reasons[f"item:{items[2]}"]
    assert (report.recorded, report.revised) == (0, 0)
    assert all(story_item(ws, i).revised_by == {} for i in items)
