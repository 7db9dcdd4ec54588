"""``replay:<file.jsonl>``: recorded samples or probabilities per item × view (design.md format)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import not_a_file, parse_line, read_lines, validate_line
from curation.media import sha256_file
from curation.schema import Identifier
from curation.vocab import OPTION_KEYS

from ..estimators import EstimatorConfig
from ..prompts import ProbeRequest
from ..verdicts import ItemResult
from ..views import PROBE_VIEWS, ProbeItem
from .base import ProbeBackend, ProbeOutput

UNPARSEABLE_MARK = "<unparseable>"
"""A recorded answer that named no option (counted towards K, never as an option)."""
PROBABILITY_TOLERANCE = 1e-3
"""How far a line's probabilities may sum from 1 (a recorded file rounds them); further is refused."""
MAX_SAMPLES = 1000
"""The most answers one line may record (K is 5 or 10 by default)."""


def _shown(value: Any) -> str:
    """A refused value as JSON (``true``, ``"?"``), cut short: what the user wrote, never a Python repr."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


class ReplayLine(BaseModel):
    """One line of a probe replay file: an item × view's recorded answers (``samples``: option letters, or
    ``"<unparseable>"`` for an answer that named none) or probabilities (``probs``: option → a number in
    [0, 1], summing to 1 within :data:`PROBABILITY_TOLERANCE`; an option left out has probability 0)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    item: Identifier
    view: str
    samples: list[str] | None = Field(default=None, min_length=1, max_length=MAX_SAMPLES)
    probs: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] | None = Field(default=None, min_length=1)
    audio_route: Literal["native", "transcript", "description", "hidden", "mixed"] = "hidden"
    """How the audio reached the model (written by ``curate check --record``)."""

    @field_validator("view")
    @classmethod
    def _known_view(cls, value: str) -> str:
        if value not in PROBE_VIEWS:
            raise ValueError(f"unknown view {_shown(value)}; views are {', '.join(PROBE_VIEWS)}")
        return value

    @field_validator("samples")
    @classmethod
    def _letters(cls, value: list[str] | None) -> list[str] | None:
        bad = [(i, s) for i, s in enumerate(value or []) if s not in OPTION_KEYS and s != UNPARSEABLE_MARK]
        if bad:
            where = ", ".join(f"answer {i + 1} is {_shown(s)}" for i, s in bad[:3]) + (" ..." if len(bad) > 3 else "")
            raise ValueError(
                f"an answer is an option letter (A to H), or {_shown(UNPARSEABLE_MARK)} for one that named none; "
                + where
            )
        return value

    @field_validator("probs", mode="before")
    @classmethod
    def _option_letters(cls, value: Any) -> Any:
        """Keys first, so that a problem never names a field by a key that holds a line break."""
        unknown = [k for k in value if k not in OPTION_KEYS] if isinstance(value, dict) else []
        if unknown:
            raise ValueError(f"{', '.join(map(_shown, unknown))} is not an option letter (A to H)")
        return value

    @field_validator("probs")
    @classmethod
    def _options_sum_to_one(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        total = math.fsum(value.values())
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise ValueError(
                f"the probabilities sum to {total:.6g}; they must sum to 1 (within {PROBABILITY_TOLERANCE:g})"
            )
        return value

    @model_validator(mode="after")
    def _one_form(self) -> ReplayLine:
        if (self.samples is None) == (self.probs is None):
            raise ValueError('give either "samples" or "probs", not both or neither')
        return self


def read_replay_file(path: Path, problems: list[Problem]) -> tuple[str, list[tuple[dict[str, Any], Any]]]:
    """A recorded run's digest (its model id) and its JSON lines with where each stands; a line that is not
    UTF-8 JSON (or nests too deeply) goes to ``problems`` as FILE:LINE. Read by the shared bounded reader
    (curation.jsonl): lines end at ``\\n`` only, so U+2028 in a recorded answer is text."""
    why = not_a_file(path)
    if why == "does not exist":
        raise NotFoundError(f"replay file {path} does not exist")
    if why is not None:  # a FIFO would block, /dev/zero never ends: named as what it is, never read
        raise ValidationFailed(
            [Problem(f"{why}; give the file itself", "replay file", file=str(path))], "nothing was read"
        )
    records: list[tuple[dict[str, Any], Any]] = []
    for number, raw in read_lines(path):
        record = raw if isinstance(raw, Problem) else parse_line(raw, str(path), number, max_text=None)
        if isinstance(record, Problem):
            problems.append(record)
        elif record is not None:
            records.append(({"file": str(path), "line": number}, record))
    return sha256_file(path)[:16], records


class ReplayBackend(ProbeBackend):
    """Reproduces a published run; a file may mix ``samples`` and ``probs`` lines."""

    kind = "replay"
    batch_size = 512

    def __init__(self, target: str) -> None:
        self.path = Path(target)
        self.lines: dict[tuple[str, str], dict] = {}
        problems: list[Problem] = []
        self._digest, records = read_replay_file(self.path, problems)
        self.where: dict[tuple[str, str], int] = {}
        for where, record in records:
            parsed = validate_line(ReplayLine, record, where["file"], where["line"])
            if isinstance(parsed, list):
                problems.extend(parsed)
                continue
            assert isinstance(parsed, ReplayLine)
            key = (parsed.item, parsed.view)
            if key in self.lines:
                problems.append(
                    Problem(
                        f"item {parsed.item}, view {parsed.view} is given twice (first on line {self.where[key]}); "
                        "keep one of the two",
                        "view",
                        **where,
                    )
                )
                continue
            self.lines[key] = parsed.model_dump(exclude_unset=True, exclude_none=True)
            self.where[key] = where["line"]
        if problems:
            raise ValidationFailed(problems, "nothing was probed; fix the replay file and try again")
        self.items = {item for item, _ in self.lines}

    @property
    def model_id(self) -> str:
        return f"{self.path.name}@{self._digest}"

    def covers(self, item_id: str) -> bool:
        return item_id in self.items

    def check_items(self, items: Sequence[ProbeItem]) -> None:
        """Refuse, before anything is probed or stored, every line that does not fit its item: a view the item
        does not have, an answer or a probability for an option it does not have. All of them at once."""
        file, problems = str(self.path), list[Problem]()
        for item in items:
            keys, views = tuple(item.options), item.views
            for view in PROBE_VIEWS:
                line = self.lines.get((item.id, view))
                if line is None:
                    continue
                at = self.where[(item.id, view)]
                if view not in views:
                    message = f"item {item.id} has no view {view} (its views are {', '.join(views)})"
                    problems.append(Problem(message, "view", at, file))
                    continue
                options = f"item {item.id}'s options are {', '.join(keys)}"
                strays: dict[str, list[int]] = {}
                for index, answer in enumerate(line.get("samples", [])):
                    if answer != UNPARSEABLE_MARK and answer not in keys:
                        strays.setdefault(answer, []).append(index)
                for answer, first in strays.items():
                    times = f" ({len(first)} times)" if len(first) > 1 else ""
                    message = f"answer {answer}{times} is not an option of the item; {options}"
                    problems.append(Problem(message, f"samples.{first[0]}", at, file))
                for key in line.get("probs", {}):
                    if key not in keys:
                        message = f"option {key} is not an option of the item; {options}"
                        problems.append(Problem(message, f"probs.{key}", at, file))
        if problems:
            raise ValidationFailed(problems, "nothing was probed; fix the replay file and try again")

    def probed_views(self, item_id: str, views: Sequence[str]) -> tuple[str, ...]:
        """The recorded views among ``views``; the full view (last) must be one of them."""
        recorded = tuple(v for v in views if (item_id, v) in self.lines)
        if views and views[-1] not in recorded:
            raise NotFoundError(
                f"{self.path} has no line for item {item_id}, view {views[-1]}: a replayed item needs at "
                f"least its full view (it has {', '.join(recorded) or 'none of its views'}); the views it lacks "
                "are judged unprobed"
            )
        return recorded

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        outputs = []
        for request in requests:
            record = self.lines.get((request.item_id, request.view))
            if record is None:
                raise NotFoundError(f"{self.path} has no line for item {request.item_id}, view {request.view}")
            samples = record.get("samples")
            probs = record.get("probs")
            outputs.append(
                ProbeOutput(
                    request.item_id,
                    request.view,
                    samples=list(samples) if samples is not None else None,
                    probs={k: float(v) for k, v in probs.items()} if probs is not None else None,
                    audio_route=record.get("audio_route", request.audio_route),
                )
            )
        return outputs


def replay_lines(results: Sequence[ItemResult]) -> Iterator[dict]:
    """A run as replay lines, so it can be published and reproduced (``curate check --record``).

    Sampled views keep their counts (answers in key order, unparseable ones as a mark); probability
    views keep the probabilities the rule was applied to (after temperature), which replay uses as is.
    """
    for result in results:
        for view in (v for v in PROBE_VIEWS if v in result.views):  # unprobed views have no line
            estimate = result.views[view]
            line: dict = {"item": result.item, "view": view}
            if estimate.counts is not None:
                line["samples"] = [k for k, n in estimate.counts.items() for _ in range(n)] + (
                    [UNPARSEABLE_MARK] * estimate.unparseable
                )
            else:
                line["probs"] = estimate.probs
            line["audio_route"] = estimate.audio_route
            yield line
