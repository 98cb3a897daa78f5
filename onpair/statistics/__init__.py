"""The statistics family (the default learner): private pairwise learning from released per-class counts,
sums and second moments, along the stream (:class:`OnPairStats`: once per public block, or after every record) or once
(:class:`OffPairStats`); every model is post-processing of the release."""

from .offline import OffPairStats
from .online import OnPairStats

__all__ = ["OnPairStats", "OffPairStats"]
