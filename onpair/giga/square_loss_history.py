"""The square loss's exact full history in O(d²): counts, sums and second moments per label."""

from __future__ import annotations

import numpy as np

from ._kernels import _giga_square_statistics, _giga_square_statistics_one
from .pair_history import PairHistory


class SquareLossHistory(PairHistory):
    """Per label: the count m, S₁ = Σx and S₂ = Σxxᵀ of the records seen (AUC task, square loss).

    The square loss's round gradient against all past records of the other label needs only these:
    Σ(x_t − x_i) = m·x_t − S₁ and Σ(x_t − x_i)(x_t − x_i)ᵀ = m·x_txᵀ_t − x_tS₁ᵀ − S₁xᵀ_t + S₂
    (docs/algorithms.md, "Losses and their constants"). Exact, with O(d²) memory whatever t.

    Examples
    --------
    >>> from onpair.giga.slots import SlotPolicy
    >>> stats = SquareLossHistory(3, SlotPolicy("all"))
    >>> stats.second_moments.shape, stats.memory_bound
    ((2, 3, 3), 0)
    """

    kind = "statistics"
    STATE_KEYS = ()

    def __init__(self, dim, slots):
        super().__init__(dim, slots)
        self.counts = np.zeros(2)
        self.sums = np.zeros((2, dim))
        self.second_moments = np.zeros((2, dim, dim))

    @property
    def n_stored(self) -> int:
        return 0  # no record is stored, only statistics

    @property
    def memory_bound(self):
        return 0

    def learn_block(self, Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng):
        _giga_square_statistics(
            Z, labels, iterate.w, self.counts, self.sums, self.second_moments, t_start, steps, objective.lam,
            iterate.center, objective.radius, plan.release_index, plan.sigmas, noise, released,
            iterate.iterate_sum,
        )

    def learn_one(self, z, label, iterate, objective, t, step, rng):
        _giga_square_statistics_one(
            z, label, iterate.w, self.counts, self.sums, self.second_moments, t, step, objective.lam,
            iterate.center, objective.radius, iterate.iterate_sum)

    def export(self, state, arrays):
        arrays.update(counts=self.counts, sums=self.sums, second_moments=self.second_moments)

    @classmethod
    def restore(cls, dim, slots, t, state, reader):
        stats = cls(dim, slots)
        counts = reader.array("counts", (2,))
        if np.any(counts < 0) or np.any(counts != np.round(counts)) or counts.sum() != t:
            raise reader.error(f"counts = {counts.tolist()} do not count {t} records")
        stats.counts = counts
        stats.sums = reader.array("sums", (2, dim))
        stats.second_moments = reader.array("second_moments", (2, dim, dim))
        # Σx over c records of norm ≤ 1 has norm ≤ c; the trace of Σxxᵀ is Σ‖x‖² ≤ c.
        for k in range(2):
            if (np.linalg.norm(stats.sums[k]) > counts[k] * (1 + 1e-9) + 1e-12
                    or np.trace(stats.second_moments[k]) > counts[k] * (1 + 1e-9) + 1e-12):
                raise reader.error("sums / second_moments exceed what records of the mapped domain "
                                   "(norm ≤ 1) can produce")
        return stats
