"""``replay:<file.jsonl>``: recorded samples or probabilities per item × view (design.md format)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import parse_line, read_lines
from curation.media import sha256_file

from ..estimators import EstimatorConfig
from ..prompts import ProbeRequest
from ..verdicts import ItemResult
from ..views import PROBE_VIEWS
from .base import ProbeBackend, ProbeOutput


def read_replay_file(path: Path, problems: list[Problem]) -> tuple[str, list[tuple[dict[str, Any], Any]]]:
    """A recorded run's digest (its model id) and its JSON lines with where each stands; a line that is not
    UTF-8 JSON (or nests too deeply) goes to ``problems`` as FILE:LINE. Read by the shared bounded reader
    (curation.jsonl): lines end at ``\\n`` only, so U+2028 in a recorded answer is text."""
    if not path.is_file():
        raise NotFoundError(f"replay file {path} does not exist")
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
        for where, record in records:
            if not isinstance(record, dict) or not isinstance(record.get("item"), str):
                problems.append(Problem('a line needs an "item" id', field="item", **where))
                continue
            view = record.get("view")
            if view not in PROBE_VIEWS:
                problems.append(
                    Problem(f"unknown view {view!r}; views are {', '.join(PROBE_VIEWS)}", field="view", **where)
                )
                continue
            samples, probs = record.get("samples"), record.get("probs")
            if (samples is None) == (probs is None):
                problems.append(Problem('give either "samples" or "probs"', **where))
            elif samples is not None and not (
                isinstance(samples, list) and samples and all(isinstance(s, str) for s in samples)
            ):
                problems.append(Problem("a non-empty list of answer strings", field="samples", **where))
            elif probs is not None and not (
                isinstance(probs, dict) and all(isinstance(v, int | float) and 0 <= v <= 1 for v in probs.values())
            ):
                problems.append(Problem("option → probability in [0, 1]", field="probs", **where))
            elif (record["item"], view) in self.lines:
                problems.append(Problem(f"{record['item']} {view} is given twice", **where))
            else:
                self.lines[(record["item"], view)] = record
        if problems:
            raise ValidationFailed(problems, "fix the replay file and try again")
        self.items = {item for item, _ in self.lines}

    @property
    def model_id(self) -> str:
        return f"{self.path.name}@{self._digest}"

    def covers(self, item_id: str) -> bool:
        return item_id in self.items

    def probed_views(self, item_id: str, views: Sequence[str]) -> tuple[str, ...]:
        """The recorded views among ``views``; the full view (last) must be one of them."""
        recorded = tuple(v for v in views if (item_id, v) in self.lines)
        if views and views[-1] not in recorded:
            raise NotFoundError(
                f"{self.path} has no line for item {item_id!r}, view {views[-1]!r}: a replayed item needs at "
                f"least its full view (it has {', '.join(recorded) or 'none of its views'}); the views it lacks "
                "are judged unprobed"
            )
        return recorded

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        outputs = []
        for request in requests:
            record = self.lines.get((request.item_id, request.view))
            if record is None:
                raise NotFoundError(f"{self.path} has no line for item {request.item_id!r}, view {request.view!r}")
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


UNPARSEABLE_MARK = "<unparseable>"


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
