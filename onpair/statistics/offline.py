"""OffPairStats: one private release of the per-class pairwise statistics, and the model it determines.

The offline twin of :class:`onpair.OnPairStats`: ``fit`` sums every record's contribution v(z) (counts,
sums and second moments of its class, :mod:`onpair.statistics._kernels`), adds one Gaussian noise draw
calibrated to the proven sensitivity (:func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`) with the
analytic Gaussian mechanism, and computes the model from that single release
(:mod:`onpair.statistics.model`): the exact minimiser of the regularised pairwise square loss
over all opposite-label pairs (AUC), the centroid difference, the discriminant metric, or the calibrated
multi-class classifier (``task="classify"``, :mod:`onpair.statistics.discriminant`). For the AUC task and the
classifier ``predict_proba`` is the calibrated posterior of the release (scikit-learn's classifier API:
``classes_`` sorted, ``predict`` its arg-max).
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import is_dask_collection
from ..core.discovery import declared_box, discover, found_bounds, model_rho, range_events, \
    range_seed_sequence
from ..core.estimator import PairwiseEstimator, fit_report, warn_clipped
from ..core.fitting import OBSERVED, FittedModel, check_fit_accountant, domain_read_off_y, label_coding
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.conversions import rho_from_dp
from ..privacy.events import GaussianRelease
from ..privacy.gaussian import gaussian_rho, gaussian_sigma, sigma_for_rho
from ..privacy.reports import warn_large_delta
from ._kernels import statistics_total
from ._ranking_kernels import fast_ranking_discriminant
from .discriminant import check_covariance_model, linear_discriminant
from .model import (DEFAULT_WEIGHTS, check_task, check_weights, choose_ridge, class_statistics, model_kind,
                    moment_layout, released_model, released_signal)


class OffPairStats(PairwiseEstimator, algorithm="offstats"):
    """Offline (ε, δ)-DP pairwise learner from one release of the class statistics.

    One Gaussian release of the per-class counts, sums and second moments (sensitivity Δ of one record,
    proven in :mod:`onpair.privacy.statistics_sensitivity`; σ from the analytic Gaussian mechanism), then, as
    post-processing, the minimiser of the regularised pairwise square loss over all opposite-label pairs
    ``coef_ ∝ (C₊ + C₋ + (λ/2)I)⁻¹(μ₊ − μ₋)`` (AUC), the centroid difference, for the metric task the
    discriminant metric (docs/algorithms.md#discriminant-metric) or ``coef_ = (S_w + λI)⁻¹``, or for the
    classifier (``task="classify"``) the calibrated linear discriminant over every class of the public domain
    (docs/algorithms.md#classifier). No iterate, no pass order: the result depends on the data only through
    the released statistics.

    ``predict_proba`` is the calibrated posterior of the release (``posterior_``): for the AUC task along the
    released model, so ``decision_function`` (its log-odds, an increasing affine function of ``coef_ᵀφ(x)``)
    ranks exactly as the model and ``score`` (ROC AUC of ``classes_[1]``) is the model's AUC; for the
    classifier over every class, with ``score`` the accuracy. ``predict`` is the arg-max in both.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        (ε, δ)-DP of the released statistics (and so of ``coef_``).
    task : {"auc", "metric", "classify"}, default "auc"
    model_type : {"square", "centroid", "discriminant", "whitening", "lda"}, optional
        Default "square" (AUC), "discriminant" (metric task: Fisher's discriminant directions scaled by the
        within-class spread, :func:`onpair.statistics.model.discriminant_metric`; "whitening" is
        the inverse regularised within-class covariance) and "lda" (the classifier).
    lam : float or "auto", default "auto"
        The ridge; "auto" is 10⁻³ plus the noise ridge computed from the release (public), as for
        :class:`onpair.OnPairStats`.
    covariance : {"auto", "full", "diagonal"} or float in [0, 1], default "auto"
        The classifier's covariance model (``task="classify"`` only), as for :class:`onpair.OnPairStats`.
    moments : {"pooled", "per-class"}, optional
        The classifier releases one pooled second moment by default (the same Δ, 1/C of the noise variance
        of C per-class moments); the other tasks one per class.
    weights : (float, float, float), default (0.8, 1.0, 0.6)
        Public weights of counts, sums and second moments.
    bounds, norm_bound : public feature bounds (:class:`onpair.core.bounds.FeatureBounds`): one of them is required
        (no default; a ValueError says where public bounds come from).
    classes : sequence of labels or "observed", optional
        The **public** label domain (AUC: two labels; metric and classifier: every class, required). The AUC
        task's and the classifier's ``classes_`` is the domain **sorted** (scikit-learn's convention): the
        AUC task's positive class is ``classes_[1]``, so ``score``, ``roc_auc_score(y, decision_function(X))``
        and ``cross_val_score(..., scoring="roc_auc")`` agree (which label is positive does not change a ROC
        AUC). Without it the AUC task reads the two labels off ``y``, so which label values occur must itself
        be public (pass it when in doubt: a record that changed the label set would flip the positive class,
        which no noise covers). ``"observed"`` reads the domain off ``y`` for any task, knowingly (as
        scikit-learn's own tools expect); a refit whose labels are not the previous fit's ``classes_`` (the
        model's shape changes with the records) issues a ``PrivacyWarning``.
    private : bool, default True
        False gives the non-private twin (the exact statistics).
    random_state : int, SeedSequence, Generator or None
        The noise; None draws fresh OS entropy (a seed is for reproducible experiments only).
    discover_bounds : bool, int or dict, default False
        Spend a public share of the budget finding, privately, the box that holds the bulk of the first m
        records inside the declared (loose) ``bounds`` (:mod:`onpair.core.discovery`: True is m =
        min(max(records_needed(d, 0.2ρ), 500), 1,000, n), 20 % of ρ; an integer is m; a dict sets ``warmup``,
        ``rho_share`` and the finder's parameters), then release the statistics of all n records mapped by
        that box with the rest: ρ_range + ρ_model ≤ ρ(ε, δ) (the "gaussian" conversion, exact for the two
        Gaussian mechanisms together). Records outside the box found are clipped to it (part of the
        mechanism; ``n_clipped_`` counts them). In-memory data only; needs a box.
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`; e.g. every fit of a grid
        search): each fit charges it its release event, and is refused (``PrivacyBudgetExceeded``, the
        estimator unchanged) when the budget cannot pay. scikit-learn's ``clone`` shares it. Each fit
        charged to it draws noise of its own, even with a fixed ``random_state``
        (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

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

    def __init__(self, *, epsilon=1.0, delta=1e-5, task="auc", model_type=None, lam="auto", covariance="auto",
                 moments=None, weights=DEFAULT_WEIGHTS, bounds=None, norm_bound=None, classes=None, private=True,
                 random_state=None, accountant=None, discover_bounds=False):
        self._store_params(locals())

    def _validate_params(self):
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        kind = model_kind(check_task(self.task), self.model_type)
        check_covariance_model(self.task, self.covariance)
        moment_layout(self.task, self.moments)
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
        """Every parameter checked, before any record is read: ``(kind, weights, sensitivity, n_classes,
        pooled)``; ``n_classes`` is None for a domain read off ``y`` (``classes="observed"``)."""
        kind, weights, sensitivity = self._validate_params()
        coded = self.task in ("metric", "classify")
        if coded and self.classes is None:
            # The class blocks' number and order are part of the release: read off y, one record could
            # change them (the only record of a class relabelled), which no noise covers.
            raise ValueError(f"task={self.task!r} needs the public class domain: classes=[...] (every label the "
                             "data may carry, from its documentation; never read off the data), or "
                             "classes='observed' to read it off y knowingly")
        observed = isinstance(self.classes, str) and self.classes == OBSERVED
        n_classes = (None if observed else len(self.classes)) if coded else 2
        return kind, weights, sensitivity, n_classes, moment_layout(self.task, self.moments)

    def _check_params(self, n_records, n_features, classes) -> None:
        """Every parameter checked (:meth:`_release_settings`): the base fit's step before the release."""
        self._release_settings()

    def _class_codes(self, labels) -> np.ndarray:
        """Class codes of the statistics' blocks: the metric task's and the classifier's codes, or 1 for a
        positive sign."""
        return labels.astype(np.int64) if self.task in ("metric", "classify") else (labels > 0).astype(np.int64)

    def _fit_released(self, Z, labels, seed_sequence, found=None, rho=None):
        plan = self._release_settings()
        codes = self._class_codes(labels)
        if plan[3] is None:  # the domain read off y: every class of it is present
            plan = plan[:3] + (int(codes.max()) + 1,) + plan[4:]
        total = statistics_total(Z, codes, plan[3], plan[1], pooled=plan[4])
        return self._release(plan, total, Z.shape[0], Z.shape[1], seed_sequence, found=found, rho=rho)

    #: A distributed fit keeps each partition's records in order with their class codes (the protocol of
    #: :class:`onpair.core.distributed.PartitionedFit`).
    partition_layout = "records"

    def check_partitioned_fit(self):
        """The parameter checks of a distributed fit, before any task is submitted."""
        self._release_settings()
        if self._discovery() is not None:
            raise ValueError("discover_bounds needs the records in memory (a fit on Dask data takes the declared "
                             "bounds as they are)")

    def fit_partitions(self, partitions, seed_sequence):
        """The distributed fit (:mod:`onpair.core.distributed`): each partition sums its records' statistics on
        its worker, a tree of additions brings the one total here, and the noise is drawn here, once."""
        plan = self._release_settings()
        if plan[3] is None:
            plan = plan[:3] + (len(partitions.classes),) + plan[4:]
        total = partitions.sum(_partition_statistics, plan[3], np.asarray(plan[1], dtype=np.float64), plan[4])
        return self._release(plan, total, partitions.n, partitions.dim, seed_sequence)

    def fit(self, X, y):
        """Fit on ``X`` (n, d) with labels ``y`` and release one private model, as
        :meth:`onpair.core.estimator.PairwiseEstimator.fit` (at least 2 records: with 0 records or 1 a
        ``ValueError``, and the estimator is left as it was). With ``discover_bounds`` the box is found on the
        first m records first (a share of the budget), and the statistics of all n records are released in it
        with the rest.

        Returns
        -------
        self
        """
        setting = self._discovery()
        if setting is None:
            return super().fit(X, y)
        check_fit_accountant(self)
        if is_dask_collection(X) or is_dask_collection(y):
            self.check_partitioned_fit()
        if not self.private:
            raise ValueError("discover_bounds is for a private fit: the non-private twin (private=False) has no "
                             "budget to share; give it the bounds to compare with")
        self._release_settings()  # every parameter checked before any record is read
        X, labels, classes = self._validate_training_data(X, y, classes=self.classes, coding=label_coding(self))
        n, d = X.shape
        declared = declared_box(self._make_bounds(d), type(self).__name__)
        seed_sequence = self._seed_sequence()
        rho = rho_from_dp(self.epsilon, self.delta, method="gaussian")
        m = setting.length(d, rho, limit=n)
        finder_rng = np.random.Generator(np.random.PCG64(range_seed_sequence(seed_sequence)))
        found = discover(setting, X[:m], declared, rho, finder_rng)
        bounds = found_bounds(found)
        warn_clipped(declared, int(np.count_nonzero(declared.transform(X)[1])), stacklevel=2)
        Z, clipped = bounds.transform(X)  # clipping to the box found is the mechanism's: no warning
        coef, report = self._fit_released(Z, labels, seed_sequence, found=found, rho=rho)
        return self._set_fitted(coef, report, classes, d, bounds, int(np.count_nonzero(clipped)))

    # -- the posterior (AUC task and classifier) -------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.task == "classify"
        return tags

    def _log_posterior(self, X) -> np.ndarray:
        """log P(c | x), shape (m, C), columns in the order of ``classes_``."""
        Z = self._mapped(X, "the posterior")  # checks the fit first
        return self.posterior_.log_proba(Z)

    def decision_function(self, X) -> np.ndarray:
        """Two classes: the log-odds log P(classes_[1] | x)/P(classes_[0] | x) of the calibrated posterior,
        shape (m,) (for the AUC task an increasing affine function of ``coef_ᵀφ(x)``: the released model's
        ranking). More classes: log P(c | x) up to a constant per record, shape (m, C)."""
        log_p = self._log_posterior(X)
        return log_p[:, 1] - log_p[:, 0] if log_p.shape[1] == 2 else log_p

    def predict_proba(self, X) -> np.ndarray:
        """P(c | x), shape (m, C), columns in the order of ``classes_``: the calibrated posterior of the release
        (``posterior_``; docs/algorithms.md#classifier). Rows sum to 1."""
        return np.exp(self._log_posterior(X))

    def predict_log_proba(self, X) -> np.ndarray:
        """log P(c | x), shape (m, C) (:meth:`predict_proba`'s logarithm, computed directly)."""
        return self._log_posterior(X)

    def predict(self, X) -> np.ndarray:
        """The most probable class of ``classes_`` for every record (the arg-max of :meth:`predict_proba`)."""
        self._check_fitted()
        return self.classes_[np.argmax(self._log_posterior(X), axis=1)]

    def score(self, X, y) -> float:
        """AUC task: the ROC AUC of :meth:`decision_function` with ``classes_[1]`` positive (the released
        model's ranking). Classifier: the accuracy of :meth:`predict`. Metric task: leave-one-out 3-NN
        accuracy under the released metric."""
        if self.task != "classify":
            return super().score(X, y)
        y = np.asarray(y)
        predicted = self.predict(X)
        if y.ndim != 1 or y.shape[0] != predicted.shape[0]:
            raise ValueError(f"X has {predicted.shape[0]} records but y has shape {y.shape}: score needs one label "
                             "per record")
        return float(np.mean(predicted == y))

    def _release(self, plan, total, n, dim, seed_sequence, found=None, rho=None):
        """One Gaussian release of the exact ``total`` (the only place noise is drawn), and its model; after a
        range discovery (``found``, of the budget ``rho``) with what the finder left of ρ."""
        kind, weights, sensitivity, n_classes, pooled = plan
        if self.private:
            warn_large_delta(type(self).__name__, self.delta, n, stacklevel=4)
        if self.private and found is not None:
            sigma = sigma_for_rho(sensitivity, model_rho(rho, found))
            noise_rng = np.random.Generator(np.random.PCG64(seed_sequence))
            total = total + sigma * noise_rng.standard_normal(total.shape[0])
            variance = sigma ** 2
        elif self.private:
            sigma = gaussian_sigma(sensitivity, self.epsilon, self.delta, method="analytic")
            noise_rng = np.random.Generator(np.random.PCG64(seed_sequence))
            total = total + sigma * noise_rng.standard_normal(total.shape[0])
            variance = sigma ** 2
        else:
            variance = 0.0
        stats = class_statistics(total, n_classes, dim, weights, variance, pooled=pooled)
        del total  # the exact sums (private=False: the statistics themselves) go no further than here
        given = None if isinstance(self.lam, str) else self.lam
        if kind == "lda":
            posterior = linear_discriminant(stats, covariance=self.covariance, ridge="auto" if given is None else given)
            lam = posterior.ridge
            coef = _classifier_fit(posterior)
        else:
            lam = choose_ridge(kind, stats, given)
            coef = released_model(kind, stats, lam).reshape(-1)
            if self.task == "auc":
                coef = FittedModel(coef, {"posterior_": fast_ranking_discriminant(stats, kind, lam)})
        extra = {"model_type": kind, "ridge": float(lam)}
        # The number of classes is public when declared; read off y (classes="observed") it is the curator's.
        counted = {"n_classes": n_classes} if self.task in ("metric", "classify") and domain_read_off_y(self) else {}
        if not counted:
            extra["n_classes"] = n_classes
        if self.task == "classify":
            extra["moments"] = "pooled" if pooled else "per-class"
        if not self.private:
            return coef, fit_report(self, (), n=n, mode="exact statistics", public=extra, curator=counted)
        extra.update(released_signal(stats))
        rho_budget = rho_from_dp(self.epsilon, self.delta, method="gaussian")
        # σ is the analytic-Gaussian σ for (ε, δ), i.e. exactly ρ-zCDP for this ρ up to the rounding of two
        # root finders: the event is charged the budget it was calibrated to when Δ²/(2σ²) rounds above it
        # (after a range discovery: the share the finder left).
        rho = min(gaussian_rho(sensitivity, sigma), rho_budget if found is None else model_rho(rho_budget, found))
        event = GaussianRelease(sensitivity=sensitivity, sigma=sigma, round=n, what="the class statistics", rho=rho)
        if found is not None:
            extra["range_discovery"] = dict(found.describe(), lower=found.lower.tolist(), upper=found.upper.tolist())
            del extra["range_discovery"]["releases"]  # the events' rows, in releases
        return coef, fit_report(self, range_events(found) + [event], n=n, mode="statistics", rho_budget=rho_budget,
                                public=extra, curator=counted)


def _partition_statistics(part, n_classes: int, weights, pooled: bool = False) -> np.ndarray:
    """Σ v(z) over one partition's records (``layout="records"``), on its worker: deterministic."""
    return statistics_total(part.Z, part.codes, n_classes, weights, pooled=pooled)


def _classifier_fit(posterior) -> FittedModel:
    """scikit-learn's linear-classifier attributes of the classifier's posterior (in the public bounds'
    coordinates): two classes, ``coef_`` (1, d) and ``intercept_`` (1,) of the log-odds of classes_[1];
    more, one row per class (their log-softmax is log P(c | x)); and the posterior itself."""
    coef, intercept = posterior.coef, posterior.intercept
    if coef.shape[0] == 2:
        coef, intercept = (coef[1] - coef[0])[None, :], np.array([intercept[1] - intercept[0]])
    return FittedModel(coef.copy(), {"intercept_": intercept.copy(), "posterior_": posterior})
