"""Disjoint blocks, each released once at the full ρ: estimates of a stationary stream beyond the counting bound.

The continual-counting lower bound (the error of the last prefix is at least ≈ 1 + ln(T)/π times one release
at the same ρ; the BLT reaches it) is a bound for releasing **every prefix sum with equal weights**. A model
of a stationary stream needs an estimate of the stream's statistics at each time, not the prefix sums.

**Schedule (public).** The stream is cut at public boundaries 0 = b_0 < b_1 < b_2 < … into disjoint blocks
B_j = {b_j + 1, …, b_{j+1}} of sizes n_j = b_{j+1} − b_j: n_0 = ``first_block`` and n_{j+1} = ⌈n_j·r⌉ (the
``ratio`` r; an IEEE product and a ceiling, so the boundaries are the same on every machine), the last one
cut at the ``horizon`` if there is one. When record b_{j+1} arrives, block j's sum S_j = Σ_{s∈B_j} v_s is
released **once**, r_j = S_j + σ·z_j with z_j ~ N(0, I_k) and σ = Δ·(1 + 10⁻⁹)/√(2ρ): the whole ρ.

**Cost (exact): ρ for the whole stream, of any length.** Neighbouring streams differ in one record, replaced
at one position s (‖v_s − v'_s‖₂ ≤ Δ). Position s lies in exactly one block j (the blocks partition the
positions, whatever the data). The release r_j depends only on the records of block j and on its own
normals z_j; every other release r_i (i ≠ j) is the same function of the same inputs under both streams. So
the pair of release sequences differs only in r_j, a Gaussian mechanism of ℓ2 sensitivity Δ and noise σ:
Δ²/(2σ²) ≤ ρ in zCDP (Bun & Steinke 2016, Prop. 1.6). This is parallel composition over disjoint parts of
the stream (each record in one block; ρ per block = ρ in total). It holds for adaptively chosen records too
(each record a function of the earlier releases): given the releases so far, the later blocks' releases are
the same mechanism on the same inputs under both streams and add nothing (adaptive composition). Every
estimate below is post-processing of (r_0, r_1, …) with public weights, and costs nothing more. In the
encoder language of :mod:`onpair.privacy.continual`: the released rows are E·V + σZ with E the block
indicator matrix, each column holding a single 1, so κ² = 1.

**Estimate (what** :meth:`BlockRelease.estimate` **returns).** After t records, with the blocks 0 … B−1
completed (N = b_B records in them) and a stationary stream (E v_s = v̄ for every s), the estimate of the
statistics **of the N records of the completed blocks**, N·v̄, combines the releases with public weights:

* ``weighting="size"`` (default): Ŝ = (N / Σ_j n_j²)·Σ_j n_j r_j. Its noise has per-coordinate variance
  σ²·N²/Σ_j n_j².
* ``weighting="equal"``: Ŝ = Σ_j r_j, the exact sum of the completed blocks plus noise of variance B·σ².

Why "size". The learners use the release only through **ratios** (means Ŝ_c/n̂_c, second moments over
counts, covariances), so what matters is the noise of a block mean r_j/n_j (variance σ²/n_j²). The
inverse-variance combination of the block means, μ̂ = Σ_j n_j² (r_j/n_j) / Σ_j n_j² = Σ_j n_j r_j / Σ_j n_j²,
is the unbiased linear combination of least variance, σ²/Σ_j n_j²; "size" is that combination scaled by N,
so that its counts read as the N completed records (the decoders' noise floors and ridges see the public
noise level of this very estimate). "equal" gives the mean Σ_j r_j / N of variance B·σ²/N²; by
Cauchy–Schwarz (Σ_j n_j)² ≤ B·Σ_j n_j², so "size" is never worse, equal only when every block has the same
size. For doubling blocks (r = 2) Σ_j n_j² ≈ (4/3)·n_{B−1}² and N ≈ 2·n_{B−1}: the variance of "size" is
≈ 3σ², i.e. a noise ≈ 1.73 times that of **one** release over all N records, whatever the stream length,
against ≈ √B for "equal" and ≈ 3.3 (T = 10³), 4.0 (10⁴), 5.5 (10⁶) for the optimal prefix-sum factorisation
(/work/shared/design/ALGORITHMS.md §15; docs/continual_release.md, "Blocks"). The latest block alone
(the prototype) has variance σ²/n_{B−1}², ×1.33 that of "size". Both weightings are unbiased for N·v̄ on a
stationary stream; under drift "size" weighs the recent, larger blocks more.

The price is **staleness**: the estimate moves only when a block completes (a model up to r/(r − 1) block
lengths old, i.e. the whole stream is learned at the end of each block but not inside it), and before the
first block completes it is 0 (no statistics: the learners' data-independent start).

**Fresh share φ (``fresh_share``, default 0: the above).** Against the staleness, block j is released in
two ways: its sum once at its end at (1 − φ)ρ (σ_b = Δ(1 + 10⁻⁹)/√(2(1 − φ)ρ)), and its running prefix sums
continually at φρ by a :class:`~onpair.privacy.continual.BufferedToeplitz` over its n_j records, restarted
each block (that class with ``horizon`` = n_j and ``final_share`` = 1 − φ: exactly these two releases, and at
the block's end their inverse-variance combination r_j, of public variance V_j). *Cost:* the two releases of
one block compose sequentially, (1 − φ)ρ + φρ = ρ (zCDP, adaptive composition; the factorisation's own proof
is :mod:`~onpair.privacy.continual.blt`'s, over n_j records), and position s lies in block j only, so the
releases of every other block are the same mechanism on the same inputs under both streams: ρ in all
(parallel composition over blocks, as above). Both privacy rows are reported (one shape; they add).
*Estimate:* the current block's m = t − N records give c, its released prefix, of public variance V_c(m);
c/m and r_j/n_j are unbiased for v̄ on a stationary stream with public variances V_c(m)/m² and V_j/n_j², so
``"size"`` returns t·μ̂ with μ̂ their inverse-variance combination (weights n_j²/V_j and m²/V_c(m); variance
t²/(Σ_j n_j²/V_j + m²/V_c(m))): an estimate of the statistics of all t records, whose counts are read as t.
``"equal"`` returns Σ_j r_j + c, the exact total plus noise of variance Σ_j V_j + V_c(m). Measured (bench/
blocks.py, synthetic streams): φ = 0.1 and 0.25 lose accuracy against φ = 0 on SEA and a 7-class Gaussian
stream at ε = 1, so the default is 0. Noise rows: one per record and one per block end, in stream order.

**Forgetting (``half_life`` H, fresh share 0 only).** Under drift a model must forget, so the blocks must stay
short beside H. *Schedule (public):* the sizes grow from n_0 as above but are capped at
L = max(n_0, ⌈c·H⌉) (c = :data:`CAP_PER_HALF_LIFE`): n_{j+1} = min(max(n_j + 1, ⌈n_j·r⌉), L), so after a few
blocks every block holds L records and the model is never more than about L records stale. *Estimate
(weighting "decayed")*: with γ = 2^(−1/H), N = e_{B−1} the end of the last completed block and e_j block j's
end, Ŝ = Σ_{j<B} γ^(N − e_j)·r_j, kept as W ← γ^{n_j}·W + r_j when block j completes (the older blocks age by
its n_j records). Its noise has the exact, public per-coordinate variance σ²·Σ_{j<B} γ^(2(N − e_j))
(``variance(t)``; the blocks of L in closed form, a geometric series of ratio γ^(2L)). Its mean is
Σ_j γ^(N − e_j)·S_j: each record weighs the weight of its block, between γ^(N − s) and γ^(N − s)·γ^{−L} for a
record at s, so the learners, which read ratios (means, covariances), see a forgetting profile within a factor
γ^L (2^{−c}) of the exact decay γ^(N − s). *Cost: ρ for any stream length*, by the proof above unchanged: the
cap only moves the public boundaries (every position still lies in exactly one block, whatever the data), each
block's release r_j = S_j + σz_j is still a Gaussian mechanism of sensitivity Δ and noise σ on its own
records, so neighbouring streams differ in one release, Δ²/(2σ²) ≤ ρ (parallel composition; adaptively chosen
records as above); the decayed weights γ^(N − e_j) are public (H, the schedule), so Ŝ and its variance are
post-processing and cost nothing. *Against the decayed BLT* (:class:`~onpair.privacy.continual.DecayedBLT`,
a release after every record): with the blocks of L the stationary variance is σ²/(1 − 2^{−2L/H}), i.e.
3.41 Gaussian releases' worth at c = 1/4 (6.29 at c = 1/8, 2.00 at c = 1/2), against ≈ 8.9 for the BLT at
H = 1,000; its counts read Σ_j γ^(N − e_j)·n_j ≈ L/(1 − 2^{−L/H}) = 1,571 records at H = 1,000, c = 1/4
(1,443 = 1/(1 − γ) for the BLT), so the noise of a mean is ×0.32 the BLT's in variance at c = 1/4 (×0.65 at
1/8, ×0.16 at 1/2), paid for by the staleness: the model moves every L records, not after every record.
Measured on bench/drift.py's synthetic streams: bench/results/blocks.md, "Forgetting by blocks under drift".
The default of ``OnPairStats(half_life=...)`` stays the BLT (:func:`onpair.statistics.online_config.resolve_mechanism`).

Memory and work: two k-vectors (the current block's noiseless sum and Σ_j w_j r_j); O(k) per record; k
normals per completed block. A block fed in one call equals its records fed one at a time, bit for bit (the
sums are added in stream order by one kernel, the normals drawn in block order).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from ..gaussian import gaussian_rho
from ._kernels import add_rows_in_order
from ._noise import draw_normals
from .base import PrefixSumMechanism
from .blt import BufferedToeplitz
from .decayed import check_half_life, decay_of
from .limits import check_int, check_real, check_state_size, noise_scales

__all__ = ["BlockRelease", "DEFAULT_FIRST_BLOCK", "DEFAULT_RATIO", "DEFAULT_FRESH_SHARE", "WEIGHTINGS", "MIN_RATIO",
           "CAP_PER_HALF_LIFE", "MAX_LISTED_ENDS",
           "MAX_RATIO", "MAX_FRESH_SHARE"]

#: The first block's length n_0 of the default schedule (records).
DEFAULT_FIRST_BLOCK = 32
#: The growth ratio of the default schedule: doubling blocks.
DEFAULT_RATIO = 2.0
#: The ratios accepted: above 1 so that the blocks grow (at most 62/log₂(r) + 1 ≈ 880 blocks up to 2^62
#: records at the smallest), at most 64.
MIN_RATIO = 1.05
MAX_RATIO = 64.0
#: φ of the default schedule: the share of ρ spent on the continual release inside the current block (0: none).
DEFAULT_FRESH_SHARE = 0.0
#: The largest φ accepted (the block's one release keeps at least 1 % of ρ).
MAX_FRESH_SHARE = 0.99
#: How the completed blocks' releases are combined (module docstring).
WEIGHTINGS = ("size", "equal", "decayed")
#: c of the cap L = max(n_0, ⌈c·H⌉) on the block sizes with a half-life H, chosen among 1/8, 1/4 and 1/2 on
#: bench/drift.py's synthetic streams (bench/results/blocks.md; docs/forgetting.md, "Blocks with a half-life"):
#: mean whole-stream AUC 0.844 / 0.859 / 0.863 against the decayed BLT's 0.830, worst cell 0.000 / −0.030 / −0.075.
CAP_PER_HALF_LIFE = 0.25
#: The most block ends :meth:`BlockRelease.block_ends` lists without a ``count``.
MAX_LISTED_ENDS = 1 << 20


class _Schedule:
    """The public block ends b_1 < b_2 < … up to ``capacity`` as a sequence (``len``, ``[j]``): the geometric
    blocks n_0 = ``first``, n_{j+1} = max(n_j + 1, ⌈n_j·r⌉) while they are smaller than the ``cap`` L (all of them
    without a cap), listed with Σ n_j² (``squares``), then blocks of L, computed, the last cut at the capacity."""

    def __init__(self, first, ratio, capacity, cap):
        ends, squares, end, size, total = [], [0], 0, first, 0
        while end < capacity and (cap is None or size < cap):
            size = min(size, capacity - end)
            end += size
            total += size * size
            ends.append(end)
            squares.append(total)
            size = max(size + 1, math.ceil(size * ratio))
        self.geometric, self.squares, self.base, self.cap, self.capacity = ends, squares, end, cap, capacity
        self.tail = 0 if cap is None else -(-(capacity - end) // cap)  # the blocks of L (the last one cut)

    def __len__(self):
        return len(self.geometric) + self.tail

    def __getitem__(self, j):
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(f"block {j} is beyond the schedule's {len(self)} blocks")
        g = len(self.geometric)
        return self.geometric[j] if j < g else min(self.base + (j - g + 1) * self.cap, self.capacity)

    def end_after(self, t):
        """The end of the block that record t + 1 falls in (0 ≤ t < capacity): the next block end after t."""
        if self.cap is None or t < self.base:
            return self.geometric[bisect.bisect_right(self.geometric, t)]
        return min(self.base + ((t - self.base) // self.cap + 1) * self.cap, self.capacity)

    def blocks_at(self, t):
        """The blocks completed after t records (0 ≤ t ≤ capacity)."""
        if self.cap is None or t < self.base:
            return bisect.bisect_right(self.geometric, t)
        done = len(self.geometric) + (t - self.base) // self.cap
        return done + 1 if t == self.capacity and (t - self.base) % self.cap else done

    def decayed_squares(self, blocks, gamma):
        """Σ_{j<B} γ^{2(N − e_j)} (B = ``blocks`` ≥ 1, N = e_{B−1}): the geometric blocks one by one, the blocks
        of L in closed form (a geometric series of ratio q = γ^{2L}; the last one may be cut at the capacity)."""
        g, N, gamma2 = len(self.geometric), self[blocks - 1], gamma * gamma
        total = 0.0
        if blocks > g:
            m = blocks - 1 - g  # full blocks of L before the last one
            log_q = self.cap * math.log(gamma2)
            total += 1.0 + gamma2 ** (N - (self[blocks - 2] if blocks > 1 else 0)) * (-math.expm1(m * log_q)
                                                                               / -math.expm1(log_q))
        return total + sum(gamma2 ** (N - self.geometric[j]) for j in range(min(blocks, g)))

    def blocks_at_array(self, t):
        """:meth:`blocks_at` of every entry of an int64 array of t < capacity (entries below 0 count 0 blocks)."""
        out = np.searchsorted(np.array(self.geometric, dtype=np.int64), t, side="right")
        if self.cap is not None:
            tail = t >= self.base
            out[tail] = len(self.geometric) + (t[tail] - self.base) // self.cap
        return out


class BlockRelease(PrefixSumMechanism):
    """Disjoint public blocks of geometric sizes, each block's sum released once at the full ρ, combined over
    the completed blocks with public weights (module docstring: the schedule, the cost with its proof, the
    estimate and why it weighs blocks by their size).

    Parameters
    ----------
    dim : int
        k ≥ 1, the length of every record.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0 of the whole stream, of any length (every block's release costs Δ²/(2σ²) ≤ ρ).
    first_block : int, default 32
        n_0, the first block's length (public).
    ratio : float, default 2.0
        r in [1.05, 64]: n_{j+1} = ⌈n_j·r⌉ (public).
    weighting : {"size", "equal", "decayed"} or None, default None
        The public weights of the completed blocks' releases (module docstring); None: "size", or "decayed" (the
        only one) with a ``half_life``.
    fresh_share : float, default 0
        φ in [0, 0.99]: the share of ρ spent on releasing the current block's prefix sums continually (a BLT
        restarted each block); each block's one release gets (1 − φ)ρ (module docstring: cost and estimate).
    horizon : int or None
        Records accepted in all (the last block is cut there, so the stream's last records are released
        at the horizon); None: unbounded.
    half_life : float or None, default None
        H in records (public; checked as :func:`~onpair.privacy.continual.decayed.check_half_life` checks it):
        blocks capped at L = max(``first_block``, ⌈c·H⌉), weighed by the decay γ^(N − e_j) (module docstring,
        "Forgetting"); ``fresh_share`` must be 0. None: no forgetting.

    Examples
    --------
    >>> import numpy as np
    >>> mech = BlockRelease(dim=2, sensitivity=1.0, rho=0.5, first_block=4)
    >>> est = mech.add_block(np.ones((13, 2)), np.random.default_rng(0), return_estimates=True)
    >>> mech.block_ends(3), mech.n_released     # blocks of 4 and 8 records completed, 1 record pending
    ([4, 12, 28], 12)
    >>> bool(np.array_equal(est[4], est[10]))     # nothing moves inside a block
    True
    >>> round(mech.variance() / mech.describe()["sigma"] ** 2, 6)    # 12² / (4² + 8²)
    1.8
    >>> decayed = BlockRelease(dim=1, sensitivity=1.0, rho=0.5, first_block=4, half_life=40.0)
    >>> decayed.block_cap, decayed.block_ends(5)     # L = max(4, ⌈40/4⌉) = 10
    (10, [4, 12, 22, 32, 42])
    """

    kind = "blocks"
    option = "blocks"

    def __init__(self, *, dim, sensitivity, rho, first_block=DEFAULT_FIRST_BLOCK, ratio=DEFAULT_RATIO,
                 weighting=None, fresh_share=DEFAULT_FRESH_SHARE, horizon=None, half_life=None):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        self._first = check_int(first_block, "first_block", maximum=2**40)
        self._half_life = None if half_life is None else check_half_life(half_life)
        check_real(ratio, "ratio")
        if not MIN_RATIO <= float(ratio) <= MAX_RATIO:  # NaN fails too
            raise ValueError(f"ratio must lie in [{MIN_RATIO:g}, {MAX_RATIO:g}], got {ratio!r} (blocks must grow: "
                             "equal blocks never get better without forgetting)")
        self._ratio = float(ratio)
        if weighting is None:  # the default: "size" for a stationary stream, the decay with a half-life
            weighting = "size" if self._half_life is None else "decayed"
        if not isinstance(weighting, str):
            raise TypeError(f"weighting must be one of {WEIGHTINGS} or None, got {weighting!r} "
                            f"({type(weighting).__name__})")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS} or None, got {weighting!r}")
        if (weighting == "decayed") != (self._half_life is not None):
            raise ValueError(f"weighting={weighting!r} with half_life={half_life!r}: the weighting 'decayed' is the "
                             "one of a half-life, and a half-life weighs the blocks by its decay (weighting None "
                             "chooses)")
        self._weighting = weighting
        check_real(fresh_share, "fresh_share")
        if not 0.0 <= float(fresh_share) <= MAX_FRESH_SHARE:  # NaN fails too
            raise ValueError(f"fresh_share must lie in [0, {MAX_FRESH_SHARE:g}], got {fresh_share!r}")
        if self._half_life is not None and float(fresh_share) > 0.0:
            raise ValueError(f"fresh_share={fresh_share!r} with half_life={half_life!r}: the decayed blocks are "
                             "released once each (fresh_share 0); set one of them")
        self._fresh = float(fresh_share)
        # With a half-life: γ = 2^(−1/H) and the cap L = max(n_0, ⌈c·H⌉) on the block sizes (public).
        self._decay = None if self._half_life is None else decay_of(self._half_life)
        self._cap = None if self._half_life is None else max(self._first, math.ceil(CAP_PER_HALF_LIFE * self._half_life))
        check_state_size(2 * self.dim, f"dim={self.dim!r}")
        self._sigma = float(noise_scales(np.array([self.sensitivity]), np.array([self.rho * (1.0 - self._fresh)]),
                                         self.sensitivity, self.rho)[0])
        # The public schedule, up to the capacity: block ends b_1 < b_2 < … (the geometric ones listed with their
        # Σ_{j<B} n_j², exact integers; with a half-life, blocks of L after them, computed).
        self._ends = _Schedule(self._first, self._ratio, self.capacity, self._cap)
        self._squares = self._ends.squares
        self._current = np.zeros(self.dim)   # the current block's noiseless sum (secret)
        self._weighted = np.zeros(self.dim)  # Σ_j w_j r_j over the completed blocks (released values)
        # With a fresh share: the public variances V_j of the blocks' combined releases and the cumulative
        # weights Σ_{j<B} n_j²/V_j (extended on demand), and the current block's factorisation.
        self._block_variances, self._pooled = [], [0.0]
        self._inner = self._inner_for(0) if self._fresh > 0.0 and self._ends else None

    # -- public parameters --------------------------------------------------------------------------
    @property
    def first_block(self) -> int:
        """int: n_0, the first block's length."""
        return self._first

    @property
    def ratio(self) -> float:
        """float: r, the growth ratio of the block sizes."""
        return self._ratio

    @property
    def weighting(self) -> str:
        """str: how the completed blocks are combined ("size" or "equal")."""
        return self._weighting

    @property
    def fresh_share(self) -> float:
        """float: φ, the share of ρ spent on the continual release inside the current block (0: none)."""
        return self._fresh

    @property
    def half_life(self):
        """float or None: H in records (the decayed blocks), or None (no forgetting)."""
        return self._half_life

    @property
    def block_cap(self):
        """int or None: L = max(n_0, ⌈c·H⌉), the largest block of a half-life (None: no cap)."""
        return self._cap

    def get_params(self) -> dict:
        """The constructor's arguments (``half_life`` only when given: states written before it existed, and every
        state without one, name none; :meth:`from_state` reads a missing one as None)."""
        params = {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "first_block": self._first,
                  "ratio": self._ratio, "weighting": self._weighting, "fresh_share": self._fresh,
                  "horizon": self.horizon}
        if self._half_life is not None:
            params["half_life"] = self._half_life
        return params

    @classmethod
    def from_state(cls, params, scalars, arrays):
        """:meth:`PrefixSumMechanism.from_state`, a missing ``half_life`` read as None (see :meth:`get_params`)."""
        if isinstance(params, dict) and "half_life" not in params:
            params = dict(params, half_life=None)
        if isinstance(scalars, dict) and isinstance(scalars.get("params"), dict) \
                and "half_life" not in scalars["params"]:
            scalars = dict(scalars, params=dict(scalars["params"], half_life=None))
        return super().from_state(params, scalars, arrays)

    def _size(self, block: int) -> int:
        return self._ends[block] - (self._ends[block - 1] if block else 0)

    def _inner_for(self, block: int) -> BufferedToeplitz:
        """Block ``block``'s own release with a fresh share φ: a factorisation of its prefix sums at φρ and one
        release of its sum at its end at (1 − φ)ρ (``final_share`` = 1 − φ), over its n_j records."""
        return BufferedToeplitz(dim=self.dim, sensitivity=self.sensitivity, rho=self.rho, horizon=self._size(block),
                                final_share=1.0 - self._fresh)

    def _block_variance(self, block: int) -> float:
        """V_j (fresh share only): the variance of block j's combined release of its sum (public)."""
        while len(self._block_variances) <= block:
            j = len(self._block_variances)
            size = self._size(j)
            inner = self._inner if self._inner is not None and self._inner.horizon == size else self._inner_for(j)
            variance = inner.variance(size)
            self._block_variances.append(variance)
            self._pooled.append(self._pooled[-1] + size * size / variance)
        return self._block_variances[block]

    def _pooled_weight(self, blocks: int) -> float:
        """Σ_{j<B} n_j²/V_j (fresh share only; public)."""
        if blocks:
            self._block_variance(blocks - 1)
        return self._pooled[blocks]

    def block_ends(self, count=None) -> list:
        """The first ``count`` block ends b_1, b_2, … (public; default every one up to the capacity, refused when
        that is more than :data:`MAX_LISTED_ENDS`: a half-life's blocks of L up to an unbounded capacity)."""
        if count is None:
            if len(self._ends) > MAX_LISTED_ENDS:
                raise ValueError(f"block_ends() would list {len(self._ends):,} block ends (blocks of {self._cap} "
                                 f"records up to {self.capacity:,}): pass count")
            count = len(self._ends)
        count = min(check_int(count, "count", minimum=0), len(self._ends))
        return [self._ends[j] for j in range(count)]

    def block_of(self, positions) -> np.ndarray:
        """The block index j of each stream position p ≥ 1 (b_j < p ≤ b_{j+1}; public), an int64 array of the
        shape of ``positions`` (integers in [1, capacity]; unchecked: for :mod:`onpair.privacy.replay`)."""
        return self._ends.blocks_at_array(np.asarray(positions, dtype=np.int64) - 1)

    def completed(self, t=None) -> int:
        """B, the number of blocks completed after ``t`` records (default ``n_seen``)."""
        t = self._n_seen if t is None else check_int(t, "t", minimum=0, maximum=self.capacity)
        return self._ends.blocks_at(t)

    @property
    def n_released(self) -> int:
        """int: N, the records of the completed blocks (public): the records the estimate describes."""
        blocks = self.completed()
        return self._ends[blocks - 1] if blocks else 0

    def coefficient(self, t: int, block: int) -> float:
        """The public weight of block ``block``'s release r_j in the estimate after ``t`` records (0 until the
        block completes): N/Σn_i²·n_j ("size") or 1 ("equal")."""
        blocks = self.completed(t)
        if block >= blocks:
            return 0.0
        if self._weighting == "equal":
            return 1.0
        if self._decay is not None:
            return self._decay ** (self._ends[blocks - 1] - self._ends[block])
        size = self._size(block)
        if self._fresh > 0.0:
            t = self._n_seen if t is None else t
            return t * (size / self._block_variance(block)) / (self._pooled_weight(blocks) + self._fresh_weight(t))
        return self._ends[blocks - 1] * size / self._squares[blocks]

    # -- adding records -----------------------------------------------------------------------------
    def _noise_rows(self, t0, m):
        blocks = self.completed(t0 + m) - self.completed(t0)
        return blocks + m if self._fresh > 0.0 else blocks

    #: With a fresh share, each record takes a row and each block end one more.
    _rows_per_record = 2

    def _apply(self, V, Z, out=None, nodes=None):
        """Feed the records of ``V`` with Z's rows, one per block they complete (in order)."""
        lo, m, row = 0, V.shape[0], 0
        while lo < m:
            end = self._ends.end_after(self._n_seen)
            hi = min(m, lo + end - self._n_seen)
            if self._fresh > 0.0:
                # the current block's factorisation, its normals the next hi − lo rows (in record order)
                inner_out = None if out is None else np.empty((hi - lo, self.dim))
                self._inner._apply(V[lo:hi], Z[row:row + hi - lo], inner_out)
                row += hi - lo
                if out is not None:
                    for i in range(hi - lo):
                        out[lo + i] = self._combine(self._n_seen + i + 1, inner_out[i])
            elif out is not None:
                out[lo:hi] = self.estimate()  # nothing moves inside a block
            add_rows_in_order(V[lo:hi], self._current)
            self._n_seen += hi - lo
            if self._n_seen == end:
                self._complete(Z[row])
                row += 1
                if out is not None:
                    out[hi - 1] = self.estimate()
            lo = hi

    # -- the single-record step of a compiled caller ----------------------------------------------------
    def sum_step(self) -> np.ndarray:
        """What a caller that computes a record's row in its own compiled call adds it to (fresh share 0 only:
        the statistics family's single-record path): the current block's noiseless sum, float64 (k,), updated
        in place (``sum += row``, as :func:`~onpair.privacy.continual._kernels.add_rows_in_order` adds one
        row). The caller checks the capacity first (:attr:`n_seen` < :attr:`capacity`), adds the row, then
        calls :meth:`count_step`: the same arithmetic, normals and state as :meth:`add_block` of the row, bit
        for bit. The array is replaced when a block completes: ask for it before every record."""
        if self._fresh > 0.0:
            raise ValueError(f"sum_step() is for fresh_share=0 (a record adds to the block's sum and draws no "
                             f"noise); this release has fresh_share={self._fresh:g}: use add_block")
        return self._current

    def count_step(self, rng) -> None:
        """Count one record added through :meth:`sum_step`; when it completes its block, release the block
        (its k normals the next ones of ``rng``, as :meth:`add_block` draws them)."""
        end = self._ends.end_after(self._n_seen)
        self._n_seen += 1
        if self._n_seen == end:
            z = np.empty(self.dim)
            draw_normals(rng, z)
            self._complete(z)

    def _complete(self, z) -> None:
        """Release the block that record ``n_seen`` completes: r = S + σz, folded into Σ_j w_j r_j."""
        blocks = self.completed()
        size = self._size(blocks - 1)
        if self._fresh > 0.0:
            # the block's one release at (1 − φ)ρ (the factorisation's final release, its normals z), combined
            # with the factorisation's estimate at the block's end by inverse variances (BufferedToeplitz)
            inner = self._inner
            inner._final = inner._prefix_sum + inner._final_sigma * z
            released = inner.estimate()
            weight = size / self._block_variance(blocks - 1) if self._weighting == "size" else 1.0
            self._inner = self._inner_for(blocks) if blocks < len(self._ends) else None
        else:
            released = self._current + self._sigma * z
            weight = float(size) if self._weighting == "size" else 1.0
        if self._decay is not None:  # W ← γ^{n_j}·W + r_j: the older blocks age by this block's records
            self._weighted = self._decay ** size * self._weighted + released
        else:
            self._weighted = self._weighted + weight * released
        self._current = np.zeros(self.dim)

    # -- releases -----------------------------------------------------------------------------------
    def _scale(self, blocks: int) -> float:
        if blocks == 0 or self._weighting != "size":
            return 1.0
        return self._ends[blocks - 1] / self._squares[blocks]

    def _fresh_weight(self, t: int) -> float:
        """m²/V_cur(m): the public weight of the current block's mean after t records (m of them in it)."""
        blocks = self.completed(t)
        m = t - (self._ends[blocks - 1] if blocks else 0)
        if m == 0:
            return 0.0
        inner = self._inner if self._inner is not None and self._inner.horizon == self._size(blocks) \
            else self._inner_for(blocks)
        return m * m / inner.variance(m)

    def _combine(self, t: int, current: np.ndarray) -> np.ndarray:
        """The estimate after t records (fresh share) from the completed blocks' Σ_j w_j r_j and the current
        block's released prefix ``current``."""
        blocks = self.completed(t)
        m = t - (self._ends[blocks - 1] if blocks else 0)
        if self._weighting == "equal":
            return self._weighted + current if m else self._weighted.copy()
        fresh = self._fresh_weight(t)
        total = self._pooled_weight(blocks) + fresh
        if total == 0.0:
            return np.zeros(self.dim)
        pooled = self._weighted + (fresh / m) * current if m else self._weighted
        return (t / total) * pooled

    def estimate(self) -> np.ndarray:
        """The estimate of the completed blocks' statistics, N·v̄ (zeros before the first block completes);
        with a fresh share, of all t = ``n_seen`` records, t·v̄ (module docstring)."""
        if self._fresh > 0.0:
            current = self._inner.estimate() if self._inner is not None and self._inner.n_seen else None
            return self._combine(self._n_seen, current if current is not None else np.zeros(self.dim))
        return self._scale(self.completed()) * self._weighted

    def _variance(self, t):
        blocks = self.completed(t)
        if self._fresh > 0.0:
            m = t - (self._ends[blocks - 1] if blocks else 0)
            fresh = self._fresh_weight(t)
            if self._weighting == "equal":
                inner = self._inner_for(blocks) if m else None
                return sum(self._block_variance(j) for j in range(blocks)) + (inner.variance(m) if m else 0.0)
            total = self._pooled_weight(blocks) + fresh
            return t * t / total if total else 0.0
        if blocks == 0:
            return 0.0
        if self._weighting == "equal":
            return blocks * self._sigma ** 2
        if self._decay is not None:
            return self._sigma ** 2 * self._ends.decayed_squares(blocks, self._decay)
        count = self._ends[blocks - 1]
        return self._sigma ** 2 * (count * count / self._squares[blocks])

    def _inner_rho(self) -> tuple:
        """(σ, κ², ρ) of the factorisation inside the current block (fresh share; the last block's at the end)."""
        blocks = min(self.completed(), len(self._ends) - 1)
        inner = self._inner if self._inner is not None else self._inner_for(blocks)
        d = inner.describe()
        return d["sigma"], d["kappa2"], gaussian_rho(self.sensitivity * math.sqrt(d["kappa2"]), d["sigma"])

    def describe(self) -> dict:
        """Public summary: ``kind``, ``first_block``, ``ratio``, ``weighting``, ``fresh_share`` (φ), ``half_life``
        and ``block_cap`` (H and L, None without forgetting), ``sigma``
        (one block's release), ``kappa2`` (1: a record is in one block, released once), ``rho_spent_bound``
        (Δ²/(2σ²) ≤ ρ, the whole stream's cost; with a fresh share, plus the current block's factorisation's
        Δ²κ²/(2σ_f²), every block's ≤ φρ: the sum ≤ ρ), ``blocks_completed``, ``n_released`` (N),
        ``next_block_end`` (None at the horizon), ``composition``, and the common fields."""
        out = self._common_description()
        blocks = self.completed()
        spent = gaussian_rho(self.sensitivity, self._sigma)
        if self._fresh > 0.0:
            spent += self._inner_rho()[2]
        out.update(first_block=self._first, ratio=self._ratio, weighting=self._weighting, fresh_share=self._fresh,
                   half_life=self._half_life, block_cap=self._cap, sigma=self._sigma, kappa2=1.0, rho_spent_bound=spent,
                   blocks_completed=blocks, n_released=self.n_released,
                   next_block_end=self._ends[blocks] if blocks < len(self._ends) else None,
                   composition="parallel over blocks" + (", sequential within a block" if self._fresh else ""))
        return out

    def privacy_rows(self) -> list:
        """One row for the whole schedule (``what``, ``level`` None, ``nodes_released`` = blocks released so
        far, ``sigma``, ``kappa2`` 1, ``rho`` = Δ²/(2σ²)): every block costs that much and holds its own
        records, so the stream costs it once (parallel composition). With a fresh share φ, a second row of the
        same shape for the factorisation inside each block (``nodes_released`` = records released through
        it, ``sigma`` and ``kappa2`` the current block's, ``rho`` ≤ φρ, every block's): the rows add."""
        capped = "" if self._cap is None else f", at most {self._cap} records (half-life {self._half_life:g})"
        rows = [{"what": f"disjoint blocks (first {self._first} records, ratio {self._ratio:g}{capped}), each released "
                         f"once at {'the full rho' if not self._fresh else f'a share {1 - self._fresh:g} of rho'}, "
                         f"weighting {self._weighting!r}", "level": None,
                 "nodes_released": self.completed(), "sigma": self._sigma, "kappa2": 1.0,
                 "rho": gaussian_rho(self.sensitivity, self._sigma)}]
        if self._fresh > 0.0:
            sigma, kappa2, rho = self._inner_rho()
            rows.append({"what": f"the current block's prefix sums, a BLT factorisation restarted each block (share "
                                 f"{self._fresh:g} of rho)", "level": None,
                         "nodes_released": self._n_seen - self.completed(), "sigma": sigma, "kappa2": kappa2,
                         "rho": rho})
        return rows

    # -- persistence --------------------------------------------------------------------------------
    _FRESH = ("prefix_sum", "noise_sum", "buffers")

    def _array_shapes(self):
        return self._array_shapes_at(self._n_seen)

    def _array_shapes_at(self, n_seen):
        shapes = {"current": (self.dim,), "weighted": (self.dim,)}
        if self._fresh > 0.0 and self._ends:
            inner = self._inner_for(min(self.completed(n_seen), len(self._ends) - 1))
            shapes.update({f"fresh_{name}": shape for name, shape in inner._array_shapes().items() if name != "final"})
        return shapes

    def _export_arrays(self):
        arrays = {"current": self._current.copy(), "weighted": self._weighted.copy()}
        if self._fresh > 0.0 and self._ends:
            inner = self._inner if self._inner is not None else self._inner_for(len(self._ends) - 1)
            arrays.update({f"fresh_{name}": value for name, value in inner._export_arrays().items() if name != "final"})
        return arrays

    def _import_arrays(self, n_seen, arrays):
        blocks = self.completed(n_seen)
        if blocks == 0 and np.any(arrays["weighted"] != 0.0):
            raise ValueError(f"arrays['weighted'] is not zero, but n_seen={n_seen} completes no block "
                             "(inconsistent with n_seen)")
        at_end = n_seen == 0 or (blocks and n_seen == self._ends[blocks - 1])
        if at_end and np.any(arrays["current"] != 0.0):
            raise ValueError(f"arrays['current'] is not zero, but n_seen={n_seen} ends a block: no record is "
                             "pending (inconsistent with n_seen)")
        inner = None
        if self._fresh > 0.0 and blocks < len(self._ends):
            inner = self._inner_for(blocks)
            m = n_seen - (self._ends[blocks - 1] if blocks else 0)
            try:
                inner._import_arrays(m, {name: arrays[f"fresh_{name}"].copy() for name in self._FRESH})
            except ValueError as err:
                raise ValueError(f"the current block's factorisation (fresh_*): {err}") from None
            inner._n_seen = m
        elif self._fresh > 0.0 and any(np.any(arrays[f"fresh_{name}"] != 0.0) for name in self._FRESH):
            raise ValueError(f"arrays['fresh_*'] are not zero, but n_seen={n_seen} is the horizon: no block is "
                             "pending (inconsistent with n_seen)")
        self._current = arrays["current"]
        self._weighted = arrays["weighted"]
        self._inner = inner
