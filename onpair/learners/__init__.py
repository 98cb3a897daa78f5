"""Online pairwise learners: the non-private Pairwise GIGA and the private OnPairStrC / OnPairC."""

from .giga import PairwiseGIGA
from .onpairc import OnPairC
from .onpairstrc import OnPairStrC

__all__ = ["PairwiseGIGA", "OnPairStrC", "OnPairC"]
