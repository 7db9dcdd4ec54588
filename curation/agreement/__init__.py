"""Agreement statistics: Krippendorff's alpha, Cohen's and Fleiss' kappa, bootstraps, judge–human agreement.

Pure functions over :class:`Ratings` (read with :func:`read_ratings`). A statistic without a defined
value raises :class:`UndefinedStatistic` (exit code 1) with a message that says why, never NaN.
"""

from .alpha import LEVELS, krippendorff_alpha
from .bootstrap import Interval
from .errors import UndefinedStatistic
from .estimate import Estimate
from .judge import (
    PairRow,
    ScoreRow,
    bradley_terry,
    elo_ratings,
    pair_accuracy,
    score_agreement,
    score_agreement_by_criterion,
)
from .kappa import WEIGHTS, cohen_kappa, fleiss_kappa, raw_agreement
from .ratings import Ratings, ratings_from_matrix, ratings_from_rows, read_ratings

__all__ = [
    "LEVELS",
    "WEIGHTS",
    "Estimate",
    "Interval",
    "PairRow",
    "Ratings",
    "ScoreRow",
    "UndefinedStatistic",
    "bradley_terry",
    "cohen_kappa",
    "elo_ratings",
    "fleiss_kappa",
    "krippendorff_alpha",
    "pair_accuracy",
    "ratings_from_matrix",
    "ratings_from_rows",
    "raw_agreement",
    "read_ratings",
    "score_agreement",
    "score_agreement_by_criterion",
]
