"""Every reason the demos of the three kinds give is a listed code (curation.reasons, the manual's reference)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from curation.reasons import REASONS, is_known_reason
from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


def _reasons(workspace: Path) -> set[str]:
    status = runner.invoke(app, ["-w", str(workspace), "status", "--json"])
    funnel = runner.invoke(app, ["-w", str(workspace), "funnel", "--json"])
    assert status.exit_code == 0 and funnel.exit_code == 0, status.output + funnel.output
    found = {r for row in json.loads(status.stdout) for r in row["reasons"]}
    steps = json.loads(funnel.stdout).get("screening", {}).get("steps", [])
    return found | {r for step in steps for r in step["reasons"]}


def test_the_demos_of_every_kind_give_only_listed_reason_codes(tmp_path: Path, demo_templates: DemoTemplates) -> None:
    seen: set[str] = set()
    for name in ("mcq", "judge", "story"):
        demo_templates.copy(name, tmp_path / name).close()
        seen |= _reasons(tmp_path / name)
    queries = runner.invoke(app, ["-w", str(tmp_path / "judge"), "judge", "queries", "list", "--json"])
    seen |= {r for q in json.loads(queries.stdout) for r in q["reasons"]}  # every query reason: test_query_reasons
    unknown = sorted(r for r in seen if not is_known_reason(r))
    assert unknown == [], f"add these codes to curation/reasons.py (they reach the manual from there): {unknown}"
    assert {"reducible:image", "group:sister_pending", "filter:drop", "select:not_best_in_book", "screen:nsfw"} <= seen


def test_a_code_matches_only_its_own_pattern() -> None:
    assert is_known_reason("reducible:text+image") and is_known_reason("annotate:invalid_book_meta")
    assert not is_known_reason("reducible") and not is_known_reason("made_up:code")
    assert is_known_reason("licence:unknown:Our own terms") and not is_known_reason("language_not_read:en gb")
    assert all(meaning.strip() for codes in REASONS.values() for meaning in codes.values())
