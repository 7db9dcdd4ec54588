"""Reading Label Studio results against the controls a labeling config declares.

Label Studio stores whatever a client sends (an unknown ``from_name``, a rating of 15 on a 1–10 scale), so
every pulled annotation is checked here; anything unexpected refuses the whole annotation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Control:
    """One control tag of a labeling config, as the validator sees it."""

    kind: str  # "choices", "rating" or "textarea"
    required: bool = False
    choices: tuple[str, ...] = ()
    """Allowed values; empty with ``from_options`` means the task's options decide."""
    from_options: bool = False
    multiple: bool = False
    max_rating: int = 5


_RESULT_TYPE = {"choices": "choices", "rating": "rating", "textarea": "textarea"}


class ResultRefused(ValueError):
    """The annotation does not fit the stage's controls; the message says why."""


def read_result(
    result: Sequence[Mapping[str, Any]],
    controls: Mapping[str, Control],
    options: Sequence[str] = (),
) -> dict[str, Any]:
    """The annotation's values by control name: a list of choices, an int rating or a text; else refused."""
    values: dict[str, Any] = {}
    for region in result:
        name = region.get("from_name")
        control = controls.get(name) if isinstance(name, str) else None
        if control is None:
            raise ResultRefused(f"unknown field {name!r} (the labeling config has {', '.join(sorted(controls))})")
        if name in values:
            raise ResultRefused(f"field {name!r} answered twice")
        kind = region.get("type")
        if kind != _RESULT_TYPE[control.kind]:
            raise ResultRefused(f"field {name!r} has type {kind!r}, expected {_RESULT_TYPE[control.kind]!r}")
        value = region.get("value")
        if not isinstance(value, Mapping):
            raise ResultRefused(f"field {name!r} has no value")
        values[name] = _read_value(name, control, value, options)
    for name, control in controls.items():
        if control.required and name not in values:
            raise ResultRefused(f"field {name!r} is required but missing")
    return values


def _read_value(name: str, control: Control, value: Mapping[str, Any], options: Sequence[str]) -> Any:
    if control.kind == "rating":
        rating = value.get("rating")
        if isinstance(rating, bool) or not isinstance(rating, int | float) or rating != int(rating):
            raise ResultRefused(f"{name}: rating {rating!r} is not a whole number")
        if not 1 <= rating <= control.max_rating:
            raise ResultRefused(f"{name}: rating {int(rating)} is out of range 1–{control.max_rating}")
        return int(rating)
    if control.kind == "textarea":
        text = value.get("text")
        if isinstance(text, str):
            return text
        if isinstance(text, list) and all(isinstance(t, str) for t in text):
            return "\n".join(text)
        raise ResultRefused(f"{name}: text {text!r} is not text")
    chosen = value.get("choices")
    if not isinstance(chosen, list) or not all(isinstance(c, str) for c in chosen):
        raise ResultRefused(f"{name}: choices {chosen!r} are not a list of strings")
    allowed = tuple(options) if control.from_options else control.choices
    unknown = [c for c in chosen if c not in allowed]
    if unknown:
        raise ResultRefused(
            f"{name}: unknown option(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(allowed)})"
        )
    if len(set(chosen)) != len(chosen):
        raise ResultRefused(f"{name}: an option is chosen twice")
    if not chosen and control.required:
        raise ResultRefused(f"{name}: nothing chosen")
    if not control.multiple and len(chosen) > 1:
        raise ResultRefused(f"{name}: {len(chosen)} options chosen where one is asked")
    return list(chosen)
