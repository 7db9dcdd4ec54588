"""Per-leaf agreement and the disagreement matrices on the audit subset (TRIAD App. C.3)."""

from __future__ import annotations

from curation.agreement.leaf_tables import audit_subset_tables, confusion, disagreement_matrices
from curation.agreement.review_agreement import ReviewedItem

OPTIONS = ("A", "B", "C", "D")
NATURAL = {"naturalness": 4, "clarity": 4, "artefacts": 4}
ROUGH = {"naturalness": 2, "clarity": 4, "artefacts": 4}


def reviewed(
    item_id: str, text_leaf: str, audio_leaf: str, blind: str, tagged: list[str], second: dict
) -> ReviewedItem:
    records = {
        "answer_check": [("rev4", {"answer": blind})],
        "subset_checklist": [("rev1", {"consistent": {}, "ambiguous": tagged})],
        "audio_signoff": [("rev2", {"scores": NATURAL}), ("rev3", {"scores": second})],
    }
    taxonomy = {"text": text_leaf, "image": "semiotic", "audio": audio_leaf}
    return ReviewedItem(item_id, item_id, "ann1", "A", OPTIONS, taxonomy, records, ambiguous=("text", "audio"))


ITEMS = [
    # temporal and logical text items: the boundary TRIAD names; one blind answer differs, one tier tag
    reviewed("i1", "temporal", "prosodic", "A", ["text", "audio"], NATURAL),
    reviewed("i2", "temporal", "prosodic", "B", ["text", "audio"], NATURAL),
    reviewed("i3", "logical", "indexical", "A", ["audio"], ROUGH),
    reviewed("i4", "logical", "indexical", "A", ["text", "audio"], NATURAL),
]


def test_confusion_counts_the_two_coders_values() -> None:
    rows = [("u1", "a", "x"), ("u1", "b", "x"), ("u2", "a", "x"), ("u2", "b", "y"), ("u3", "a", "y")]
    table = confusion(rows, ("a", "b"))
    assert table == {
        "coders": ["a", "b"],
        "categories": ["x", "y"],
        "counts": [[1, 1], [0, 0]],
        "pairs": 2,  # u3 has one coder only
        "disagreements": 1,
    }


def test_disagreements_are_located_by_leaf_and_value() -> None:
    labels = disagreement_matrices(ITEMS)
    answer = labels["answer_check"]
    assert answer["overall"]["categories"] == ["A", "B"]
    assert answer["overall"]["counts"] == [[3, 1], [0, 0]] and answer["overall"]["disagreements"] == 1
    assert answer["per_leaf"]["text"]["temporal"]["disagreements"] == 1
    assert answer["per_leaf"]["text"]["logical"]["disagreements"] == 0
    tier = labels["tier_tag"]
    # the text tag of i3 is the only tier disagreement: a logical text item, in the text leaf's rows
    assert tier["per_leaf"]["text"]["logical"] == {
        "coders": ["author", "reviewer"],
        "categories": ["ambiguous", "not_ambiguous"],
        "counts": [[1, 1], [0, 0]],
        "pairs": 2,
        "disagreements": 1,
    }
    assert tier["per_leaf"]["audio"]["indexical"]["disagreements"] == 0  # audio tags all agree
    assert tier["overall"]["pairs"] == 12 and tier["overall"]["disagreements"] == 1
    natural = labels["naturalness"]
    assert natural["per_leaf"]["audio"]["indexical"]["counts"] == [[1, 1], [0, 0]]
    assert natural["per_leaf"]["audio"]["prosodic"]["disagreements"] == 0


def test_tables_are_drawn_on_the_audit_subset() -> None:
    per_leaf, matrix = audit_subset_tables(ITEMS, subset_size=2, subset_seed=3)
    ids = per_leaf["audit_subset"]["ids"]
    assert len(ids) == 2 and per_leaf["audit_subset"]["all_items"] is False
    assert matrix["audit_subset"] == per_leaf["audit_subset"]
    assert matrix["labels"]["answer_check"]["overall"]["pairs"] == 2
    leaves = {leaf for leaf, figures in per_leaf["per_leaf"]["text"].items() if figures["items"]}
    assert leaves == {item.taxonomy["text"] for item in ITEMS if item.id in ids}
    again, _ = audit_subset_tables(ITEMS, subset_size=2, subset_seed=3)
    assert again == per_leaf  # seeded: the same subset
