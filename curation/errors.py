"""One root exception for everything omnicurate raises on purpose.

Users catch :class:`CurateError`; the CLI turns it into a one-line message and exit code 2
(bad input) or 1 (a check that found problems).
"""

from __future__ import annotations

from dataclasses import dataclass


class CurateError(Exception):
    """Root of every error omnicurate raises deliberately."""

    exit_code = 2


class WorkspaceError(CurateError):
    """The workspace is missing, unreadable or of an unknown schema."""


class NotFoundError(CurateError, LookupError):
    """A named item, group, person or file does not exist."""


class PermissionDenied(CurateError, PermissionError):
    """A person lacks the role for an action, or tries to review their own item."""


class MediaError(CurateError):
    """A media file is unreadable, unsafe or not what it claims to be."""


@dataclass(frozen=True)
class Problem:
    """One validation problem, located as ``FILE:LINE: field: message``."""

    message: str
    field: str = ""
    line: int | None = None
    file: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [p for p in (where, self.field, self.message) if p]
        return ": ".join(parts)


class ValidationFailed(CurateError, ValueError):
    """Input was refused; carries every problem found, not only the first."""

    def __init__(self, problems: list[Problem], summary: str = "") -> None:
        self.problems = list(problems)
        self.summary = summary or f"{len(self.problems)} problem(s); nothing was changed"
        super().__init__("\n".join(str(p) for p in self.problems) + f"\n{self.summary}")


class CheckFailed(CurateError):
    """A check or verification found problems (exit code 1)."""

    exit_code = 1
