"""The error raised when an agreement statistic has no defined value for the data given."""

from __future__ import annotations

from curation.errors import CheckFailed


class UndefinedStatistic(CheckFailed):
    """A statistic is undefined here (one coder, no variation, nothing pairable): exit code 1, never NaN."""
