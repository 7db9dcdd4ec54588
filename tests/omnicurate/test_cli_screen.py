"""`curate import candidates`, `curate screen`, `curate funnel` and `curate story-audit` as users meet them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from omnicurate.cli.main import app
from omnicurate.demo.story_corpus import build_corpus

runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_import_screen_funnel_and_audit(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = build_corpus(tmp_path / "corpus", books=10)
    w = ["-w", str(workspace.root)]
    imported = invoke(*w, "import", "candidates", str(corpus.candidates), "--json")
    assert imported.exit_code == 0
    assert json.loads(imported.stdout) == {"created": corpus.transitions, "updated": 0, "unchanged": 0}
    no_model = invoke(*w, "screen")
    assert no_model.exit_code == 2 and "needs a model" in no_model.stderr
    screened = invoke(*w, "screen", "--backend", f"replay:{corpus.replay}", "--json")
    assert screened.exit_code == 0
    funnel = json.loads(screened.stdout)
    assert [s["step"] for s in funnel["steps"]] == [
        "length",
        "speech",
        "language",
        "image",
        "score",
        "select",
        "annotate",
    ]
    assert funnel["candidates"] == corpus.transitions and funnel["kept"] == len(corpus.books) - 1
    shown = json.loads(invoke(*w, "funnel", "--json").stdout)
    assert shown["screening"]["kept"] == funnel["kept"] and "states" in shown
    assert shown["screening"]["steps"][0]["reasons"] == {"length:next_too_long": 1}
    table = invoke(*w, "funnel")
    assert "language:sw" in table.stdout and "select:not_best_in_book" in table.stdout
    audit = json.loads(invoke(*w, "story", "audit", "--selected", "--json").stdout)
    assert audit["items"] == funnel["kept"] and len(audit["clusters"]) == 1
    assert audit["reference_span"]["flagged"] == [corpus.planted["reference_span"]]


def test_bad_candidate_file_names_file_line_and_field(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    result = invoke("-w", str(workspace.root), "import", "candidates", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:1: book: required field is missing" in result.stderr
    assert "nothing was imported" in " ".join(result.stderr.split())
