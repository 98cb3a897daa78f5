"""onpair: differentially private pairwise learning (AUC maximisation, bipartite ranking) on streams.

Online learners: :class:`OnPairStats` (continually released class statistics: a useful private model
at every round), Huai et al.'s :class:`OnPairStrC` and :class:`OnPairC`, and the non-private
:class:`PairwiseGIGA`. Offline estimators with scikit-learn's API: :class:`OffPairStats` (one release of
the class statistics), Huai et al.'s Alg. 3, 4
:class:`OffPairStrC`, :class:`OffPairC`, Kang et al.'s :class:`GradientPerturbedGD` and Yang et al.'s
:class:`OutputPerturbedSGD`; logistic regression (pointwise or pairwise) by objective perturbation,
:class:`ObjectivePerturbedLogistic`, and approximate minima perturbation, :class:`ApproxMinimaPerturbedLogistic`.
Accounting and mechanisms: :mod:`onpair.privacy`.
"""

from ._version import __version__

__all__ = ["OnPairStats", "OnPairStrC", "OnPairC", "PairwiseGIGA", "OffPairStats", "OffPairStrC", "OffPairC", "GradientPerturbedGD", "OutputPerturbedSGD", "ObjectivePerturbedLogistic",
           "ApproxMinimaPerturbedLogistic", "FeatureBounds", "PrivacyBudgetExceeded",
           "PrivacyWarning", "NoiseDominatedWarning", "load", "__version__"]


def _import_public():
    """Import every public name (numba kernels, scipy): on first use, so that ``import onpair.cli`` and
    ``onpair --help`` stay fast."""
    from .core.bounds import FeatureBounds
    from .learners import OnPairC, OnPairStats, OnPairStrC, PairwiseGIGA  # first: the order of savable learners
    from .estimators import (ApproxMinimaPerturbedLogistic, GradientPerturbedGD, ObjectivePerturbedLogistic,
                             OffPairC, OffPairStats, OffPairStrC, OutputPerturbedSGD)
    from .persistence import load
    from .privacy import NoiseDominatedWarning, PrivacyBudgetExceeded, PrivacyWarning

    found = locals()
    globals().update({name: found[name] for name in __all__ if name in found})


def __getattr__(name):
    if name in __all__:
        _import_public()
        return globals()[name]
    raise AttributeError(f"module 'onpair' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
