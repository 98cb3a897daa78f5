"""Private range discovery: per-feature bounds found from a block of records, inside a loose public box.

Every mechanism of the library calibrates its noise to the public box (docs/algorithms.md#public-bounds):
a feature whose data occupy 1/1000 of its declared range keeps 1/1000 of its signal-to-noise ratio. The
range finder spends a public share ρ of the budget on a block of m records (a stream's warm-up, or the
first records of an offline fit) and returns, per feature, a box inside the declared one that holds the
bulk of the data. The model is then learned in that box: records outside it are clipped to it, which is
part of the mechanism (as for the declared box).

The method: an adaptive histogram descent
------------------------------------------
For each feature, level 1 counts the records in ``bins[0]`` equal bins of the declared interval; the
noisy counts (Gaussian noise σ) pick a **run** of bins: the *anchor*, the bin with the largest noisy
count, accepted only if it, or it and its better neighbour together, clear a threshold that pure noise
crosses with probability at most ``beta`` (below); with ``span="significant"`` (the default) the run
reaches from the first to the last bin whose noisy count clears the anchor threshold (so separate values
of a discrete feature that each hold a resolvable share all stay inside: the guarantee below), then it is
extended by every contiguous neighbour whose noisy count is at least ``extend``·σ (``span="anchor"``, the
finder before issue 34: the contiguous run around the anchor only, which on a feature of values 0, 0.5, 1
in a loose box kept one of them). The run is accepted if its noisy count is at least ``coverage``·m
(m the block's size). The run widened by ``margin`` bins on each side (and cut to the declared box) is
the interval of level 2, which repeats the step with ``bins[1]`` bins, and so on; the result is the last
accepted run widened by ``final_margin`` bins. A feature whose level finds no accepted run keeps the
result of the level before: at level 1 that is the **declared box (the fallback for a feature whose
histogram is all noise)**. Records outside a level's interval are counted nowhere at that level.

Defaults, chosen on synthetic streams only (bench/studies/ranges_prototype.py; m = 500, 20 % of the ρ of ε = 1,
δ = 1e-5, OnPairStats after it, progressive AUC over 10,000 records, 6 seeds): three levels of 32 bins
(final bins of ≈ 1/3,600 of the declared width where the data are concentrated), margin 1, final margin 0,
coverage 0.5. The models want a *narrow* box: the noise is calibrated to its width, and clipping the tails
costs less than width (Gaussian classes, d = 5: a box of ±1σ beats the data's ±3σ range, 0.818 against
0.762 progressive AUC), so the result is the bulk of the data, not its full range. Two levels of (32, 64)
bins with a final margin of 1 (boxes 4–8× the data's range) lost 0.12–0.23 AUC; (64, 64) 0.03–0.14;
four levels 0.05–0.2 (more noise per level); 31 or 33 bins (the box's centre inside a bin) tie within the
seeds' spread on Gaussian classes and lose on the binary layout.

Alternatives measured at the same budget (bench/studies/ranges_prototype.py, section "geometry"): a log-scale
histogram of distances from the declared box's centre (Google's ``ApproxBounds``) is exact for data around
the centre but gives a box 100–250× wider than data that sit off-centre (in [400, 401] of [0, 1000] the
bins are 128 wide); a linear location histogram followed by a log-scale width around the located centre
inherits the location's resolution (≈ 6–20× wider), and its bins near the centre, finer than the data,
split the mass until none clears the threshold.

The thresholds (public). With b bins, σ the level's noise and Φ the normal distribution function, the
anchor is accepted if its noisy count is ≥ σ·Φ⁻¹(1 − β/(2b)) or its noisy count plus its larger
neighbour's is ≥ σ√2·Φ⁻¹(1 − β/(2(b − 1))). Over an interval that holds no record every count is pure
noise, and by the union bound over the b bins and the b − 1 adjacent pairs a false anchor has probability
at most β/2 + β/2 = β.

What the box keeps (``span="significant"``). Let L levels run, all with the noise σ (the plan's equal
split), z* = max_ℓ Φ⁻¹(1 − β/(2b_ℓ)) the largest anchor factor, and t > 0. If two values v < v' of
feature k (after clipping to the declared box) are each held by at least n* = (z* + t)·σ records of the
block, then with probability at least 1 − 2L·(1 − Φ(t)) over the noise the box found for feature k
contains both v and v' (up to floating-point rounding at a bin edge). Proof: at a level whose interval
holds v and v' (level 1: the declared one), all records of v lie in one bin and all of v' in one bin,
so those bins' counts are ≥ n* and each noisy count clears z*·σ ≥ z_ℓ·σ unless its noise is below −tσ
(probability 1 − Φ(t)); when both clear, the anchor exists and the run reaches from the first to the last
significant bin, so the level's box (run ± final margin) and the next level's interval (run ± margin)
hold both values. A level not accepted (coverage test, a box too narrow for float64) or a feature already
stopped keeps the box of the level before, which holds both by induction (the declared box at level 1).
The union bound over the 2L noise draws gives the probability. At m = 500 and 20 % of the ρ of ε = 1,
δ = 1e-5 (three levels, β = 0.05, z* ≈ 3.16, t = 2, probability ≥ 0.86): n* ≈ 105, 149, 183 and 317
records at d = 1, 2, 3 and 9 (σ ≈ 20, 29, 35, 61), so at d = 9 a value needs two-thirds of the block to
be guaranteed, and smaller shares are kept when their noisy counts happen to clear z*·σ (≈ 194 records).
Between the guarantee's shares a value may fall outside the box: it is then clipped to the box's nearer
edge (order is kept, but it merges with the values clipped there). A false bin (an empty bin whose noise
clears z_ℓ·σ, probability at most β/(2b_ℓ) each, β/2 per level and feature) widens the box of that level
up to that bin. Measured on synthetic streams only (bench/ranges.py, section ``discrete``): on nine features
of values 0 / 0.5 / 1 with unequal shares (4,000 records, 4 seeds) the AUC after the warm-up rose from 0.788
to 0.818 in a ±20 box and from 0.790 to 0.813 in a 1,000× off-centre box (tight box 0.857); Gaussian classes
(d = 5) and the binary layout did not move beyond the seeds' spread. Three levels stay the default: two
levels measured 0.848 at ±20 but 0.664 at 1,000× (one level 0.823 and 0.501), and how loose a declared box
is against the data is not public, so no public rule can pick fewer levels from it.

Privacy (replacement of one record, all d features and all levels together)
---------------------------------------------------------------------------
Level ℓ releases, for every feature k, the vector h_{ℓ,k} ∈ ℕ^{b_ℓ} of counts of the records (clipped to
the declared box) that fall in the bins of the interval I_{ℓ,k}; a record outside I_{ℓ,k} is counted
nowhere. I_{1,k} is the declared (public) interval, and I_{ℓ,k} for ℓ ≥ 2 is a function of the noisy
counts of the levels before, which are already released: given them, level ℓ is a fixed query.

*Sensitivity of one level.* Replace record x by x' (same position). In h_{ℓ,k} the record x is counted
in at most one bin and x' in at most one bin, so h_{ℓ,k}(X') − h_{ℓ,k}(X) = e_j' − e_j, e_j' or −e_j
(or 0), with e_j the j-th unit vector: ‖h_{ℓ,k}(X') − h_{ℓ,k}(X)‖₂² ≤ 2, with equality iff x and x' fall in
different bins of I_{ℓ,k}. Over the d features, which are released together,
‖h_ℓ(X') − h_ℓ(X)‖₂² = Σ_k ‖h_{ℓ,k}(X') − h_{ℓ,k}(X)‖₂² ≤ 2d: **Δ_ℓ = √(2d)**, attained (e.g. at level 1)
by x in the first bin and x' in the last bin of every feature.

*Cost.* Level ℓ adds N(0, σ_ℓ² I) to h_ℓ: a Gaussian mechanism with ρ_ℓ = Δ_ℓ²/(2σ_ℓ²) = d/σ_ℓ²-zCDP
(Bun & Steinke 2016, Prop. 1.6). The levels compose adaptively (each query is chosen from the earlier
noisy outputs only), so the finder is ρ = Σ_ℓ ρ_ℓ-zCDP, and, being a composition of Gaussian mechanisms,
exactly μ-GDP with μ = √(2ρ) (the ``"gaussian"`` conversion of :mod:`onpair.privacy.conversions` is
exact for it). Everything after the noise (anchors, runs, the fallback, the returned box) is
post-processing.

*Charged as zCDP, not as (ε, δ).* Nothing in the finder is a sparse-vector, stability or propose-test-release
step: the thresholds (anchor, pair, extend, coverage) are compared with noisy counts only, after the noise,
and the number of levels and of noise draws is a public function of m, d and ρ. So the finder's cost is
exactly the composition of its levels' Gaussian releases, and it is charged as such: one
:class:`onpair.privacy.events.GaussianRelease` per level (sensitivity √(2d), σ_ℓ, ρ_ℓ;
:func:`onpair.core.discovery.range_events`), never as an :class:`~onpair.privacy.events.ApproxDPRelease`. An
accountant with a ρ budget only (``ZCDPAccountant(rho)``) therefore pays for it, in the streaming learners and
in every offline estimator (whose (ε, δ) budget plans the finder's share as (ε_f, δ_f), i.e.
ρ_f = rho_from_dp(ε_f, δ_f, "gaussian"), an exact conversion for it: :func:`onpair.core.fitting.discovered_fit`);
only an estimator whose own release is an (ε, δ) one (objective perturbation, Yang et al.'s SGD) needs an
(ε, δ) budget, with or without discovery. The noise is drawn for every feature and every planned level whatever the data (a
feature whose anchor failed still gets its later levels' noise drawn and ignored), so the number of
draws, like the cost, depends on public quantities only. The planned levels are split equally:
σ_ℓ = √(2d)/√(2ρ/L)·(1 + 10⁻⁹), so that Σ_ℓ ρ_ℓ ≤ ρ in floating point.

*How many levels* (public rule). A level can only accept an anchor whose bin holds about
z·σ_ℓ records (z = Φ⁻¹(1 − β/(2b))), and σ_ℓ grows like √(L·d/ρ). With ``levels="auto"`` the finder runs
the largest L ≤ len(bins) whose anchor threshold is at most half the block, z·σ_L ≤ m/2; one level if
only z·σ₁ ≤ m; and **no level at all (the declared box, cost 0)** if even one level's threshold exceeds
the block, when no bin could ever clear it. m, d, ρ and the bins are public, so the rule is too.

How it degrades with d: the d histograms compose, so the noise per count grows like √d. At ρ = 20 % of
the ρ of ε = 1, δ = 1e-5 (ρ ≈ 0.0072), three levels of 32 bins and β = 0.05, the anchor threshold is
≈ 3.2·√(3d/0.0072) ≈ 65√d records (one level: ≈ 37√d): the warm-up of m = 500 runs three levels up to
d = 14, two from 15 to 22, one from 23 to 179, and nothing from d = 180 on (:func:`records_needed` gives
the m of a plan: three levels need 183, 388, 549, 914 and 1,293 records at d = 2, 9, 18, 50 and 100).
Fewer levels mean a coarser box (final bins of ≈ 1/3,600 of the declared width with three levels,
1/340 with two, 1/32 with one). Within a
plan, a feature whose data are spread thinly keeps the declared box (or a coarser level's run) more often
as d grows: its fallback is reported (``levels_accepted``).

Hostile inputs. NaN or ±inf: ValueError naming the record and feature (nothing is spent). Records outside
the declared box: clipped to it first (as the learners do). A constant feature, or every value at a
bound: its box shrinks around the value (a box of one or a few bins of the last level, still of
positive width, never outside the declared box). m = 1: no anchor can clear its threshold, and the
public rule returns the declared box at cost 0. Empty block, d = 0, a declared box with lower ≥ upper,
ρ ≤ 0: ValueError; a non-numeric block: TypeError.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from .checks import check_rho
from .gaussian import SIGMA_MARGIN, gaussian_rho

__all__ = ["DEFAULT_BINS", "DEFAULT_BETA", "DEFAULT_EXTEND", "DEFAULT_MARGIN", "DiscoveredBounds", "find_bounds",
           "finder_settings", "levels_to_run", "plan_cost", "result_params", "range_histograms", "records_needed",
           "planned_levels"]

#: Bins per level, at most three levels of 32 equal bins: level 1 bins the declared interval, levels 2 and 3
#: the run the level before accepted, widened by ``margin`` bins on each side. With one-bin runs and margin 1
#: the last level's bins are (3/32)²/32 ≈ 1/3,600 of the declared width; a run of r bins makes the next
#: interval (r + 2)/32 of the current one, and ``levels="auto"`` may plan fewer levels (two: ≈ 1/340; one:
#: 1/32; :func:`planned_levels`).
DEFAULT_BINS = (32, 32, 32)
#: The probability that a feature's level accepts a false anchor when the interval holds no record.
DEFAULT_BETA = 0.05
#: A neighbour joins the anchor's run if its noisy count is ≥ DEFAULT_EXTEND·σ.
DEFAULT_EXTEND = 2.0
#: Bins added on each side of the selected run to make the next level's interval.
DEFAULT_MARGIN = 1
#: Bins added on each side of the last accepted run to make the result.
DEFAULT_FINAL_MARGIN = 0
#: A run is accepted only if its noisy count is at least this share of the block (plus DEFAULT_CERTIFY
#: standard deviations of its noise).
DEFAULT_COVERAGE = 0.5
DEFAULT_CERTIFY = 0.0
#: How a level's run is formed: ``"significant"``, from the first to the last bin whose noisy count clears the
#: anchor threshold (every value of a discrete feature that holds a resolvable share stays inside), or
#: ``"anchor"``, the contiguous run around the densest bin (before issue 34: one atom of a discrete feature).
DEFAULT_SPAN = "significant"
SPANS = ("significant", "anchor")
#: ``levels="auto"`` runs the most levels whose anchor threshold is at most this share of the block.
ANCHOR_SHARE = 0.5
#: The largest number of bins of one level (a guard against a plan that allocates absurd arrays).
MAX_BINS = 1 << 16


@dataclass(frozen=True)
class DiscoveredBounds:
    """The per-feature box found by :func:`find_bounds`, its cost and its public description.

    Every field is public: a function of the public parameters and the noisy counts.

    Attributes
    ----------
    lower, upper : ndarray of float64, shape (d,)
        The discovered box, ``declared_lower ≤ lower < upper ≤ declared_upper``.
    declared_lower, declared_upper : ndarray of float64, shape (d,)
    levels_accepted : ndarray of int64, shape (d,)
        How many levels refined each feature: 0 means the declared interval was kept (the feature's
        histogram was all noise at level 1, or no level was run).
    rho : float
        The zCDP cost actually spent: the sum of the levels' Δ²/(2σ_ℓ²) (0 when no level was run), ≤ the
        finder's budget.
    sigmas : tuple of float
        The noise standard deviation of each level that was run.
    n_records : int
        m, the number of records of the block (public).
    params : dict
        bins, beta, extend, margin, levels (as given) and the plan's number of levels.
    """

    lower: np.ndarray
    upper: np.ndarray
    declared_lower: np.ndarray
    declared_upper: np.ndarray
    levels_accepted: np.ndarray
    rho: float
    sigmas: tuple
    n_records: int
    params: dict = field(default_factory=dict)

    @property
    def bounds(self):
        """``(lower, upper)``: pass it as ``bounds=`` to a learner."""
        return self.lower.copy(), self.upper.copy()

    @property
    def fallback(self) -> np.ndarray:
        """Boolean mask of the features that kept their declared interval."""
        return self.levels_accepted == 0

    @property
    def shrink(self) -> np.ndarray:
        """Declared width / discovered width per feature (≥ 1)."""
        return (self.declared_upper - self.declared_lower) / (self.upper - self.lower)

    def describe(self) -> dict:
        """A description for the privacy report: the method, the public parameters, one row per level
        (``what``, ``level``, ``bins``, ``sigma``, ``sensitivity``, ``rho``), ``rho_spent`` and the features
        that fell back to the declared box."""
        d = self.lower.shape[0]
        sensitivity = math.sqrt(2.0 * d)
        bins = self.params.get("bins", ())
        rows = [{"what": "range histogram", "level": i + 1, "bins": int(bins[i]), "sigma": float(s),
                 "sensitivity": sensitivity, "rho": float(gaussian_rho(sensitivity, s))}
                for i, s in enumerate(self.sigmas)]
        return {"mechanism": "private range finder: adaptive histogram descent, Gaussian noise "
                             "(onpair.privacy.ranges)",
                "n_records": self.n_records, "n_features": d, "levels_run": len(self.sigmas),
                "beta": self.params.get("beta"), "extend": self.params.get("extend"),
                "margin": self.params.get("margin"), "releases": rows, "rho_spent": float(self.rho),
                "fallback_features": np.flatnonzero(self.fallback).tolist()}


# -- validation ----------------------------------------------------------------------------------------

def _block(X) -> np.ndarray:
    """The block as a float64 (m, d) array, or TypeError/ValueError naming what is wrong."""
    if hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError("X must be a dense array of records, got a sparse matrix (use X.toarray())")
    arr = np.asarray(X)
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"X must hold real numbers (int or float), got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-D block of records (m, d), got shape {arr.shape}")
    m, d = arr.shape
    if m < 1 or d < 1:
        raise ValueError(f"X must hold at least one record of at least one feature, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        i, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"X[{i}, {k}] = {arr[i, k]!r} (record {i}, feature {k}) is not finite: the range finder "
                         "needs finite values (drop or impute missing values first)")
    return arr


def _box(lower, upper, d: int):
    try:
        lo = np.asarray(lower, dtype=np.float64)
        hi = np.asarray(upper, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lower and upper must be numbers or arrays of numbers, got {lower!r}, {upper!r}") from None
    try:
        lo, hi = (np.ascontiguousarray(np.broadcast_to(v, (d,))) for v in (lo, hi))
    except ValueError:
        raise ValueError(f"lower and upper must be scalars or arrays of the {d} features, got shapes "
                         f"{np.shape(lower)} and {np.shape(upper)}") from None
    bad = np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi) & (hi > lo)))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"the declared box must be finite with upper > lower; feature {k} has lower={lo[k]!r}, "
                         f"upper={hi[k]!r}")
    with np.errstate(over="ignore"):
        width = hi - lo
    if not np.all(np.isfinite(width)):
        k = int(np.flatnonzero(~np.isfinite(width))[0])
        raise ValueError(f"the declared box is too wide to represent: upper − lower overflows for feature {k}")
    return lo.copy(), hi.copy()


def _int_param(value, name: str, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
    return int(value)


def _bins(bins) -> tuple:
    if isinstance(bins, (str, bytes)) or not hasattr(bins, "__iter__"):
        raise TypeError(f"bins must be a sequence of integers (bins per level), got {bins!r}")
    values = tuple(_int_param(b, "bins", 2, MAX_BINS) for b in bins)
    if not values:
        raise ValueError("bins must list at least one level")
    return values


def _real(value, name: str, low: float, high: float, open_low: bool = False, open_high: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    ok = math.isfinite(v) and (v > low if open_low else v >= low) and (v < high if open_high else v <= high)
    if not ok:
        raise ValueError(f"{name} must lie in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}, "
                         f"got {value!r}")
    return v


# -- the public rule and the counts --------------------------------------------------------------------

def _level_sigma(n_features: int, rho: float, n_levels: int) -> float:
    """σ of each of ``n_levels`` equal shares of ρ for counts of sensitivity √(2d)."""
    return math.sqrt(2.0 * n_features) * SIGMA_MARGIN / math.sqrt(2.0 * rho / n_levels)


def _anchor_z(b: int, beta: float) -> float:
    return float(norm.isf(beta / (2.0 * b)))


def _pair_z(b: int, beta: float) -> float:
    return float(norm.isf(beta / (2.0 * max(b - 1, 1))))


def planned_levels(n_records: int, n_features: int, rho: float, bins=DEFAULT_BINS, beta: float = DEFAULT_BETA) -> int:
    """The number of levels ``levels="auto"`` runs (a function of public quantities only).

    The largest L ≤ len(bins) such that every level's anchor threshold z_ℓ·σ_L is at most m/2; 1 if only
    one level's threshold is at most m; 0 (no release, the declared box) otherwise.

    Examples
    --------
    >>> from onpair.privacy import rho_from_dp
    >>> rho = 0.2 * rho_from_dp(1.0, 1e-5, method="gaussian")
    >>> [planned_levels(500, d, rho) for d in (2, 14, 15, 22, 23, 179, 180)]
    [3, 3, 2, 2, 1, 1, 0]
    """
    bins = _bins(bins)
    for n_levels in range(len(bins), 0, -1):
        sigma = _level_sigma(n_features, rho, n_levels)
        if max(_anchor_z(b, beta) for b in bins[:n_levels]) * sigma <= ANCHOR_SHARE * n_records:
            return n_levels
    return 1 if _anchor_z(bins[0], beta) * _level_sigma(n_features, rho, 1) <= n_records else 0


def records_needed(n_features: int, rho: float, bins=DEFAULT_BINS, beta: float = DEFAULT_BETA,
                   n_levels: int | None = None) -> int:
    """The smallest block size m for which ``levels="auto"`` runs at least ``n_levels`` levels (default all
    of ``bins``): a guide for choosing the warm-up length from d and the range budget.

    Examples
    --------
    >>> from onpair.privacy import rho_from_dp
    >>> rho = 0.2 * rho_from_dp(1.0, 1e-5, method="gaussian")
    >>> records_needed(9, rho), records_needed(18, rho), records_needed(18, rho, n_levels=2)
    (388, 549, 448)
    """
    bins = _bins(bins)
    n_levels = len(bins) if n_levels is None else _int_param(n_levels, "n_levels", 1, len(bins))
    sigma = _level_sigma(n_features, rho, n_levels)
    share = ANCHOR_SHARE if n_levels > 1 else 1.0  # one level runs as soon as its threshold fits the block
    need = max(_anchor_z(b, beta) for b in bins[:n_levels]) * sigma / share
    m = max(1, math.ceil(need))
    while planned_levels(m, n_features, rho, bins, beta) < n_levels:  # rounding: the rule decides
        m += 1
    return m


def range_histograms(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, n_bins: int) -> np.ndarray:
    """The (d, b) counts of one level: ``counts[k, j]`` = the records whose feature k lies in bin j of
    ``[lower[k], upper[k]]`` (b equal bins; bin j holds v with ⌊(v − lower)/(upper − lower)·b⌋ = j, the
    upper edge in the last bin). A value outside the interval is counted nowhere: every record adds 1 to at
    most one bin per feature (the sensitivity argument of the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> range_histograms(np.array([[0.0], [0.3], [1.0], [2.0]]), np.array([0.0]), np.array([1.0]), 2).tolist()
    [[2, 1]]
    """
    m, d = X.shape
    width = upper - lower
    position = (X - lower) / width * n_bins
    inside = (X >= lower) & (X <= upper)
    index = np.minimum(np.floor(np.where(inside, position, 0.0)).astype(np.int64), n_bins - 1)
    flat = (np.arange(d, dtype=np.int64) * n_bins)[None, :] + index
    return np.bincount(flat[inside], minlength=d * n_bins).reshape(d, n_bins)


def finder_settings(*, bins=DEFAULT_BINS, beta=DEFAULT_BETA, extend=DEFAULT_EXTEND, margin=DEFAULT_MARGIN,
                    final_margin=DEFAULT_FINAL_MARGIN, coverage=DEFAULT_COVERAGE, certify=DEFAULT_CERTIFY,
                    levels="auto", span=DEFAULT_SPAN) -> dict:
    """The finder's parameters checked (a TypeError or ValueError naming the bad one) and normalised, as
    :func:`find_bounds` takes them: a learner checks ``discover_bounds=`` with it when it is built.

    Examples
    --------
    >>> finder_settings(bins=[16, 16])["bins"], finder_settings()["levels"]
    ((16, 16), 'auto')
    """
    bins = _bins(bins)
    if isinstance(levels, str):
        if levels != "auto":
            raise ValueError(f"levels must be 'auto' or an integer in [1, {len(bins)}], got {levels!r}")
    else:
        levels = _int_param(levels, "levels", 1, len(bins))
    if not isinstance(span, str):
        raise TypeError(f"span must be one of {SPANS}, got {span!r} ({type(span).__name__})")
    if span not in SPANS:
        raise ValueError(f"span must be one of {SPANS}, got {span!r}")
    return {"bins": bins, "beta": _real(beta, "beta", 0.0, 1.0, open_low=True, open_high=True),
            "extend": _real(extend, "extend", 0.0, math.inf, open_high=True),
            "margin": _int_param(margin, "margin", 0, MAX_BINS),
            "final_margin": _int_param(final_margin, "final_margin", 0, MAX_BINS),
            "coverage": _real(coverage, "coverage", 0.0, 1.0),
            "certify": _real(certify, "certify", 0.0, math.inf, open_high=True), "levels": levels,
            "span": span}


def levels_to_run(n_records: int, n_features: int, rho: float, settings: dict) -> int:
    """How many levels :func:`find_bounds` runs on m records of d features with ``settings`` (checked by
    :func:`finder_settings`): the fixed ``levels``, or the public rule of :func:`planned_levels`. 0 means
    no release (the declared box, cost 0). Public: m, d, ρ and the settings are."""
    if settings["levels"] == "auto":
        return planned_levels(n_records, n_features, rho, settings["bins"], settings["beta"])
    return settings["levels"]


def plan_cost(n_features: int, rho: float, n_levels: int):
    """``(sigmas, rho_spent)`` of a plan of ``n_levels`` levels on d features with the budget ρ: the σ of
    each level (equal shares, Δ = √(2d)) and the sum of the levels' costs Δ²/(2σ_ℓ²), exactly as
    :func:`find_bounds` computes them (a snapshot's discovery is checked against it). The σ carry the margin
    1 + 10⁻⁹ of :data:`onpair.privacy.gaussian.SIGMA_MARGIN`, so the sum is below ρ in floating point (an
    AssertionError if it ever were not: the plan would be wrong). Public: a function of d, ρ and L.

    Examples
    --------
    >>> sigmas, spent = plan_cost(4, 0.01, 2)
    >>> len(sigmas), spent <= 0.01, round(spent / 0.01, 6)
    (2, True, 1.0)
    """
    sensitivity = math.sqrt(2.0 * n_features)
    sigmas = tuple(_level_sigma(n_features, rho, n_levels) for _ in range(n_levels))
    spent = math.fsum(gaussian_rho(sensitivity, sigma) for sigma in sigmas)
    if spent > rho:  # cannot happen with SIGMA_MARGIN: the report states what the levels spent, never a cap
        raise AssertionError(f"the range finder's plan spends {spent!r} > rho = {rho!r}")
    return sigmas, spent


def _representable(lower: float, upper: float, d: int) -> bool:
    """Whether [lower, upper] can be a box of the learners (positive width, 2/(width·√d) finite)."""
    return upper > lower and math.isfinite(2.0 / ((upper - lower) * math.sqrt(d)))


def _select_run(noisy: np.ndarray, sigma: float, z_anchor: float, z_pair: float, extend: float,
                span: str = "significant"):
    """(first, last) bins of the accepted run of one feature's noisy counts, or None (no anchor).

    ``span="significant"``: the run reaches from the first to the last bin whose noisy count clears the
    anchor threshold z_anchor·σ (and the anchor's pair), then extends; ``"anchor"``: the contiguous run
    around the densest bin only."""
    b = noisy.shape[0]
    a = int(np.argmax(noisy))
    left = noisy[a - 1] if a > 0 else -math.inf
    right = noisy[a + 1] if a < b - 1 else -math.inf
    first = last = a
    if noisy[a] < z_anchor * sigma:
        if noisy[a] + max(left, right) < z_pair * sigma * math.sqrt(2.0):
            return None
        if left >= right:  # the pair passed: the run holds both bins
            first = a - 1
        else:
            last = a + 1
    if span == "significant":
        significant = np.flatnonzero(noisy >= z_anchor * sigma)
        if significant.size:
            first, last = min(first, int(significant[0])), max(last, int(significant[-1]))
    threshold = extend * sigma
    while first > 0 and noisy[first - 1] >= threshold:
        first -= 1
    while last < b - 1 and noisy[last + 1] >= threshold:
        last += 1
    return first, last


def find_bounds(X, lower, upper, rho, *, bins=DEFAULT_BINS, beta=DEFAULT_BETA, extend=DEFAULT_EXTEND,
                margin=DEFAULT_MARGIN, final_margin=DEFAULT_FINAL_MARGIN, coverage=DEFAULT_COVERAGE, certify=DEFAULT_CERTIFY, levels="auto",
                span=DEFAULT_SPAN, random_state=None) -> DiscoveredBounds:
    """Per-feature bounds that hold the bulk of a block of records, found with ρ-zCDP inside a declared box.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The block of raw records (finite). m must be public (a stream's warm-up length, or a fixed
        number of records of an offline fit).
    lower, upper : float or array-like of shape (d,)
        The declared (public, loose) box. Records outside it are clipped to it.
    rho : float
        The zCDP budget of the finder (> 0); the cost actually spent is ``result.rho`` ≤ ``rho``.
    bins : sequence of int, default (32, 32, 32)
        Bins per level (each ≥ 2): the plan of the descent.
    beta : float, default 0.05
        The probability that a level accepts a false anchor on an interval that holds no record (0 < β < 1).
    extend : float, default 2.0
        A neighbour joins the run if its noisy count is ≥ extend·σ (≥ 0).
    margin : int, default 1
        Bins added on each side of the run at every level but the last (≥ 0).
    final_margin : int, default 0
        Bins added on each side of the last accepted run to make the result (≥ 0).
    coverage : float, default 0.5
        A level's run is accepted only if its noisy count is at least coverage·m + certify·σ√r (r: the run's
        bins): a run that holds too little of the block keeps the box of the level before (0 ≤ coverage ≤ 1).
    certify : float, default 0
        The margin of that test in standard deviations of the run's noise (≥ 0). 2 would certify the
        coverage at about 97.7 %, but it rejects the narrow one-mode runs that serve the models best
        (bench/studies/ranges_prototype.py: −0.26 against −0.03 progressive AUC on the binary layout).
    levels : "auto" or int, default "auto"
        The number of levels to run: the public rule of :func:`planned_levels`, or a fixed number
        (1 … len(bins); the whole of ρ is spent on them even where no bin can clear its threshold).
    span : {"significant", "anchor"}, default "significant"
        How a level's run is formed: from the first to the last bin whose noisy count clears the anchor
        threshold (then extended), so that every value of a discrete feature that holds a resolvable share of
        the block stays inside the box (the guarantee of the module docstring); or ``"anchor"``, the contiguous
        run around the densest bin only (the finder before issue 34).
    random_state : int, SeedSequence, Generator or None
        The noise; None draws fresh OS entropy (a seed is for reproducible experiments only).

    Returns
    -------
    DiscoveredBounds
        The box, the cost (``rho``), the per-level σ and ``describe()`` for the privacy report.

    Notes
    -----
    The finder is ``result.rho``-zCDP as a composition of Gaussian releases (one per level; the module's
    proof), not merely (ε, δ)-DP: charge it as those releases (:func:`onpair.core.discovery.range_events`), which
    an accountant with a ρ budget only accepts. Every argument is checked, and a bad one raises, before any
    noise is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[rng.normal(405.0, 1.0, 500), rng.normal(-3.0, 0.2, 500)]
    >>> found = find_bounds(X, [0.0, -1000.0], [1000.0, 1000.0], rho=0.05, random_state=1)
    >>> bool(np.all(found.shrink > 50)), bool(np.mean((X >= found.lower) & (X <= found.upper)) > 0.95)
    (True, True)
    >>> found.rho <= 0.05
    True
    """
    X = _block(X)
    m, d = X.shape
    lo0, hi0 = _box(lower, upper, d)
    rho = check_rho(rho, "rho", allow_zero=False)
    settings = finder_settings(bins=bins, beta=beta, extend=extend, margin=margin, final_margin=final_margin,
                               coverage=coverage, certify=certify, levels=levels, span=span)
    bins, beta, extend = settings["bins"], settings["beta"], settings["extend"]
    margin, final_margin = settings["margin"], settings["final_margin"]
    coverage, certify = settings["coverage"], settings["certify"]
    n_levels = levels_to_run(m, d, rho, settings)
    rng = np.random.default_rng(random_state)

    Xc = np.clip(X, lo0, hi0)
    lo, hi = lo0.copy(), hi0.copy()  # the interval of the next level's histogram (run ± margin)
    out_lo, out_hi = lo0.copy(), hi0.copy()  # the result: the last accepted run ± final_margin
    accepted = np.zeros(d, dtype=np.int64)
    active = np.ones(d, dtype=bool)
    sigmas, spent = plan_cost(d, rho, n_levels)
    for level in range(n_levels):
        b = bins[level]
        sigma = sigmas[level]
        noisy = range_histograms(Xc, lo, hi, b) + sigma * rng.standard_normal((d, b))  # every feature, always
        z_anchor, z_pair = _anchor_z(b, beta), _pair_z(b, beta)
        for k in np.flatnonzero(active):
            run = _select_run(noisy[k], sigma, z_anchor, z_pair, extend, settings["span"])
            if run is None or (float(np.sum(noisy[k, run[0]:run[1] + 1]))
                               < coverage * m + certify * sigma * math.sqrt(run[1] - run[0] + 1)):
                active[k] = False  # no anchor, or a run not certified to hold coverage·m records: keep the last box
                continue
            step = (hi[k] - lo[k]) / b
            box_lo = max(lo0[k], lo[k] + (run[0] - final_margin) * step)
            box_hi = min(hi0[k], lo[k] + (run[1] + 1 + final_margin) * step)
            if not _representable(box_lo, box_hi, d):
                active[k] = False  # a box too narrow for float64: keep the last one
                continue
            out_lo[k], out_hi[k] = box_lo, box_hi
            accepted[k] += 1
            next_lo = max(lo0[k], lo[k] + (run[0] - margin) * step)
            next_hi = min(hi0[k], lo[k] + (run[1] + 1 + margin) * step)
            if _representable(next_lo, next_hi, d):
                lo[k], hi[k] = next_lo, next_hi
            else:
                active[k] = False
    return DiscoveredBounds(lower=out_lo, upper=out_hi, declared_lower=lo0, declared_upper=hi0,
                            levels_accepted=accepted, rho=spent, sigmas=sigmas, n_records=m,
                            params=result_params(settings, n_levels))


def result_params(settings: dict, n_levels: int) -> dict:
    """The ``params`` of a :class:`DiscoveredBounds`: the settings, the bins of the levels run, their number."""
    return dict(settings, bins=settings["bins"][:n_levels] if n_levels else settings["bins"], levels_run=n_levels)

