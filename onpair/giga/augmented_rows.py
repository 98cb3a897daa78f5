"""The metric task's stored records as augmented rows with class codes (whole history or a buffer)."""

from __future__ import annotations

import numpy as np

from ..core._metric_pair_kernels import _augmented_row, augmented_width
from ._metric_kernels import _metric_giga, _metric_giga_one
from ..core._validation import class_codes
from .pair_history import PairHistory


class AugmentedRows(PairHistory):
    """Each stored record x as one row ``[x_k x_l for k ≤ l, x]`` and its class code.

    With these rows a pair's distance under W is one dot product and the round's gradient one weighted
    row sum (:mod:`onpair.giga._metric_kernels`). The slot policy appends every record (the whole history,
    O(t·d²) memory) or keeps s of them (FIFO or reservoir, O(s·d²)). Class labels of any type get integer
    codes in order of first appearance; a block's new classes are committed only with the block, so a
    failed call adds none. A snapshot stores only the records (the last d entries of each row) and
    rebuilds the rows, so a file cannot carry products that no record produces.

    Examples
    --------
    >>> from onpair.giga.slots import SlotPolicy
    >>> rows = AugmentedRows(2, SlotPolicy("fifo", 4))
    >>> rows.rows.shape, rows.encode(["a", "b", "a"])[0].tolist()
    ((4, 5), [0, 1, 0])
    """

    kind = "metric"
    STATE_KEYS = ("n_rows", "classes")

    def __init__(self, dim, slots):
        super().__init__(dim, slots)
        capacity = slots.size if slots.bounded else 0
        self.rows = np.empty((capacity, augmented_width(dim)))
        self.row_labels = np.zeros(capacity, dtype=np.int64)
        self.n_rows = 0
        self.class_codes = {}  # class label -> int code, in order of first appearance

    @property
    def n_stored(self) -> int:
        return self.n_rows

    @property
    def records(self) -> np.ndarray:
        """The stored records (n_rows, d): the last d entries of each augmented row (a copy)."""
        return np.ascontiguousarray(self.rows[:self.n_rows, -self.dim:])

    def encode(self, labels):
        """(codes, the class map extended by the block's new classes): nothing is committed here."""
        return class_codes(labels, self.class_codes)

    def _make_room(self, extra: int) -> None:
        """Room for ``extra`` more rows (and their labels) in the whole history."""
        self.rows = self._grown(self.rows, self.n_rows, self.n_rows + extra)
        if self.row_labels.shape[0] < self.rows.shape[0]:
            grown = np.zeros(self.rows.shape[0], dtype=np.int64)
            grown[:self.n_rows] = self.row_labels[:self.n_rows]
            self.row_labels = grown

    def learn_block(self, Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng):
        codes, classes = labels
        m = Z.shape[0]
        slots = self.slots.block(t_start, m, rng, self.n_rows)
        if not self.slots.bounded:
            self._make_room(m)
        self.n_rows = _metric_giga(
            Z, codes, iterate.w, self.rows, self.row_labels, self.n_rows, t_start, steps, objective.lam,
            iterate.center, objective.radius, objective.constraint, objective.loss_code, objective.terms_array, slots,
            plan.release_index, plan.sigmas, noise, released, iterate.iterate_sum,
        )
        self.class_codes = classes

    def learn_one(self, z, label, iterate, objective, t, step, rng):
        slot = self.slots.one(t, rng, self.n_rows)
        code = self.class_codes.get(label)
        new_class = code is None
        if new_class:
            code = len(self.class_codes)
        if not self.slots.bounded:
            self._make_room(1)
        self.n_rows = _metric_giga_one(
            z, code, iterate.w, self.rows, self.row_labels, self.n_rows, t, step, objective.lam, iterate.center,
            objective.radius, objective.constraint, objective.loss_code, objective.terms_array, slot,
            iterate.iterate_sum)
        if new_class:
            self.class_codes[label] = code

    def export(self, state, arrays):
        state["n_rows"] = self.n_rows
        state["classes"] = list(self.class_codes)
        arrays.update(records=self.records, record_labels=self.row_labels[:self.n_rows])

    @classmethod
    def restore(cls, dim, slots, t, state, reader):
        history = cls(dim, slots)
        n_rows = reader.integer(state["n_rows"], "n_rows", low=0)
        expected = slots.stored_after(t)
        if n_rows != expected:
            raise reader.error(f"n_rows = {n_rows} after {t} records, expected {expected}")
        classes = state["classes"]
        if (not isinstance(classes, list) or len(set(map(repr, classes))) != len(classes)
                or any(type(c) not in (int, str) for c in classes)):
            raise reader.error("classes must be a list of distinct integers or strings")
        records = reader.array("records", (n_rows, dim))
        reader.rows_in_domain(records, "records")
        labels = reader.array("record_labels", (n_rows,), np.int64, finite=False)
        if n_rows and (labels.min() < 0 or labels.max() >= len(classes)):
            raise reader.error("record_labels must be codes of the listed classes")
        capacity = slots.size if slots.bounded else n_rows
        rows = np.empty((capacity, augmented_width(dim)))
        for i in range(n_rows):
            _augmented_row(records[i], rows[i])
        row_labels = np.zeros(capacity, dtype=np.int64)
        row_labels[:n_rows] = labels
        history.rows, history.row_labels, history.n_rows = rows, row_labels, n_rows
        history.class_codes = {label: code for code, label in enumerate(classes)}
        return history
