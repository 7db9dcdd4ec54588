"""Adjudicated checklists: a verdict that depends on the combination rule holds the item until a maintainer
records a consensus checklist (table-driven on the pure derivation; then in a workspace, on both backends)."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curation.adjudication import adjudication_queue, record_adjudication
from curation.agreement.gates import adjudication_queue as agreement_queue
from curation.config import ReviewSettings
from curation.derived import load_derived
from curation.errors import PermissionDenied, ValidationFailed
from curation.items import import_items
from curation.kinds import ADJUDICATION, stage_inputs
from curation.kinds.mcq.subset_checklist import rule_verdicts, verdict_depends_on_rule
from curation.reviews import import_reviews
from curation.workflow import Derivation, ItemFacts, RecordFacts, funnel, group_inputs
from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}
GOOD = {
    "text": ["A", "B"],
    "image": ["A", "C"],
    "audio": ["A", "D"],
    "text+image": ["A", "B"],
    "text+audio": ["A", "C"],
    "image+audio": ["A", "D"],
    "text+image+audio": ["A"],
}
DETERMINES = {**GOOD, "text+image": ["A"]}
"""A reviewer who says text+image alone determines the answer (reducible:text+image, not_enlarging:audio)."""
FULL_AB = {**GOOD, "text+image+audio": ["A", "B"]}
"""A reviewer who finds B consistent with everything (underdetermined)."""
VIEWS = tuple(GOOD)
_ids = count(1)


def facts(id_: str, answer: str = "A") -> ItemFacts:
    return ItemFacts(id_, "g", "ann", 1, "ctx", "q?", OPTIONS, answer, "img", f"aud-{id_}", "voice_acting", f"h-{id_}")


def rec(item: ItemFacts, stage: str, reviewer: str, **payload: Any) -> RecordFacts:
    return RecordFacts(
        f"item:{item.id}", stage, reviewer, item.revision, stage_inputs(item, stage), payload, next(_ids)
    )


def consensus(item: ItemFacts, sets: dict[str, list[str]], maintainer: str = "maya") -> RecordFacts:
    payload = {"stage": "subset_checklist", "consistent": sets, "reason": "read it together"}
    return RecordFacts(
        f"item:{item.id}", ADJUDICATION, maintainer, item.revision, stage_inputs(item, "subset_checklist"), payload,
        next(_ids),
    )  # fmt: skip


def reviewed(item: ItemFacts, checklists: list[dict[str, list[str]]]) -> list[RecordFacts]:
    """Every stage passed by distinct people (TRIAD's letters), with these checklists from B/C holders."""
    out = [rec(item, "grammar", r, verdict="pass", note="") for r in ("g1", "g2")]
    out += [
        rec(item, "audio_signoff", r, scores={"naturalness": 4, "clarity": 4, "artefacts": 4}) for r in ("l1", "l2")
    ]
    out += [
        rec(item, "subset_checklist", r, consistent=c, exclusions=PASSING_EXCLUSIONS)
        for r, c in zip(("g1", "g2", "l1"), checklists, strict=True)
    ]
    out.append(rec(item, "answer_check", "d1", answer=item.answer))
    return out


def derive(items: list[ItemFacts], records: list[RecordFacts], combine: str = "any") -> dict[str, Any]:
    group = RecordFacts("group:g", "group_integration", "e1", 0, group_inputs("audio", items), {"verdict": "pass"}, 0)
    settings = ReviewSettings(combine=combine)
    return {s.id: s for s in Derivation(settings, items, {"g": "audio"}, [*records, group]).derive_all()}


CASES = [
    # (name, the three checklists of item a, rule, a consensus (or None), state of a, reasons of a)
    ("unanimous well posed", [GOOD] * 3, "any", None, "admitted", []),
    ("two of three: text+image determines, any", [DETERMINES, DETERMINES, GOOD], "any", None, "held",
     ["checklist:disagreement"]),
    ("two of three: text+image determines, majority", [DETERMINES, DETERMINES, GOOD], "majority", None, "held",
     ["checklist:disagreement"]),
    ("two of three: text+image determines, all", [DETERMINES, DETERMINES, GOOD], "all", None, "held",
     ["checklist:disagreement"]),
    ("one of three: underdetermined, any", [GOOD, GOOD, FULL_AB], "any", None, "held", ["checklist:disagreement"]),
    ("disagreement that changes no verdict", [GOOD, GOOD, {**GOOD, "text": ["A", "B", "C"]}], "any", None,
     "admitted", []),
    ("disagreement, every rule fails", [DETERMINES, DETERMINES, {**DETERMINES, "text": ["A", "B", "C"]}], "any",
     None, "returned", ["reducible:text+image", "not_enlarging:audio"]),
    ("consensus settles it: well posed", [DETERMINES, DETERMINES, GOOD], "any", GOOD, "admitted", []),
    ("consensus settles it: reducible", [DETERMINES, DETERMINES, GOOD], "any", DETERMINES, "returned",
     ["reducible:text+image", "not_enlarging:audio"]),
    ("consensus decides even without disagreement", [GOOD] * 3, "any", FULL_AB, "returned", ["underdetermined"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "checklists", "rule", "settled", "state", "reasons"), CASES, ids=[c[0] for c in CASES]
)
def test_checklist_disagreement_rules(
    name: str, checklists: list, rule: str, settled: dict | None, state: str, reasons: list[str]
) -> None:
    a, b = facts("a"), facts("b", answer="B")
    good_b = {view: ["B" if k == "A" else "A" if k == "B" else k for k in keys] for view, keys in GOOD.items()}
    records = reviewed(a, checklists) + reviewed(b, [good_b] * 3)
    if settled is not None:
        records.append(consensus(a, settled))
    status = derive([a, b], records, rule)
    assert (status["a"].state, status["a"].reasons) == (state, reasons)
    if state in ("held", "returned"):  # a sister not through holds the other back
        assert (status["b"].state, status["b"].reasons) == ("in_review", ["group:sister_pending"])


def test_hold_shows_while_other_stages_are_pending_and_funnel_counts_it() -> None:
    a, b = facts("a"), facts("b", answer="B")
    records = [r for r in reviewed(a, [DETERMINES, DETERMINES, GOOD]) if r.stage != "answer_check"]
    status = derive([a, b], records)
    assert (status["a"].state, status["a"].stage, status["a"].reasons) == (
        "in_review",
        "answer_check",
        ["checklist:disagreement"],
    )
    held = derive([a, b], reviewed(a, [DETERMINES, DETERMINES, GOOD]))
    counts = funnel(list(held.values()))
    assert counts["states"]["held"] == 1
    assert {"reason": "checklist:disagreement", "count": 1} in counts["reasons"]


def test_a_revision_makes_the_consensus_stale() -> None:
    a, b = facts("a"), facts("b", answer="B")
    records = reviewed(a, [DETERMINES, DETERMINES, GOOD]) + [consensus(a, GOOD)]
    assert derive([a, b], records)["a"].reasons != ["checklist:disagreement"]
    revised = replace(a, revision=2, context="a new context", content_hash="h-a2")
    kept = [r for r in records if r.stage != "subset_checklist"]  # the new reviews come in later
    redone = [
        rec(revised, "subset_checklist", r, consistent=c, exclusions=PASSING_EXCLUSIONS)
        for r, c in (("g1", DETERMINES), ("g2", DETERMINES), ("l1", GOOD))
    ]
    status = derive([revised, b], kept + redone)  # grammar and the rest are to do again; the hold is back
    assert status["a"].state == "in_review" and "checklist:disagreement" in status["a"].reasons
    derivation = Derivation(ReviewSettings(), [revised, b], {"g": "audio"}, kept + redone)
    assert derivation.consensus(revised, "subset_checklist") is None


@pytest.mark.parametrize(
    ("checklists", "configured", "depends"),
    [
        ([GOOD, GOOD, GOOD], "any", False),
        ([DETERMINES, DETERMINES, GOOD], "any", True),
        ([DETERMINES, GOOD, GOOD], "majority", False),  # any and majority pass; only all would fail
        ([DETERMINES, GOOD, GOOD], "all", True),
        ([DETERMINES, DETERMINES, DETERMINES], "all", False),
    ],
)
def test_verdict_depends_on_rule(checklists: list, configured: str, depends: bool) -> None:
    verdicts = rule_verdicts(checklists, "A", ("text", "image", "audio"), VIEWS)
    assert verdict_depends_on_rule(verdicts, configured) is depends


# ----- in a workspace --------------------------------------------------------------------------------------


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    """Two sisters through every stage by distinct people; a's checklists split two to one."""
    workspace.add_person("ann1", ["author"])
    workspace.add_person("maya", ["maintainer"])
    workspace.add_person("rita", ["reviewer"])
    for r in ("g1", "g2", "l1", "l2", "d1", "e1"):
        workspace.add_person(r, ["reviewer"])
    import_items(workspace, write_items(tmp_path / "items", [item_row("a"), item_row("b", answer="B")]))
    good_b = {view: ["B" if k == "A" else "A" if k == "B" else k for k in keys] for view, keys in GOOD.items()}
    for item, answer, lists in (("a", "A", [DETERMINES, DETERMINES, GOOD]), ("b", "B", [good_b] * 3)):
        rows = [{"item": item, "stage": "grammar", "reviewer": r, "verdict": "pass"} for r in ("g1", "g2")]
        rows += [
            {"item": item, "stage": "audio_signoff", "reviewer": r, "scores": {"naturalness": 4, "clarity": 4,
             "artefacts": 4}} for r in ("l1", "l2")
        ]  # fmt: skip
        import_reviews(workspace, write(tmp_path / f"{item}-1.jsonl", rows))
        rows = [
            {
                "item": item,
                "stage": "subset_checklist",
                "reviewer": r,
                "consistent": c,
                "exclusions": PASSING_EXCLUSIONS,
            }
            for r, c in zip(("g1", "g2", "l1"), lists, strict=True)
        ]
        rows.append({"item": item, "stage": "answer_check", "reviewer": "d1", "answer": answer})
        import_reviews(workspace, write(tmp_path / f"{item}-2.jsonl", rows))
    rows = [{"group": "g1", "stage": "group_integration", "reviewer": "e1", "verdict": "pass"}]
    import_reviews(workspace, write(tmp_path / "group.jsonl", rows))
    return workspace


def states(ws: Workspace) -> dict[str, tuple[str, list[str]]]:
    return {s.id: (s.state, s.reasons) for s in load_derived(ws).statuses}


def test_two_of_three_is_held_then_proceeds_after_a_consensus(ws: Workspace) -> None:
    assert states(ws)["a"] == ("held", ["checklist:disagreement"])
    [dispute] = adjudication_queue(ws)
    assert (dispute.item, dispute.held) == ("a", True)
    assert dispute.verdicts["any"] == [] and "reducible:text+image" in dispute.verdicts["majority"]
    assert dispute.checklists["g1"]["text+image"] == ["A"] and dispute.checklists["l1"]["text+image"] == ["A", "B"]
    assert [(e.item, "checklist:disagreement" in e.reasons) for e in agreement_queue(ws)] == [("a", True)]

    done = record_adjudication(ws, "a", "maya", "B is consistent with the picture and the words", from_reviewer="l1")
    assert (done.reasons, done.state) == ([], "admitted")
    assert states(ws) == {"a": ("admitted", []), "b": ("admitted", [])}
    assert adjudication_queue(ws) == [] and agreement_queue(ws) == []
    summary = load_derived(ws).stage_summaries("a")["subset_checklist"]
    assert summary["adjudicated"] is True and summary["consistent"]["text+image"] == ["A", "B"]
    [event] = [e for e in ws.events("item:a") if e.action == "item.adjudicated"]
    assert event.actor == "maya" and event.after["reason"].startswith("B is consistent")

    # a later consensus (the same maintainer) replaces the first: the item is returned
    record_adjudication(ws, "a", "maya", "on reflection text+image settles it", consistent=DETERMINES)
    assert states(ws)["a"] == ("returned", ["reducible:text+image", "not_enlarging:audio"])


def test_refusals_record_nothing(ws: Workspace, tmp_path: Path) -> None:
    cases = [
        (dict(maintainer="maya", reason="  ", from_reviewer="g1"), ValidationFailed, "a written reason is required"),
        (dict(maintainer="maya", reason="r"), ValidationFailed, "give the consensus checklist or the reviewer"),
        (dict(maintainer="maya", reason="r", from_reviewer="g1", consistent=GOOD), ValidationFailed, "or the rev"),
        (dict(maintainer="rita", reason="r", from_reviewer="g1"), PermissionDenied, "maintainer role"),
        (dict(maintainer="maya", reason="r", from_reviewer="d1"), ValidationFailed, "'d1' has no checklist on 'a'"),
        (dict(maintainer="maya", reason="r", consistent={**GOOD, "audio": ["A", "Q"]}), ValidationFailed,
         "option(s) Q are not options of 'a'"),
        (dict(maintainer="maya", reason="r", consistent={"text": ["A"]}), ValidationFailed, "missing view"),
    ]  # fmt: skip
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
            record_adjudication(ws, "a", **kwargs)  # type: ignore[arg-type]
    assert states(ws)["a"] == ("held", ["checklist:disagreement"])
    assert not [e for e in ws.events("item:a") if e.action == "item.adjudicated"]


def test_revision_makes_the_consensus_stale(ws: Workspace, tmp_path: Path) -> None:
    record_adjudication(ws, "a", "maya", "B fits", from_reviewer="l1")
    assert states(ws)["a"] == ("admitted", [])
    revised = item_row("a", context="Sure, that was a really helpful suggestion, he said.")
    import_items(ws, write_items(tmp_path / "items2", [revised, item_row("b", answer="B")]))
    assert load_derived(ws).consensus("a") is None
    assert states(ws)["a"][0] == "in_review"


def test_release_admits_the_held_item_only_after_a_consensus(ws: Workspace, tmp_path: Path) -> None:
    from curation.errors import CheckFailed
    from exports.build import build_release
    from exports.gates import Gates

    assert states(ws)["a"][0] == "held" and states(ws)["b"][1] == ["group:sister_pending"]
    with pytest.raises(CheckFailed, match="no item is admitted"):
        build_release(ws, "0.1.0", out=tmp_path / "releases", gates=Gates())
    record_adjudication(ws, "a", "maya", "B fits", from_reviewer="l1")
    result = build_release(ws, "0.1.0", out=tmp_path / "releases", gates=Gates())
    rows = [json.loads(line) for line in (result.path / "data" / "items.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["a", "b"]
    # the consensus travels in the admission record, and the release re-derives "a" admitted from it alone
    from exports.reproduce import reproduce_release

    records = (result.path / "admission" / "records.jsonl").read_text()
    assert '"stage":"adjudication"' in records.replace(" ", "")
    report = reproduce_release(result.path)
    assert report.ok, report.differences


runner = CliRunner()


def test_cli_lists_the_queue_and_records_a_consensus(ws: Workspace, tmp_path: Path) -> None:
    root = str(ws.root)
    listed = runner.invoke(app, ["-w", root, "adjudicate", "--json"])
    assert listed.exit_code == 0, listed.output
    [entry] = json.loads(listed.stdout)
    assert entry["item"] == "a" and entry["held"] is True and entry["reasons"] == ["checklist:disagreement"]
    assert entry["revision"] == 1
    assert set(entry["checklists"]) == {"g1", "g2", "l1"}
    status = json.loads(runner.invoke(app, ["-w", root, "status", "--json"]).stdout)
    assert {s["id"]: s["reasons"] for s in status}["a"] == ["checklist:disagreement"]

    no_reason = runner.invoke(app, ["-w", root, "adjudicate", "a", "--from", "l1", "--by", "maya"])
    assert no_reason.exit_code == 2 and "--reason is required" in no_reason.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    broken = runner.invoke(
        app, ["-w", root, "adjudicate", "a", "--checklist", str(bad), "--by", "maya", "--reason", "r"]
    )
    assert broken.exit_code == 2 and f"{bad}:1: invalid JSON" in broken.output and "Traceback" not in broken.output

    chosen = tmp_path / "consensus.json"
    chosen.write_text(json.dumps({"consistent": GOOD}))
    stale = runner.invoke(app, ["-w", root, "adjudicate", "a", "--from", "l1", "--by", "maya", "--reason", "r",
                                "--revision", "7"])  # fmt: skip
    assert stale.exit_code == 2 and "stale:adjudication" in stale.output and "(revision 7, now 1)" in stale.output
    assert load_derived(ws).consensus("a") is None  # refused: nothing recorded
    args = ["-w", root, "adjudicate", "a", "--checklist", str(chosen), "--by", "maya", "--reason", "B fits", "--json"]
    args += ["--revision", "1"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) | {"consistent": None} == {
        "item": "a", "stage": "subset_checklist", "maintainer": "maya", "consistent": None, "reason": "B fits",
        "verdict": "pass", "reasons": [], "state": "admitted",
    }  # fmt: skip
    empty = runner.invoke(app, ["-w", root, "adjudicate"])
    assert empty.exit_code == 0 and "nothing to adjudicate" in empty.output
