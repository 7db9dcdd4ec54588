"""The human study of a story release (Omni-StoryBench App. F.5) as a Label Studio rating campaign.

The study is a rating campaign of the same name: one unit per (transition, system, track), rated on the
judges' four rubric categories (1–10). Each task shows the current page, the reference next page (with its
speech target) and the system's output for the track side by side, above the book metadata and next-page
conditions the criteria refer to; it never shows which system made the output. Pulling is the campaign's
pull (every annotation validated against the labeling config); the report is the domain's.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import CheckFailed, MediaError, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.media import safe_media_path
from curation.study.agreement import Evaluation
from curation.study.lines import OutputLine
from curation.study.release import WINDOW_SIZE, choose_window, read_release
from curation.study.rubric import CRITERIA, GUIDANCE, QUESTIONS, SCALE, TRACKS, tracks_of
from curation.study.study import judge_scores, load_study, study_report
from curation.study.tables import StoryStudy
from curation.workspace import Workspace, record_event

from .campaigns import CampaignProject, _store_blob, campaign_spec, load_campaign, output_media, second_output
from .connection import Connection
from .engine import pull, push
from .media import audio_html, image_html
from .pulling import PullCounts
from .pushing import PushReport, TaskSpec
from .tables import Campaign, CampaignOutput, CampaignRating, CampaignUnit

SOURCE_PREFIX = "story-study:"
TRACK_TITLES = {
    "text": "Text track: rate the generated next-page narration",
    "image": "Image track: rate the generated next-scene illustration",
    "speech": "Speech track: rate the generated speech",
    "integrated": "Integrated track: rate the generated page as a whole (narration, illustration and speech together)",
}


def _page_snapshot(ws: Workspace, release_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    """A window transition as raters see it, its two images copied into the media store (hash checked)."""
    shown: dict[str, Any] = {
        k: record[k] for k in ("current_text", "next_text", "book_meta", "conditions", "speech", "title")
    }
    for side in ("current_image", "next_image"):
        relative = record[side]
        try:
            blob = _store_blob(ws, safe_media_path(release_dir, relative), "image")
        except MediaError as exc:
            raise CheckFailed(f"{release_dir}: transition {record['id']}: {exc}") from None
        if Path(relative).stem != Path(blob).stem:
            raise CheckFailed(
                f"{release_dir / relative} does not match the SHA-256 in its name; run `curate release verify`"
            )
        shown[side] = blob
    return shown


def create_study(
    ws: Workspace,
    name: str,
    release_dir: Path,
    outputs: Path,
    size: int = WINDOW_SIZE,
    seed: int = 0,
    chosen: tuple[str, ...] = (),
    tracks: tuple[str, ...] = TRACKS,
    redundancy: int = 2,
    actor: str = "cli",
) -> dict[str, Any]:
    """Fix the window, check every output line, then store the study and its campaign in one transaction."""
    spec = campaign_spec(name, "rating", preset="storybench", redundancy=redundancy, seed=seed)
    bad_tracks = [t for t in tracks if t not in TRACKS]
    if bad_tracks or not tracks or len(set(tracks)) != len(tracks):
        raise ValidationFailed([Problem(f"tracks are distinct ones of {', '.join(TRACKS)}", "track")])
    release = read_release(release_dir)
    window = choose_window(release, size, seed, chosen)
    in_window = set(window)
    file = str(outputs)
    problems: list[Problem] = []
    accepted: list[tuple[OutputLine, dict[str, str], list[str]]] = []
    seen: dict[tuple[str, str], int] = {}
    outside = 0
    for number, line in read_models(outputs, OutputLine, problems):
        if line.transition not in release.records:
            problems.append(
                Problem(f"{line.transition!r} is not a transition of {release.label}", "transition", number, file)
            )
            continue
        if line.transition not in in_window:
            outside += 1
            continue
        twice = second_output(seen, line.transition, line.system, number, file)
        if twice is not None:
            problems.append(twice)
            continue
        blobs = output_media(ws, outputs, line, number, problems)
        rated = tracks_of(line.modalities, tracks)
        if not rated:
            problems.append(
                Problem(
                    f"the output ({', '.join(sorted(line.modalities))}) fits none of the tracks {', '.join(tracks)}",
                    "system",
                    number,
                    file,
                )
            )
        accepted.append((line, blobs, rated))
    if not accepted and not problems:
        problems.append(Problem(f"no output for a transition of the window ({', '.join(window)})", file=file))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s); study {name!r} was not created")
    pages = {t: _page_snapshot(ws, release_dir, release.records[t]) for t in window}
    systems = sorted({line.system for line, _, _ in accepted})
    with ws.writing() as s:
        if s.get(StoryStudy, name) is not None or s.get(Campaign, name) is not None:
            raise ValidationFailed(
                [Problem(f"a study or campaign {name!r} exists already; choose another name", "name")]
            )
        s.add(
            StoryStudy(
                name=name,
                release_name=release.name,
                release_version=release.version,
                manifest_sha256=release.manifest_sha256,
                seed=None if chosen else seed,
                window=window,
                transitions=list(release.records),
                tracks=list(tracks),
                systems=systems,
                pages=pages,
                created_by=actor,
            )
        )
        s.add(
            Campaign(
                name=name,
                kind="rating",
                criteria=list(CRITERIA),
                scale_max=SCALE[1],
                redundancy=spec.redundancy,
                seed=seed,
                source=f"{SOURCE_PREFIX}{release.label}",
                created_by=actor,
            )
        )
        s.flush()
        rows = []
        for line, blobs, rated in sorted(accepted, key=lambda a: (a[0].transition, a[0].system)):
            row = CampaignOutput(
                campaign=name,
                item=line.transition,
                system=line.system,
                text=line.text,
                image=blobs.get("image"),
                audio=blobs.get("audio"),
            )
            s.add(row)
            rows.append((row, rated))
        s.flush()
        units = 0
        for row, rated in rows:
            for track in rated:
                s.add(
                    CampaignUnit(campaign=name, key=f"{row.item}|{row.system}|{track}", item=row.item, output_a=row.id)
                )
                units += 1
        summary = {
            "study": name,
            "release": release.label,
            "window": window,
            "seed": None if chosen else seed,
            "tracks": list(tracks),
            "systems": systems,
            "outputs": len(rows),
            "units": units,
            "outside_window": outside,
            "redundancy": spec.redundancy,
        }
        record_event(s, actor, "study.created", f"study:{name}", None, summary)
    return summary


# ----- push ---------------------------------------------------------------------------------------
def label_config() -> str:
    """Three panels side by side — current page, reference, the output — then the context and four ratings."""
    ratings = "".join(
        f'<Header value="{i}. {html.escape(c.replace("_", " "))} (1–{SCALE[1]})" size="5"/>'
        f'<Rating name="{c}" toName="output" maxRating="{SCALE[1]}" required="true"/>'
        for i, c in enumerate(CRITERIA, start=1)
    )
    return (
        '<View><HyperText name="instructions" value="$instructions"/>'
        '<View style="display:flex;gap:1em;align-items:flex-start">'
        '<View style="flex:1"><Header value="Current page" size="4"/><HyperText name="current" value="$current"/></View>'
        '<View style="flex:1"><Header value="Reference: the real next page" size="4"/>'
        '<HyperText name="reference" value="$reference"/></View>'
        '<View style="flex:1"><Header value="Generated next page (rate this)" size="4"/>'
        '<HyperText name="output" value="$output"/></View>'
        '</View><HyperText name="context" value="$context"/>'
        f"{ratings}</View>"
    )


def _text(value: str) -> str:
    """Text as typed: escaped, line breaks kept, never rendered as Markdown."""
    return f'<p style="white-space:pre-wrap">{html.escape(value)}</p>'


def _json_block(title: str, value: Any) -> str:
    return f"<h4>{html.escape(title)}</h4><pre>{html.escape(json.dumps(value, ensure_ascii=False, indent=2))}</pre>"


def _instructions(track: str) -> str:
    questions = "".join(f"<li>{html.escape(QUESTIONS[track][c])}</li>" for c in CRITERIA)
    return f"<h3>{html.escape(TRACK_TITLES[track])}</h3><p>{html.escape(GUIDANCE)}</p><ol>{questions}</ol>"


def _output_html(connection: Connection, output: CampaignOutput, track: str) -> str:
    parts = []
    if track in ("text", "integrated") and output.text:
        parts.append(_text(output.text))
    if track in ("image", "integrated") and output.image:
        parts.append(image_html(connection, output.image, 360))
    if track in ("speech", "integrated") and output.audio:
        parts.append(audio_html(connection, output.audio))
    return "".join(parts)


def wanted_tasks(
    connection: Connection, study: StoryStudy, outputs: dict[int, CampaignOutput], units: list[CampaignUnit]
) -> list[TaskSpec]:
    specs = []
    for unit in units:
        output = outputs[unit.output_a]
        track = unit.key.rsplit("|", 1)[1]
        page = study.pages[unit.item]
        data = {
            "instructions": _instructions(track),
            "current": image_html(connection, page["current_image"], 360) + _text(page["current_text"]),
            "reference": image_html(connection, page["next_image"], 360)
            + _text(page["next_text"])
            + _json_block("Speech target", page["speech"]),
            "output": _output_html(connection, output, track),
            "context": _json_block("Book metadata", page["book_meta"])
            + _json_block("Next-page conditions", page["conditions"]),
        }
        shown = [page["current_image"], page["next_image"]]
        if track in ("image", "integrated") and output.image:
            shown.append(output.image)
        if track in ("speech", "integrated") and output.audio:
            shown.append(output.audio)
        inputs = hashlib.sha256(
            json.dumps([track, page, output.text, output.image, output.audio], sort_keys=True).encode()
        ).hexdigest()
        specs.append(
            TaskSpec(
                ref=f"campaign|{study.name}|u{unit.id}",
                subject=f"unit:{unit.id}",
                inputs_hash=inputs,
                data=data,
                media=tuple(shown),
            )
        )
    return specs


def _load(ws: Workspace, name: str) -> tuple[StoryStudy, Campaign, dict[int, CampaignOutput], list[CampaignUnit]]:
    study = load_study(ws, name)
    campaign, outputs, units = load_campaign(ws, name)
    return study, campaign, outputs, units


class StudyProject(CampaignProject):
    """The study's project: the campaign's, with the study's three-panel tasks (same four rating controls)."""

    def __init__(self, ws: Workspace, name: str) -> None:
        self.study = load_study(ws, name)
        super().__init__(ws, name)
        self.title = f"{ws.root.name}: story study {name}"

    def label_config(self) -> str:
        return label_config()

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        return wanted_tasks(connection, self.study, self.outputs, self.units)


def push_study(ws: Workspace, connection: Connection, name: str, recreate: bool = False) -> PushReport:
    """Create or update the study's project: one task per unit, overlap = the redundancy target."""
    return push(ws, connection, StudyProject(ws, name), recreate)


def pull_study(ws: Workspace, connection: Connection, name: str) -> PullCounts:
    """The campaign's pull: each annotation validated against the study's rating controls (same names, same
    target, 1–10), each rater's deciding evaluation per unit stored in one transaction."""
    (report,) = pull(ws, connection, [StudyProject(ws, name)])
    return report


# ----- report -------------------------------------------------------------------------------------
def study_evaluations(ws: Workspace, name: str) -> tuple[list[tuple[str, str, str]], list[Evaluation], int]:
    """The study's units as (transition, system, track), its evaluations and its number of skips."""
    _, _, outputs, units = _load(ws, name)
    with ws.session() as s:
        ratings = list(s.execute(select(CampaignRating).where(CampaignRating.campaign == name)).scalars())
    by_id = {}
    for unit in units:
        output = outputs[unit.output_a]
        by_id[unit.id] = (unit.item, output.system, unit.key.rsplit("|", 1)[1])
    evaluations = []
    skips = Counter[bool]()
    for r in ratings:
        skips[r.skipped] += 1
        if not r.skipped and r.scores:
            transition, system, track = by_id[r.unit_id]
            evaluations.append(Evaluation(transition, system, track, r.rater, {c: int(r.scores[c]) for c in CRITERIA}))
    return list(by_id.values()), evaluations, skips[True]


def report_study(ws: Workspace, name: str, comparator: str = "release") -> dict[str, Any]:
    study = load_study(ws, name)
    units, evaluations, skips = study_evaluations(ws, name)
    return study_report(study, units, evaluations, skips, judge_scores(ws, name), comparator)
