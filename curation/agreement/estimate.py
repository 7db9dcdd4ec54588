"""The value of an agreement statistic with what it was computed on, for printing and for ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field

from .bootstrap import Interval


@dataclass(frozen=True)
class Estimate:
    """One statistic on one ratings set; ``units`` counts the units that entered the computation."""

    statistic: str
    label: str
    value: float
    units: int
    coders: int
    ratings: int
    params: dict[str, object] = field(default_factory=dict)
    interval: Interval | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "statistic": self.statistic,
            **self.params,
            "value": self.value,
            "units": self.units,
            "coders": self.coders,
            "ratings": self.ratings,
            "ci": None if self.interval is None else self.interval.as_dict(),
        }

    def summary(self) -> str:
        """One line with the figure to 3 decimals, and its interval when there is one."""
        text = f"{self.label}: {self.value:.3f}"
        if self.interval is not None:
            ci = self.interval
            text += (
                f"  [{ci.confidence:.0%} CI {ci.low:.3f} to {ci.high:.3f};"
                f" {ci.resamples} resamples by {ci.by}, seed {ci.seed}]"
            )
        return text
