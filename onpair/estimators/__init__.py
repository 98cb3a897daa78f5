"""Offline private pairwise estimators with scikit-learn's API (no scikit-learn needed at run time)."""

from ._base import NotFittedError
from .gradient_perturbation import GradientPerturbedGD
from .offpair import OffPairC, OffPairStrC
from .output_perturbation import OutputPerturbedSGD
from .statistics import OffPairStats

__all__ = ["OffPairStats", "OffPairStrC", "OffPairC", "GradientPerturbedGD", "OutputPerturbedSGD", "NotFittedError"]
