"""The judge kind's query screening and refinement (Judge Anything §2.1) as a Label Studio project:
``curate ls push query_screen`` and ``curate ls pull query_screen``.

One task per candidate query waiting for a screener (``screen``), showing its instruction, input media, source and
wanted output, and the model's suggestion where one was made (it never decides). The screener keeps the query
or drops it with a reason, and may reword the instruction (the field starts from the current wording), saying
why. A pull records what the app's page records — a ``query_refine`` record when the wording changed, then
the ``query_screen`` record — through the same function (``record_query``) and with the same checks; a
screening whose annotation was deleted, or edited and refused, is withdrawn (the query waits again).
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Hashable
from types import MappingProxyType
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import select
from sqlmodel import col

from curation.errors import CurateError, ValidationFailed
from curation.kinds.judge.queries import (
    SCREEN_REASONS,
    QueryRefineRecord,
    QueryScreenRecord,
    queries,
    query_statuses,
    record_query,
)
from curation.kinds.judge.query_prescreen import suggestions
from curation.kinds.judge.query_tables import JudgeQuery
from curation.kinds.judge.query_withdrawals import ScreenWithdrawal, withdraw_screens
from curation.kinds.judge.tables import JudgeRecord
from curation.tables import Asset
from curation.workspace import Workspace

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import medium_html
from .projects import AnnotationOutcome, instructions
from .pulling import PullCounts, Seen, Verdict
from .pushing import PushReport, TaskSpec
from .results import Control, bind_controls, prefill_regions
from .stage_records import PullReport, Refusal
from .tables import LsAnnotation, LsProject

STAGE = "query_screen"
"""The stage name the project is pushed and pulled by (``curate ls push query_screen``)."""
KEY = "judge:queries"
STALE = "stale: the query changed after this task was pushed; push again and screen the new task"

LABEL_CONFIG = (
    '<View><Header value="Candidate query: keep it, or drop it with a reason; reword it if needed, saying why."/>'
    '<HyperText name="query" value="$query"/><HyperText name="suggestion" value="$suggestion"/>'
    '<Header value="Decision" size="5"/>'
    '<Choices name="decision" toName="query" choice="single-radio" required="true" showInline="true">'
    '<Choice value="keep"/><Choice value="drop"/></Choices>'
    '<Header value="Reason (when dropped)" size="5"/>'
    '<Choices name="reason" toName="query" choice="single-radio" showInline="true">'
    + "".join(f'<Choice value="{r}"/>' for r in SCREEN_REASONS)
    + "</Choices>"
    '<Header value="Instruction (reword to refine)" size="5"/>'
    '<TextArea name="instruction" toName="query" rows="4" maxSubmissions="1" editable="true"/>'
    '<Header value="Why reworded (needed when you change it)" size="5"/>'
    '<TextArea name="why" toName="query" maxSubmissions="1" editable="true"/>'
    "</View>"
)
CONTROLS = {
    "decision": Control("choices", required=True, choices=("keep", "drop")),
    "reason": Control("choices", choices=SCREEN_REASONS),
    "instruction": Control("textarea"),
    "why": Control("textarea"),
}


def _inputs(query: JudgeQuery) -> str:
    """What a screener judges: the wording, the input media and the wanted output."""
    shown = [query.id, query.instruction, sorted(query.inputs.items()), query.output]
    return hashlib.sha256(json.dumps(shown).encode()).hexdigest()


def _records(query: JudgeQuery, reviewer: str, values: dict[str, Any]) -> list[QueryScreenRecord | QueryRefineRecord]:
    """The records the app's page makes of the same answers: a refinement when the wording changed, then the screening."""
    records: list[QueryScreenRecord | QueryRefineRecord] = []
    instruction = values.get("instruction", query.instruction)
    if instruction.strip() != query.instruction.strip():
        why = values.get("why", "")
        records.append(QueryRefineRecord(query=query.id, reviewer=reviewer, instruction=instruction, why=why))
    reason = values["reason"][0] if values.get("reason") else None
    decision = values["decision"][0]
    records.append(QueryScreenRecord(query=query.id, reviewer=reviewer, decision=decision, reason=reason))
    return records


class QueryProject(ProjectKind):
    """The query screening project: a vote is one screener's keep or drop (and rewording) of one query."""

    roles = frozenset({"reviewer", "maintainer"})
    annotator = "screener"
    events = MappingProxyType({"refused": "labelstudio.annotation_refused"})

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.key = KEY
        self.title = f"{ws.root.name}: judge query screening"
        self.quorum = 1  # one screening decides where a query stands
        self.push_hint = f"run `curate ls push {STAGE}` first"
        self.queries: dict[str, JudgeQuery] = {}

    def instruction(self) -> str | None:
        return instructions(self.ws, STAGE)

    def label_config(self) -> str:
        return LABEL_CONFIG

    def controls(self) -> dict[str, Control]:
        return dict(CONTROLS)

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        """One task per query waiting for a screener; the instruction field starts from the current wording."""
        waiting = {s.id for s in query_statuses(self.ws) if s.state == "screen"}
        suggested = suggestions(self.ws)
        with self.ws.session() as s:
            blobs = {sha: f"{sha}{ext}" for sha, ext in s.execute(select(Asset.sha256, Asset.ext)).all()}
        bound = bind_controls(LABEL_CONFIG, CONTROLS)
        specs = []
        for query in queries(self.ws):
            if query.id not in waiting:
                continue
            media = [blobs[sha] for _, sha in sorted(query.inputs.items())]
            shown = "".join(medium_html(connection, m, blobs[sha]) for m, sha in sorted(query.inputs.items()))
            about = f"Query {query.id} · from {query.source} · wants {query.output}"
            suggestion = suggested.get(query.id)
            inputs = _inputs(query)
            specs.append(
                TaskSpec(
                    ref=f"{STAGE}|query:{query.id}|{inputs[:16]}",
                    subject=f"query:{query.id}",
                    inputs_hash=inputs,
                    data={
                        "query": f"<p><i>{html.escape(about)}</i></p>"
                        f"<p style='white-space:pre-wrap'>{html.escape(query.instruction)}</p>{shown}",
                        "suggestion": f"<p>A model suggests: {html.escape(suggestion)} (it does not decide)</p>"
                        if suggestion
                        else "<p>(no model suggestion)</p>",
                    },
                    media=tuple(media),
                    prefill=prefill_regions({"instruction": query.instruction}, bound),
                )
            )
        return specs

    def load(self) -> None:
        self.queries = {q.id: q for q in queries(self.ws)}

    def _query(self, seen: Seen) -> JudgeQuery | None:
        assert seen.row is not None
        return self.queries.get(seen.row.subject.removeprefix("query:"))

    def locate(self, seen: Seen) -> str:
        assert seen.row is not None
        return "" if self._query(seen) else f"{seen.row.subject} is no longer in the workspace"

    def admit(self, seen: Seen) -> Hashable | Verdict:
        """An annotation of an earlier wording is stale, unless it made the wording there is now."""
        query, row = self._query(seen), seen.row
        assert query is not None and row is not None
        if seen.previous != "recorded" and _inputs(query) != row.inputs_hash:
            return Verdict(seen, "skipped") if seen.skipped else Verdict(seen, "refused", reason=STALE)
        return (row.subject, seen.person)

    def accept(self, seen: Seen, values: dict[str, Any]) -> dict[str, Any] | str:
        """The page's rules: a reason with a drop and none with a keep, a why with a rewording."""
        query = self._query(seen)
        assert query is not None and seen.person is not None
        try:
            _records(query, seen.person, values)
        except ValidationError as exc:
            return "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
        return values

    def new_report(self, project: LsProject) -> PullReport:
        return PullReport(stage=STAGE, project_id=project.project_id)

    def refusal(self, outcome: AnnotationOutcome) -> Refusal:
        return Refusal(outcome.annotation, outcome.task, outcome.subject, outcome.user, outcome.reason)

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        """Each screener's deciding answer through ``record_query``, one transaction each, so that what the
        domain refuses (a query promoted meanwhile) refuses that annotation alone."""
        with ws.session() as s:
            before = {
                (r.subject, r.reviewer): r.payload
                for r in s.execute(select(JudgeRecord).where(col(JudgeRecord.stage) == STAGE)).scalars()
            }
            backed = {
                (r.subject.removeprefix("query:"), r.person)
                for r in s.execute(
                    select(LsAnnotation).where(LsAnnotation.project_key == KEY, LsAnnotation.outcome == "recorded")
                ).scalars()
                if r.person
            }
        outcomes = []
        recorded: set[tuple[str, str]] = set()
        for v in sorted(pulled.votes.values(), key=lambda v: (v.seen.updated_at, v.seen.annotation)):
            query, person = self._query(v.seen), v.seen.person
            assert query is not None and person is not None and v.values is not None
            recorded.add((query.id, person))
            if v.seen.previous == "recorded":  # unchanged since it was recorded (the query may be a task now)
                report.unchanged += 1
                outcomes.append(v.seen.outcome("recorded"))
                continue
            records = _records(query, person, v.values)
            try:
                record_query(ws, *records)
            except CurateError as exc:
                recorded.discard((query.id, person))
                reason = exc.problems[0].message if isinstance(exc, ValidationFailed) else str(exc)
                outcomes.append(v.seen.outcome("refused", reason))
                continue
            earlier = before.get((query.id, person))
            screened = records[-1].model_dump(mode="json")
            if earlier is None:
                report.recorded += 1
            elif earlier == screened and len(records) == 1:
                report.unchanged += 1
            else:
                report.replaced += 1
            outcomes.append(v.seen.outcome("recorded"))
        why = "its annotation was deleted in Label Studio, or edited and refused"
        gone = [ScreenWithdrawal(q, p, why) for q, p in sorted(backed - recorded)]
        report.withdrawn = withdraw_screens(ws, gone, "labelstudio")
        return outcomes


def push_queries(ws: Workspace, connection: Connection, recreate: bool = False) -> PushReport:
    """Create or update the query screening project: the queries waiting for a screener, as tasks."""
    return push(ws, connection, QueryProject(ws), recreate)


def pull_queries(ws: Workspace, connection: Connection) -> PullReport:
    """Validate every annotation and record each screener's deciding one as the app's page does."""
    (report,) = pull(ws, connection, [QueryProject(ws)])
    return cast(PullReport, report)
