"""Issue 22, case 1 ("text is kept as given") as properties, on SQLite and PostgreSQL: text whose ends are
whitespace of any kind (space, tab, form feed, NBSP, U+3000, NEL, U+2028, U+2029, line breaks) is stored as
given, round-trips through import -> export -> import byte for byte, and reaches a release that verifies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.items import export_items, import_items
from curation.workspace import Workspace
from exports.build import build_release
from exports.verify import verify_release
from tests.exports.workspace_factory import fill_workspace, group_rows
from tests.hostile_text import framed
from tests.media_factory import item_row, write_items

EDGE_WHITESPACE = [" ", "\t", "\x0c", "\xa0", "\u3000", "\x85", "\u2028", "\u2029", "\n", "\r", "\x0b"]
edges = st.lists(st.sampled_from(EDGE_WHITESPACE), min_size=1, max_size=4).map("".join)


def edged() -> st.SearchStrategy[str]:
    """Text that does not start and end with a letter: whitespace of every kind on both sides."""
    return st.tuples(edges, framed(), edges).map("".join)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(context=edged(), question=edged(), option=edged())
def test_edge_whitespace_round_trips_through_import_export_import(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, context: str, question: str, option: str
) -> None:
    n = len(list(tmp_path.glob("in*")))
    if n == 0:
        for name in ("src", "dst"):
            make_workspace(name).add_person("ann1", ["author"])
    source, target = Workspace.open(tmp_path / "src"), Workspace.open(tmp_path / "dst")
    try:
        options = {"A": option, "B": "grateful"}
        row = item_row(f"e{n}", group=f"g{n}", context=context, question=question, options=options)
        folder = tmp_path / f"in{n}"
        write_items(folder, [row])
        (folder / "items.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
        import_items(source, folder / "items.jsonl")
        stored = source.item(f"e{n}")
        assert (stored.context, stored.question, stored.options) == (context, question, options)
        export_items(source, tmp_path / f"out{n}" / "items.jsonl")
        import_items(target, tmp_path / f"out{n}" / "items.jsonl")
        copied = target.item(f"e{n}")
        assert (copied.context, copied.question, copied.options) == (context, question, options)
        assert import_items(target, tmp_path / f"out{n}" / "items.jsonl").unchanged  # nothing changed again
    finally:
        source.close()
        target.close()


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=edges, right=edges)
def test_edge_whitespace_reaches_a_release_that_verifies(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, left: str, right: str
) -> None:
    n = len(list(tmp_path.glob("ws*")))
    ws = make_workspace(f"ws{n}")
    rows = group_rows("g1")
    for row in rows:
        row["question"] = f"{left}How does the speaker feel?{right}"
    fill_workspace(ws, tmp_path / f"input{n}", rows)
    result = build_release(ws, "1.0.0", out=tmp_path / f"release{n}")
    assert verify_release(result.path).ok
    released = [json.loads(x) for x in (result.path / "data" / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["question"] for r in released} == {f"{left}How does the speaker feel?{right}"}
