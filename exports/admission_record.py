"""The admission record a release carries (design.md, "Releases — the admission record").

Under ``admission/``: the units the derivation judged (released items and their scene-group sisters), every
review record, maintainer decision, gate result and exposure the derivation read — people under per-release
pseudonyms (``curation.pseudonyms``) — the outcome of every stage as derived, a blind attestation per blind
check, the probe outputs as a replay file, and the settings the rules ran under. ``exports.reproduce``
re-derives the outcomes from these files with the same derivation code.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.errors import CurateError, ValidationFailed
from curation.exposure import exposure_code, exposures
from curation.facts import ItemFacts, RecordFacts
from curation.kinds import kind_of
from curation.pseudonyms import RULE, Pseudonyms, workspace_key
from curation.tables import ReviewRecord
from curation.workflow import Derivation, ItemStatus, StatusInputs
from curation.workspace import Workspace

from . import build_state
from .admission_lines import DAMAGED, MODELS, Lines, parse_file, read_records
from .exclusions import DESCRIPTION as EXCLUSIONS_DESCRIPTION
from .exclusions import FIELDS as EXCLUSIONS_FIELDS
from .exclusions import FILE as EXCLUSIONS_FILE
from .exclusions import exclusion_rows
from .exclusions import summary as exclusion_summary
from .writer import ReleaseWriter, jsonl_bytes

FORMAT = "omnicurate-admission/1"
FOLDER = "admission"
FILES = {
    "settings": "admission/settings.json",
    "units": "admission/units.jsonl",
    "records": "admission/records.jsonl",
    "decisions": "admission/decisions.jsonl",
    "gates": "admission/gates.jsonl",
    "exposures": "admission/exposures.jsonl",
    "outcomes": "admission/outcomes.jsonl",
    "attestations": "admission/attestations.jsonl",
    "probes": "admission/probes.jsonl",
    "rejected": "admission/rejected.jsonl",
    "tasks": "admission/tasks.jsonl",
    "exclusions": EXCLUSIONS_FILE,
}
DESCRIPTIONS = {
    "settings": "platform version, rule settings (quorums, combination rule, separation, group answers), gate "
    "modes, checker configuration, pseudonym rule",
    "units": "every item the derivation judged: the released items and their scene-group sisters (author "
    "pseudonymous), with content hashes",
    "records": "every review record of those units and groups as stored (reviewer pseudonymous, inputs hash, "
    "payload: grammar verdicts, audio scores, checklists, blind answers, adjudication consensus, group reviews)",
    "decisions": "maintainers' discards, restores and overrides (maintainer pseudonymous)",
    "gates": "item-level gate results the derivation read (media, audit, probe) and each gate's mode",
    "exposures": "who had seen each unit's label, how (author, group_review, shown) and since when",
    "outcomes": "each unit's derived state and every stage's outcome, with the records that counted",
    "attestations": "per blind check: whether its reviewer had any exposure to the label before answering",
    "probes": "the probe outputs per item and view, in the checker's replay format",
    "rejected": "the items not released, with their state and reasons",
    "tasks": "judge releases: per task, the drafted candidates, the checklist-curation records (curation, "
    "cross-check, adjudication) and the checklist they derive",
    "exclusions": EXCLUSIONS_DESCRIPTION,
}


def read_lines(folder: Path, rel: str) -> Lines:
    """A JSON Lines file of the release with each record's line number; an admission file's lines are checked
    against their models (``exports.admission_lines``). Every damaged line is a FILE:LINE problem, all raised
    together."""
    key = next((k for k, path in FILES.items() if path == rel), None)
    if key in MODELS:
        return read_records(folder, str(key), rel)
    out, problems = parse_file(folder, rel)
    if problems:
        raise ValidationFailed(problems, DAMAGED)
    return out


def platform_version() -> str:
    try:
        return version("omnicurate")
    except PackageNotFoundError:  # running from a source tree without an installed distribution
        return "unknown"


def _at(value: datetime | None) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo is None else value.replace(tzinfo=None)).isoformat()


# ----- shared by build and reproduce: what the derivation says about each unit ------------------------
def unit_outcomes(d: Derivation, statuses: Iterable[ItemStatus], ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each unit's state and every stage's outcome, with the ids of the records that counted."""
    by_id = {st.id: st for st in statuses}
    facts = {i.id: i for i in d.items}
    sisters: dict[str, list[ItemFacts]] = defaultdict(list)
    for item in d.items:
        if item.id not in d.discarded:
            sisters[item.group].append(item)
    out: dict[str, dict[str, Any]] = {}
    for item_id in sorted(ids):
        item, st = facts[item_id], by_id[item_id]
        stages: dict[str, Any] = {}
        if item_id not in d.discarded:
            for stage in d.kind(item).item_stages:
                if not stage.applies(item):
                    continue
                outcome = d.judge(item, stage)
                consensus = d.consensus(item, stage)
                stages[stage.name] = {
                    "passed": outcome.passed,
                    "held": outcome.held,
                    "reasons": outcome.reasons,
                    "records": [r.id for r in d.valid_records(item, stage)],
                    "consensus": None if consensus is None else consensus.id,
                }
            for gs in d.kind(item).group_stages:
                counted = d.group_records(item.group, sisters[item.group], gs)
                outcome = gs.judge_group(counted, d.settings)
                stages[gs.name] = {
                    "passed": outcome.passed,
                    "reasons": outcome.reasons,
                    "records": sorted(r.id for r in counted),
                }
        out[item_id] = {
            "id": item_id,
            "state": st.state,
            "stage": st.stage,
            "reasons": st.reasons,
            "overrides": d.overrides(item_id),
            "stages": stages,
        }
    return out


def attest(
    units: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]], shown: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """A statement per blind-stage record of a released unit: blind when no exposure of its reviewer to the
    unit's label (authored a sister, reviewed the group, was shown it) came before the answer."""
    group_of = {u["id"]: u["group"] for u in units}
    authors: dict[str, set[str]] = defaultdict(set)
    for u in units:
        authors[u["group"]].add(u["author"])
    group_reviews: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for r in records:
        if r["stage"] == "group_integration":
            group_reviews[r["subject"].removeprefix("group:")].append((r["reviewer"], r.get("at")))
    events: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for e in shown:
        events[e["item"]].append(e)
    released = {u["id"]: u for u in units if u.get("released")}
    blind_stages: dict[str, frozenset[str]] = {}
    out = []
    for r in records:
        item_id = r["subject"].removeprefix("item:")
        unit = released.get(item_id)
        if unit is None or not r["subject"].startswith("item:"):
            continue
        blind = blind_stages.get(unit["kind"])
        if blind is None:  # looked up once per kind, not once per record
            kind = kind_of(unit["kind"])
            blind = blind_stages[unit["kind"]] = frozenset(s.name for s in kind.stages if getattr(s, "blind", False))
        # records of no stage of the kind (an adjudication consensus) are no blind checks
        if r["stage"] not in blind:
            continue
        who, answered = r["reviewer"], _when(r.get("at"))
        before: list[dict[str, Any]] = []
        if who in authors[group_of[item_id]]:
            before.append({"via": "exposed:author", "at": None})
        before += [
            {"via": "exposed:group_review", "at": at}
            for person, at in group_reviews[group_of[item_id]]
            if person == who and _when(at) < answered
        ]
        before += [
            {"via": e["via"], "at": e.get("at")}
            for e in events[item_id]
            if e["person"] == who and e["via"] == "exposed:shown" and _when(e.get("at")) < answered
        ]
        out.append({"item": item_id, "record": r["id"], "reviewer": who, "blind": not before, "exposed_by": before})
    return out


def _when(at: str | None) -> datetime:
    """An exposure without a time (authorship) precedes everything; a record without one follows everything."""
    return datetime.min if at is None else datetime.fromisoformat(at)


def probe_replay_lines(item_id: str, result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A stored probe result as replay lines (design.md replay format): samples from counts, else probs."""
    lines = []
    for view, estimate in result.get("views", {}).items():
        line: dict[str, Any] = {"item": item_id, "view": view}
        if estimate.get("counts") is not None:
            line["samples"] = [k for k, n in estimate["counts"].items() for _ in range(n)] + (
                ["<unparseable>"] * int(estimate.get("unparseable", 0))
            )
        else:
            line["probs"] = estimate.get("probs", {})
        line["audio_route"] = estimate.get("audio_route", "hidden")
        lines.append(line)
    return lines


# ----- build side ---------------------------------------------------------------------------------------
def write_admission_record(
    writer: ReleaseWriter,
    ws: Workspace,
    version: str,
    inputs: StatusInputs,
    statuses: Sequence[ItemStatus],
    released: Sequence[str],
    dropped: Mapping[str, list[str]],
    rejected: bool = True,
) -> dict[str, Any]:
    """Write ``admission/`` for the released items; returns what the card and Croissant say about it."""
    policy: Callable[[str], str] = ws.settings.gates.mode
    d = build_state.derivation(ws, inputs)
    pseudonym = Pseudonyms(workspace_key(ws.root), version)
    named_authors = ws.settings.release.authors == "named"
    shipped = set(released)
    groups = {i.group for i in inputs.items if i.id in shipped}
    units = [i for i in inputs.items if i.group in groups]
    unit_ids = {i.id for i in units}
    subjects = {f"item:{i}" for i in unit_ids} | {f"group:{g}" for g in groups}
    records = sorted((r for r in inputs.records if r.subject in subjects), key=lambda r: r.id)
    with ws.session() as s:
        created = dict(
            s.execute(
                select(col(ReviewRecord.id), col(ReviewRecord.created_at)).where(
                    col(ReviewRecord.subject).in_(sorted(subjects))
                )
            ).all()
        )
        seen = exposures(s, sorted(unit_ids))
    unit_rows = [_unit_row(i, inputs.perturbed, pseudonym, named_authors, shipped) for i in units]
    record_rows = [_record_row(r, pseudonym, created.get(r.id)) for r in records]
    exposure_rows = [
        {"item": item_id, "person": pseudonym(e.person), "via": exposure_code(e), "at": _at(e.at)}
        for item_id in sorted(seen)
        for e in seen[item_id]
    ]
    decisions = sorted((x for x in inputs.decisions if x.item_id in unit_ids), key=lambda x: (x.created_at, x.id or 0))
    gate_rows = sorted((g for g in inputs.gates if g.item_id in unit_ids), key=lambda g: (g.item_id, g.gate))
    probes = [
        line
        for g in gate_rows
        if g.gate == "probe" and g.item_id in shipped and (g.details or {}).get("result")
        for line in probe_replay_lines(g.item_id, g.details["result"])  # type: ignore[index]
    ]
    probe_details = next((g.details for g in gate_rows if g.gate == "probe" and g.details), None) or {}
    outcomes = unit_outcomes(d, statuses, unit_ids)
    rules = ws.settings.review.exclusion_rules  # each released item's attestations on each rule, if any rule
    excluded = exclusion_rows(d, shipped, pseudonym)
    settings = {
        "format": FORMAT,
        "platform": {"name": "omnicurate", "version": platform_version()},
        "kind": units[0].kind if units else "mcq",
        "review": ws.settings.review.model_dump(mode="json"),
        "agreement": ws.settings.agreement.model_dump(mode="json"),
        "gate_modes": {gate: policy(gate) for gate in sorted({g.gate for g in gate_rows} | {"probe"})},
        "checker": {
            "backend": probe_details.get("backend"),
            "model": probe_details.get("model"),
            "estimator": probe_details.get("estimator"),
            "replay": FILES["probes"],
        },
        "pseudonyms": RULE,
        "authors": "named (author_name)" if named_authors else "pseudonymous",
        "rejected": "included" if rejected else "left out by the maintainer",
        "files": {
            FILES[k]: v
            for k, v in DESCRIPTIONS.items()
            if k not in ("rejected", "tasks", "exclusions")
            or (rejected and k == "rejected")
            or (rules and k == "exclusions")
        },
    }
    writer.write_json(FILES["settings"], settings)
    writer.write_bytes(FILES["units"], jsonl_bytes(unit_rows))
    writer.write_bytes(FILES["records"], jsonl_bytes(record_rows))
    writer.write_bytes(
        FILES["decisions"],
        jsonl_bytes(
            {
                "id": x.id,
                "item": x.item_id,
                "kind": x.kind,
                "stage": x.stage,
                "verdict": x.verdict,
                "revision": x.revision,
                "reason": x.reason,
                "by": pseudonym(x.actor),
                "at": _at(x.created_at),
            }
            for x in decisions
        ),
    )
    writer.write_bytes(
        FILES["gates"],
        jsonl_bytes(
            {
                "item": g.item_id,
                "gate": g.gate,
                "content_hash": g.content_hash,
                "reasons": list(g.reasons),
                "mode": policy(g.gate),
                "verdict": ((g.details or {}).get("result") or {}).get("verdict") if g.gate == "probe" else None,
            }
            for g in gate_rows
        ),
    )
    writer.write_bytes(FILES["exposures"], jsonl_bytes(exposure_rows))
    writer.write_bytes(FILES["outcomes"], jsonl_bytes(outcomes[i] for i in sorted(outcomes)))
    attestations = attest(unit_rows, record_rows, exposure_rows)
    writer.write_bytes(FILES["attestations"], jsonl_bytes(attestations))
    writer.write_bytes(FILES["probes"], jsonl_bytes(probes))
    if rules:
        writer.write_bytes(FILES["exclusions"], jsonl_bytes(excluded))
    if rejected:
        rows = [
            {"id": st.id, "group": st.group, "state": st.state, "stage": st.stage, "reasons": st.reasons}
            for st in statuses
            if st.id not in shipped
        ]
        for row in rows:
            if row["id"] in dropped:
                row["state"], row["reasons"] = "dropped_by_gates", list(dropped[row["id"]])
        writer.write_bytes(FILES["rejected"], jsonl_bytes(rows))
    return {
        "units": len(unit_rows),
        "records": len(record_rows),
        "attested": sum(a["blind"] for a in attestations),
        "not_attested": sorted({a["item"] for a in attestations if not a["blind"]}),
        "rejected": rejected,
        "authors": settings["authors"],
        "exclusions": exclusion_summary(rules, excluded),
    }


def _unit_row(
    item: ItemFacts, perturbed: Mapping[str, str], pseudonym: Pseudonyms, named: bool, released: set[str]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": item.id,
        "group": item.group,
        "perturbed": perturbed.get(item.group, ""),
        "kind": item.kind,
        "modalities": list(item.modalities),
        "author": pseudonym(item.author),
        "revision": item.revision,
        "context": item.context,
        "question": item.question,
        "options": dict(item.options),
        "answer": item.answer,
        "image": item.image,
        "audio": item.audio,
        "audio_source": item.audio_source,
        "image_source": item.image_source,
        "extra": dict(item.extra),
        "content_hash": item.content_hash,
        "released": item.id in released,
    }
    if named:
        row["author_name"] = item.author
    return row


def _record_row(r: RecordFacts, pseudonym: Pseudonyms, created: datetime | None) -> dict[str, Any]:
    payload = dict(r.payload)
    if isinstance(payload.get("from"), str):  # an adjudication consensus names the reviewer it was taken from
        payload["from"] = pseudonym(payload["from"])
    return {
        "id": r.id,
        "subject": r.subject,
        "stage": r.stage,
        "reviewer": pseudonym(r.reviewer),
        "revision": r.revision,
        "inputs_hash": r.inputs_hash,
        "payload": payload,
        "at": _at(created),
    }


# ----- what the card and Croissant say ----------------------------------------------------------------
RECORD_SET_FIELDS = {
    "units": [("id", "sc:Text"), ("group", "sc:Text"), ("author", "sc:Text"), ("content_hash", "sc:Text")],
    "records": [
        ("id", "sc:Integer"),
        ("subject", "sc:Text"),
        ("stage", "sc:Text"),
        ("reviewer", "sc:Text"),
        ("inputs_hash", "sc:Text"),
        ("at", "sc:Text"),
    ],
    "outcomes": [("id", "sc:Text"), ("state", "sc:Text")],
    "attestations": [("item", "sc:Text"), ("record", "sc:Integer"), ("reviewer", "sc:Text"), ("blind", "sc:Boolean")],
    "exposures": [("item", "sc:Text"), ("person", "sc:Text"), ("via", "sc:Text"), ("at", "sc:Text")],
    "rejected": [("id", "sc:Text"), ("state", "sc:Text"), ("reasons", "sc:Text")],
    "exclusions": EXCLUSIONS_FIELDS,
}


def card_lines(summary: Mapping[str, Any] | None) -> list[str]:
    """The dataset card's section on the admission record."""
    if summary is None:
        return []
    if summary.get("kind") == "judge_task":
        return _judge_card_lines(summary)
    not_attested = summary["not_attested"]
    return [
        "### Admission record",
        "",
        f"`admission/` holds why each item was admitted: {summary['units']} unit(s) (released items and their "
        f"scene-group sisters) and {summary['records']} review record(s) as the derivation used them, maintainers' "
        "decisions, gate results, exposures, each stage's derived outcome and the probe outputs as a replay file "
        "(`admission/probes.jsonl`). Anyone re-derives every verdict from this folder alone with "
        "`curate release reproduce DIR`.",
        "",
        f"People: reviewers and maintainers appear under per-release pseudonyms; authors are {summary['authors']}. "
        f"Rule: {RULE}.",
        "",
        f"Blind attestations (`admission/attestations.jsonl`): {summary['attested']} blind check(s) attested "
        "(no exposure of the checker to the label before answering); "
        + (f"not attested for {', '.join(not_attested)}." if not_attested else "none without attestation."),
        "",
        "Items not released: "
        + (
            f"listed with their state and reasons in `{summary.get('rejected_file', FILES['rejected'])}`."
            if summary["rejected"]
            else "left out of this release by the maintainer (`--no-rejected`)."
        ),
        "",
    ]


def _judge_card_lines(summary: Mapping[str, Any]) -> list[str]:
    """A judge release's record is per task (``exports.judge_admission``): no units, exposures or probes."""
    return [
        "### Admission record",
        "",
        f"`{summary['rejected_file']}` holds why each task's checklist is final: for {summary['units']} task(s), "
        f"each marked `released` or not, the drafted candidates, {summary['records']} checklist record(s) "
        "(curation, cross-check, adjudication) and the checklist they derive. Anyone re-derives every checklist "
        "from this folder alone with `curate release reproduce DIR`.",
        "",
        "People: the records' reviewers and adjudicators appear under per-release pseudonyms (rule: "
        f"{RULE}); an entry a person rewrote or added names that person's pseudonym in its provenance "
        "(`provenance.person`, in data/checklists.jsonl too).",
        "",
        "Tasks not released: "
        + (
            f"listed with their records in `{summary['rejected_file']}`."
            if summary["rejected"]
            else "left out of this release by the maintainer (`--no-rejected`)."
        ),
        "",
    ]


def croissant_parts(entries: Iterable[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Croissant FileObjects for the admission files and RecordSets for the JSON Lines among them."""
    present = {e.path: e for e in entries if e.path.startswith(f"{FOLDER}/")}
    files, sets = [], []
    for key, path in FILES.items():
        entry = present.get(path)
        if entry is None:
            continue
        files.append(
            {
                "@type": "cr:FileObject",
                "@id": path,
                "name": path,
                "description": DESCRIPTIONS[key],
                "contentUrl": path,
                "contentSize": f"{entry.size} B",
                "encodingFormat": "application/json" if path.endswith(".json") else "application/jsonlines",
                "sha256": entry.sha256,
            }
        )
        if key in RECORD_SET_FIELDS:
            sets.append(
                {
                    "@type": "cr:RecordSet",
                    "@id": f"admission-{key}",
                    "name": f"admission-{key}",
                    "description": DESCRIPTIONS[key],
                    "field": [
                        {
                            "@type": "cr:Field",
                            "@id": f"admission-{key}/{name}",
                            "name": name,
                            "dataType": dtype,
                            "source": {"fileObject": {"@id": path}, "extract": {"column": name}},
                            **({"isArray": True, "arrayShape": "-1"} if name == "reasons" else {}),
                        }
                        for name, dtype in RECORD_SET_FIELDS[key]
                    ],
                }
            )
    return files, sets


def contradicted_attestations(folder: Path) -> list[tuple[str, str]]:
    """``release verify``'s check of the blind statements against the released records: each attestation of
    blindness whose reviewer, by the released units, records and exposures, knew the label before answering."""
    try:
        units = [u for _, u in read_lines(folder, FILES["units"])]
        records = [r for _, r in read_lines(folder, FILES["records"])]
        shown = [e for _, e in read_lines(folder, FILES["exposures"])]
        stated = read_lines(folder, FILES["attestations"])
        derived = {(a["item"], a["record"]): a for a in attest(units, records, shown)}
    except ValidationFailed as exc:  # each damaged line by file and line
        return [
            (f"{p.file}:{p.line}" if p.line else p.file, ": ".join(x for x in (p.field, p.message) if x))
            for p in exc.problems
        ]
    except (CurateError, KeyError, TypeError, ValueError) as exc:
        return [(FILES["attestations"], f"the admission record cannot be read: {exc}")]
    out = []
    for n, a in stated:
        mine = derived.get((a.get("item"), a.get("record")))
        if mine is None:
            out.append(
                (
                    f"{FILES['attestations']}:{n}",
                    f"{a.get('item')}: record {a.get('record')} is no blind check of a released unit",
                )
            )
        elif a.get("blind") and not mine["blind"]:
            how = ", ".join(e["via"] for e in mine["exposed_by"])
            out.append(
                (
                    f"{FILES['attestations']}:{n}",
                    f"{a['item']}: attested blind, but {mine['reviewer']} knew the label before answering ({how})",
                )
            )
    return out
