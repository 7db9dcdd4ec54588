"""``[screen]`` in ``curate.toml``: the screening steps in order, and their settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .rules import RuleSettings

DuplicatePolicy = Literal["annotate", "block"]

StepName = Literal["length", "speech", "language", "image", "score", "select", "annotate"]
DEFAULT_STEPS: list[StepName] = ["length", "speech", "language", "image", "score", "select", "annotate"]
"""Cheap rules first, the model's scores on what they keep, selection, then annotation of the selected only."""


ModelTask = Literal["score", "book_meta", "conditions", "speech"]
MODEL_TASKS: tuple[ModelTask, ...] = ("score", "book_meta", "conditions", "speech")
TASK_SECTIONS: dict[str, tuple[str, ...]] = {
    "score": ("score",),
    "book_meta": ("book_meta", "annotate"),
    "conditions": ("conditions", "annotate"),
    "speech": ("speech", "annotate"),
}
"""Which ``[screen.model.<step>]`` sections answer a model task, first match first; then ``[screen.model]``."""


class BackendSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: str = ""
    """``replay:FILE``, ``openai:URL[,URL…]#MODEL``, ``transformers:PATH`` or ``vllm:PATH`` (relative
    replay files are read from the workspace folder)."""
    batch_size: int = Field(0, ge=0)
    """Requests per batch (0: the backend's own default); results are stored after every batch."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight at once over all servers of an ``openai:`` backend."""


class ModelSettings(BackendSettings):
    """``[screen.model]``: the backend of every model step, unless a ``[screen.model.<step>]`` names its own
    (``score``; ``annotate`` for book metadata, next-page conditions and speech together; or ``book_meta``,
    ``conditions``, ``speech`` one by one), as Omni-StoryBench used different models per step.
    ``curate screen --backend`` overrides ``[screen.model]`` only."""

    score: BackendSettings | None = None
    annotate: BackendSettings | None = None
    book_meta: BackendSettings | None = None
    conditions: BackendSettings | None = None
    speech: BackendSettings | None = None

    def for_task(self, task: str, default_backend: str | None = None) -> BackendSettings:
        """The settings that answer ``task``: its own section, then ``annotate``, then ``[screen.model]``
        (whose backend ``default_backend`` replaces when given)."""
        for section in TASK_SECTIONS[task]:
            found = getattr(self, section)
            if found is not None and found.backend:
                return found
        backend = default_backend or self.backend
        return BackendSettings(backend=backend, batch_size=self.batch_size, concurrency=self.concurrency)


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
    prompts: str = ""
    """A folder (relative to the workspace) of prompt files replacing the packaged ones by name
    (``book_meta.system.txt``, ``score.user.txt``, …; see the screening prompts reference); empty: App. D's
    prompts as shipped."""


class StorySettings(BaseModel):
    """``[story]`` in ``curate.toml``."""

    model_config = ConfigDict(extra="forbid")
    duplicates: DuplicatePolicy = "annotate"
    """``annotate`` (Omni-StoryBench's choice): transitions in a duplicate cluster are released with the
    cluster named in ``duplicate_clusters`` (a ``duplicate:<cluster>`` warning); ``block``: they are held until
    a maintainer resolves the cluster."""
