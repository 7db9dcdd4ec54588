"""The story kind's two stages: ``filter`` (keep or drop) and ``revise`` (sign the annotation off), each also
served as a Label Studio project (App. D, Figs. 10–11): both pages side by side with the narration, then the
verdict, or every revisable field pre-filled with its current value beside the diff against the model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ...errors import ValidationFailed
from ...facts import ItemFacts, RecordFacts, StageOutcome, digest
from ...screening.revise import (
    CHOICES,
    FilterRecord,
    ReviseRecord,
    apply_revision,
    diff_against_proposal,
    revisable_fields,
    revisable_paths,
)
from ...screening.schema import ANNOTATION_GROUPS, StoryTransition
from .._parts import Control, LabelStudioSpec, Stage, UiPage

if TYPE_CHECKING:
    from ...config import ReviewSettings

LS_CHARACTERS = 4
"""Character conditions a Label Studio revise task offers (its labeling config is one for all tasks); a
transition with more characters has the rest revised in the app or with ``curate story revise``."""
LS_PATHS = tuple(revisable_paths(LS_CHARACTERS))


def control_name(path: str) -> str:
    """A revisable path as a labeling-config name (``conditions.scene`` -> ``conditions__scene``)."""
    return path.replace(".", "__")


_PAGES = (
    "<Style>.htx-text{white-space:pre-wrap}</Style>"
    '<Text name="title" value="$title"/>'
    '<View style="display:flex;gap:16px">'
    '<View style="flex:1"><Header value="Current page" size="5"/>'
    '<Image name="current_image" value="$current_image" maxWidth="100%"/>'
    '<Text name="current_text" value="$current_text"/></View>'
    '<View style="flex:1"><Header value="Next page (reference)" size="5"/>'
    '<Image name="next_image" value="$next_image" maxWidth="100%"/>'
    '<Text name="next_text" value="$next_text"/></View>'
    "</View>"
)
"""Both pages side by side; narration in ``Text`` tags, so it shows as the characters it has."""


def _transition(item: ItemFacts) -> StoryTransition:
    return StoryTransition.model_validate(dict(item.extra))


def _page_values(item: ItemFacts) -> dict[str, Any]:
    t = _transition(item)
    return {
        "title": f"{t.title} · {t.source.collection} · {t.source.license}",
        "current_text": t.current.text,
        "next_text": t.next.text,
    }


def _page_media(item: ItemFacts) -> dict[str, str]:
    t = _transition(item)
    return {"current_image": t.current.image, "next_image": t.next.image}


class Filter(Stage):
    """A reviewer keeps or drops a selected transition; any drop returns it with ``filter:drop``."""

    name = "filter"
    record_model = FilterRecord
    page = UiPage("pages/story_filter.py", "Story filter", ":material/filter_alt:")
    help = "keep or drop the transition (a drop needs a reason)"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Keep or drop: does the next page follow from the current one, and are both pages '
            'fit for a benchmark? A drop needs a reason."/>'
            + _PAGES
            + '<Choices name="verdict" toName="current_text" choice="single" required="true" showInline="true">'
            '<Choice value="keep"/><Choice value="drop"/></Choices>'
            '<Header value="Reason (required to drop)" size="6"/>'
            '<TextArea name="reason" toName="current_text" maxSubmissions="1" editable="true"/>'
            "</View>"
        ),
        controls={
            "verdict": Control("choices", required=True, choices=("keep", "drop")),
            "reason": Control("textarea"),
        },
        task_fields=(),
    )

    def inputs(self, item: ItemFacts) -> str:
        """The two pages: a revision of the annotation does not undo a keep."""
        return digest(self.name, item.context, item.image, item.extra.get("next"))

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        if any(r.payload.get("verdict") == "drop" for r in records):
            return StageOutcome(False, ["filter:drop"])
        return StageOutcome(True if len(records) >= self.quorum(settings) else None)

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {"reviews": len(records), "kept": sum(r.payload.get("verdict") == "keep" for r in records)}

    def task_values(self, item: ItemFacts) -> dict[str, Any]:
        return _page_values(item)

    def task_media(self, item: ItemFacts) -> dict[str, str]:
        return _page_media(item)


def _revise_field(path: str) -> str:
    name = control_name(path)
    label = f'<Header value="{path}" size="6"/>'
    if path in CHOICES:
        choices = "".join(f'<Choice value="{c}"/>' for c in CHOICES[path])
        return (
            label
            + f'<Choices name="{name}" toName="current_text" choice="single" showInline="true">{choices}</Choices>'
        )
    return label + f'<TextArea name="{name}" toName="current_text" maxSubmissions="1" editable="true"/>'


def _revise_controls() -> dict[str, Control]:
    found = {
        control_name(p): Control("choices", choices=CHOICES[p]) if p in CHOICES else Control("textarea")
        for p in LS_PATHS
    }
    return {**found, "note": Control("textarea")}


def _changes_text(t: StoryTransition) -> str:
    """Every revisable field: its value now, and the model's proposal where a reviewer changed it."""
    changed = {c.path: c for c in diff_against_proposal(t)}
    lines = []
    for path, (value, _) in revisable_fields(t).items():
        c = changed.get(path)
        proposed = f"model proposed: {c.proposed}" if c and c.proposal else "no model proposal"
        lines.append(f"{path}: {value}" + (f"    ({proposed}; revised by {c.by or '?'})" if c else ""))
    names = ", ".join(f"{i}: {c.name}" for i, c in enumerate(t.conditions.characters)) or "none"
    return f"Characters: {names}\n" + "\n".join(lines)


class Revise(Stage):
    """A reviewer signs off the annotation as it now stands; an edit is a new revision (and the editor's
    sign-off of it), so any later edit asks for a fresh sign-off."""

    name = "revise"
    record_model = ReviseRecord
    page = UiPage("pages/story_revise.py", "Story revise", ":material/edit_note:")
    help = "check book metadata, next-page conditions and speech against the pages; edit what is wrong"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Revise the annotation against the pages. Each field starts with its current value: '
            "change what is wrong, leave the rest; a field left empty keeps its value. Submitting without "
            'changes signs the annotation off as it stands."/>'
            + _PAGES
            + '<Header value="The annotation now (and the model\'s proposal where a reviewer changed it)" size="5"/>'
            '<Text name="changes" value="$changes"/>'
            + "".join(_revise_field(p) for p in LS_PATHS)
            + '<Header value="Note (optional)" size="6"/>'
            '<TextArea name="note" toName="current_text" maxSubmissions="1" editable="true"/>'
            "</View>"
        ),
        controls=_revise_controls(),
        task_fields=(),
    )

    def inputs(self, item: ItemFacts) -> str:
        return digest(self.name, {group: item.extra.get(group) for group in ANNOTATION_GROUPS})

    def record_problems(self, review: BaseModel, item: ItemFacts) -> list[tuple[str, str]]:
        assert isinstance(review, ReviseRecord)
        if review.edits:
            return [("edits", "edits make a new revision of the item: record them with `curate story revise FILE`")]
        return []

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {"reviews": len(records), "revised_fields": len(item.extra.get("revised_by", {}))}

    # ----- Label Studio ------------------------------------------------------------------------
    def task_values(self, item: ItemFacts) -> dict[str, Any]:
        return {**_page_values(item), "changes": _changes_text(_transition(item))}

    def prefill(self, item: ItemFacts) -> dict[str, Any]:
        """Every field of the transition with its current value (slots of characters it lacks stay empty)."""
        current = revisable_fields(_transition(item))
        return {control_name(p): current[p][0] for p in LS_PATHS if p in current and current[p][0] != ""}

    def task_media(self, item: ItemFacts) -> dict[str, str]:
        return _page_media(item)

    def record_from_annotation(
        self, item: ItemFacts | None, values: Mapping[str | None, Mapping[str, Any]]
    ) -> dict[str, Any] | None:
        """The edits: each field whose annotated value differs from the current one (surrounding blanks are
        no edit); a field left out keeps its value."""
        assert item is not None
        first = next(iter(values.values()))
        current = {path: value for path, (value, _) in revisable_fields(_transition(item)).items()}
        edits: dict[str, Any] = {}
        for path in LS_PATHS:
            got = first.get(control_name(path))
            if got is None:
                continue
            new = (got[0] if got else None) if isinstance(got, list) else str(got).strip()
            if new is None or (path not in current and not new):
                continue
            if new != current.get(path):
                edits[path] = new
        return {"edits": edits, "note": str(first.get("note", ""))}

    def annotation_problems(self, item: ItemFacts, fields: Mapping[str, Any]) -> list[str]:
        """Edits that would not make a valid annotation (a character the item lacks, an empty utterance)."""
        edits = fields.get("edits") or {}
        if not edits:
            return []
        try:
            apply_revision(_transition(item), ReviseRecord(item=item.id, reviewer="-", edits=edits))
        except ValidationFailed as exc:
            return [f"{p.field}: {p.message}" for p in exc.problems]
        return []
