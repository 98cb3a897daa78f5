"""A finite buffer of s past records with their ±1 labels (AUC task, FIFO or reservoir)."""

from __future__ import annotations

import numpy as np

from ._kernels import _giga_buffered, _giga_buffered_one
from .pair_history import PairHistory


class LabelledBuffer(PairHistory):
    """s slots of records and labels; the slot policy decides which record goes where.

    O(s·d) memory and O(s·d) work per round, whatever the stream length. The price is in the ledger:
    a record can stay in the buffer, so the sensitivity levels off near 2Γ/(λs) instead of decaying
    like 1/t (docs/algorithms.md, "Buffered variants").

    Examples
    --------
    >>> from onpair.giga.slots import SlotPolicy
    >>> buffer = LabelledBuffer(3, SlotPolicy("fifo", 8))
    >>> buffer.buffer.shape, buffer.memory_bound
    ((8, 3), 8)
    """

    kind = "buffer"
    STATE_KEYS = ("n_buffered",)

    def __init__(self, dim, slots):
        super().__init__(dim, slots)
        self.buffer = np.empty((slots.size, dim))
        self.buffer_signs = np.zeros(slots.size, dtype=np.int8)  # 0 marks an empty slot
        self.n_buffered = 0

    @property
    def n_stored(self) -> int:
        return self.n_buffered

    def learn_block(self, Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng):
        slots = self.slots.block(t_start, Z.shape[0], rng, self.n_buffered)
        self.n_buffered = _giga_buffered(
            Z, labels, iterate.w, self.buffer, self.buffer_signs, self.n_buffered, t_start, steps, objective.lam,
            iterate.center, objective.radius, objective.loss_code, slots, plan.release_index, plan.sigmas,
            noise, released, iterate.iterate_sum,
        )

    def learn_one(self, z, label, iterate, objective, t, step, rng):
        slot = self.slots.one(t, rng, self.n_buffered)
        self.n_buffered = _giga_buffered_one(
            z, label, iterate.w, self.buffer, self.buffer_signs, self.n_buffered, t, step, objective.lam,
            iterate.center, objective.radius, objective.loss_code, slot, iterate.iterate_sum)

    def export(self, state, arrays):
        state["n_buffered"] = self.n_buffered
        arrays.update(buffer=self.buffer[:self.n_buffered], buffer_signs=self.buffer_signs)

    @classmethod
    def restore(cls, dim, slots, t, state, reader):
        buffer = cls(dim, slots)
        size = slots.size
        n_buffered = reader.integer(state["n_buffered"], "n_buffered", low=0, high=size)
        if n_buffered != min(t, size):
            raise reader.error(f"n_buffered = {n_buffered} after {t} records with a buffer of {size}")
        buffer.buffer[:n_buffered] = reader.array("buffer", (n_buffered, dim))
        reader.rows_in_domain(buffer.buffer[:n_buffered], "buffer")
        signs = reader.array("buffer_signs", (size,), np.int8, finite=False)
        if np.any(np.abs(signs[:n_buffered]) != 1) or np.any(signs[n_buffered:] != 0):
            raise reader.error("buffer_signs must be ±1 in the filled slots and 0 elsewhere")
        buffer.buffer_signs = signs
        buffer.n_buffered = n_buffered
        return buffer
