"""The manual's vocabularies page (docs/reference/vocabularies.md), written by scripts/gen_reference.py: every closed
list a field of an interchange file takes its value from, read from the code — TRIAD's taxonomy with each leaf's
definition, the provenance sources, modalities, perturbations, views, option keys, each kind's stages, the judge
rubrics, the open licences — and the fixed values of every format's required fields, found in its model."""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel

from scripts.reference_common import HEADER, cell

TITLE = "Vocabularies"


def _cell(text: str) -> str:
    return cell(" ".join(str(text).split()))


def _values(values: Iterable[Any]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def _literal_values(annotation: Any) -> list[Any]:
    """The values of a ``Literal`` (also inside ``list[...]``, ``dict[...]`` keys, ``X | None``), else []."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    found: list[Any] = []
    for arg in typing.get_args(annotation):
        found += [v for v in _literal_values(arg) if v not in found]
    return found


def _nested(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _nested(arg)


def literal_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, bool, list[Any]]]:
    """(dotted field, required, values) for every field of MODEL and its nested models that takes a fixed list."""
    for name, info in model.model_fields.items():
        values = _literal_values(info.annotation)
        if values and values != [None]:
            yield f"{prefix}{name}", info.is_required(), [v for v in values if v is not None]
        for nested in _nested(info.annotation):
            if nested is not model:
                yield from literal_fields(nested, f"{prefix}{name}.")


def _taxonomy() -> list[str]:
    from curation.taxonomy import TAXONOMY

    total = sum(len(leaves) for leaves in TAXONOMY.values())
    out = [
        "## Taxonomy (TRIAD App. A)\n\n",
        f"An [item](formats.md#item-mcq)'s `taxonomy` names one leaf per modality it has (`taxonomy.text`, "
        f"`taxonomy.image`, `taxonomy.audio`); {total} leaves in all, from `curation/taxonomy.py`. Another name "
        "is refused with the modality's list.\n\n",
    ]
    for modality, leaves in TAXONOMY.items():
        out.append(f"### {modality} ({len(leaves)} leaves)\n\n| leaf | definition |\n|---|---|\n")
        out += [f"| `{leaf.name}` | {_cell(leaf.definition)} |\n" for leaf in leaves.values()]
        out.append("\n")
    return out


def _item_fields() -> list[str]:
    from curation.notes import NOTE_MODALITIES
    from curation.vocab import (
        AUDIO_AXES,
        AUDIO_SOURCES,
        CHECKLIST_VIEWS,
        IMAGE_SOURCES,
        MODALITIES,
        OPTION_KEYS,
        PERTURBED,
        ROLES,
        STATES,
    )

    rows = [
        ("`modalities`, `ambiguous` (item, subset checklist)", MODALITIES),
        ("`perturbed` (item)", PERTURBED),
        ("`provenance.image.source` (item)", IMAGE_SOURCES),
        ("`provenance.audio.source` (item)", AUDIO_SOURCES),
        ("`options` keys, `answer` (item; A, B, ... without a gap)", OPTION_KEYS),
        ("`notes` keys (item)", NOTE_MODALITIES),
        ("`scores` keys (audio sign-off; each 1–5)", AUDIO_AXES),
        ("`consistent` keys (subset checklist: the views)", CHECKLIST_VIEWS),
        ("`--role` (`curate people add`)", ROLES),
        ("an item's state (`curate status --state`)", STATES),
    ]
    out = ["## Items, reviews and people\n\n| field | values |\n|---|---|\n"]
    out += [f"| {field} | {_values(values)} |\n" for field, values in rows]
    return [*out, "\n"]


def _stages() -> list[str]:
    from curation.config import ReviewSettings
    from curation.kinds import kinds

    defaults = ReviewSettings()
    out = [
        "## Stages\n\n",
        "The `stage` of a review or judge record names one of its kind's stages (`curate kinds` lists them; the "
        "quorum is the default of `[review]`).\n\n",
        "| kind | stage | scope | quorum | what a record says |\n|---|---|---|---|---|\n",
    ]
    for kind in kinds():
        out += [
            f"| `{kind.name}` | `{s.name}` | {s.scope} | {s.quorum(defaults)} | {_cell(s.help)} |\n"
            for s in kind.stages
        ]
    return [*out, "\n"]


def _judge() -> list[str]:
    from curation.kinds.judge.queries import SCREEN_REASONS
    from curation.kinds.judge.rubrics import CHOICES, CRITERIA, DEFINITIONS, RUBRICS, SCORE_MAX, SCORE_MIN
    from curation.kinds.judge.schema import Modality

    out = [
        "## Judge tasks\n\n",
        f"Checklist entries are drafted and selected per rubric ({len(RUBRICS)} rubrics); a score or a choice is "
        f"given per criterion (the rubrics and `overall`): scores {SCORE_MIN}–{SCORE_MAX}, choices "
        f"{_values(CHOICES)}. Task inputs and outputs are one of {_values(typing.get_args(Modality))}; a dropped "
        f"query names one of {_values(SCREEN_REASONS)}.\n\n",
        "| criterion | definition |\n|---|---|\n",
    ]
    out += [f"| `{c}`{' (not a rubric)' if c not in RUBRICS else ''} | {_cell(DEFINITIONS[c])} |\n" for c in CRITERIA]
    return [*out, "\n"]


def _licences() -> list[str]:
    from curation.licences import DEFAULT_OPEN_LICENCES

    return [
        "## Open licences\n\n",
        "`provenance.image.license`, `provenance.audio.license` (item), `license` (judge task and query), "
        "`source.license` (story candidate) and a book's licence: one of the workspace's open licences, by default "
        f"{_values(DEFAULT_OPEN_LICENCES)} (`[licences] add` and `accept` in [Settings](settings.md) change the "
        "list).\n\n",
    ]


def _formats(formats: Iterable[tuple[str, type[BaseModel]]]) -> list[str]:
    out = [
        "## Fixed values, by format\n\n",
        "Every field of a format (or of an object nested in it) whose values are a fixed list, as its model "
        "declares them; `stage` and `kind` fields name the format itself.\n\n",
        "| format | field | required | values |\n|---|---|---|---|\n",
    ]
    for title, model in formats:
        for field, required, values in literal_fields(model):
            out.append(f"| {_cell(title)} | `{field}` | {'yes' if required else 'no'} | {_values(values)} |\n")
    return out


def vocabularies_page(formats: Iterable[tuple[str, type[BaseModel]]]) -> str:
    """The page; FORMATS are the interchange formats' (title, model), in the order formats.md shows them."""
    out = [
        HEADER,
        f"# {TITLE}\n\n",
        "The closed lists the fields of the [interchange formats](formats.md) take their values from, read from "
        "the code. A value outside its list is refused, naming the list.\n\n",
        *_taxonomy(),
        *_item_fields(),
        *_stages(),
        *_judge(),
        *_licences(),
        *_formats(formats),
    ]
    return "".join(out).rstrip() + "\n"
