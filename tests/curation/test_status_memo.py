"""Statuses kept between runs (``curation.status_memo``): after every kind of change a run derives only the
groups it touched, and gives what a derivation of the whole workspace gives, on SQLite and PostgreSQL.

A pool of five on TRIAD's stages (``test_pool_of_five``): p1 writes group g1 (a, b), p2 group g2 (c, d)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curation import status_memo
from curation.exposure import reveal
from curation.split_derivation import derive_statuses
from curation.status_memo import MEMO_PATH, memoized_statuses
from curation.workspace import CONFIG_NAME, Workspace
from tests.curation.test_pool_of_five import ITEMS, Cli, group_review, letters, pool_workspace, reviews
from tests.media_factory import item_row, write_items

Documents = tuple[list[dict[str, Any]], list[tuple[str, Any]]]


def _documents(found: tuple[list[Any], dict[str, Any]]) -> Documents:
    statuses, gaps = found
    return [st.as_json() for st in statuses], list(gaps.items())


@pytest.fixture
def derived(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The items of each derivation a memoized run makes (none when it kept every group)."""
    made: list[list[str]] = []

    def counted(ws: Workspace, rows: Any, **options: Any) -> Any:
        made.append([r[0] for r in rows.items])
        return derive_statuses(ws, rows, **options)

    monkeypatch.setattr(status_memo, "derive_statuses", counted)
    return made


def _run(ws: Workspace, derived: list[list[str]]) -> tuple[Documents, list[str] | None]:
    """A memoized run checked against a derivation of the whole: its documents, and the items it derived."""
    before = len(derived)
    found = _documents(memoized_statuses(ws))
    assert found == _documents(derive_statuses(ws)), "the memo changed a status"
    assert len(derived) - before <= 1
    return found, derived[-1] if len(derived) > before else None


@pytest.fixture
def pool(workspace: Workspace, tmp_path: Path) -> Cli:
    return pool_workspace(workspace, tmp_path)


def test_a_second_run_derives_nothing_and_a_review_its_group_alone(pool: Cli, derived: list[list[str]]) -> None:
    ws = pool.ws
    first, items = _run(ws, derived)
    assert items == ["a", "b", "c", "d"], "nothing kept: every group is derived"
    assert (ws.root / MEMO_PATH).is_file()
    again, items = _run(ws, derived)
    assert items is None and again == first
    rows = [r for item in ("c", "d") for r in reviews(item, ITEMS[item][0], letters("p2"), "CB")]
    assert pool.import_reviews(rows).exit_code == 0
    after, items = _run(ws, derived)
    assert items == ["c", "d"], "only g2's records changed"
    assert {st["id"]: st["stage"] for st in after[0]} == {
        "a": "grammar",
        "b": "grammar",
        "c": "group_integration",
        "d": "group_integration",
    }
    assert pool.import_reviews([group_review("g2", letters("p2"))]).exit_code == 0
    final, items = _run(ws, derived)
    assert items == ["c", "d"]
    assert {st["id"]: st["state"] for st in final[0]} == {
        "a": "in_review",
        "b": "in_review",
        "c": "admitted",
        "d": "admitted",
    }


@pytest.mark.parametrize("change", ["discard", "override", "exposure", "revision"])
def test_each_input_of_a_group_derives_it_again(
    pool: Cli, derived: list[list[str]], tmp_path: Path, change: str
) -> None:
    ws = pool.ws
    assert pool("people", "add", "m", "-r", "maintainer").exit_code == 0
    rows = [r for item in ("a", "b") for r in reviews(item, ITEMS[item][0], letters("p1"), "CB")]
    assert pool.import_reviews(rows).exit_code == 0
    before, _ = _run(ws, derived)
    if change == "discard":
        result = pool("decide", "b", "discard", "--by", "m", "--reason", "a duplicate of c")
    elif change == "override":
        args = ("--stage", "group_integration", "--verdict", "fail")
        result = pool("decide", "a", "override", "--by", "m", "--reason", "the group reads as one item", *args)
    elif change == "exposure":  # p4 is shown a's label: they may no longer do its blind check
        reveal(ws, "p4", ["a"], "test")
        result = None
    else:  # p1 imports a new revision of a: its records are for the old one
        edit = item_row("a", author="p1", question="Which feeling is meant?")
        result = pool("import", "items", str(write_items(tmp_path / "items", [edit], name="edit.jsonl")))
    assert result is None or result.exit_code == 0, result.output
    after, items = _run(ws, derived)
    assert items == ["a", "b"], f"a {change} in g1 derives g1 alone"
    assert after != before or change == "exposure"


def test_the_settings_the_people_and_the_code_derive_every_group(
    pool: Cli, derived: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = pool.ws
    _run(ws, derived)
    ws.settings.review.separation = "author_only"
    ws.settings.save(ws.root / CONFIG_NAME)
    _, items = _run(ws, derived)
    assert items == ["a", "b", "c", "d"], "a review setting is every group's input"
    assert pool("people", "add", "p6", "-r", "reviewer").exit_code == 0
    _, items = _run(ws, derived)
    assert items == ["a", "b", "c", "d"], "who may review is every group's input"
    _, items = _run(ws, derived)
    assert items is None
    stamp = status_memo._code_stamp()
    monkeypatch.setattr(status_memo, "_code_stamp", lambda: [*stamp, ("kinds/new.py", 1, 1)])
    _, items = _run(ws, derived)
    assert items == ["a", "b", "c", "d"], "an edit of the code derives everything again"


def test_a_split_derivation_hashes_the_groups_while_the_child_derives(
    pool: Cli, derived: list[list[str]], forks: list[int]
) -> None:
    first, items = _run(pool.ws, derived)
    assert items == ["a", "b", "c", "d"] and len(forks) == 2, "the memoized run and the check each split"
    memo = json.loads((pool.ws.root / MEMO_PATH).read_text(encoding="utf-8"))
    assert sorted(memo["groups"]) == ["g1", "g2"]
    kept, items = _run(pool.ws, derived)
    assert items is None and kept == first, "the keys hashed beside the child are the ones a later run finds"


def test_staffing_gaps_are_kept_with_their_statuses(
    workspace: Workspace, tmp_path: Path, derived: list[list[str]]
) -> None:
    pool_workspace(workspace, tmp_path, ("p1", "p2", "p3"))
    first, _ = _run(workspace, derived)
    assert {item for item, _ in first[1]} == {"a", "b", "c", "d"}, "three people cannot staff TRIAD's stages"
    kept, items = _run(workspace, derived)
    assert items is None and kept == first


def _write_memo(ws: Workspace, text: str) -> None:
    (ws.root / MEMO_PATH).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [
        lambda memo: "{not json",
        lambda memo: json.dumps({**memo, "format": 0}),
        lambda memo: json.dumps([memo]),
        # an entry whose key matches but whose statuses are another group's, or malformed
        lambda memo: json.dumps(
            {**memo, "groups": {**memo["groups"], "g1": [memo["groups"]["g1"][0], *memo["groups"]["g2"][1:]]}}
        ),
        lambda memo: json.dumps(
            {**memo, "groups": {**memo["groups"], "g1": [memo["groups"]["g1"][0], [{"id": "a"}], {}]}}
        ),
        lambda memo: json.dumps({**memo, "groups": {**memo["groups"], "g1": [memo["groups"]["g1"][0], 1, 2]}}),
    ],
)
def test_a_damaged_memo_is_derived_past_and_written_again(
    pool: Cli, derived: list[list[str]], damage: Callable[[dict[str, Any]], str]
) -> None:
    ws = pool.ws
    first, _ = _run(ws, derived)
    memo = json.loads((ws.root / MEMO_PATH).read_text(encoding="utf-8"))
    _write_memo(ws, damage(memo))
    again, items = _run(ws, derived)
    assert again == first and items is not None and {"a", "b"} <= set(items)
    assert json.loads((ws.root / MEMO_PATH).read_text(encoding="utf-8")) == memo, "written whole again"


def test_a_workspace_whose_memo_cannot_be_written_still_answers(pool: Cli, derived: list[list[str]]) -> None:
    ws = pool.ws
    in_the_way = ws.root / MEMO_PATH.parent
    in_the_way.write_text("a file where the memo's folder would be", encoding="utf-8")
    before = sorted(p.name for p in ws.root.iterdir())
    first, items = _run(ws, derived)
    again, items_again = _run(ws, derived)
    assert again == first and items == items_again == ["a", "b", "c", "d"]
    assert in_the_way.read_text(encoding="utf-8") == "a file where the memo's folder would be"
    assert sorted(p.name for p in ws.root.iterdir()) == before, "nothing left behind"


def test_the_cli_keeps_statuses_between_runs(pool: Cli, derived: list[list[str]]) -> None:
    first = pool.status()
    memo = json.loads((pool.ws.root / MEMO_PATH).read_text(encoding="utf-8"))
    assert sorted(memo["groups"]) == ["g1", "g2"]
    assert pool.status() == first
    result = pool("funnel", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["states"]["in_review"] == 4
    assert derived == [["a", "b", "c", "d"]], "the second status and the funnel derived nothing"
    assert pool.import_reviews(reviews("a", "A", letters("p1"), "CB")[:1]).exit_code == 0  # a grammar sign-off
    pool.status()
    assert derived[-1] == ["a", "b"], "a review of a derives its group again"
    assert [p.name for p in (pool.ws.root / MEMO_PATH.parent).iterdir()] == [MEMO_PATH.name], "no temporary left"
