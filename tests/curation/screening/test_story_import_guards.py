"""Issue 22, case 6 for the story kind, on SQLite and PostgreSQL: an imported transition's `revised_by` names
people of the workspace, and a value that differs from the model's proposal must name its reviser, so that a
file cannot credit the model with a person's words (forged model provenance). Nothing of a refused file is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from curation.errors import ValidationFailed
from curation.items import export_items, import_items
from curation.tables import Item
from curation.workspace import Workspace
from tests.curation.screening.test_screening_story_kind import corpus as corpus  # noqa: F401  (fixture)
from tests.curation.screening.test_screening_story_kind import story_ws as story_ws  # noqa: F401  (fixture)


def _exported(ws: Workspace, tmp_path: Path) -> tuple[Path, list[dict]]:
    out = tmp_path / "export" / "items.jsonl"
    export_items(ws, out)
    return out, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _rewrite(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def _count(ws: Workspace) -> int:
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(Item)).scalar_one()


def test_revised_by_must_name_a_person(story_ws, make_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    path, lines = _exported(story_ws, tmp_path)
    lines[-1]["conditions"]["scene"] = "a wet road"
    lines[-1]["revised_by"] = {"conditions.scene": "nobody"}
    _rewrite(path, lines)
    other = make_workspace("other")
    other.add_person("rev1", ["reviewer"])
    with pytest.raises(ValidationFailed) as exc:
        import_items(other, path)
    assert str(exc.value).startswith(
        f"{path}:{len(lines)}: revised_by.conditions.scene: 'nobody' is not a person of this workspace"
    )
    assert _count(other) == 0
    lines[-1]["revised_by"] = {"conditions.scene": "rev1"}
    _rewrite(path, lines)
    assert len(import_items(other, path).created) == len(lines)


def test_a_changed_value_without_a_reviser_is_refused(story_ws, make_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    path, lines = _exported(story_ws, tmp_path)
    lines[0]["conditions"]["scene"] = "written by a person, credited to the model"
    _rewrite(path, lines)
    other = make_workspace("other")
    with pytest.raises(ValidationFailed) as exc:
        import_items(other, path)
    assert f"{path}:1: conditions.scene: differs from the model's proposal but revised_by names no reviewer" in str(
        exc.value
    )
    assert _count(other) == 0
