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
import math
import sys
import warnings

import numpy as np
from scipy.special import expit

from .._validation import as_feature_block, is_dask_collection
from ..bounds import FeatureBounds
from ..learners.stream import BOUNDS_ADVICE
from ..metrics import roc_auc
from ..privacy.reports import mark_curator_only


class NotFittedError(ValueError, AttributeError):
    """Raised when a method needs a fitted estimator (the same bases as scikit-learn's)."""


def _sklearn_class(module: str, name: str):
    """scikit-learn's class if scikit-learn is already loaded (it is whenever its tools call us), else
    None: onpair never imports scikit-learn itself, but its exceptions and warnings should still be
    recognised by scikit-learn's tooling."""
    if "sklearn" not in sys.modules:
        return None
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except (ImportError, AttributeError):
        return None


def not_fitted_error(message: str) -> NotFittedError:
    sklearn_error = _sklearn_class("sklearn.exceptions", "NotFittedError")
    if sklearn_error is None:
        return NotFittedError(message)
    both = type("NotFittedError", (NotFittedError, sklearn_error), {})
    return both(message)


def _conversion_warning():
    return _sklearn_class("sklearn.exceptions", "DataConversionWarning") or UserWarning


class PairwiseEstimator:
    """Shared scikit-learn API of the offline pairwise estimators (binary ranking / AUC tasks).

    Subclasses define ``__init__`` with keyword-only parameters stored verbatim, and
    ``_fit_released(Z, signs, seed_sequence) -> (coef, report)`` over records already mapped onto the
    diameter-2 domain, labels ±1.
    """

    _estimator_type = "classifier"

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
        seed is for reproducible experiments only.

        ``X`` needs at least 2 records (the loss is over pairs): with 0 records (``fit([], [])``
        included) or 1, ``fit`` raises ``ValueError`` ("X has 0 records; fit needs at least 2") and the
        estimator is left as it was. (The online learners' ``learn_many`` differs on purpose: a stream
        may deliver an empty block, and learning nothing from it is a no-op.)

        ``X`` may also be a Dask array or DataFrame (with ``y`` a Dask array or Series of the same
        partitions) for the estimators with a distributed fit (:class:`onpair.OffPairStats`,
        :class:`onpair.GradientPerturbedGD`): the records stay on the workers and only noisy releases
        leave them (:func:`onpair.distributed.fit`, docs/distributed.md).

        Returns
        -------
        self
        """
        if is_dask_collection(X) or is_dask_collection(y):
            from ..distributed import fit as distributed_fit

            return distributed_fit(self, X, y)
        metric = self._metric_task()
        X, signs, classes = self._validate_training_data(X, y, metric=metric,
                                                          classes=getattr(self, "classes", None))
        bounds = self._make_bounds(X.shape[1])
        Z, clipped = bounds.transform(X)
        n_clipped = int(np.count_nonzero(clipped))
        warn_clipped(bounds, n_clipped, stacklevel=3)
        coef, report = self._fit_released(Z, signs, self._seed_sequence())
        return self._set_fitted(coef, report, classes, X.shape[1], bounds, n_clipped)

    def _set_fitted(self, coef, report, classes, n_features, bounds, n_clipped):
        """Assign the fitted attributes, all at once and only after the release: a failed fit leaves the
        estimator untouched."""
        report = mark_curator_only(dict(report, n_clipped=n_clipped))
        coef = np.asarray(coef, dtype=np.float64)
        if self._metric_task():
            d = n_features
            # (W, b) with a learned threshold: b is the last entry; otherwise the fixed threshold.
            threshold = float(coef[d * d]) if coef.size == d * d + 1 else self._fixed_threshold()
            coef = coef[:d * d].reshape(d, d)
            self.threshold_ = threshold
        self.coef_ = coef
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.bounds_ = bounds
        self.n_clipped_ = n_clipped
        self.privacy_report_ = report
        return self

    def _fixed_threshold(self) -> float:
        """The threshold b of a metric model without a learned one (1.0: the papers' losses)."""
        threshold = getattr(self, "threshold", 1.0)
        return float(threshold) if isinstance(threshold, (int, float)) else 1.0

    def _metric_task(self) -> bool:
        """True for ``task="metric"``; a ValueError for an unknown task (checked at fit, as sklearn wants)."""
        task = getattr(self, "task", "auc")
        if not isinstance(task, str) or task not in ("auc", "metric"):
            raise ValueError(f"task must be 'auc' or 'metric', got {task!r}")
        return task == "metric"

    def _seed_sequence(self) -> np.random.SeedSequence:
        """One SeedSequence per fit; None draws fresh OS entropy (a seed is for experiments only)."""
        state = getattr(self, "random_state", None)
        if state is None or isinstance(state, (int, np.integer)) and not isinstance(state, bool):
            if state is not None and state < 0:
                raise ValueError(f"random_state must be None or a non-negative integer, got {state!r}")
            return np.random.SeedSequence(None if state is None else int(state))
        if isinstance(state, np.random.SeedSequence):
            return state
        if isinstance(state, np.random.Generator):
            return np.random.SeedSequence(state.integers(0, 2**63))
        if isinstance(state, np.random.RandomState):
            return np.random.SeedSequence(int(state.randint(0, 2**63 - 1, dtype=np.int64)))
        raise ValueError(f"random_state must be None, an int, a SeedSequence or a Generator, got {state!r}")

    def _make_bounds(self, n_features: int) -> FeatureBounds:
        """The public bounds map, built as the online learners build it, checked against the records."""
        from ..learners.stream import make_bounds

        result = make_bounds(getattr(self, "bounds", None), getattr(self, "norm_bound", None))
        if result.n_features is not None and result.n_features != n_features:
            raise ValueError(f"bounds have {result.n_features} features but X has {n_features}")
        return result

    @staticmethod
    def _validate_training_data(X, y, metric=False, classes=None, minimum=2):
        """``(X, signs or codes, classes_)`` checked; ``minimum`` records (a partition of a distributed
        fit may hold a single one)."""
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        if complex_dtype(X) or complex_dtype(y):
            raise ValueError("Complex data not supported")
        X = sklearn_feature_block(X, None, purpose="fit", minimum=minimum)
        if isinstance(y, (list, tuple)):  # plain Python sequences: check the element types first
            values = list(y)
            kinds = set()
            for value in values:
                if isinstance(value, (complex, np.complexfloating)):
                    raise ValueError(f"y has a complex label {value!r}: labels must be numbers, strings or booleans")
                if isinstance(value, (list, tuple, dict, set, np.ndarray)):
                    raise ValueError(f"y has a label that is a {type(value).__name__} ({value!r}): labels must be "
                                     "scalars")
                kinds.add("number" if isinstance(value, (int, float, np.number, bool, np.bool_)) else
                          type(value).__name__)
            if len(kinds) > 1:
                raise ValueError(f"y mixes label types {sorted(kinds)}: use one type (e.g. all 0/1 or all strings)")
        y_arr = np.asarray(y)
        if y_arr.ndim == 2 and y_arr.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it was flattened to "
                          "shape (n_samples,)", _conversion_warning(), stacklevel=3)
            y_arr = y_arr.ravel()
        if y_arr.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y_arr.shape}")
        if y_arr.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} records but y has {y_arr.shape[0]} labels")
        if X.shape[0] < minimum:
            raise ValueError(f"pairwise learning needs at least 2 records, got n_samples = {X.shape[0]}")
        if y_arr.dtype.kind == "f":
            if not np.all(np.isfinite(y_arr)):
                raise ValueError("y contains NaN or infinity")
            if np.any(y_arr != np.round(y_arr)):
                raise ValueError("Unknown label type: continuous targets are not class labels")
        if y_arr.dtype.kind == "O":
            kinds = {type(v) for v in y_arr}
            if len(kinds) > 1:
                raise ValueError(f"labels of mixed types {sorted(k.__name__ for k in kinds)}")
        if classes is not None:
            return X, *_codes_in_public_classes(y_arr, classes, metric)
        # No label domain given: it is read off y, so the label values present must be public (like
        # the bounds): see the ``classes`` parameter.
        classes, codes = np.unique(y_arr, return_inverse=True)
        if metric:
            # Any number of classes (one included: every pair is then a same-class pair).
            return X, codes.reshape(-1).astype(np.int64), classes
        check_binary(classes)
        signs = np.where(y_arr == classes[1], 1, -1).astype(np.int8)
        return X, signs, classes

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
        semi-definite part of ``coef_`` (:func:`onpair.matrix_geometry.metric_factor`). For the AUC task
        the attribute does not exist (scikit-learn's tools then do not mistake the estimator for a
        transformer).
        """
        if getattr(self, "task", "auc") != "metric":
            raise AttributeError("transform is available with task='metric' only; use decision_function")
        return self._transform

    def _transform(self, X) -> np.ndarray:
        from ..matrix_geometry import metric_factor

        self._check_fitted()
        X = sklearn_feature_block(X, self.n_features_in_, owner=type(self).__name__, purpose="transform")
        Z, _ = self.bounds_.transform(X)
        return Z @ metric_factor(self.coef_).T

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """The released W (``task="metric"``), as metric-learn names it; its PSD part is the metric used."""
        self._check_fitted()
        if getattr(self, "task", "auc") != "metric":
            raise ValueError("get_mahalanobis_matrix is for task='metric'")
        return self.coef_.copy()

    def decision_function(self, X) -> np.ndarray:
        """Scores ``coef_ᵀ φ(x)`` under the released model (φ: the public bounds map)."""
        self._check_fitted()
        self._refuse_metric("decision_function")
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        X = sklearn_feature_block(X, self.n_features_in_, owner=type(self).__name__)
        Z, _ = self.bounds_.transform(X)
        return Z @ self.coef_

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
            from ..metrics import leave_one_out_knn_accuracy

            return leave_one_out_knn_accuracy(self.transform(X), y, k=3)
        y = np.asarray(y)
        scores = self.decision_function(X)
        if y.ndim != 1 or y.shape[0] != scores.shape[0]:
            # Named here: roc_auc's own message speaks of y_true and y_score, not of X and y.
            raise ValueError(f"X has {scores.shape[0]} records but y has shape {y.shape}: score needs one label "
                             "per record")
        return roc_auc(y == self.classes_[1], scores)


def warn_clipped(bounds, n_clipped: int, stacklevel: int) -> None:
    """The warning for records outside the declared bounds (clipped to them), if there were any."""
    if n_clipped:
        warnings.warn(
            f"records lay outside the declared feature bounds ({bounds!r}) and were clipped to them. "
            f"{BOUNDS_ADVICE} n_clipped_ has the count (curator-only).",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def check_binary(classes) -> None:
    """The AUC task's label domain read off y must hold exactly two labels."""
    if classes.size != 2:
        raise ValueError(
            f"Only binary classification is supported: pairwise AUC learning needs exactly 2 classes "
            f"in y, got {classes.size} class(es): {classes.tolist()[:5]}"
        )


def _codes_in_public_classes(y, classes, metric):
    """``(signs or codes, classes_)`` for labels in a **public** label domain ``classes``.

    Inferring the classes from y lets one record decide them: with labels {0, 1} in the data set, a
    neighbour whose only 0 is replaced by a 2 has classes {1, 2}, a different positive class, and every
    other record's sign flips, far beyond the sensitivity 2Γ/n. With the domain given, one record
    changes one sign at most, and a data set with a single class present is fine (no opposite pair).
    AUC: exactly two classes, ``classes[1]`` positive. Metric task: any number of classes.
    """
    try:
        domain = np.asarray(classes)
        distinct = domain.ndim == 1 and domain.size >= 1 and np.unique(domain).size == domain.size
    except (TypeError, ValueError):  # labels NumPy cannot hold in one array or sort (a dict beside a number)
        distinct = False
    if not distinct:
        raise ValueError(f"classes must be a list of distinct labels, got {classes!r}")
    if not metric and domain.size != 2:
        raise ValueError(f"classes must hold exactly 2 labels for the AUC task (classes[1] is the positive "
                         f"class), got {classes!r}")
    matches = y[:, None] == domain[None, :]
    unknown = np.flatnonzero(~matches.any(axis=1))
    if unknown.size:
        i = int(unknown[0])
        raise ValueError(f"y[{i}] = {np.asarray(y[i]).tolist()!r} is not one of classes = {domain.tolist()!r}")
    codes = np.argmax(matches, axis=1)
    if metric:
        return codes.astype(np.int64), domain
    return np.where(codes == 1, 1, -1).astype(np.int8), domain


def complex_dtype(values) -> bool:
    dtype = getattr(values, "dtype", None)
    # A pandas extension dtype (pandas 3's default string labels) is no NumPy dtype, and not complex.
    return isinstance(dtype, np.dtype) and np.issubdtype(dtype, np.complexfloating)


def sklearn_feature_block(X, n_features, owner=None, purpose="prediction", minimum=1) -> np.ndarray:
    """as_feature_block with the shape messages scikit-learn's tooling looks for.

    ``purpose`` names the caller in the message for an empty ``X`` (``fit`` needs ``minimum=2``
    records: one pair). A data frame keeps its column names for the messages."""
    from .._validation import is_frame

    array = X
    if not isinstance(X, (str, bytes, np.ndarray)):
        try:
            array = np.asarray(X)  # array-likes (lists, objects with __array__) to one array first
        except (TypeError, ValueError):
            pass  # ragged input: as_feature_block below names the problem
    shape = getattr(array, "shape", ())
    if len(shape) in (1, 2) and shape[0] == 0:  # fit([], []) included: no records, whatever the width
        need = "one record" if minimum == 1 else f"{minimum} records (one pair)"
        raise ValueError(f"X has 0 records; {purpose} needs at least {need}. "
                         f"Found array with 0 sample(s) (shape={shape}) while a minimum of {minimum} is required.")
    if len(shape) == 1:
        raise ValueError(f"Expected a 2-D array, got a 1-D array of shape {shape}. Reshape your data with "
                         "X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one record.")
    if len(shape) == 2 and shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required.")
    if n_features is not None and len(shape) == 2 and shape[1] != n_features:
        raise ValueError(f"X has {shape[1]} features, but {owner} is expecting {n_features} features as input")
    try:
        # A data frame goes in as it is, so that a message names its column, not its position only.
        return as_feature_block(X if is_frame(X) else array, n_features, 0, name="X")
    except ValueError as exc:
        if "must be finite" in str(exc):  # say "NaN or infinity" in the words tools look for
            raise ValueError(f"{exc} (Input X contains NaN or infinity)") from None
        raise


def perturbed(w, sigma, rng, dim, radius, constraint=None, terms=None) -> np.ndarray:
    """One output-perturbed release: ``Π_C[w + σ·N]``, a new array.

    AUC (``constraint`` None): N standard normal on R^d, C the ℓ2 ball. Metric task (``constraint`` a
    code of :mod:`onpair.matrix_geometry`): N symmetric and isotropic in the Frobenius norm, so σ·N is
    the Gaussian mechanism for a Frobenius sensitivity, and C the constraint set; with a learned
    threshold (``terms.learned``, w = (W, b)) one more standard normal for b, isotropic in ‖(W, b)‖, and
    b clipped into its interval.
    """
    from .._metric_kernels import _project_parameter
    from ..geometry import _project_l2_ball
    from ..matrix_geometry import _project_matrix, symmetric_noise

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


def non_private_report(estimator, extra=None) -> dict:
    """The report of a non-private twin (``private=False``): nothing released, nothing spent, ε ∞."""
    return release_report(
        algorithm=type(estimator).__name__, epsilon=estimator.epsilon, delta=estimator.delta,
        accounting=getattr(estimator, "accounting", "gaussian"), mode=getattr(estimator, "mode", "paper"),
        sensitivity=[], sigma=[], rho=[], rho_budget=0.0, rounds=[],
        extra={"private": False, **(extra or {}), "epsilon_spent": math.inf})


def release_report(*, algorithm, epsilon, delta, accounting, mode, sensitivity, sigma, rho, rho_budget,
                   rounds, extra=None) -> dict:
    """The online learners' report keys for a mechanism of ``len(sigma)`` Gaussian releases."""
    from ..privacy.conversions import eps_from_rho

    sensitivity = np.atleast_1d(sensitivity)
    sigma = np.atleast_1d(sigma)
    rho = np.atleast_1d(rho)
    rounds = np.atleast_1d(rounds)
    rho_spent = math.fsum(float(r) for r in rho)
    report = {
        "algorithm": algorithm,
        "mode": mode,
        "accounting": accounting,
        "epsilon": float(epsilon),
        "delta": float(delta),
        "rho_budget": float(rho_budget),
        "rho_spent": rho_spent,
        "rho_remaining": max(0.0, float(rho_budget) - rho_spent),
        "epsilon_spent": float(eps_from_rho(rho_spent, delta, method=accounting)) if rho_spent > 0 else 0.0,
        "releases": [
            {"round": int(t), "sensitivity": float(s), "sigma": float(g), "rho": float(r)}
            for t, s, g, r in zip(rounds, sensitivity, sigma, rho)
        ],
    }
    if extra:
        report.update(extra)
    return report
