"""``curate screen``: the declared screening pipeline, every step cached per candidate, and its funnel.

Steps run in the order ``[screen] steps`` declares; each sees only the candidates every earlier step kept.
A step's outcome is stored per candidate with a key (the step's settings, the candidate's line, the model):
a re-run computes only what is missing or stale, and a model step writes after every batch, so an
interrupted screen resumes where it stopped.
"""

from __future__ import annotations

import gc
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError
from sqlalchemy import delete, func, insert, select
from sqlmodel import col

from curation.bulk import collector_paused, long_lived_frozen
from curation.errors import CurateError
from curation.tables import utcnow
from curation.workspace import Workspace

from . import rules
from .model import (
    TASK_MODELS,
    StructuredModel,
    StructuredRequest,
    book_meta_request,
    conditions_request,
    score_request,
    speech_request,
)
from .prompt_templates import load_prompts
from .schema import Scores
from .selection import Scored, select_best
from .settings import ScreenSettings
from .tables import Candidate, ScreenResult

RULE_STEPS = ("length", "speech", "language", "image")
MODEL_STEPS = ("score", "annotate")
WRITE_ROWS = 5000

Progress = Callable[[str, int, int], None]


@dataclass
class StepCount:
    step: str
    inputs: int
    kept: int
    dropped: dict[str, int]
    computed: int = 0
    """Candidates this run computed (the rest came from the cache)."""
    seconds: float = 0.0
    """Wall time of the step in this run (0 for a funnel read back from the store)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "inputs": self.inputs,
            "kept": self.kept,
            "dropped": sum(self.dropped.values()),
            "reasons": dict(sorted(self.dropped.items())),
            "computed": self.computed,
        }


@dataclass
class Funnel:
    candidates: int
    steps: list[StepCount] = field(default_factory=list)

    @property
    def selected(self) -> int:
        return self.steps[-1].kept if self.steps else self.candidates

    def to_json(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "steps": [s.to_json() for s in self.steps], "kept": self.selected}


@dataclass(frozen=True)
class _Row:
    """The columns a step reads of a candidate."""

    id: str
    book: str
    page: int
    title: str
    current_text: str
    next_text: str
    current_image: str
    next_image: str
    speech_lines: list[str] | None
    annotations: dict[str, Any] | None
    line_hash: str


def _digest(*parts: Any) -> str:
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


def _load_candidates(ws: Workspace) -> list[_Row]:
    columns = [getattr(Candidate, name) for name in _Row.__dataclass_fields__]
    with ws.session() as s:
        return [_Row(*r) for r in s.execute(select(*columns).order_by(col(Candidate.id))).all()]


def _stored(ws: Workspace, step: str, with_data: bool = False) -> dict[str, tuple[str, str, str, Any]]:
    last: Any = col(ScreenResult.data) if with_data else col(ScreenResult.step)
    columns = [
        col(ScreenResult.candidate_id),
        col(ScreenResult.key),
        col(ScreenResult.outcome),
        col(ScreenResult.reason),
        last,
    ]
    with ws.session() as s:
        return {
            r[0]: (r[1], r[2], r[3], r[4]) for r in s.execute(select(*columns).where(col(ScreenResult.step) == step))
        }


def _write(
    ws: Workspace,
    step: str,
    rows: Sequence[dict[str, Any]],
    stale: Sequence[str] = (),
    stored: Container[str] | None = None,
) -> None:
    """Replace this step's results of the rows' candidates, and forget those of ``stale`` ones.

    ``stored`` (when known) names the candidates that have a result to replace: a first run deletes nothing.
    """
    replaced = [r["candidate_id"] for r in rows if stored is None or r["candidate_id"] in stored]
    with ws.writing() as s:
        if stored is not None:  # another `curate screen` may have stored results since `stored` was read
            fresh = [r["candidate_id"] for r in rows if r["candidate_id"] not in stored]
            for ids in _chunks(fresh, 900):
                replaced += s.execute(
                    select(col(ScreenResult.candidate_id)).where(
                        col(ScreenResult.step) == step, col(ScreenResult.candidate_id).in_(ids)
                    )
                ).scalars()
        for ids in _chunks(replaced + list(stale), 900):
            s.execute(
                delete(ScreenResult).where(col(ScreenResult.step) == step, col(ScreenResult.candidate_id).in_(ids))
            )
        if rows:
            s.execute(insert(ScreenResult), list(rows))


def _result(candidate: str, step: str, key: str, reason: str, data: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "candidate_id": candidate,
        "step": step,
        "key": key,
        "outcome": "drop" if reason else "keep",
        "reason": reason,
        "data": data,
        "updated_at": utcnow(),
    }


STEP_TASKS = {"score": ("score",), "annotate": ("book_meta", "conditions", "speech")}
"""The model tasks each model step asks (``[screen.model.<task>]`` may name a backend for each)."""


class _Runner:
    def __init__(
        self,
        ws: Workspace,
        settings: ScreenSettings,
        model: StructuredModel | None,
        progress: Progress | None,
        models: Mapping[str, StructuredModel] | None = None,
    ) -> None:
        self.ws, self.settings, self.model = ws, settings, model
        self.models = dict(models or {})
        self.prompts = load_prompts(ws.root, settings.prompts)
        self.progress = progress or (lambda _step, _done, _total: None)

    def _model(self, task: str) -> StructuredModel:
        """The model that answers ``task`` (score, book_meta, conditions, speech): its own, else the default."""
        model = self.models.get(task, self.model)
        if model is None:
            raise CurateError(
                f"screening task {task!r} needs a model: set [screen.model] backend (or [screen.model.{task}]) "
                "in curate.toml, or pass --backend (e.g. replay:outputs.jsonl)"
            )
        return model

    def _model_id(self, step: str) -> str:
        """What a step's cache key knows of its models: one id when one model answers every task."""
        if self.model is None and not self.models:
            return ""
        ids = {task: self._model(task).model_id for task in STEP_TASKS[step]}
        return next(iter(ids.values())) if len(set(ids.values())) == 1 else _digest(sorted(ids.items()))

    def _settings_of(self, step: str) -> Any:
        if step in RULE_STEPS:
            return self.settings.rules.model_dump(mode="json")
        if step == "score":
            return {"min_score": self.settings.min_score, "prompts": self.prompts.digest("score")}
        if step == "annotate":  # a changed prompt asks again: the cache is by (model, prompt, inputs)
            return {"prompts": self.prompts.digest("book_meta", "conditions", "speech")}
        if step == "select":
            return {"per_book": self.settings.per_book, "top": self.settings.top}
        return {}

    def run(self) -> Funnel:
        rows = _load_candidates(self.ws)
        with long_lived_frozen():
            return self._run(rows)

    def _run(self, rows: list[_Row]) -> Funnel:
        by_id = {r.id: r for r in rows}
        funnel = Funnel(len(rows))
        alive = [r.id for r in rows]
        for step in self.settings.steps:
            started = time.perf_counter()
            stored = _stored(self.ws, step, with_data=step == "score")
            alive_set = set(alive)
            stale = [cid for cid in stored if cid not in alive_set]
            with collector_paused() if step not in MODEL_STEPS else nullcontext():
                if step == "select":
                    outcomes, computed = self._select(alive, by_id, stale)
                else:
                    outcomes, computed = self._per_candidate(step, [by_id[c] for c in alive], stored, stale)
            dropped = Counter(reason for reason in outcomes.values() if reason)
            kept, seconds = len(alive) - sum(dropped.values()), time.perf_counter() - started
            funnel.steps.append(StepCount(step, len(alive), kept, dict(dropped), computed, seconds))
            alive = [cid for cid in alive if not outcomes[cid]]
        return funnel

    # ----- per-candidate steps ---------------------------------------------------------------
    def _per_candidate(
        self, step: str, inputs: list[_Row], stored: dict[str, tuple[str, str, str, Any]], stale: list[str]
    ) -> tuple[dict[str, str], int]:
        settings = self._settings_of(step)
        model_id = self._model_id(step) if step in MODEL_STEPS else ""
        outcomes: dict[str, str] = {}
        todo: list[tuple[_Row, str]] = []
        for row in inputs:
            key = _digest(step, settings, row.line_hash, model_id)
            found = stored.get(row.id)
            if found is not None and found[0] == key:
                outcomes[row.id] = found[2]
            else:
                todo.append((row, key))
        if todo and step in MODEL_STEPS:
            for task in STEP_TASKS[step]:
                self._model(task)  # a missing model is named before any work
        # The stored results and the work list (a tuple per candidate) live through the whole step: frozen,
        # they are left out of the collections a model step's batches trigger (which otherwise rescanned
        # them all each time: 1.4x the time per candidate at 91k as at 10k); ``run`` unfreezes them.
        gc.freeze()
        if stale:
            _write(self.ws, step, [], stale)
        done = 0
        self.progress(step, 0, len(todo))
        compute = {"score": self._score_batch, "annotate": self._annotate_batch}.get(step, self._rule_batch)
        size = self._batch_size(step) if step in MODEL_STEPS else WRITE_ROWS
        for batch in _chunks(todo, size):
            results = compute(step, batch)
            _write(self.ws, step, results, stored=stored)
            for r in results:
                outcomes[r["candidate_id"]] = r["reason"]
            done += len(batch)
            self.progress(step, done, len(todo))
        return outcomes, len(todo)

    def _batch_size(self, step: str) -> int:
        task = STEP_TASKS[step][-1]
        model = self._model(task)
        configured = self.settings.model.for_task(task).batch_size
        return configured or getattr(model, "batch_size", 0) or 64

    def _rule_batch(self, step: str, batch: Sequence[tuple[_Row, str]]) -> list[dict[str, Any]]:
        settings = self.settings.rules
        if step == "image":
            rules.probe_images(path for row, _ in batch for path in (row.current_image, row.next_image))
        results = []
        for row, key in batch:
            if step == "length":
                outcome = rules.length_rule(row.current_text, row.next_text, settings)
            elif step == "speech":
                outcome = rules.speech_rule(row.next_text, row.speech_lines, settings)
            elif step == "language":
                outcome = rules.language_rule(row.current_text, row.next_text, settings)
            else:
                outcome = rules.image_rule(row.current_image, row.next_image, settings)
            results.append(_result(row.id, step, key, outcome.reason, outcome.data))
        return results

    def _score_batch(self, step: str, batch: Sequence[tuple[_Row, str]]) -> list[dict[str, Any]]:
        model = self._model("score")
        requests = [
            score_request(row.id, (row.current_image, row.current_text), (row.next_image, row.next_text), self.prompts)
            for row, _ in batch
        ]
        answers = model.generate(requests)
        results = []
        for (row, key), request, answer in zip(batch, requests, answers, strict=True):
            provenance = {"model": model.model_id, "prompt_hash": request.prompt_hash}
            try:
                scores = Scores.model_validate(answer)
            except ValidationError:
                results.append(_result(row.id, step, key, "score:invalid", {"provenance": provenance}))
                continue
            mean = scores.mean
            data = {"scores": scores.model_dump(mode="json"), "mean": mean, "provenance": provenance}
            reason = "score:below_min" if mean < self.settings.min_score else ""
            results.append(_result(row.id, step, key, reason, data))
        return results

    def _annotate_batch(self, step: str, batch: Sequence[tuple[_Row, str]]) -> list[dict[str, Any]]:
        """Book metadata once per book, then next-page conditions and the speech target per candidate;
        proposals a candidate brought with it (imported with provenance) are kept, not asked again."""
        books = sorted({row.book for row, _ in batch if "book_meta" not in (row.annotations or {})})
        book_meta = dict(self._book_meta(self._model("book_meta"), books))
        requests: list[StructuredRequest] = []
        for row, _ in batch:
            given = row.annotations or {}
            meta = given.get("book_meta", book_meta.get(row.book, {})).get("value") or {}
            if "conditions" not in given:
                current, nxt = (row.current_image, row.current_text), (row.next_image, row.next_text)
                requests.append(conditions_request(row.id, meta, current, nxt, self.prompts, row.speech_lines or ()))
            if "speech" not in given:
                lines = row.speech_lines or []
                story = f"{row.current_text}\n\n{row.next_text}"
                requests.append(speech_request(row.id, story, lines, self.prompts))
        answers: dict[tuple[str, str], dict[str, Any] | None] = {}
        for task in ("conditions", "speech"):
            asked = [r for r in requests if r.task == task]
            if asked:
                answers.update(
                    zip(((r.subject, r.task) for r in asked), self._model(task).generate(asked), strict=True)
                )
        prompts = {(r.subject, r.task): r.prompt_hash for r in requests}
        results = []
        for row, key in batch:
            proposals = dict(row.annotations or {})
            if "book_meta" not in proposals and book_meta.get(row.book):
                proposals["book_meta"] = book_meta[row.book]
            reason = "" if "book_meta" in proposals else "annotate:invalid_book_meta"
            for task in ("conditions", "speech"):
                if task in proposals:
                    continue
                answer = answers.get((row.id, task))
                try:
                    value = TASK_MODELS[task].model_validate(answer).model_dump(mode="json")
                except ValidationError:
                    reason = reason or f"annotate:invalid_{task}"
                    continue
                proposals[task] = {
                    "value": value,
                    "provenance": {"model": self._model(task).model_id, "prompt_hash": prompts[(row.id, task)]},
                }
            results.append(_result(row.id, step, key, reason, {"annotations": proposals}))
        return results

    def _book_meta(self, model: StructuredModel, books: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        if not books:
            return
        with self.ws.session() as s:
            pages: dict[str, dict[int, str]] = {}
            titles: dict[str, str] = {}
            query = select(
                col(Candidate.book),
                col(Candidate.page),
                col(Candidate.title),
                col(Candidate.current_text),
                col(Candidate.next_text),
            )
            for ids in _chunks(books, 900):
                for book, page, title, current, nxt in s.execute(query.where(col(Candidate.book).in_(ids))):
                    pages.setdefault(book, {})[page] = current
                    pages[book].setdefault(page + 1, nxt)
                    titles[book] = title
        requests = [
            book_meta_request(b, titles[b], [pages[b][p] for p in sorted(pages[b])], self.prompts) for b in books
        ]
        for request, answer in zip(requests, model.generate(requests), strict=True):
            try:
                value = TASK_MODELS["book_meta"].model_validate(answer).model_dump(mode="json")
            except ValidationError:
                continue
            provenance = {"model": model.model_id, "prompt_hash": request.prompt_hash}
            yield request.subject.removeprefix("book:"), {"value": value, "provenance": provenance}

    # ----- selection -------------------------------------------------------------------------
    def _select(self, alive: list[str], by_id: dict[str, _Row], stale: list[str]) -> tuple[dict[str, str], int]:
        scores = _stored(self.ws, "score", with_data=True)
        scored = []
        for cid in alive:
            data = (scores.get(cid) or ("", "", "", None))[3] or {}
            mean = float(data.get("mean", 0.0))
            transition = int(((data.get("scores") or {}).get("transition_coherence") or {}).get("score", 0))
            scored.append(Scored(cid, by_id[cid].book, mean, transition))
        key = _digest("select", self._settings_of("select"), sorted((s.id, s.mean, s.transition) for s in scored))
        stored = _stored(self.ws, "select")
        if not stale and len(stored) == len(alive) and all(stored.get(c, ("",))[0] == key for c in alive):
            return {cid: stored[cid][2] for cid in alive}, 0
        outcome = select_best(scored, self.settings.top, self.settings.per_book)
        results = [
            _result(s.id, "select", key, outcome[s.id], {"mean": s.mean, "transition": s.transition}) for s in scored
        ]
        self.progress("select", 0, len(results))
        for i, batch in enumerate(_chunks(results, WRITE_ROWS)):
            _write(self.ws, "select", batch, stale if i == 0 else ())
        if not results and stale:
            _write(self.ws, "select", [], stale)
        self.progress("select", len(results), len(results))
        return outcome, len(results)


def run_screen(
    ws: Workspace,
    settings: ScreenSettings,
    model: StructuredModel | None = None,
    progress: Progress | None = None,
    models: Mapping[str, StructuredModel] | None = None,
) -> Funnel:
    """Run every declared step over the candidates; what is cached and still valid is not recomputed.

    ``models`` maps a model task (score, book_meta, conditions, speech) to the model that answers it;
    tasks it leaves out are answered by ``model``."""
    return _Runner(ws, settings, model, progress, models).run()


def stored_funnel(ws: Workspace, settings: ScreenSettings) -> Funnel:
    """The funnel of the last screen, from the stored outcomes (no step is run)."""
    with ws.session() as s:
        total = s.execute(select(func.count()).select_from(Candidate)).scalar_one()
        counts = s.execute(
            select(col(ScreenResult.step), col(ScreenResult.reason), func.count()).group_by(
                col(ScreenResult.step), col(ScreenResult.reason)
            )
        ).all()
    by_step: dict[str, Counter[str]] = {}
    for step, reason, n in counts:
        by_step.setdefault(step, Counter())[reason] += n
    funnel = Funnel(total)
    for step in settings.steps:
        found = by_step.get(step)
        if not found:
            break
        kept = found.pop("", 0)
        funnel.steps.append(StepCount(step, kept + sum(found.values()), kept, dict(found)))
    return funnel


def selected_candidates(ws: Workspace, settings: ScreenSettings) -> list[str]:
    """Candidates kept by every declared step of the last screen, in id order."""
    last = settings.steps[-1] if settings.steps else None
    if last is None:
        return []
    with ws.session() as s:
        kept = s.execute(
            select(col(ScreenResult.candidate_id))
            .where(col(ScreenResult.step) == last, col(ScreenResult.outcome) == "keep")
            .order_by(col(ScreenResult.candidate_id))
        )
        return list(kept.scalars())
