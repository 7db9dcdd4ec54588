"""The manual's reference is generated from the code, and the check fails when they disagree."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel, create_model

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_reference"] = module
    spec.loader.exec_module(module)
    return module


gen = _generator()


def test_the_committed_reference_matches_the_code() -> None:
    assert gen.stale_pages() == [], "run `python scripts/gen_reference.py` and commit docs/reference"


def test_a_new_setting_makes_the_check_fail_until_the_pages_are_regenerated(tmp_path: Path) -> None:
    from curation.config import ReviewSettings, Settings

    review = create_model("ReviewSettings", __base__=ReviewSettings, second_look_quorum=(int, 3))
    changed = create_model("Settings", __base__=Settings, review=(review, review()))
    pages = gen.Pages({"settings.md": lambda: gen.settings_page(changed)})
    assert gen.stale_pages(pages) == ["settings.md"]
    assert "| `second_look_quorum` | integer | `3` |" in gen.settings_page(changed)
    (tmp_path / "settings.md").write_text(gen.settings_page(changed), encoding="utf-8")
    assert gen.stale_pages(pages, tmp_path) == []


def test_a_changed_format_field_makes_the_check_fail() -> None:
    from curation.kinds.judge.schema import TaskLine

    changed = create_model("TaskLine", __base__=TaskLine, difficulty=(str | None, None))
    sys.modules[__name__].ChangedTaskLine = changed  # type: ignore[attr-defined]
    formats = [
        gen.Format(f.title, f"{__name__}:ChangedTaskLine", f.command, f.example, f.note, f.dispatch)
        if f.model.endswith(":TaskLine")
        else f
        for f in gen.FORMATS
    ]
    page = gen.formats_page(formats)
    assert "| `difficulty` | string \\| null | no | `null` |" in page
    assert gen.stale_pages(gen.Pages({"formats.md": lambda: page})) == ["formats.md"]


def test_an_example_the_model_refuses_fails_the_generator() -> None:
    item = next(f for f in gen.FORMATS if f.model == "curation.schema:ItemContent")
    broken = gen.Format(
        item.title, item.model, item.command, {k: v for k, v in item.example.items() if k != "ambiguous"}
    )
    with pytest.raises(ValueError, match="ambiguous"):
        gen.formats_page([broken])


def test_every_command_setting_and_format_is_in_the_reference() -> None:
    from curation.config import Settings

    cli = (ROOT / "docs/reference/cli.md").read_text(encoding="utf-8")
    for command in ("release verify", "judge checklist show", "story study window", "stats kappa", "doctor", "ls up"):
        assert f"## `{command}`" in cli, command
    settings = (ROOT / "docs/reference/settings.md").read_text(encoding="utf-8")
    for section, model in Settings.model_fields.items():
        assert isinstance(model.default, BaseModel)
        assert f"## `[{section}]`" in settings, section
    formats = (ROOT / "docs/reference/formats.md").read_text(encoding="utf-8")
    assert '| `ambiguous` | list["text" \\| "image" \\| "audio"] | yes |' in formats
    reasons = (ROOT / "docs/reference/reasons.md").read_text(encoding="utf-8")
    assert "| `reducible:<view>` |" in reasons and "| `group:sister_pending` |" in reasons


def test_the_check_mode_exits_1_naming_the_stale_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gen, "REFERENCE", tmp_path)
    assert gen.main([]) == 0 and {p.name for p in tmp_path.iterdir()} == set(gen.Pages().builders)
    assert gen.main(["--check"]) == 0
    (tmp_path / "reasons.md").write_text("edited by hand\n", encoding="utf-8")
    assert gen.main(["--check"]) == 1
