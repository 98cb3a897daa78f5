"""What an online learner keeps of the past to form its pairs: the interface every storage kind meets.

Round t of Pairwise GIGA pairs the new record with stored ones. How they are stored is a choice of
kind, each a class of its own module, chosen in one place (:func:`onpair.giga.histories.make_history`):

==========================  =====================================  ===============================
kind (snapshot tag)         what is kept                           memory
==========================  =====================================  ===============================
:class:`SplitHistory`       every record, positives and negatives  O(t·d), grows with the stream
  (``"full"``)              apart (AUC, logistic or hinge loss)
:class:`SquareLossHistory`  counts, sums and second moments per    O(d²): the square loss's exact
  (``"statistics"``)        label (AUC, square loss)               full history
:class:`LabelledBuffer`     s records and their ±1 labels (AUC,    O(s·d)
  (``"buffer"``)            FIFO or reservoir)
:class:`AugmentedRows`      records as augmented rows with class   O(t·d²) (history) or O(s·d²)
  (``"metric"``)            codes (metric task, history or buffer)  (buffer)
==========================  =====================================  ===============================

A kind owns its arrays, calls its compiled kernels (a block, and one record on the learner's fast
path, which give the same bits), writes and reads its part of a snapshot (checking what it reads), and
states its memory bound. It never draws noise or plans releases: the learner hands it the release
plan and the pre-drawn noise of the block.
"""

from __future__ import annotations

import abc

import numpy as np


class PairHistory(abc.ABC):
    """The stored past of one learner (abstract).

    Parameters
    ----------
    dim : int
        Number of features d.
    slots : SlotPolicy
        Which slot each record takes (:mod:`onpair.giga.slots`).
    """

    #: Tag of the kind in snapshots (format version 1).
    kind = None
    #: Scalar keys this kind writes into the snapshot state.
    STATE_KEYS = ()

    def __init__(self, dim: int, slots):
        self.dim = int(dim)
        self.slots = slots

    # -- learning ----------------------------------------------------------------------------------
    def encode(self, labels):
        """The kernel form of a block of validated labels (the AUC kinds take the ±1 array as it is)."""
        return labels

    @abc.abstractmethod
    def learn_block(self, Z, labels, iterate, objective, steps, t_start, plan, noise, released, rng) -> None:
        """Run rounds t_start+1 … t_start+m of Pairwise GIGA over the mapped block ``Z`` (m, d).

        The kernel steps ``iterate`` in place, stores the records, and at the rounds the ``plan``
        marks writes ``Π_C[w + σ·noise[k]]`` into ``released[k]``. ``rng`` is the learner's public
        buffer generator (reservoir slots). Nothing here raises: the learner planned and validated
        everything before calling it.
        """

    @abc.abstractmethod
    def learn_one(self, z, label, iterate, objective, t: int, step: float, rng) -> None:
        """Round t for one mapped record with no release: bit for bit what :meth:`learn_block` does."""

    # -- what it holds -----------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def n_stored(self) -> int:
        """Records (or rows) held now."""

    @property
    def memory_bound(self):
        """The most records this kind ever holds (None: it grows with the stream)."""
        return self.slots.size if self.slots.bounded else None

    # -- snapshots ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def export(self, state: dict, arrays: dict) -> None:
        """Write this kind's scalars into ``state`` and its arrays into ``arrays``."""

    @classmethod
    @abc.abstractmethod
    def restore(cls, dim: int, slots, t: int, state: dict, reader) -> "PairHistory":
        """Rebuild from a snapshot read through ``reader``, checking every value against t records."""

    @staticmethod
    def _grown(buffer: np.ndarray, used: int, needed: int) -> np.ndarray:
        """``buffer`` with room for ``needed`` rows (amortised doubling), the first ``used`` kept."""
        if needed <= buffer.shape[0]:
            return buffer
        capacity = max(needed, 2 * buffer.shape[0], 64)
        grown = np.empty((capacity,) + buffer.shape[1:], dtype=buffer.dtype)
        grown[:used] = buffer[:used]
        return grown
