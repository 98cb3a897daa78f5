"""The Pairwise GIGA family: Kar et al.'s online pairwise gradient descent and Huai et al.'s private
variants, online (:class:`PairwiseGIGA`, :class:`OnPairStrC`, :class:`OnPairC`) and offline
(:class:`OffPairStrC`, :class:`OffPairC`), over one set of state objects and compiled kernels."""

# In this order, the order in which snapshots name the savable learners.
from .pairwise_giga import PairwiseGIGA  # isort: skip
from .onpairstrc import OnPairStrC  # isort: skip
from .onpairc import OnPairC  # isort: skip
from .offline import OffPairC, OffPairStrC  # isort: skip

__all__ = ["PairwiseGIGA", "OnPairStrC", "OnPairC", "OffPairStrC", "OffPairC"]
