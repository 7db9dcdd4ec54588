"""Results shared by the audio and image tools, and the size guard every decoder applies first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curation.config import MediaSettings
from curation.errors import MediaError

MEDIA_PROBLEMS = (
    "format",
    "size",
    "metadata",
    "sample_rate",
    "channels",
    "loudness",
    "clipping",
    "silence",
    "duration",
)
"""The ``<problem>`` part of ``media:<problem>`` reason codes."""


@dataclass(frozen=True)
class NormalizedMedia:
    """A normalized medium: its bytes, file extension, MIME type and the transform that made it."""

    data: bytes
    ext: str
    mime: str
    params: dict[str, Any]
    unchanged: bool
    """True when the input already conformed and ``data`` is the input (or its canonical rewrite)."""


@dataclass(frozen=True)
class MediaCheck:
    """Conformity of one medium: reason codes (``media:<problem>``) and a human detail per problem."""

    reasons: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.reasons


class _Findings:
    """Collects problems in a stable order for a :class:`MediaCheck`."""

    def __init__(self) -> None:
        self._details: dict[str, str] = {}

    def add(self, problem: str, detail: str) -> None:
        assert problem in MEDIA_PROBLEMS, problem
        self._details.setdefault(problem, detail)

    def result(self) -> MediaCheck:
        ordered = [p for p in MEDIA_PROBLEMS if p in self._details]
        return MediaCheck([f"media:{p}" for p in ordered], {f"media:{p}": self._details[p] for p in ordered})


def size_problem(size: int, name: str, settings: MediaSettings) -> str | None:
    """Why a file of ``size`` bytes is refused before any decoder sees it (empty, oversized), or None."""
    if not size:
        return f"{name}: the file is empty; replace it with a real recording or picture"
    if size > settings.max_file_mb * 1024 * 1024:
        return (
            f"{name}: the file is {size / 1024 / 1024:.1f} MB, over the limit of "
            f"{settings.max_file_mb:g} MB (media.max_file_mb in curate.toml); shrink it before importing"
        )
    return None


def guard_size(data: bytes, name: str, settings: MediaSettings | None) -> None:
    """Refuse empty and oversized files before any decoder sees them (``settings`` None: empty ones only)."""
    problem = size_problem(len(data), name, settings) if settings is not None else None
    if problem is None and not data:
        problem = size_problem(0, name, MediaSettings())
    if problem:
        raise MediaError(problem)
