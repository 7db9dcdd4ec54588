"""Audio sign-off (TRIAD C.2 step 3): listeners rate each clip; a low mean on any axis asks for a re-recording.

Applies only to items that have audio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import TYPE_CHECKING, Any

from ...facts import ItemFacts, RecordFacts, StageOutcome, digest
from ...schema import AudioReview
from ...vocab import AUDIO_AXES
from .._parts import Control, LabelStudioSpec, Stage, UiPage
from .controls import NOTE, NOTE_TAG

if TYPE_CHECKING:
    from ...config import ReviewSettings


class AudioSignoff(Stage):
    name = "audio_signoff"
    record_model = AudioReview
    default_quorum = 2
    modality = "audio"
    page = UiPage("pages/audio_signoff.py", "Audio sign-off", ":material/graphic_eq:")
    help = "rate naturalness, clarity and artefacts 1-5"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Listen to the clip and rate it from 1 (bad) to 5 (excellent)."/>'
            '<Audio name="audio" value="$audio"/><Text name="context" value="$context"/>'
            + "".join(
                f'<Header value="{axis}" size="5"/><Rating name="{axis}" toName="audio" maxRating="5" required="true"/>'
                for axis in AUDIO_AXES
            )
            + NOTE_TAG.format(to="audio")
            + "</View>"
        ),
        controls={**{axis: Control("rating", required=True, max_rating=5) for axis in AUDIO_AXES}, "note": NOTE},
        task_fields=("context", "question", "audio"),
    )

    def inputs(self, item: ItemFacts) -> str:
        return digest(self.name, item.audio, item.audio_source)

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        reasons = ["tts_only_audio"] if item.audio_source == "tts" else []
        if len(records) >= self.quorum(settings):
            for axis in AUDIO_AXES:
                mean = sum(r.payload["scores"][axis] for r in records) / len(records)
                if mean < settings.audio_min_mean:
                    reasons.append(f"audio_unnatural:{axis}")
            return StageOutcome(not reasons, reasons)
        return StageOutcome(False if reasons else None, reasons)

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {
            "reviews": len(records),
            "mean_scores": {
                axis: round(fmean(r.payload["scores"][axis] for r in records), 4) if records else None
                for axis in AUDIO_AXES
            },
        }

    def record_from_annotation(
        self, item: ItemFacts | None, values: Mapping[str | None, Mapping[str, Any]]
    ) -> dict[str, Any] | None:
        first = next(iter(values.values()))
        return {"scores": {axis: first[axis] for axis in AUDIO_AXES}, "note": first.get("note", "")}
