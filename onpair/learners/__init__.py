"""Online pairwise learners (a face: each lives in its family's package): the non-private Pairwise GIGA,
the private OnPairStrC / OnPairC (output perturbation of the iterate; :mod:`onpair.giga`), and
OnPairStats (continually released class statistics; :mod:`onpair.statistics`)."""

from ..giga import OnPairC, OnPairStrC, PairwiseGIGA
from ..statistics import OnPairStats

__all__ = ["PairwiseGIGA", "OnPairStrC", "OnPairC", "OnPairStats"]
