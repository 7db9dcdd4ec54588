"""Audio sign-off's separation (issue 45, TRIAD B.4): a speaker or the producer of an item's clip is refused as its
listener, named ``separation:recording``; the clip's credits are checked where an item line is read."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from curation.audio_production.credits import AUDIO_PEOPLE, credits_of, with_audio_people
from curation.config import ReviewSettings
from curation.facts import ItemFacts
from curation.kinds import kind_of
from curation.schema import AudioProvenance

PROVENANCE = {"audio": {"source": "voice_acting", "license": "CC-BY-4.0", "speakers": ["spk1"], "producer": "prod"}}


def item(extra: dict) -> ItemFacts:  # type: ignore[type-arg]
    return ItemFacts(
        "i1", "g1", "ann1", 1, "ctx", "q?", {"A": "a", "B": "b"}, "A", "img", "aud", "voice_acting", "h", extra=extra
    )


@pytest.mark.parametrize("listener", ["spk1", "prod"])
def test_a_speaker_or_the_producer_of_the_clip_is_refused_as_its_listener(listener: str) -> None:
    rule = kind_of("mcq").stage("audio_signoff").separation_rule(ReviewSettings())
    facts = item(with_audio_people({}, PROVENANCE))
    refusal = rule(listener, facts, {})
    assert refusal is not None and refusal.startswith("separation:recording:") and repr(listener) in refusal
    assert rule("rev1", facts, {}) is None
    assert rule("ann1", facts, {}) is not None  # the author still reviews nothing


def test_an_item_whose_provenance_names_nobody_has_no_recording_people() -> None:
    plain = {"audio": {"source": "natural", "license": "CC0-1.0"}}
    assert with_audio_people({"x": 1}, plain) == {"x": 1}
    assert with_audio_people({}, PROVENANCE)[AUDIO_PEOPLE] == ("prod", "spk1")
    assert credits_of(PROVENANCE).voice_acted and not credits_of(plain).voice_acted


@pytest.mark.parametrize(
    ("audio", "message"),
    [
        ({"source": "tts", "speakers": ["spk1"]}, "TTS-only clip has no speaker"),
        ({"source": "natural", "producer": "prod"}, "a natural clip has no producer"),
        ({"source": "voice_acting", "producer": "prod"}, "names its speaker(s)"),
        ({"source": "voice_acting", "speakers": ["a b"]}, "a list of people's names"),
        ({"source": "voice_acting", "speakers": ["spk1", "spk1"]}, "name each speaker once"),
        ({"source": "voice_acting", "session": " "}, "session: a text"),
    ],
)
def test_malformed_credits_are_refused_with_their_key(audio: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        AudioProvenance.model_validate({"license": "CC0-1.0", **audio})


def test_credits_are_kept_only_when_given() -> None:
    bare = AudioProvenance.model_validate({"source": "voice_acting", "license": "CC0-1.0"})
    assert bare.model_dump(mode="json") == {"source": "voice_acting", "license": "CC0-1.0"}
