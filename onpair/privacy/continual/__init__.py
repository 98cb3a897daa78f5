"""Continual release of prefix sums: a private estimate of S_t = Σ_{s≤t} v_s after every record.

A stream of vectors v_1, v_2, … ∈ R^k arrives one record at a time (or in blocks). Neighbouring
streams differ in one record, replaced: ‖v_t − v'_t‖₂ ≤ Δ (the public ``sensitivity``; the caller
guarantees it, e.g. by clipping). After every record the mechanism releases a noisy S_t. Every
mechanism here is a Gaussian mechanism on a linear image E·V of the stream, followed by
post-processing, so its zCDP cost is exact: ρ = Δ²·κ²/(2σ²) with κ the largest column norm of the
encoder E (``docs/algorithms.md`` §7 and §12; ``docs/continual_release.md``).

* :class:`TreeAggregation`: the binary tree (Dwork, Naor, Pitassi, Rothblum 2010; Chan, Shi, Song
  2011), with the bottom-up least-squares estimate of each complete subtree (Honaker 2015) or the
  plain sum of popcount(t) nodes. A known horizon T (L = ⌊log₂T⌋ + 1 levels, κ² = L) or an unbounded
  stream (level h gets ρ_h = ρ·6/(π²(h+1)²), which sums to less than ρ over all levels).
* :class:`BandedToeplitz`: the square-root factorisation A = B·C of the prefix-sum matrix (c_j =
  C(2j, j)/4^j; Fichtenberger, Henzinger, Upadhyay 2023) with C truncated to a band b, so that memory
  and time are O(b·k) and the cost κ² = Σ_{j<b} c_j² does not depend on the stream length.
* :class:`BufferedToeplitz`: a buffered-linear-Toeplitz (BLT) factorisation (Dvijotham et al. 2024; McKenna
  2024): C a rational Toeplitz matrix of m geometric buffers, fitted offline to within 0.2 % of the exact
  square root's error at a known horizon and within ×1.15 of it without one, in O(m·k) work and memory per
  record at any stream length (the default of the learners).
* :class:`DecayedBLT`: exponentially decayed sums Σ_s γ^{t−s} v_s (a public half-life, γ = 2^{−1/H}) by a BLT
  factorisation of the decayed workload, fitted offline to its square root: the whole unbounded stream costs
  ρ, and every release's error is bounded by a stationary variance (forgetting under drift).
* :class:`EpochTrees`: doubling epochs (T₀, 2T₀, 4T₀, … records), each a least-squares tree planned
  for its epoch's length with the whole ρ; a record lies in one epoch only (parallel composition), so
  the stream costs ρ for any length and the variance grows like (log t)² without a known horizon.
* :class:`BlockRelease`: not every prefix: disjoint public blocks of geometric sizes, each block's sum
  released once at the whole ρ (parallel composition), combined over the completed blocks with public
  weights. For a stationary stream its estimate has the noise of ≈ 1.7 releases over all the records it
  describes, at any length, paid for with staleness inside the current block (:mod:`~onpair.privacy.continual.blocks`).

The noise's standard normals are NumPy's from the caller's ``Generator``: ``rng.standard_normal``'s numbers,
or the same numbers drawn ahead by :class:`onpair.privacy.continual.normals.NormalBlock` (a compiled port of
NumPy's ziggurat, bit for bit), consumed in a fixed per-record order, so that a block equals its records fed
one at a time, bit for bit. Compiled kernels do add noise: the BLT step
(:mod:`onpair.privacy.continual._blt_kernels`) and the statistics family's fused per-record kernels take the
normals and add σ times their combination to the released sums. No kernel holds a random state of its own,
and every σ is computed from public quantities before the kernel runs.

Privacy unit: a record is a stream position. A record replayed k times (several passes over a data
set) is k positions: its cost is at most k²·ρ in zCDP (group privacy for a Gaussian mechanism:
sensitivity kΔ), and often less; :func:`onpair.privacy.replay.record_rho` gives it exactly from the
encoder (k·ρ for copies farther apart than the band of the factorisation).

The state (:meth:`PrefixSumMechanism.to_state`) holds noiseless partial sums and the noise itself:
it is as secret as the raw stream. For the same reason a mechanism refuses to be copied or pickled
(a copy fed a neighbouring stream would release noise that cancels in the difference).
"""

from __future__ import annotations

from .base import PrefixSumMechanism
from .blocks import BlockRelease
from .blt import BLTParameters, BufferedToeplitz
from .decayed import DecayedBLT
from .epochs import EpochTrees
from .limits import MAX_ENTRY, MAX_RECORDS, MAX_STATE_FLOATS
from .toeplitz import DEFAULT_BAND, BandedToeplitz, sqrt_toeplitz_coefficients
from .tree import TreeAggregation

__all__ = [
    "PrefixSumMechanism",
    "TreeAggregation",
    "BandedToeplitz",
    "EpochTrees",
    "BufferedToeplitz",
    "DecayedBLT",
    "BlockRelease",
    "BLTParameters",
    "sqrt_toeplitz_coefficients",
    "DEFAULT_BAND",
    "MAX_RECORDS",
    "MAX_ENTRY",
    "MAX_STATE_FLOATS",
]
