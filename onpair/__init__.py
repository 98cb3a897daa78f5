"""onpair: differentially private pairwise learning (AUC maximisation, bipartite ranking) on streams.

Online learners (Huai et al. 2020): :class:`OnPairStrC`, :class:`OnPairC`, and the non-private
:class:`PairwiseGIGA`. Offline estimators with scikit-learn's API (Huai et al. Alg. 3, 4):
:class:`OffPairStrC`, :class:`OffPairC`, Kang et al.'s :class:`GradientPerturbedGD` and Yang et al.'s
:class:`OutputPerturbedSGD`. Accounting and mechanisms: :mod:`onpair.privacy`.
"""

from .bounds import FeatureBounds
from .estimators import GradientPerturbedGD, OffPairC, OffPairStrC, OutputPerturbedSGD
from .learners import OnPairC, OnPairStrC, PairwiseGIGA
from .persistence import load
from .privacy import PrivacyBudgetExceeded, PrivacyWarning

__version__ = "0.1.0"

__all__ = ["OnPairStrC", "OnPairC", "PairwiseGIGA", "OffPairStrC", "OffPairC", "GradientPerturbedGD", "OutputPerturbedSGD", "FeatureBounds", "PrivacyBudgetExceeded",
           "PrivacyWarning", "load", "__version__"]
