"""stats.json: composition counts and the random baselines of TRIAD App. E.7.

Random Acc_q = (1/N) * sum_i 1/|Y_i| over the N released items (|Y_i| = item i's option count);
random Acc_g = (1/G) * sum_g prod_{i in g} 1/|Y_i| over the G released scene groups, because a group counts
only when every sister is answered correctly. Both use the empirical option counts and group sizes.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from curation.vocab import MODALITIES


def random_baselines(items: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Expected accuracy of uniform guessing, as fractions (the paper prints percentages)."""
    options_by_group: dict[str, list[int]] = defaultdict(list)
    per_item: list[float] = []
    for item in items:
        n = len(item["options"])
        per_item.append(1.0 / n)
        options_by_group[item["group"]].append(n)
    if not per_item:
        raise ValueError("random baselines are undefined for a release without items")
    acc_q = math.fsum(per_item) / len(per_item)
    acc_g = math.fsum(math.prod(1.0 / n for n in counts) for counts in options_by_group.values()) / len(
        options_by_group
    )
    return {"acc_q": round(acc_q, 6), "acc_g": round(acc_g, 6)}


def _counts(values: Iterable[Any]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(values).items(), key=lambda kv: str(kv[0]))}


def release_stats(items: list[Mapping[str, Any]], agreement: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every figure the card and datasheet quote, computed from the released records only."""
    groups: dict[str, int] = Counter(i["group"] for i in items)
    return {
        "items": len(items),
        "groups": len(groups),
        "by_language": _counts(i["language"] for i in items),
        "by_taxonomy_leaf": {
            m: _counts(i[f"taxonomy_{m}"] for i in items if i.get(f"taxonomy_{m}") is not None)
            for m in MODALITIES
            if not items or any(f"taxonomy_{m}" in i for i in items)
        },
        "by_tier": _counts(i["tier"] for i in items),
        "by_perturbed": _counts(i["perturbed"] for i in items),
        "by_group_size": _counts(groups.values()),
        "by_option_count": _counts(len(i["options"]) for i in items),
        "mean_group_size": round(len(items) / len(groups), 4) if groups else None,
        "random_baseline": random_baselines(items),
        "agreement": dict(agreement) if agreement else None,
    }
