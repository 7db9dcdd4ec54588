"""Issue 42, part B: a release states only what the records give and what the maintainer wrote in
release-claims.toml (design.md, "Releases — what a release may claim"); nothing about consent, no invented
uses, limitations or preprocessing figures, for every kind."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import soundfile as sf
from PIL import Image
from typer.testing import CliRunner

from curation.release_claims import CLAIMS_NAME, TEMPLATE, ReleaseClaims, load_claims
from curation.workspace import Workspace
from exports.build import build_release
from exports.claims import preprocessing_sentences
from exports.reproduce import reproduce_release
from exports.verify import verify_release
from omnicurate.cli.main import app
from tests.exports.test_interop import require

runner = CliRunner()

INVENTED = re.compile(
    r"consent|not for training|diagnostic|impersonating people|rather than representative|voice actors|"
    r"signed a release|held-out|48 kHz|Small;|any-to-any|Web Scraping|unevenly represented|openly licensed",
    re.IGNORECASE,
)
"""Sentences the cards used to state whatever the data (and any word of consent)."""

CLAIMS = {
    "description": "用于评测全模态模型在歧义下整合文本、图像与音频的能力。\nA second line, as typed.",
    "uses": ["Evaluation of omni-modal models on 中文 and English items.", "Error analysis per taxonomy leaf."],
    "out_of_scope": ["不适用于训练或微调。"],
    "limitations": ["Only two languages; 仅两种语言。"],
    "biases": ["Authors were graduate students at one university."],
    "personal_information": ["Voices of two recorded speakers; 两位说话人的声音。"],
    "social_impact": "None foreseen beyond evaluation; 仅用于评测。",
    "maintenance": "Maintained by the curation team; report problems at the tracker.",
    "homepage": "https://example.org/benchmarks/triad",
}
RAI = {
    "uses": "rai:dataUseCases",
    "out_of_scope": "rai:dataLimitations",
    "limitations": "rai:dataLimitations",
    "biases": "rai:dataBiases",
    "personal_information": "rai:personalSensitiveInformation",
    "social_impact": "rai:dataSocialImpact",
    "maintenance": "rai:dataReleaseMaintenancePlan",
    "description": "description",
}
MAINTAINER_ONLY = ("rai:dataUseCases", "rai:dataLimitations", "rai:dataSocialImpact")


def curate(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(root), *args], catch_exceptions=False)


def toml_claims(claims: dict[str, Any]) -> str:
    import tomli_w

    return tomli_w.dumps(claims)


def text_files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in {".md", ".json", ".jsonl"}
    }


def statements(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def assert_claims_nothing(folder: Path) -> dict[str, Any]:
    """No consent statement and no invented sentence in any text file; no maintainer-only RAI field."""
    for name, text in text_files(folder).items():
        if name.startswith("data/") or name.startswith("admission/") or name == "admission.jsonl":
            continue  # the units' own text, reviewers' notes and the gates run (`consent` among them) are records
        found = INVENTED.search(text)
        assert found is None, f"{name}: {found.group(0)!r} in {text[max(0, found.start() - 80) : found.end() + 80]!r}"
    document = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    assert not set(MAINTAINER_ONLY) & set(document)
    assert document["url"].startswith("https://example.invalid/")
    recorded = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
    assert recorded == {"file": CLAIMS_NAME, "claims": ReleaseClaims().model_dump(mode="json")}
    assert "Not stated: this release makes no statement on" in (folder / "README.md").read_text(encoding="utf-8")
    return document


def assert_states_the_claims(folder: Path) -> None:
    """Each maintainer text appears as typed in the card and in its Croissant field; claims.json has them all."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    document = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    for key, value in CLAIMS.items():
        if key == "homepage":
            assert document["url"] == value
            continue
        for statement in statements(value):
            assert statement in card, key
            field = document[RAI[key]]
            assert statement in (field if isinstance(field, str) else field) or any(
                statement in x for x in statements(field)
            ), key
    assert "Not stated" not in card
    assert json.loads((folder / "claims.json").read_text(encoding="utf-8"))["claims"] == {
        **ReleaseClaims().model_dump(mode="json"),
        **CLAIMS,
    }


# ----- the file --------------------------------------------------------------------------------------------
def test_init_writes_a_template_that_claims_nothing(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    text = (ws.root / CLAIMS_NAME).read_text(encoding="utf-8")
    assert text == TEMPLATE
    assert all(not line.strip() or line.startswith("#") for line in text.splitlines())
    for key in ReleaseClaims.model_fields:
        assert f"# {key} = " in text
    assert load_claims(ws.root).empty
    (ws.root / CLAIMS_NAME).unlink()  # a workspace made before the file existed
    assert load_claims(ws.root).empty


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        ('uses = ["x"]\nintended = ["y"]\n', "intended", "unknown key"),
        ('uses = "one string, not a list"\n', "uses", "valid list"),
        ('limitations = ["   "]\n', "limitations.0", "is blank"),
        ('maintenance = ""\n', "maintenance", "at least 1 character"),
        ("social_impact = 3\n", "social_impact", "valid string"),
        ('homepage = "ftp://x"\n', "homepage", "should match pattern"),
        ('uses = ["bell \\u0007"]\n', "uses.0", "control character"),
    ],
)
def test_a_malformed_claims_file_is_refused_by_name_and_nothing_is_built(
    admitted_ws: Workspace, content: str, field: str, message: str
) -> None:
    path = admitted_ws.root / CLAIMS_NAME
    path.write_text(content, encoding="utf-8")
    refused = curate(admitted_ws.root, "release", "build", "1.0.0")
    assert refused.exit_code == 2, refused.output
    assert f"{path}: {field}: " in refused.stderr and message in refused.stderr, refused.stderr
    assert "nothing was built" in refused.stderr
    assert not (admitted_ws.root / "releases").exists()


def test_a_claims_file_that_is_not_toml_is_refused(admitted_ws: Workspace) -> None:
    (admitted_ws.root / CLAIMS_NAME).write_text('uses = ["unclosed\n', encoding="utf-8")
    refused = curate(admitted_ws.root, "release", "build", "1.0.0")
    assert refused.exit_code == 2 and f"{admitted_ws.root / CLAIMS_NAME}: not valid TOML" in refused.stderr
    assert not (admitted_ws.root / "releases").exists()


# ----- mcq -------------------------------------------------------------------------------------------------
def test_an_mcq_release_without_claims_states_only_what_the_records_give(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    templated = build_release(admitted_ws, "1.0.0", out=tmp_path / "template")
    (admitted_ws.root / CLAIMS_NAME).unlink()  # an older workspace: the same claims (none), the same bytes
    older = build_release(admitted_ws, "1.0.0", out=tmp_path / "older")
    assert templated.manifest_sha256 == older.manifest_sha256
    folder = tmp_path / "older"
    document = assert_claims_nothing(folder)
    items = [json.loads(line) for line in (folder / "data/items.jsonl").read_text(encoding="utf-8").splitlines()]
    languages = ", ".join(f"{k}: {v}" for k, v in sorted(Counter(i["language"] for i in items).items()))
    assert document["rai:dataBiases"][0] == f"Items per language (stats.json): {languages}."
    audio = ", ".join(f"{k}: {v}" for k, v in sorted(Counter(i["audio_source"] for i in items).items()))
    assert document["rai:personalSensitiveInformation"][0] == f"Audio clips by recorded source (audio_source): {audio}."
    review = admitted_ws.settings.review
    protocol = document["rai:dataAnnotationProtocol"][0]
    assert f"grammar (quorum {review.grammar_quorum} per item; 4 released item(s))" in protocol
    assert f"subset_checklist (quorum {review.subset_checklist_quorum} per item" in protocol
    assert "image_screening" not in protocol  # no released item has an AI-generated image
    shapes = Counter()
    for item in items:
        info = sf.info(str(folder / item["audio"]))
        shapes[f"audio/wav {info.samplerate} Hz, {info.channels} channel(s)"] += 1
    for image in {i["image"] for i in items}:
        with Image.open(folder / image) as im:
            shapes[f"image/jpeg {im.width}x{im.height} px"] += 1
    expected = "; ".join(f"{shape}: {n}" for shape, n in sorted(shapes.items()))
    assert document["rai:dataPreprocessingProtocol"] == [f"Shipped as imported: {expected}."]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert f"- Shipped as imported: {expected}." in card
    assert "0 of 6 media file(s) are normalized derivatives" in card


def test_an_mcq_release_states_the_maintainer_s_words_as_typed_and_reproduces(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    (admitted_ws.root / CLAIMS_NAME).write_text(toml_claims(CLAIMS), encoding="utf-8")
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert_states_the_claims(tmp_path / "r")
    document = json.loads((tmp_path / "r" / "croissant.json").read_text(encoding="utf-8"))
    assert document["rai:dataUseCases"] == CLAIMS["uses"]
    assert document["rai:dataLimitations"] == CLAIMS["limitations"] + CLAIMS["out_of_scope"]
    assert document["rai:dataBiases"][-1] == CLAIMS["biases"][0]  # after the composition counts
    assert verify_release(tmp_path / "r", result.manifest_sha256).ok
    assert reproduce_release(tmp_path / "r").ok
    loaded = require("mlcroissant").Dataset(jsonld=tmp_path / "r" / "croissant.json").metadata
    assert not loaded.issues.errors and not loaded.issues.warnings
    assert (loaded.data_use_cases, loaded.data_social_impact) == (CLAIMS["uses"], CLAIMS["social_impact"])
    assert CLAIMS["personal_information"][0] in loaded.personal_sensitive_information
    again = build_release(admitted_ws, "1.0.0", out=tmp_path / "again")
    assert again.manifest_sha256 == result.manifest_sha256
    (admitted_ws.root / CLAIMS_NAME).write_text(toml_claims({**CLAIMS, "uses": ["Other words."]}), encoding="utf-8")
    changed = curate(admitted_ws.root, "release", "build", "1.0.0", "--out", str(tmp_path / "changed"))
    assert changed.exit_code == 1 and "published versions are immutable" in changed.stderr


def test_the_preprocessing_sentence_follows_the_transforms_actually_recorded() -> None:
    media = [
        {
            "file": "media/a.wav",
            "kind": "audio",
            "mime": "audio/wav",
            "derived_from": "x",
            "transform": {
                "transform": "audio_normalize",
                "sample_rate": 44100,
                "channels": 1,
                "subtype": "PCM_16",
                "target_lufs": -16.0,
                "true_peak_ceiling_dbtp": -2.0,
                "output_lufs": -16.4,
            },
        },
        {
            "file": "media/b.jpg",
            "kind": "image",
            "mime": "image/jpeg",
            "derived_from": "y",
            "transform": {"transform": "image_normalize", "quality": 80, "max_edge": 512, "resized": True},
        },
    ]
    lines = preprocessing_sentences(media, {})
    assert lines == [
        "1 audio file(s) normalized to 44100 Hz, 1 channel(s), PCM_16, loudness target -16.0 LUFS with a true-peak "
        "ceiling of -2.0 dBTP; measured integrated loudness of the normalized clips -16.4 to -16.4 LUFS.",
        "1 image file(s) re-encoded as baseline JPEG at quality 80, longest edge at most 512 px, without metadata "
        "segments (1 resized).",
    ]
    assert not any("48" in line or "-23" in line or "1024" in line for line in lines)


# ----- judge_task and story_transition ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def judge_ws(judge_demo_folder: Path) -> Path:
    return judge_demo_folder


@pytest.fixture(scope="module")
def story_ws(story_demo_folder: Path) -> Path:
    return story_demo_folder


def _built(root: Path, version: str) -> Path:
    built = curate(root, "release", "build", version, "--json")
    assert built.exit_code == 0, built.output
    folder = Path(json.loads(built.stdout)["path"])
    assert curate(root, "release", "verify", str(folder)).exit_code == 0
    return folder


def test_a_judge_release_states_only_records_and_the_maintainer_s_words(judge_ws: Path) -> None:
    (judge_ws / CLAIMS_NAME).unlink(missing_ok=True)
    document = assert_claims_nothing(_built(judge_ws, "3.0.0"))
    tasks = [json.loads(x) for x in (judge_ws / "releases/3.0.0/data/tasks.jsonl").read_text().splitlines()]
    licences = ", ".join(f"{k}: {v}" for k, v in sorted(Counter(t["license"] for t in tasks).items()))
    assert f"Task licences (`license`): {licences}." in document["rai:dataCollection"]
    assert document["rai:personalSensitiveInformation"] == [
        "Annotators appear as annotator-N pseudonyms in data/score_annotations.jsonl and data/pair_annotations.jsonl."
    ]
    (judge_ws / CLAIMS_NAME).write_text(toml_claims(CLAIMS), encoding="utf-8")
    folder = _built(judge_ws, "3.1.0")
    assert_states_the_claims(folder)
    assert reproduce_release(folder).ok
    loaded = require("mlcroissant").Dataset(jsonld=folder / "croissant.json").metadata
    assert not loaded.issues.errors and loaded.data_release_maintenance_plan.endswith(CLAIMS["maintenance"])
    (judge_ws / CLAIMS_NAME).write_text("uses = [1]\n", encoding="utf-8")
    refused = curate(judge_ws, "release", "build", "3.2.0")
    assert refused.exit_code == 2 and f"{judge_ws / CLAIMS_NAME}: uses.0: " in refused.stderr
    assert not (judge_ws / "releases" / "3.2.0").exists()


def test_a_story_release_states_only_records_and_the_maintainer_s_words(story_ws: Path) -> None:
    (story_ws / CLAIMS_NAME).write_text(TEMPLATE, encoding="utf-8")
    folder = _built(story_ws, "3.0.0")
    document = assert_claims_nothing(folder)
    records = [json.loads(x) for x in (folder / "data/transitions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert document["rai:dataCollection"].startswith(f"{len(records)} page-to-page transitions from ")
    assert document["rai:dataCollectionType"] == ["Manual Human Curation"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    for group in ("book_meta", "conditions", "speech"):
        revised = sum(r["provenance"][group]["human_revised"] for r in records)
        assert f"- {group}: proposed by a model for " in card and f"revised by a reviewer in {revised}" in card
    (story_ws / CLAIMS_NAME).write_text(toml_claims(CLAIMS), encoding="utf-8")
    folder = _built(story_ws, "3.1.0")
    assert_states_the_claims(folder)
    assert reproduce_release(folder).ok
    loaded = require("mlcroissant").Dataset(jsonld=folder / "croissant.json").metadata
    assert not loaded.issues.errors and loaded.data_limitations == CLAIMS["limitations"] + CLAIMS["out_of_scope"]
