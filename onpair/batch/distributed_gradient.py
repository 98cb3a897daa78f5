"""The exact pairwise gradient sum of :class:`onpair.GradientPerturbedGD` over the partitions of a fit on
Dask data (:mod:`onpair.core.distributed`): per partition on its worker, only scores, pair-weight sums and
d-vectors cross the network, and the client adds the step's noise to the one total.

Every function that runs on a worker is a deterministic function of its partition (no random number, no
seed): a task recomputed after a lost worker gives the same bits.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._kernels import DEFAULT_BLOCK, _coefficient_sums, _combine, _scores


def pairwise_gradient_sum(partitions, theta: np.ndarray, loss_code: int) -> np.ndarray:
    """Σ_{i∈pos} Σ_{j∈neg} ℓ'(θᵀ(x_i − x_j))(x_i − x_j) over all partitions' records (one Dask graph).

    ``partitions`` is the fit's :class:`onpair.core.distributed.DaskPartitions` (layout ``"split"``). Per
    partition a: the scores; one task pairs a's positives with every negative score (A for a's positives,
    a row of B over all negatives); the B rows are added by a tree; each partition then combines its own A
    and its segment of B with its records. About 8p tasks for p partitions (``bench/dask_scaling.py``
    counts them), and the scores and weights that move are one number per record and partition."""
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    parts, counts, task = partitions.parts, partitions.counts, partitions.task
    has_pos = [c[2] > 0 for c in counts]
    has_neg = [c[3] > 0 for c in counts]
    negatives = [task(_negative_scores, p, theta) for p, keep in zip(parts, has_neg) if keep]
    rows = {}
    if negatives:
        for a, part in enumerate(parts):
            if has_pos[a]:
                rows[a] = task(_pair_row, task(_positive_scores, part, theta), negatives, loss_code, nout=2)
    if rows:
        coef_neg = partitions.tree_sum([row[1] for row in rows.values()])
    terms, start = [], 0
    for a, part in enumerate(parts):
        stop = start + max(counts[a][3], 0)
        segment = task(_segment, coef_neg, start, stop) if rows and has_neg[a] else None
        start = stop
        terms.append(task(_partition_gradient, part, rows[a][0] if a in rows else None, segment))
    return partitions.compute(partitions.tree_sum(terms))


# -- what runs on the workers: deterministic functions of the records, no randomness ----------------
def _positive_scores(part, theta: np.ndarray) -> np.ndarray:
    """The partition's positives' scores X⁺θ (one number per record)."""
    s = np.empty(part.positives.shape[0])
    _scores(part.positives, theta, s)
    return s


def _negative_scores(part, theta: np.ndarray) -> np.ndarray:
    """The partition's negatives' scores X⁻θ (one number per record)."""
    t = np.empty(part.negatives.shape[0])
    _scores(part.negatives, theta, t)
    return t


def _pair_row(s: np.ndarray, negative_scores: list, loss_code: int, block: int = DEFAULT_BLOCK) -> tuple:
    """The pair weights of one partition's positives against every negative: ``(A, B_row)`` with
    A_i = Σ_j ℓ'(s_i − t_j) over all negatives and B_row[j] = Σ_{i in this partition} ℓ'(s_i − t_j), the
    negatives in partition order. Tiles of ``block`` × ``block`` pairs (the kernel's memory is
    O(block²/64)), as the in-process :func:`onpair.batch._kernels.pairwise_gradient_sum`."""
    t = np.concatenate(negative_scores)
    coef_pos, coef_neg = np.zeros(s.shape[0]), np.zeros(t.shape[0])
    tile_pos, tile_neg = np.empty(min(block, s.shape[0])), np.empty(min(block, t.shape[0]))
    tiles_pos = [(i, min(i + block, s.shape[0])) for i in range(0, s.shape[0], block)]
    tiles_neg = [(j, min(j + block, t.shape[0])) for j in range(0, t.shape[0], block)]
    for (i0, i1), (j0, j1) in itertools.product(tiles_pos, tiles_neg):
        _coefficient_sums(s[i0:i1], t[j0:j1], loss_code, tile_pos[:i1 - i0], tile_neg[:j1 - j0])
        coef_pos[i0:i1] += tile_pos[:i1 - i0]
        coef_neg[j0:j1] += tile_neg[:j1 - j0]
    return coef_pos, coef_neg


def _segment(values: np.ndarray, start: int, stop: int) -> np.ndarray:
    """One partition's share of the negatives' weights B."""
    return values[start:stop].copy()


def _partition_gradient(part, coef_pos, coef_neg) -> np.ndarray:
    """Σ_i A_i x_i − Σ_j B_j x_j over the partition's records (None: the partition has none of them)."""
    coef_pos = np.zeros(part.positives.shape[0]) if coef_pos is None else coef_pos
    coef_neg = np.zeros(part.negatives.shape[0]) if coef_neg is None else coef_neg
    out = np.empty(part.positives.shape[1])
    _combine(part.positives, coef_pos, part.negatives, coef_neg, out)
    return out
