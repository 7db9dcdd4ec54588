"""Model pre-annotation of query screening: a model suggests keep or drop (with a reason code) for each
candidate query, through a backend the shell gives; the suggestion is shown beside the query and never
decides — a screener's ``query_screen`` record does. Answers are parsed strictly (an unparseable one is
recorded as ``invalid``); a query the same model already pre-screened is skipped, so a rerun asks nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.errors import NotFoundError, PermissionDenied
from curation.tables import Person
from curation.workspace import Workspace, record_event

from .queries import SCREEN_REASONS, queries, query_statuses
from .tables import JudgeRecord

STAGE = "query_prescreen"
SYSTEM = (
    "You screen candidate queries for a benchmark of any-to-any tasks. Drop a query that asks for or shows "
    "sexual, violent or otherwise unsafe content (nsfw), that cannot be answered as written (low_quality), or "
    "that is not a task of its stated input and output modalities (out_of_scope); keep the others."
)
ANSWER = 'Answer with one JSON object: {"decision": "keep" or "drop", "reason": null, "nsfw", "low_quality" or "out_of_scope"}.'

Suggest = Callable[[str, str, str, tuple[tuple[str, str], ...]], str]
"""``(query id, system prompt, user text, media as (modality, sha256)) -> the model's raw answer``."""


def parse_suggestion(text: str) -> dict[str, Any]:
    """``{"decision", "reason"}`` from a strict JSON answer, else ``{"decision": "invalid"}``."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {"decision": "invalid"}
    if not isinstance(data, dict) or set(data) != {"decision", "reason"}:
        return {"decision": "invalid"}
    decision, reason = data["decision"], data["reason"]
    if (decision == "keep" and reason is None) or (decision == "drop" and reason in SCREEN_REASONS):
        return {"decision": decision, "reason": reason}
    return {"decision": "invalid"}


def prescreen(ws: Workspace, by: str, model: str, suggest: Suggest) -> dict[str, int]:
    """Ask the model about every query still waiting for a screener; record each suggestion under ``by``."""
    with ws.session() as s:
        person = s.get(Person, by)
        if person is None:
            raise NotFoundError(f"unknown person {by!r}; add them with `curate people add`")
        if not person.role_set & {"reviewer", "maintainer"}:
            raise PermissionDenied(f"{by!r} has neither the reviewer nor the maintainer role")
        done = {
            r.subject
            for r in s.execute(select(JudgeRecord).where(col(JudgeRecord.stage) == STAGE)).scalars()
            if r.payload.get("model") == model
        }
    waiting = {st.id for st in query_statuses(ws) if st.state == "screen"}
    counts = {"suggested": 0, "invalid": 0, "already": 0}
    for query in queries(ws):
        if query.id not in waiting:
            continue
        if query.id in done:
            counts["already"] += 1
            continue
        user = f"Query: {query.instruction}\nInputs: text, {', '.join(sorted(query.inputs)) or 'no media'}\n"
        user += f"Wanted output: {query.output}\n{ANSWER}"
        media = tuple(sorted(query.inputs.items()))
        raw = suggest(query.id, SYSTEM, user, media)
        suggestion = parse_suggestion(raw)
        prompt_sha256 = hashlib.sha256(json.dumps([SYSTEM, user, media]).encode()).hexdigest()
        payload = {**suggestion, "model": model, "prompt_sha256": prompt_sha256, "raw": raw}
        with ws.writing() as s:
            row = s.execute(
                select(JudgeRecord).where(
                    col(JudgeRecord.subject) == query.id,
                    col(JudgeRecord.stage) == STAGE,
                    col(JudgeRecord.reviewer) == by,
                )
            ).scalar_one_or_none()
            if row is None:
                s.add(JudgeRecord(subject=query.id, stage=STAGE, reviewer=by, payload=payload))
            else:
                row.payload = payload
                s.add(row)
            record_event(s, by, f"judge.{STAGE}", f"judge_query:{query.id}", None, payload)
        counts["invalid" if suggestion["decision"] == "invalid" else "suggested"] += 1
    return counts


def suggestions(ws: Workspace) -> dict[str, str]:
    """Query id -> the latest model suggestion in words (``keep``, ``drop:nsfw``, ``invalid``)."""
    with ws.session() as s:
        rows = s.execute(
            select(JudgeRecord).where(col(JudgeRecord.stage) == STAGE).order_by(col(JudgeRecord.updated_at))
        ).scalars()
        return {
            r.subject: r.payload["decision"] + (f":{r.payload['reason']}" if r.payload.get("reason") else "")
            for r in rows
        }
