"""Online pairwise learners: the non-private Pairwise GIGA, the private OnPairStrC / OnPairC (output
perturbation of the iterate), and OnPairStats (continually released class statistics)."""

from ..giga.pairwise_giga import PairwiseGIGA
from ..giga.onpairc import OnPairC
from ..giga.onpairstrc import OnPairStrC
from ..statistics.online import OnPairStats

__all__ = ["PairwiseGIGA", "OnPairStrC", "OnPairC", "OnPairStats"]


def __getattr__(name):
    from .._moved import submodule

    return submodule(__name__, name)
