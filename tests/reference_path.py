"""The slow reference of what a model predicts: no cache, no fused kernel, no scratch row.

Every fast path of the prediction answers to this module (tests/test_reference_path.py):

* the learner's **current release** (the released prefix sum and its noise variance, read afresh),
* decoded by the documented decode (:func:`onpair.statistics.model.class_statistics`),
* the documented model (:func:`onpair.statistics.model.released_model` with
  :func:`onpair.statistics.model.choose_ridge`) and posterior
  (:func:`onpair.statistics.discriminant.ranking_discriminant` along the AUC model, its log-odds along w by
  :func:`onpair.statistics.discriminant.score_calibration`; :func:`onpair.statistics.discriminant.linear_discriminant`
  for the classifier), all in NumPy,
* a record mapped by :meth:`onpair.core.bounds.FeatureBounds.transform` (the block map),
* read on the documented refresh rule (re-derived here from its docstring, not imported): a private learner's
  model is read at every release up to release 2^(s+1), then at every 2^(⌊log₂ k⌋ − s)-th release k, the step
  capped by the largest power of two ≤ H/2^s for a half-life H; the non-private twin's at every record.
"""

from __future__ import annotations

import math

import numpy as np

from onpair.statistics.discriminant import linear_discriminant, ranking_discriminant, score_calibration
from onpair.statistics.model import choose_ridge, class_statistics, released_model


def refresh_window(count: int, private: bool, shift: int, half_life=None, per_block=False) -> tuple:
    """[start, stop): the counts that predict with the model read at ``start`` (the documented rule; a release
    per block is read again at every block end: a step of 1 of its count)."""
    if not private or per_block:
        return count, count + 1
    step = 1
    if count >= 2 ** (shift + 1):
        step = 2 ** (int(math.floor(math.log2(count))) - shift)
    if half_life is not None:
        step = min(step, 2 ** max(0, int(math.floor(math.log2(half_life))) - shift))
    start = count - count % step
    return start, start + step


def release_count(learner) -> int:
    """The count the documented refresh rule reads: a record-keeping learner's released models; a continual
    release's records learned; a block release's
    (``mechanism="blocks"``, the default "auto" of a stationary stream) records of the completed blocks, from
    the documented schedule (blocks of 32, 64, 128, … records: ends 32, 96, 224, …); the twin's records."""
    if not learner.private:
        return learner.n_seen
    if not hasattr(learner, "release_mechanism"):
        return learner.n_releases  # a record-keeping learner: its released models
    if learner._stats is None:
        return 0  # a warm-up holds every record: nothing released
    fed = learner._stats.mechanism.n_seen
    if learner.release_mechanism != "blocks":
        return fed
    end, size = 0, 32
    while end + size <= fed:
        end, size = end + size, 2 * size
    return end


def decoded_release(learner):
    """The learner's current release decoded afresh (its released sum and noise variance, no cache)."""
    state = learner._stats
    return class_statistics(np.array(state.mechanism.estimate()), state.n_classes, state.dim, state.weights,
                            float(state.mechanism.variance()), 1.0, state.pooled)


def mapped(learner, vector) -> np.ndarray:
    """A record mapped by the learner's current public bounds (the block map)."""
    Z, _ = learner.feature_bounds.transform(np.asarray(vector, dtype=np.float64)[None, :])
    return Z[0]


def _sigmoid(u: float) -> float:
    return 1.0 / (1.0 + math.exp(-u)) if u >= 0 else math.exp(u) / (1.0 + math.exp(u))


def stats_scorer(learner):
    """A function of a raw record giving the class probabilities (in the learner's class order) of the
    learner's current release, computed by the reference functions."""
    if learner._stats is None:
        n = learner._n_classes
        return lambda vector: np.full(n, 1.0 / n)
    stats = decoded_release(learner)
    bounds = learner.feature_bounds
    kind = learner._model_kind
    if kind == "lda":
        posterior = linear_discriminant(stats, covariance=learner.covariance,
                                        ridge="auto" if learner._lam is None else learner._lam)

        def score(vector):
            Z, _ = bounds.transform(np.asarray(vector, dtype=np.float64)[None, :])
            s = Z[0] @ posterior.coef.T + posterior.intercept
            e = np.exp(s - s.max())
            return e / e.sum()
        return score
    ridge = choose_ridge(kind, stats, learner._lam)
    w = released_model(kind, stats, None if kind == "centroid" else ridge)
    posterior = ranking_discriminant(stats, kind, ridge)
    a, b = score_calibration(posterior, w)

    def score(vector):
        Z, _ = bounds.transform(np.asarray(vector, dtype=np.float64)[None, :])
        p = _sigmoid(a * float(Z[0] @ w) + b)
        return np.array([1.0 - p, p])
    return score


def direction_scorer(learner):
    """The record-keeping learners' probability: (1 + clip(wᵀφ(x)/‖w‖))/2 of the last released model w."""
    w = np.array(learner.model, dtype=np.float64)
    norm = float(np.sqrt(w @ w))
    bounds = learner.feature_bounds

    def score(vector):
        if norm == 0.0:
            return np.array([0.5, 0.5])
        Z, _ = bounds.transform(np.asarray(vector, dtype=np.float64)[None, :])
        p = (1.0 + min(1.0, max(-1.0, float(Z[0] @ w) / norm))) / 2.0
        return np.array([1.0 - p, p])
    return score


class ReferencePredictions:
    """The reference predictions of one river model (``PrivatePairwiseClassifier`` or ``PrivateClassifier``), kept
    beside it: call :meth:`proba` wherever the model's ``predict_proba_one`` is called (the refresh rule reads a
    model when a prediction asks for one).

    ``shift``: the refresh shift (the pairwise classifier's :attr:`REFRESH_SHIFT`, 4; the multi-class one's 6).
    """

    def __init__(self, model, shift: int):
        self.shift = shift
        self.window = None
        self.scorer = None
        self.multiclass = hasattr(model, "_domain")

    def labels(self, model):
        return list(model._domain) if self.multiclass else list(model._labels)

    def proba(self, model, x: dict) -> dict:
        """The reference ``predict_proba_one(x)``."""
        labels = self.labels(model)
        inner = model._inner
        order = model._records.order
        count = release_count(inner)
        if order is None or (self.multiclass and (inner.n_seen == 0 or (inner.private and count == 0))):
            return {label: 1.0 / len(labels) for label in labels}
        if self.window is None or not self.window[0] <= count < self.window[1]:
            per_block = getattr(inner, "release_mechanism", None) == "blocks"
            self.window = refresh_window(count, inner.private, self.shift, getattr(inner, "half_life", None), per_block)
            self.scorer = stats_scorer(inner) if hasattr(inner, "_model_kind") else direction_scorer(inner)
        vector = np.array([float(x.get(name, 0.0)) for name in order])
        p = self.scorer(vector)
        return {label: float(v) for label, v in zip(labels, p)}
