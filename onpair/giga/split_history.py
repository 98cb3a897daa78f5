"""The whole history of the AUC task, positives and negatives apart (logistic and hinge losses)."""

from __future__ import annotations

import numpy as np

from ._kernels import _giga_full_history, _giga_full_history_one
from .pair_history import PairHistory


class SplitHistory(PairHistory):
    """Every record seen, in two growing arrays by label: a positive pairs with all past negatives.

    O(t·d) memory and O(t·d) work per round: exact, but it grows with the stream (use a buffer, or
    the square loss's statistics, to bound it).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.giga.slots import SlotPolicy
    >>> history = SplitHistory(2, SlotPolicy("all"))
    >>> history.n_stored, history.memory_bound
    (0, None)
    """

    kind = "full"
    STATE_KEYS = ("n_positives", "n_negatives")

    def __init__(self, dim, slots):
        super().__init__(dim, slots)
        self.positives = np.empty((0, dim))
        self.negatives = np.empty((0, dim))
        self.n_positives = 0
        self.n_negatives = 0

    @property
    def n_stored(self) -> int:
        return self.n_positives + self.n_negatives

    def _make_room(self, n_pos: int, n_neg: int) -> None:
        self.positives = self._grown(self.positives, self.n_positives, self.n_positives + n_pos)
        self.negatives = self._grown(self.negatives, self.n_negatives, self.n_negatives + n_neg)

    def learn_block(self, Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng):
        n_pos = int(np.count_nonzero(labels > 0))
        self._make_room(n_pos, Z.shape[0] - n_pos)
        self.n_positives, self.n_negatives = _giga_full_history(
            Z, labels, iterate.w, self.positives, self.n_positives, self.negatives, self.n_negatives, t_start,
            steps, objective.lam, iterate.center, objective.radius, objective.loss_code, plan.release_index,
            plan.sigmas, noise, released, iterate.iterate_sum,
        )

    def learn_one(self, z, label, iterate, objective, t, step, rng):
        if label > 0:
            self._make_room(1, 0)
        else:
            self._make_room(0, 1)
        self.n_positives, self.n_negatives = _giga_full_history_one(
            z, label, iterate.w, self.positives, self.n_positives, self.negatives, self.n_negatives, t, step,
            objective.lam, iterate.center, objective.radius, objective.loss_code, iterate.iterate_sum)

    def export(self, state, arrays):
        state["n_positives"] = self.n_positives
        state["n_negatives"] = self.n_negatives
        arrays.update(positives=self.positives[:self.n_positives], negatives=self.negatives[:self.n_negatives])

    @classmethod
    def restore(cls, dim, slots, t, state, reader):
        history = cls(dim, slots)
        n_pos = reader.integer(state["n_positives"], "n_positives", low=0)
        n_neg = reader.integer(state["n_negatives"], "n_negatives", low=0)
        if n_pos + n_neg != t:
            raise reader.error(f"n_positives + n_negatives = {n_pos + n_neg}, but t = {t}")
        history.positives = reader.array("positives", (n_pos, dim))
        history.negatives = reader.array("negatives", (n_neg, dim))
        reader.rows_in_domain(history.positives, "positives")
        reader.rows_in_domain(history.negatives, "negatives")
        history.n_positives, history.n_negatives = n_pos, n_neg
        return history
