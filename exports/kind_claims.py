"""The sentences of judge_task and story_transition releases that the records give (``exports.claims`` holds the
rule and the maintainer's part; docs/releases-claims.md lists every sentence and its source)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from curation.config import ReviewSettings
from curation.kinds.judge.checklists import TaskChecklist
from curation.kinds.judge.schema import PersonProvenance

from .claims import inline, separation_sentence, stage_sentence


def _span(values: Sequence[int]) -> str:
    if not values:
        return "none"
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low} to {high}"


# ----- judge_task ------------------------------------------------------------------------------------------
def judge_facts(
    tasks: Sequence[Mapping[str, Any]],
    responses: Sequence[Mapping[str, Any]],
    checklists: Sequence[TaskChecklist],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    annotations: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, Any]:
    """Figures of the released tasks, checklists, samples and annotations that the judge card states."""
    entries = [e for c in checklists for e in c.final]
    people = [e.provenance for e in entries if isinstance(e.provenance, PersonProvenance)]

    def per_sample(kind: str) -> list[int]:
        counts = Counter(a["sample"] for a in annotations[kind])
        return [counts.get(s["id"], 0) for s in samples[kind]]

    return {
        "sources": dict(sorted(Counter(str(t["source"]) for t in tasks).items())),
        "licences": dict(sorted(Counter(str(t["license"]) for t in tasks).items())),
        "systems": len({r["system"] for r in responses}),
        "crosschecked": sum(c.adjudication is None and c.crosscheck is not None for c in checklists),
        "adjudicated": sum(c.adjudication is not None for c in checklists),
        "entries_by": {
            "model": len(entries) - len(people),
            "edited": sum(p.action == "edited" for p in people),
            "added": sum(p.action == "added" for p in people),
        },
        "per_rubric": [n for c in checklists for n in Counter(e.rubric for e in c.final).values()],
        "distinct_pairs": sum(p["first_system"] != p["second_system"] for p in samples["pair"]),
        "per_score_sample": per_sample("score"),
        "per_pair_sample": per_sample("pair"),
    }


def judge_summary(facts: Mapping[str, Any]) -> str:
    return (
        f"A judge_task benchmark: {facts['tasks']} tasks over the modality pairs "
        f"{', '.join(facts['modality_pairs']) or 'none'}; {facts['responses']} responses from {facts['systems']} "
        f"system(s); {facts['score_samples']} score and {facts['pair_samples']} pair samples annotated by "
        f"{facts['annotators']} people; judges: {', '.join(facts['judges']) or 'none'}."
    )


def judge_sources(facts: Mapping[str, Any]) -> str:
    return (
        f"Task sources (data/tasks.jsonl `source`): {inline(facts['sources'])}. Task licences (`license`): "
        f"{inline(facts['licences'])}."
    )


def judge_checklist_sentence(facts: Mapping[str, Any], alpha: str) -> str:
    by = facts["entries_by"]
    return (
        f"Checklists: of {facts['tasks']} final checklist(s), {facts['crosschecked']} were agreed by a curator and "
        f"a second person who cross-checked them (a cross-check by the curator is refused) and "
        f"{facts['adjudicated']} were settled by an adjudication record. Entries: {by['model']} drafted by a model "
        f"(model and prompt hash in each entry's provenance), {by['edited']} rewritten and {by['added']} added by "
        f"people; {_span(facts['per_rubric'])} entries per rubric. Selection agreement (Krippendorff's alpha, "
        f"task x entry): {alpha}."
    )


RESPONSES = (
    "Responses: only those reviewed at least once and judged usable, and not NSFW, by every reviewer are released."
)
"""What ``curation.kinds.judge.record_store.usable_responses`` enforces."""


def judge_sample_sentences(facts: Mapping[str, Any]) -> list[str]:
    return [
        f"Pairs: {facts['distinct_pairs']} of {facts['pair_samples']} pair samples hold responses of two different "
        "systems (`first_system`, `second_system`); `swapped` records the side order shown.",
        f"Annotations: each score sample carries {_span(facts['per_score_sample'])} person's annotation(s), each "
        f"pair sample {_span(facts['per_pair_sample'])}; a person annotates a sample at most once (the workspace "
        "keeps one annotation per sample and person).",
    ]


def judge_annotations_per_item(facts: Mapping[str, Any]) -> str:
    return (
        f"{_span(facts['per_score_sample'])} annotation(s) per score sample and {_span(facts['per_pair_sample'])} "
        f"per pair sample, by {facts['annotators']} annotator(s) in all; agreement.json gives the people's "
        "agreement on scores and choices"
    )


# ----- story_transition ------------------------------------------------------------------------------------
def story_collection(records: Sequence[Mapping[str, Any]], candidates: int) -> str:
    books = len({r["book"] for r in records})
    collections = dict(sorted(Counter(str(r["collection"]) for r in records).items()))
    licences = dict(sorted(Counter(str(r["license"]) for r in records).items()))
    return (
        f"{len(records)} page-to-page transitions from {books} book(s) (collections: {inline(collections)}; "
        f"licences: {inline(licences)}), selected from {candidates} screened candidate transitions by the rules "
        "and scores in screening.json, then reviewed."
    )


def story_stage_sentences(review: ReviewSettings, released: int) -> list[str]:
    from curation.screening.items import KIND

    stages = stage_sentence(KIND, review, dict.fromkeys(("filter", "revise"), released), noun="transition")
    return [x for x in (stages, separation_sentence(review, "transition")) if x]


def story_provenance_lines(records: Iterable[Mapping[str, Any]], groups: Sequence[str]) -> list[str]:
    """Per annotation group: how many released transitions a model proposed it for, and a reviewer revised."""
    records = list(records)
    out = []
    for group in groups:
        proposed = sum(r["provenance"][group]["model"] is not None for r in records)
        revised = sum(r["provenance"][group]["human_revised"] for r in records)
        rest = " (the rest written by reviewers)" if proposed < len(records) else ""
        out.append(
            f"- {group}: proposed by a model for {proposed} of {len(records)} transitions{rest}; revised by a "
            f"reviewer in {revised}"
        )
    return out
