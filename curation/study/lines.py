"""The study's input lines: system outputs (``--outputs``) and judge scores (``study judges``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from curation.schema import Identifier

from .rubric import CRITERIA, JUDGE_KEYS, SCALE


class OutputLine(BaseModel):
    """A system's generated next page for one transition: narration, illustration and/or speech (paths are
    relative to the JSONL file)."""

    model_config = ConfigDict(extra="forbid")
    system: Identifier
    transition: Identifier
    text: str | None = None
    image: str | None = None
    audio: str | None = None

    @model_validator(mode="after")
    def _has_output(self) -> OutputLine:
        if not (self.text or self.image or self.audio):
            raise ValueError("an output needs at least one of text, image, audio")
        return self

    @property
    def modalities(self) -> set[str]:
        return {m for m in ("text", "image", "audio") if getattr(self, m)}


def _score(name: str, value: Any) -> int:
    if isinstance(value, dict):
        if set(value) - {"score", "rationale"} or "score" not in value:
            raise ValueError(f"{name}: an object holds a score and a rationale, nothing else")
        value = value["score"]
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError(f"{name}: score {value!r} is not a whole number")
    if not SCALE[0] <= value <= SCALE[1]:
        raise ValueError(f"{name}: score {int(value)} is out of range {SCALE[0]}–{SCALE[1]}")
    return int(value)


class JudgeLine(BaseModel):
    """One judge's four scores for one output in one track; ``scores: null`` records an answer the judge
    gave that was not valid (it counts as no valid example, App. E.5). Criteria may be named as the study
    names them or by the judges' own keys (App. E.4); a score may be a number or ``{"score", "rationale"}``."""

    model_config = ConfigDict(extra="forbid")
    judge: Identifier
    system: Identifier
    transition: Identifier
    track: Literal["text", "image", "speech", "integrated"]
    scores: dict[str, Any] | None

    @model_validator(mode="after")
    def _normalized(self) -> JudgeLine:
        if self.scores is None:
            return self
        aliases = JUDGE_KEYS[self.track]
        normalized: dict[str, int] = {}
        for key, value in self.scores.items():
            criterion = aliases.get(key, key)
            if criterion not in CRITERIA:
                raise ValueError(
                    f"unknown criterion {key!r} for the {self.track} track (use {', '.join(CRITERIA)} "
                    f"or {', '.join(aliases)})"
                )
            if criterion in normalized:
                raise ValueError(f"criterion {criterion} is given twice")
            normalized[criterion] = _score(key, value)
        missing = [c for c in CRITERIA if c not in normalized]
        if missing:
            raise ValueError(f"missing criteria {', '.join(missing)} (a judge answer is valid only with all four)")
        self.scores = {c: normalized[c] for c in CRITERIA}
        return self
