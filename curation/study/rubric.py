"""The study's tracks and rubric: the four categories of the automated judges (App. E.4), worded per track."""

from __future__ import annotations

TRACKS = ("text", "image", "speech", "integrated")
CRITERIA = ("metadata_alignment", "continuity", "condition_compliance", "ground_truth_consistency")
"""App. F.5: "metadata alignment, continuity, condition compliance, and ground-truth consistency"."""
SCALE = (1, 10)

NEEDS: dict[str, frozenset[str]] = {
    "text": frozenset({"text"}),
    "image": frozenset({"image"}),
    "speech": frozenset({"audio"}),
    "integrated": frozenset({"text", "image", "audio"}),
}
"""What an output must contain to be rated in a track (integrated evaluation needs all three, App. E.5)."""

QUESTIONS: dict[str, dict[str, str]] = {
    "text": {
        "metadata_alignment": "Alignment with the global metadata",
        "continuity": "Natural flow from the current narration",
        "condition_compliance": "Satisfaction of all generation conditions",
        "ground_truth_consistency": "Semantic consistency with the reference next-page narration",
    },
    "image": {
        "metadata_alignment": "Alignment with the global metadata",
        "continuity": "Visual and narrative continuity from the current scene image",
        "condition_compliance": "Satisfaction of all generation conditions",
        "ground_truth_consistency": "Semantic consistency with the reference next-scene image",
    },
    "speech": {
        "metadata_alignment": "Alignment with the global metadata",
        "continuity": "Naturalness and conversational relevance of the speech",
        "condition_compliance": "Satisfaction of all generation conditions",
        "ground_truth_consistency": "Semantic consistency and character persona match with the reference speech target",
    },
    "integrated": {
        "metadata_alignment": "Alignment with the global metadata",
        "continuity": "Natural multimodal continuity from the current page",
        "condition_compliance": "Satisfaction of all generation conditions",
        "ground_truth_consistency": "Multimodal semantic consistency with the reference next page",
    },
}
GUIDANCE = (
    "Rate each criterion separately from 1 to 10: 10 = excellent, 5 = mixed or partially adequate, 1 = very poor. "
    "Use the reference as a guide to meaning and story progression, not as a strict match: do not penalize "
    "different wording, composition, camera angle or style when the output still fits."
)

JUDGE_KEYS: dict[str, dict[str, str]] = {
    "text": {
        "alignment_with_metadata": "metadata_alignment",
        "natural_flow_from_current_narration": "continuity",
        "satisfaction_of_generation_conditions": "condition_compliance",
        "semantic_consistency_with_ground_truth": "ground_truth_consistency",
    },
    "image": {
        "alignment_with_metadata": "metadata_alignment",
        "visual_narrative_continuity_from_current_scene": "continuity",
        "satisfaction_of_generation_conditions": "condition_compliance",
        "semantic_consistency_with_ground_truth": "ground_truth_consistency",
    },
    "speech": {
        "alignment_with_metadata": "metadata_alignment",
        "naturalness_and_conversational_relevance": "continuity",
        "satisfaction_of_generation_conditions": "condition_compliance",
        "semantic_consistency_and_persona_match_with_ground_truth": "ground_truth_consistency",
    },
    "integrated": {
        "alignment_with_metadata": "metadata_alignment",
        "natural_multimodal_continuity_from_current_page": "continuity",
        "satisfaction_of_generation_conditions": "condition_compliance",
        "multimodal_semantic_consistency_with_ground_truth": "ground_truth_consistency",
    },
}
"""The judges' own output keys (App. E.4) per track, accepted in judge score files as aliases."""


def tracks_of(modalities: set[str], tracks: tuple[str, ...]) -> list[str]:
    """The study tracks an output with these modalities can be rated in."""
    return [t for t in tracks if NEEDS[t] <= modalities]
