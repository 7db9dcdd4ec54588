import json

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from curation.agreement.review_agreement import (
    ReviewedItem,
    TagRecord,
    agreement_report,
    answer_agreement,
    audio_agreement,
    checklist_agreement,
    checklist_decisions,
    read_tags,
    taxonomy_agreement,
)
from curation.errors import ValidationFailed
from curation.vocab import CHECKLIST_VIEWS

OPTIONS = ("A", "B", "C", "D")
TAXONOMY = {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"}


def _item(item_id, author="ann1", answer="A", records=None, taxonomy=None):
    return ReviewedItem(item_id, "g", author, answer, OPTIONS, taxonomy or dict(TAXONOMY), records or {})


def _checklist(full, other=("A", "B")):
    return {"consistent": {view: sorted(full if view == "text+image+audio" else other) for view in CHECKLIST_VIEWS}}


def test_answer_agreement_is_cohen_kappa_of_labels_and_blind_answers():
    labels = ["A", "B", "C", "A", "B", "D", "A", "C"]
    blind = ["A", "B", "C", "B", "B", "D", "A", "A"]
    reviewers = ["rev1", "rev1", "rev1", "rev1", "rev2", "rev2", "rev2", "rev2"]
    items = [
        _item(f"i{k}", answer=label, records={"answer_check": [(rev, {"answer": answer})]})
        for k, (label, answer, rev) in enumerate(zip(labels, blind, reviewers, strict=True))
    ]
    report = answer_agreement(items)
    assert report["overall"]["value"] == pytest.approx(cohen_kappa_score(labels, blind))
    assert report["overall"]["raw_agreement"] == pytest.approx(0.75)
    pairs = {(p["author"], p["reviewer"]): p for p in report["pairs"]}
    assert pairs[("ann1", "rev1")]["value"] == pytest.approx(cohen_kappa_score(labels[:4], blind[:4]))
    assert pairs[("ann1", "rev2")]["raw_agreement"] == pytest.approx(0.75)
    assert report["confusion"]["labels"] == ["A", "B", "C", "D"]
    assert report["confusion"]["counts"][0] == [2, 1, 0, 0]  # label A: answered A twice, B once
    assert sum(map(sum, report["confusion"]["counts"])) == 8


def test_answer_agreement_without_variation_says_why():
    items = [_item(f"i{k}", records={"answer_check": [("rev1", {"answer": "A"})]}) for k in range(3)]
    report = answer_agreement(items)
    assert report["overall"]["value"] is None
    assert "no variation" in report["overall"]["undefined"]
    assert report["overall"]["raw_agreement"] == 1.0


def test_audio_agreement_is_ordinal_alpha_per_axis():
    rng = np.random.default_rng(0)
    scores = rng.integers(1, 6, size=(2, 10, 3))
    items = [
        _item(
            f"i{k}",
            records={
                "audio_signoff": [
                    (
                        f"rev{r}",
                        {
                            "scores": dict(
                                zip(("naturalness", "clarity", "artefacts"), map(int, scores[r, k]), strict=True)
                            )
                        },
                    )
                    for r in range(2)
                ]
            },
        )
        for k in range(10)
    ]
    report = audio_agreement(items)
    for a, axis in enumerate(("naturalness", "clarity", "artefacts")):
        expected = krippendorff.alpha(reliability_data=scores[:, :, a].astype(float), level_of_measurement="ordinal")
        assert report[axis]["value"] == pytest.approx(expected)
        assert report[axis]["units"] == 10


def test_checklist_agreement_counts_every_item_view_option_decision():
    items = [
        _item(
            "i1",
            records={
                "subset_checklist": [
                    ("rev1", _checklist({"A"})),
                    ("rev2", _checklist({"A"})),
                    ("rev3", _checklist({"A", "B"})),
                ]
            },
        ),
        _item(
            "i2",
            records={
                "subset_checklist": [
                    ("rev1", _checklist({"C"}, ("B", "C"))),
                    ("rev2", _checklist({"C"}, ("B", "C", "D"))),
                ]
            },
        ),
    ]
    rows = checklist_decisions(items)
    assert sum(len(r) for r in rows.values()) == (3 + 2) * 7 * 4
    report = checklist_agreement(items)
    table = np.full((3, 2 * 7 * 4), np.nan)
    units = {}
    for view_rows in rows.values():
        for unit, reviewer, value in view_rows:
            table[int(reviewer[-1]) - 1, units.setdefault(unit, len(units))] = value
    assert report["all"]["value"] == pytest.approx(krippendorff.alpha(reliability_data=table))
    assert report["views"]["text"]["units"] == 8


def test_taxonomy_per_leaf_agreement_and_disagreement_matrix():
    items = [
        _item(f"i{k}", taxonomy={"text": leaf})
        for k, leaf in enumerate(["pragmatic", "pragmatic", "lexical", "lexical", "anaphoric"])
    ]
    tags = [
        TagRecord(f"i{k}", "rev5", {"text": leaf})
        for k, leaf in enumerate(["pragmatic", "lexical", "lexical", "lexical", "anaphoric"])
    ]
    text = taxonomy_agreement(items, tags)["text"]
    assert text["items"] == 5
    leaves = text["leaves"]
    matrix = np.asarray(text["disagreement"])
    assert (matrix == matrix.T).all() and matrix.sum() == 10
    assert matrix[leaves.index("pragmatic"), leaves.index("lexical")] == 1
    # two taggers: specific agreement 2 n_ll / (n_l by one + n_l by the other)
    assert text["per_leaf"]["pragmatic"] == pytest.approx(2 * 1 / (2 + 1))
    assert text["per_leaf"]["lexical"] == pytest.approx(2 * 2 / (2 + 3))
    assert text["per_leaf"]["anaphoric"] == 1.0
    assert "logical" not in text["per_leaf"]
    assert text["raw_agreement"] == pytest.approx(0.8)
    assert taxonomy_agreement(items, tags)["image"]["items"] == 0


def test_report_without_reviews_is_all_undefined_not_nan():
    report = agreement_report([_item("i1")])
    assert report["answer_check"]["overall"]["value"] is None
    assert report["subset_checklist"]["all"]["undefined"] == "no subset checklists"
    assert "nan" not in json.dumps(report).lower()


def test_read_tags_reports_every_problem_with_its_line(tmp_path):
    items = [_item("i1"), _item("i2")]
    path = tmp_path / "tags.jsonl"
    lines = [
        {"item": "i1", "tagger": "rev5", "taxonomy": {"text": "lexical"}},
        {"item": "zz", "tagger": "rev5", "taxonomy": {"text": "lexical"}},
        {"item": "i2", "tagger": "ann1", "taxonomy": {"text": "lexical"}},
        {"item": "i2", "tagger": "rev5", "taxonomy": {"audio": "loud"}},
        {"item": "i1", "tagger": "rev5", "taxonomy": {"image": "spatial"}},
        {"item": "i2", "taxonomy": {}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        read_tags(path, items)
    messages = [str(p) for p in caught.value.problems]
    assert messages[0] == f"{path}:2: item: unknown item 'zz' (`curate status` lists the items)"
    assert messages[1] == f"{path}:3: tagger: 'ann1' authored 'i2'; the item's own tags are theirs"
    assert messages[2].startswith(f"{path}:4: taxonomy.audio: unknown audio leaf 'loud'")
    assert messages[3] == f"{path}:5: tagger: 'rev5' already tagged 'i1' on line 1"
    assert messages[4] == f"{path}:6: tagger: required field is missing"


def test_read_tags_accepts_a_valid_file(tmp_path):
    path = tmp_path / "tags.jsonl"
    path.write_text(json.dumps({"item": "i1", "tagger": "rev5", "taxonomy": {"text": "lexical"}}) + "\n")
    assert read_tags(path, [_item("i1")]) == [TagRecord("i1", "rev5", {"text": "lexical"})]


def _tagged(item_id, author_tags, reviewer_tags, perturbed="audio", taxonomy=None):
    """An item whose checklist reviewers give their own ambiguity tags (None: a record without tags)."""
    records = {
        "subset_checklist": [
            (f"rev{k}", {**_checklist(["A"]), **({} if tags is None else {"ambiguous": tags})})
            for k, tags in enumerate(reviewer_tags, start=1)
        ]
    }
    return ReviewedItem(
        item_id,
        "g",
        "ann1",
        "A",
        OPTIONS,
        taxonomy or dict(TAXONOMY),
        records,
        ambiguous=tuple(author_tags),
        perturbed=perturbed,
    )


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        # every reviewer agrees with the author on every modality, but with variation across items
        ([_tagged("i1", ["text"], [["text"]]), _tagged("i2", ["audio"], [["audio"]])], 1.0),
        # no reviewer gave tags: undefined, with the reason
        ([_tagged("i1", ["text"], [None, None])], None),
    ],
)
def test_tier_tag_kappa_table(items, expected):
    from curation.agreement.review_agreement import tier_tag_agreement

    report = tier_tag_agreement(items)
    assert report["overall"]["value"] == expected
    if expected is None:
        assert "ambiguous list" in report["overall"]["undefined"]


def test_tier_tag_kappa_is_cohen_kappa_of_author_and_reviewer_per_modality():
    from curation.agreement.review_agreement import tier_tag_agreement

    cases = [
        (["text", "audio"], ["text"]),
        (["audio"], ["audio"]),
        (["image"], ["image", "text"]),
        (["text"], ["text"]),
    ]
    items = [_tagged(f"i{k}", author, [reviewer]) for k, (author, reviewer) in enumerate(cases)]
    author = [int(m in a) for a, _ in cases for m in ("text", "image", "audio")]
    reviewer = [int(m in r) for _, r in cases for m in ("text", "image", "audio")]
    report = tier_tag_agreement(items)
    assert report["overall"]["value"] == pytest.approx(cohen_kappa_score(author, reviewer))
    assert report["tier"]["value"] == pytest.approx(
        cohen_kappa_score([len(a) for a, _ in cases], [len(r) for _, r in cases])
    )


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # (first listener, second listener) naturalness per item; clarity and artefacts 4
        ([(4, 5), (2, 3), (4, 4), (3, 2)], 1.0),
        ([(4, 2), (2, 4), (4, 4), (2, 2)], 0.0),
        ([(4, 5), (5, 4)], None),  # everyone admits: no variation, undefined
    ],
)
def test_binary_naturalness_kappa_table(scores, expected):
    from curation.agreement.review_agreement import naturalness_agreement

    items = [
        _item(
            f"i{k}",
            records={
                "audio_signoff": [
                    (f"rev{j}", {"scores": {"naturalness": n, "clarity": 4, "artefacts": 4}})
                    for j, n in enumerate(pair)
                ]
            },
        )
        for k, pair in enumerate(scores)
    ]
    report = naturalness_agreement(items, 3.5)
    assert report["value"] == (pytest.approx(expected) if expected is not None else None)
    if expected is None:
        assert "no variation" in report["undefined"]


@pytest.mark.parametrize(
    ("counts", "size", "expected"),
    [
        ({"audio": 60, "image": 30, "text": 10}, 50, {"audio": 30, "image": 15, "text": 5}),
        ({"audio": 7, "image": 7, "text": 7}, 10, {"audio": 4, "image": 3, "text": 3}),  # largest remainder, by name
        ({"audio": 20, "image": 10}, 50, {"audio": 20, "image": 10}),  # fewer than 50: every item
    ],
)
def test_audit_subset_is_seeded_and_stratified(counts, size, expected):
    from curation.agreement.review_agreement import audit_subset

    items = [
        _tagged(f"{modality}-{k:03d}", ["text"], [], perturbed=modality)
        for modality, n in counts.items()
        for k in range(n)
    ]
    subset = audit_subset(items, size, seed=3)
    drawn = {m: sum(i.perturbed == m for i in subset) for m in counts}
    assert drawn == expected
    assert [i.id for i in subset] == sorted(i.id for i in subset)
    assert [i.id for i in audit_subset(list(reversed(items)), size, seed=3)] == [i.id for i in subset]
    if sum(counts.values()) > size:
        assert [i.id for i in audit_subset(items, size, seed=4)] != [i.id for i in subset]


def test_report_carries_the_audit_subset_and_per_leaf_figures():
    items = [
        _tagged(f"i{k}", ["text"], [["text"] if k % 3 else ["audio"]], taxonomy={**TAXONOMY, "text": leaf})
        for k, leaf in enumerate(["pragmatic", "temporal", "logical"] * 4)
    ]
    report = agreement_report(items, subset_size=6, subset_seed=1)
    subset = report["audit_subset"]
    assert subset["items"] == 6 and len(subset["ids"]) == 6 and not subset["all_items"]
    assert subset["seed"] == 1 and subset["stratified_by"] == "perturbed"
    assert set(subset) >= {"answer_check", "tier_tag", "naturalness", "subset_checklist"}
    per_leaf = report["per_leaf"]["text"]
    assert set(per_leaf) == {"pragmatic", "temporal", "logical"} and per_leaf["temporal"]["items"] == 4
    assert per_leaf["pragmatic"]["tier_tag"]["raw_agreement"] == 0.0  # k = 0, 3, 6, 9: the reviewer says audio
    assert per_leaf["temporal"]["tier_tag"]["raw_agreement"] == 1.0
    assert report["answer_check"]["overall"]["value"] is None  # reported with its reason, not a gate
    assert report["answer_check"]["overall"]["undefined"]
