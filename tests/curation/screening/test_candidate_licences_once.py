"""`import candidates` judges each distinct licence text once (issue 47: a corpus names a few licences on every
line); every line that names a refused one is still reported, with its own line number."""

from __future__ import annotations

import json

import pytest

from curation.errors import ValidationFailed
from curation.screening.importer import read_candidates
from omnicurate.demo.story_corpus import build_corpus

ACCEPTED = ["CC-BY-4.0", "CC0-1.0"]


def test_every_line_with_a_refused_licence_is_reported(tmp_path) -> None:  # type: ignore[no-untyped-def]
    corpus = build_corpus(tmp_path / "story", books=2)
    lines = [json.loads(line) for line in corpus.candidates.read_text(encoding="utf-8").splitlines()]
    assert len(lines) >= 4
    closed = {0, 2, 3}
    for k in closed:
        lines[k]["source"]["license"] = "All rights reserved"
    lines[1]["source"]["license"] = "CC0-1.0"
    mixed = corpus.candidates.parent / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        read_candidates(mixed, None, ACCEPTED)
    refused = [p for p in caught.value.problems if p.field == "source.license"]
    assert [p.line for p in refused] == [k + 1 for k in sorted(closed)]
    assert all('"All rights reserved" is not an open licence' in p.message for p in refused)
    lines[0]["source"]["license"] = lines[2]["source"]["license"] = lines[3]["source"]["license"] = "CC-BY-4.0"
    mixed.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert len(read_candidates(mixed, None, ACCEPTED)) == len(lines)
