"""Offline private pairwise estimators with scikit-learn's API (no scikit-learn needed at run time); a
face: each lives in its family's package (:mod:`onpair.statistics`, :mod:`onpair.giga`,
:mod:`onpair.batch`, :mod:`onpair.objective`), on the shared base :mod:`onpair.core.estimator`."""

from ..batch import GradientPerturbedGD, OutputPerturbedSGD
from ..core.fitting import NotFittedError
from ..giga import OffPairC, OffPairStrC
from ..objective import ApproxMinimaPerturbedLogistic, ObjectivePerturbedLogistic
from ..statistics import OffPairStats

__all__ = ["ObjectivePerturbedLogistic", "ApproxMinimaPerturbedLogistic", "OffPairStats", "OffPairStrC", "OffPairC",
           "GradientPerturbedGD", "OutputPerturbedSGD", "NotFittedError"]
