"""Group integration (TRIAD C.2 step 6): sisters are judged together, after each passed its answer check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from ...facts import ItemFacts
from ...schema import GroupReview
from ...sister_content import content, differing
from ...vocab import MODALITIES
from .._parts import GroupStage, LabelStudioSpec, UiPage
from .controls import NOTE, NOTE_TAG, VERDICT, VERDICT_TAG

if TYPE_CHECKING:
    from ...config import ReviewSettings


class GroupIntegration(GroupStage):
    name = "group_integration"
    record_model = GroupReview
    page = UiPage("pages/group_integration.py", "Group integration", ":material/workspaces:")
    help = "do the sisters form a consistent set?"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Scene group: do the sisters form a consistent set (they differ only in the '
            "perturbed modality, options as the template allows, and the answer changes with the altered cue: two "
            'sisters one modality apart have different answers)?"/><HyperText name="group" value="$panel"/>'
            + VERDICT_TAG.format(to="group")
            + NOTE_TAG.format(to="group")
            + "</View>"
        ),
        controls={"verdict": VERDICT, "note": NOTE},
        task_fields=("group_panel",),
    )

    def rules(self, perturbed: str, sisters: Sequence[ItemFacts], settings: ReviewSettings) -> list[str]:
        """The automatic checks across sisters, on content (``curation.sister_content``): media by content
        hash, text normalized; questions and options are templates, compared only as ``group_options`` says."""
        reasons = []
        contents = {s.id: content(s.context, s.image, s.audio, s.modalities) for s in sisters}
        apart = [(a, b, differing(contents[a.id], contents[b.id])) for a, b in combinations(sisters, 2)]
        if any(not changed for _, _, changed in apart):  # whatever their answers: a sister adds nothing
            reasons.append("group:identical_sisters")
        if perturbed in MODALITIES:
            if any(changed - {perturbed} for _, _, changed in apart):
                reasons.append("group:multiple_perturbed")
            if any(perturbed not in changed for _, _, changed in apart):
                reasons.append("group:perturbed_unchanged")
        exact = settings.group_options == "exact"  # otherwise differences are shown to the group reviewer
        if exact and len({json.dumps(i.options, sort_keys=True) for i in sisters}) > 1:
            reasons.append("group:option_mismatch")
        if len(sisters) > 1 and _answers_repeat(settings.group_answers, sisters, apart):
            reasons.append("group:duplicate_answers")
        if len(sisters) < settings.min_group_size:
            reasons.append("group:too_small")
        return reasons


def _answers_repeat(
    rule: str, sisters: Sequence[ItemFacts], apart: Sequence[tuple[ItemFacts, ItemFacts, frozenset[str]]]
) -> bool:
    """Whether the sisters' answers break ``[review] group_answers``. ``perturbation`` (TRIAD §3.2, F.1): two
    sisters one modality apart share an answer (the altered cue did not change it), or all sisters share one (a
    group whose perturbations never change the answer tests nothing); ``all_distinct``: any two share one;
    ``not_all_same``: all share one."""
    answers = [i.answer for i in sisters]
    if rule == "perturbation":
        return len(set(answers)) == 1 or any(len(changed) == 1 and a.answer == b.answer for a, b, changed in apart)
    if rule == "all_distinct":
        return len(set(answers)) < len(answers)
    return len(set(answers)) == 1
