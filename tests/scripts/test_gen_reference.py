"""The manual's reference is generated from the code, and the check fails when they disagree."""

from __future__ import annotations

import functools
import importlib.util
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel, create_model

from tests.conftest import require_module

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_reference"] = module
    spec.loader.exec_module(module)
    return module


gen = _generator()


@functools.cache
def code_pages() -> dict[str, str]:
    """The reference pages the code gives now, built once for the tests that only compare or write them."""
    return {name: build() for name, build in gen.Pages().builders.items()}


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
    reference = tmp_path / "reference"
    monkeypatch.setattr(gen, "REFERENCE", reference)
    monkeypatch.setattr(gen, "MKDOCS", tmp_path / "mkdocs.yml")
    monkeypatch.setattr(gen.Pages, "render", lambda self: dict(code_pages()))  # what is checked here is main's
    (tmp_path / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text().split(gen.NAV_MARK)[0], encoding="utf-8")
    assert gen.main(["--check"]) == 1  # nothing written yet, and the nav is missing
    assert gen.main([]) == 0 and {p.name for p in reference.iterdir()} == set(gen.Pages().builders)
    assert gen.NAV_MARK in (tmp_path / "mkdocs.yml").read_text()
    assert gen.main(["--check"]) == 0
    (reference / "reasons.md").write_text("edited by hand\n", encoding="utf-8")
    assert gen.main(["--check"]) == 1


def test_a_new_kind_page_joins_the_nav_and_pages_i_did_not_list_are_not_left_out(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "kinds" / "story-books.md").write_text("# Story books: pages from raw scans\n\ntext\n", encoding="utf-8")
    (docs / "audits.md").write_text("# Audits\n", encoding="utf-8")
    config = gen.mkdocs_config(docs, ROOT / "mkdocs.yml")
    nav = config.split(gen.NAV_MARK)[1]
    assert '      - "Story books: pages from raw scans": kinds/story-books.md' in nav
    assert '      - "Audits": audits.md' in nav  # under "More"
    assert nav.index("kinds/mcq.md") < nav.index("reference/cli.md")
    assert config.split(gen.NAV_MARK)[0] == (ROOT / "mkdocs.yml").read_text().split(gen.NAV_MARK)[0]


def test_the_manual_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    require_module("mkdocs", "pip install -e '.[dev]' (mkdocs is in the dev extra)")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "formats" / "index.html").is_file()
    page = (tmp_path / "site" / "cli-conventions" / "index.html").read_text(encoding="utf-8")
    assert "relative to the current folder" in page


def test_every_replay_and_draft_model_is_in_the_reference_or_the_generator_stops() -> None:
    listed = gen.REPLAY_FORMATS
    found = gen.unlisted_replay_models(())
    assert {
        "checker.backends.replay:ReplayLine",
        "checker.replay_formats:StructuredReplayLine",
        "checker.replay_formats:GenerationReplayLine",
        "curation.kinds.judge.drafting:DraftReplayLine",
    } <= set(found), "the scan finds the models the code defines"
    assert gen.unlisted_replay_models(listed) == []
    without = tuple(f for f in listed if not f.model.endswith(":StructuredReplayLine"))
    assert gen.unlisted_replay_models(without) == ["checker.replay_formats:StructuredReplayLine"]
    with pytest.raises(SystemExit, match="checker.replay_formats:StructuredReplayLine"):
        gen.formats_page(replays=without)
    page = (ROOT / "docs/reference/formats.md").read_text(encoding="utf-8")
    for fmt in listed:
        assert f"Model `{fmt.model}`" in page, fmt.model


def test_the_screening_replay_shows_every_task_and_a_refused_answer_stops_the_generator() -> None:
    from curation.screening.model import TASKS

    screening = next(f for f in gen.REPLAY_FORMATS if f.model.endswith(":StructuredReplayLine"))
    assert sorted(e["task"] for e in screening.examples) == sorted(TASKS)
    score = next(e for e in screening.examples if e["task"] == "score")
    broken = {**score, "output": {k: v for k, v in score["output"].items() if k != "transition_coherence"}}
    with pytest.raises(ValueError, match="transition_coherence"):
        gen.formats_page(replays=[*gen.REPLAY_FORMATS, replace(screening, more=(broken,))])
    judge = next(f for f in gen.REPLAY_FORMATS if f.model.endswith(":GenerationReplayLine"))
    unparsed = {**judge.examples[-1], "output": '{"overall": {"comment": "fine"}}'}
    with pytest.raises(ValueError, match="invalid"):
        gen.formats_page(replays=[*gen.REPLAY_FORMATS, replace(judge, more=(unparsed,))])


def test_the_replay_examples_are_read_by_the_backends_that_read_the_files(tmp_path: Path) -> None:
    """The documented lines, written to files, answer the commands' own replay readers."""
    from checker.backends.replay import ReplayBackend
    from checker.drafting import ReplayDrafter
    from checker.generation import ReplayGenerator
    from checker.structured import ReplayStructured
    from curation.screening.model import StructuredRequest

    def written(fmt_model: str) -> tuple[Path, tuple[dict, ...]]:
        fmt = next(f for f in gen.REPLAY_FORMATS if f.model.endswith(fmt_model))
        path = tmp_path / f"{fmt_model.strip(':')}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in fmt.examples), encoding="utf-8")
        return path, fmt.examples

    path, examples = written(":StructuredReplayLine")
    structured = ReplayStructured(str(path))
    requests = [StructuredRequest(e["subject"], e["task"], "", "") for e in examples]
    assert structured.generate(requests) == [e["output"] for e in examples]
    path, examples = written(":GenerationReplayLine")
    generator = ReplayGenerator(str(path))
    assert [generator.generate(e["key"], "", "", [], 0.0, 0) for e in examples] == [e["output"] for e in examples]
    path, examples = written(":DraftReplayLine")
    drafter = ReplayDrafter(str(path))
    assert drafter.caption("v2t-01", "video", Path("clip.mp4")) == examples[0]["captions"]["video"]
    path, _ = written(":ReplayLine")
    assert ReplayBackend(str(path)).model_id
