"""`curate release verify` for a ``judge_task`` release: every internal reference of its data files.

The file list itself (hashes, sizes, extra files, links) is checked by :mod:`exports.verify` for every kind;
here: tasks and responses name media the release ships, checklists, responses and samples name tasks and
responses it holds, annotations and judge outputs name its samples, and the manifest's counts are the data's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Problem = tuple[str, str, str]
"""(kind, path, detail) of one mismatch, as :class:`exports.verify.Mismatch` holds it."""

TASKS, CHECKLISTS, RESPONSES = "data/tasks.jsonl", "data/checklists.jsonl", "data/responses.jsonl"
SAMPLES = {"score": "data/score_samples.jsonl", "pair": "data/pair_samples.jsonl"}
ANNOTATIONS = {"score": "data/score_annotations.jsonl", "pair": "data/pair_annotations.jsonl"}
OUTPUTS = "data/judge_outputs.jsonl"


class _Unreadable(ValueError):
    pass


def read_jsonl(folder: Path, rel: str) -> list[dict[str, Any]]:
    """The records of one data file; a line that is not a JSON object names the file and line."""
    path = folder / rel
    if not path.is_file() or path.is_symlink():
        raise _Unreadable(f"{rel}: missing")
    rows = []
    for number, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise _Unreadable(f"{rel}:{number}: not valid JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise _Unreadable(f"{rel}:{number}: not a JSON object")
        rows.append(record)
    return rows


def read_tasks(folder: Path) -> dict[str, dict[str, Any]]:
    """Tasks by id with their checklist entries (``checklist``): what `curate release diff` compares. A person
    in an entry's provenance is a per-release pseudonym, different in every version by design, so it is compared
    as ``(a person)``: a diff names changed entries, not new pseudonyms."""
    try:
        tasks = {str(t.get("id")): dict(t) for t in read_jsonl(folder, TASKS)}
        for row in read_jsonl(folder, CHECKLISTS):
            if str(row.get("task")) in tasks:
                tasks[str(row.get("task"))]["checklist"] = _without_pseudonyms(row.get("entries"))
    except _Unreadable as exc:
        from curation.errors import CurateError

        raise CurateError(f"{folder}: {exc}") from exc
    return tasks


def _without_pseudonyms(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    out = []
    for entry in entries:
        provenance = entry.get("provenance") if isinstance(entry, dict) else None
        if isinstance(provenance, dict) and "person" in provenance:
            entry = {**entry, "provenance": {**provenance, "person": "(a person)"}}
        out.append(entry)
    return out


def check_judge_release(folder: Path, manifest: dict[str, Any], listed: dict[str, Any]) -> tuple[int, list[Problem]]:
    """(tasks, problems): every cross-reference of the data files, and the manifest's counts."""
    data: dict[str, list[dict[str, Any]]] = {}
    problems: list[Problem] = []
    for rel in (TASKS, CHECKLISTS, RESPONSES, *SAMPLES.values(), *ANNOTATIONS.values(), OUTPUTS):
        if rel not in listed:
            continue  # a missing file is reported by the file-list check
        try:
            data[rel] = read_jsonl(folder, rel)
        except _Unreadable as exc:
            problems.append(("invalid", rel, str(exc)))
    if problems or any(rel not in data for rel in (TASKS, RESPONSES, *SAMPLES.values())):
        return len(data.get(TASKS, [])), problems

    def broken(rel: str, detail: str) -> None:
        problems.append(("broken_reference", rel, detail))

    def media(rel: str, owner: str, value: Any) -> None:
        if not isinstance(value, str) or not value.startswith("media/") or value not in listed:
            broken(rel, f"{owner}: {value} is not a file of the release")

    tasks = {t.get("id") for t in data[TASKS]}
    if len(tasks) != len(data[TASKS]):
        problems.append(("invalid", TASKS, "a task id appears twice"))
    for task in data[TASKS]:
        for modality, value in sorted((task.get("inputs") or {}).items()):
            media(TASKS, f"task {task.get('id')} input {modality}", value)
    responses: dict[Any, Any] = {}
    for response in data[RESPONSES]:
        responses[response.get("id")] = response.get("task")
        if response.get("task") not in tasks:
            broken(RESPONSES, f"response {response.get('id')}: task {response.get('task')} is not in {TASKS}")
        for modality, value in sorted((response.get("output") or {}).items()):
            if modality != "text":
                media(RESPONSES, f"response {response.get('id')} {modality}", value)
    for row in data.get(CHECKLISTS, []):
        if row.get("task") not in tasks:
            broken(CHECKLISTS, f"checklist of {row.get('task')}: the task is not in {TASKS}")
    problems += [("invalid", CHECKLISTS, p) for p in checklist_problems(data.get(CHECKLISTS, []), manifest)]
    samples: dict[str, set[Any]] = {}
    for kind, rel in SAMPLES.items():
        samples[kind] = {s.get("id") for s in data[rel]}
        for sample in data[rel]:
            named = [sample.get("response")] if kind == "score" else [sample.get("first"), sample.get("second")]
            for response in named:
                if responses.get(response, object()) != sample.get("task"):
                    broken(
                        rel, f"sample {sample.get('id')}: response {response} of task {sample.get('task')} is missing"
                    )
    for kind, rel in ANNOTATIONS.items():
        for row in data.get(rel, []):
            if row.get("sample") not in samples[kind]:
                broken(rel, f"an annotation names sample {row.get('sample')}, which is not in {SAMPLES[kind]}")
    every_sample = samples["score"] | samples["pair"]
    for row in data.get(OUTPUTS, []):
        if row.get("sample") not in every_sample:
            broken(OUTPUTS, f"judge {row.get('judge')} names sample {row.get('sample')}, which the release lacks")
    from .judge_parquet import parquet_problems

    problems += [("invalid", rel, why) for rel, why in parquet_problems(folder, data, listed)]
    counts = manifest.get("counts") if isinstance(manifest.get("counts"), dict) else {}
    actual = {
        "tasks": len(data[TASKS]),
        "responses": len(data[RESPONSES]),
        "score_samples": len(data[SAMPLES["score"]]),
        "pair_samples": len(data[SAMPLES["pair"]]),
        "annotators": len({r.get("annotator") for rel in ANNOTATIONS.values() for r in data.get(rel, [])}),
    }
    for key, value in actual.items():
        if counts.get(key) != value:
            problems.append(("invalid", "manifest.json", f"counts.{key} is {counts.get(key)}, the data has {value}"))
    return len(data[TASKS]), problems


def checklist_problems(rows: list[dict[str, Any]], manifest: dict[str, Any]) -> list[str]:
    """Each checklist holds entries of the six rubrics only, each rubric it covers within the per-rubric bounds
    the manifest states (the paper's 1 to 6 where it states none), and no entry twice."""
    from curation.kinds.judge.rubrics import RUBRICS

    bounds = manifest.get("checklist_per_rubric")
    low, high = bounds if isinstance(bounds, list) and len(bounds) == 2 else (1, 6)
    problems = []
    for row in rows:
        entries = row.get("entries") if isinstance(row.get("entries"), list) else []
        rubrics = [e.get("rubric") if isinstance(e, dict) else None for e in entries]
        ids = [e.get("id") if isinstance(e, dict) else None for e in entries]
        unknown = sorted({str(r) for r in rubrics if r not in RUBRICS})
        if not entries:
            problems.append(f"checklist of {row.get('task')}: no entry")
        if unknown:
            problems.append(f"checklist of {row.get('task')}: unknown rubric(s) {', '.join(unknown)}")
        if len(set(ids)) != len(ids):
            problems.append(f"checklist of {row.get('task')}: an entry appears twice")
        for rubric in RUBRICS:
            count = rubrics.count(rubric)
            if count and not low <= count <= high:
                problems.append(
                    f"checklist of {row.get('task')}: {count} {rubric} entries; a rubric holds {low} to {high}"
                )
    return problems
