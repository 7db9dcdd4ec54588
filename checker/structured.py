"""Structured (JSON-schema constrained) generation for screening: model annotation and scores.

The same ``kind:target`` specs as the probe backends. ``replay:FILE`` answers from recorded outputs
(``{"subject", "task", "output"}`` lines, written by ``--record`` or by hand); ``openai:URL[,URL…]#MODEL``
fans requests out over several OpenAI-compatible servers (vLLM replicas) with a bounded number in flight,
each request constrained by ``response_format: json_schema``. ``transformers:`` and ``vllm:`` (in-process
engines) are refused with a clear message until their structured mode exists: serve the model with
``vllm serve`` and use ``openai:``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.screening.model import TASKS, StructuredRequest

from .backends.base import SPEC_HELP, BackendError

MAX_TOKENS = 1024


class ReplayStructured:
    """Recorded outputs, one line per subject × task; a missing line is an error that names it."""

    batch_size = 512

    def __init__(self, target: str) -> None:
        self.path = Path(target)
        if not self.path.is_file():
            raise NotFoundError(f"replay file {self.path} does not exist")
        raw = self.path.read_bytes()
        self._digest = hashlib.sha256(raw).hexdigest()[:16]
        self.outputs: dict[tuple[str, str], Any] = {}
        problems: list[Problem] = []
        for number, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = {"file": str(self.path), "line": number}
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(f"not JSON: {exc.msg}", **where))
                continue
            if not isinstance(record, dict) or not isinstance(record.get("subject"), str):
                problems.append(Problem('a line needs a "subject" (candidate id or book:<id>)', "subject", **where))
            elif record.get("task") not in TASKS:
                problems.append(Problem(f"task must be one of {', '.join(TASKS)}", "task", **where))
            elif "output" not in record:
                problems.append(Problem("required field is missing", "output", **where))
            elif (record["subject"], record["task"]) in self.outputs:
                problems.append(Problem(f"{record['subject']} {record['task']} is given twice", **where))
            else:
                self.outputs[(record["subject"], record["task"])] = record["output"]
        if problems:
            raise ValidationFailed(problems, "fix the replay file and try again")

    @property
    def model_id(self) -> str:
        return f"{self.path.name}@{self._digest}"

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        answers = []
        for request in requests:
            key = (request.subject, request.task)
            if key not in self.outputs:
                raise NotFoundError(f"{self.path} has no {request.task!r} output for {request.subject!r}")
            output = self.outputs[key]
            answers.append(output if isinstance(output, dict) else None)
        return answers


class OpenAIStructured:
    """Several OpenAI-compatible servers behind one model: requests are spread round-robin, at most
    ``concurrency`` in flight in all; answers come back in request order."""

    batch_size = 64

    def __init__(self, target: str, concurrency: int = 8, timeout_s: float = 300.0) -> None:
        from .backends.openai_compat import OpenAIBackend

        urls, _, model = target.partition("#")
        servers = [u.strip() for u in urls.split(",") if u.strip()]
        if not servers or not model:
            raise BackendError(f"structured openai spec is openai:<url>[,<url>...]#<model>, not openai:{target}")
        self.servers = [OpenAIBackend(f"{url}#{model}", timeout_s=timeout_s) for url in servers]
        self.model = model
        self.concurrency = concurrency
        self._turn = itertools.count()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"openai#{self.model}"

    def _server(self):  # type: ignore[no-untyped-def]
        with self._lock:
            return self.servers[next(self._turn) % len(self.servers)]

    def _one(self, request: StructuredRequest) -> dict[str, Any] | None:
        from .media import image_data_url

        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": image_data_url(Path(p))}} for p in request.images
        ]
        content.append({"type": "text", "text": request.user})
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": content}],
            "temperature": 0.0,
            "max_tokens": MAX_TOKENS,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": request.task, "schema": request.schema, "strict": True},
            },
        }
        reply = self._server()._post(body)
        text = reply["choices"][0]["message"].get("content") or ""
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            return None
        return answer if isinstance(answer, dict) else None

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, requests))


def open_structured_model(spec: str, root: Path | None = None, concurrency: int = 8, batch_size: int = 0):  # type: ignore[no-untyped-def]
    """``kind:target`` → a structured model; a relative replay file is read from ``root``."""
    kind, sep, target = spec.partition(":")
    if not sep or not target:
        raise BackendError(f"unknown model backend {spec!r}; expected {SPEC_HELP}")
    model: ReplayStructured | OpenAIStructured
    if kind == "replay":
        path = Path(target)
        model = ReplayStructured(str(path if path.is_absolute() or root is None else root / path))
    elif kind == "openai":
        model = OpenAIStructured(target, concurrency=concurrency)
    elif kind in ("transformers", "vllm"):
        raise BackendError(
            f"the {kind} backend has no structured (JSON-schema) mode for screening yet: serve the model with "
            "`vllm serve` and use openai:<url>#<model>, or replay recorded outputs"
        )
    else:
        raise BackendError(f"unknown model backend {spec!r}; expected {SPEC_HELP}")
    if batch_size:
        model.batch_size = batch_size
    return model
