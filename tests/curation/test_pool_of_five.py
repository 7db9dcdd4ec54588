"""TRIAD's own team shape on the defaults (§4.4): five annotators, each query written by one and reviewed by the
other four, grammar by two (§4.2), audio by two listeners (B.4), checklist by B, C and D, blind D, group E.

Through the CLI (``import reviews``, ``review queue``, ``status``, ``funnel``) on SQLite and PostgreSQL: the
pool admits clean items; the queues offer each person exactly what their letter allows; the refusals that
remain (the author, an exposed D, E as D) name the rule. Smaller pools: ``test_staffing.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS, consistent_sets
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

POOL = ("p1", "p2", "p3", "p4", "p5")
AXES = ("naturalness", "clarity", "artefacts")
STAGES = ("grammar", "audio_signoff", "subset_checklist", "answer_check", "group_integration")


def letters(author: str) -> dict[str, str]:
    """The letters of a pool of five on an item by ``author``: the next four people, in turn, are B, C, D, E."""
    at = POOL.index(author)
    return dict(zip("ABCDE", (POOL[(at + k) % 5] for k in range(5)), strict=True))


def reviews(item: str, answer: str, who: dict[str, str], second: str) -> list[dict[str, Any]]:
    """One item's reviews by letter, in stage order: grammar B then the second sign-off, audio C then the second
    listener, checklist B, C, D, blind D. ``second`` names the letters of the second grammar sign-off and the
    second listener: "CB" (each other's), "CE", "EB" or "EE"."""
    grammar2, listener2 = who[second[0]], who[second[1]]
    scores = dict.fromkeys(AXES, 4)
    rows: list[dict[str, Any]] = [
        {"item": item, "stage": "grammar", "reviewer": who["B"], "verdict": "pass"},
        {"item": item, "stage": "grammar", "reviewer": grammar2, "verdict": "pass"},
        {"item": item, "stage": "audio_signoff", "reviewer": who["C"], "scores": scores},
        {"item": item, "stage": "audio_signoff", "reviewer": listener2, "scores": scores},
    ]
    sets = consistent_sets(answer)
    attested = PASSING_EXCLUSIONS
    rows += [
        {"item": item, "stage": "subset_checklist", "reviewer": who[x], "consistent": sets, "exclusions": attested}
        for x in "BCD"
    ]
    rows.append({"item": item, "stage": "answer_check", "reviewer": who["D"], "answer": answer})
    return rows


def group_review(group: str, who: dict[str, str]) -> dict[str, Any]:
    return {"group": group, "stage": "group_integration", "reviewer": who["E"], "verdict": "pass"}


class Cli:
    def __init__(self, ws: Workspace, folder: Path) -> None:
        self.ws, self.folder, self.files = ws, folder, 0

    def __call__(self, *args: str) -> Any:
        return CliRunner().invoke(app, ["-w", str(self.ws.root), *args])

    def import_reviews(self, rows: list[dict[str, Any]]) -> Any:
        self.files += 1
        path = self.folder / f"reviews-{self.files}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return self("import", "reviews", str(path))

    def status(self) -> dict[str, dict[str, Any]]:
        result = self("status", "--json")
        assert result.exit_code == 0, result.output
        return {row["id"]: row for row in json.loads(result.stdout)}

    def queue(self, stage: str, who: str) -> list[str]:
        result = self("review", "queue", stage, "--reviewer", who, "--json")
        assert result.exit_code == 0, result.output
        return [row.get("id") or row.get("group") for row in json.loads(result.stdout)]


def pool_workspace(ws: Workspace, folder: Path, people: tuple[str, ...] = POOL) -> Cli:
    """Everyone writes and reviews; p1 writes group g1 (a, b), p2 writes group g2 (c, d)."""
    cli = Cli(ws, folder)
    for name in people:
        assert cli("people", "add", name, "-r", "author", "-r", "reviewer").exit_code == 0
    rows = [
        item_row("a", author="p1"),
        item_row("b", answer="B", author="p1"),
        item_row("c", group="g2", author="p2"),
        item_row("d", group="g2", answer="B", author="p2"),
    ]
    result = cli("import", "items", str(write_items(folder / "items", rows)))
    assert result.exit_code == 0, result.output
    return cli


ITEMS = {"a": ("A", "g1", "p1"), "b": ("B", "g1", "p1"), "c": ("A", "g2", "p2"), "d": ("B", "g2", "p2")}


@pytest.mark.parametrize("second", ["CB", "CE", "EB", "EE"])
def test_a_pool_of_five_admits_clean_items_through_the_cli(workspace: Workspace, tmp_path: Path, second: str) -> None:
    cli = pool_workspace(workspace, tmp_path)
    assert not any(r.startswith("staffing:") for st in cli.status().values() for r in st["reasons"])
    rows = [r for item, (answer, _, author) in ITEMS.items() for r in reviews(item, answer, letters(author), second)]
    result = cli.import_reviews(rows)
    assert result.exit_code == 0, result.output
    status = cli.status()
    assert {i: (s["state"], s["stage"]) for i, s in status.items()} == dict.fromkeys(
        ITEMS, ("in_review", "group_integration")
    )
    assert not any(r.startswith("staffing:") for st in status.values() for r in st["reasons"])
    result = cli.import_reviews([group_review("g1", letters("p1")), group_review("g2", letters("p2"))])
    assert result.exit_code == 0, result.output
    assert {i: s["state"] for i, s in cli.status().items()} == dict.fromkeys(ITEMS, "admitted")


OFFERED = {
    # the letters whose queue holds the item before each step of ``reviews`` (a person's first record decides
    # their role: D and E are free until they record; the first grammar reviewer may not be the first listener).
    # The blind check is not offered to E: B, C and D hold the checklist, so E taking it would leave nobody for
    # group integration (the staffing planner, design.md "Work distribution").
    "CB": ["BCDE", "CDE", "CDE", "BDE", "BCDE", "CDE", "DE", "D"],
    # With E on both second sign-offs, D is the only one left for the blind check: the second listening is
    # not offered to D, and the third checklist not to E (else nobody could do group integration).
    "EE": ["BCDE", "CDE", "CDE", "BE", "BCDE", "CDE", "D", "D"],
}


@pytest.mark.parametrize("second", ["CB", "EE"])
def test_queues_offer_each_letter_exactly_what_the_rule_allows(
    workspace: Workspace, tmp_path: Path, second: str
) -> None:
    """Walk g1's items stage by stage; before each step every person's queue holds the item iff the rule lets
    them do that stage now; then the designated person records it. The author is never offered anything."""
    cli = pool_workspace(workspace, tmp_path)
    who = letters("p1")
    letter_of = {person: letter for letter, person in who.items()}
    done = [r for item in ("c", "d") for r in reviews(item, ITEMS[item][0], letters("p2"), second)]
    assert cli.import_reviews(done).exit_code == 0
    plan = {item: reviews(item, ITEMS[item][0], who, second) for item in ("a", "b")}
    for step, expected in enumerate(OFFERED[second]):
        stage = plan["a"][step]["stage"]
        offered = {letter_of[p] for p in POOL if "a" in cli.queue(stage, p)}
        assert offered == set(expected), (step, stage)
        assert letter_of[plan["a"][step]["reviewer"]] in offered
        result = cli.import_reviews([plan["a"][step], plan["b"][step]])
        assert result.exit_code == 0, result.output
    assert {p for p in POOL if "g1" in cli.queue("group_integration", p)} == {who["E"]}
    assert cli.import_reviews([group_review("g1", who)]).exit_code == 0
    assert {i: s["state"] for i, s in cli.status().items() if i in "ab"} == {"a": "admitted", "b": "admitted"}


REFUSALS = [
    ("the author reviews", {"item": "a", "stage": "grammar", "reviewer": "p1", "verdict": "pass"}, "'p1' authored"),
    (
        "an exposed D",
        {"item": "a", "stage": "answer_check", "reviewer": "p4", "answer": "A"},
        "exposed:shown: 'p4' has seen the label of 'a'",
    ),
    (
        "E as D",
        {"item": "a", "stage": "answer_check", "reviewer": "p5", "answer": "A"},
        "separation:triad: 'p5' is already the group reviewer (E) of 'a'",
    ),
    ("D as E", {"group": "g1", "stage": "group_integration", "reviewer": "p4", "verdict": "pass"}, "separation:triad"),
    (
        "D as the grammar reviewer",
        {"item": "a", "stage": "grammar", "reviewer": "p4", "verdict": "pass"},
        "holds no role on the item but the subset checklist",
    ),
]


@pytest.mark.parametrize(("name", "row", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_the_refusals_that_remain_name_their_rule(
    workspace: Workspace, tmp_path: Path, name: str, row: dict[str, Any], message: str
) -> None:
    cli = pool_workspace(workspace, tmp_path)
    if name == "an exposed D":
        assert cli("export", "items", str(tmp_path / "out.jsonl"), "--by", "p4").exit_code == 0
    if name in ("E as D", "D as E", "D as the grammar reviewer"):
        first = (
            {"group": "g1", "stage": "group_integration", "reviewer": "p5", "verdict": "pass"}
            if name == "E as D"
            else {"item": "a", "stage": "answer_check", "reviewer": "p4", "answer": "A"}
        )
        assert cli.import_reviews([first]).exit_code == 0
    result = cli.import_reviews([row])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert message in said and ".jsonl:1: reviewer:" in said and "nothing was recorded" in said


def test_label_studio_pulls_judge_annotations_by_the_same_rule(workspace: Workspace, tmp_path: Path) -> None:
    """A pulled annotation passes ``StageGuard`` (what the Label Studio bridge asks per annotation) exactly when
    the rule lets its person do that stage now."""
    from curation.kinds import stage_named
    from curation.reviews import StageGuard

    cli = pool_workspace(workspace, tmp_path)
    who = letters("p1")
    rows = [r for item in ("a", "b") for r in reviews(item, ITEMS[item][0], who, "CB")]
    assert cli.import_reviews(rows).exit_code == 0

    def guard(stage: str) -> StageGuard:
        found = stage_named(stage)
        assert found is not None
        return StageGuard(workspace, found)

    group = guard("group_integration")
    assert group.refusal(who["E"], "group:g1") is None
    for letter in "BCD":
        assert "separation:triad" in (group.refusal(who[letter], "group:g1") or "")
    assert "authored an item of group 'g1'" in (group.refusal(who["A"], "group:g1") or "")
    blind = guard("answer_check")
    assert blind.refusal(who["D"], "item:a") is None
    assert "separation:triad" in (blind.refusal(who["B"], "item:a") or "")
    assert blind.refusal(who["A"], "item:a") == "'p1' authored 'a': nobody reviews their own item"
