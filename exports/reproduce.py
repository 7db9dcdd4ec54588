"""`curate release reproduce DIR`: re-derive every admission from a release folder alone.

The release's ``admission/`` files are turned back into the derivation's inputs (item facts, review records,
decisions, gate results) and run through the platform's own derivation (``curation.workflow.Derivation``) under
the rule settings the release names; the agreement figures through the same report functions; the checker's
verdicts through ``replay:`` on the released probe outputs. Every difference names the file and line it
concerns, so a record changed after the build (even with the manifest's hashes fixed up) is found.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from curation.agreement.review_agreement import ReviewedItem, agreement_report
from curation.config import AgreementSettings, ReviewSettings
from curation.errors import CurateError, Problem, ValidationFailed
from curation.facts import ItemFacts, RecordFacts
from curation.kinds import kind_of
from curation.tables import Decision, GateResult
from curation.vocab import OPTION_KEYS
from curation.workflow import Derivation

from .admission_lines import DAMAGED, payload_problems, read_settings
from .admission_record import FILES, Lines, attest, platform_version, read_lines, unit_outcomes
from .exclusions import reproduce_differences as exclusion_differences
from .gates import public_agreement
from .judge_admission import KIND as JUDGE_KIND
from .judge_admission import reproduce_judge

ProbeReplay = Callable[[Path, Sequence[Mapping[str, Any]], str | None], dict[str, str]]
"""(replay file, units, estimator name) -> verdict per unit: ``checker.reproduce.replay_verdicts``."""


@dataclass
class ReproduceReport:
    release: str
    units: int = 0
    records: int = 0
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def as_json(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "ok": self.ok,
            "units": self.units,
            "records": self.records,
            "differences": self.differences,
            "notes": self.notes,
        }


def _when(value: str | None) -> datetime:
    return datetime.min if value is None else datetime.fromisoformat(value)


def _facts(u: Mapping[str, Any]) -> ItemFacts:
    return ItemFacts(
        u["id"],
        u["group"],
        u["author"],
        u["revision"],
        u["context"],
        u["question"],
        dict(u["options"]),
        u["answer"],
        u["image"],
        u["audio"],
        u["audio_source"],
        u["content_hash"],
        u["kind"],
        tuple(u["modalities"]),
        dict(u["extra"]),
        image_source=u["image_source"],
    )


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def reproduce_release(folder: Path, replay: ProbeReplay | None = None) -> ReproduceReport:
    """Re-derive the release's admissions; the report lists every difference (empty: reproduced)."""
    folder = folder.resolve()
    report = ReproduceReport(str(folder))
    settings = read_settings(folder, FILES["settings"])
    built_with = settings.get("platform", {}).get("version")
    if built_with != platform_version():
        report.notes.append(f"built with omnicurate {built_with}; re-derived with {platform_version()}")
    if settings.get("kind") == JUDGE_KIND:
        report.units, report.records = reproduce_judge(folder, report.differences, report.notes)
        return report
    _refuse_damaged_files(folder)
    units = read_lines(folder, FILES["units"])
    records = read_lines(folder, FILES["records"])
    decisions = read_lines(folder, FILES["decisions"])
    gates = read_lines(folder, FILES["gates"])
    outcomes = read_lines(folder, FILES["outcomes"])
    report.units, report.records = len(units), len(records)
    modes = dict(settings.get("gate_modes", {}))
    review = ReviewSettings.model_validate({"exclusion_rules": {}, **settings["review"]})  # older: no rules
    try:
        d = Derivation(
            review,
            [_facts(u) for _, u in units],
            {u["group"]: u["perturbed"] for _, u in units},
            [
                RecordFacts(
                    r["subject"], r["stage"], r["reviewer"], r["revision"], r["inputs_hash"], r["payload"], r["id"]
                )
                for _, r in records
            ],
            [
                Decision(
                    id=x["id"],
                    item_id=x["item"],
                    kind=x["kind"],
                    stage=x["stage"],
                    verdict=x["verdict"],
                    revision=x["revision"],
                    reason=x["reason"],
                    actor=x["by"],
                    created_at=_when(x["at"]),
                )
                for _, x in decisions
            ],
            [
                GateResult(item_id=g["item"], gate=g["gate"], content_hash=g["content_hash"], reasons=g["reasons"])
                for _, g in gates
            ],
            lambda gate: modes.get(gate, "block"),
        )
        derived = unit_outcomes(d, d.derive_all(), [u["id"] for _, u in units])
    except CurateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _damaged(exc, "units, records, decisions or gates", records) from exc
    record_lines: dict[tuple[str, str], list[int]] = defaultdict(list)
    for number, r in records:
        record_lines[(r["subject"], r["stage"])].append(number)
    unit_line = {u["id"]: n for n, u in units}
    group_of = {u["id"]: u["group"] for _, u in units}
    recorded = {o["id"]: (n, o) for n, o in outcomes}
    for item_id, mine in derived.items():
        n, theirs = recorded.get(item_id, (0, None))
        if theirs is None:
            report.differences.append(
                f"{FILES['outcomes']}: {item_id}: no recorded outcome ({FILES['units']}:{unit_line[item_id]})"
            )
            continue
        _compare_unit(report, n, item_id, theirs, mine, record_lines, unit_line, group_of[item_id])
    for item_id in sorted(set(recorded) - set(derived)):
        report.differences.append(f"{FILES['outcomes']}:{recorded[item_id][0]}: {item_id}: an outcome for no unit")
    unit_rows = [u for _, u in units]
    try:
        _check_released(report, folder, unit_rows, derived, unit_line, str(settings.get("kind", "mcq")))
        _check_attestations(report, folder, unit_rows, [r for _, r in records])
        report.differences += exclusion_differences(
            folder, d, [u["id"] for u in unit_rows if u.get("released")], read_lines
        )
        _check_agreement(report, folder, d, settings, unit_rows)
        if replay is not None:
            _check_probes(report, folder, unit_rows, gates, settings, replay)
    except CurateError:
        raise  # already names its file and line
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _damaged(exc, "units, records, exposures, attestations, probes or the unit file", records) from exc
    return report


_LINE_FILES = (
    "units",
    "records",
    "decisions",
    "gates",
    "exposures",
    "outcomes",
    "attestations",
    "probes",
    "exclusions",
)
"""The admission files re-derivation reads line by line, in the order their problems are listed."""


def _refuse_damaged_files(folder: Path) -> None:
    """Every damaged line of every admission file at once (``FILE:LINE``), not only the first damaged file's: a
    person repairing a release sees all there is to repair. A file the release lacks is left to the reader that
    needs it (an older release has no exclusions file)."""
    problems: list[Problem] = []
    for key in _LINE_FILES:
        if (folder / FILES[key]).exists():
            try:
                read_lines(folder, FILES[key])
            except ValidationFailed as exc:
                problems += exc.problems
    if problems:
        raise ValidationFailed(problems, DAMAGED)


def _damaged(exc: Exception, files: str, records: Lines) -> ValidationFailed:
    """A damage the line checks let through: a review record's payload its stage's record model refuses (named
    by line), else records that contradict each other (said without a Python repr)."""
    located = payload_problems(records, FILES["records"])
    if located:
        return ValidationFailed(located, DAMAGED)
    what = f"lacks the field {exc.args[0]}" if isinstance(exc, KeyError) and exc.args else str(exc)
    return ValidationFailed(
        [Problem(f"the {files} do not fit together: a record {what}", file=FILES["units"].rsplit("/", 1)[0] + "/")],
        DAMAGED,
    )


def _compare_unit(
    report: ReproduceReport,
    line: int,
    item_id: str,
    theirs: Mapping[str, Any],
    mine: Mapping[str, Any],
    record_lines: Mapping[tuple[str, str], list[int]],
    unit_line: Mapping[str, int],
    group: str,
) -> None:
    where = f"{FILES['outcomes']}:{line}: {item_id}"
    for key in ("state", "stage", "reasons", "overrides"):
        if _canon(theirs.get(key)) != _canon(mine.get(key)):
            report.differences.append(f"{where}: {key}: recorded {theirs.get(key)!r}, re-derived {mine.get(key)!r}")
    stages = set(theirs.get("stages", {})) | set(mine.get("stages", {}))
    for stage in sorted(stages):
        a, b = theirs.get("stages", {}).get(stage), mine.get("stages", {}).get(stage)
        if _canon(a) == _canon(b):
            continue
        lines = [
            f"{FILES['records']}:{n}"
            for subject in (f"item:{item_id}", f"group:{group}")
            for n in record_lines.get((subject, stage), [])
        ]
        behind = ", ".join(lines) or f"no records; the unit is {FILES['units']}:{unit_line.get(item_id)}"
        report.differences.append(f"{where}: stage {stage}: recorded {_canon(a)}, re-derived {_canon(b)} ({behind})")


def _check_released(
    report: ReproduceReport,
    folder: Path,
    units: Sequence[Mapping[str, Any]],
    derived: Mapping[str, Mapping[str, Any]],
    unit_line: Mapping[str, int],
    kind: str,
) -> None:
    """The released units are exactly the admitted units marked released, with the content the units hold
    (the fields the kind's unit file shares with them)."""
    layout = kind_of(kind).release
    unit_file = layout.unit_file if layout is not None and layout.unit_file else "data/items.jsonl"
    shipped = {r.get("id"): (n, r) for n, r in read_lines(folder, unit_file)}
    for u in units:
        where = f"{FILES['units']}:{unit_line[u['id']]}: {u['id']}"
        if u.get("released") and derived[u["id"]]["state"] != "admitted":
            report.differences.append(f"{where}: released, but re-derived {derived[u['id']]['state']!r}")
        if bool(u.get("released")) != (u["id"] in shipped):
            report.differences.append(f"{where}: released={u.get('released')} disagrees with {unit_file}")
        if u["id"] not in shipped:
            continue
        n, row = shipped[u["id"]]
        options = [u["options"][k] for k in OPTION_KEYS[: len(u["options"])]]
        for key, value in (("question", u["question"]), ("answer", u["answer"]), ("options", options)):
            if key in row and _canon(row[key]) != _canon(value):
                report.differences.append(f"{unit_file}:{n}: {u['id']}: {key} differs from {where}")
        if row.get("context") is not None and row["context"] != u["context"]:
            report.differences.append(f"{unit_file}:{n}: {u['id']}: context differs from {where}")


def _check_attestations(
    report: ReproduceReport, folder: Path, units: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]
) -> None:
    """Every blind attestation re-derived from the units, records and exposures; every derived exposure
    (authorship of a sister, a group review) listed in exposures.jsonl."""
    exposures = read_lines(folder, FILES["exposures"])
    stated = {(a["item"], a["record"]): (n, a) for n, a in read_lines(folder, FILES["attestations"])}
    derived = {(a["item"], a["record"]): a for a in attest(units, records, [e for _, e in exposures])}
    for key in sorted(set(stated) | set(derived)):
        n, theirs = stated.get(key, (0, None))
        mine = derived.get(key)
        if _canon(theirs) == _canon(mine):
            continue
        person = (theirs or mine or {}).get("reviewer")
        lines = [f"{FILES['exposures']}:{m}" for m, e in exposures if e["item"] == key[0] and e["person"] == person]
        where = f"{FILES['attestations']}:{n}" if n else FILES["attestations"]
        report.differences.append(
            f"{where}: {key[0]} record {key[1]}: stated {_canon(theirs)}, re-derived {_canon(mine)}"
            + (f" (exposures: {', '.join(lines)})" if lines else "")
        )
    listed = {(e["item"], e["person"], e["via"], e.get("at")) for _, e in exposures}
    group_units: dict[str, list[str]] = defaultdict(list)
    for u in units:
        group_units[u["group"]].append(u["id"])
    expected = {(i, u["author"], "exposed:author", None) for u in units for i in group_units[u["group"]]}
    expected |= {
        (i, r["reviewer"], "exposed:group_review", r.get("at"))
        for r in records
        if r["stage"] == "group_integration"
        for i in group_units.get(r["subject"].removeprefix("group:"), [])
    }
    for item, person, via, at in sorted(expected - listed, key=str):
        report.differences.append(f"{FILES['exposures']}: {item}: {person} ({via}, {at}) is missing")
    for n, e in exposures:
        if e["via"] != "exposed:shown" and (e["item"], e["person"], e["via"], e.get("at")) not in expected:
            report.differences.append(
                f"{FILES['exposures']}:{n}: {e['item']}: {e['via']} of {e['person']} matches no unit or record"
            )


def _check_agreement(
    report: ReproduceReport,
    folder: Path,
    d: Derivation,
    settings: Mapping[str, Any],
    units: Sequence[Mapping[str, Any]],
) -> None:
    """The agreement figures of stats.json, recomputed from the records that counted, by the same reports."""
    if not (folder / "stats.json").exists():
        return  # a kind whose release publishes no agreement figures (a listed file gone is verify's finding)
    try:
        stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report.differences.append("stats.json: missing or not JSON")
        return
    if not stats.get("agreement"):
        return
    shipped = {r["id"]: r for _, r in read_lines(folder, "data/items.jsonl")}
    facts = {i.id: i for i in d.items}
    statuses = {st.id: st for st in d.derive_all()}
    items = []
    for u in units:
        if not u.get("released"):
            continue
        item, row = facts[u["id"]], shipped.get(u["id"], {})
        stages = {s.name: s for s in d.kind(item).item_stages}
        by_stage = {
            name: [(r.reviewer, r.payload) for r in d.valid_records(item, stages[name])]
            for name in ("audio_signoff", "subset_checklist", "answer_check")
            if name in stages
        }
        consensus = "subset_checklist" in stages and d.consensus(item, "subset_checklist") is not None
        items.append(
            ReviewedItem(
                id=item.id,
                group=item.group,
                author=item.author,
                answer=item.answer,
                options=tuple(sorted(item.options)),
                taxonomy={k.removeprefix("taxonomy_"): v for k, v in row.items() if k.startswith("taxonomy_") and v},
                records=by_stage,
                adjudicated=frozenset(d.overrides(item.id)) | ({"subset_checklist"} if consensus else set()),
                held_for=tuple(r for r in statuses[item.id].reasons if r == "checklist:disagreement"),
                ambiguous=tuple(row.get("ambiguous") or ()),
                perturbed=u["perturbed"],
            )
        )
    agreement = AgreementSettings.model_validate(settings.get("agreement", {}))
    review = ReviewSettings.model_validate(settings["review"])
    mine = json.loads(
        json.dumps(
            public_agreement(
                agreement_report(
                    items,
                    subset_size=agreement.audit_subset,
                    subset_seed=agreement.audit_seed,
                    min_mean=review.audio_min_mean,
                )
            )
        )
    )
    for key in sorted(set(mine) | set(stats["agreement"])):
        if _canon(mine.get(key)) != _canon(stats["agreement"].get(key)):
            report.differences.append(
                f"stats.json: agreement.{key}: recorded {_canon(stats['agreement'].get(key))[:200]}, "
                f"recomputed {_canon(mine.get(key))[:200]}"
            )


def _check_probes(
    report: ReproduceReport,
    folder: Path,
    units: Sequence[Mapping[str, Any]],
    gates: Lines,
    settings: Mapping[str, Any],
    replay: ProbeReplay,
) -> None:
    """The checker's verdicts from the released probe outputs, against the probe gate results."""
    probe_rows = {g["item"]: (n, g) for n, g in gates if g["gate"] == "probe"}
    if not probe_rows:
        return
    path = folder / FILES["probes"]
    lines: dict[str, list[int]] = defaultdict(list)
    for n, p in read_lines(folder, FILES["probes"]):
        lines[str(p.get("item"))].append(n)
    released = [u for u in units if u.get("released") and u["id"] in probe_rows]
    verdicts = replay(path, released, settings.get("checker", {}).get("estimator"))
    for u in released:
        n, row = probe_rows[u["id"]]
        mine = verdicts.get(u["id"])
        expected = [] if mine == "well_posed" else [f"probe:{mine}"]
        if mine != row.get("verdict") or row.get("reasons") != expected:
            behind = ", ".join(f"{FILES['probes']}:{m}" for m in lines.get(u["id"], [])) or "no probe lines"
            report.differences.append(
                f"{FILES['gates']}:{n}: {u['id']}: probe verdict recorded {row.get('verdict')!r} "
                f"(reasons {row.get('reasons')}), re-derived {mine!r} from {behind}"
            )
