"""The subset checklist's Label Studio project asks each exclusion rule (one required pass/fail Choices control
per rule, ``exclusion_<rule>``, on every view's task) and a pull maps the answers back to ``exclusions``."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from annotation_ui.labelstudio import stages
from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.results import bind_controls, config_controls
from annotation_ui.labelstudio.stages import pull_stages, push_stage
from curation.config import ReviewSettings
from curation.derived import load_derived
from curation.exclusion_rules import TRIAD_RULES
from curation.facts import ItemFacts
from curation.kinds import stage_named
from curation.tables import ReviewRecord
from curation.vocab import CHECKLIST_VIEWS
from curation.workspace import Workspace
from tests.annotation_ui.labelstudio.lsfixtures import advance, attested, choice, seed, tasks
from tests.annotation_ui.labelstudio.server import LsServer

STAGE = "subset_checklist"


def test_the_project_has_one_required_pass_fail_control_per_rule() -> None:
    config = stages.label_config(STAGE, ReviewSettings())
    declared = config_controls(config)
    assert {n for n in declared if n.startswith("exclusion_")} == {"exclusion_ethics", "exclusion_identifying"}
    bound = bind_controls(config, stages.controls(STAGE, ReviewSettings()))
    for rule, sentence in TRIAD_RULES.items():
        control = bound[f"exclusion_{rule}"]
        assert control.required and control.choices == ("pass", "fail") and not control.multiple
        assert control.to_name == "question"
        assert f"Exclusion rule {rule}: {sentence}" in config
    assert 'name="exclusion_ethics" toName="question" choice="single-radio" required="true"' in config


def test_a_workspace_without_rules_keeps_the_plain_project() -> None:
    plain = ReviewSettings(exclusion_rules={})
    assert stages.label_config(STAGE, plain) == stages.label_config(STAGE)
    assert set(stages.controls(STAGE, plain)) == {"consistent"}


def test_a_rule_sentence_is_escaped_in_the_labeling_config() -> None:
    odd = ReviewSettings(exclusion_rules={"quotes": 'No "scare quotes" & no <b>tags</b>.'})
    config = stages.label_config(STAGE, odd)
    assert "&quot;scare quotes&quot; &amp; no &lt;b&gt;tags&lt;/b&gt;" in config
    assert set(config_controls(config)) == {"consistent", "exclusion_quotes"}


def test_views_answers_make_the_records_attestations() -> None:
    stage = stage_named(STAGE)
    assert stage is not None
    options = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}
    item = ItemFacts("a", "g", "ann", 1, "ctx", "q?", options, "A", "img", "aud", "voice_acting", "h-a")
    views = {
        view: {"consistent": ["A"], "exclusion_ethics": ["pass"], "exclusion_identifying": ["pass"]}
        for view in CHECKLIST_VIEWS
    }
    assert stage.record_from_annotation(item, views)["exclusions"] == {"ethics": "pass", "identifying": "pass"}
    views["audio"]["exclusion_identifying"] = ["fail"]  # the audio view names a real person
    assert stage.record_from_annotation(item, views)["exclusions"] == {"ethics": "pass", "identifying": "fail"}
    plain = {view: {"consistent": ["A"]} for view in CHECKLIST_VIEWS}
    assert "exclusions" not in stage.record_from_annotation(item, plain)


def test_pulled_answers_are_recorded_and_a_fail_returns_the_item(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    advance(workspace, tmp_path, STAGE)
    report = push_stage(workspace, connection, STAGE)
    on_server = ls_env.client().projects.get(id=report.project_id).label_config
    assert "exclusion_ethics" in on_server and "exclusion_identifying" in on_server
    assert TRIAD_RULES["identifying"] in on_server

    ids = tasks(workspace, STAGE)
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    for view in CHECKLIST_VIEWS:
        chosen = ["A"] if view == "text+image+audio" else ["A", "C"]
        answers = attested(identifying="fail") if view == "audio" else attested()
        rev1.annotations.create(
            id=ids[("item:g1-a", view)], result=[choice("consistent", "question", *chosen), *answers]
        )
    missing = [choice("consistent", "question", "A", "B"), *attested()[:1]]  # identifying left out
    rev2.annotations.create(id=ids[("item:g1-a", "text")], result=missing)
    (pulled,) = pull_stages(workspace, connection, [STAGE])
    assert pulled.recorded == 1
    assert any("exclusion_identifying" in r.reason and "required" in r.reason for r in pulled.refused)
    with workspace.session() as s:
        (record,) = s.scalars(select(ReviewRecord).where(ReviewRecord.stage == STAGE)).all()
    assert record.reviewer == "rev1" and record.payload["exclusions"] == {"ethics": "pass", "identifying": "fail"}
    status = load_derived(workspace).status_by_id["g1-a"]
    assert (status.state, status.stage, status.reasons) == ("returned", STAGE, ["exclusion:identifying"])
