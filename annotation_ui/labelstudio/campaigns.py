"""Rating campaigns over model outputs (Omni-StoryBench App. F.5; Judge Anything §2.3), served through Label Studio.

A campaign rates outputs, not benchmark items: one task per output (``rating``: each criterion on 1..N), or
one per pair of systems on an item (``pairwise``: A, B or tie, the sides drawn with a recorded seed and
stored). Raters are people of the workspace, matched by e-mail. A redundancy target per unit (default 2)
is set as the project's overlap and reported as coverage; skips are kept as skips.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import os
import random
import uuid
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator
from sqlalchemy import select

from curation.errors import MediaError, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.media import inspect_audio, inspect_image, safe_media_path, sha256_file
from curation.schema import Identifier
from curation.tables import utcnow
from curation.workspace import Workspace, record_event

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import audio_html, image_html
from .projects import UNKNOWN_TASK, AnnotationOutcome
from .pulling import PullCounts, RatingPull, Seen, Verdict
from .pushing import PushReport, TaskSpec
from .results import Control
from .tables import Campaign, CampaignOutput, CampaignRating, CampaignUnit, LsProject

PRESETS: dict[str, tuple[tuple[str, ...], int]] = {
    # Omni-StoryBench App. F.5: the four rubric categories of the automated judges, on 1-10.
    "storybench": (("metadata_alignment", "continuity", "condition_compliance", "ground_truth_consistency"), 10),
    # Judge Anything: one overall score on 1-5.
    "judge-anything": (("score",), 5),
}
PAIR_CHOICES = ("A", "B", "tie")


class OutputLine(BaseModel):
    """One line of ``--outputs``: a system's output for a benchmark item (text, image and/or audio)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    system: Identifier
    item: Identifier
    prompt: str = ""
    text: str | None = None
    image: str | None = None
    audio: str | None = None

    @model_validator(mode="after")
    def _has_output(self) -> OutputLine:
        if not (self.text or self.image or self.audio):
            raise ValueError("an output needs at least one of text, image, audio")
        return self


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    kind: Literal["rating", "pairwise"]
    criteria: tuple[str, ...]
    scale_max: int
    redundancy: int = 2
    seed: int = 0


def campaign_spec(
    name: str,
    kind: str,
    preset: str = "storybench",
    criteria: list[str] | None = None,
    scale_max: int | None = None,
    redundancy: int = 2,
    seed: int = 0,
) -> CampaignSpec:
    """Check the campaign's settings; criteria and scale default to the preset's."""
    problems: list[Problem] = []
    if not name or len(name) > 200 or not all(c.isalnum() or c in "._-" for c in name):
        problems.append(Problem("a campaign name uses letters, digits, '.', '_' and '-'", "name"))
    if kind not in ("rating", "pairwise"):
        problems.append(Problem(f"unknown kind {kind!r}; use rating or pairwise", "kind"))
    if preset not in PRESETS:
        problems.append(Problem(f"unknown preset {preset!r}; presets are {', '.join(PRESETS)}", "preset"))
    default_criteria, default_max = PRESETS.get(preset, PRESETS["storybench"])
    chosen = tuple(criteria) if criteria else default_criteria
    for c in chosen:
        if not c or not c[0].isalpha() or not c.islower() or not all(x.isalnum() or x == "_" for x in c) or len(c) > 40:
            problems.append(Problem(f"criterion {c!r}: use lower-case letters, digits and '_' (a-z first)", "criteria"))
    if len(set(chosen)) != len(chosen):
        problems.append(Problem("a criterion is listed twice", "criteria"))
    top = scale_max if scale_max is not None else default_max
    if not 2 <= top <= 10:
        problems.append(Problem(f"scale 1–{top}: Label Studio's rating runs from 1 to at most 10", "scale"))
    if redundancy < 1:
        problems.append(Problem("the redundancy target is at least 1 rating per unit", "redundancy"))
    if problems:
        raise ValidationFailed(problems, "campaign not created")
    return CampaignSpec(name, kind, chosen, top, redundancy, seed)  # type: ignore[arg-type]


# ----- create -------------------------------------------------------------------------------------
def _store_blob(ws: Workspace, path: Path, kind: str) -> str:
    """Decode the file (refusing what is not image/audio), copy it into the media store, return its blob name."""
    sha = sha256_file(path)
    media = ws.settings.media
    info = (
        inspect_image(path, sha, media.max_image_pixels)
        if kind == "image"
        else inspect_audio(path, sha, max_seconds=media.max_audio_seconds)
    )
    target = ws.media.path(sha, info.ext)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.parent / f".{sha}.{uuid.uuid4().hex}"
        try:
            data = path.read_bytes()
            temporary.write_bytes(data)
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)
    return f"{sha}{info.ext}"


def second_output(seen: dict[tuple[str, str], int], item: str, system: str, number: int, file: str) -> Problem | None:
    """The problem when ``system``'s output for ``item`` stood on an earlier line; else this line is remembered."""
    key = (item, system)
    if key in seen:
        return Problem(f"second output of {system!r} for {item!r} (first on line {seen[key]})", "system", number, file)
    seen[key] = number
    return None


def output_media(ws: Workspace, outputs: Path, line: Any, number: int, problems: list[Problem]) -> dict[str, str]:
    """The line's image and audio copied into the media store, by modality; one that cannot be read is a problem
    of its line."""
    blobs: dict[str, str] = {}
    for kind in ("image", "audio"):
        relative = getattr(line, kind)
        if relative:
            try:
                blobs[kind] = _store_blob(ws, safe_media_path(outputs.parent, relative), kind)
            except MediaError as exc:
                problems.append(Problem(str(exc), kind, number, str(outputs)))
    return blobs


def create_campaign(ws: Workspace, spec: CampaignSpec, outputs: Path, actor: str = "cli") -> dict[str, Any]:
    """Read and check every output line, then store the campaign, its outputs and units in one transaction."""
    file = str(outputs)
    problems: list[Problem] = []
    lines: list[tuple[int, OutputLine, dict[str, str]]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, parsed in read_models(outputs, OutputLine, problems):
        twice = second_output(seen, parsed.item, parsed.system, number, file)
        if twice is not None:
            problems.append(twice)
            continue
        blobs = output_media(ws, outputs, parsed, number, problems)
        lines.append((number, parsed, blobs))
    if not lines and not problems:
        problems.append(Problem("no outputs in the file", file=file))
    if spec.kind == "pairwise":
        systems: dict[str, set[str]] = defaultdict(set)
        for _, line, _ in lines:
            systems[line.item].add(line.system)
        problems += [
            Problem(f"item {item!r} has one system ({next(iter(s))}): a pair needs two", "item", file=file)
            for item, s in sorted(systems.items())
            if len(s) < 2
        ]
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; the campaign was not created")

    with ws.writing() as s:
        if s.get(Campaign, spec.name) is not None:
            raise ValidationFailed([Problem(f"campaign {spec.name!r} exists already; choose another name", "name")])
        s.add(
            Campaign(
                name=spec.name,
                kind=spec.kind,
                criteria=list(spec.criteria),
                scale_max=spec.scale_max,
                redundancy=spec.redundancy,
                seed=spec.seed,
                source=outputs.name,
                created_by=actor,
            )
        )
        s.flush()
        rows: dict[tuple[str, str], CampaignOutput] = {}
        for _, line, blobs in lines:
            row = CampaignOutput(
                campaign=spec.name,
                item=line.item,
                system=line.system,
                prompt=line.prompt,
                text=line.text,
                image=blobs.get("image"),
                audio=blobs.get("audio"),
            )
            s.add(row)
            rows[(line.item, line.system)] = row
        s.flush()
        units = _units(spec, rows)
        for unit in units:
            s.add(unit)
        record_event(
            s,
            actor,
            "campaign.created",
            f"campaign:{spec.name}",
            None,
            {
                "kind": spec.kind,
                "criteria": list(spec.criteria),
                "scale_max": spec.scale_max,
                "redundancy": spec.redundancy,
                "seed": spec.seed,
                "outputs": len(rows),
                "units": len(units),
            },
        )
    return {
        "campaign": spec.name,
        "kind": spec.kind,
        "outputs": len(rows),
        "units": len(units),
        "criteria": list(spec.criteria),
        "scale": [1, spec.scale_max],
        "redundancy": spec.redundancy,
        "seed": spec.seed,
    }


def _units(spec: CampaignSpec, rows: dict[tuple[str, str], CampaignOutput]) -> list[CampaignUnit]:
    """One unit per output, or per pair of systems on an item with the shown sides drawn from the seed."""
    if spec.kind == "rating":
        return [
            CampaignUnit(campaign=spec.name, key=f"{item}|{system}", item=item, output_a=row.id)
            for (item, system), row in sorted(rows.items())
        ]
    by_item: dict[str, dict[str, CampaignOutput]] = defaultdict(dict)
    for (item, system), row in rows.items():
        by_item[item][system] = row
    units = []
    for item in sorted(by_item):
        for a, b in itertools.combinations(sorted(by_item[item]), 2):
            draw = random.Random(f"{spec.seed}|{spec.name}|{item}|{a}|{b}")
            left, right = (b, a) if draw.random() < 0.5 else (a, b)
            units.append(
                CampaignUnit(
                    campaign=spec.name,
                    key=f"{item}|{a}|{b}",
                    item=item,
                    output_a=by_item[item][left].id,
                    output_b=by_item[item][right].id,
                )
            )
    return units


# ----- push ---------------------------------------------------------------------------------------
def project_key(name: str) -> str:
    return f"campaign:{name}"


def load_campaign(ws: Workspace, name: str) -> tuple[Campaign, dict[int, CampaignOutput], list[CampaignUnit]]:
    from curation.errors import NotFoundError

    with ws.session() as s:
        campaign = s.get(Campaign, name)
        if campaign is None:
            raise NotFoundError(f"no campaign {name!r}; create it with `curate campaign create {name} --outputs FILE`")
        outputs = {o.id: o for o in s.execute(select(CampaignOutput).where(CampaignOutput.campaign == name)).scalars()}
        units = list(
            s.execute(select(CampaignUnit).where(CampaignUnit.campaign == name).order_by(CampaignUnit.id)).scalars()
        )
    return campaign, outputs, units  # type: ignore[return-value]


def label_config(campaign: Campaign) -> str:
    if campaign.kind == "pairwise":
        return (
            '<View><Header value="Which output is better? Judge the content, not which side it is on."/>'
            '<HyperText name="prompt" value="$prompt"/>'
            '<View style="display:flex;gap:1em">'
            '<View style="flex:1"><Header value="A" size="4"/><HyperText name="output_a" value="$output_a"/></View>'
            '<View style="flex:1"><Header value="B" size="4"/><HyperText name="output_b" value="$output_b"/></View>'
            "</View>"
            '<Choices name="preference" toName="output_a" choice="single-radio" required="true" showInline="true">'
            + "".join(f'<Choice value="{c}"/>' for c in PAIR_CHOICES)
            + "</Choices></View>"
        )
    ratings = "".join(
        f'<Header value="{html.escape(c.replace("_", " "))} (1–{campaign.scale_max})" size="5"/>'
        f'<Rating name="{c}" toName="output" maxRating="{campaign.scale_max}" required="true"/>'
        for c in campaign.criteria
    )
    return f'<View><HyperText name="prompt" value="$prompt"/><HyperText name="output" value="$output"/>{ratings}</View>'


def controls(campaign: Campaign) -> dict[str, Control]:
    if campaign.kind == "pairwise":
        return {"preference": Control("choices", required=True, choices=PAIR_CHOICES)}
    return {c: Control("rating", required=True, max_rating=campaign.scale_max) for c in campaign.criteria}


def _output_html(connection: Connection, output: CampaignOutput) -> str:
    parts = []
    if output.text:
        parts.append(f"<p>{html.escape(output.text)}</p>")
    if output.image:
        parts.append(image_html(connection, output.image, 480))
    if output.audio:
        parts.append(audio_html(connection, output.audio))
    return "".join(parts)


def wanted_tasks(
    connection: Connection, campaign: Campaign, outputs: dict[int, CampaignOutput], units: list[CampaignUnit]
) -> list[TaskSpec]:
    """One task per unit; the data shows no system name."""
    specs = []
    for unit in units:
        first = outputs[unit.output_a]
        shown = [first] if unit.output_b is None else [first, outputs[unit.output_b]]
        data = {"prompt": f"<p>{html.escape(first.prompt)}</p>" if first.prompt else ""}
        if unit.output_b is None:
            data["output"] = _output_html(connection, first)
        else:
            data["output_a"] = _output_html(connection, shown[0])
            data["output_b"] = _output_html(connection, shown[1])
        inputs = hashlib.sha256(repr([(o.id, o.text, o.image, o.audio) for o in shown]).encode()).hexdigest()
        specs.append(
            TaskSpec(
                ref=f"campaign|{campaign.name}|u{unit.id}",
                subject=f"unit:{unit.id}",
                inputs_hash=inputs,
                data=data,
                media=tuple(b for o in shown for b in (o.image, o.audio) if b),
            )
        )
    return specs


class CampaignProject(ProjectKind):
    """A rating campaign's project: one task per unit; a vote is one rater's evaluation of one unit."""

    annotator = "rater"

    def __init__(self, ws: Workspace, name: str) -> None:
        self.name = name
        self.campaign, self.outputs, self.units = load_campaign(ws, name)
        self.unit_keys = {u.id: u.key for u in self.units}
        self.key = project_key(name)
        self.title = f"{ws.root.name}: campaign {name}"
        self.quorum = self.campaign.redundancy
        self.push_hint = f"run `curate campaign push {name}` first"

    def label_config(self) -> str:
        return label_config(self.campaign)

    def controls(self) -> dict[str, Control]:
        return controls(self.campaign)

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        return wanted_tasks(connection, self.campaign, self.outputs, self.units)

    def locate(self, seen: Seen) -> str:
        return "" if seen.row is not None and _unit_id(seen.row.subject) in self.unit_keys else UNKNOWN_TASK

    def admit(self, seen: Seen) -> Hashable:
        assert seen.row is not None
        return (_unit_id(seen.row.subject), seen.person)

    def new_report(self, project: LsProject) -> RatingPull:
        return RatingPull(about={"campaign": self.name}, label=f"campaign {self.name}")

    def refusal(self, outcome: AnnotationOutcome) -> dict[str, Any]:
        unit = self.unit_keys.get(_unit_id(outcome.subject) or -1, outcome.subject)
        return {
            "annotation": outcome.annotation,
            "task": outcome.task,
            "unit": unit,
            "user": outcome.user,
            "reason": outcome.reason,
        }

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        """Store each rater's deciding evaluation per unit in one transaction; a skip never replaces a rating,
        and a rating no annotation backs any more (deleted, or edited and refused) is withdrawn."""
        name, pairwise = self.name, self.campaign.kind == "pairwise"
        deciding: dict[tuple[int, str], Verdict] = {**pulled.skips, **pulled.votes}  # type: ignore[dict-item]
        with ws.writing() as s:
            existing = {
                (r.unit_id, r.rater): r
                for r in s.execute(select(CampaignRating).where(CampaignRating.campaign == name)).scalars()
            }
            for (unit_id, rater), v in sorted(deciding.items()):
                skipped = v.values is None
                values = v.values or {}
                scores = None if skipped or pairwise else dict(values)
                choice = values["preference"][0] if not skipped and pairwise else None
                after = {"unit": unit_id, "skipped": skipped, "scores": scores, "choice": choice}
                row = existing.pop((unit_id, rater), None)
                if row is None:
                    s.add(
                        CampaignRating(
                            campaign=name,
                            unit_id=unit_id,
                            rater=rater,
                            annotation_id=v.seen.annotation,
                            skipped=skipped,
                            scores=scores,
                            choice=choice,
                            annotation_updated_at=v.seen.updated_at,
                        )
                    )
                    action = "campaign.skipped" if skipped else "campaign.rating_recorded"
                    record_event(s, rater, action, f"campaign:{name}", None, after)
                    report.recorded += 0 if skipped else 1
                elif (row.skipped, row.scores, row.choice) == (skipped, scores, choice):
                    report.unchanged += 1
                else:
                    before = {"unit": unit_id, "skipped": row.skipped, "scores": row.scores, "choice": row.choice}
                    row.annotation_id, row.skipped, row.scores, row.choice = v.seen.annotation, skipped, scores, choice
                    row.annotation_updated_at, row.updated_at = v.seen.updated_at, utcnow()
                    s.add(row)
                    record_event(s, rater, "campaign.rating_replaced", f"campaign:{name}", before, after)
                    report.replaced += 1
            for (unit_id, rater), row in sorted(existing.items()):  # no annotation of the rater backs it any more
                before = {"unit": unit_id, "skipped": row.skipped, "scores": row.scores, "choice": row.choice}
                s.delete(row)
                why = "its annotation was deleted in Label Studio, or edited and refused"
                record_event(
                    s, rater, "campaign.rating_withdrawn", f"campaign:{name}", before, {"unit": unit_id, "reason": why}
                )
                report.withdrawn += 1
        return [v.seen.outcome("recorded") for v in pulled.votes.values()]


def _unit_id(subject: str) -> int | None:
    kind, _, ident = subject.partition(":")
    return int(ident) if kind == "unit" and ident.isdigit() else None


def push_campaign(ws: Workspace, connection: Connection, name: str, recreate: bool = False) -> PushReport:
    return push(ws, connection, CampaignProject(ws, name), recreate)


def pull_campaign(ws: Workspace, connection: Connection, name: str) -> PullCounts:
    """Validate every annotation and store each rater's deciding evaluation per unit (see ``CampaignProject``)."""
    (report,) = pull(ws, connection, [CampaignProject(ws, name)])
    return report
