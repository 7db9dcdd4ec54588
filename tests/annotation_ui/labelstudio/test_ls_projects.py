"""Pieces of the bridge that need no server."""

from annotation_ui.labelstudio.projects import annotator_email


def test_annotator_is_found_whether_completed_by_is_an_id_or_an_object() -> None:
    users = {7: "rev1@lab.org"}
    assert annotator_email({"completed_by": 7}, users) == ("rev1@lab.org", "rev1@lab.org")
    assert annotator_email({"completed_by": {"id": 7, "email": "x"}}, users) == ("rev1@lab.org", "rev1@lab.org")
    assert annotator_email({"completed_by": 9}, users) == ("", "#9")
    assert annotator_email({}, users) == ("", "#None")


def test_every_stage_and_campaign_config_declares_exactly_the_controls_it_is_read_with() -> None:
    from annotation_ui.labelstudio import stages
    from annotation_ui.labelstudio.campaigns import controls, label_config
    from annotation_ui.labelstudio.results import bind_controls
    from annotation_ui.labelstudio.tables import Campaign
    from curation.kinds import all_stages

    served = [s.name for s in all_stages() if s.labelstudio is not None]
    assert "subset_checklist" in served
    for stage in served:
        bound = bind_controls(stages.label_config(stage), stages.controls(stage))
        assert all(c.to_name for c in bound.values()), stage
    for kind in ("rating", "pairwise"):
        campaign = Campaign(
            name="c", kind=kind, criteria=["quality"], scale_max=5, redundancy=2, seed=0, created_by="t"
        )
        assert bind_controls(label_config(campaign), controls(campaign))


def test_results_are_checked_against_the_config_objects() -> None:
    import pytest

    from annotation_ui.labelstudio.results import Control, ResultRefused, bind_controls, misfits, read_result

    config = '<View><Text name="context" value="$c"/><Choices name="verdict" toName="context"/></View>'
    rules = bind_controls(config, {"verdict": Control("choices", required=True, choices=("pass", "fail"))})
    ok = {"from_name": "verdict", "to_name": "context", "type": "choices", "value": {"choices": ["pass"]}}
    assert read_result([ok], rules) == {"verdict": ["pass"]}
    with pytest.raises(ResultRefused, match="points at 'question'"):
        read_result([{**ok, "to_name": "question"}], rules)
    with pytest.raises(ResultRefused, match="not an object"):
        read_result(["verdict"], rules)  # type: ignore[list-item]
    assert misfits([ok, {**ok, "from_name": "loud", "type": "rating"}], config) == [
        "from_name=loud, to_name=context, type=rating"
    ]


def test_loopback_names_and_trailing_slashes_name_the_same_server() -> None:
    from annotation_ui.labelstudio.connection import same_server

    assert same_server("http://127.0.0.1:8080", "http://localhost:8080/")
    assert same_server("http://lab.example.org", "http://lab.example.org:80")
    assert not same_server("http://127.0.0.1:8080", "http://127.0.0.1:8081")
    assert not same_server("http://lab.example.org", "https://lab.example.org")


def test_attribution_and_overlap_rules() -> None:
    from annotation_ui.labelstudio.projects import attribution_problem, wanted_overlap

    users = {2: "rev1@lab.org", 3: "rev2@lab.org"}
    assert attribution_problem({"completed_by": 2, "updated_by": 2}, users) == ""
    assert "submitted by rev1@lab.org in the name of rev2@lab.org" in attribution_problem(
        {"completed_by": 3, "updated_by": {"id": 2}}, users
    )
    assert "updated_by is missing" in attribution_problem({"completed_by": 3}, users)
    anns = [
        {"id": 1, "completed_by": 2},
        {"id": 2, "completed_by": 3},  # refused
        {"id": 3, "completed_by": 4, "was_cancelled": True},  # a skip counts for nobody
    ]
    assert wanted_overlap(2, anns, refused={2}) == (3, False)
    assert wanted_overlap(1, anns, refused=set()) == (1, True)
