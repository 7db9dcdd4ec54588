"""``curate media normalize`` and a release for every modality set ``curate kinds`` lists for ``mcq`` that lacks a
medium: {text, image}, {text, audio} and {image, audio} items (raw media, off the recording spec) are normalized,
pass ``media:format``, are admitted by a pool of five and released, and ``release verify`` finds nothing wrong.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curation.vocab import checklist_views_of
from curation.workspace import Workspace
from devsupport.media_factory import make_image, make_tone
from devsupport.reviews import PASSING_EXCLUSIONS
from omnicurate.cli.main import app

POOL = ("p1", "p2", "p3", "p4", "p5")
A, B, C, D, E = POOL
"""TRIAD's letters on every item here: p1 writes, the other four review (see docs/kinds/mcq-pool-of-five.md)."""
OPTIONS = {"A": "apple", "B": "brick", "C": "cloud", "D": "drum"}
TAXONOMY = {"text": "anaphoric", "image": "grounding", "audio": "prosodic"}
PROVENANCE = {
    "image": {"source": "photo", "license": "CC0-1.0"},
    "audio": {"source": "voice_acting", "license": "CC0-1.0"},
}
SETS = [("text", "image"), ("text", "audio"), ("image", "audio")]


def item_line(modalities: tuple[str, ...], suffix: str, answer: str, index: int) -> dict[str, Any]:
    perturbed = "image" if "image" in modalities and "audio" not in modalities else "audio"
    row: dict[str, Any] = {
        "id": f"x-{suffix}",
        "group": "x",
        "modalities": list(modalities),
        "perturbed": perturbed,
        "language": "en",
        "author": A,
        "question": "Which object is meant?",
        "options": OPTIONS,
        "answer": answer,
        "taxonomy": {m: TAXONOMY[m] for m in modalities},
        "ambiguous": list(modalities),
        "provenance": {m: PROVENANCE[m] for m in modalities if m != "text"},
    }
    if "text" in modalities:
        row["context"] = "She put it down next to the other one before anyone noticed."
    if "image" in modalities:
        row["image"] = f"media/{suffix if perturbed == 'image' else 'shared'}.png"
    if "audio" in modalities:
        row["audio"] = f"media/{suffix}.wav"
    return row


def raw_media(folder: Path, rows: list[dict[str, Any]]) -> None:
    """Media off the spec: oversized PNG images, 44.1 kHz tones far from -23 LUFS."""
    for i, row in enumerate(rows):
        if "image" in row and not (folder / row["image"]).exists():
            make_image(folder / row["image"], colour=["red", "blue"][i % 2], size=(1600, 1200), fmt="PNG")
        if "audio" in row:
            make_tone(folder / row["audio"], freq=330.0 + 110 * i, seconds=2.0, rate=44100, gain=0.05)


def checklist(modalities: tuple[str, ...], answer: str) -> dict[str, list[str]]:
    """Definition 1 over the item's own views: every strict view leaves two or more options, the full one only
    the answer, and dropping any modality enlarges the set."""
    other = "B" if answer == "A" else "A"
    full = "+".join(modalities)
    out = {}
    for view in checklist_views_of(modalities):
        if view == full:
            out[view] = [answer]
        elif "+" in view:
            out[view] = sorted([answer, other])
        else:
            out[view] = sorted([answer, other, "C"])
    return out


def reviews(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in rows:
        item, answer, modalities = row["id"], row["answer"], tuple(row["modalities"])
        # grammar applies to every mcq item: questions and options are text whatever the modalities
        out += [{"item": item, "stage": "grammar", "reviewer": who, "verdict": "pass"} for who in (B, C)]
        if "audio" in modalities:
            scores = {"naturalness": 4, "clarity": 4, "artefacts": 4}
            out += [{"item": item, "stage": "audio_signoff", "reviewer": who, "scores": scores} for who in (C, B)]
        sets = checklist(modalities, answer)
        out += [
            {
                "item": item,
                "stage": "subset_checklist",
                "reviewer": who,
                "consistent": sets,
                "exclusions": PASSING_EXCLUSIONS,
            }
            for who in (B, C, D)
        ]
        out.append({"item": item, "stage": "answer_check", "reviewer": D, "answer": answer})
    out.append({"group": "x", "stage": "group_integration", "reviewer": E, "verdict": "pass"})
    return out


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_two_modality_set_is_checked() -> None:
    assert sorted(SETS) == sorted(combinations(("text", "image", "audio"), 2))


@pytest.mark.parametrize("modalities", SETS, ids=["+".join(s) for s in SETS])
def test_items_without_a_medium_are_normalized_admitted_and_released(
    workspace: Workspace, tmp_path: Path, modalities: tuple[str, ...]
) -> None:
    def curate(*args: str) -> Any:
        result = CliRunner().invoke(app, ["-w", str(workspace.root), *args])
        assert result.exit_code == 0, (args, result.output)
        return result

    for name in POOL:
        curate("people", "add", name, "-r", "author", "-r", "reviewer")
    rows = [item_line(modalities, "a", "A", 0), item_line(modalities, "b", "B", 1)]
    raw_media(tmp_path / "in", rows)
    curate("import", "items", str(write(tmp_path / "in" / "items.jsonl", rows)))
    curate("import", "reviews", str(write(tmp_path / "reviews.jsonl", reviews(rows))))

    before = {row["id"]: row for row in json.loads(curate("status", "--json").stdout)}
    assert {i: (s["state"], s["reasons"]) for i, s in before.items()} == dict.fromkeys(
        ("x-a", "x-b"), ("admitted", [])
    ), "no media gate yet: admitted on the reviews alone"
    check = CliRunner().invoke(app, ["-w", str(workspace.root), "media", "normalize", "--check", "--json"])
    assert check.exit_code == 1, "the raw media are off the spec"
    assert all(a["reasons"] for a in json.loads(check.stdout)["assets"])
    assert {s["state"] for s in json.loads(curate("status", "--json").stdout)} == {"held"}

    report = json.loads(curate("media", "normalize", "--json").stdout)
    kinds = sorted({a["kind"] for a in report["assets"]})
    assert kinds == sorted(m for m in modalities if m != "text")
    assert all(a["reasons"] == [] for a in report["assets"]), report
    after = {row["id"]: row for row in json.loads(curate("status", "--json").stdout)}
    assert {i: (s["state"], s["reasons"]) for i, s in after.items()} == dict.fromkeys(("x-a", "x-b"), ("admitted", []))

    out = tmp_path / "release"
    curate("release", "build", "1.0.0", "--out", str(out))
    records = [json.loads(line) for line in (out / "data/items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["x-a", "x-b"]
    for missing in {"text", "image", "audio"} - set(modalities):
        field = "context" if missing == "text" else missing
        assert not any(field in r for r in records), f"{field} is absent from items without {missing}"
    verified = CliRunner().invoke(app, ["release", "verify", str(out)])
    assert verified.exit_code == 0, verified.output
