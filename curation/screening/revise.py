"""The two human stages of the story kind (App. D, Figs. 10–11) as records and pure functions.

``filter``: a reviewer keeps or drops a selected transition, with a reason when dropping. ``revise``: a
reviewer edits annotation fields by dotted path (``conditions.scene``, ``speech.emotion``,
``conditions.characters.0.action``); each record is one revision of the item, validated against the field
group's schema, and the item always shows its diff against the model's untouched proposal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from curation.errors import Problem, ValidationFailed
from curation.schema import Note, none_or_text

from .schema import ANNOTATION_GROUPS, ANNOTATION_MODELS, EMOTIONS, GENDERS, PITCHES, SPEEDS, StoryTransition

CHOICES: dict[str, tuple[str, ...]] = {
    "speech.emotion": EMOTIONS,
    "speech.speed": SPEEDS,
    "speech.pitch": PITCHES,
    "speech.gender": GENDERS,
}
"""The revisable fields whose values come from a fixed list (the rest are free text)."""
CHARACTER_FIELDS = ("emotion", "action", "speech_intent")
"""What a reviewer may revise of each character's next-page condition."""


def revisable_paths(characters: int) -> list[str]:
    """The dotted paths a reviewer may revise on a transition with this many character conditions, in the
    order reviewers meet them (book, then the next page's conditions, then the speech target)."""
    paths = [f"book_meta.{name}" for name in ("genre", "topic", "style")]
    paths += [f"conditions.{name}" for name in ("scene", "text_goal", "ambient_sound")]
    paths += [f"conditions.characters.{i}.{name}" for i in range(characters) for name in CHARACTER_FIELDS]
    paths += [f"speech.{name}" for name in ("speaker", "utterance", "emotion", "speed", "pitch", "gender")]
    return paths


def field_value(transition: StoryTransition, path: str) -> Any:
    """The current value at a dotted path (``conditions.characters.0.action``)."""
    value: Any = transition.model_dump(mode="json")
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def revisable_fields(transition: StoryTransition) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Dotted path -> (current value, allowed values or empty), for every field a reviewer may revise."""
    return {
        path: (field_value(transition, path), CHOICES.get(path, ()))
        for path in revisable_paths(len(transition.conditions.characters))
    }


class FilterRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str = Field(min_length=1)
    stage: Literal["filter"] = "filter"
    reviewer: str = Field(min_length=1)
    verdict: Literal["keep", "drop"]
    reason: str = ""
    """Required when dropping: what is wrong with the transition (weak link, text/image mismatch, ...); never
    only whitespace."""

    @field_validator("reason")
    @classmethod
    def _reason_not_only_whitespace(cls, value: str, info: ValidationInfo) -> str:
        if value and value.isspace():
            if info.data.get("verdict") == "drop":
                raise ValueError("a drop needs a reason: say what is wrong with the transition")
            return none_or_text(value)
        return value

    @model_validator(mode="after")
    def _drop_needs_reason(self) -> FilterRecord:
        if self.verdict == "drop" and not self.reason.strip():
            raise ValueError("a drop needs a reason")
        return self


class ReviseRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str = Field(min_length=1)
    stage: Literal["revise"] = "revise"
    reviewer: str = Field(min_length=1)
    edits: dict[str, Any] = {}
    """Dotted field path -> new value; an empty ``edits`` signs the annotation off as it stands."""
    note: Note = ""
    """Optional; a note of nothing but whitespace is refused."""
    revision: int | None = Field(default=None, ge=1)
    """The item's revision the reviewer saw: refused (``stale:revise``) when the item changed since; left out,
    the record applies to the revision the earlier lines of its file leave."""


@dataclass(frozen=True)
class FieldChange:
    path: str
    proposed: Any
    current: Any
    by: str
    """The reviewer whose revision set the current value."""
    proposal: bool = True
    """Whether the model proposed the field's group at all (False: ``proposed`` is None, nobody proposed it)."""


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flatten(inner, f"{prefix}.{key}"))
        return out or {prefix: {}}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = {}
        for i, inner in enumerate(value):
            out.update(_flatten(inner, f"{prefix}.{i}"))
        return out
    return {prefix: value}


def _set(container: Any, parts: list[str], value: Any, path: str) -> None:
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(container, list):
            if not part.isdigit() or int(part) >= len(container):
                raise KeyError(f"{path}: no element {part}")
            if last:
                container[int(part)] = value
            else:
                container = container[int(part)]
        elif isinstance(container, dict):
            if part not in container:
                raise KeyError(f"{path}: no field {part!r}")
            if last:
                container[part] = value
            else:
                container = container[part]
        else:
            raise KeyError(f"{path}: {parts[i - 1]!r} has no fields")


def apply_revision(item: StoryTransition, record: ReviseRecord) -> StoryTransition:
    """The item with the record's edits applied (validated per field group); ``revised_by`` updated.

    Raises :class:`ValidationFailed` naming each bad path; the item is never half-edited.
    """
    data = item.model_dump(mode="json")
    problems: list[Problem] = []
    touched: set[str] = set()
    for path, value in record.edits.items():
        group, _, rest = path.partition(".")
        if group not in ANNOTATION_GROUPS or not rest:
            problems.append(Problem(f"only annotation fields are revised ({', '.join(ANNOTATION_GROUPS)})", path))
            continue
        try:
            _set(data[group], rest.split("."), value, path)
        except KeyError as exc:
            problems.append(Problem(str(exc.args[0]).split(": ", 1)[1], path))
            continue
        touched.add(group)
    for group in sorted(touched):
        try:
            ANNOTATION_MODELS[group].model_validate(data[group])
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join([group, *(str(p) for p in err["loc"])])
                problems.append(Problem(err["msg"], where))
    if problems:
        raise ValidationFailed(problems, f"revision of {item.id} refused; nothing was changed")
    revised_by = dict(item.revised_by)
    for path in record.edits:
        revised_by[path] = record.reviewer
    data["revised_by"] = revised_by
    return StoryTransition.model_validate(data)


def diff_against_proposal(item: StoryTransition) -> list[FieldChange]:
    """Every annotation field whose current value differs from the model's proposal, in path order; every field
    of a group the model proposed nothing for (``proposal`` False) counts as changed."""
    changes = []
    for group in ANNOTATION_GROUPS:
        proposal = item.proposals.get(group)  # type: ignore[call-overload]
        proposed = _flatten(proposal.parsed(group).model_dump(mode="json"), group) if proposal else {}
        current = _flatten(getattr(item, group).model_dump(mode="json"), group)
        for path in sorted(set(proposed) | set(current)):
            if proposal is None or proposed.get(path) != current.get(path):
                by = next((who for p, who in item.revised_by.items() if path == p or path.startswith(p + ".")), "")
                changes.append(FieldChange(path, proposed.get(path), current.get(path), by, proposal is not None))
    return changes


def unattributed(item: StoryTransition) -> list[tuple[str, str]]:
    """(field, message) for every value the model would be credited with although it did not propose it: a
    value that differs from its proposal, or has none, with no reviser in ``revised_by``. A group without a
    proposal is one problem naming its fields."""
    found: list[tuple[str, str]] = []
    missing: dict[str, list[str]] = {}
    for change in diff_against_proposal(item):
        if change.by:
            continue
        if change.proposal:
            found.append(
                (
                    change.path,
                    "differs from the model's proposal but revised_by names no reviewer; name who revised it "
                    "(the proposal's model must not be credited with a person's value)",
                )
            )
        else:
            missing.setdefault(change.path.partition(".")[0], []).append(change.path)
    for group, unnamed in sorted(missing.items()):
        order = list(_flatten(getattr(item, group).model_dump(mode="json"), group))  # the schema's field order
        paths = sorted(unnamed, key=lambda p: order.index(p) if p in order else len(order))
        shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
        found.append(
            (
                f"proposals.{group}",
                f"no model proposal, and revised_by names no reviewer for {shown}; give the model's proposal for "
                f'{group}, or name who wrote it in revised_by (e.g. "{group}": "rev1")',
            )
        )
    return found


def field_provenance(item: StoryTransition, path: str) -> dict[str, str]:
    """Who wrote a field's current value: a reviewer's revision, else the model (with its prompt hash); "unknown"
    when neither a reviser nor a proposal is on record."""
    for changed in diff_against_proposal(item):
        if changed.path == path:
            return {"by": "reviewer", "reviewer": changed.by} if changed.by else {"by": "unknown"}
    proposal = item.proposals.get(path.partition(".")[0])  # type: ignore[call-overload]
    if proposal is None:
        return {"by": "unknown"}
    return {"by": "model", "model": proposal.provenance.model, "prompt_hash": proposal.provenance.prompt_hash}


def transition_from_record(record: dict[str, Any]) -> StoryTransition:
    """A screened candidate record (``transition_records``) as an item whose values are the proposals."""
    proposals = record["annotations"]
    missing = [g for g in ANNOTATION_GROUPS if g not in proposals]
    if missing:
        raise ValidationFailed(
            [Problem(f"no {', '.join(missing)} proposal: run the annotate step first", "annotations")],
            f"{record['id']} is not annotated",
        )
    return StoryTransition(
        id=record["id"],
        book=record["book"],
        page=record["page"],
        title=record.get("title", ""),
        source=record["source"],
        current=record["current"],
        next=record["next"],
        book_meta=proposals["book_meta"]["value"],
        conditions=proposals["conditions"]["value"],
        speech=proposals["speech"]["value"],
        proposals={g: proposals[g] for g in ANNOTATION_GROUPS},
        scores=record.get("scores"),
        score_provenance=record.get("score_provenance"),
        origin=record.get("origin"),
    )
