"""Each rule filter on planted cases: length bounds, speech lines, language, image size and sharpness."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from curation.screening import rules
from curation.screening.rules import RuleSettings
from omnicurate.demo.story_corpus import draw_page

SETTINGS = RuleSettings()
EN = "The little fox ran down to the river to find her mother before the rain."
EN2 = "Her mother was waiting under the big tree with a basket of mangoes."


def test_length_bounds_name_the_side_that_fails() -> None:
    assert rules.length_rule(EN, EN2, SETTINGS).keep
    assert rules.length_rule(EN, "Fin.", SETTINGS).reason == "length:too_short"
    long_next = " ".join([EN2] * 7)  # 91 words > 80
    outcome = rules.length_rule(EN, long_next, SETTINGS)
    assert (outcome.reason, outcome.data["next_words"]) == ("length:next_too_long", 91)
    assert rules.length_rule(" ".join([EN] * 11), EN2, SETTINGS).reason == "length:current_too_long"


def test_speech_lines_come_from_the_source_marking_or_from_quotes() -> None:
    one = 'They ran. "Wait for me!" said Hawa.'
    two = '"Wait for me!" cried Hawa. "Hurry up!" shouted Femi.'
    assert rules.speech_rule(one, None, SETTINGS).keep
    outcome = rules.speech_rule(two, None, SETTINGS)
    assert (outcome.keep, outcome.reason, outcome.data["speech_lines"]) == (False, "speech:multiple_lines", 2)
    # a source that marks its dialogue is believed over the quote count
    assert rules.speech_rule(two, ["Wait for me!"], SETTINGS).keep
    assert not rules.speech_rule(one, ["a", "b", " "], SETTINGS.model_copy(update={"max_speech_lines": 1})).keep


def test_language_identification_drops_non_english_with_the_language_code() -> None:
    assert rules.language_rule(EN, EN2, SETTINGS).data["languages"] == {"current": "en", "next": "en"}
    swahili = "Mama alikwenda sokoni kununua ndizi na maziwa kwa ajili ya watoto wake."
    outcome = rules.language_rule(EN, swahili, SETTINGS)
    assert (outcome.keep, outcome.reason) == (False, "language:sw")
    assert rules.language_rule(EN, swahili, SETTINGS.model_copy(update={"languages": ["en", "sw"]})).keep


def test_image_rule_measures_size_and_sharpness(tmp_path: Path) -> None:
    sharp, blurry, tiny, wide = (tmp_path / f"{n}.jpg" for n in ("sharp", "blurry", "tiny", "wide"))
    draw_page(sharp, 1)
    draw_page(blurry, 1, blur=True)
    draw_page(tiny, 2, size=(120, 90))
    draw_page(wide, 3, size=(1200, 256))
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    keep = rules.image_rule(str(sharp), str(sharp), SETTINGS)
    assert keep.keep and keep.data["next"]["width"] == 320 and len(keep.data["next"]["sha256"]) == 64
    blur = rules.image_rule(str(sharp), str(blurry), SETTINGS)
    assert blur.reason == "image:blurry"
    assert blur.data["next"]["sharpness"] < SETTINGS.min_sharpness < blur.data["current"]["sharpness"]
    assert rules.image_rule(str(tiny), str(sharp), SETTINGS).reason == "image:too_small"
    assert rules.image_rule(str(sharp), str(wide), SETTINGS).reason == "image:aspect"
    unreadable = rules.image_rule(str(sharp), str(broken), SETTINGS)
    assert unreadable.reason == "image:unreadable" and "next: undecodable" in unreadable.data["problem"]
    missing = rules.image_rule(str(tmp_path / "gone.jpg"), str(sharp), SETTINGS)
    assert missing.reason == "image:unreadable" and "current: unreadable" in missing.data["problem"]


def test_laplacian_variance_is_zero_on_flat_and_high_on_edges() -> None:
    import numpy as np

    assert rules.laplacian_variance(np.full((20, 20), 128)) == 0.0
    checker = (np.indices((20, 20)).sum(axis=0) % 2) * 255
    assert rules.laplacian_variance(checker) > 10_000
    assert rules.laplacian_variance(Image.new("L", (2, 2))) == 0.0
