"""Group integration (TRIAD C.2 step 6): sisters are judged together, after each passed its answer check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...facts import ItemFacts
from ...schema import GroupReview
from ...vocab import MODALITIES
from .._parts import GroupStage, LabelStudioSpec, UiPage
from .controls import NOTE, NOTE_TAG, VERDICT, VERDICT_TAG

if TYPE_CHECKING:
    from ...config import ReviewSettings

_VALUES = {"text": lambda i: (i.context,), "image": lambda i: (i.image,), "audio": lambda i: (i.audio,)}


class GroupIntegration(GroupStage):
    name = "group_integration"
    record_model = GroupReview
    page = UiPage("pages/group_integration.py", "Group integration", ":material/workspaces:")
    help = "do the sisters form a consistent set?"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Scene group: do the sisters form a consistent set (one perturbed modality, same '
            'options, different answers)?"/><HyperText name="group" value="$panel"/>'
            + VERDICT_TAG.format(to="group")
            + NOTE_TAG.format(to="group")
            + "</View>"
        ),
        controls={"verdict": VERDICT, "note": NOTE},
        task_fields=("group_panel",),
    )

    def rules(self, perturbed: str, sisters: Sequence[ItemFacts], settings: ReviewSettings) -> list[str]:
        reasons = []
        present = [m for m in MODALITIES if any(m in s.modalities for s in sisters)]
        if perturbed in MODALITIES and len(sisters) > 1:
            fixed = [m for m in present if m != perturbed]
            if any(len({_VALUES[m](i) for i in sisters}) > 1 for m in fixed):
                reasons.append("group:multiple_perturbed")
        exact = settings.group_options == "exact"  # otherwise differences are shown to the group reviewer
        if exact and len({json.dumps(i.options, sort_keys=True) for i in sisters}) > 1:
            reasons.append("group:option_mismatch")
        answers = [i.answer for i in sisters]
        if len(sisters) > 1:
            all_same = len(set(answers)) == 1
            some_repeat = len(set(answers)) < len(answers)
            if all_same or (settings.group_answers == "all_distinct" and some_repeat):
                reasons.append("group:duplicate_answers")
        if len(sisters) < settings.min_group_size:
            reasons.append("group:too_small")
        return reasons
