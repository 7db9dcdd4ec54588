"""Issue 22 (text kept as given) for the story kind, on SQLite and PostgreSQL: a narration with whitespace of
any kind at its ends, and hostile characters inside, round-trips through import -> export -> import."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from curation.items import export_items, import_items
from curation.screening.items import story_item
from curation.workspace import Workspace
from tests.curation.screening.test_screening_story_kind import corpus as corpus  # noqa: F401  (fixture)
from tests.curation.screening.test_screening_story_kind import story_ws as story_ws  # noqa: F401  (fixture)
from tests.curation.test_edge_text_roundtrip import edged


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(current=edged(), following=edged())
def test_story_narration_round_trips(
    story_ws: Workspace,  # noqa: F811
    make_workspace: Callable[[str], Workspace],
    tmp_path: Path,
    current: str,
    following: str,
) -> None:
    n = len(list(tmp_path.glob("export*")))
    source = tmp_path / f"export{n}" / "items.jsonl"
    export_items(story_ws, source)
    line = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    line["id"] = f"edge-{n}"
    line["current"]["text"], line["next"]["text"] = current, following
    source.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    target = Workspace.open(tmp_path / "dst") if n else make_workspace("dst")
    try:
        import_items(target, source)
        stored = story_item(target, f"edge-{n}")
        assert (stored.current.text, stored.next.text) == (current, following)
        again = tmp_path / f"again{n}" / "items.jsonl"
        export_items(target, again)
        [back] = [json.loads(x) for x in again.read_text(encoding="utf-8").splitlines() if f'"edge-{n}"' in x]
        assert (back["current"]["text"], back["next"]["text"]) == (current, following)
        assert import_items(target, again).unchanged == sorted(f"edge-{i}" for i in range(n + 1))
    finally:
        if n:
            target.close()
