# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""Judge tasks and systems' responses: imported (all or nothing; a stored id is never revised) and read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import MediaError, NotFoundError, Problem
from curation.jsonl import read_models
from curation.workspace import Workspace

from .importing import ImportCounts, _Media, _refuse, _transaction, content_hash, read_task_lines, store_new_lines
from .schema import ResponseLine, TaskLine
from .tables import JudgeResponse, JudgeTask


def import_tasks(ws: Workspace, path: Path, actor: str = "cli") -> ImportCounts:
    """Import task lines; a task already stored with other content is refused (tasks are not revised)."""
    ws.recover_media()
    media = _Media(ws)
    rows = read_task_lines(path, media)
    counts: dict[str, int] = {}

    def build(task: TaskLine, inputs: dict[str, str], digest: str) -> JudgeTask:
        return JudgeTask(
            id=task.id,
            instruction=task.instruction,
            inputs=inputs,
            output=task.output,
            modality_pair=task.modality_pair,
            source=task.source,
            license=task.license,
            content_hash=digest,
            created_by=actor,
        )

    def write(session: Any) -> None:
        found = store_new_lines(
            session, JudgeTask, rows, build, exclude={"inputs"}, noun="task", event="judge.task.import",
            file=str(path), actor=actor,
        )  # fmt: skip
        counts.update(found)

    _transaction(ws, media, write)
    return ImportCounts(**counts)


def import_responses(ws: Workspace, path: Path, actor: str = "cli") -> ImportCounts:
    """Import responses; each must answer a stored task in that task's output modality."""
    ws.recover_media()
    file, problems, media = str(path), list[Problem](), _Media(ws)
    with ws.session() as s:
        tasks = {t.id: t.output for t in s.execute(select(JudgeTask)).scalars()}
    rows: list[tuple[int, ResponseLine, str | None]] = []
    seen: dict[str, int] = {}
    for number, response in read_models(path, ResponseLine, problems):
        rid = response.response_id
        if rid in seen:
            problems.append(Problem(f"duplicate response {rid!r} (first on line {seen[rid]})", "id", number, file))
            continue
        seen[rid] = number
        if response.task not in tasks:
            problems.append(
                Problem(
                    f"unknown task {response.task!r}; import it first (`curate judge checklists` lists the tasks)",
                    "task",
                    number,
                    file,
                )
            )
            continue
        modality = response.output.modality
        if modality != tasks[response.task]:
            problems.append(
                Problem(f"the task asks for {tasks[response.task]}, the response is {modality}", "output", number, file)
            )
            continue
        asset = None
        if modality != "text":
            try:
                asset = media.inspect(path.parent, getattr(response.output, modality), modality)[0].sha256
            except MediaError as exc:
                problems.append(Problem(str(exc), f"output.{modality}", number, file))
                continue
        rows.append((number, response, asset))
    _refuse(problems, file)
    counts = {"added": 0, "unchanged": 0}

    def write(session) -> None:  # type: ignore[no-untyped-def]
        stored = {r.id: r.content_hash for r in session.execute(select(JudgeResponse)).scalars()}
        clashes = []
        for number, response, asset in rows:
            rid = response.response_id
            data = {"task": response.task, "system": response.system, "text": response.output.text, "asset": asset}
            digest = content_hash(data)
            if rid in stored:
                if stored[rid] != digest:
                    clashes.append(
                        Problem(f"response {rid!r} is already stored with other content", "id", number, file)
                    )
                else:
                    counts["unchanged"] += 1
                continue
            session.add(
                JudgeResponse(
                    id=rid,
                    task=response.task,
                    system=response.system,
                    modality=response.output.modality,
                    text=response.output.text,
                    asset=asset,
                    content_hash=digest,
                )
            )
            counts["added"] += 1
        _refuse(clashes, file)

    _transaction(ws, media, write)
    return ImportCounts(**counts)


def tasks(ws: Workspace) -> list[JudgeTask]:
    with ws.session() as s:
        return list(s.execute(select(JudgeTask).order_by(JudgeTask.id)).scalars())


def task(ws: Workspace, task_id: str) -> JudgeTask:
    with ws.session() as s:
        found = s.get(JudgeTask, task_id)
    if found is None:
        raise NotFoundError(f"no judge task {task_id!r}; list them with `curate judge checklists`")
    return found


def responses(ws: Workspace, task_id: str | None = None) -> list[JudgeResponse]:
    with ws.session() as s:
        query = select(JudgeResponse).order_by(JudgeResponse.task, JudgeResponse.system)
        if task_id is not None:
            query = query.where(JudgeResponse.task == task_id)
        return list(s.execute(query).scalars())
