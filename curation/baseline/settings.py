"""``[baseline]`` in ``curate.toml``: the human baseline campaign's defaults (TRIAD §5.1: 100 queries, 3 raters)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BaselineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: int = Field(100, ge=1)
    """Items in the subset (TRIAD: a cost-controlled 100-query subset); all of the pool when it is smaller."""
    raters: int = Field(3, ge=1)
    """Raters per item (TRIAD: three); nobody rates an item they authored or reviewed."""
    seed: int = 0
    """Seed of the subset's draw and of the raters' assignment: the same seed and pool give the same campaign."""
    bootstrap: int = Field(1000, ge=1)
    """Bootstrap resamples (of scene groups) for the report's confidence intervals."""
    confidence: float = Field(0.95, gt=0, lt=1)
    """Confidence level of those intervals."""
