"""Unit tests of the annotation UI's page logic (no Streamlit involved)."""

from __future__ import annotations

import dataclasses

import pytest
from ui_helpers import APP, PASSWORD, advance, passing_record, promote_story

from annotation_ui.dashboard import agreement_plots, dashboard_data, gates_data, item_ids, item_rows
from annotation_ui.judge_ui import judge_pages_for
from annotation_ui.logic import (
    SignedIn,
    blind_item,
    checklist_view,
    closed_page_note,
    every_page,
    group_panel,
    history_rows,
    oidc_providers,
    page_of,
    pages_for,
    queue,
    sign_in_by_email,
    submit_review,
)
from annotation_ui.snapshot import SnapshotCache, load_snapshot
from curation.errors import PermissionDenied, ValidationFailed
from curation.review_queues import review_queue
from curation.vocab import CHECKLIST_VIEWS, MODALITIES, PLACEHOLDERS, STAGES, view_modalities
from curation.workflow import derive_status


def test_sign_in_checks_the_password(ui_workspace):
    from annotation_ui.signin import sign_in

    user = sign_in(ui_workspace, "rev1", PASSWORD)
    assert user == SignedIn("rev1", frozenset({"reviewer"}))
    with pytest.raises(PermissionDenied, match="wrong name or password"):
        sign_in(ui_workspace, "rev1", "not-the-password")


def test_sign_in_by_email_needs_a_known_address(ui_workspace):
    assert sign_in_by_email(ui_workspace, "MAYA@example.org").name == "maya"
    with pytest.raises(PermissionDenied, match="stranger@example.org"):
        sign_in_by_email(ui_workspace, "stranger@example.org")


@pytest.mark.parametrize(
    ("secrets", "expected"),
    [
        (None, []),
        ({}, []),
        ({"auth": {"redirect_uri": "http://127.0.0.1:8501/oauth2callback"}}, []),
        ({"auth": {"redirect_uri": "http://x/oauth2callback", "client_id": "abc", "cookie_secret": "s"}}, [None]),
        (
            {
                "auth": {
                    "redirect_uri": "http://x/oauth2callback",
                    "google": {"client_id": "g"},
                    "okta": {"client_id": "o"},
                }
            },
            ["google", "okta"],
        ),
    ],
)
def test_oidc_only_when_configured(secrets, expected):
    assert oidc_providers(secrets) == expected


def test_pages_follow_roles_and_the_kinds_present():
    assert [p.title for section in pages_for(None).values() for p in section] == ["Sign in"]
    reviewer = SignedIn("rev1", frozenset({"reviewer"}))
    mcq = [f"pages/{stage}.py" for stage in STAGES]
    story = ["pages/story_filter.py", "pages/story_revise.py"]  # the story_transition kind's two stages
    spot = ["pages/audio_spot_check.py", "pages/baseline.py"]  # mcq's spot check and human baseline, after the stages
    assert list(pages_for(reviewer)) == ["Review", "Account"]
    assert [p.path for p in pages_for(reviewer)["Review"]] == mcq + spot  # an mcq workspace: no story page
    assert [p.path for p in pages_for(reviewer, ["story_transition"])["Review"]] == story
    assert [p.path for p in pages_for(reviewer, ["mcq", "story_transition"])["Review"]] == mcq + story + spot
    assert list(pages_for(reviewer, ["judge_task"])) == ["Account"]  # judge pages come from judge_pages_for
    assert [p.title for p in judge_pages_for(reviewer, ["judge_task"])["Judging"]] == [
        "Query screening",
        "Checklist curation",
        "Response review",
        "Score annotation",
        "Pair annotation",
    ]
    assert judge_pages_for(reviewer, ["mcq"]) == {}
    everyone = SignedIn("x", frozenset({"author", "reviewer", "maintainer"}))
    assert list(pages_for(everyone)) == ["Authoring", "Review", "Maintain", "Account"]
    assert list(pages_for(everyone, [])) == ["Authoring", "Review", "Maintain", "Account"]  # empty: mcq
    story_maintainer = pages_for(everyone, ["story_transition"])
    assert [p.title for p in story_maintainer["Maintain"]] == ["Dashboard", "Item history"]
    assert [p.title for p in story_maintainer["Authoring"]] == ["Returned to you"]
    judge_maintainer = pages_for(everyone, ["judge_task"])
    assert list(judge_maintainer) == ["Maintain", "Account"] and [p.title for p in judge_maintainer["Maintain"]] == [
        "Dashboard"
    ]
    for page in every_page():
        assert (APP.parent / page.path).is_file(), page.path


def test_a_page_out_of_reach_says_why_and_what_to_do():
    author_page, adjudication = every_page()[0], next(p for p in every_page() if p.path.endswith("adjudication.py"))
    story_author = SignedIn("lin", frozenset({"author"}))
    note = closed_page_note(adjudication, ["maintainer"], story_author, ["story_transition"])
    assert note.startswith("“Adjudicate checklists” is for people with the maintainer role; you are signed in as lin")
    assert "`curate people add lin --role maintainer`" in note
    note = closed_page_note(author_page, ["author"], story_author, ["story_transition"])  # the role, not the kind
    assert "works on mcq units, and this workspace holds story_transition" in note
    nobody = SignedIn("x", frozenset())
    assert "(no role)" in closed_page_note(author_page, ["reviewer", "maintainer"], nobody, [])
    assert "reviewer or maintainer role" in closed_page_note(author_page, ["reviewer", "maintainer"], nobody, [])


def test_kinds_present_follow_the_workspace(ui_workspace, tmp_path):
    from curation.kinds import kinds_present

    assert kinds_present(ui_workspace) == ["mcq"]
    promote_story(ui_workspace, tmp_path / "corpus")
    assert kinds_present(ui_workspace) == ["mcq", "story_transition"]  # one workspace, both kinds


def test_an_empty_workspace_holds_no_kind(workspace):
    from curation.kinds import kinds_present

    assert kinds_present(workspace) == []


def test_queue_matches_the_domain_and_excludes_own_items(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    snap = load_snapshot(ui_workspace)
    for stage in STAGES:
        for reviewer in ("rev1", "rev2", "rev3", "maya", "ann1"):
            assert queue(ui_workspace, snap, stage, reviewer) == review_queue(ui_workspace, stage, reviewer)
    assert queue(ui_workspace, snap, "grammar", "rev2") == ["g1-b"]
    assert queue(ui_workspace, snap, "grammar", "ann1") == []  # both items are ann1's own
    assert queue(ui_workspace, snap, "subset_checklist", "rev3") == ["g1-a"]
    with pytest.raises(PermissionDenied):
        queue(ui_workspace, snap, "grammar", "ann2")


def test_queue_matches_the_domain_on_the_demo(demo_workspace):
    snap = load_snapshot(demo_workspace)
    assert [st.as_json() for st in snap.statuses] == [st.as_json() for st in derive_status(demo_workspace)]
    for stage in STAGES:
        for reviewer in ("rev1", "rev2", "rev3", "rev4", "rev5", "maya"):
            assert queue(demo_workspace, snap, stage, reviewer) == review_queue(demo_workspace, stage, reviewer)


def test_paging_returns_only_one_page():
    ids = [f"item-{n:05d}" for n in range(10_000)]
    page = page_of(ids, 3, 25)
    assert page.ids == ids[50:75] and page.total == 10_000 and page.pages == 400
    assert page_of(ids, 999, 25).ids == ids[-25:]
    assert page_of([], 1, 25).ids == [] and page_of([], 1, 25).pages == 1


def test_checklist_view_shows_only_its_modalities(ui_workspace):
    item = load_snapshot(ui_workspace).facts["g1-a"]
    for view in CHECKLIST_VIEWS:
        content = checklist_view(item, view)
        shown = view_modalities(view)
        assert (content.context is not None) == ("text" in shown)
        assert (content.image is not None) == ("image" in shown)
        assert (content.audio is not None) == ("audio" in shown)
        assert content.placeholders == {m: PLACEHOLDERS[m] for m in MODALITIES if m not in shown}
        assert content.options == item.options and content.question == item.question
        assert "answer" not in {f.name for f in dataclasses.fields(content)}


def test_blind_item_does_not_hold_the_answer(ui_workspace):
    item = load_snapshot(ui_workspace).facts["g1-b"]
    blind = blind_item(item)
    assert {f.name for f in dataclasses.fields(blind)} == {"item", "context", "image", "audio", "question", "options"}
    assert blind.options == item.options
    # the label "B" is nowhere as a value of its own: only as one key among the options
    assert [v for k, v in dataclasses.asdict(blind).items() if k != "options" and v == item.answer] == []


def test_group_panel_marks_the_perturbed_modality_and_runs_the_group_checks(ui_workspace, tmp_path):
    from media_factory import item_row, write_items

    from curation.items import import_items

    snap = load_snapshot(ui_workspace)
    panel = group_panel(ui_workspace, snap, "g1")
    assert panel.perturbed == "audio" and panel.varying == frozenset({"audio"})
    assert [s.id for s in panel.sisters] == ["g1-a", "g1-b"] and [s.answer for s in panel.sisters] == ["A", "B"]
    assert panel.rule_reasons == []
    rows = [
        item_row("g2-a", group="g2", answer="A", context="One context."),
        item_row("g2-b", group="g2", answer="A", context="Another context."),
    ]
    import_items(ui_workspace, write_items(tmp_path / "g2", rows))
    panel = group_panel(ui_workspace, load_snapshot(ui_workspace), "g2")
    assert panel.varying == frozenset({"text", "audio"})
    # two modalities apart, both answering A: no perturbation changed the answer (group_answers = "perturbation")
    assert panel.rule_reasons == ["group:multiple_perturbed", "group:duplicate_answers"]


def test_submit_goes_through_the_domain(ui_workspace):
    report = submit_review(ui_workspace, passing_record("g1-a", "grammar", "rev1", "A"))
    assert report.recorded == 1
    assert {st.id: st for st in derive_status(ui_workspace)}["g1-a"].stage == "grammar"  # two sign off
    submit_review(ui_workspace, passing_record("g1-a", "grammar", "rev2", "A"))
    statuses = {st.id: st for st in derive_status(ui_workspace)}
    assert statuses["g1-a"].stage == "audio_signoff"
    # the author is refused by the domain even if a page offered the item
    with pytest.raises(ValidationFailed, match="nobody reviews their own item"):
        submit_review(ui_workspace, {"item": "g1-b", "stage": "grammar", "reviewer": "ann1", "verdict": "pass"})
    with pytest.raises(ValidationFailed, match="reviewer role"):
        submit_review(ui_workspace, {"item": "g1-b", "stage": "grammar", "reviewer": "ann2", "verdict": "pass"})
    with pytest.raises(ValidationFailed) as bad:
        submit_review(
            ui_workspace,
            {"item": "g1-b", "stage": "subset_checklist", "reviewer": "rev1", "consistent": {"text": ["A"]}},
        )
    assert "all 7 views" in str(bad.value) and all(p.line is None for p in bad.value.problems)
    with pytest.raises(ValidationFailed, match="unknown stage"):
        submit_review(ui_workspace, {"item": "g1-b", "stage": "vibes", "reviewer": "rev1"})
    assert {st.id: st for st in derive_status(ui_workspace)}["g1-b"].stage == "grammar"


def test_snapshot_cache_recomputes_only_after_a_change(ui_workspace):
    cache = SnapshotCache(ui_workspace)
    first = cache.get()
    assert cache.get() is first and cache.is_fresh()
    submit_review(ui_workspace, passing_record("g1-a", "grammar", "rev1", "A"))
    submit_review(ui_workspace, passing_record("g1-a", "grammar", "rev2", "A"))
    assert not cache.is_fresh()
    second = cache.get()
    assert second is not first and second.status_by_id["g1-a"].stage == "audio_signoff"


def test_dashboard_data_on_the_demo(demo_workspace):
    snap = load_snapshot(demo_workspace)
    data = dashboard_data(snap)
    statuses = derive_status(demo_workspace)
    live = [st for st in statuses if st.state != "discarded"]
    assert data.total == len(statuses) == 12
    assert data.states["admitted"] == sum(st.state == "admitted" for st in statuses)
    assert data.admission_rate == round(data.states["admitted"] / len(live), 4)
    assert len(data.leaves) == 18 and sum(leaf.items for leaf in data.leaves) == 3 * len(live)
    assert sum(size * n for size, n in data.group_sizes.items()) == len(live)
    reached = list(data.reached.values())
    assert reached == sorted(reached, reverse=True) and reached[0] == len(live)
    from omnicurate.demo import DATA

    records = (DATA / "reviews.jsonl").read_text().splitlines()
    assert sum(row["total"] for row in data.workload) == len(records)
    assert dict(data.reasons).get("checklist:disagreement", 0) == data.states["held"] == 1  # traffic-01-b
    rows = item_rows(snap, page_of(item_ids(snap, "returned"), 1, 25).ids)
    assert rows and all(row["state"] == "returned" and row["reasons"] for row in rows)
    assert data.staffing == [], "the demo's pool staffs every stage"


def test_dashboard_names_the_stages_a_pool_of_three_cannot_staff(workspace, tmp_path):
    from curation.items import import_items
    from devsupport.media_factory import item_row, write_items

    for name in ("p1", "p2", "p3"):
        workspace.add_person(name, ["author", "reviewer"])
    rows = [item_row("a", author="p1"), item_row("b", answer="B", author="p1")]
    import_items(workspace, write_items(tmp_path / "items", rows))
    data = dashboard_data(load_snapshot(workspace))
    assert {row["stage"] for row in data.staffing} == {"subset_checklist", "answer_check", "group_integration"}
    assert all(row["items"] == ["a", "b"] and row["fix"] == "add 2 reviewers" for row in data.staffing)
    workspace.add_person("p4", ["reviewer"])
    data = dashboard_data(load_snapshot(workspace))
    fix = 'add 1 reviewer or allow it with [review] separation = "author_only"'
    assert [(row["stage"], row["fix"]) for row in data.staffing] == [("group_integration", fix)]


def test_history_rows_list_events(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="grammar")
    actions = [row["action"] for row in history_rows(ui_workspace, "g1-a")]
    assert actions[:2] == ["group.created", "item.created"] and "review.recorded" in actions


def test_gates_data_on_the_demo(demo_workspace):
    gates = gates_data(demo_workspace)
    figures = {row["statistic"]: row for row in gates.agreement}
    assert figures["blind answer vs label: Cohen's κ"]["value"] == 1.0
    # every figure stands beside its threshold (or says it is reported only)
    assert figures["blind answer vs label: Cohen's κ"]["threshold"] == "≥ 0.600"
    assert figures["subset checklist: α, all views"]["threshold"] == "≥ 0.667"
    assert figures["audio sign-off: ordinal α, naturalness"]["threshold"] == "reported, no gate"  # off by default
    assert 0 < figures["ambiguity tier tag: Cohen's κ (TRIAD C.3)"]["value"] < 1
    assert all(row["threshold"] for row in gates.agreement)
    assert 0.9 < figures["subset checklist: α, all views"]["value"] <= 1.0
    assert (
        figures["subset checklist: α, text"]["value"] is None
        and "no variation" in figures["subset checklist: α, text"]["note"]
    )
    assert gates.agreement_failures == []
    assert [(row["item"], "checklist:disagreement" in row["reasons"]) for row in gates.adjudication] == [
        ("traffic-01-b", True)
    ]
    (cluster,) = gates.clusters
    assert "kitchen-01-a" in cluster["items"] and cluster["decision"].startswith("distinct:")
    assert gates.probe_verdicts == {"reducible": 2, "underdetermined": 1, "well_posed": 9}
    plots = agreement_plots(demo_workspace, gates)  # drawn on request only (seconds of matplotlib)
    assert plots and all(png.startswith(b"\x89PNG") for _, png in plots)
    from annotation_ui.snapshot import load_snapshot

    assert gates_data(demo_workspace, load_snapshot(demo_workspace)).agreement == gates.agreement
