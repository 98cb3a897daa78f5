"""The model a river model predicts with: the public refresh rule and the views of a released model.

A private learner releases a model (or statistics a model is computed from) after every record; recomputing the
model for every prediction would cost more than learning. The river models therefore read the model on a public
rule of the release count alone (:func:`release_window`) and predict with it until the next read. That choice is
state: :class:`Refresh` holds it, **inside the learner** (:meth:`onpair.core.stream.StreamLearner.predictor`), so
that a snapshot carries it and a restored model predicts exactly what the saved one would have, and so that no
wrapper keeps a cache of its own.

What is read is a *view* of one release, a pure function of public values that scores raw records:
:class:`onpair.statistics.released_model.ReleasedModel` for the learners on released statistics, and
:class:`DirectionModel` here for the record-keeping learners (their last released model w).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["release_window", "decayed_refresh_cap", "Refresh", "MappedModel", "DirectionModel", "logistic"]


def release_window(count: int, private: bool, shift: int = 6, cap=None) -> tuple:
    """``[start, stop)``: the learner counts (releases of a private learner, records of a twin) that predict
    with the model read at the first of them that asks for a prediction. A private learner that releases after every record is read at every
    release up to release 2^(s+1), then at every 2^(⌊log₂ k⌋ − s)-th release k (s = ``shift``; 6: up to 128,
    then predictions use a release at most 1/64 of the stream old): post-processing of public releases, a
    public rule of the release count alone, at a fraction of the cost. ``cap`` (a decayed model's, from
    its public half-life) bounds the step.

    Examples
    --------
    >>> release_window(5, True), release_window(300, True), release_window(300, False)
    ((5, 6), (300, 304), (300, 301))
    >>> release_window(300, True, shift=4)
    (288, 304)
    """
    step = 1 << (count.bit_length() - 1 - shift) if private and count >> (shift + 1) else 1
    if cap is not None and step > cap:
        step = cap  # a decayed model (half_life): at most ``cap`` releases old, a public function of H
    start = count - count % step
    return start, start + step


def decayed_refresh_cap(half_life, shift: int = 6):
    """The longest refresh step of a decayed model (:func:`release_window`'s ``cap``): the largest power of two
    ≤ H/2^s (at least 1), so that predictions read a model at most 1/2^s of a half-life old; None without a
    half-life (no cap). A public function of the public H.

    Examples
    --------
    >>> decayed_refresh_cap(None), decayed_refresh_cap(500), decayed_refresh_cap(500, shift=4), decayed_refresh_cap(8)
    (None, 4, 16, 1)
    """
    if half_life is None:
        return None
    return 1 << max(0, int(math.floor(math.log2(float(half_life)))) - shift)


class Refresh:
    """Which view predictions read: the one read at the count ``read`` (the first count of the window that asked
    for a prediction), for every count in ``[start, stop)`` = :func:`release_window` of ``read`` with the refresh
    shift ``shift`` and step cap ``cap`` (kept so that a snapshot's window can be re-derived and checked)."""

    __slots__ = ("start", "stop", "read", "shift", "cap", "view")

    def __init__(self, start: int, stop: int, view, read: int, shift: int, cap):
        self.start, self.stop, self.view = int(start), int(stop), view
        self.read, self.shift, self.cap = int(read), int(shift), None if cap is None else int(cap)

    def covers(self, count: int) -> bool:
        return self.start <= count < self.stop


def logistic(u: float) -> float:
    """σ(u) = 1/(1 + e^(−u)) in Python floats, without overflow; monotone in u."""
    if u >= 0.0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)


class MappedModel:
    """A view of one release that maps raw records by the public bounds it was read with (``bounds``)."""

    __slots__ = ("index", "bounds", "_row")

    def __init__(self, index: int, bounds):
        self.index = int(index)
        self.bounds = bounds
        self._row = None

    def map_one(self, vector: np.ndarray) -> np.ndarray:
        """One checked record mapped by this view's bounds (clipped to the box): into a scratch row where the box
        map writes it, else :meth:`onpair.core.bounds.FeatureBounds.map_one` (the same operations)."""
        row = self._row
        if row is None or row.shape != vector.shape:
            row = self._row = np.empty(vector.shape[0])
        if vector.dtype == np.float64 and self.bounds.map_into(vector, row):
            return row
        return self.bounds.map_one(vector)

    def map_block(self, X: np.ndarray) -> np.ndarray:
        """Checked records (rows) mapped by this view's bounds (the block map)."""
        return self.bounds.transform(X)[0]


def read_only(array) -> np.ndarray:
    """A read-only float64 copy of ``array``."""
    out = np.array(array, dtype=np.float64)
    out.flags.writeable = False
    return out


class DirectionModel(MappedModel):
    """The record-keeping learners' view of their last released model w: p = (1 + s/‖w‖)/2 with s = wᵀφ(x), a
    monotone map of the score onto [0, 1] (not a calibrated probability; 1/2 for w = 0)."""

    __slots__ = ("model", "norm")

    def __init__(self, index: int, model, bounds):
        super().__init__(index, bounds)
        self.model = read_only(model)
        self.norm = math.sqrt(self.model.dot(self.model))  # what np.linalg.norm gives a real vector, bit for bit

    def positive_probability(self, vector: np.ndarray) -> float:
        """P(positive | x) of one raw record."""
        if self.norm == 0.0:
            return 0.5
        ratio = float(self.map_one(vector).dot(self.model)) / self.norm
        return (1.0 + min(1.0, max(-1.0, ratio))) / 2.0

    def positive_probabilities(self, X: np.ndarray) -> np.ndarray:
        """:meth:`positive_probability` of raw records (rows of ``X``)."""
        if self.norm == 0.0:
            return np.full(X.shape[0], 0.5)
        return (1.0 + np.clip((self.map_block(X) @ self.model) / self.norm, -1.0, 1.0)) / 2.0

    def to_state(self) -> tuple:
        """(scalars, arrays) of a snapshot (public values only)."""
        return {"index": self.index}, {"model": self.model}
