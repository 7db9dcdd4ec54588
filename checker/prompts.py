"""Probe prompts (TRIAD App. G.1, G.4, G.5) and strict answer parsing.

Every view uses the P0 prompt; a hidden modality is replaced by its literal placeholder
(curation.vocab.PLACEHOLDERS). Options are shown with their keys in key order; the label never appears.

Two answer formats: ``json`` is P0's output schema verbatim (free generation, parsed strictly);
``letter`` asks for the option key alone, which is what the constrained backends decode (a choice
constraint over the option keys, one token) — the only change to P0's wording.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from curation.vocab import PLACEHOLDERS

from .views import ProbeItem, shows

AnswerFormat = Literal["letter", "json"]
AudioRoute = Literal["native", "transcript", "description", "hidden"]

SYSTEM_P0 = (
    "You are a careful multimodal assistant. You will be given a question together with up to three "
    "context modalities (a short text passage, an image, and an audio clip). Exactly one option is the "
    "correct answer. "
)
_SYSTEM_TAIL: dict[str, str] = {
    "json": "Respond with a single JSON object and nothing else.",
    "letter": "Respond with the key of one option and nothing else.",
}
_JSON_SCHEMA = (
    'Output JSON schema. { "answer": "<one of the option keys, e.g., option_A>", '
    '"reasoning": "<one or two short sentences>" } Do not output anything outside the JSON object. '
    "Do not wrap it in Markdown."
)


@dataclass(frozen=True)
class Part:
    """One piece of the user turn: text, or the place where the image or the audio goes."""

    kind: Literal["text", "image", "audio"]
    text: str = ""


@dataclass(frozen=True)
class ProbeRequest:
    """One view of one item, as every backend consumes it."""

    item_id: str
    view: str
    system: str
    parts: tuple[Part, ...]
    option_keys: tuple[str, ...]
    image: Path | None
    audio: Path | None
    audio_route: AudioRoute
    answer_format: AnswerFormat = "letter"
    seed: int = 0
    full_view: str = "text+image+audio"
    """The item's full view: it gets ``k_full`` samples (``text+image`` for a {text, image} item)."""

    @property
    def prompt_text(self) -> str:
        """The user turn with ``<image>``/``<audio>`` where the media go (logs, tests, text-only use)."""
        return "".join(p.text if p.kind == "text" else f"<{p.kind}>" for p in self.parts)


def _options_block(options: dict[str, str]) -> str:
    return " ".join(f"({key}) {text}" for key, text in options.items())


def _answer_instruction(fmt: AnswerFormat, keys: tuple[str, ...]) -> str:
    if fmt == "json":
        return _JSON_SCHEMA
    listed = ", ".join(keys[:-1]) + f" or {keys[-1]}"
    return f"Answer with the key of one option ({listed}) and nothing else."


def audio_description(item: ProbeItem) -> str:
    """What a model without audio input reads in place of the clip (TRIAD G.6)."""
    if item.audio_transcript:
        return f"[transcript of the audio clip] {item.audio_transcript}"
    length = f"{item.audio_seconds:.1f} s " if item.audio_seconds else ""
    return f"[an audio clip of {length}is provided, but this model cannot hear it and no transcript is available]"


def build_request(
    item: ProbeItem, view: str, *, audio_input: bool = True, fmt: AnswerFormat = "letter", seed: int = 0
) -> ProbeRequest:
    """The P0 prompt for ``view`` of ``item``; ``audio_input=False`` routes audio as text (G.6)."""
    keys = tuple(item.options)
    has = item.modalities
    if view not in item.views:
        raise ValueError(f"{item.id} has the modalities {', '.join(has)}; {view!r} is not one of its views")
    parts: list[Part] = []
    lines: list[str] = []  # an item over fewer modalities has no line (and no placeholder) for the others
    if "text" in has:
        text = PLACEHOLDERS["text"] if not shows(view, "text") else item.context
        lines.append(f"Context (text): {text}")
    parts.append(Part("text", "\n".join(lines)))
    if "image" in has:
        parts.append(Part("text", ("\n" if lines else "") + "Image: "))
        lines.append("Image")
        parts.append(Part("image") if shows(view, "image") else Part("text", PLACEHOLDERS["image"]))
    route: AudioRoute = "hidden"
    if "audio" in has:
        parts.append(Part("text", ("\n" if lines else "") + "Audio: "))
        lines.append("Audio")
        if not shows(view, "audio"):
            parts.append(Part("text", PLACEHOLDERS["audio"]))
        elif audio_input:
            route = "native"
            parts.append(Part("audio"))
        else:
            route = "transcript" if item.audio_transcript else "description"
            parts.append(Part("text", audio_description(item)))
    parts.append(
        Part(
            "text",
            f"\nQuestion: {item.question}\nOptions: {_options_block(item.options)}\n" + _answer_instruction(fmt, keys),
        )
    )
    merged: list[Part] = []
    for part in parts:  # adjacent text pieces become one, so every backend sees the same segmentation
        if part.kind == "text" and not part.text:
            continue
        if merged and part.kind == "text" and merged[-1].kind == "text":
            merged[-1] = Part("text", merged[-1].text + part.text)
        else:
            merged.append(part)
    return ProbeRequest(
        item_id=item.id,
        view=view,
        system=SYSTEM_P0 + _SYSTEM_TAIL[fmt],
        parts=tuple(merged),
        option_keys=keys,
        image=item.image if shows(view, "image") else None,
        audio=item.audio if route == "native" else None,
        audio_route=route,
        answer_format=fmt,
        seed=seed,
        full_view=item.full_view,
    )


_BARE = re.compile(r"^\(?(?:option[_ ])?([A-H])\)?[.:]?$", re.IGNORECASE)
_TAGGED = re.compile(r"^answer\s*:\s*\(?(?:option[_ ])?([A-H])\)?\.?$", re.IGNORECASE)


def parse_answer(text: str, option_keys: tuple[str, ...] | list[str]) -> str | None:
    """The option key an answer names, or ``None`` when it names none unambiguously.

    Accepted: a bare key (``A``, ``(A)``, ``A.``, ``option_A``), ``Answer: A``, or P0's JSON object whose
    ``answer`` is one of those. Anything else — prose, two keys, a key that is not an option — is
    unparseable and never counted as an option.
    """
    candidate = text.strip()
    if candidate.startswith("{"):
        try:
            document = json.loads(candidate)
        except json.JSONDecodeError:
            return None
        if not isinstance(document, dict) or not isinstance(document.get("answer"), str):
            return None
        candidate = document["answer"].strip()
    match = _BARE.match(candidate) or _TAGGED.match(candidate)
    if not match:
        return None
    key = match.group(1).upper()
    # a lower-case bare letter is accepted only as an explicit option reference, not as a word ("a")
    if candidate.lower() == candidate and not candidate.lower().startswith(("option", "answer")):
        return None
    return key if key in option_keys else None
