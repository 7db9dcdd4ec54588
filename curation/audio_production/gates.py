"""The audio production gates, one stored result per item like every item-level gate (``gate_result``):

- ``consent``: ``consent:missing`` while a speaker of the item's clip has no standing consent record;
- ``takes``: for voice-acted clips (a producer named), ``takes:too_few`` below ``[audio] min_takes``,
  ``takes:not_chosen`` before the producer's choice, ``takes:choice_not_item_audio`` while the item's audio is
  not the chosen take;
- ``spot_check``: for sampled clips, ``spot_check:pending`` before a listener's check, ``spot_check:inconsistent``
  when a listener found the clip inconsistent with the other actors' (a disagreement, named);
- ``recording``: ``group:recording_mismatch`` on every sister of an audio-perturbed group whose clips differ in
  actor, session or equipment (TRIAD B.5).

How each blocks is ``[gates]`` (consent, takes, spot_check block; recording warns). A clip that names no
speaker and no producer gets none of these reasons: a workspace without these records is judged as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import col

from ..tables import GateResult, utcnow
from ..workspace import Workspace
from .controls import audio_groups, differing
from .loaded import AudioFacts, Clip, load_audio_facts
from .spot_check import sample_of

GATES = ("consent", "takes", "spot_check", "recording")
Findings = dict[str, dict[str, tuple[list[str], dict[str, Any]]]]
"""Gate -> item -> (reason codes, details)."""


def _consent(facts: AudioFacts, clip: Clip) -> tuple[list[str], dict[str, Any]]:
    missing = facts.without_consent(clip)
    return (["consent:missing"], {"speakers": missing}) if missing else ([], {})


def _takes(facts: AudioFacts, clip: Clip, min_takes: int) -> tuple[list[str], dict[str, Any]]:
    if not clip.credits.voice_acted:
        return [], {}
    takes = facts.takes.get(clip.item, [])
    choice = facts.choices.get(clip.item)
    reasons = []
    if len(takes) < min_takes:
        reasons.append("takes:too_few")
    if choice is None:
        reasons.append("takes:not_chosen")
    elif choice.sha256 != clip.audio:
        reasons.append("takes:choice_not_item_audio")
    details = {"takes": len(takes), "min_takes": min_takes, "chosen": choice.take if choice else None}
    return reasons, details if reasons else {}


def _spot_check(facts: AudioFacts, clip: Clip, sample: set[str]) -> tuple[list[str], dict[str, Any]]:
    if clip.item not in sample:
        return [], {}
    checks = [c for c in facts.spot_checks.get(clip.item, []) if c.sha256 == clip.audio]
    if not checks:
        return ["spot_check:pending"], {}
    against = sorted(c.listener for c in checks if c.verdict == "inconsistent")
    return (["spot_check:inconsistent"], {"listeners": against}) if against else ([], {})


def _recording(facts: AudioFacts) -> dict[str, tuple[list[str], dict[str, Any]]]:
    out = {}
    for sisters in audio_groups(facts).values():
        differ = differing(sisters)
        for sister in sisters if differ else ():
            out[sister.item] = (["group:recording_mismatch"], {"differ": differ})
    return out


def audio_findings(ws: Workspace, facts: AudioFacts | None = None) -> Findings:
    """Every audio clip's findings under each audio gate (an empty list: it passes)."""
    facts = facts or load_audio_facts(ws)
    sample = set(sample_of(ws, facts))
    recording = _recording(facts)
    min_takes = ws.settings.audio.min_takes
    out: Findings = {gate: {} for gate in GATES}
    for clip in facts.clips.values():
        out["consent"][clip.item] = _consent(facts, clip)
        out["takes"][clip.item] = _takes(facts, clip, min_takes)
        out["spot_check"][clip.item] = _spot_check(facts, clip, sample)
        out["recording"][clip.item] = recording.get(clip.item, ([], {}))
    return out


def refresh_audio_gates(ws: Workspace) -> Findings:
    """Judge every clip and store each audio gate's findings (what ``curate status`` reads): a row per clip and
    gate that has reasons; a clip that passes (or no longer has audio) has none, so a workspace without audio
    production records stores nothing."""
    facts = load_audio_facts(ws)
    findings = audio_findings(ws, facts)
    with ws.writing() as s:
        s.execute(
            delete(GateResult).where(
                col(GateResult.gate).in_(GATES), col(GateResult.item_id).not_in(list(facts.clips) or [""])
            )
        )
        stored = {
            (g.item_id, g.gate): g
            for g in s.execute(select(GateResult).where(col(GateResult.gate).in_(GATES))).scalars()
        }
        for gate, by_item in findings.items():
            for item_id, (reasons, details) in by_item.items():
                if not reasons:
                    if (item_id, gate) in stored:
                        s.delete(stored[(item_id, gate)])
                    continue
                row = stored.get((item_id, gate)) or GateResult(item_id=item_id, gate=gate, content_hash="", reasons=[])
                digest = facts.clips[item_id].content_hash
                if (row.content_hash, row.reasons, row.details or {}) == (digest, reasons, details):
                    continue
                row.content_hash, row.reasons, row.details = digest, reasons, details
                row.blocking, row.updated_at = bool(reasons), utcnow()
                s.add(row)
    return findings


ItemGate = Callable[[Workspace, Sequence[str]], Mapping[str, list[str]]]


def _gate(name: str) -> ItemGate:
    def check(ws: Workspace, candidate_ids: Sequence[str]) -> Mapping[str, list[str]]:
        wanted = set(candidate_ids)
        found = audio_findings(ws)[name]
        return {item: reasons for item, (reasons, _) in sorted(found.items()) if item in wanted and reasons}

    check.__qualname__ = f"{name}_gate"
    return check


consent_gate = _gate("consent")
takes_gate = _gate("takes")
spot_check_gate = _gate("spot_check")
recording_gate = _gate("recording")
"""The release build's item gates (``exports.gates``): the same findings, judged on the build's candidates."""
