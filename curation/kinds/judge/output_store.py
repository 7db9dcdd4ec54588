# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""Judges' outputs imported from a file, and the judge-vs-human report over them and the applied
annotations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import Problem
from curation.jsonl import read_models
from curation.workspace import Workspace

from .importing import ImportCounts, _refuse
from .report import ReportSettings, judge_report
from .sample_store import samples
from .schema import JudgeOutputLine, PairAnnotation, ScoreAnnotation
from .tables import JudgeAnnotation, JudgeOutput, JudgeSample


def import_judge_outputs(ws: Workspace, path: Path) -> ImportCounts:
    """Import judge outputs (several samples per criterion); a line for a stored (sample, judge) replaces it."""
    file, problems = str(path), list[Problem]()
    with ws.session() as s:
        kinds: dict[str, str] = dict(s.execute(select(JudgeSample.id, JudgeSample.kind)).all())
    rows: list[JudgeOutputLine] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in read_models(path, JudgeOutputLine, problems):
        key = (line.sample, line.judge)
        if key in seen:
            problems.append(
                Problem(
                    f"judge {line.judge} and sample {line.sample} given twice (line {seen[key]})",
                    "sample",
                    number,
                    file,
                )
            )
            continue
        seen[key] = number
        kind = kinds.get(line.sample)
        if kind is None:
            problems.append(
                Problem(
                    f"unknown sample {line.sample!r}; build samples first (`curate judge samples --json` lists them)",
                    "sample",
                    number,
                    file,
                )
            )
        elif (kind == "score") != (line.scores is not None):
            problems.append(
                Problem(f"a {kind} sample takes {'scores' if kind == 'score' else 'choices'}", "sample", number, file)
            )
        else:
            rows.append(line)
    _refuse(problems, file)
    counts = {"added": 0, "unchanged": 0}
    with ws.writing() as s:
        stored = {(o.sample, o.judge): o for o in s.execute(select(JudgeOutput)).scalars()}
        for line in rows:
            payload = line.model_dump(mode="json", exclude={"sample", "judge"}, exclude_none=True)
            old = stored.get((line.sample, line.judge))
            if old is None:
                s.add(JudgeOutput(sample=line.sample, judge=line.judge, payload=payload))
                counts["added"] += 1
            elif old.payload == payload:
                counts["unchanged"] += 1
            else:
                old.payload = payload
                s.add(old)
                counts["added"] += 1
    return ImportCounts(**counts)


def report(ws: Workspace, settings: ReportSettings | None = None) -> dict[str, Any]:
    """The judge-vs-human report over applied annotations and imported judge outputs."""
    cfg = ws.settings.judge
    settings = settings or ReportSettings(judge_scores=cfg.judge_scores, bootstrap=cfg.bootstrap)
    with ws.session() as s:
        rows = s.execute(
            select(JudgeAnnotation.sample, JudgeAnnotation.annotator, JudgeAnnotation.payload, JudgeSample.kind)
            .join(JudgeSample, JudgeSample.id == JudgeAnnotation.sample)
            .where(JudgeAnnotation.applied)
        ).all()
        outputs = [  # validated when imported: constructed here, not validated again
            JudgeOutputLine.model_construct(sample=sample, judge=judge, **payload)
            for sample, judge, payload in s.execute(select(JudgeOutput.sample, JudgeOutput.judge, JudgeOutput.payload))
        ]
    score_annotations = [
        ScoreAnnotation.model_construct(sample=r[0], annotator=r[1], **r[2]) for r in rows if r[3] == "score"
    ]
    pair_annotations = [
        PairAnnotation.model_construct(sample=r[0], annotator=r[1], **r[2]) for r in rows if r[3] == "pair"
    ]
    return judge_report(
        samples(ws, "score"),
        score_annotations,
        samples(ws, "pair"),
        pair_annotations,
        outputs,
        settings,
    )
