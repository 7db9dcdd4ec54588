"""Group rules on content (issue 42): the perturbation is read from what sisters hold, not their file names or
spacing, and the answer rule is TRIAD's (§3.2: "the correct answer changes with the altered cue").

As a user meets them: items imported with ``curate import items``, every item stage passed by
``curate import reviews`` (TRIAD's separation of roles), then ``curate status --json`` and ``curate audit``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curation.config import ReviewSettings
from curation.facts import ItemFacts
from curation.kinds.mcq.group_integration import GroupIntegration
from curation.sister_content import comparable_text
from curation.workspace import Workspace
from devsupport.reviews import REVIEWERS, admitting_reviews
from omnicurate.cli.main import app
from tests.media_factory import item_row, make_image, make_tone, write_items

runner = CliRunner()
COLOURS = {"imgA": "red", "imgB": "blue", "imgC": "green"}
TONES = {"neutral": 330.0, "stressed": 520.0, "other": 700.0, "a": 250.0, "b": 610.0}


def checklist(answer: str) -> dict[str, list[str]]:
    """Checklist sets satisfying TRIAD Definition 1 for any answer among A-D."""
    o = [k for k in "ABCD" if k != answer]
    return {
        "text": sorted([answer, o[0], o[1]]),
        "image": sorted([answer, o[0], o[1]]),
        "audio": sorted([answer, o[0]]),
        "text+image": sorted([answer, o[0]]),
        "text+audio": sorted([answer, o[1]]),
        "image+audio": sorted([answer, o[0]]),
        "text+image+audio": [answer],
    }


def invoke(ws: Workspace, *args: str) -> Any:
    return runner.invoke(app, ["-w", str(ws.root), *args])


def admit_all(ws: Workspace, folder: Path, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Import the rows (media made here: images by name, tones by name), pass every stage of every item and
    the group review, and return ``curate status --json`` by item."""
    for name, roles in {"ann1": ["author"], **{r: ["reviewer"] for r in REVIEWERS}}.items():
        ws.add_person(name, roles)
    for row in rows:
        image, audio = folder / row["image"], folder / row["audio"]
        if not image.exists():
            make_image(image, COLOURS[image.stem])
        if not audio.exists():
            make_tone(audio, TONES[audio.stem])
    result = invoke(ws, "import", "items", str(write_items(folder, rows)))
    assert result.exit_code == 0, result.output
    records = admitting_reviews(rows)
    answers = {row["id"]: row["answer"] for row in rows}
    for record in records:
        if record["stage"] == "subset_checklist":  # admitting_reviews knows answers A and B only
            record["consistent"] = checklist(answers[record["item"]])
    reviews = folder / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = invoke(ws, "import", "reviews", str(reviews))
    assert result.exit_code == 0, result.output
    status = invoke(ws, "status", "--json")
    assert status.exit_code == 0, status.output
    return {row["id"]: row for row in json.loads(status.stdout)}


def sister(id_: str, answer: str, image: str, audio: str, perturbed: str = "audio", **kw: Any) -> dict[str, Any]:
    return item_row(
        id_,
        group="g1",
        perturbed=perturbed,
        answer=answer,
        image=f"media/{image}.jpg",
        audio=f"media/{audio}.wav",
        **kw,
    )


def telescope() -> list[dict[str, Any]]:
    """TRIAD App. F.1: A and B differ in the image (answers A, B), A and C in the audio (A, B); B and C differ in
    both, and share answer B."""
    context, question = "I saw the man with the telescope.", "Who has the telescope?"
    options = {"A": "the speaker", "B": "the man", "C": "someone else", "D": "cannot tell"}
    common = {"perturbed": "mixed", "context": context, "question": question, "options": options}
    return [
        sister("g1-a", "A", "imgA", "neutral", **common),
        sister("g1-b", "B", "imgB", "neutral", **common),
        sister("g1-c", "B", "imgA", "stressed", **common),
    ]


def test_the_telescope_group_of_f1_is_admitted_on_the_defaults(workspace: Workspace, tmp_path: Path) -> None:
    assert ReviewSettings().group_answers == "perturbation"
    status = admit_all(workspace, tmp_path / "in", telescope())
    assert {k: (v["state"], v["reasons"]) for k, v in status.items()} == {
        item: ("admitted", []) for item in ("g1-a", "g1-b", "g1-c")
    }
    audit = json.loads(invoke(workspace, "audit", "--json").stdout)
    assert audit["identical_sisters"] == []


def test_sisters_identical_in_every_modality_are_refused_and_the_audit_lists_them(
    workspace: Workspace, tmp_path: Path
) -> None:
    # the same context, image and audio file; the labels C and B cannot both be right
    rows = [sister("g1-a", "C", "imgA", "neutral"), sister("g1-b", "B", "imgA", "neutral")]
    status = admit_all(workspace, tmp_path / "in", rows)
    for item in ("g1-a", "g1-b"):
        assert status[item]["state"] == "returned" and status[item]["stage"] == "group_integration"
        assert status[item]["reasons"] == ["group:identical_sisters", "group:perturbed_unchanged"]
    audit = invoke(workspace, "audit", "--json")
    assert audit.exit_code == 0
    document = json.loads(audit.stdout)
    assert document["identical_sisters"] == [{"group": "g1", "items": ["g1-a", "g1-b"]}]
    assert document["clusters"] == []  # pairs within a group are no duplicate cluster: the group rule refuses them
    text = invoke(workspace, "audit")
    assert "group g1: sisters g1-a, g1-b are identical in every modality" in text.stdout
    assert "group:identical_sisters" in text.stdout
    assert {r["id"]: r["state"] for r in json.loads(invoke(workspace, "status", "--json").stdout)} == {
        "g1-a": "returned",
        "g1-b": "returned",
    }


def test_an_image_group_whose_sisters_differ_in_audio_perturbs_more_than_one(
    workspace: Workspace, tmp_path: Path
) -> None:
    rows = [sister("g1-a", "A", "imgA", "a", "image"), sister("g1-b", "B", "imgB", "b", "image")]
    status = admit_all(workspace, tmp_path / "in", rows)
    assert status["g1-a"]["state"] == "returned" and status["g1-a"]["reasons"] == ["group:multiple_perturbed"]


def test_the_same_image_bytes_under_two_names_are_no_perturbation(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    make_image(folder / "media" / "imgA.jpg", COLOURS["imgA"])
    shutil.copyfile(folder / "media" / "imgA.jpg", folder / "media" / "imgB.jpg")
    rows = [sister("g1-a", "A", "imgA", "neutral", "image"), sister("g1-b", "B", "imgB", "neutral", "image")]
    status = admit_all(workspace, folder, rows)
    for item in ("g1-a", "g1-b"):
        assert status[item]["state"] == "returned"
        assert status[item]["reasons"] == ["group:identical_sisters", "group:perturbed_unchanged"]


@pytest.mark.parametrize(
    ("second_context", "expected"),
    [
        # an extra space, a full-width comma and full-width letters, a trailing ideographic space: the same text
        ("我看见了 那个拿着望远镜的人，ＯＫ。\u3000", ("admitted", [])),
        ("我看见了那个拿着雨伞的人,OK。", ("returned", ["group:multiple_perturbed"])),  # another word
    ],
)
def test_chinese_contexts_are_compared_normalized(
    workspace: Workspace, tmp_path: Path, second_context: str, expected: tuple[str, list[str]]
) -> None:
    zh = {
        "language": "zh",
        "question": "谁拿着望远镜？",
        "options": {"A": "说话人", "B": "那个人", "C": "别人", "D": "不确定"},
    }
    rows = [
        sister("g1-a", "A", "imgA", "a", context="我看见了那个拿着望远镜的人,OK。", **zh),
        sister("g1-b", "B", "imgA", "b", context=second_context, **zh),
    ]
    status = admit_all(workspace, tmp_path / "in", rows)
    assert (status["g1-a"]["state"], status["g1-a"]["reasons"]) == expected


# ----- the rule itself, table-driven (no workspace) ----------------------------------------------------------------
def facts(id_: str, answer: str, **kw: Any) -> ItemFacts:
    base: dict[str, Any] = dict(
        id=id_,
        group="g",
        author="ann",
        revision=1,
        context="ctx",
        question="q?",
        options={"A": "a", "B": "b", "C": "c", "D": "d"},
        answer=answer,
        image="img",
        audio=f"aud-{id_}",
        audio_source="voice_acting",
        content_hash=f"h-{id_}",
    )
    base.update(kw)
    return ItemFacts(**base)


F1 = [
    facts("a", "A", image="imgA", audio="neutral"),
    facts("b", "B", image="imgB", audio="neutral"),
    facts("c", "B", image="imgA", audio="stressed"),
]


@pytest.mark.parametrize(
    ("perturbed", "sisters", "rule", "expected"),
    [
        ("mixed", F1, "perturbation", []),
        ("mixed", F1, "all_distinct", ["group:duplicate_answers"]),
        ("mixed", F1, "not_all_same", []),
        # a and c one modality apart (the audio) with the same answer
        ("mixed", [*F1[:2], replace(F1[2], answer="A")], "perturbation", ["group:duplicate_answers"]),
        ("mixed", [F1[0], replace(F1[0], id="d", answer="B")], "perturbation", ["group:identical_sisters"]),
        # no two sisters one modality apart, all sharing one answer: no perturbation changed it
        (
            "mixed",
            [facts("a", "A", image="i1", audio="a1"), facts("b", "A", image="i2", audio="a2")],
            "perturbation",
            ["group:duplicate_answers"],
        ),
        (
            "mixed",
            [facts("a", "A", image="i1", audio="a1"), facts("b", "B", image="i2", audio="a2")],
            "perturbation",
            [],
        ),
        # identical sisters are refused whatever their answers, under every answer rule
        (
            "mixed",
            [F1[0], replace(F1[0], id="d")],
            "not_all_same",
            ["group:identical_sisters", "group:duplicate_answers"],
        ),
        ("audio", [facts("a", "A"), facts("b", "A")], "perturbation", ["group:duplicate_answers"]),
        ("audio", [facts("a", "A"), facts("b", "B", image="other")], "perturbation", ["group:multiple_perturbed"]),
        # questions and options are templates: not part of the content
        ("audio", [facts("a", "A"), facts("b", "B", question="other q?")], "perturbation", []),
        (
            "text",
            [facts("a", "A", audio="x"), facts("b", "B", audio="x", context=" CTX ")],
            "perturbation",
            ["group:identical_sisters", "group:perturbed_unchanged"],
        ),
        ("text", [facts("a", "A", audio="x"), facts("b", "B", audio="x", context="other")], "perturbation", []),
        # a modality neither sister has is the same in both; one that only one of them has differs
        (
            "audio",
            [facts("a", "A", modalities=("text", "image")), facts("b", "B", modalities=("text", "image"))],
            "perturbation",
            ["group:identical_sisters", "group:perturbed_unchanged"],
        ),
        (
            "audio",
            [facts("a", "A"), facts("b", "B", modalities=("text", "audio"))],
            "perturbation",
            ["group:multiple_perturbed"],
        ),
    ],
)
def test_group_rules_on_content(perturbed: str, sisters: list[ItemFacts], rule: str, expected: list[str]) -> None:
    settings = ReviewSettings(group_answers=rule)  # type: ignore[arg-type]
    assert GroupIntegration().rules(perturbed, sisters, settings) == expected


def test_comparable_text() -> None:
    assert comparable_text("  Hello\u00a0 World\n") == comparable_text("hello world") == "hello world"
    assert comparable_text("我 看见，ＡＢ") == comparable_text("我看见,ab")
    assert comparable_text("the man") != comparable_text("theman")  # spaces between words of spaced scripts count
