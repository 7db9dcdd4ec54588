"""The reference's vocabularies page (scripts/reference_vocabularies.py) lists every closed list a field takes,
from the code: a leaf, a source or a stage added there appears on the page (and ``--check`` fails until the page
is written again)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, create_model

ROOT = Path(__file__).resolve().parents[2]


def _generator():  # type: ignore[no-untyped-def]
    if "gen_reference" not in sys.modules:
        spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["gen_reference"] = module
        spec.loader.exec_module(module)
    return sys.modules["gen_reference"]


def test_the_page_lists_the_18_leaves_with_their_definitions_and_every_source() -> None:
    from curation.taxonomy import TAXONOMY
    from curation.vocab import AUDIO_SOURCES, IMAGE_SOURCES

    page = (ROOT / "docs" / "reference" / "vocabularies.md").read_text(encoding="utf-8")
    assert sum(len(leaves) for leaves in TAXONOMY.values()) == 18 and "18 leaves in all" in page
    for modality, leaves in TAXONOMY.items():
        assert f"### {modality} ({len(leaves)} leaves)" in page
        for leaf in leaves.values():
            assert f"| `{leaf.name}` | {' '.join(leaf.definition.split())} |" in page
    for source in (*IMAGE_SOURCES, *AUDIO_SOURCES):
        assert f"`{source}`" in page


def test_every_stage_of_every_kind_and_the_fixed_values_of_a_new_field_appear() -> None:
    from curation.kinds import kinds
    from scripts.reference_vocabularies import literal_fields, vocabularies_page

    gen = _generator()
    page = gen.Pages().builders["vocabularies.md"]()
    for kind in kinds():
        for stage in kind.stages:
            assert f"| `{kind.name}` | `{stage.name}` |" in page
    assert list(literal_fields(create_model("Free", __base__=BaseModel, colour=(str, ...)))) == []
    graded = create_model("Graded", __base__=BaseModel, grade=(Literal["low", "high"], ...))
    assert "| Graded | `grade` | yes | `low`, `high` |" in vocabularies_page([("Graded", graded)])
