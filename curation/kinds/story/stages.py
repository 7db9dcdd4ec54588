"""The story kind's two stages: ``filter`` (keep or drop) and ``revise`` (sign the annotation off)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ...facts import ItemFacts, RecordFacts, StageOutcome, digest
from ...screening.revise import FilterRecord, ReviseRecord
from ...screening.schema import ANNOTATION_GROUPS
from .._parts import Stage, UiPage

if TYPE_CHECKING:
    from ...config import ReviewSettings


class Filter(Stage):
    """A reviewer keeps or drops a selected transition; any drop returns it with ``filter:drop``."""

    name = "filter"
    record_model = FilterRecord
    page = UiPage("pages/story_filter.py", "Story filter", ":material/filter_alt:")
    help = "keep or drop the transition (a drop needs a reason)"

    def inputs(self, item: ItemFacts) -> str:
        """The two pages: a revision of the annotation does not undo a keep."""
        return digest(self.name, item.context, item.image, item.extra.get("next"))

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        if any(r.payload.get("verdict") == "drop" for r in records):
            return StageOutcome(False, ["filter:drop"])
        return StageOutcome(True if len(records) >= self.quorum(settings) else None)

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {"reviews": len(records), "kept": sum(r.payload.get("verdict") == "keep" for r in records)}


class Revise(Stage):
    """A reviewer signs off the annotation as it now stands; an edit is a new revision (and the editor's
    sign-off of it), so any later edit asks for a fresh sign-off."""

    name = "revise"
    record_model = ReviseRecord
    page = UiPage("pages/story_revise.py", "Story revise", ":material/edit_note:")
    help = "check book metadata, next-page conditions and speech against the pages; edit what is wrong"

    def inputs(self, item: ItemFacts) -> str:
        return digest(self.name, {group: item.extra.get(group) for group in ANNOTATION_GROUPS})

    def record_problems(self, review: BaseModel, item: ItemFacts) -> list[tuple[str, str]]:
        assert isinstance(review, ReviseRecord)
        if review.edits:
            return [("edits", "edits make a new revision of the item: record them with `curate story revise FILE`")]
        return []

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {"reviews": len(records), "revised_fields": len(item.extra.get("revised_by", {}))}
