"""TRIAD's exclusion rules as attestations (``curation.exclusions``): the setting, the checklist record's
``exclusions`` field, and how the derivation returns, holds and admits items by them."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.config import CONFIG_NAME, ReviewSettings, Settings
from curation.errors import ValidationFailed
from curation.exclusion_rules import TRIAD_RULES
from curation.exclusions import with_exclusions
from curation.facts import StageOutcome
from curation.items import import_items
from curation.kinds import stage_inputs
from curation.reviews import import_reviews
from curation.tables import ReviewRecord
from curation.workflow import Derivation, ItemFacts, RecordFacts, group_inputs
from curation.workspace import Workspace
from devsupport.reviews import (
    BLIND,
    CHECKLIST,
    GRAMMAR,
    GROUP,
    LISTENERS,
    PASSING_EXCLUSIONS,
    REVIEWERS,
    admitting_reviews,
    consistent_sets,
)
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

# ----- the setting ------------------------------------------------------------------------------------


def test_the_default_rules_are_triads_ethics_and_identifying_rules() -> None:
    rules = ReviewSettings().exclusion_rules
    assert list(rules) == ["ethics", "identifying"] and rules == dict(TRIAD_RULES)
    assert "violence" in rules["ethics"] and "privacy" in rules["ethics"]
    assert "real-world individual" in rules["identifying"] and "impersonate" in rules["identifying"]


def test_rules_are_named_by_identifiers_and_an_empty_table_means_none(tmp_path: Path) -> None:
    path = tmp_path / CONFIG_NAME
    path.write_text('[review.exclusion_rules]\nconsent = "Every voice actor signed a release."\n', encoding="utf-8")
    assert Settings.load(path).review.exclusion_rules == {"consent": "Every voice actor signed a release."}
    path.write_text("[review.exclusion_rules]\n", encoding="utf-8")
    assert Settings.load(path).review.exclusion_rules == {}
    for bad in ('"Bad Name" = "x"', 'ethics = "   "', "ethics = 3"):
        path.write_text(f"[review.exclusion_rules]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ValidationFailed) as exc:
            Settings.load(path)
        assert all(p.field.startswith("review.exclusion_rules") for p in exc.value.problems)


def test_a_workspace_writes_its_rules_out_and_reads_them_back(workspace: Workspace) -> None:
    text = (workspace.root / CONFIG_NAME).read_text(encoding="utf-8")
    assert "[review.exclusion_rules]" in text and "identifying = " in text
    assert Workspace.open(workspace.root).settings.review.exclusion_rules == dict(TRIAD_RULES)


# ----- the derivation, on plain facts -------------------------------------------------------------------
OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}
_ids = count(1)


def facts(id_: str, answer: str = "A") -> ItemFacts:
    return ItemFacts(id_, "g", "ann", 1, "ctx", "q?", OPTIONS, answer, "img", f"aud-{id_}", "voice_acting", f"h-{id_}")


def rec(item: ItemFacts, stage: str, reviewer: str, **payload: Any) -> RecordFacts:
    return RecordFacts(
        f"item:{item.id}", stage, reviewer, item.revision, stage_inputs(item, stage), payload, next(_ids)
    )


def reviewed(
    item: ItemFacts, attested: list[dict[str, str] | None], sets: list[dict] | None = None
) -> list[RecordFacts]:
    """Every item stage passed; one checklist record per entry of ATTESTED (its ``exclusions``, None: absent)."""
    out = [rec(item, "grammar", r, verdict="pass", note="") for r in GRAMMAR]
    out += [
        rec(item, "audio_signoff", r, scores=dict.fromkeys(("naturalness", "clarity", "artefacts"), 4))
        for r in LISTENERS
    ]
    for n, (who, given) in enumerate(zip(CHECKLIST, attested, strict=False)):
        payload: dict[str, Any] = {"consistent": (sets or [consistent_sets(item.answer)] * 3)[n]}
        if given is not None:
            payload["exclusions"] = given
        out.append(rec(item, "subset_checklist", who, **payload))
    out.append(rec(item, "answer_check", BLIND, answer=item.answer))
    return out


def derive(attested: list[dict[str, str] | None], rules: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    a, b = facts("a"), facts("b", answer="B")
    settings = ReviewSettings() if rules is None else ReviewSettings(exclusion_rules=rules)
    clean = dict.fromkeys(settings.exclusion_rules, "pass")
    records = reviewed(a, attested, kw.get("sets")) + reviewed(b, [clean] * 3)
    records.append(
        RecordFacts(
            "group:g", "group_integration", GROUP, 0, group_inputs("audio", [a, b]), {"verdict": "pass"}, next(_ids)
        )
    )
    return {st.id: st for st in Derivation(settings, [a, b], {"g": "audio"}, records).derive_all()}


PASS, FAIL = "pass", "fail"
ALONE = ReviewSettings(min_group_size=1)
"""For an item derived without its sisters (a one-item group is no reason here)."""


@pytest.mark.parametrize(
    ("attested", "state", "stage", "reasons"),
    [
        pytest.param([PASSING_EXCLUSIONS] * 3, "admitted", None, [], id="every reviewer attests pass"),
        pytest.param(
            [PASSING_EXCLUSIONS, None, None], "admitted", None, [], id="one counted reviewer's pass attests a rule"
        ),
        pytest.param(
            [PASSING_EXCLUSIONS, {"ethics": FAIL, "identifying": PASS}, PASSING_EXCLUSIONS],
            "returned",
            "subset_checklist",
            ["exclusion:ethics"],
            id="one reviewer's fail returns the item",
        ),
        pytest.param(
            [{"ethics": PASS}, {"ethics": PASS}, None],
            "held",
            None,
            ["exclusion_unattested:identifying"],
            id="a rule nobody attested holds the item",
        ),
        pytest.param(
            [None, None, None],
            "held",
            None,
            ["exclusion_unattested:ethics", "exclusion_unattested:identifying"],
            id="records without attestations hold the item on every rule",
        ),
        pytest.param(
            [{"ethics": FAIL}, None, None],
            "returned",
            "subset_checklist",
            ["exclusion:ethics", "exclusion_unattested:identifying"],
            id="a fail and an unattested rule are both reported",
        ),
    ],
)
def test_the_checklist_stage_judges_the_exclusion_rules(
    attested: list[dict[str, str] | None], state: str, stage: str | None, reasons: list[str]
) -> None:
    status = derive(attested)["a"]
    assert (status.state, status.stage, status.reasons) == (state, stage, reasons)


def test_a_fail_returns_the_item_before_the_checklist_has_its_quorum() -> None:
    a = facts("a")
    records = [rec(a, "subset_checklist", CHECKLIST[0], consistent=consistent_sets("A"), exclusions={"ethics": FAIL})]
    [status] = [s for s in Derivation(ALONE, [a], {"g": "audio"}, records).derive_all()]
    assert (status.state, status.stage, status.reasons) == ("returned", "subset_checklist", ["exclusion:ethics"])


def test_an_unattested_item_goes_on_through_its_stages_with_the_hold_shown_early() -> None:
    a = facts("a")
    records = [r for r in reviewed(a, [None] * 3) if r.stage != "answer_check"]
    [status] = Derivation(ALONE, [a], {"g": "audio"}, records).derive_all()
    assert (status.state, status.stage) == ("in_review", "answer_check")
    assert status.reasons == ["exclusion_unattested:ethics", "exclusion_unattested:identifying"]


def test_a_workspace_without_rules_needs_no_attestation() -> None:
    assert derive([None, None, None], rules={})["a"].state == "admitted"


def test_attestations_of_a_rule_the_workspace_dropped_do_not_count_against_it() -> None:
    one = {"consent": "Every voice actor signed a release."}
    assert derive([{"consent": PASS, "ethics": FAIL}, None, None], rules=one)["a"].state == "admitted"


def test_definition_1_and_the_exclusion_rules_are_reported_together() -> None:
    sets = [{**consistent_sets("A"), "audio": ["A"]}] * 3  # reducible by the audio alone
    status = derive([{"ethics": FAIL}, None, None], sets=sets)["a"]
    assert status.state == "returned"
    assert status.reasons == ["reducible:audio", "exclusion:ethics", "exclusion_unattested:identifying"]


def test_a_maintainers_consensus_settles_the_checklist_but_not_the_attestations() -> None:
    a = facts("a")
    split = {**consistent_sets("A"), "text+image+audio": ["A", "B"]}
    records = reviewed(a, [{"ethics": FAIL}, None, None], sets=[consistent_sets("A"), consistent_sets("A"), split])
    payload = {"stage": "subset_checklist", "consistent": consistent_sets("A"), "reason": "read together"}
    records.append(
        RecordFacts(f"item:{a.id}", "adjudication", "maya", 1, stage_inputs(a, "subset_checklist"), payload, next(_ids))
    )
    [status] = Derivation(ALONE, [a], {"g": "audio"}, records).derive_all()
    assert (status.state, status.stage) == ("returned", "subset_checklist")
    assert status.reasons == ["exclusion:ethics", "exclusion_unattested:identifying"]


def test_the_checklists_own_hold_stays_beside_an_unattested_rule() -> None:
    held = StageOutcome(True, ["checklist:disagreement"], held=True)
    out = with_exclusions(held, [], {"ethics": "x"})
    assert (out.passed, out.held, out.reasons) == (
        True,
        True,
        ["checklist:disagreement", "exclusion_unattested:ethics"],
    )


def test_attestations_are_no_stage_input_so_they_invalidate_no_review() -> None:
    a = facts("a")
    records = reviewed(a, [None] * 3)
    with_rules = [r for r in records if r.stage == "subset_checklist"]
    assert {r.inputs_hash for r in with_rules} == {stage_inputs(a, "subset_checklist")}


# ----- through the workspace: import reviews, curate status --json ------------------------------------------
runner = CliRunner()


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    for name in REVIEWERS:
        workspace.add_person(name, ["reviewer"])
    rows = [
        item_row("a", context="Sure, that was a really helpful suggestion."),
        item_row("b", answer="B", context="Sure, that was a really helpful suggestion."),
        item_row("zh-a", group="g2", language="zh", answer="A", context="当然，那真是个很有帮助的建议。"),
        item_row("zh-b", group="g2", language="zh", answer="B", context="当然，那真是个很有帮助的建议。"),
    ]
    import_items(workspace, write_items(tmp_path / "items", rows))
    return workspace


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def every_review(without: dict[str, dict[str, str] | None] | None = None) -> list[dict[str, Any]]:
    """``admitting_reviews`` of the four items; WITHOUT: reviewer -> the exclusions their checklists carry
    instead (None: none)."""
    rows = admitting_reviews([{"id": i, "group": g, "answer": x} for i, g, x in (
        ("a", "g1", "A"), ("b", "g1", "B"), ("zh-a", "g2", "A"), ("zh-b", "g2", "B")
    )])  # fmt: skip
    for row in rows:
        if row["stage"] == "subset_checklist" and without and row["reviewer"] in without:
            given = without[row["reviewer"]]
            if given is None:
                del row["exclusions"]
            else:
                row["exclusions"] = given
    return rows


def status_json(ws: Workspace) -> dict[str, dict[str, Any]]:
    done = runner.invoke(app, ["-w", str(ws.root), "status", "--json"])
    assert done.exit_code == 0, done.output
    return {s["id"]: s for s in json.loads(done.stdout)}


def test_a_failed_rule_returns_the_item_and_a_corrected_record_admits_it(ws: Workspace, tmp_path: Path) -> None:
    failing = {CHECKLIST[1]: {"ethics": FAIL, "identifying": PASS}}
    import_reviews(ws, write(tmp_path / "r.jsonl", every_review(failing)))
    status = status_json(ws)
    for item in ("a", "b", "zh-a", "zh-b"):
        assert (status[item]["state"], status[item]["stage"]) == ("returned", "subset_checklist")
        assert status[item]["reasons"] == ["exclusion:ethics"]
    # the reviewer changes their record: it replaces the earlier one (same stage, item revision and inputs)
    report = import_reviews(ws, write(tmp_path / "again.jsonl", every_review()))
    assert report.replaced == 4 and report.recorded == 0
    assert {s["state"] for s in status_json(ws).values()} == {"admitted"}


def test_a_missing_attestation_holds_the_item_until_a_reviewer_attests(ws: Workspace, tmp_path: Path) -> None:
    silent = dict.fromkeys(CHECKLIST)  # no checklist record attests anything
    import_reviews(ws, write(tmp_path / "r.jsonl", every_review(silent)))
    status = status_json(ws)
    for item in ("a", "zh-b"):
        assert (status[item]["state"], status[item]["stage"]) == ("held", None)
        assert status[item]["reasons"] == ["exclusion_unattested:ethics", "exclusion_unattested:identifying"]
    one = [r for r in every_review() if r["stage"] == "subset_checklist" and r["reviewer"] == CHECKLIST[0]]
    assert import_reviews(ws, write(tmp_path / "one.jsonl", one)).replaced == 4
    assert {s["state"] for s in status_json(ws).values()} == {"admitted"}


def test_a_record_without_attestations_imported_again_is_unchanged(ws: Workspace, tmp_path: Path) -> None:
    rows = every_review(dict.fromkeys(CHECKLIST))
    import_reviews(ws, write(tmp_path / "r.jsonl", rows))
    with ws.session() as s:
        stored = [r.payload for r in s.scalars(select(ReviewRecord).where(ReviewRecord.stage == "subset_checklist"))]
    assert stored and all("exclusions" not in p for p in stored)
    again = import_reviews(ws, write(tmp_path / "again.jsonl", rows))
    assert (again.recorded, again.replaced, again.unchanged) == (0, 0, len(rows))


def test_an_unknown_rule_is_refused_naming_its_line_and_where_rules_are_listed(ws: Workspace, tmp_path: Path) -> None:
    rows = every_review({CHECKLIST[2]: {"ethics": PASS, "identifying": PASS, "copyright": PASS}})
    path = write(tmp_path / "r.jsonl", rows)
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    lines = [n for n, r in enumerate(rows, 1) if r.get("exclusions", {}).get("copyright")]
    found = [str(p) for p in exc.value.problems]
    assert len(found) == len(lines) == 4
    for n, text in zip(lines, found, strict=True):
        assert text.startswith(f"{path}:{n}: exclusions.copyright: unknown exclusion rule 'copyright'")
        assert "ethics, identifying" in text and "[review] exclusion_rules" in text
    with ws.session() as s:
        assert not s.scalars(select(ReviewRecord)).all(), "a refused file records nothing"
    done = runner.invoke(app, ["-w", str(ws.root), "import", "reviews", str(path)])
    assert done.exit_code == 2 and f"{path.name}:{lines[0]}" in done.output and "copyright" in done.output


def test_a_value_other_than_pass_or_fail_is_refused(ws: Workspace, tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", every_review({CHECKLIST[0]: {"ethics": "ok", "identifying": PASS}}))
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    assert any("exclusions.ethics" in str(p) and "'pass' or 'fail'" in str(p) for p in exc.value.problems)


def test_the_workspaces_own_rules_decide(ws: Workspace, tmp_path: Path) -> None:
    ws.settings.review.exclusion_rules = {"consent": "Every voice actor signed a release covering distribution."}
    ws.settings.save(ws.root / CONFIG_NAME)
    with pytest.raises(ValidationFailed) as exc:  # the defaults are no rules of this workspace any more
        import_reviews(Workspace.open(ws.root), write(tmp_path / "r.jsonl", every_review()))
    assert "unknown exclusion rule 'ethics'; this workspace's rules are consent" in str(exc.value.problems[0])
    consent = dict.fromkeys(CHECKLIST, {"consent": PASS})
    import_reviews(Workspace.open(ws.root), write(tmp_path / "c.jsonl", every_review(consent)))
    assert {s["state"] for s in status_json(ws).values()} == {"admitted"}
