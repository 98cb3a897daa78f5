"""scikit-learn's estimator API for the offline private learners, without depending on scikit-learn.

An offline estimator fits once and releases once: ``fit(X, y)`` validates everything, computes the
private model into local variables, and only then sets the fitted attributes, so a failed fit leaves
the estimator as it was. After ``fit`` the estimator holds no records and no internal iterate. What
to share is ``coef_`` with the public bounds, and the public part of ``privacy_report_``
(:func:`onpair.privacy.reports.public_report`). The estimator object itself also keeps
``random_state`` (from which a seeded noise can be recomputed and subtracted), ``classes_`` (label
values: read off ``y`` unless ``classes=`` declared them), the curator-only ``n_clipped_``, and a report
whose ``curator_only`` key names the fields computed from the data without noise (``n_clipped`` in every
estimator; ``solver_steps``, ``gradient_norm`` and the objective-perturbation ``stopping_rule`` in the
logistic ones). So only a fit with ``random_state=None``, ``classes_`` and ``n_clipped_`` removed and the
report's curator-only fields removed is safe to hand out whole.

Fitted attributes: ``coef_`` (the released parameter, shape (n_features,)), ``classes_`` (the two
labels, ``classes_[1]`` is the positive class), ``n_features_in_``, ``privacy_report_`` (the keys of the
online learners' ``privacy_report()``, and ``curator_only``), ``bounds_`` (the public feature map),
``n_clipped_`` (records clipped to the bounds: curator-only, not private).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy.special import expit

from ..privacy.events import NonPrivate
from ..privacy.reports import build_report
from ._metric_pair_kernels import _project_parameter
from ._validation import SeedNameHint, is_dask_collection
from .bounds import FeatureBounds
from .fitting import (NotFittedError, check_binary, check_fit_accountant, complex_dtype, discovered_fit, discovery_of,
                      fit_bounds, is_metric_task, label_coding, not_fitted_error, refuse_discovery, fit_seeds,
                      fitted_feature_block, recording_feature_names, set_fitted, sklearn_feature_block, validate_training_data, warn_clipped)
from .geometry import _project_l2_ball
from .matrix_geometry import _project_matrix, metric_factor, symmetric_noise
from .registry import register_algorithm
from .scoring import leave_one_out_knn_accuracy, roc_auc

__all__ = ["PairwiseEstimator", "NotFittedError", "perturbed", "fit_report",
           "not_fitted_error", "sklearn_feature_block", "complex_dtype", "check_binary", "warn_clipped"]


class PairwiseEstimator(SeedNameHint):
    """Shared scikit-learn API of the offline pairwise estimators (binary ranking / AUC tasks).

    Subclasses define ``__init__`` with keyword-only parameters stored verbatim, and
    ``_fit_released(Z, signs, seed_sequence) -> (coef, report)`` over records already mapped onto the
    diameter-2 domain, labels ±1.
    """

    _estimator_type = "classifier"

    def __init_subclass__(cls, *, algorithm=None, **kwargs):
        """A public estimator registers itself with ``class X(..., algorithm="name")`` under the name users
        choose it by (:mod:`onpair.core.registry`). Every fit (a subclass's own included) sets
        ``feature_names_in_`` from a data frame's column names, as scikit-learn does; the predictions refuse
        renamed or reordered columns (``fitted_feature_block``)."""
        super().__init_subclass__(**kwargs)
        if algorithm is not None:
            register_algorithm(algorithm, cls)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "records_feature_names", False):
            cls.fit = recording_feature_names(fit)

    # -- parameters (what sklearn.base.BaseEstimator provides) --------------------------------------
    def _store_params(self, arguments: dict) -> None:
        """Store every ``__init__`` argument verbatim (scikit-learn's rule: no validation in ``__init__``;
        ``fit`` validates)."""
        for name in self._get_param_names():
            setattr(self, name, arguments[name])

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values() if p.name != "self")

    def get_params(self, deep=True):
        """Parameters of this estimator (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters (scikit-learn convention); unknown names are a ``ValueError``."""
        valid = set(self._get_param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {sorted(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name)
            default = defaults.get(name, inspect.Parameter.empty)
            same = value is default or (isinstance(value, (int, float, str, type(None)))
                                        and isinstance(default, (int, float, str, type(None)))
                                        and value == default and type(value) is type(default))
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        # Only scikit-learn calls this, so scikit-learn is importable whenever it runs.
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            # Binary ranking only; a private model's accuracy depends on ε, so no accuracy threshold.
            classifier_tags=ClassifierTags(multi_class=False, poor_score=True),
            input_tags=InputTags(two_d_array=True, allow_nan=False),
            non_deterministic=getattr(self, "random_state", None) is None,
        )

    # -- fitting -----------------------------------------------------------------------------------
    def fit(self, X, y):
        """Fit on the records ``X`` (n, d) with two-class labels ``y`` and release one private model.

        Any two distinct labels work; ``classes_[1]`` (the larger in sorted order) is the positive
        class. Each call spends the estimator's (ε, δ) budget again on the data it is given; with the same
        integer ``random_state`` two fits draw the *same* noise, which cancels in their difference, so a
        seed is for reproducible experiments only (two fits charged to one shared ``accountant=`` draw
        noise of their own: :meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

        ``X`` needs at least 2 records (the loss is over pairs): with 0 records (``fit([], [])``
        included) or 1, ``fit`` raises ``ValueError`` ("X has 0 records; fit needs at least 2") and the
        estimator is left as it was. (The online learners' ``learn_many`` differs on purpose: a stream
        may deliver an empty block, and learning nothing from it is a no-op.)

        ``X`` may also be a Dask array or DataFrame (with ``y`` a Dask array or Series of the same
        partitions) for the estimators with a distributed fit (:class:`onpair.OffPairStats`,
        :class:`onpair.GradientPerturbedGD`): the records stay on the workers and only noisy releases
        leave them (:func:`onpair.core.distributed.fit`, docs/distributed.md).

        Returns
        -------
        self
        """
        setting = self._discovery()
        check_fit_accountant(self)
        if is_dask_collection(X) or is_dask_collection(y):
            if setting is not None:
                raise ValueError("discover_bounds needs the records in memory (a fit on Dask data takes the "
                                 "declared bounds as they are)")
            from .distributed import fit as distributed_fit  # needs Dask (optional): only for Dask data

            return distributed_fit(self, X, y)
        if setting is not None:
            refuse_discovery(self)
        X, signs, classes = self._validate_training_data(X, y, classes=getattr(self, "classes", None),
                                                          coding=label_coding(self))
        if setting is not None:
            return discovered_fit(self, setting, X, signs, classes)
        self._check_params(X.shape[0], X.shape[1], classes)
        bounds = self._make_bounds(X.shape[1])
        Z, clipped = bounds.transform(X)
        n_clipped = int(np.count_nonzero(clipped))
        warn_clipped(bounds, n_clipped, stacklevel=3)
        coef, report = self._fit_released(Z, signs, self._seed_sequence())
        return self._set_fitted(coef, report, classes, X.shape[1], bounds, n_clipped)

    fit = recording_feature_names(fit)

    # The steps around the release (:mod:`onpair.core.fitting`, shared with onpair.core.distributed.fit).
    def _set_fitted(self, coef, report, classes, n_features, bounds, n_clipped):
        return set_fitted(self, coef, report, classes, n_features, bounds, n_clipped)

    def _metric_task(self) -> bool:
        return is_metric_task(self)

    def _seed_sequence(self) -> np.random.SeedSequence:
        return fit_seeds(self)

    def _make_bounds(self, n_features: int) -> FeatureBounds:
        return fit_bounds(self, n_features)

    def _discovery(self):
        """The resolved ``discover_bounds`` (None: no discovery; :func:`onpair.core.fitting.discovery_of`)."""
        return discovery_of(self)

    _validate_training_data = staticmethod(validate_training_data)

    #: Whether the release is proven (ε, δ)-DP by an argument that is not a zCDP one (its events include an
    #: :class:`onpair.privacy.events.ApproxDPRelease`): a shared ``accountant=`` then needs an (ε, δ) budget,
    #: and is refused before the fit without one (:func:`onpair.core.fitting.check_fit_accountant`).
    approximate_dp = False

    def _check_params(self, n_records: int, n_features: int, classes) -> None:
        """Every check of the fit's parameters (and of their fit with n records of d features and the label
        domain ``classes``, the fitted ``classes_``), before any noise is drawn or any range found: a bad value
        is a ValueError or TypeError naming it, and the fit stops before it spends or changes anything.

        Each estimator defines it (the same checks its :meth:`_fit_released` makes, without reading a record);
        ``fit`` calls it after checking ``X`` and ``y``, and a fit with ``discover_bounds`` calls it on the
        model it will fit, at its share of the budget, before the range finder runs
        (:func:`onpair.core.fitting.discovered_fit`)."""
        raise NotImplementedError

    def _fit_released(self, Z, signs, seed_sequence):
        raise NotImplementedError

    # -- using the released model ------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise not_fitted_error(f"this {type(self).__name__} is not fitted yet: call fit(X, y) first")

    def _refuse_metric(self, what: str) -> None:
        if getattr(self, "task", "auc") == "metric":
            raise ValueError(f"{what} scores records for the AUC task; with task='metric' use transform(X) "
                             "(records in the released metric's space), score(X, y) or coef_ (W)")

    @property
    def transform(self):
        """Records mapped so that Euclidean distances are the released metric's (``task="metric"`` only).

        ``transform(X)`` maps ``x ↦ L φ(x)`` with φ the public bounds map and ``LᵀL`` the positive
        semi-definite part of ``coef_`` (:func:`onpair.core.matrix_geometry.metric_factor`). For the AUC task
        the attribute does not exist (scikit-learn's tools then do not mistake the estimator for a
        transformer).
        """
        if getattr(self, "task", "auc") != "metric":
            raise AttributeError("transform is available with task='metric' only; use decision_function")
        return self._transform

    def _transform(self, X) -> np.ndarray:
        self._check_fitted()
        X = fitted_feature_block(self, X, purpose="transform")
        Z, _ = self.bounds_.transform(X)
        return Z @ metric_factor(self.coef_).T

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """The released W (``task="metric"``), as metric-learn names it; its PSD part is the metric used."""
        self._check_fitted()
        if getattr(self, "task", "auc") != "metric":
            raise ValueError("get_mahalanobis_matrix is for task='metric'")
        return self.coef_.copy()

    def _mapped(self, X, what: str) -> np.ndarray:
        """φ(X), the records checked and mapped by the public bounds, for ``what`` (refused for the metric
        task and before a fit)."""
        self._check_fitted()
        self._refuse_metric(what)
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        X = fitted_feature_block(self, X)
        Z, _ = self.bounds_.transform(X)
        return Z

    def decision_function(self, X) -> np.ndarray:
        """Scores ``coef_ᵀ φ(x)`` under the released model (φ: the public bounds map)."""
        return self._mapped(X, "decision_function") @ self.coef_

    def predict_proba(self, X) -> np.ndarray:
        """``[1 − p, p]`` with ``p`` the logistic function of the score.

        The score is a ranking score (its scale is set by the radius R), so these probabilities are
        not calibrated; use :meth:`decision_function` for ranking.
        """
        self._refuse_metric("predict_proba")
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the score is positive, i.e. above the score of the bounds' centre."""
        self._check_fitted()
        self._refuse_metric("predict")
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X, y) -> float:
        """Ranking quality: ROC AUC of :meth:`decision_function` with ``classes_[1]`` positive.

        With ``task="metric"``: leave-one-out 3-NN accuracy of ``(X, y)`` under the released metric.
        """
        self._check_fitted()
        if getattr(self, "task", "auc") == "metric":
            return leave_one_out_knn_accuracy(self.transform(X), y, k=3)
        y = np.asarray(y)
        scores = self.decision_function(X)
        if y.ndim != 1 or y.shape[0] != scores.shape[0]:
            # Named here: roc_auc's own message speaks of y_true and y_score, not of X and y.
            raise ValueError(f"X has {scores.shape[0]} records but y has shape {y.shape}: score needs one label "
                             "per record")
        return roc_auc(y == self.classes_[1], scores)


def perturbed(w, sigma, rng, dim, radius, constraint=None, terms=None) -> np.ndarray:
    """One output-perturbed release: ``Π_C[w + σ·N]``, a new array.

    AUC (``constraint`` None): N standard normal on R^d, C the ℓ2 ball. Metric task (``constraint`` a
    code of :mod:`onpair.core.matrix_geometry`): N symmetric and isotropic in the Frobenius norm, so σ·N is
    the Gaussian mechanism for a Frobenius sensitivity, and C the constraint set; with a learned
    threshold (``terms.learned``, w = (W, b)) one more standard normal for b, isotropic in ‖(W, b)‖, and
    b clipped into its interval.
    """
    if constraint is None:
        out = w + sigma * rng.standard_normal(dim)
        _project_l2_ball(out, float(radius))
    elif terms is not None and terms.learned:
        noise = np.append(symmetric_noise(rng, 1, dim)[0], rng.standard_normal())
        out = w + sigma * noise
        _project_parameter(out, dim, float(radius), constraint, terms.as_array())
    else:
        out = w + sigma * symmetric_noise(rng, 1, dim)[0]
        _project_matrix(out, dim, float(radius), constraint)
    return out


def fit_report(estimator, events, *, n, mode, accounting="gaussian", rho_budget=None, public=None, curator=None):
    """The ``privacy_report_`` of one offline fit, from its release events
    (:func:`onpair.privacy.reports.build_report`, the builder of every report). A non-private fit
    (``private=False``) records :class:`onpair.privacy.events.NonPrivate` instead of ``events``: nothing
    released, ε ∞, no ρ keys. ``n`` records were fitted; ``rho_budget`` for a fit accounted in zCDP."""
    private = bool(getattr(estimator, "private", True))
    status = (f"released once: one fit of {n} records" if private else
              "not private: the non-private twin protects nothing")
    return build_report(type(estimator).__name__, events if private else (NonPrivate(),),
                        epsilon=estimator.epsilon, delta=estimator.delta, accounting=accounting, mode=mode, n_seen=n,
                        status=status, private=private, rho_budget=rho_budget if private else None, public=public,
                        curator=curator)
