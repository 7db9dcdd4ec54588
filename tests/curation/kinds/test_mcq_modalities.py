"""``mcq`` over {text, image}: import, reviews, Definition 1 over its own views, the checker's prompts, release."""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from checker.estimators import EstimatorConfig
from checker.prompts import build_request
from checker.views import ProbeItem
from curation.config import MediaSettings
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.mediatools import normalize_image
from curation.review_queues import review_queue
from curation.reviews import import_reviews
from curation.vocab import PLACEHOLDERS
from curation.workflow import derive_status
from curation.workspace import Workspace
from devsupport.reviews import BLIND, CHECKLIST, GRAMMAR, GROUP, PASSING_EXCLUSIONS
from exports.build import build_release
from exports.verify import verify_release
from tests.exports.workspace_factory import REVIEWERS, distinct_context

SETS = {"text": ["A", "B", "C"], "image": ["A", "B"], "text+image": ["A"]}


def rows() -> list[dict[str, Any]]:
    """Two image-perturbed sisters over {text, image}: same context, different images, answers A and B."""
    out = []
    for suffix, answer in (("a", "A"), ("b", "B")):
        out.append(
            {
                "id": f"ti-{suffix}",
                "group": "ti",
                "modalities": ["text", "image"],
                "perturbed": "image",
                "author": "ann1",
                "context": distinct_context("ti"),
                "image": f"media/ti-{suffix}.jpg",
                "question": "Which object is in the box?",
                "options": {"A": "apple", "B": "brick", "C": "cloud", "D": "drum"},
                "answer": answer,
                "taxonomy": {"text": "anaphoric", "image": "grounding"},
                "ambiguous": ["text", "image"],
                "provenance": {"image": {"source": "photo", "license": "CC0-1.0"}},
            }
        )
    return out


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def setup(ws: Workspace, folder: Path) -> Path:
    ws.add_person("ann1", ["author"])
    for r in REVIEWERS:
        ws.add_person(r, ["reviewer"])
    for row in rows():
        target = folder / row["image"]
        target.parent.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(zlib.crc32(row["id"].encode()))
        raw = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)).save(raw, "PNG")
        target.write_bytes(normalize_image(raw.getvalue(), target.name, MediaSettings()).data)
    return write(folder / "items.jsonl", rows())


def reviews(answer_of: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item, answer in answer_of.items():
        out += [{"item": item, "stage": "grammar", "reviewer": r, "verdict": "pass"} for r in GRAMMAR]
        sets = {**SETS, "text+image": [answer]}
        out += [
            {
                "item": item,
                "stage": "subset_checklist",
                "reviewer": r,
                "consistent": sets,
                "exclusions": PASSING_EXCLUSIONS,
            }
            for r in CHECKLIST
        ]
        out.append({"item": item, "stage": "answer_check", "reviewer": BLIND, "answer": answer})
    out.append({"group": "ti", "stage": "group_integration", "reviewer": GROUP, "verdict": "pass"})
    return out


def test_text_image_items_go_through_their_own_stages_views_and_release(
    make_workspace: Callable[[str], Workspace], tmp_path: Path
) -> None:
    ws = make_workspace("ws")
    report = import_items(ws, setup(ws, tmp_path / "in"))
    assert report.created == ["ti-a", "ti-b"]
    assert {(st.kind, st.stage) for st in derive_status(ws)} == {("mcq", "grammar")}

    # audio_signoff does not apply; a checklist answers exactly the item's three views
    refused = [
        {
            "item": "ti-a",
            "stage": "audio_signoff",
            "reviewer": "rev1",
            "scores": dict.fromkeys(("naturalness", "clarity", "artefacts"), 4),
        },
        {
            "item": "ti-a",
            "stage": "subset_checklist",
            "reviewer": "rev1",
            "consistent": {
                **SETS,
                "audio": ["A", "B"],
                "text+audio": ["A", "B"],
                "image+audio": ["A", "B"],
                "text+image+audio": ["A"],
            },
        },
    ]
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, write(tmp_path / "bad.jsonl", refused))
    messages = [str(p) for p in exc.value.problems]
    assert any("audio_signoff' does not apply to 'ti-a'" in m for m in messages)
    assert any("its checklist answers exactly the views text, image, text+image" in m for m in messages)

    import_reviews(ws, write(tmp_path / "r.jsonl", reviews({"ti-a": "A", "ti-b": "B"})))
    assert {st.id: st.state for st in derive_status(ws)} == {"ti-a": "admitted", "ti-b": "admitted"}
    assert review_queue(ws, "audio_signoff", "rev1") == []

    # Definition 1 over {text, image}: the text view alone leaving one option makes the item reducible
    again = {**SETS, "text": ["A"]}
    import_reviews(
        ws,
        write(
            tmp_path / "r2.jsonl",
            [
                {
                    "item": "ti-a",
                    "stage": "subset_checklist",
                    "reviewer": r,
                    "consistent": again,
                    "exclusions": PASSING_EXCLUSIONS,
                }
                for r in CHECKLIST
            ],
        ),
    )
    status = {st.id: st for st in derive_status(ws)}["ti-a"]
    assert (status.state, status.stage, status.reasons) == (
        "returned",
        "subset_checklist",
        ["reducible:text", "not_enlarging:image"],
    )
    import_reviews(ws, write(tmp_path / "r3.jsonl", reviews({"ti-a": "A"})[1:4]))

    result = build_release(ws, "1.0.0", out=tmp_path / "release")
    records = [json.loads(line) for line in (result.path / "data/items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["ti-a", "ti-b"]
    assert not any(key.startswith("audio") or key == "taxonomy_audio" for r in records for key in r)
    assert records[0]["image"].startswith("media/") and records[0]["taxonomy_image"] == "grounding"
    admission = json.loads((result.path / "admission.jsonl").read_text().splitlines()[0])
    assert "audio_signoff" not in admission["stages"]
    assert admission["stages"]["subset_checklist"]["consistent"] == {
        "text": ["A", "B", "C"],
        "image": ["A", "B"],
        "text+image": ["A"],
    }
    assert verify_release(result.path).mismatches == []


def test_the_checker_probes_the_items_own_views_with_its_own_placeholders(tmp_path: Path) -> None:
    item = ProbeItem(
        id="ti-a",
        content_hash="h",
        context="The box is by the window.",
        question="Which object is in the box?",
        options={"A": "apple", "B": "brick"},
        answer="A",
        image=tmp_path / "x.jpg",
        audio=None,
        image_sha="i",
        audio_sha="",
        modalities=("text", "image"),
    )
    assert item.views == ("none", "text", "image", "text+image") and item.full_view == "text+image"
    prompts = {view: build_request(item, view) for view in item.views}
    for request in prompts.values():
        assert "Audio" not in request.prompt_text and PLACEHOLDERS["audio"] not in request.prompt_text
        assert request.audio is None and request.audio_route == "hidden"
    none, text, image, both = (prompts[v] for v in item.views)
    assert PLACEHOLDERS["text"] in none.prompt_text and PLACEHOLDERS["image"] in none.prompt_text
    assert none.image is None
    assert "The box is by the window." in text.prompt_text and PLACEHOLDERS["image"] in text.prompt_text
    assert PLACEHOLDERS["text"] in image.prompt_text and "<image>" in image.prompt_text and image.image is not None
    assert both.prompt_text.startswith("Context (text): The box is by the window.\nImage: <image>\nQuestion:")
    config = EstimatorConfig()
    assert config.k_for("text+image", both.full_view) == config.k_full
    assert config.k_for("text+image") == config.k_strict  # for a TRIAD item text+image is a strict view
    with pytest.raises(ValueError, match="not one of its views"):
        build_request(item, "audio")
