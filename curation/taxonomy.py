"""The 18-leaf ambiguity taxonomy of TRIAD (App. A), as data the UI and validators read."""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel


class Leaf(BaseModel, frozen=True):
    """One leaf: where ambiguity enters an item through one modality."""

    modality: str
    name: str
    definition: str


_LEAVES: Final = [
    (
        "text",
        "anaphoric",
        "A pronoun, demonstrative or reference target does not resolve uniquely from the "
        'sentence alone ("She told him she was leaving." — who is leaving?).',
    ),
    (
        "text",
        "syntactic",
        "The sentence admits more than one grammatical parse, e.g. PP-attachment or "
        'coordination scope ("I saw the man with the telescope.").',
    ),
    (
        "text",
        "logical",
        "The scope of a quantifier, a negation or a modal is under-determined "
        '("Every student did not finish the exam.").',
    ),
    (
        "text",
        "pragmatic",
        "The speech act or implicature, not the literal content, carries the meaning: "
        'irony, indirect requests, politeness reversals ("Could you pass the salt?").',
    ),
    (
        "text",
        "temporal",
        "The temporal order, tense or aspect of the event is under-determined "
        '("She was reaching for the door when I entered.").',
    ),
    (
        "text",
        "lexical",
        "A content word has two or more senses that the sentence does not disambiguate "
        '("He couldn\'t see the bank from where he was standing.").',
    ),
    (
        "image",
        "semiotic",
        "A symbolic or emblematic sign admits more than one reading, e.g. a gesture or a "
        "cultural icon that means different things in different contexts.",
    ),
    (
        "image",
        "grounding",
        "Multiple candidate objects in the scene fit the question stem, so which object "
        "the question is about is itself unclear.",
    ),
    ("image", "spatial", "The relative position, orientation or depth of objects is ambiguous from the frame."),
    (
        "image",
        "kinematic",
        "A snapshot of a dynamic event does not reveal the direction or stage of motion (door opening versus closing).",
    ),
    (
        "image",
        "observational",
        "The viewpoint or framing makes the same layout compatible with different "
        "readings, e.g. a silhouette that could belong to several objects.",
    ),
    (
        "image",
        "contextual",
        "The scenario the image depicts is under-determined by the pixels alone "
        "(a whiteboard in a classroom, a startup office or an interview room).",
    ),
    (
        "audio",
        "referential",
        "A referring expression (pronoun, name, kinship term) whose referent depends on "
        "who is speaking, to whom, or in what context.",
    ),
    (
        "audio",
        "prosodic",
        "The words are fixed while focal stress or intonation changes the meaning "
        '("I didn\'t say she stole the money.").',
    ),
    (
        "audio",
        "indexical",
        "The speaker's age, gender or social role carries information the transcript "
        "does not (\"my boss called\" in a child's versus an adult's voice).",
    ),
    (
        "audio",
        "phonetic",
        'Confusable segments, junctures or minimal pairs ("ice cream" versus '
        '"I scream") resolve only with the acoustic signal.',
    ),
    (
        "audio",
        "environmental",
        "A background sound changes the reading of the foreground speech (a hospital PA versus a kitchen).",
    ),
    (
        "audio",
        "symbolic",
        "A non-linguistic auditory symbol (an alarm, a doorbell, a ringtone) carries the "
        "ambiguity-resolving information.",
    ),
]

TAXONOMY: Final[dict[str, dict[str, Leaf]]] = {}
for _modality, _name, _definition in _LEAVES:
    TAXONOMY.setdefault(_modality, {})[_name] = Leaf(modality=_modality, name=_name, definition=_definition)


def leaves(modality: str) -> list[str]:
    """Leaf names of one modality, in the order of TRIAD App. A."""
    return list(TAXONOMY[modality])


def definition(modality: str, leaf: str) -> str:
    """The definition of a leaf, for help texts."""
    return TAXONOMY[modality][leaf].definition
