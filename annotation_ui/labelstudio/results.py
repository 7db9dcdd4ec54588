"""Reading Label Studio results against the controls a labeling config declares.

Label Studio stores whatever a client sends (an unknown ``from_name`` or ``to_name``, a rating of 15 on a
1–10 scale), so every pulled annotation is checked here; anything unexpected refuses the whole annotation.
Each control's ``to_name`` and result type are read from the labeling config that was sent to the server
(:func:`bind_controls`), so the checks cannot drift from what annotators were shown.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
    to_name: str = ""
    """The object tag the control annotates, from the labeling config (see :func:`bind_controls`)."""


_RESULT_TYPE = {"choices": "choices", "rating": "rating", "textarea": "textarea"}
_CONTROL_TAGS = {"choices": "choices", "rating": "rating", "textarea": "textarea"}
"""Control tags of a labeling config (lower case) and the result ``type`` Label Studio gives their regions."""


def config_controls(label_config: str) -> dict[str, tuple[str, str]]:
    """The control tags of a labeling config: ``name`` -> (result type, ``toName``)."""
    found: dict[str, tuple[str, str]] = {}
    for element in ET.fromstring(label_config).iter():
        kind = _CONTROL_TAGS.get(element.tag.lower())
        if kind is not None:
            found[element.attrib["name"]] = (kind, element.attrib["toName"])
    return found


def bind_controls(label_config: str, rules: Mapping[str, Control]) -> dict[str, Control]:
    """The value rules with each control's ``to_name`` taken from the config; both must name the same controls."""
    declared = config_controls(label_config)
    if set(declared) != set(rules) or any(declared[n][0] != _RESULT_TYPE[c.kind] for n, c in rules.items()):
        raise ValueError(f"labeling config declares {sorted(declared.items())}, the rules {sorted(rules)}")
    return {name: replace(control, to_name=declared[name][1]) for name, control in rules.items()}


def misfits(result: Sequence[Mapping[str, Any]], label_config: str) -> list[str]:
    """Result regions no control of the config can hold (what makes Label Studio refuse a config change)."""
    declared = {(name, to, kind) for name, (kind, to) in config_controls(label_config).items()}
    return [
        f"from_name={r.get('from_name')}, to_name={r.get('to_name')}, type={r.get('type')}"
        for r in result
        if isinstance(r, Mapping) and (r.get("from_name"), r.get("to_name"), r.get("type")) not in declared
    ]


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
        if not isinstance(region, Mapping):
            raise ResultRefused(f"a result region is {type(region).__name__}, not an object")
        name = region.get("from_name")
        control = controls.get(name) if isinstance(name, str) else None
        if control is None:
            raise ResultRefused(f"unknown field {name!r} (the labeling config has {', '.join(sorted(controls))})")
        if name in values:
            raise ResultRefused(f"field {name!r} answered twice")
        if control.to_name and region.get("to_name") != control.to_name:
            raise ResultRefused(
                f"field {name!r} points at {region.get('to_name')!r}, but the labeling config has it "
                f"annotate {control.to_name!r}"
            )
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


def prefill_regions(values: Mapping[str, Any], controls: Mapping[str, Control]) -> tuple[dict[str, Any], ...]:
    """Starting values as result regions of a prediction, which Label Studio shows as the annotation's start."""
    regions = []
    for name, value in values.items():
        control = controls[name]
        if control.kind == "textarea":
            body: dict[str, Any] = {"text": [value]}
        elif control.kind == "choices":
            body = {"choices": [value]}
        else:
            body = {"rating": value}
        regions.append(
            {"from_name": name, "to_name": control.to_name, "type": control.kind, "value": body, "origin": "prediction"}
        )
    return tuple(regions)
