"""Offline private pairwise estimators with scikit-learn's API (no scikit-learn needed at run time)."""

from ._base import NotFittedError
from .offpair import OffPairC, OffPairStrC

__all__ = ["OffPairStrC", "OffPairC", "NotFittedError"]
