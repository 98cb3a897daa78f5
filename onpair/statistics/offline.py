"""OffPairStats: one private release of the per-class pairwise statistics, and the model it determines.

The offline twin of :class:`onpair.OnPairStats`: ``fit`` sums every record's contribution v(z) (counts,
sums and second moments of its class, :mod:`onpair.statistics._kernels`), adds one Gaussian noise draw
calibrated to the proven sensitivity (:func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`) with the
analytic Gaussian mechanism, and computes the model from that single release
(:mod:`onpair.statistics.model`): the exact minimiser of the regularised pairwise square loss
over all opposite-label pairs (AUC), the centroid difference, or the discriminant metric.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.estimator import PairwiseEstimator, fit_report
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.conversions import rho_from_dp
from ..privacy.events import GaussianRelease
from ..privacy.gaussian import gaussian_rho, gaussian_sigma
from ..privacy.reports import warn_large_delta
from ._kernels import statistics_total
from .model import DEFAULT_WEIGHTS, check_weights, choose_ridge, class_statistics, model_kind, released_model


class OffPairStats(PairwiseEstimator):
    """Offline (ε, δ)-DP pairwise learner from one release of the class statistics.

    One Gaussian release of the per-class counts, sums and second moments (sensitivity Δ of one record,
    proven in :mod:`onpair.privacy.statistics_sensitivity`; σ from the analytic Gaussian mechanism), then, as
    post-processing, the minimiser of the regularised pairwise square loss over all opposite-label pairs
    ``coef_ ∝ (C₊ + C₋ + (λ/2)I)⁻¹(μ₊ − μ₋)`` (AUC), the centroid difference, or for the metric task the
    discriminant metric (docs/algorithms.md#discriminant-metric) or ``coef_ = (S_w + λI)⁻¹``. No iterate, no pass order: the result depends on the data only through
    the released statistics.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        (ε, δ)-DP of the released statistics (and so of ``coef_``).
    task : {"auc", "metric"}, default "auc"
    model_type : {"square", "centroid", "discriminant", "whitening"}, optional
        Default "square" (AUC), "discriminant" (metric task: Fisher's discriminant directions scaled by the
        within-class spread, :func:`onpair.statistics.model.discriminant_metric`; "whitening" is
        the inverse regularised within-class covariance).
    lam : float or "auto", default "auto"
        The ridge; "auto" is 10⁻³ plus the noise ridge computed from the release (public), as for
        :class:`onpair.OnPairStats`.
    weights : (float, float, float), default (0.8, 1.0, 0.6)
        Public weights of counts, sums and second moments.
    bounds, norm_bound : public feature bounds (:class:`onpair.core.bounds.FeatureBounds`).
    classes : sequence of labels, optional
        The **public** label domain (AUC: two labels, ``classes[1]`` positive; metric: every class,
        required). Without it the AUC task reads the two labels off ``y``, so which label values occur
        must itself be public (pass it when in doubt: a record that changed the label set would flip the
        positive class, which no noise covers).
    private : bool, default True
        False gives the non-private twin (the exact statistics).
    random_state : int, SeedSequence, Generator or None
        The noise; None draws fresh OS entropy (a seed is for reproducible experiments only).
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`; e.g. every fit of a grid
        search): each fit charges it its release event, and is refused (``PrivacyBudgetExceeded``, the
        estimator unchanged) when the budget cannot pay. scikit-learn's ``clone`` shares it.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OffPairStats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = OffPairStats(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9, est.coef_.shape, est.privacy_report_["epsilon_spent"] <= 1.0
    (True, (3,), True)
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, task="auc", model_type=None, lam="auto", weights=DEFAULT_WEIGHTS,
                 bounds=None, norm_bound=None, classes=None, private=True, random_state=None, accountant=None):
        self._store_params(locals())

    def _validate_params(self):
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        kind = model_kind(self._metric_task(), self.model_type, self.task)
        if isinstance(self.lam, str):
            if self.lam != "auto":
                raise ValueError(f"lam must be a number >= 0 or 'auto', got {self.lam!r}")
        elif isinstance(self.lam, bool) or not isinstance(self.lam, (int, float)) or not self.lam >= 0 \
                or not math.isfinite(self.lam):
            raise ValueError(f"lam must be a finite number >= 0 or 'auto', got {self.lam!r}")
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        try:
            weights, sensitivity = check_weights(self.weights)
        except (TypeError, ValueError) as exc:  # scikit-learn's convention: a bad parameter is a ValueError
            raise ValueError(str(exc)) from None
        return kind, weights, sensitivity

    def _release_settings(self):
        """Every parameter checked, before any record is read: ``(kind, weights, sensitivity, n_classes)``."""
        kind, weights, sensitivity = self._validate_params()
        metric = self._metric_task()
        if metric and self.classes is None:
            # The class blocks' number and order are part of the release: read off y, one record could
            # change them (the only record of a class relabelled), which no noise covers.
            raise ValueError("task='metric' needs the public class domain: classes=[...] (every label the data "
                             "may carry, from its documentation; never read off the data)")
        n_classes = len(self.classes) if metric else 2
        return kind, weights, sensitivity, n_classes

    def _class_codes(self, labels) -> np.ndarray:
        """Class codes of the statistics' blocks: the metric task's codes, or 1 for a positive sign."""
        return labels.astype(np.int64) if self._metric_task() else (labels > 0).astype(np.int64)

    def _fit_released(self, Z, labels, seed_sequence):
        plan = self._release_settings()
        total = statistics_total(Z, self._class_codes(labels), plan[3], plan[1])
        return self._release(plan, total, Z.shape[0], Z.shape[1], seed_sequence)

    #: A distributed fit keeps each partition's records in order with their class codes (the protocol of
    #: :class:`onpair.distributed.PartitionedFit`).
    partition_layout = "records"

    def check_partitioned_fit(self):
        """The parameter checks of a distributed fit, before any task is submitted."""
        self._release_settings()

    def fit_partitions(self, partitions, seed_sequence):
        """The distributed fit (:mod:`onpair.distributed`): each partition sums its records' statistics on
        its worker, a tree of additions brings the one total here, and the noise is drawn here, once."""
        plan = self._release_settings()
        total = partitions.sum(_partition_statistics, plan[3], np.asarray(plan[1], dtype=np.float64))
        return self._release(plan, total, partitions.n, partitions.dim, seed_sequence)

    def _release(self, plan, total, n, dim, seed_sequence):
        """One Gaussian release of the exact ``total`` (the only place noise is drawn), and its model."""
        kind, weights, sensitivity, n_classes = plan
        if self.private:
            warn_large_delta(type(self).__name__, self.delta, n, stacklevel=4)
        if self.private:
            sigma = gaussian_sigma(sensitivity, self.epsilon, self.delta, method="analytic")
            noise_rng = np.random.Generator(np.random.PCG64(seed_sequence))
            total = total + sigma * noise_rng.standard_normal(total.shape[0])
            variance = sigma ** 2
        else:
            variance = 0.0
        stats = class_statistics(total, n_classes, dim, weights, variance)
        del total  # the exact sums (private=False: the statistics themselves) go no further than here
        lam = choose_ridge(kind, stats, None if isinstance(self.lam, str) else self.lam)
        coef = released_model(kind, stats, lam).reshape(-1)
        extra = {"model_type": kind, "ridge": float(lam), "n_classes": n_classes}
        if not self.private:
            return coef, fit_report(self, (), n=n, mode="exact statistics", public=extra)
        rho_budget = rho_from_dp(self.epsilon, self.delta, method="gaussian")
        # σ is the analytic-Gaussian σ for (ε, δ), i.e. exactly ρ-zCDP for this ρ up to the rounding of two
        # root finders: the event is charged the budget it was calibrated to when Δ²/(2σ²) rounds above it.
        rho = min(gaussian_rho(sensitivity, sigma), rho_budget)
        event = GaussianRelease(sensitivity=sensitivity, sigma=sigma, round=n, what="the class statistics", rho=rho)
        return coef, fit_report(self, [event], n=n, mode="statistics", rho_budget=rho_budget, public=extra)


def _partition_statistics(part, n_classes: int, weights) -> np.ndarray:
    """Σ v(z) over one partition's records (``layout="records"``), on its worker: deterministic."""
    return statistics_total(part.Z, part.codes, n_classes, weights)
