"""The steps of an offline fit around its release, shared by the in-process fit
(:meth:`onpair.core.estimator.PairwiseEstimator.fit`) and the fit on Dask data (:func:`onpair.distributed.fit`):
records and labels checked in the words scikit-learn's tools look for, the public label domain, the public
bounds map, the fit's random seed, and the fitted attributes, assigned all at once after the release.

Nothing here draws noise or reads an estimator's private state: the functions take an estimator's public
parameters (``task``, ``bounds``, ``norm_bound``, ``threshold``, ``random_state``) and set its public
fitted attributes (``coef_``, ``classes_``, ``n_features_in_``, ``bounds_``, ``n_clipped_``,
``privacy_report_``, ``threshold_``).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from ._validation import as_feature_block, is_frame
from ..privacy.accountant import charge, check_accountant
from ..privacy.reports import extend_report
from .bounds import BOUNDS_ADVICE, FeatureBounds, make_bounds


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


def is_metric_task(estimator) -> bool:
    """True for ``task="metric"``; a ValueError for an unknown task (checked at fit, as sklearn wants)."""
    task = getattr(estimator, "task", "auc")
    if not isinstance(task, str) or task not in ("auc", "metric"):
        raise ValueError(f"task must be 'auc' or 'metric', got {task!r}")
    return task == "metric"


def seed_sequence(state) -> np.random.SeedSequence:
    """One SeedSequence per fit from ``random_state``; None draws fresh OS entropy (a seed is for
    experiments only)."""
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


def fit_bounds(estimator, n_features: int) -> FeatureBounds:
    """The public bounds map of an estimator's ``bounds``/``norm_bound``, built as the online learners
    build it, checked against the records' number of features."""
    result = make_bounds(getattr(estimator, "bounds", None), getattr(estimator, "norm_bound", None))
    if result.n_features is not None and result.n_features != n_features:
        raise ValueError(f"bounds have {result.n_features} features but X has {n_features}")
    return result


def set_fitted(estimator, coef, report, classes, n_features, bounds, n_clipped):
    """Assign the fitted attributes, all at once and only after the release: a failed fit leaves the
    estimator untouched. Returns the estimator."""
    # A shared accountant (accountant=) is charged the fit's events before anything changes: a refusal
    # (PrivacyBudgetExceeded) leaves the estimator as it was, and nothing was released.
    accountant = check_accountant(getattr(estimator, "accountant", None), type(estimator).__name__)
    charge([accountant], report.events)
    report = extend_report(report, curator={"n_clipped": n_clipped})
    coef = np.asarray(coef, dtype=np.float64)
    if is_metric_task(estimator):
        d = n_features
        # (W, b) with a learned threshold: b is the last entry; otherwise the fixed threshold.
        threshold = float(coef[d * d]) if coef.size == d * d + 1 else _fixed_threshold(estimator)
        coef = coef[:d * d].reshape(d, d)
        estimator.threshold_ = threshold
    estimator.coef_ = coef
    estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    estimator.bounds_ = bounds
    estimator.n_clipped_ = n_clipped
    estimator.privacy_report_ = report
    return estimator


def _fixed_threshold(estimator) -> float:
    """The threshold b of a metric model without a learned one (1.0: the papers' losses)."""
    threshold = getattr(estimator, "threshold", 1.0)
    return float(threshold) if isinstance(threshold, (int, float)) else 1.0


def validate_training_data(X, y, metric=False, classes=None, minimum=2):
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
