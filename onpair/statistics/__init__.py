"""The statistics family (the default learner): private pairwise learning from released per-class counts,
sums and second moments, continually after every record (:class:`OnPairStats`) or once
(:class:`OffPairStats`); every model is post-processing of the release."""

from .offline import OffPairStats
from .online import OnPairStats

__all__ = ["OnPairStats", "OffPairStats"]
