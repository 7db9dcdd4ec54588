"""Per-leaf agreement and the disagreement matrix in every mcq release: files, manifest, card, Croissant, verify."""

from __future__ import annotations

import json
from pathlib import Path

from curation.workspace import Workspace
from exports.build import build_release
from exports.leaf_agreement import MATRIX, PER_LEAF
from exports.verify import verify_release


def test_the_release_carries_per_leaf_agreement_and_the_disagreement_matrix(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    folder = tmp_path / "r"
    build_release(admitted_ws, "1.0.0", out=folder)
    per_leaf = json.loads((folder / PER_LEAF).read_text())
    matrix = json.loads((folder / MATRIX).read_text())
    subset = per_leaf["audit_subset"]
    assert subset["ids"] == ["g1-a", "g1-b", "g2-a", "g2-b"] and subset["all_items"] is True  # 4 items < 50
    assert subset["size"] == admitted_ws.settings.agreement.audit_subset
    # every released item has one blind check that matches its label (answers A and B)
    answer = matrix["labels"]["answer_check"]["overall"]
    assert answer == {
        "coders": ["author", "blind"],
        "categories": ["A", "B"],
        "counts": [[2, 0], [0, 2]],
        "pairs": 4,
        "disagreements": 0,
    }
    natural = matrix["labels"]["naturalness"]["overall"]
    assert natural["counts"] == [[4]] and natural["categories"] == ["admit"]
    leaf = admitted_ws.item("g1-a").taxonomy["text"]
    assert per_leaf["per_leaf"]["text"][leaf]["items"] == 4
    assert per_leaf["per_leaf"]["text"][leaf]["answer_check"]["raw_agreement"] == 1.0

    manifest = json.loads((folder / "manifest.json").read_text())
    assert {PER_LEAF, MATRIX} <= {f["path"] for f in manifest["files"]}
    card = (folder / "README.md").read_text()
    assert "### Agreement per taxonomy leaf (audit subset)" in card and f"`{MATRIX}`" in card
    assert f"| text | {leaf} | 4 |" in card
    croissant = json.loads((folder / "croissant.json").read_text())
    described = {entry["@id"]: entry for entry in croissant["distribution"]}
    assert described[PER_LEAF]["encodingFormat"] == "application/json" and "sha256" in described[MATRIX]
    assert verify_release(folder).ok

    # the files are checked like every other file of the release
    (folder / MATRIX).write_text(json.dumps({"labels": {}}))
    report = verify_release(folder)
    assert not report.ok and any(m.path == MATRIX for m in report.mismatches)
