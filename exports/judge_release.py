"""The release of a ``judge_task`` benchmark: tasks with final (curated) checklists, usable responses,
score and pair samples, people's scores and choices (pseudonymous) with their agreement, the judges'
outputs and the judge-vs-human report, a datasheet, Croissant metadata and a manifest naming the kind.

Deterministic like the mcq release: the date is fixed at the first build (or SOURCE_DATE_EPOCH), files are
canonical JSON, media are named by their SHA-256, and a published version must rebuild byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import CheckFailed
from curation.kinds.judge import output_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import selection_agreement
from curation.kinds.judge.queries import curation_summary
from curation.kinds.judge.report import ReportSettings
from curation.kinds.judge.rubrics import CRITERIA, DEFINITIONS
from curation.kinds.judge.tables import JudgeAnnotation, JudgeOutput, JudgeSample
from curation.pseudonyms import Pseudonyms, workspace_key
from curation.release_claims import ReleaseClaims, load_claims
from curation.tables import Asset
from curation.workspace import Workspace

from .admission_record import card_lines as admission_card_lines
from .admission_record import croissant_parts as admission_croissant_parts
from .build import DEFAULT_LICENSE, FORMAT, validate_version
from .card import CROISSANT_CONTEXT
from .claims import CLAIMS_FILE, MAINTENANCE, card_block, claim_sections, croissant_claims, url, write_claims
from .judge_admission import write_judge_admission_record
from .judge_parquet import FILES as PARQUET_FILES
from .judge_parquet import RESPONSE_COLUMNS, TASK_COLUMNS, flat_response, flat_task, parquet_files
from .kind_claims import (
    RESPONSES,
    judge_annotations_per_item,
    judge_checklist_sentence,
    judge_facts,
    judge_sample_sentences,
    judge_sources,
    judge_summary,
)
from .publish import BuildResult, _publish, _published_name, refuse_changed_data, release_date
from .release_parquet import croissant_field
from .tables import Release
from .writer import ReleaseWriter, StoreChecks, canonical_json, jsonl_bytes

KIND = "judge_task"
DATA_FILES = (
    ("data/tasks.jsonl", "The tasks: instruction, input media, wanted output modality, source benchmark, licence."),
    (
        "data/checklists.jsonl",
        "Each task's curated checklist; every entry with its provenance (model + prompt hash, or person).",
    ),
    ("data/responses.jsonl", "Usable responses (reviewed; none NSFW), each with its task and system."),
    ("data/score_samples.jsonl", "Score samples: (task, response)."),
    ("data/pair_samples.jsonl", "Pair samples: (task, first, second) from different systems, sides as shown."),
    ("data/score_annotations.jsonl", "People's 1-5 scores, overall and per rubric (annotators pseudonymous)."),
    ("data/pair_annotations.jsonl", "People's first/second/tie choices, overall and per rubric."),
    ("data/judge_outputs.jsonl", "Judge models' samples of scores and choices."),
)


def _pseudonymous(entry: dict[str, Any], pseudonym: Pseudonyms) -> dict[str, Any]:
    """A checklist entry as released: a person who rewrote or added it is named by their per-release pseudonym."""
    provenance = entry.get("provenance") or {}
    if provenance.get("by") == "person":
        entry["provenance"] = {**provenance, "person": pseudonym(provenance["person"])}
    return entry


def _media_name(asset: Asset) -> str:
    return f"media/{asset.sha256}{asset.ext}"


def _collect(ws: Workspace, version: str) -> tuple[dict[str, bytes], list[tuple[str, Path, str]], dict[str, Any]]:
    """The data files, the media to copy and the facts the card and manifest need."""
    checklists = {t.task: t for t in record_store.task_checklists(ws)}
    final = {t for t, c in checklists.items() if c.state == "final"}
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
        annotation_rows = s.execute(
            select(JudgeAnnotation.sample, JudgeAnnotation.annotator, JudgeAnnotation.payload, JudgeSample.kind)
            .join(JudgeSample, JudgeSample.id == JudgeAnnotation.sample)
            .where(JudgeAnnotation.applied)
            .order_by(JudgeAnnotation.sample, JudgeAnnotation.annotator)
        ).all()
        outputs = list(s.execute(select(JudgeOutput).order_by(JudgeOutput.sample, JudgeOutput.judge)).scalars())
    media: dict[str, Asset] = {}
    tasks = []
    for task in task_store.tasks(ws):
        if task.id not in final:
            continue
        inputs = {}
        for modality, sha in sorted(task.inputs.items()):
            media[sha] = assets[sha]
            inputs[modality] = _media_name(assets[sha])
        tasks.append(
            {
                "id": task.id,
                "instruction": task.instruction,
                "inputs": inputs,
                "output": task.output,
                "modality_pair": task.modality_pair,
                "source": task.source,
                "license": task.license,
            }
        )
    usable = {r.id for r in record_store.usable_responses(ws)}
    responses = []
    for response in task_store.responses(ws):
        if response.id not in usable or response.task not in final:
            continue
        output: dict[str, str] = {}
        if response.asset:
            media[response.asset] = assets[response.asset]
            output[response.modality] = _media_name(assets[response.asset])
        else:
            output["text"] = response.text or ""
        responses.append({"id": response.id, "task": response.task, "system": response.system, "output": output})
    kept_samples = {
        kind: [s.model_dump() for s in sample_store.samples(ws, kind) if s.task in final] for kind in ("score", "pair")
    }
    kept_ids = {s["id"] for rows in kept_samples.values() for s in rows}
    people = sorted({r[1] for r in annotation_rows})
    pseudonym = {p: f"annotator-{i + 1}" for i, p in enumerate(people)}
    annotations: dict[str, list[dict[str, Any]]] = {"score": [], "pair": []}
    for sample, person, payload, kind in annotation_rows:
        if sample in kept_ids:
            annotations[kind].append({"sample": sample, "annotator": pseudonym[person], **payload})
    person = Pseudonyms(workspace_key(ws.root), version)  # as in admission/: the same person, the same pseudonym
    files = {
        "data/tasks.jsonl": jsonl_bytes(tasks),
        "data/checklists.jsonl": jsonl_bytes(
            {
                "task": t["id"],
                "entries": [_pseudonymous(e.model_dump(mode="json"), person) for e in checklists[t["id"]].final],
            }
            for t in tasks
        ),
        "data/responses.jsonl": jsonl_bytes(responses),
        "data/score_samples.jsonl": jsonl_bytes(kept_samples["score"]),
        "data/pair_samples.jsonl": jsonl_bytes(kept_samples["pair"]),
        "data/score_annotations.jsonl": jsonl_bytes(annotations["score"]),
        "data/pair_annotations.jsonl": jsonl_bytes(annotations["pair"]),
        "data/judge_outputs.jsonl": jsonl_bytes(
            {"sample": o.sample, "judge": o.judge, **o.payload} for o in outputs if o.sample in kept_ids
        ),
    }
    copies = [(_media_name(a), ws.asset_path(a), a.sha256) for _, a in sorted(media.items())]
    facts = {
        "tasks": len(tasks),
        "held": sorted(set(checklists) - final),
        "responses": len(responses),
        "score_samples": len(kept_samples["score"]),
        "pair_samples": len(kept_samples["pair"]),
        "annotators": len({a["annotator"] for rows in annotations.values() for a in rows}),
        "judges": sorted({o.judge for o in outputs}),
        "modality_pairs": sorted({t["modality_pair"] for t in tasks}),
        "checklist_agreement": selection_agreement(checklists.values()),
        **judge_facts(tasks, responses, [checklists[t["id"]] for t in tasks], kept_samples, annotations),
    }
    return files, copies, facts


def _datasheet(name: str, version: str, date: str, license: str, facts: dict[str, Any], claims: ReleaseClaims) -> str:
    """README.md: every sentence from the released records (``exports.kind_claims``) or the maintainer's
    release-claims.toml (``exports.claims``)."""
    agreement = facts["checklist_agreement"]
    alpha = f"{agreement['value']:.3f}" if agreement.get("value") is not None else agreement.get("undefined", "n/a")
    lines = [
        f"# {name} {version}",
        "",
        judge_summary(facts),
        "",
        f"Released {date}; text and annotations under {license}. {judge_sources(facts)}",
        "",
        *card_block(claims, "description"),
        "## How it was made",
        f"- {judge_checklist_sentence(facts, alpha)}",
        f"- {RESPONSES}",
        *[f"- {line}" for line in judge_sample_sentences(facts)],
        "",
        "## Rubrics",
        "",
        "The rubrics' definitions (`curation.kinds.judge.rubrics`):",
        "",
        *[f"- **{c}**: {DEFINITIONS[c]}" for c in CRITERIA],
        "",
        *claim_sections(claims),
        "## Files",
        *[f"- `{path}`: {text}" for path, text in DATA_FILES],
        *[f"- `{path}`: {text}" for path, _, text in PARQUET_FILES],
        "- `report.json`: judges against people (Pearson, Spearman, MAE, exact match; pair accuracy with and "
        "without ties; per rubric and modality pair with bootstrap intervals; fusion; Elo and Bradley-Terry).",
        "- `agreement.json`: checklist selection agreement and the people's agreement on scores and choices.",
        f"- `{CLAIMS_FILE}`: the maintainer's statements this release was built with (release-claims.toml).",
    ]
    if facts["held"]:
        lines += ["", f"Held back (checklist not final): {', '.join(facts['held'])}."]
    return "\n".join(lines) + "\n"


_TEXT, _INT, _BOOL = "sc:Text", "sc:Integer", "sc:Boolean"


def _field(record_set: str, name: str, dtype: str, path: str, column: str, inner: str | None) -> dict[str, Any]:
    """A Croissant field read from a JSON Lines column; ``inner`` is a JSONPath into that column's value,
    ending in ``[]`` where it names a list (mlcroissant reads ``overall`` whole, ``overall[*]`` as one value)."""
    array = inner is not None and (inner.endswith("[]") or "[*]" in inner)
    inner = inner.removesuffix("[]") if inner is not None else None
    source: dict[str, Any] = {"fileObject": {"@id": path}, "extract": {"column": column}}
    if inner is not None:
        source["transform"] = {"jsonPath": inner}
    field = {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "dataType": dtype, "source": source}
    if array:
        field.update(isArray=True, arrayShape="-1")
    return field


_PARQUET_SETS = {
    "tasks": ("data/tasks.parquet", "data/tasks.jsonl", flat_task, TASK_COLUMNS),
    "responses": ("data/responses.parquet", "data/responses.jsonl", flat_response, RESPONSE_COLUMNS),
}
_COLUMN_TEXT = {
    "id": "The record's id.",
    "instruction": "The task's instruction.",
    "output": "The output modality the task asks for.",
    "modality_pair": "Input and output modalities (e.g. image->text).",
    "source": "The benchmark the query comes from.",
    "license": "The query's licence (SPDX).",
    "task": "The task the response answers.",
    "system": "The system that gave the response.",
    "text": "The response's text.",
}


def _parquet_record_set(name: str, files: dict[str, bytes], described: dict[str, str]) -> dict[str, Any] | None:
    """The ``tasks`` or ``responses`` RecordSet, read from its Parquet file (a medium as its path in the release);
    a field only for a column some record fills, so that every declared field can be read; none without records."""
    parquet, jsonl, flatten, columns = _PARQUET_SETS[name]
    rows = [flatten(json.loads(line)) for line in files[jsonl].splitlines() if line.strip()]
    if not rows:
        return None
    filled = {c for row in rows for c, v in row.items() if v is not None}
    fields = []
    for column, kind in columns:
        if column in filled:
            medium = column.removeprefix("input_")
            text = _COLUMN_TEXT.get(column) or (
                f"The {'input' if column != medium else 'output'} {medium}: its path in the release "
                f"(media/<sha256>.<ext>); datasets.{medium.capitalize()}() in the Parquet file."
            )
            fields.append(croissant_field(name, parquet, column, kind, text))
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": f"{described[jsonl]} ({parquet})",
        "field": fields,
        "key": {"@id": f"{name}/id"},
    }


def _record_sets(files: dict[str, bytes]) -> list[dict[str, Any]]:
    """One RecordSet per data file that has records (the tasks and responses from their Parquet files, the
    others from JSON Lines); a field only where its column exists in the file (a judge that only scored has no
    choices), so every declared field can be read."""
    columns = {
        path: set().union(*(json.loads(line) for line in data.splitlines() if line.strip()))
        for path, data in files.items()
    }
    criteria_int = [(c, _INT) for c in CRITERIA]
    layouts: dict[str, tuple[str, str | None, list[tuple[str, str, str, str | None]]]] = {
        "checklists": (
            "data/checklists.jsonl",
            "checklists/task",
            [("task", _TEXT, "task", None)]
            + [(f"entry_{k}", _TEXT, "entries", f"[*].{k}") for k in ("id", "rubric", "text")]
            + [("entry_by", _TEXT, "entries", "[*].provenance.by")],
        ),
        "score_samples": (
            "data/score_samples.jsonl",
            "score_samples/id",
            [(c, _TEXT, c, None) for c in ("id", "task", "response", "system", "modality_pair")],
        ),
        "pair_samples": (
            "data/pair_samples.jsonl",
            "pair_samples/id",
            [(c, _TEXT, c, None) for c in ("id", "task", "first", "second", "first_system", "second_system")]
            + [("modality_pair", _TEXT, "modality_pair", None), ("swapped", _BOOL, "swapped", None)],
        ),
        "score_annotations": (
            "data/score_annotations.jsonl",
            None,
            [(c, _TEXT, c, None) for c in ("sample", "annotator")] + [(c, t, "scores", c) for c, t in criteria_int],
        ),
        "pair_annotations": (
            "data/pair_annotations.jsonl",
            None,
            [(c, _TEXT, c, None) for c in ("sample", "annotator")] + [(c, _TEXT, "choices", c) for c in CRITERIA],
        ),
        "judge_outputs": (
            "data/judge_outputs.jsonl",
            None,
            [(c, _TEXT, c, None) for c in ("sample", "judge")]
            + [(f"score_{c}", _INT, "scores", f"{c}[]") for c in CRITERIA]
            + [(f"choice_{c}", _TEXT, "choices", f"{c}[]") for c in CRITERIA],
        ),
    }
    described = dict(DATA_FILES)
    sets = [rs for rs in (_parquet_record_set(name, files, described) for name in _PARQUET_SETS) if rs]
    for name, (path, key, fields) in layouts.items():
        present = columns.get(path, set())
        if not present:
            continue
        record_set: dict[str, Any] = {
            "@type": "cr:RecordSet",
            "@id": name,
            "name": name,
            "description": f"{described[path]} ({path})",
            "field": [_field(name, n, t, path, column, inner) for n, t, column, inner in fields if column in present],
        }
        if key is not None:
            record_set["key"] = {"@id": key}
        sets.append(record_set)
    order = ["tasks", "checklists", "responses", *layouts]  # the files' order
    return sorted(sets, key=lambda rs: order.index(rs["name"]))


def _croissant(
    name: str,
    version: str,
    date: str,
    license: str,
    entries: dict[str, Any],
    files: dict[str, bytes],
    facts: dict[str, Any],
    claims: ReleaseClaims,
) -> dict[str, Any]:
    """Croissant 1.1: the data files with their sha256, a RecordSet per file (tasks, checklists, responses,
    samples, people's scores and choices, judges' outputs) and the Responsible-AI fields (records and the
    maintainer's release-claims.toml only)."""
    key = "".join(ch for ch in name if ch.isalnum()) or "dataset"
    agreement = facts["checklist_agreement"]
    alpha = f"{agreement['value']:.3f}" if agreement.get("value") is not None else agreement.get("undefined", "n/a")
    document = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": name,
        "description": f"{name} {version}: a judge_task benchmark (tasks, checklists, responses, human and judge ratings).",
        "version": version,
        "citeAs": f"@misc{{{key}_{version.replace('.', '_')}, title = {{{name} (version {version})}}, "
        f"year = {{{date[:4]}}}, note = {{Released {date}}}}}",
        "datePublished": date,
        "license": license,
        "url": url(claims, name, version),
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": path,
                "name": path,
                "contentUrl": path,
                "contentSize": f"{entries[path].size} B",
                "encodingFormat": "application/jsonlines",
                "sha256": entries[path].sha256,
            }
            for path, _ in DATA_FILES
        ]
        + [
            {
                "@type": "cr:FileObject",
                "@id": path,
                "name": path,
                "description": text,
                "contentUrl": path,
                "contentSize": f"{entries[path].size} B",
                "encodingFormat": "application/x-parquet",
                "sha256": entries[path].sha256,
            }
            for path, _, text in PARQUET_FILES
        ],
        "recordSet": _record_sets(files),
        "rai:dataCollection": f"{judge_summary(facts)} {judge_sources(facts)}",
        "rai:dataCollectionType": ["Manual Human Curation"],
        "rai:dataAnnotationProtocol": [
            judge_checklist_sentence(facts, alpha),
            RESPONSES,
            *judge_sample_sentences(facts),
        ],
        "rai:annotationsPerItem": judge_annotations_per_item(facts),
    }
    return document | croissant_claims(
        claims,
        str(document["description"]),
        personal=[
            "Annotators appear as annotator-N pseudonyms in data/score_annotations.jsonl and "
            "data/pair_annotations.jsonl."
        ],
        maintenance=MAINTENANCE,
    )


def build_judge_release(
    ws: Workspace,
    version: str,
    out: Path | None = None,
    license: str = DEFAULT_LICENSE,
    name: str | None = None,
    actor: str = "cli",
    log: Callable[[str], None] = lambda _: None,
    rejected: bool = True,
) -> BuildResult:
    """Build VERSION of the workspace's judge_task benchmark into ``<workspace>/releases/<version>/``."""
    validate_version(version)
    claims = load_claims(ws.root)  # a damaged release-claims.toml refuses the build before anything runs
    with ws.session() as s:
        existing = s.get(Release, version)
    name = name or _published_name(ws, existing) or ws.root.name  # a renamed workspace rebuilds its version
    date = release_date(existing)
    files, copies, facts = _collect(ws, version)
    if facts["tasks"] == 0:
        raise CheckFailed("release refused: no task has a final checklist yet; see `curate judge checklists`")
    refuse_changed_data(existing, files)
    cfg = ws.settings.judge
    report = output_store.report(ws, ReportSettings(cfg.judge_scores, cfg.bootstrap, 0))
    agreement = {
        "checklist_selection": facts["checklist_agreement"],
        "human_scores": report.get("scores", {}).get("human_agreement"),
        "human_choices": report.get("pairs", {}).get("human_agreement"),
    }
    log(f"{facts['tasks']} task(s), {facts['responses']} usable response(s), {len(copies)} media file(s)")

    def write(temp: Path) -> BuildResult:
        checks = StoreChecks.of(ws)
        writer = ReleaseWriter(temp, checks=checks)
        for path, data in (files | parquet_files(files)).items():
            writer.write_bytes(path, data)
        writer.copy_media(copies)
        checks.remember(ws)
        writer.write_json("report.json", report)
        writer.write_json("agreement.json", agreement)
        record = write_judge_admission_record(writer, ws, version, rejected)
        entries = {e.path: e for e in writer.entries()}
        write_claims(writer, claims)
        datasheet = _datasheet(name, version, date, license, facts, claims) + "\n".join(admission_card_lines(record))
        writer.write_bytes("README.md", datasheet.encode())
        croissant = _croissant(name, version, date, license, entries, files, facts, claims)
        admission_files, admission_sets = admission_croissant_parts(writer.entries())
        croissant["distribution"] += admission_files
        croissant["recordSet"] += admission_sets
        writer.write_json("croissant.json", croissant)
        listed = writer.entries()
        manifest = {
            "format": FORMAT,
            "kind": KIND,
            "name": name,
            "version": version,
            "release_date": date,
            "license": license,
            "counts": {k: facts[k] for k in ("tasks", "responses", "score_samples", "pair_samples", "annotators")},
            "judges": facts["judges"],
            "held": facts["held"],
            "checklist_per_rubric": [cfg.checklist_min, cfg.checklist_max],
            "query_curation": curation_summary(ws),
            "files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in listed],
        }
        entry = writer.write_bytes("manifest.json", canonical_json(manifest))
        return BuildResult(
            version=version,
            path=temp,
            items=facts["tasks"],
            files=len(listed) + 1,
            bytes=sum(e.size for e in listed) + entry.size,
            manifest_sha256=entry.sha256,
            release_date=date,
            name=name,
        )

    gates: Future[list[str]] = Future()
    gates.set_result([])
    target = (out or ws.root / "releases" / version).resolve()
    # _publish registers the version (and journals it) in the same step that moves the folder into place.
    return _publish(ws, target, existing, gates, write, actor)
