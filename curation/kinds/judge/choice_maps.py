"""How judges and people choose (Judge Anything §3.3, Table 6 and Fig. 5).

Choice rates: per source (the people, each judge as ``<judge>/<setting>``) and criterion, the shares of pair
samples whose final choice is ``first``, ``second`` or ``tie`` — the people's majority, a judge's majority
of its samples, exactly what the accuracies compare — overall and per modality pair. A judge that prefers
one side or never calls a tie shows here (the paper: GPT-4o "disproportionately selects a certain choice").

Rubric maps: per source, the Pearson correlation of every two criteria (overall first, then the six rubrics)
over the samples where the source gave both: for pairs the choice coded ``first`` +1, ``tie`` 0,
``second`` -1; for scores the 1–5 value. People who judge each rubric on its own show low rubric–overall
correlations; a judge that repeats its overall verdict shows correlations near 1. ``None`` where a criterion
is constant over the samples (the correlation is undefined) or fewer than two samples have both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .rubrics import CHOICES, CRITERIA

CHOICE_SIGN = np.array([1.0, -1.0, 0.0])
"""first, second, tie (the report's choice indices) as the ordered values the pair maps correlate."""


def _rates(codes: np.ndarray) -> dict[str, Any]:
    """Shares of first / second / tie among the defined codes (-1: none given)."""
    given = codes[codes >= 0]
    n = int(given.size)
    return {"n": n, **{c: (float(np.sum(given == k)) / n if n else None) for k, c in enumerate(CHOICES)}}


def choice_rates(
    sources: Mapping[str, np.ndarray], groups: np.ndarray, group_names: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """source → {"all": {criterion: rates}, "by_modality_pair": {pair: {criterion: rates}}}, criteria a source
    never answered left out."""
    out: dict[str, dict[str, Any]] = {}
    for source, choices in sources.items():
        entry: dict[str, Any] = {"all": {}, "by_modality_pair": {}}
        for c, criterion in enumerate(CRITERIA):
            if not np.any(choices[:, c] >= 0):
                continue
            entry["all"][criterion] = _rates(choices[:, c])
            for g, group in enumerate(group_names):
                rates = _rates(choices[groups == g, c])
                if rates["n"]:
                    entry["by_modality_pair"].setdefault(group, {})[criterion] = rates
        out[source] = entry
    return out


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    sx, sy = float(np.sqrt(np.sum(dx * dx))), float(np.sqrt(np.sum(dy * dy)))
    scale = max(1.0, float(np.max(np.abs(x))), float(np.max(np.abs(y))))
    if sx <= 1e-12 * scale * np.sqrt(x.size) or sy <= 1e-12 * scale * np.sqrt(y.size):
        return None
    return float(np.sum(dx * dy) / (sx * sy))


def correlation_map(values: np.ndarray) -> dict[str, Any] | None:
    """samples × criteria values (NaN where not given) → the criteria given and their correlation matrix and
    pair counts; None when fewer than two criteria were given (an ``overall``-only judge has no map)."""
    given = [c for c in range(len(CRITERIA)) if np.any(np.isfinite(values[:, c]))]
    if len(given) < 2:
        return None
    matrix: list[list[float | None]] = []
    counts: list[list[int]] = []
    for i in given:
        row, row_n = [], []
        for j in given:
            both = np.isfinite(values[:, i]) & np.isfinite(values[:, j])
            row.append(_pearson(values[both, i], values[both, j]))
            row_n.append(int(np.sum(both)))
        matrix.append(row)
        counts.append(row_n)
    return {"criteria": [CRITERIA[c] for c in given], "pearson": matrix, "n": counts}


def choice_values(choices: np.ndarray) -> np.ndarray:
    """Choice codes (samples × criteria, -1 none) as +1 first, 0 tie, -1 second, NaN where none was given."""
    return np.where(choices >= 0, CHOICE_SIGN[np.maximum(choices, 0)], np.nan)


def correlation_maps(sources: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """source → its map (sources with fewer than two criteria left out)."""
    maps = {source: correlation_map(values) for source, values in sources.items()}
    return {source: m for source, m in maps.items() if m is not None}
