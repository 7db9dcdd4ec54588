"""How sisters' options differ, for the group reviewer (TRIAD §3.4 allows minimal wording or cardinality
adjustments across sisters; the group reviewer judges them, unless ``[review] group_options = "exact"``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class OptionDifference:
    """One option key whose text is not the same in every sister; ``texts`` is None where a sister lacks it."""

    key: str
    texts: dict[str, str | None]


def option_differences(options_by_item: Mapping[str, Mapping[str, str]]) -> list[OptionDifference]:
    """The option keys on which sisters differ (wording, or present in some sisters only), in key order."""
    keys = sorted({key for options in options_by_item.values() for key in options})
    differences = []
    for key in keys:
        texts = {item: options.get(key) for item, options in sorted(options_by_item.items())}
        if len(set(texts.values())) > 1:
            differences.append(OptionDifference(key, texts))
    return differences
