"""Checklists: model drafts become candidate entries; a curator selects 1–6 per rubric (and may rewrite or add
one); a
second person cross-checks blind; agreement is Krippendorff's α over task × entry; disagreements wait in
an adjudication queue (Judge Anything §2.2, App. B.3 "Checklist Filter and Refinement").

An entry keeps one identity through its life: a curator's rewrite is a new entry (the person's provenance,
``edited_from`` the draft) that stands for the draft in agreement and adjudication.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.agreement.alpha import krippendorff_alpha
from curation.agreement.errors import UndefinedStatistic
from curation.agreement.ratings import ratings_from_rows
from curation.errors import Problem, ValidationFailed

from .rubrics import RUBRICS
from .schema import (
    ChecklistAdjudicationRecord,
    ChecklistDraft,
    ChecklistEntry,
    ChecklistSelectionRecord,
    ModelProvenance,
    PersonProvenance,
    entry_id,
)


@dataclass(frozen=True)
class ChecklistBounds:
    """How many entries a curated checklist holds *per rubric* (the paper: "select 1 to 6 items from each
    synthetic checklist" of six rubrics, 19.11 entries per query on average, Table 2).

    Every rubric the task's candidates cover (drafted or added) holds ``minimum..maximum`` chosen entries."""

    minimum: int = 1
    maximum: int = 6

    def __post_init__(self) -> None:
        if not 1 <= self.minimum <= self.maximum:
            raise ValidationFailed(
                [Problem(f"bounds {self.minimum}..{self.maximum} are not 1 <= minimum <= maximum", "checklist")]
            )

    def problems(self, chosen: Iterable[str], offered: Iterable[str], field: str = "selected") -> list[Problem]:
        """One problem per rubric whose count of ``chosen`` rubrics (one per chosen entry) is out of bounds;
        ``offered`` are the rubrics of the candidates (a rubric without any may stay empty)."""
        counts = Counter(chosen)
        covered = set(offered) | set(counts)
        out = []
        for rubric in RUBRICS:
            count = counts.get(rubric, 0)
            if rubric in covered and not self.minimum <= count <= self.maximum:
                noun = "entry" if count == 1 else "entries"
                out.append(
                    Problem(
                        f"{rubric}: {count} {noun} chosen; select {self.minimum} to {self.maximum} per rubric", field
                    )
                )
        return out


def drafted_entries(task: str, draft: ChecklistDraft, model: str, prompt_sha256: str) -> list[ChecklistEntry]:
    """The draft's questions as entries in rubric order, each once, with the model's provenance."""
    provenance = ModelProvenance(model=model, prompt_sha256=prompt_sha256)
    entries: dict[str, ChecklistEntry] = {}
    for rubric in RUBRICS:
        for text in draft.checklist.get(rubric, []):
            eid = entry_id(task, rubric, text)
            entries.setdefault(eid, ChecklistEntry(id=eid, rubric=rubric, text=text, provenance=provenance))
    return list(entries.values())


def shown_per_rubric(candidates: Sequence[ChecklistEntry], cap: int) -> tuple[list[ChecklistEntry], dict[str, int]]:
    """The first ``cap`` candidates of each rubric (in draft order), and per rubric how many more are not shown:
    ``[judge] draft_shown`` limits what a person reads, never what a draft or a record may hold."""
    shown: list[ChecklistEntry] = []
    hidden: Counter[str] = Counter()
    per: Counter[str] = Counter()
    for entry in candidates:
        per[entry.rubric] += 1
        if per[entry.rubric] <= cap:
            shown.append(entry)
        else:
            hidden[entry.rubric] += 1
    return shown, dict(hidden)


def origin(entry: ChecklistEntry) -> str:
    """The id an entry stands for in agreement: a rewrite stands for the draft it rewrites."""
    provenance = entry.provenance
    if isinstance(provenance, PersonProvenance) and provenance.edited_from:
        return provenance.edited_from
    return entry.id


@dataclass(frozen=True)
class Curation:
    """A curator's outcome for one task: the checklist they chose, and the candidates a cross-checker sees
    (the drafts, each rewritten one in its new wording, plus the added entry)."""

    task: str
    curator: str
    checklist: list[ChecklistEntry]
    candidates: list[ChecklistEntry]


def unknown_entry(entry: str, task: str) -> str:
    """The refusal of an entry id nobody can guess: it names the command that lists the task's entries."""
    return f"unknown entry {entry!r} for task {task}; list them with `curate judge checklist show {task}`"


def apply_curation(
    candidates: Sequence[ChecklistEntry],
    record: ChecklistSelectionRecord,
    bounds: ChecklistBounds | None = ChecklistBounds(),
) -> Curation:
    """Check a curator's record against the task's drafted entries and the bounds; raise with every problem.

    ``bounds=None`` re-reads a recorded selection, which was checked against the bounds in force then."""
    by_id = {e.id: e for e in candidates}
    problems = [Problem(unknown_entry(s, record.task), "selected") for s in record.selected if s not in by_id]
    edits = {edit.entry: edit.text for edit in record.edits}
    problems += [Problem(f"entry {e!r} is edited but not selected", "edits") for e in edits if e not in record.selected]
    if not problems and bounds is not None:
        rubrics = [by_id[s].rubric for s in record.selected] + [a.rubric for a in record.added]
        problems += bounds.problems(rubrics, (e.rubric for e in candidates))
    if problems:
        raise ValidationFailed(problems, f"checklist of task {record.task} was not recorded")
    rewritten: dict[str, ChecklistEntry] = {}
    for old, text in edits.items():
        original = by_id[old]
        if " ".join(text.split()) == " ".join(original.text.split()):
            continue
        provenance = PersonProvenance(person=record.reviewer, action="edited", edited_from=old)
        new_id = entry_id(record.task, original.rubric, text)
        rewritten[old] = ChecklistEntry(id=new_id, rubric=original.rubric, text=text, provenance=provenance)
    added = [
        ChecklistEntry(
            id=entry_id(record.task, a.rubric, a.text),
            rubric=a.rubric,
            text=a.text,
            provenance=PersonProvenance(person=record.reviewer, action="added"),
        )
        for a in record.added
    ]
    chosen = [rewritten.get(s, by_id[s]) for s in record.selected] + added
    pool = [rewritten.get(e.id, e) for e in candidates] + [a for a in added if a.id not in by_id]
    return Curation(record.task, record.reviewer, chosen, pool)


def check_crosscheck(
    curation: Curation, record: ChecklistSelectionRecord, bounds: ChecklistBounds = ChecklistBounds()
) -> None:
    """A cross-check selects among the curated candidates, within the bounds, by another person."""
    known = {e.id for e in curation.candidates}
    problems = [Problem(unknown_entry(s, record.task), "selected") for s in record.selected if s not in known]
    if record.reviewer == curation.curator:
        problems.append(Problem(f"{record.reviewer} curated this checklist and cannot cross-check it", "reviewer"))
    problems += _selection_problems(curation.candidates, record.selected, bounds)
    if problems:
        raise ValidationFailed(problems, f"cross-check of task {record.task} was not recorded")


@dataclass(frozen=True)
class Disagreement:
    """An entry one person kept and the other dropped: a row of the adjudication queue."""

    task: str
    entry: str
    rubric: str
    text: str
    kept_by: tuple[str, ...]
    dropped_by: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "entry": self.entry,
            "rubric": self.rubric,
            "text": self.text,
            "kept_by": list(self.kept_by),
            "dropped_by": list(self.dropped_by),
        }


@dataclass
class TaskChecklist:
    """Where one task's checklist stands after curation, cross-check and adjudication."""

    task: str
    curation: Curation | None = None
    crosscheck: ChecklistSelectionRecord | None = None
    adjudication: ChecklistAdjudicationRecord | None = None
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def state(self) -> str:
        """``drafted`` → ``curated`` → ``disagreement`` (waits for adjudication) or ``final``."""
        if self.curation is None:
            return "drafted"
        if self.adjudication is not None:
            return "final"
        if self.crosscheck is None:
            return "curated"
        return "disagreement" if self.disagreements else "final"

    @property
    def final(self) -> list[ChecklistEntry]:
        """The curated checklist once final: the adjudicated selection, else the agreed one."""
        if self.state != "final" or self.curation is None:
            return []
        if self.adjudication is not None:
            by_id = {e.id: e for e in self.curation.candidates}
            return [by_id[s] for s in self.adjudication.selected if s in by_id]
        return list(self.curation.checklist)


def resolve_task(
    curation: Curation | None,
    crosscheck: ChecklistSelectionRecord | None,
    adjudication: ChecklistAdjudicationRecord | None = None,
) -> TaskChecklist:
    """Compare the cross-check with the curation entry by entry over the candidates."""
    task = (curation or crosscheck or adjudication).task  # type: ignore[union-attr]
    result = TaskChecklist(task, curation, crosscheck, adjudication)
    if curation is None or crosscheck is None:
        return result
    curated = {e.id for e in curation.checklist}
    checked = set(crosscheck.selected)
    for entry in curation.candidates:
        if (entry.id in curated) != (entry.id in checked):
            kept, dropped = (
                ((curation.curator,), (crosscheck.reviewer,))
                if entry.id in curated
                else ((crosscheck.reviewer,), (curation.curator,))
            )
            result.disagreements.append(Disagreement(task, entry.id, entry.rubric, entry.text, kept, dropped))
    return result


def derive_task_checklist(
    task_id: str, candidates: Sequence[ChecklistEntry], payloads: Mapping[str, Mapping[str, Any]]
) -> TaskChecklist:
    """A task's checklist from its drafted candidates and its latest record per stage (``checklist_curation``,
    ``checklist_crosscheck``, ``checklist_adjudication``): what the store and a release's reproduction share."""
    curation = crosscheck = adjudication = None
    if "checklist_curation" in payloads:
        record = ChecklistSelectionRecord.model_validate(payloads["checklist_curation"])
        curation = apply_curation(candidates, record, None)
    if "checklist_crosscheck" in payloads:
        crosscheck = ChecklistSelectionRecord.model_validate(payloads["checklist_crosscheck"])
    if "checklist_adjudication" in payloads:
        adjudication = ChecklistAdjudicationRecord.model_validate(payloads["checklist_adjudication"])
    if curation is None and crosscheck is None and adjudication is None:
        return TaskChecklist(task_id)
    return resolve_task(curation, crosscheck, adjudication)


def selection_rows(tasks: Iterable[TaskChecklist]) -> list[tuple[str, str, int]]:
    """(task|entry, person, 1 kept / 0 dropped) for every candidate of every cross-checked task."""
    rows: list[tuple[str, str, int]] = []
    for task in tasks:
        if task.curation is None or task.crosscheck is None:
            continue
        curated = {e.id for e in task.curation.checklist}
        checked = set(task.crosscheck.selected)
        for entry in task.curation.candidates:
            unit = f"{task.task}|{origin(entry)}"
            rows.append((unit, task.curation.curator, int(entry.id in curated)))
            rows.append((unit, task.crosscheck.reviewer, int(entry.id in checked)))
    return rows


def selection_agreement(tasks: Iterable[TaskChecklist], bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
    """Nominal α over task × entry keep/drop decisions, with the raw agreement and the queue's size.

    Units are grouped by task for the bootstrap (entries of one task are not independent).
    """
    tasks = list(tasks)
    rows = selection_rows(tasks)
    disagreements = sum(len(t.disagreements) for t in tasks)
    report: dict[str, Any] = {"units": len(rows) // 2, "disagreements": disagreements}
    if not rows:
        return {**report, "value": None, "undefined": "no task has been cross-checked yet", "raw_agreement": None}
    report["raw_agreement"] = 1 - disagreements / (len(rows) // 2)
    groups: Mapping[str, str] = {u: u.split("|", 1)[0] for u, _, _ in rows}
    ratings = ratings_from_rows(
        (
            (0, {"unit": u, "coder": "curator" if i % 2 == 0 else "crosscheck", "value": v})
            for i, (u, _, v) in enumerate(rows)
        ),
        groups=groups,
    )
    try:
        estimate = krippendorff_alpha(ratings, "nominal", bootstrap=bootstrap, seed=seed)
    except UndefinedStatistic as exc:
        return {**report, "value": None, "undefined": str(exc)}
    return {**report, **estimate.as_dict(), "undefined": None}


def adjudication_queue(tasks: Iterable[TaskChecklist]) -> list[Disagreement]:
    """Disagreements of tasks still waiting for a maintainer, task by task."""
    return [d for t in tasks if t.state == "disagreement" for d in t.disagreements]


def check_adjudication(task: TaskChecklist, record: ChecklistAdjudicationRecord, bounds: ChecklistBounds) -> None:
    """An adjudication picks among the candidates, within the bounds, by someone who took neither side."""
    problems = []
    if task.curation is None:
        problems.append(Problem(f"task {record.task} has no curated checklist to adjudicate", "task"))
    elif task.crosscheck is None:  # the blind cross-check cannot be skipped by adjudicating first
        problems.append(
            Problem(f"task {record.task} has no cross-check yet; adjudication settles a cross-check's dispute", "task")
        )
    elif not task.disagreements and task.adjudication is None:
        problems.append(
            Problem(f"task {record.task}: the curation and the cross-check agree; nothing to adjudicate", "task")
        )
    else:
        known = {e.id for e in task.curation.candidates}
        problems += [Problem(unknown_entry(s, record.task), "selected") for s in record.selected if s not in known]
        sides = {task.curation.curator} | ({task.crosscheck.reviewer} if task.crosscheck else set())
        if record.adjudicator in sides:
            problems.append(
                Problem(f"{record.adjudicator} selected entries of this task and cannot adjudicate it", "adjudicator")
            )
        problems += _selection_problems(task.curation.candidates, record.selected, bounds)
    if problems:
        raise ValidationFailed(problems, f"adjudication of task {record.task} was not recorded")


def _selection_problems(
    candidates: Sequence[ChecklistEntry], selected: Sequence[str], bounds: ChecklistBounds
) -> list[Problem]:
    """The per-rubric bounds of a selection among candidates (unknown ids are reported apart)."""
    rubric_of = {e.id: e.rubric for e in candidates}
    return bounds.problems((rubric_of[s] for s in selected if s in rubric_of), rubric_of.values())


def rubric_counts(entries: Iterable[ChecklistEntry]) -> dict[str, int]:
    """Entries per rubric, in rubric order (rubrics without an entry left out)."""
    counts: Counter[str] = Counter(e.rubric for e in entries)
    return {r: counts[r] for r in RUBRICS if counts[r]}


def first_per_rubric(candidates: Sequence[ChecklistEntry], counts: int | Mapping[str, int] = 1) -> list[str]:
    """The ids of the first ``counts`` candidates of each rubric (an int for every rubric, or per rubric): a
    selection within the paper's bounds, as the demo's curators make it."""
    wanted = counts if isinstance(counts, Mapping) else dict.fromkeys(RUBRICS, counts)
    taken: Counter[str] = Counter()
    picked = []
    for entry in candidates:
        if taken[entry.rubric] < wanted.get(entry.rubric, 0):
            taken[entry.rubric] += 1
            picked.append(entry.id)
    return picked
