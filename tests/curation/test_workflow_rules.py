"""Table-driven: one case per rule and reason code of the review flow (pure derivation, no database)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from itertools import count
from typing import Any

import pytest

from curation.config import ReviewSettings
from curation.kinds import stage_inputs
from curation.kinds.mcq.subset_checklist import rule_verdicts
from curation.tables import Decision, GateResult
from curation.workflow import Derivation, ItemFacts, RecordFacts, group_inputs
from devsupport.reviews import PASSING_EXCLUSIONS

OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}
_ids = count(1)


def facts(id_: str, group: str = "g", answer: str = "A", **kw: Any) -> ItemFacts:
    base = dict(
        id=id_,
        group=group,
        author="ann",
        revision=1,
        context="ctx",
        question="q?",
        options=OPTIONS,
        answer=answer,
        image="img",
        audio=f"aud-{id_}",
        audio_source="voice_acting",
        content_hash=f"h-{id_}",
    )
    base.update(kw)
    return ItemFacts(**base)  # type: ignore[arg-type]


def good_sets(answer: str) -> dict[str, list[str]]:
    o = [k for k in OPTIONS if k != answer]
    return {
        "text": [answer, *o],
        "image": [answer, o[0], o[1]],
        "audio": [answer, o[1]],
        "text+image": [answer, o[0]],
        "text+audio": [answer, o[1]],
        "image+audio": [answer, o[2]],
        "text+image+audio": [answer],
    }


def rec(item: ItemFacts, stage: str, reviewer: str, **payload: Any) -> RecordFacts:
    return RecordFacts(
        f"item:{item.id}", stage, reviewer, item.revision, stage_inputs(item, stage), payload, next(_ids)
    )


def full_reviews(item: ItemFacts, **changes: Any) -> list[RecordFacts]:
    """Every item stage passed, unless a change says otherwise."""
    scores = changes.get("scores", [{"naturalness": 4, "clarity": 4, "artefacts": 4}] * 2)
    sets = changes.get("sets", [good_sets(item.answer)] * 3)
    out = [rec(item, "grammar", "r1", verdict=changes.get("grammar", "pass"), note="")]
    out.append(rec(item, "grammar", "g2", verdict="pass", note=""))  # TRIAD §4.2: two grammar reviewers
    out += [rec(item, "audio_signoff", f"c{i + 1}", scores=s) for i, s in enumerate(scores)]  # TRIAD's C
    out += [
        rec(item, "subset_checklist", f"r{i + 1}", consistent=s, exclusions=PASSING_EXCLUSIONS)
        for i, s in enumerate(sets)
    ]
    out.append(rec(item, "answer_check", "r4", answer=changes.get("answer", item.answer)))
    return out


def group_pass(group: str, sisters: list[ItemFacts], perturbed: str = "audio", verdict: str = "pass") -> RecordFacts:
    return RecordFacts(
        f"group:{group}",
        "group_integration",
        "r5",
        0,
        group_inputs(perturbed, sisters),
        {"verdict": verdict},
        next(_ids),
    )


def derive(
    items: list[ItemFacts],
    records: list[RecordFacts],
    settings: ReviewSettings | None = None,
    perturbed: str = "audio",
    decisions=(),
    gates=(),
):  # type: ignore[no-untyped-def]
    groups = {i.group: perturbed for i in items}
    return {
        s.id: s for s in Derivation(settings or ReviewSettings(), items, groups, records, decisions, gates).derive_all()
    }


def pair() -> list[ItemFacts]:
    return [facts("a", answer="A"), facts("b", answer="B")]


def everything(items: list[ItemFacts], **changes_for: dict) -> list[RecordFacts]:  # type: ignore[type-arg]
    out: list[RecordFacts] = []
    for it in items:
        out += full_reviews(it, **changes_for.get(it.id, {}))
    out.append(group_pass(items[0].group, items))
    return out


def test_fully_reviewed_pair_is_admitted() -> None:
    items = pair()
    status = derive(items, everything(items))
    assert {k: (v.state, v.stage, v.reasons) for k, v in status.items()} == {
        "a": ("admitted", None, []),
        "b": ("admitted", None, []),
    }


CASES = [
    # (name, changes for item a, expected state of a, expected stage, expected reasons of a)
    ("grammar fail", {"grammar": "fail"}, "returned", "grammar", ["grammar"]),
    (
        "audio naturalness",
        {
            "scores": [
                {"naturalness": 3, "clarity": 4, "artefacts": 4},
                {"naturalness": 3, "clarity": 5, "artefacts": 5},
            ]
        },
        "returned",
        "audio_signoff",
        ["audio_unnatural:naturalness"],
    ),
    (
        "audio two axes",
        {
            "scores": [
                {"naturalness": 4, "clarity": 3, "artefacts": 1},
                {"naturalness": 4, "clarity": 3, "artefacts": 5},
            ]
        },
        "returned",
        "audio_signoff",
        ["audio_unnatural:clarity", "audio_unnatural:artefacts"],
    ),
    (
        "audio mean exactly 3.5 passes",
        {
            "scores": [
                {"naturalness": 3, "clarity": 4, "artefacts": 4},
                {"naturalness": 4, "clarity": 4, "artefacts": 4},
            ]
        },
        "admitted",
        None,
        [],
    ),
    (
        "underdetermined",
        {"sets": [{**good_sets("A"), "text+image+audio": ["A", "B"]}] * 3},
        "returned",
        "subset_checklist",
        ["underdetermined"],
    ),
    (
        "label mismatch",
        {"sets": [{**good_sets("A"), "text+image+audio": ["C"]}] * 3},
        "returned",
        "subset_checklist",
        ["label_mismatch"],
    ),
    (
        "reducible single view",
        {"sets": [{**good_sets("A"), "audio": ["A"]}] * 3},
        "returned",
        "subset_checklist",
        ["reducible:audio"],
    ),
    (
        "reducible pair view and not enlarging",
        {"sets": [{**good_sets("A"), "text+image": ["A"]}] * 3},
        "returned",
        "subset_checklist",
        ["reducible:text+image", "not_enlarging:audio"],
    ),
    (
        "not enlarging without reducible",
        {"sets": [{**good_sets("A"), "image+audio": ["B", "C"]}] * 3},
        "returned",
        "subset_checklist",
        ["not_enlarging:text"],
    ),
    (
        "one of three underdetermined: the verdict depends on the rule",
        {"sets": [good_sets("A"), good_sets("A"), {**good_sets("A"), "text+image+audio": ["A", "B"]}]},
        "held",
        None,
        ["checklist:disagreement"],
    ),
    ("answer check disagrees", {"answer": "C"}, "returned", "answer_check", ["answer_check_disagrees"]),
    (
        "every violated rule reported",
        {"grammar": "fail", "answer": "D"},
        "returned",
        "grammar",
        ["grammar", "answer_check_disagrees"],
    ),
]


@pytest.mark.parametrize(("name", "changes", "state", "stage", "reasons"), CASES, ids=[c[0] for c in CASES])
def test_item_stage_rules(name: str, changes: dict, state: str, stage: str | None, reasons: list[str]) -> None:
    items = pair()
    status = derive(items, everything(items, a=changes))
    assert (status["a"].state, status["a"].stage, status["a"].reasons) == (state, stage, reasons)
    if state in ("returned", "held"):  # a returned or held sister holds the other back
        assert (status["b"].state, status["b"].reasons) == ("in_review", ["group:sister_pending"])


def test_tts_only_audio_is_never_admitted() -> None:
    items = [facts("a", audio_source="tts"), facts("b", answer="B")]
    status = derive(items, everything(items))
    assert (status["a"].state, status["a"].reasons) == ("returned", ["tts_only_audio"])
    no_reviews = derive(items, [])
    assert no_reviews["a"].state == "returned" and no_reviews["a"].stage == "audio_signoff"


@pytest.mark.parametrize(
    ("stage", "keep"),
    [("grammar", 0), ("grammar", 1), ("audio_signoff", 1), ("subset_checklist", 2), ("answer_check", 0)],
)
def test_short_of_quorum_is_pending(stage: str, keep: int) -> None:
    items = pair()
    records = [r for r in everything(items) if not (r.subject == "item:a" and r.stage == stage)]
    records += [r for r in everything(items) if r.subject == "item:a" and r.stage == stage][:keep]
    status = derive(items, records)
    assert (status["a"].state, status["a"].stage) == ("in_review", stage)


def test_combination_rules_any_majority_all() -> None:
    items = pair()
    sets = [good_sets("A"), {**good_sets("A"), "text+image+audio": ["A", "B"]}, {**good_sets("A"), "audio": ["A"]}]
    records = everything(items, a={"sets": sets})
    verdicts = rule_verdicts(sets, "A", ("text", "image", "audio"), tuple(good_sets("A")))
    assert verdicts["any"] == ["underdetermined"]  # one reviewer's B counts
    assert verdicts["majority"] == []  # B and the lone audio view are minorities
    assert verdicts["all"] == ["reducible:audio"]  # the third reviewer's {A} empties the intersection
    # any and majority disagree, so the verdict depends on the rule: held for adjudication under each
    by_rule = {rule: derive(items, records, ReviewSettings(combine=rule))["a"] for rule in ("any", "majority", "all")}
    assert {rule: (st.state, st.reasons) for rule, st in by_rule.items()} == {
        rule: ("held", ["checklist:disagreement"]) for rule in ("any", "majority", "all")
    }


@pytest.mark.parametrize(
    ("perturbed", "b_changes", "reason", "options_rule"),
    [
        ("audio", {"image": "other-image"}, "group:multiple_perturbed", "reviewer"),
        ("image", {"image": "other-image", "context": "other ctx"}, "group:multiple_perturbed", "reviewer"),
        ("text", {"context": "other ctx"}, None, "reviewer"),
        ("mixed", {"context": "other ctx", "image": "x"}, None, "reviewer"),
        # TRIAD §3.4 allows minimal wording or cardinality adjustments: the group reviewer's pass decides
        ("audio", {"options": {**OPTIONS, "D": "furious"}}, None, "reviewer"),
        ("audio", {"options": {k: v for k, v in OPTIONS.items() if k != "D"}}, None, "reviewer"),
        # exact match is a setting
        ("audio", {"options": {**OPTIONS, "D": "furious"}}, "group:option_mismatch", "exact"),
        ("audio", {"options": {k: v for k, v in OPTIONS.items() if k != "D"}}, "group:option_mismatch", "exact"),
        ("audio", {}, None, "exact"),
        ("audio", {"answer": "A"}, "group:duplicate_answers", "reviewer"),
    ],
)
def test_group_rules(perturbed: str, b_changes: dict, reason: str | None, options_rule: str) -> None:
    a = facts("a")
    b = replace(facts("b", answer="B"), **b_changes)
    if perturbed != "audio":
        b = replace(b, audio=a.audio)
    items = [a, b]
    records = [r for it in items for r in full_reviews(it)] + [group_pass("g", items, perturbed)]
    status = derive(items, records, ReviewSettings(group_options=options_rule), perturbed=perturbed)
    if reason is None:
        assert status["a"].state == status["b"].state == "admitted"
    else:
        for s in status.values():
            assert s.state == "returned" and s.stage == "group_integration" and reason in s.reasons


def test_grammar_needs_both_reviewers_to_sign_off_by_default() -> None:
    assert ReviewSettings().grammar_quorum == 2
    items = pair()
    one = [r for r in everything(items) if not (r.subject == "item:a" and r.stage == "grammar" and r.reviewer == "g2")]
    assert (derive(items, one)["a"].state, derive(items, one)["a"].stage) == ("in_review", "grammar")
    assert derive(items, one, ReviewSettings(grammar_quorum=1))["a"].state == "admitted"
    failed = everything(items, a={"grammar": "fail"})
    assert derive(items, failed)["a"].reasons == ["grammar"]  # one of the two failing is enough


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"a": OPTIONS, "b": dict(OPTIONS)}, []),
        ({"a": OPTIONS, "b": {**OPTIONS, "D": "furious"}}, [("D", {"a": "surprised", "b": "furious"})]),
        (
            {"a": OPTIONS, "b": {k: v for k, v in OPTIONS.items() if k != "D"}},
            [("D", {"a": "surprised", "b": None})],
        ),
        (
            {"a": {"A": "x", "B": "y"}, "b": {"A": "x", "B": "z"}, "c": {"A": "w", "B": "y"}},
            [("A", {"a": "x", "b": "x", "c": "w"}), ("B", {"a": "y", "b": "z", "c": "y"})],
        ),
    ],
)
def test_option_differences_shown_to_the_group_reviewer(options: dict, expected: list) -> None:  # type: ignore[type-arg]
    from curation.group_options import option_differences

    assert [(d.key, d.texts) for d in option_differences(options)] == expected


def test_group_too_small_and_distinct_answers_setting() -> None:
    lone = [facts("a")]
    status = derive(lone, [*full_reviews(lone[0]), group_pass("g", lone)])
    assert status["a"].reasons == ["group:too_small"]
    # three audio-perturbed sisters A, B, B: b and c differ only in their audio and share an answer
    trio = [facts("a"), facts("b", answer="B"), facts("c", answer="B")]
    records = [r for it in trio for r in full_reviews(it)] + [group_pass("g", trio)]
    assert ReviewSettings().group_answers == "perturbation", "TRIAD §3.2: the answer changes with the altered cue"
    for rule in ("perturbation", "all_distinct"):
        strict = derive(trio, records, ReviewSettings(group_answers=rule))
        assert {s.state for s in strict.values()} == {"returned"} and "group:duplicate_answers" in strict["a"].reasons
    assert derive(trio, records, ReviewSettings(group_answers="not_all_same"))["a"].state == "admitted"
    same = [facts("a"), facts("b"), facts("c")]
    records = [r for it in same for r in full_reviews(it)] + [group_pass("g", same)]
    loose = derive(same, records, ReviewSettings(group_answers="not_all_same"))
    assert "group:duplicate_answers" in loose["a"].reasons, "not_all_same still flags one shared answer"


def test_group_reviewer_fail_and_pending_group_review() -> None:
    items = pair()
    records = [r for it in items for r in full_reviews(it)]
    pending = derive(items, records)
    assert (pending["a"].state, pending["a"].stage) == ("in_review", "group_integration")
    failed = derive(items, [*records, group_pass("g", items, verdict="fail")])
    assert failed["a"].state == "returned" and failed["a"].reasons == ["group:reviewer_fail"]


def test_group_review_is_invalidated_by_a_sister_revision() -> None:
    items = pair()
    records = everything(items)
    revised = [items[0], replace(items[1], revision=2, content_hash="h-b-2")]
    status = derive(revised, records)
    assert status["a"].stage == "group_integration" and status["a"].state == "in_review"


def test_reviews_of_the_author_and_duplicates_do_not_count() -> None:
    items = pair()
    a = items[0]
    records = [r for r in everything(items) if not (r.subject == "item:a" and r.stage == "subset_checklist")]
    records += [rec(a, "subset_checklist", "ann", consistent=good_sets("A"))]  # the author
    records += [rec(a, "subset_checklist", "r1", consistent=good_sets("A"))] * 3  # one reviewer thrice
    assert derive(items, records)["a"].stage == "subset_checklist"


def test_revision_invalidates_only_changed_inputs() -> None:
    items = pair()
    records = everything(items)
    new_audio = replace(items[0], revision=2, audio="new-audio", content_hash="h-a-2")
    status = derive([new_audio, items[1]], records)
    assert (status["a"].state, status["a"].stage) == ("in_review", "audio_signoff")
    new_context = replace(items[0], revision=2, context="fixed grammar", content_hash="h-a-3")
    sister = replace(items[1], revision=2, context="fixed grammar", content_hash="h-b-3")
    d = Derivation(ReviewSettings(), [new_context, sister], {"g": "audio"}, records)
    assert len(d.valid_records(new_context, "audio_signoff")) == 2
    assert d.valid_records(new_context, "grammar") == [] and d.valid_records(new_context, "answer_check") == []
    assert d.derive_all()[0].stage == "grammar"


def _decision(kind: str, **kw: Any) -> Decision:
    return Decision(
        id=next(_ids),
        item_id="a",
        kind=kind,
        reason="because",
        actor="m",
        revision=1,
        created_at=datetime.now(UTC),
        **kw,
    )


def test_discard_restore_and_override() -> None:
    items = pair()
    records = everything(items, a={"grammar": "fail"})
    discarded = derive(items, records, decisions=[_decision("discard")])
    assert discarded["a"].state == "discarded"
    assert (discarded["b"].state, discarded["b"].reasons) == ("returned", ["group:too_small"])
    restored = derive(items, records, decisions=[_decision("discard"), _decision("restore")])
    assert restored["a"].state == "returned"
    overridden = derive(items, records, decisions=[_decision("override", stage="grammar", verdict="pass")])
    assert overridden["a"].state == "admitted"
    demoted = derive(items, everything(items), decisions=[_decision("override", stage="answer_check", verdict="fail")])
    assert demoted["a"].reasons == ["overridden:answer_check"]


def test_gates_hold_fully_reviewed_items_and_stale_results_are_ignored() -> None:
    items = pair()
    gate = GateResult(item_id="a", gate="audit", content_hash="h-a", reasons=["duplicate:c1"], blocking=True)
    status = derive(items, everything(items), gates=[gate])
    assert (status["a"].state, status["a"].reasons) == ("held", ["duplicate:c1"])
    assert status["b"].reasons == ["group:sister_pending"]
    stale = GateResult(item_id="a", gate="audit", content_hash="old", reasons=["duplicate:c1"], blocking=True)
    warn = GateResult(item_id="b", gate="probe", content_hash="h-b", reasons=["probe:reducible"], blocking=False)
    assert {s.state for s in derive(items, everything(items), gates=[stale, warn]).values()} == {"admitted"}


def test_probe_gate_mode_decides_at_derivation_whether_a_probe_verdict_blocks() -> None:
    items = pair()
    probe = GateResult(item_id="a", gate="probe", content_hash="h-a", reasons=["probe:reducible"], blocking=False)
    groups = {"g": "audio"}

    def run(mode: str) -> dict:  # type: ignore[type-arg]
        return {
            s.id: s
            for s in Derivation(ReviewSettings(), items, groups, everything(items), (), [probe], mode).derive_all()
        }

    assert (run("off")["a"].state, run("off")["a"].reasons) == ("admitted", [])
    assert (run("warn")["a"].state, run("warn")["a"].reasons) == ("admitted", ["probe:reducible"])
    assert (run("block")["a"].state, run("block")["a"].reasons) == ("held", ["probe:reducible"])
