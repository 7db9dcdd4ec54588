"""Checklist drafting through model backends (Judge Anything §2.2): caption audio and video inputs first,
then ask for a structured checklist per rubric; every answer is cached in the workspace (``judge_draft``,
keyed by the task's content, the model and the prompt version), so a re-run calls no model.

The captions are the caption route's (``judge_caption``, :mod:`curation.kinds.judge.captioning`): one caption per
medium, model and caption prompt, reused when that model already captioned the medium (for another task, an
earlier draft, or a judge run through captions) and stored when it is asked, so drafting and judging share it.

Backends: ``replay:<file.jsonl>`` (recorded drafts, one line per task:
``{"task", "model", "captions": {"video": "..."}, "checklist": {rubric: [questions]}}``) and
``openai:<base-url>#<model>[#vllm]`` (any OpenAI-compatible server, asked for JSON by schema; ``#vllm``
also uses vLLM's own structured outputs, without free whitespace).
"""

from __future__ import annotations

import base64
import json
import mimetypes
import os
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import validate_line
from curation.kinds.judge import draft_store, task_store
from curation.kinds.judge.captioning import Captioner, caption, stored_caption
from curation.kinds.judge.checklists import drafted_entries
from curation.kinds.judge.drafting import (
    CAPTION_PROMPTS,
    CAPTIONED,
    DRAFT_SCHEMA,
    TEMPLATE_SHA256,
    DraftPrompt,
    DraftReplayLine,
    draft_prompt,
    parse_draft,
)
from curation.tables import Asset
from curation.workspace import Workspace

from .backends.base import BackendError
from .backends.replay import read_replay_file


@dataclass(frozen=True)
class ToCaption:
    """An audio or video input of a task to draft: its stored caption by the drafter's model, or None (asked)."""

    modality: str
    asset: str
    stored: str | None


class DraftBackend(ABC):
    """Captions media and drafts checklists; ``model_id`` names the model in provenance and in the cache."""

    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @property
    def caption_model(self) -> str:
        """The model its captions are stored under (``judge_caption``); by default the drafting model's id."""
        return self.model_id

    @abstractmethod
    def caption(self, task: str, modality: str, path: Path) -> str: ...

    @abstractmethod
    def draft(self, task: str, prompt: DraftPrompt) -> str:
        """The model's raw answer (JSON text following ``DRAFT_SCHEMA``)."""

    def check_tasks(self, tasks: list[tuple[str, list[ToCaption]]]) -> None:  # noqa: B027  (a model drafts any task)
        """Refuse, before anything is drafted, the tasks (each with its audio and video inputs) this backend cannot
        answer, with every problem named (a replay file without a task's line); the default refuses nothing."""


class ReplayDrafter(DraftBackend):
    """Recorded drafts, one line per task (:class:`DraftReplayLine`); the file is refused whole, every problem
    named FILE:LINE, when any line is."""

    def __init__(self, target: str) -> None:
        self.path = Path(target)
        problems: list[Problem] = []
        self._digest, records = read_replay_file(self.path, problems)
        self.lines: dict[str, DraftReplayLine] = {}
        self.where: dict[str, int] = {}
        for where, record in records:
            parsed = validate_line(DraftReplayLine, record, where["file"], where["line"])
            if isinstance(parsed, list):
                problems.extend(parsed)
                continue
            assert isinstance(parsed, DraftReplayLine)
            if parsed.task in self.lines:
                first = self.lines[parsed.task]
                by = "by the same model" if first.model == parsed.model else "by another model"
                message = (
                    f"task {parsed.task} is drafted again {by} (first on line {self.where[parsed.task]}); "
                    "a replay file holds one draft per task: keep one of the two"
                )
                problems.append(Problem(message, "task", **where))
                continue
            self.lines[parsed.task] = parsed
            self.where[parsed.task] = where["line"]
        if problems:
            raise ValidationFailed(problems, "nothing was drafted; fix the replay file and try again")
        models = {r.model or "" for r in self.lines.values()}
        self.model = next(iter(models)) if len(models) == 1 and "" not in models else "replay"

    @property
    def model_id(self) -> str:
        return f"{self.model}@replay:{self.path.name}@{self._digest}"

    def check_tasks(self, tasks: list[tuple[str, list[ToCaption]]]) -> None:
        """Every task to draft has its line, with a caption of each audio or video input this file has not
        captioned yet (stored); lines sharing a medium give it the same caption; all problems at once."""
        file, problems = str(self.path), list[Problem]()
        given: dict[tuple[str, str], tuple[str, str]] = {}
        for task, inputs in tasks:
            line = self.lines.get(task)
            if line is None:
                problems.append(
                    Problem(f"no draft for task {task}; add its line, or draft the others with --task", file=file)
                )
                continue
            for medium in inputs:
                text = line.captions.get(medium.modality)
                if text is None:
                    if medium.stored is None:
                        message = (
                            f"task {task} has a {medium.modality} input: its line needs a {medium.modality} caption"
                        )
                        problems.append(Problem(message, "captions", self.where[task], file))
                    continue
                if medium.stored is not None:
                    earlier, whose = medium.stored, "the caption this file already gave it (stored)"
                else:
                    key = (medium.modality, medium.asset)
                    earlier, whose = given.setdefault(key, (text, f"the line of task {task}"))
                if text.strip() != earlier.strip():
                    message = (
                        f"task {task}'s {medium.modality} ({medium.asset[:12]}) is captioned otherwise than in "
                        f"{whose}; one caption serves every task with that {medium.modality}: give it the same caption"
                    )
                    problems.append(Problem(message, "captions", self.where[task], file))
        if problems:
            raise ValidationFailed(problems, "nothing was drafted; fix the replay file and try again")

    def _line(self, task: str) -> DraftReplayLine:
        if task not in self.lines:
            raise NotFoundError(f"{self.path} has no draft for task {task}")
        return self.lines[task]

    def caption(self, task: str, modality: str, path: Path) -> str:
        caption = self._line(task).captions.get(modality)
        if not caption:
            raise NotFoundError(f"{self.path} has no {modality} caption for task {task}")
        return caption

    def draft(self, task: str, prompt: DraftPrompt) -> str:
        return json.dumps({"checklist": self._line(task).checklist})


class OpenAIDrafter(DraftBackend):
    """Chat completions with ``response_format: json_schema``; media go as data URLs (images) or input_audio."""

    def __init__(self, target: str, timeout_s: float = 300.0) -> None:
        base, _, rest = target.partition("#")
        model, _, flags = rest.partition("#")
        if not base.startswith(("http://", "https://")) or not model:
            raise BackendError(f"openai drafter spec is openai:<base-url>#<model>[#vllm], not openai:{target}")
        if flags not in ("", "vllm"):
            raise BackendError(f"unknown openai drafter flag {flags!r}; the only one is #vllm")
        self.base_url, self.model, self.timeout_s = base.rstrip("/"), model, timeout_s
        self.vllm = flags == "vllm"
        """vLLM's server: the schema also goes as its ``structured_outputs`` with no free whitespace, which a
        JSON grammar otherwise allows without end (a weak model can fill its whole budget with newlines)."""

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model}"

    @property
    def caption_model(self) -> str:
        """As the caption route's ``openai:`` backend names the model (``checker.generation.OpenAIGenerator``),
        so a caption either of them stored serves the other."""
        return f"openai#{self.model}"

    def _chat(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0.0}
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "checklist", "schema": schema}}
            if self.vllm:
                body["structured_outputs"] = {"json": schema, "disable_any_whitespace": True}
        headers = {"Content-Type": "application/json"}
        if key := os.environ.get("OPENAI_API_KEY", ""):
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", json.dumps(body).encode(), headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                choice = json.loads(response.read())["choices"][0]
                content = str(choice["message"]["content"])
        except (urllib.error.URLError, KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
            raise BackendError(f"{self.base_url}: the chat request failed ({exc})") from exc
        if choice.get("finish_reason") == "length":
            raise BackendError(
                f"{self.base_url}#{self.model}: the answer was cut off at the model's length limit after "
                f"{len(content)} characters; use a model (or server --max-model-len) with room for the answer"
            )
        return content

    @staticmethod
    def _media_part(modality: str, path: Path) -> dict[str, Any]:
        data = base64.b64encode(path.read_bytes()).decode()
        if modality == "audio":
            return {"type": "input_audio", "input_audio": {"data": data, "format": path.suffix.lstrip(".") or "wav"}}
        mime = mimetypes.guess_type(path.name)[0] or ("video/mp4" if modality == "video" else "image/png")
        kind = "video_url" if modality == "video" else "image_url"
        return {"type": kind, kind: {"url": f"data:{mime};base64,{data}"}}

    def caption(self, task: str, modality: str, path: Path) -> str:
        content = [self._media_part(modality, path), {"type": "text", "text": CAPTION_PROMPTS[modality]}]
        return self._chat([{"role": "user", "content": content}], None).strip()

    def draft(self, task: str, prompt: DraftPrompt) -> str:
        content: list[dict[str, Any]] = [self._media_part(m, Path(p)) for m, p in prompt.media.items()]
        content.append({"type": "text", "text": prompt.user})
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": content}]
        return self._chat(messages, DRAFT_SCHEMA)


def open_drafter(spec: str) -> DraftBackend:
    kind, sep, target = spec.partition(":")
    if kind == "replay" and target:
        return ReplayDrafter(target)
    if kind == "openai" and target:
        return OpenAIDrafter(target)
    raise BackendError(
        f"unknown drafting backend {spec!r}; expected replay:<file.jsonl> or openai:<base-url>#<model>[#vllm]"
    )


@dataclass
class DraftRun:
    drafted: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"drafted": self.drafted, "cached": self.cached}


def _captioner(backend: DraftBackend, task_id: str, media: dict[str, str]) -> Captioner:
    """The drafter as the caption route's captioner of one task's inputs (asked only for a caption not stored)."""

    def describe(modality: str, _asset: str) -> str:
        return backend.caption(task_id, modality, Path(media[modality]))

    return Captioner(backend.caption_model, describe)


def draft_checklists(ws: Workspace, backend: DraftBackend, task_ids: list[str] | None = None) -> DraftRun:
    """Draft (or take from the cache) the checklist of every task, or of the named ones.

    The backend first checks every task it is to draft (a replay file refused on any problem drafts and stores
    nothing); each model answer is then cached as it comes, so a run a live model breaks off keeps what it paid.
    """
    run = DraftRun()
    chosen = task_store.tasks(ws) if task_ids is None else [task_store.task(ws, t) for t in task_ids]
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    todo = []
    for task in chosen:
        if draft_store.cached_draft(ws, task.content_hash, backend.model_id, TEMPLATE_SHA256) is not None:
            run.cached.append(task.id)
        else:
            todo.append(task)
    model = backend.caption_model
    inputs = {
        t.id: [ToCaption(m, sha, stored_caption(ws, model, m, sha)) for m, sha in t.inputs.items() if m in CAPTIONED]
        for t in todo
    }
    backend.check_tasks([(t.id, inputs[t.id]) for t in todo])  # a refused replay file drafts nothing
    for task in todo:
        media = {m: str(ws.asset_path(assets[sha])) for m, sha in task.inputs.items()}
        captioner = _captioner(backend, task.id, media)
        captions = {m.modality: caption(ws, captioner, m.modality, m.asset) for m in inputs[task.id]}
        prompt = draft_prompt(task.instruction, task.output, media, captions)
        draft = parse_draft(backend.draft(task.id, prompt), where=f"draft of {task.id}")
        entries = drafted_entries(task.id, draft, backend.model_id, prompt.sha256)
        output = {
            "captions": captions,
            "prompt_sha256": prompt.sha256,
            "entries": [e.model_dump(mode="json") for e in entries],
        }
        draft_store.store_draft(ws, task.id, task.content_hash, backend.model_id, TEMPLATE_SHA256, output)
        run.drafted.append(task.id)
    return run
