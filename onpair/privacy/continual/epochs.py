"""Doubling epochs of least-squares trees: unbounded streams at the cost ρ, error O(log² t)."""

from __future__ import annotations

import math

import numpy as np

from .base import PrefixSumMechanism
from .limits import MAX_RECORDS, check_int, check_state_size
from .tree import TreeAggregation


class EpochTrees(PrefixSumMechanism):
    """Unbounded continual release by doubling epochs, each a least-squares tree with a known horizon.

    Epoch e covers records s_e + 1 … s_e + L_e with L_e = T₀·2^e and s_e = T₀(2^e − 1); it runs a
    :class:`TreeAggregation` with ``horizon=L_e`` and the **whole** budget ρ. The prefix estimate at t
    is the sum of the completed epochs' final estimates (each the least-squares estimate of its root,
    released when the epoch ends) plus the current epoch's prefix estimate.

    Cost. Neighbouring streams differ in one record, which lies in exactly one epoch: only that epoch's
    tree sees a different input, and the trees draw independent noise, so the joint release is as
    private as that one tree, ρ-zCDP (parallel composition over disjoint parts of the stream). It holds
    for adaptive inputs too (later records chosen after seeing earlier releases): given the releases so
    far, every later epoch's tree is the same mechanism on the same inputs under both streams, so by
    adaptive composition it adds nothing. So any number of records costs ρ, and the error of a prefix is
    that of a tree whose horizon is known: variance O(log² t), against O(t/b) for a band b and a
    larger constant for the unbounded tree with level shares ρ_h ∝ 1/h² (docs/continual_release.md).

    Memory: the current tree's two (levels, k) arrays and one k-vector of completed totals.

    Parameters
    ----------
    dim, sensitivity, rho : as :class:`TreeAggregation`.
    first_epoch : int, default 64
        T₀, the length of the first epoch (a power of two, so that every epoch's root node exists).
    horizon : int or None
        Optional total length (records beyond it are refused).

    Examples
    --------
    >>> import numpy as np
    >>> mech = EpochTrees(dim=2, sensitivity=1.0, rho=0.5, first_epoch=4)
    >>> est = mech.add_block(np.ones((13, 2)), np.random.default_rng(0), return_estimates=True)
    >>> mech.describe()["epoch"], mech.describe()["epoch_start"]   # epochs of 4, 8, 16 records
    (2, 12)
    >>> bool(mech.variance(13) > mech.variance(12) - 1e-12)
    True
    """

    kind = "epochs"
    option = "epochs"
    _rows_per_record = 2

    def __init__(self, *, dim, sensitivity, rho, first_epoch=64, horizon=None):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        first_epoch = check_int(first_epoch, "first_epoch", maximum=2**40)
        if first_epoch & (first_epoch - 1):
            raise ValueError(f"first_epoch must be a power of two, got {first_epoch!r}")
        self._first = first_epoch
        # The trees of later epochs have more levels (a larger σ and state, up to 63 levels): check the
        # largest one now, so that no epoch can fail to start in the middle of a block.
        # (an epoch is at most twice as long as the records before its end: up to 2·max(horizon, T₀))
        last = self.capacity if self.horizon is None else min(MAX_RECORDS, 2 * max(self.horizon, first_epoch))
        check_state_size(2 * (last.bit_length() + 1) * self.dim + self.dim,
                          f"dim={self.dim!r} and trees of up to {last.bit_length()} levels")
        TreeAggregation(dim=1, sensitivity=self.sensitivity, rho=self.rho, horizon=last)
        self._completed = np.zeros(self.dim)
        self._start_epoch(0)

    @property
    def first_epoch(self) -> int:
        """int: T₀, the first epoch's length."""
        return self._first

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "first_epoch": self.first_epoch,
                "horizon": self.horizon}

    # -- epochs ------------------------------------------------------------------------------------
    def _epoch_of(self, t: int):
        """(epoch index, its start s_e, its length L_e) of the epoch that record t + 1 falls in."""
        e = (t // self._first + 1).bit_length() - 1
        start = self._first * ((1 << e) - 1)
        return e, start, self._length(e, start)

    def _length(self, e: int, start: int) -> int:
        """L_e = T₀·2^e, cut to the records the horizon leaves (its tree then has fewer levels and less
        noise); at least 1, for the never-fed epoch after a horizon that is reached."""
        length = self._first << e
        if self.horizon is not None:
            length = max(1, min(length, self.horizon - start))
        return length

    def _tree(self, length: int) -> TreeAggregation:
        return TreeAggregation(dim=self.dim, sensitivity=self.sensitivity, rho=self.rho, horizon=length)

    def _start_epoch(self, e: int) -> None:
        self._epoch = e
        self._epoch_start = self._first * ((1 << e) - 1)
        self._current = self._tree(self._length(e, self._epoch_start))

    def _feed(self, V, rng, out) -> None:
        lo = 0
        m = V.shape[0]
        while lo < m:
            room = self._current.horizon - self._current.n_seen
            hi = min(m, lo + room)  # room ≥ 1: the capacity check refused records past the horizon
            part = self._current.add_block(V[lo:hi], rng, return_estimates=out is not None)
            if out is not None:
                out[lo:hi] = part + self._completed
            self._n_seen += hi - lo
            if self._current.n_seen == self._current.horizon:
                self._completed = self._completed + self._current.estimate()  # the epoch's released total
                self._start_epoch(self._epoch + 1)
            lo = hi

    def _noise_rows(self, t0, m):  # not used: _feed delegates to the epoch trees
        raise NotImplementedError

    def _apply(self, V, Z, out=None, nodes=None):  # not used: _feed delegates to the epoch trees
        raise NotImplementedError

    # -- releases ----------------------------------------------------------------------------------
    def estimate(self):
        """The released prefix estimate at ``n_seen``: completed epochs' totals plus the current epoch's."""
        return self._completed + self._current.estimate()

    def _variance(self, t):
        e, start, length = self._epoch_of(t)
        if t == start and e > 0:  # t ends epoch e − 1 exactly
            e -= 1
            start -= self._first << e
            length = self._length(e, start)
        total = math.fsum(self._tree(L).variance(L) for L in
                          (self._length(j, self._first * ((1 << j) - 1)) for j in range(e)))
        return total + self._tree(length).variance(t - start)

    def describe(self):
        """Public summary: ``kind``, ``first_epoch``, ``epoch`` (current index), ``epoch_start``,
        ``epoch_length``, ``sigma`` (of the current epoch's tree), ``rho_spent_bound`` (ρ: every epoch's tree
        costs at most ρ, and epochs hold disjoint records), ``n_seen``."""
        out = self._common_description()
        tree = self._current.describe()
        # Every epoch's tree costs Δ²L/(2σ²) ≤ ρ (its σ carries the planning margin), and an unbounded
        # stream has epochs of every length: the bound for the whole stream is ρ itself.
        out.update(first_epoch=self._first, epoch=self._epoch, epoch_start=self._epoch_start,
                   epoch_length=self._current.horizon, sigma=tree["sigma"], levels=tree["levels"],
                   rho_spent_bound=self.rho, composition="parallel over epochs")
        return out

    def privacy_rows(self):
        """One row per epoch so far (``what``, ``level`` None, ``nodes_released``, ``sigma``, ``rho``).
        Each epoch's ``rho`` is what a record of that epoch pays; epochs hold disjoint records, so the
        rows do **not** add up: the stream costs the largest of them (parallel composition)."""
        rows = []
        for e in range(self._epoch + 1):
            start = self._first * ((1 << e) - 1)
            length = self._length(e, start)
            seen = min(length, self._n_seen - start)
            if seen <= 0 and e > 0:
                break
            tree = self._tree(length).describe()
            nodes = sum(seen >> h for h in range(tree["levels"]))
            rows.append({"what": f"epoch {e}: tree over records {start + 1}…{start + length}", "level": None,
                         "nodes_released": nodes, "sigma": tree["sigma"], "rho": tree["rho_spent_bound"]})
        return rows

    # -- persistence -------------------------------------------------------------------------------
    def _array_shapes(self):
        return self._array_shapes_at(self._n_seen)

    def _array_shapes_at(self, n_seen):
        _, _, length = self._epoch_of(n_seen)
        shapes = {"completed": (self.dim,)}
        shapes.update({f"tree.{k}": v for k, v in self._tree(length)._array_shapes().items()})
        return shapes

    def _export_arrays(self):
        arrays = {"completed": self._completed.copy()}
        arrays.update({f"tree.{k}": v for k, v in self._current._export_arrays().items()})
        return arrays

    def _import_arrays(self, n_seen, arrays):
        e, start, _ = self._epoch_of(n_seen)
        if e == 0 and np.any(arrays["completed"] != 0.0):
            raise ValueError(f"arrays['completed'] is not zero, but n_seen={n_seen} lies in the first epoch: no "
                             "epoch has completed (inconsistent with n_seen)")
        self._start_epoch(e)
        tree_arrays = {k[len("tree."):]: v for k, v in arrays.items() if k.startswith("tree.")}
        self._current._import_arrays(n_seen - start, tree_arrays)
        self._current._n_seen = n_seen - start
        self._completed = arrays["completed"]
