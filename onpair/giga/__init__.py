"""The Pairwise GIGA family: Kar et al.'s online pairwise gradient descent and Huai et al.'s private
variants, online (:class:`PairwiseGIGA`, :class:`OnPairStrC`, :class:`OnPairC`) and offline
(:class:`OffPairStrC`, :class:`OffPairC`), over one set of state objects and compiled kernels."""

from .offline import OffPairC, OffPairStrC
from .onpairc import OnPairC
from .onpairstrc import OnPairStrC
from .pairwise_giga import PairwiseGIGA

__all__ = ["PairwiseGIGA", "OnPairStrC", "OnPairC", "OffPairStrC", "OffPairC"]
