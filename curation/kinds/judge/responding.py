"""Systems' responses through the backends (Judge Anything §2.3): a system answers every task whose input
modalities it accepts and whose output is text; each answer is imported as that system's response (then
reviewed like any other), with its provenance — model, sampling parameters, seed, prompt hash, output — in
the event log. A task the system already answered is skipped, so a rerun adds nothing and an interrupted
run resumes where it stopped.

The model is a callable given by the shell (the domain knows no backend).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.errors import Problem, ValidationFailed
from curation.workspace import Workspace, record_event

from . import task_store
from .captioning import Captioner, route_prompt
from .judging import JudgePrompt
from .schema import JUDGE_MODALITIES

SYSTEM_PROMPT = "You are a helpful assistant. Answer the user's request using the attached media where given."

Answer = Callable[[str, str, str, tuple[tuple[str, str], ...]], str]
"""``(task id, system prompt, user text, media as (modality, sha256)) -> the system's text``."""


@dataclass
class RespondRun:
    answered: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    not_accepted: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"answered": self.answered, "already": self.already, "not_accepted": self.not_accepted}


def respond(
    ws: Workspace,
    system: str,
    model: str,
    accepts: Collection[str],
    answer: Answer,
    params: dict[str, Any],
    progress: Callable[[int, int], None] = lambda done, total: None,
    captioner: Captioner | None = None,
) -> RespondRun:
    """Run the system on every task it can answer (text output, inputs within ``accepts``, or, with a
    ``captioner``, any inputs: those it cannot take are given as their captions, and the route is recorded)."""
    unknown = sorted(set(accepts) - set(JUDGE_MODALITIES))
    if unknown or "text" not in accepts:
        raise ValidationFailed(
            [
                Problem(
                    f"--accepts takes text plus any of image, audio, video; not {', '.join(unknown) or 'without text'}",
                    "--accepts",
                )
            ]  # fmt: skip
        )
    existing = {r.id for r in task_store.responses(ws)}
    run = RespondRun()
    tasks = task_store.tasks(ws)
    for done, task in enumerate(tasks, 1):
        response_id = f"{task.id}:{system}"
        if task.output != "text" or (captioner is None and not {"text", *task.inputs} <= set(accepts)):
            run.not_accepted.append(task.id)
        elif response_id in existing:
            run.already.append(task.id)
        else:
            media = tuple(sorted(task.inputs.items()))
            asked = JudgePrompt(SYSTEM_PROMPT, task.instruction, media, tuple(f"input {m}" for m, _ in media))
            routed, route = route_prompt(ws, asked, frozenset({"text", *accepts}), captioner)
            prompt_sha256 = hashlib.sha256(json.dumps([SYSTEM_PROMPT, routed.user, routed.media]).encode()).hexdigest()
            text = answer(task.id, SYSTEM_PROMPT, routed.user, routed.media)
            with tempfile.TemporaryDirectory(prefix="curate-respond-") as folder:
                line = Path(folder) / "response.jsonl"
                line.write_text(json.dumps({"task": task.id, "system": system, "output": {"text": text}}) + "\n")
                task_store.import_responses(ws, line, actor=system)
            provenance = {
                "model": model, "params": params, "prompt_sha256": prompt_sha256, "output": text, "route": route,
            }  # fmt: skip
            with ws.writing() as s:
                record_event(s, system, "judge.respond", f"judge_response:{response_id}", None, provenance)
            run.answered.append(task.id)
        progress(done, len(tasks))
    return run


def response_provenance(ws: Workspace, response_id: str) -> dict[str, Any] | None:
    """How a generated response was made (model, sampling parameters with seed, prompt hash, output)."""
    for event in ws.events(f"judge_response:{response_id}"):
        if event.action == "judge.respond":
            return dict(event.after or {})
    return None
