"""Issue 13, case 2: any text (line separators, control and astral characters) round-trips byte for byte
through import -> export -> import, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from curation.items import export_items, import_items
from curation.workspace import Workspace
from tests.hostile_text import framed
from tests.media_factory import item_row, write_items


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(context=framed(), question=framed(), option=framed())
def test_any_text_round_trips_through_import_export_import(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, context: str, question: str, option: str
) -> None:
    n = len(list(tmp_path.glob("in*")))  # examples so far (tmp_path lives as long as the test)
    if n == 0:
        for name in ("src", "dst"):
            make_workspace(name).add_person("ann1", ["author"])
    source, target = Workspace.open(tmp_path / "src"), Workspace.open(tmp_path / "dst")
    try:
        row = item_row(
            f"p{n}",
            group=f"g{n}",
            context=context,
            question=question,
            options={"A": option, "B": "grateful"},
            audio="media/shared.wav",
        )
        folder = tmp_path / f"in{n}"
        write_items(folder, [row])
        (folder / "items.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")  # raw
        import_items(source, folder / "items.jsonl")
        stored = source.item(f"p{n}")
        assert (stored.context, stored.question, stored.options) == (context, question, {"A": option, "B": "grateful"})

        export_items(source, tmp_path / "out1" / "items.jsonl")
        import_items(target, tmp_path / "out1" / "items.jsonl")
        copied = target.item(f"p{n}")
        assert (copied.context, copied.question, copied.options) == (context, question, {"A": option, "B": "grateful"})
        export_items(target, tmp_path / "out2" / "items.jsonl")
        first = (tmp_path / "out1" / "items.jsonl").read_bytes()
        assert (tmp_path / "out2" / "items.jsonl").read_bytes() == first
        assert first.count(b"\n") == n + 1  # one line per item, whatever the text holds
    finally:
        source.close()
        target.close()
