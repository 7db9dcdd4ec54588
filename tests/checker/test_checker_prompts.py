from __future__ import annotations

from pathlib import Path

import pytest
from probe_fixtures import make_item

from checker.prompts import build_request, parse_answer
from checker.views import PROBE_VIEWS
from curation.vocab import PLACEHOLDERS


@pytest.mark.parametrize("view", PROBE_VIEWS)
def test_hidden_modalities_get_their_literal_placeholder(media_dir: Path, view: str) -> None:
    item = make_item(media_dir)
    request = build_request(item, view)
    text = request.prompt_text
    shown = set() if view == "none" else set(view.split("+"))
    for modality, placeholder in PLACEHOLDERS.items():
        assert (placeholder in text) == (modality not in shown), (view, modality)
    assert (item.context in text) == ("text" in shown)
    assert (request.image is not None) == ("image" in shown) == ("<image>" in text)
    assert (request.audio is not None) == ("audio" in shown) == ("<audio>" in text)
    assert request.audio_route == ("native" if "audio" in shown else "hidden")


@pytest.mark.parametrize("fmt", ["letter", "json"])
def test_the_label_never_reaches_any_prompt(media_dir: Path, fmt: str) -> None:
    for view in PROBE_VIEWS:
        prompts = {
            answer: build_request(make_item(media_dir, answer=answer), view, fmt=fmt)  # type: ignore[arg-type]
            for answer in "ABCD"
        }
        rendered = {(r.system, r.prompt_text) for r in prompts.values()}
        assert len(rendered) == 1, view  # the same prompt whatever the label


def test_options_are_shown_with_their_keys_in_key_order(media_dir: Path) -> None:
    item = make_item(media_dir, options={"A": "zebra", "B": "apple", "C": "mango"})
    text = build_request(item, "text+image+audio").prompt_text
    assert "Options: (A) zebra (B) apple (C) mango\n" in text
    assert "(A, B or C)" in text
    assert text.index("Question: How does") < text.index("Options:")


def test_json_format_is_p0_schema_verbatim(media_dir: Path) -> None:
    request = build_request(make_item(media_dir), "text", fmt="json")
    assert request.system.endswith("Respond with a single JSON object and nothing else.")
    assert '"answer": "<one of the option keys, e.g., option_A>"' in request.prompt_text
    assert request.prompt_text.startswith("Context (text): Sure, that was")


def test_model_without_audio_gets_a_transcript_or_a_description(media_dir: Path) -> None:
    with_transcript = make_item(media_dir, audio_transcript="Sure, that was helpful.")
    request = build_request(with_transcript, "audio", audio_input=False)
    assert request.audio is None and request.audio_route == "transcript"
    assert "[transcript of the audio clip] Sure, that was helpful." in request.prompt_text
    described = build_request(make_item(media_dir, audio_seconds=2.5), "text+audio", audio_input=False)
    assert described.audio_route == "description" and "2.5 s" in described.prompt_text
    assert build_request(with_transcript, "text", audio_input=False).audio_route == "hidden"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("A", "A"),
        (" B\n", "B"),
        ("(C)", "C"),
        ("D.", "D"),
        ("option_A", "A"),
        ("Option B", "B"),
        ("Answer: C", "C"),
        ('{"answer": "option_B", "reasoning": "tone"}', "B"),
        ('{"answer": "D"}', "D"),
        ("E", None),
        ("a", None),
        ("A or B", None),
        ("I think it is A", None),
        ("", None),
        ('{"answer": "option_E"}', None),
        ('{"reasoning": "x"}', None),
        ("{not json", None),
        ("AB", None),
    ],
)
def test_answers_are_parsed_strictly(answer: str, expected: str | None) -> None:
    assert parse_answer(answer, ("A", "B", "C", "D")) == expected
