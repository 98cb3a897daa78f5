"""Which stored slot each arriving record takes: all records, FIFO, or a reservoir (written once).

A learner that keeps the whole history appends every record; a finite buffer of s slots bounds
memory and the per-round cost (Kar et al. 2013's finite-buffer case, docs/algorithms.md, "Buffered
variants"). The rule is public randomness only, so the sensitivity ledger's κ_t = 1/min(t − 1, s)
holds whatever the data:

* ``"all"``: record t goes to the next free row (the history grows);
* ``"fifo"``: record t overwrites slot (t − 1) mod s: the last s records;
* ``"reservoir"`` (Vitter's Algorithm R): the first s records fill the slots; record t > s replaces
  slot j, j = ⌊u·t⌋ with u uniform on [0, 1), when j < s, and is not kept otherwise (slot −1). The
  buffer is a uniform sample of the past without replacement: a record sits in at most one slot.

One uniform double per late record, in stream order, drawn from the learner's own buffer generator:
a block and its records fed singly draw the same slots (``Generator.integers`` buffers 32-bit draws,
which would not).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS

SLOT_KINDS = ("all", "fifo", "reservoir")
#: Kinds accepted by the learners' ``buffer=(kind, size)`` parameter.
BUFFER_KINDS = ("reservoir", "fifo")


@njit(**NJIT_OPTIONS)
def _slot_of(t, size, reservoir, draw):
    """Slot of record t ≥ 1 in a buffer of ``size`` slots.

    Parameters
    ----------
    t : int
        Stream position of the record (1-based).
    size : int
        Number of slots s ≥ 1.
    reservoir : bool
        Algorithm R if True, FIFO otherwise.
    draw : float
        A uniform double on [0, 1); read only for a reservoir record with t > size.

    Returns
    -------
    int
        The slot in [0, size), or −1 (a reservoir record that is not kept).
    """
    if not reservoir:
        return (t - 1) % size
    if t <= size:
        return t - 1
    j = int(math.floor(draw * t))
    return j if j < size else -1


@njit(**NJIT_OPTIONS)
def _slots_of_block(t_start, size, reservoir, draws, out):
    """Slots of records t_start+1 … t_start+len(out), by :func:`_slot_of`.

    Parameters
    ----------
    t_start : int
        Records seen before the block.
    size : int
        Number of slots s.
    reservoir : bool
        Algorithm R if True, FIFO otherwise.
    draws : ndarray of float64, shape (n_late,)
        One uniform double per record with t > size (reservoir only), in stream order.
    out : ndarray of int64, shape (m,)
        Written in place: the slot of each record of the block.
    """
    k = 0
    for i in range(out.shape[0]):
        t = t_start + i + 1
        draw = 0.0
        if reservoir and t > size:
            draw = draws[k]
            k += 1
        out[i] = _slot_of(t, size, reservoir, draw)


class SlotPolicy:
    """The slot rule of one learner: ``"all"`` (append), ``"fifo"`` or ``"reservoir"`` of ``size`` slots.

    Parameters
    ----------
    kind : {"all", "fifo", "reservoir"}
    size : int
        Slots of a buffer (ignored for ``"all"``).

    Examples
    --------
    >>> import numpy as np
    >>> fifo = SlotPolicy("fifo", 3)
    >>> fifo.block(0, 5, None, 0).tolist(), fifo.one(5, None, 3)
    ([0, 1, 2, 0, 1], 1)
    >>> SlotPolicy("all").block(4, 2, None, 4).tolist()
    [4, 5]
    """

    def __init__(self, kind: str = "all", size: int = 0):
        if kind not in SLOT_KINDS:
            raise ValueError(f"slot kind must be one of {SLOT_KINDS}, got {kind!r}")
        self.kind = kind
        self.size = int(size) if kind != "all" else 0
        self._reservoir = kind == "reservoir"

    @classmethod
    def from_buffer(cls, buffer) -> "SlotPolicy":
        """The policy of a learner's ``buffer`` parameter: None (all records), ("reservoir", s) or
        ("fifo", s); a ``ValueError`` naming the parameter otherwise."""
        if buffer is None:
            return cls("all")
        try:
            kind, size = buffer
        except (TypeError, ValueError):
            raise ValueError(f"buffer must be None, ('reservoir', s) or ('fifo', s), got {buffer!r}") from None
        if kind not in BUFFER_KINDS:
            raise ValueError(f"buffer kind must be one of {BUFFER_KINDS}, got {kind!r}")
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"buffer size must be a positive integer, got {size!r}")
        return cls(kind, int(size))

    @property
    def bounded(self) -> bool:
        """Whether at most ``size`` records are kept."""
        return self.kind != "all"

    @property
    def ledger_size(self) -> int:
        """The ledger's buffer size: s for a buffer (κ_t = 1/min(t − 1, s)), 0 for the full history."""
        return self.size

    def stored_after(self, t: int) -> int:
        """Records held after t records: min(t, s) for a buffer, t otherwise."""
        return min(t, self.size) if self.bounded else t

    def describe(self):
        """``None`` (the whole history) or ``{"kind": …, "size": …}`` as reports show it."""
        return None if not self.bounded else {"kind": self.kind, "size": self.size}

    def as_parameter(self):
        """The ``buffer`` parameter this policy came from (as a list, the way snapshots store it)."""
        return None if not self.bounded else [self.kind, self.size]

    def block(self, t_start: int, m: int, rng, n_stored: int) -> np.ndarray:
        """Slots of records t_start+1 … t_start+m (int64); ``n_stored`` rows are in use before them."""
        if not self.bounded:
            return np.arange(n_stored, n_stored + m, dtype=np.int64)
        late = max(0, t_start + m - max(t_start, self.size)) if self._reservoir else 0
        draws = rng.random(late) if late else np.zeros(0)
        out = np.empty(m, dtype=np.int64)
        _slots_of_block(t_start, self.size, self._reservoir, draws, out)
        return out

    def one(self, t: int, rng, n_stored: int) -> int:
        """Slot of record t, as :meth:`block` would give it (the same draw: ``random()`` is the same
        double as ``random(1)[0]``)."""
        if not self.bounded:
            return n_stored
        draw = rng.random() if (self._reservoir and t > self.size) else 0.0
        return int(_slot_of(t, self.size, self._reservoir, draw))
