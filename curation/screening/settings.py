"""``[screen]`` in ``curate.toml``: the screening steps in order, and their settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .rules import RuleSettings

DuplicatePolicy = Literal["annotate", "block"]

StepName = Literal["length", "speech", "language", "image", "score", "select", "annotate"]
DEFAULT_STEPS: list[StepName] = ["length", "speech", "language", "image", "score", "select", "annotate"]
"""Cheap rules first, the model's scores on what they keep, selection, then annotation of the selected only."""


class ModelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: str = ""
    """``replay:FILE``, ``openai:URL[,URL…]#MODEL``, ``transformers:PATH`` or ``vllm:PATH`` (relative
    replay files are read from the workspace folder); ``curate screen --backend`` overrides it."""
    batch_size: int = Field(0, ge=0)
    """Requests per batch (0: the backend's own default); results are stored after every batch."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight at once over all servers of an ``openai:`` backend."""


class ScreenSettings(BaseModel):
    """``[screen]`` in ``curate.toml``: the steps, in order, and their settings."""

    model_config = ConfigDict(extra="forbid")
    steps: list[StepName] = Field(default_factory=lambda: list(DEFAULT_STEPS))
    rules: RuleSettings = RuleSettings()
    model: ModelSettings = ModelSettings()
    min_score: float = Field(1.0, ge=1, le=10)
    """Candidates whose mean of the four criteria is lower are dropped at ``score``."""
    per_book: int = Field(1, ge=1)
    top: int = Field(1000, ge=1)


class StorySettings(BaseModel):
    """``[story]`` in ``curate.toml``."""

    model_config = ConfigDict(extra="forbid")
    duplicates: DuplicatePolicy = "annotate"
    """``annotate`` (Omni-StoryBench's choice): transitions in a duplicate cluster are released with the
    cluster named in ``duplicate_clusters`` (a ``duplicate:<cluster>`` warning); ``block``: they are held until
    a maintainer resolves the cluster."""
