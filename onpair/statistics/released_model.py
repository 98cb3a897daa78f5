"""One release and everything computed from it: :class:`ReleasedModel`, the only cache of the post-processing.

A learner on released statistics (:class:`onpair.OnPairStats`) publishes the per-class statistics along the
stream (once per public block, or a prefix sum after every record). Everything a user sees is post-processing of one such release: the decoded class statistics,
the model, the calibrated posterior, and the log-odds a·wᵀz + b along the AUC model that the river classifier
predicts with. A :class:`ReleasedModel` holds **one** release (its index, its released sum, its noise variance)
with the public settings that turn it into a model and the public bounds that map a record for it; it computes
each of those pieces once, when first asked, and never changes afterwards. The learner keeps the one of its
latest release (:meth:`onpair.OnPairStats.released_model`), and the refresh rule of the river models keeps the one
predictions read (:meth:`onpair.core.stream.StreamLearner.predictor`): two objects of the same kind, no other cache.

Because a ReleasedModel is a pure function of public values (the release, the public settings and the public
bounds), it can be written into a snapshot (:meth:`ReleasedModel.to_state`) and rebuilt bit for bit by its
learner: a restored river model predicts with the model the saved one predicted with.
"""

from __future__ import annotations

import numpy as np

from ..core.bounds import _box_probability
from ..core.predictor import MappedModel, logistic, read_only
from ._ranking_kernels import fast_ranking_discriminant, released_refresh_of, square_model_of
from .discriminant import linear_discriminant, score_calibration
from .model import choose_ridge, class_statistics, released_model


class ReleasedModel(MappedModel):
    """Everything computed from one release (all public: post-processing), each piece once.

    Parameters
    ----------
    index : int
        The release's number (records learned when it was made; 0: the empty release).
    estimate : ndarray of float64, shape (k,)
        The released prefix sum (held read-only).
    variance : float
        The per-coordinate variance of its noise (0 for the non-private twin).
    layout : (n_classes, dim, weights, pooled)
        The public layout of the statistics.
    kind : str
        The model: "square", "centroid" (AUC), "discriminant", "whitening" (metric) or "lda" (classifier).
    lam : float or None
        The learner's ridge (None: automatic).
    covariance : str or float
        The classifier's covariance model.
    bounds : FeatureBounds
        The public bounds a record is mapped by for this model (the discovered box after a warm-up).
    """

    __slots__ = ("source", "estimate", "variance", "layout", "kind", "lam", "covariance", "_statistics", "_model",
                 "_posterior", "_calibration", "_scorer")

    def __init__(self, index, estimate, variance, layout, kind, lam, covariance, bounds, source=None):
        super().__init__(index, bounds)
        self.estimate = read_only(estimate)
        self.variance = float(variance)
        self.layout = layout
        self.kind = kind
        self.lam = lam
        self.covariance = covariance
        self._statistics = self._model = self._posterior = self._calibration = None
        self._scorer = None  # the compiled scorer's arguments once bound (_bind_scorer), False where there is none
        self.source = source  # the release state it was read from (the learner's cache key); None once restored

    # -- the pieces, each computed once ------------------------------------------------------------
    @property
    def statistics(self):
        """Counts, means and covariances decoded from the release (:func:`onpair.statistics.model.class_statistics`)."""
        if self._statistics is None:
            n_classes, dim, weights, pooled = self.layout
            self._statistics = class_statistics(self.estimate, n_classes, dim, weights, self.variance, 1.0, pooled)
        return self._statistics

    def ridge(self) -> float:
        """λ of the model (the learner's, or the automatic one of this release); the classifier's is its posterior's."""
        if self.lam is not None:
            return self.lam
        if self.kind == "lda":
            return self.posterior.ridge
        return choose_ridge(self.kind, self.statistics)

    def _refresh_square(self) -> bool:
        """The square model, its posterior and (a, b) in one compiled call; False where the kernel leaves them to the
        reference paths (an indefinite scatter, a singular covariance model)."""
        n_classes, dim, weights, _ = self.layout
        found = released_refresh_of(self.estimate, dim, weights, self.variance, self.lam)
        if found is None:
            return False
        self._model, self._posterior, self._calibration = found
        return True

    @property
    def model(self) -> np.ndarray:
        """The model (read only): a vector (AUC), a d×d matrix (metric) or the classifier's coefficients (C, d)."""
        if self._model is None:
            if self.kind == "lda":
                self._model = self.posterior.coef
            else:
                model = None
                if self.kind == "square":
                    n_classes, dim, weights, _ = self.layout
                    model = square_model_of(self.estimate, dim, weights, self.variance, self.lam)
                if model is None:  # the general path (the projection of an indefinite scatter, the other kinds)
                    ridge = None if self.kind == "centroid" else self.ridge()
                    model = released_model(self.kind, self.statistics, ridge)
                self._model = model
        return self._model

    @property
    def posterior(self):
        """The calibrated posterior (:class:`onpair.statistics.discriminant.LinearDiscriminant`): the linear
        discriminant (classifier) or the binary posterior along the AUC model. Not for the metric task."""
        if self._posterior is None:
            if self.kind in ("discriminant", "whitening"):
                raise ValueError("posterior() is for task='auc' or 'classify'; with task='metric' use transform(X) "
                                 "or model")
            if self.kind == "lda":
                self._posterior = linear_discriminant(self.statistics, covariance=self.covariance,
                                                      ridge="auto" if self.lam is None else self.lam)
            elif not (self.kind == "square" and self._refresh_square()):
                self._posterior = fast_ranking_discriminant(self.statistics, self.kind, self.ridge())
        return self._posterior

    @property
    def calibration(self) -> tuple:
        """(a, b): the posterior's log-odds along the AUC model w as a·wᵀz + b
        (:func:`onpair.statistics.discriminant.score_calibration`)."""
        if self._calibration is None:
            if self.kind == "square" and self._posterior is None and self._refresh_square():
                return self._calibration
            self._calibration = score_calibration(self.posterior, self.model)
        return self._calibration

    # -- scoring records ---------------------------------------------------------------------------
    def positive_probability(self, vector: np.ndarray) -> float:
        """P(positive | x) of one raw record (AUC task): σ(a·wᵀφ(x) + b). Under box bounds, a finite float64 record
        of the model's length is scored in one compiled call (:func:`onpair.core.bounds._box_probability`, the
        bits of the Python path below); anything else takes that path."""
        scorer = self._scorer
        if scorer is None:
            scorer = self._scorer = self._bind_scorer()
        if scorer is not False and vector.dtype == np.float64 and vector.shape == scorer[1]:
            p = _box_probability(vector, *scorer[0])
            if p == p:  # NaN: a record holding NaN or ±inf, which the general path reports
                return p
        model = self.model
        slope, intercept = self.calibration
        return logistic(slope * float(self.map_one(vector).dot(model)) + intercept)

    def _bind_scorer(self):
        """((pack, a, b), record shape): the arguments of the compiled scorer after the record, computed once (the
        pieces never change; ``pack`` holds the box rows, the model and a scratch row), or False for a norm bound
        or a model that is not a vector."""
        model = self.model
        if self.bounds.kind != "box" or model.ndim != 1:
            return False
        slope, intercept = self.calibration
        pack = np.empty((5, model.shape[0]))
        pack[:3] = self.bounds.box_rows(model.shape[0])
        pack[3] = model
        return (pack, float(slope), float(intercept)), model.shape

    def positive_probabilities(self, X: np.ndarray) -> np.ndarray:
        """:meth:`positive_probability` of raw records (rows of ``X``)."""
        model = self.model
        slope, intercept = self.calibration
        return np.array([logistic(slope * s + intercept) for s in (self.map_block(X) @ model).tolist()])

    def log_proba_one(self, vector: np.ndarray) -> np.ndarray:
        """log P(c | x) of one raw record for every class (the posterior's per-record path)."""
        return self._normalised(self.posterior.log_proba_one(self.map_one(vector)))

    def log_proba(self, X: np.ndarray) -> np.ndarray:
        """log P(c | x) of raw records (rows of ``X``) for every class, row by row as :meth:`log_proba_one`."""
        return self._normalised(self.posterior.log_proba(self.map_block(X)))

    def _normalised(self, log_p: np.ndarray) -> np.ndarray:
        """The non-private twin's log-posteriors normalised once more (a private release's as they are). The twin's
        ridge follows its data's scale, so in a box much wider than its data its scores are differences of numbers
        up to 10⁸ or more, whose log-softmax loses the normaliser's last digits (probabilities summing to 1 ± 10⁻⁸);
        the scores are then moderate and a second log-softmax restores the sum to rounding."""
        if self.variance > 0.0:
            return log_p
        top = np.max(log_p, axis=-1, keepdims=True)
        return log_p - (top + np.log(np.sum(np.exp(log_p - top), axis=-1, keepdims=True)))

    # -- snapshots ---------------------------------------------------------------------------------
    def to_state(self) -> tuple:
        """(scalars, arrays) of a snapshot, from which the learner rebuilds this model (public values only)."""
        return {"index": self.index, "variance": self.variance}, {"estimate": self.estimate}
