"""Offline private pairwise estimators with scikit-learn's API (no scikit-learn needed at run time)."""

from ..core.estimator import NotFittedError
from ..batch.gradient_perturbation import GradientPerturbedGD
from ..objective.estimators import ApproxMinimaPerturbedLogistic, ObjectivePerturbedLogistic
from ..giga.offline import OffPairC, OffPairStrC
from ..batch.output_perturbation import OutputPerturbedSGD
from ..statistics.offline import OffPairStats

__all__ = ["ObjectivePerturbedLogistic", "ApproxMinimaPerturbedLogistic", "OffPairStats", "OffPairStrC", "OffPairC", "GradientPerturbedGD", "OutputPerturbedSGD", "NotFittedError"]


def __getattr__(name):
    from .._moved import submodule

    return submodule(__name__, name)
