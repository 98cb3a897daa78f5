"""The cost of a record that occupies several stream positions (passes over a data set, replays).

The privacy unit of every online learner is one **stream position**: ``privacy_report()["rho_spent"]``
is what a record costs when it is learned once. A record learned at k positions (k passes over a data set,
a replay buffer, bagging) changes k inputs of the mechanism at once, and costs more.

**Continual-release mechanisms** (:mod:`onpair.privacy.continual`). Each is a Gaussian mechanism on a
linear image of the stream: node values E·V + N(0, diag σ_r²) (trees; the released prefix estimates
are post-processing of them) or C·V + σZ (the factorisation, whose releases B(CV + σZ) are an
invertible image of it). A record at the positions P, whose input changes by u at each of them
(‖u‖ ≤ Δ: the same record gives the same input at every position), shifts row r by
(Σ_{p∈P} E_{r,p})·u. The cost is exactly

    ρ(P) = (Δ²/2)·Σ_r (Σ_{p∈P} E_{r,p})²/σ_r²,

a Gaussian mechanism's: for the factorisation (Δ²/(2σ²))·‖Σ_{p∈P} C e_p‖², for a tree
Σ_h (Δ²/(2σ_h²))·Σ_{nodes j of level h} n_{h,j}² with n_{h,j} the positions of P in node (h, j), and
for doubling epochs the sum of the trees' costs over the epochs that hold a position of P (each tree
sees its own positions; sequential composition across epochs), and for blocks released once
(:class:`~onpair.privacy.continual.BlockRelease`) (Δ²/(2σ²))·Σ_j n_j(P)² with n_j(P) the positions of P in
block j. Every entry of E is ≥ 0, so inputs
that differ between positions (‖u_p‖ ≤ Δ each) cost no more: Σ_{p,q} E_{r,p}E_{r,q}⟨u_p, u_q⟩ ≤
Δ²(Σ_p E_{r,p})². The rows are those the mechanism can ever release (up to its horizon, or every level
of an unbounded stream): the cost of the whole stream, as ``rho_spent``. :func:`record_rho` computes it.

Copies farther apart than the band of the banded factorisation have disjoint columns: k of them cost
exactly k·ρ (``OnPairStats(mechanism="toeplitz")`` on a data set of n ≥ 64 records, replayed in the same
order), against the group bound k²ρ. The columns of the buffered-linear-Toeplitz factorisation (the
default) never end: copies n positions apart overlap by Σ_j c_j c_{j+n}, which decays with n like the
slowest buffer, so k copies cost a little more than k·ρ (closed forms, O(k²·m²)). In a tree, copies share
the nodes of the levels above their distance.

**Same-order passes.** :func:`replay_rho` takes the worst record of a data set of n records replayed k
times **in the same order** (record i at the positions i, i + n, …, i + (k − 1)n): the exact cost of that
schedule. Shuffled passes, bagging (a record learned a random number of times, at adjacent positions), or
any schedule that is not known in advance: use the group bound :func:`group_rho`, k²ρ (zCDP group privacy,
Bun & Steinke 2016, Prop. 27; for a Gaussian mechanism, sensitivity kΔ), which holds for any k positions
of any ρ-zCDP mechanism, the output-perturbed learners included.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .continual import (MAX_RECORDS, BandedToeplitz, BlockRelease, BufferedToeplitz, EpochTrees, TreeAggregation,
                        sqrt_toeplitz_coefficients)
from .conversions import eps_from_rho
from .gaussian import gaussian_rho

__all__ = ["record_rho", "replay_rho", "group_rho", "record_level", "REPLAY_ORDERS"]

#: How the passes replay the records: "same" (the same order every pass: exact cost where the mechanism
#: allows it), "any" (any order, or positions not known in advance: the group bound k²ρ).
REPLAY_ORDERS = ("same", "any")

#: Records per chunk of the vectorised tree costs (bounds the scratch memory of :func:`replay_rho`).
_CHUNK = 1 << 16


def _check_count(value, name, minimum=1, maximum=MAX_RECORDS) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)


def _check_mechanism(mechanism):
    if not isinstance(mechanism, (BufferedToeplitz, BandedToeplitz, TreeAggregation, EpochTrees, BlockRelease)):
        raise TypeError(f"mechanism must be a BufferedToeplitz, BandedToeplitz, TreeAggregation, EpochTrees or "
                        f"BlockRelease, got {type(mechanism).__name__}")
    if isinstance(mechanism, BlockRelease) and mechanism.fresh_share > 0.0:
        # the fresh share adds a continual release inside each block, whose column overlaps are not counted here
        raise ValueError("the exact replay cost of BlockRelease(fresh_share > 0) is not computed (its continual part "
                         "inside each block overlaps copies of a record): use the group bound, order='any'")
    return mechanism


def group_rho(rho, passes) -> float:
    """k²ρ: the zCDP cost of a group of k positions of a ρ-zCDP mechanism (any mechanism, any positions).

    Examples
    --------
    >>> group_rho(0.01, 4)
    0.16
    """
    passes = _check_count(passes, "passes")
    return float(passes * passes * rho)


def record_rho(mechanism, positions) -> float:
    """Exact zCDP cost of a record learned at the stream ``positions`` (1-based) by ``mechanism``.

    Parameters
    ----------
    mechanism : BufferedToeplitz, BandedToeplitz, TreeAggregation or EpochTrees
        Read for its public parameters only (sensitivity, noise scales, band, horizon, epochs).
    positions : iterable of int
        Distinct positions in [1, capacity] (the horizon, or 2^62).

    Returns
    -------
    float
        ρ(P) of the module docstring, for every release the mechanism can make (its whole stream). One
        position costs at most the mechanism's ``rho_spent_bound`` (equal for the worst position).

    Examples
    --------
    >>> from onpair.privacy.continual import BandedToeplitz
    >>> mech = BandedToeplitz(dim=1, sensitivity=1.0, rho=0.5, band=4)
    >>> round(record_rho(mech, [1]) / mech.describe()["rho_spent_bound"], 12)
    1.0
    >>> round(record_rho(mech, [1, 5]) / record_rho(mech, [1]), 12)   # beyond the band: disjoint columns
    2.0
    >>> record_rho(mech, [1, 2]) > 2 * record_rho(mech, [1])          # within it: overlapping ones
    True
    """
    mechanism = _check_mechanism(mechanism)
    try:
        items = list(positions)
    except TypeError:
        raise TypeError(f"positions must be an iterable of stream positions, got {positions!r}") from None
    P = np.array([_check_count(p, "a position", maximum=mechanism.capacity) for p in items], dtype=np.int64)
    if np.unique(P).size != P.size:
        raise ValueError(f"positions must be distinct, got {items!r}")
    if P.size == 0:
        return 0.0
    if isinstance(mechanism, BandedToeplitz):
        return _toeplitz_rho(mechanism, np.sort(P))
    if isinstance(mechanism, BufferedToeplitz):
        return _blt_rho(mechanism, np.sort(P))
    if isinstance(mechanism, BlockRelease):
        return float(_blocks_rho(mechanism, P[None, :])[0])
    return float(_dyadic_rho(mechanism, P[None, :])[0])


def replay_rho(mechanism, n_records, passes) -> float:
    """Exact zCDP cost of the worst record of ``n_records`` replayed ``passes`` times in the same order.

    Record i (1 ≤ i ≤ n) is learned at the positions i + j·n, j = 0 … k − 1; positions beyond the
    mechanism's capacity (its horizon) are never learned and cost nothing. Returns max_i ρ(P_i)
    (:func:`record_rho`). For the factorisations (banded and BLT) the first record is the worst (every entry
    of C is ≥ 0, and moving every position one step earlier never shortens a column); trees are evaluated
    for every record, vectorised.

    Examples
    --------
    >>> from onpair.privacy.continual import BandedToeplitz
    >>> mech = BandedToeplitz(dim=1, sensitivity=2.0, rho=0.036)   # the default band, 64
    >>> round(replay_rho(mech, 1250, 4) / mech.describe()["rho_spent_bound"], 12)   # exactly 4ρ, not 16ρ
    4.0
    """
    mechanism = _check_mechanism(mechanism)
    n = _check_count(n_records, "n_records")
    k = _check_count(passes, "passes")
    if isinstance(mechanism, (BandedToeplitz, BufferedToeplitz)):
        first = np.array([1 + j * n for j in range(k) if 1 + j * n <= mechanism.capacity], dtype=np.int64)
        return _toeplitz_rho(mechanism, first) if isinstance(mechanism, BandedToeplitz) else _blt_rho(mechanism, first)
    worst = 0.0
    offsets = np.arange(k, dtype=np.int64) * n
    for lo in range(1, n + 1, _CHUNK):
        records = np.arange(lo, min(n, lo + _CHUNK - 1) + 1, dtype=np.int64)
        P = records[:, None] + offsets[None, :]
        P[P > mechanism.capacity] = 0  # never learned
        costs = _blocks_rho(mechanism, P) if isinstance(mechanism, BlockRelease) else _dyadic_rho(mechanism, P)
        worst = max(worst, float(np.max(costs)))
    return worst


def _blocks_rho(mechanism, P) -> np.ndarray:
    """ρ(P) of each row of positions P (0: not learned) for blocks released once: (Δ²/(2σ²))·Σ_j n_j(P)²."""
    blocks = mechanism.block_of(np.maximum(P, 1))  # position p lies in block j when b_j < p ≤ b_{j+1}
    unit = gaussian_rho(mechanism.sensitivity, mechanism.describe()["sigma"])
    blocks[P <= 0] = -1  # not learned
    pairs = np.zeros(P.shape[0])  # Σ_j n_j(P)² = the pairs (a, b) of learned positions in one block
    for a in range(P.shape[1]):
        pairs += np.sum((blocks == blocks[:, a:a + 1]) & (blocks[:, a:a + 1] >= 0), axis=1)
    return unit * pairs


def record_level(rho, delta, accounting, passes=1, order="same", mechanism=None, n_seen=0) -> dict:
    """The ``record_level`` entry of a learner's report: what a record learned ``passes`` times costs.

    ``rho`` is the cost of one position (the learner's ``rho_spent``; None for a non-private learner, whose
    entry has ε ∞ and no ``rho``: the rule for ρ of :mod:`onpair.privacy.reports`); with ``passes`` = 1 it
    is the record's cost. Otherwise, with ``order="same"`` and a continual-release ``mechanism``, the exact cost
    of the same-order schedule over ``n_seen`` = k·n positions (:func:`replay_rho`); in every other case
    (``order="any"``, a learner without such a mechanism) the group bound k²ρ (:func:`group_rho`).

    Returns ``{"passes", "order", "rho", "epsilon", "delta", "bound"}`` (ε at ``delta`` with the learner's
    ``accounting``; ``bound`` says how ρ was obtained). All public: functions of n, k and the parameters.

    Examples
    --------
    >>> record_level(0.01, 1e-5, "gaussian", passes=2, order="any")["rho"]
    0.04
    """
    passes = _check_count(passes, "passes")
    if not isinstance(order, str) or order not in REPLAY_ORDERS:
        raise ValueError(f"order must be one of {REPLAY_ORDERS}, got {order!r}")
    if rho is None:  # a non-private learner
        return {"passes": passes, "order": order, "epsilon": math.inf, "delta": float(delta),
                "bound": "not private: no guarantee"}
    if passes == 1:
        value, bound = float(rho), "one position: the learner's own cost"
    elif order == "same" and mechanism is not None:
        if n_seen % passes:
            raise ValueError(f"n_seen = {n_seen} is not a multiple of passes = {passes}: a same-order replay of n "
                             f"records over {passes} passes learns {passes}·n of them (order='any' gives the group "
                             "bound for any positions)")
        value = replay_rho(mechanism, n_seen // passes, passes) if n_seen else 0.0
        bound = (f"exact: each record at {passes} positions n = {n_seen // passes} apart (the same order every "
                 "pass), from the mechanism's encoder")
    else:
        value = group_rho(rho, passes)
        why = "any order" if order == "any" else "the mechanism's structure gives nothing better"
        bound = f"group bound {passes}²ρ ({why})"
    epsilon = float(eps_from_rho(value, delta, method=accounting)) if value > 0 else 0.0
    return {"passes": passes, "order": order, "rho": value, "epsilon": epsilon, "delta": float(delta),
            "bound": bound}


# ---------------------------------------------------------------------------------------------------
# the factorisation: ‖Σ_p C e_p‖² over clusters of positions closer than the band
# ---------------------------------------------------------------------------------------------------
def _toeplitz_rho(mechanism, P) -> float:
    """(Δ²/(2σ²))·‖Σ_{p∈P} C e_p‖² for sorted positions P; column p of C holds c_0 … c_{b−1} in rows
    p … p + b − 1, cut at the horizon."""
    if P.size == 0:
        return 0.0
    description = mechanism.describe()
    band = description["band_used"]
    c = sqrt_toeplitz_coefficients(band)
    last_row = mechanism.capacity
    total = 0.0
    start = 0
    for end in range(1, P.size + 1):  # clusters: consecutive positions closer than the band
        if end < P.size and P[end] - P[end - 1] < band:
            continue
        first, last = int(P[start]), int(P[end - 1])
        rows = min(last + band - 1, last_row) - first + 1
        column = np.zeros(rows)
        for p in P[start:end]:
            offset = int(p) - first
            length = min(band, rows - offset)
            column[offset:offset + length] += c[:length]
        total += math.fsum(column * column)
        start = end
    return gaussian_rho(mechanism.sensitivity, description["sigma"]) * total


def _blt_rho(mechanism, P) -> float:
    """(Δ²/(2σ²))·‖Σ_{p∈P} C e_p‖² for the BLT's C (sorted positions P): the sum over pairs of the columns'
    inner products, in closed form (:meth:`BLTParameters.column_inner`; column p has T − p + 1 rows with a
    horizon T, infinitely many without). The columns never stop, so copies always overlap a little: more
    than k·ρ for k copies, however far apart (the overlap decays like the slowest buffer, θ_1^distance)."""
    if P.size == 0:
        return 0.0
    params = mechanism.parameters
    horizon = mechanism.horizon
    terms = []
    for a in range(P.size):
        for b in range(a, P.size):
            later = int(P[b])
            length = None if horizon is None else horizon - later + 1
            inner = params.column_inner(later - int(P[a]), length)
            terms.append(inner if a == b else 2.0 * inner)
    total = math.fsum(terms)
    description = mechanism.describe()
    stream = gaussian_rho(mechanism.sensitivity, description["sigma"]) * total
    if description["final_sigma"] is None:
        return stream
    # the one release of the total at the horizon: the record enters it |P| times (sensitivity |P|·Δ)
    return stream + P.size ** 2 * gaussian_rho(mechanism.sensitivity, description["final_sigma"])


# ---------------------------------------------------------------------------------------------------
# trees and doubling epochs: node counts, level by level
# ---------------------------------------------------------------------------------------------------
def _dyadic_rho(mechanism, P) -> np.ndarray:
    """Costs of the records of P (m, k): row i holds record i's positions (0 for none, each row sorted or
    not), for a tree or doubling epochs of trees: Σ_levels ρ_level·Σ_nodes n², over released nodes only."""
    valid = P > 0
    t = np.where(valid, P - 1, 0)  # 0-based positions
    if isinstance(mechanism, TreeAggregation):
        epoch = np.zeros_like(t)
        local = t
        length = np.full_like(t, mechanism.capacity)
        sigmas = np.asarray(mechanism.describe()["sigmas"])
        level_rho = gaussian_rho(mechanism.sensitivity, 1.0) / sigmas ** 2  # Δ²/(2σ_h²), level h

        def rho_of(h, lengths):
            return level_rho[h] if h < level_rho.size else 0.0

        levels = level_rho.size
    else:
        epoch, start, length = _epochs(mechanism, t)
        local = t - start
        trees = {}

        def tree(L):
            if L not in trees:
                d = mechanism._tree(int(L)).describe()
                trees[L] = (d["levels"], gaussian_rho(mechanism.sensitivity, d["sigma"]))
            return trees[L]

        distinct = np.unique(length[valid])
        levels = max([tree(L)[0] for L in distinct.tolist()], default=0)
        table = {L: tree(L) for L in distinct.tolist()}

        def rho_of(h, lengths):
            out = np.zeros(lengths.shape)
            for L, (n_levels, per_level) in table.items():
                if h < n_levels:
                    out[lengths == L] = per_level
            return out

    costs = np.zeros(P.shape[0])
    k = P.shape[1]
    for h in range(levels):
        node = local >> h
        released = valid & (node + 1 <= (length >> h))  # the node is complete within the tree's horizon
        weight = np.where(released, rho_of(h, length), 0.0)
        costs += weight.sum(axis=1)  # n² = n + 2·(pairs): the diagonal
        for a in range(k):
            for b in range(a + 1, k):
                same = released[:, a] & released[:, b] & (node[:, a] == node[:, b]) & (epoch[:, a] == epoch[:, b])
                costs += 2.0 * np.where(same, weight[:, a], 0.0)
    return costs


def _epochs(mechanism, t):
    """(epoch index, epoch start, epoch length) of the 0-based positions t (arrays), as
    :meth:`EpochTrees._epoch_of` gives them one at a time."""
    first = mechanism.first_epoch
    x = (t // first + 1).astype(np.uint64)  # ≥ 1; the epoch is ⌊log₂ x⌋ (x < 2^62: no overflow below)
    e = np.floor(np.log2(x.astype(np.float64))).astype(np.uint64)
    one = np.uint64(1)
    e[(one << (e + one)) <= x] += one  # correct the float logarithm near powers of two
    e[(one << e) > x] -= one
    e = e.astype(np.int64)
    start = first * ((np.int64(1) << e) - 1)
    length = np.int64(first) << e
    if mechanism.horizon is not None:
        length = np.maximum(1, np.minimum(length, mechanism.horizon - start))
    return e, start, length
