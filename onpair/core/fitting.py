"""The steps of an offline fit around its release, shared by the in-process fit
(:meth:`onpair.core.estimator.PairwiseEstimator.fit`) and the fit on Dask data (:func:`onpair.core.distributed.fit`):
records and labels checked in the words scikit-learn's tools look for, the public label domain, the public
bounds map, the fit's random seed, and the fitted attributes, assigned all at once after the release.

Nothing here draws noise or reads an estimator's private state: the functions take an estimator's public
parameters (``task``, ``bounds``, ``norm_bound``, ``threshold``, ``random_state``) and set its public
fitted attributes (``coef_``, ``classes_``, ``n_features_in_``, ``bounds_``, ``n_clipped_``,
``privacy_report_``, ``threshold_``).
"""

from __future__ import annotations

import functools
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..privacy.accountant import charge, check_accountant, refusal
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.conversions import METHODS, eps_from_rho, rho_from_dp
from ..privacy.events import NonPrivate, leaves, rho_of
from ..privacy.exceptions import NoiseDominatedWarning, PrivacyWarning
from ..privacy.reports import COMMON_KEYS, RHO_KEYS, build_report, extend_report
from ._validation import as_feature_block, is_frame
from .bounds import BOUNDS_ADVICE, FeatureBounds, make_bounds
from .discovery import (RANGE_SPAWN_KEY, declared_box, discover, discovery_setting, found_bounds, range_events,
                        range_seed_sequence)


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


#: The tasks of the offline estimators (``"classify"``: the statistics family's classifier only; each
#: estimator checks its own).
TASKS = ("auc", "metric", "classify")
#: ``classes="observed"``: the label domain read off ``y`` (which labels occur must then be public).
OBSERVED = "observed"


def domain_read_off_y(estimator) -> bool:
    """Whether a fit reads its label domain off ``y`` (``classes`` None or ``"observed"``): then the labels
    present, ``classes_`` and anything counted from them are curator-only (the report lists
    ``observed_classes`` under ``curator_only``)."""
    declared = getattr(estimator, "classes", None)
    return declared is None or (isinstance(declared, str) and declared == OBSERVED)


def count_classes(estimator, codes) -> int:
    """The number of classes of a fit's label domain from its class ``codes``: the declared domain's size
    (``classes=[...]``, public), or, for a domain read off ``y`` (``classes`` None or ``"observed"``), the number
    of labels present (every code of such a domain occurs). ``len(classes_)`` either way.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> declared, observed = SimpleNamespace(classes=["a", "b", "c", "d"]), SimpleNamespace(classes="observed")
    >>> count_classes(declared, np.array([0, 2, 2])), count_classes(observed, np.array([0, 1, 1]))
    (4, 2)
    """
    if domain_read_off_y(estimator):
        return int(np.unique(codes).size)
    return len(estimator.classes)


def is_metric_task(estimator) -> bool:
    """True for ``task="metric"``; a ValueError for an unknown task (checked at fit, as sklearn wants)."""
    task = getattr(estimator, "task", "auc")
    if not isinstance(task, str) or task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    return task == "metric"


def label_coding(estimator) -> str:
    """How a fit codes the labels: ``"signs"`` (AUC: ±1, classes_[1] positive), ``"codes"`` (metric task: the
    domain's codes in its declared order) or ``"sorted"`` (the classifier: codes of the sorted classes_)."""
    if is_metric_task(estimator):
        return "codes"
    return "sorted" if getattr(estimator, "task", "auc") == "classify" else "signs"


@dataclass(frozen=True)
class FittedModel:
    """What a release gives beside ``coef_``: further public fitted attributes (name → value), assigned by
    :func:`set_fitted` with the others, all at once."""

    coef: np.ndarray
    attributes: dict = field(default_factory=dict)


def seed_sequence(state) -> np.random.SeedSequence:
    """One SeedSequence per fit from ``random_state``; None draws fresh OS entropy (a seed is for
    experiments only).

    A caller's SeedSequence gives each fit a **fresh child** (``state.spawn(1)[0]``), as a Generator gives
    each fit fresh draws: a fit spawns its own streams (at most :data:`onpair.core.discovery.RANGE_SPAWN_KEY`
    of them) from a sequence whose counter starts at 0, and the range finder's stream, the child
    ``RANGE_SPAWN_KEY`` of the same sequence, is never one of them. Handing the caller's sequence itself to
    the fit would let its counter, advanced by earlier fits or by the caller, reach the finder's key, and a
    model's noise would repeat the finder's (found by an independent review)."""
    if state is None or isinstance(state, (int, np.integer)) and not isinstance(state, bool):
        if state is not None and state < 0:
            raise ValueError(f"random_state must be None or a non-negative integer, got {state!r}")
        return np.random.SeedSequence(None if state is None else int(state))
    if isinstance(state, np.random.SeedSequence):
        return state.spawn(1)[0]
    if isinstance(state, np.random.Generator):
        return np.random.SeedSequence(state.integers(0, 2**63))
    if isinstance(state, np.random.RandomState):
        return np.random.SeedSequence(int(state.randint(0, 2**63 - 1, dtype=np.int64)))
    raise ValueError(f"random_state must be None, an int, a SeedSequence or a Generator, got {state!r}")


def fit_seeds(estimator) -> np.random.SeedSequence:
    """The SeedSequence of one fit of ``estimator``: :func:`seed_sequence` of its ``random_state``, keyed by the
    next noise key of its shared ``accountant=`` when it has one
    (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`), so that no two fits charged to one accountant draw
    the same noise (a grid search with a fixed ``random_state`` over overlapping folds would otherwise
    release differences without noise). Called once per fit, after the checks of the parameters and data."""
    seeds = seed_sequence(getattr(estimator, "random_state", None))
    accountant = getattr(estimator, "accountant", None)
    return seeds if accountant is None else accountant.noise_seed(seeds)


def fit_bounds(estimator, n_features: int) -> FeatureBounds:
    """The public bounds map of an estimator's ``bounds``/``norm_bound``, built as the online learners
    build it, checked against the records' number of features."""
    result = make_bounds(getattr(estimator, "bounds", None), getattr(estimator, "norm_bound", None),
                         type(estimator).__name__)
    if result.n_features is not None and result.n_features != n_features:
        raise ValueError(f"bounds have {result.n_features} features but X has {n_features}")
    return result


def set_fitted(estimator, coef, report, classes, n_features, bounds, n_clipped):
    """Assign the fitted attributes, all at once and only after the release: a failed fit leaves the
    estimator untouched. Returns the estimator."""
    warn_changed_classes(estimator, classes)  # before anything changes: under -W error the fit fails whole
    # A shared accountant (accountant=) is charged the fit's events before anything changes: a refusal
    # (PrivacyBudgetExceeded) leaves the estimator as it was, and nothing was released.
    accountant = check_accountant(getattr(estimator, "accountant", None), type(estimator).__name__)
    charge([accountant], report.events)
    curator = {"n_clipped": n_clipped}
    if domain_read_off_y(estimator):
        # Which labels occur was read off y, not declared: data, not a public parameter (``classes_`` too).
        curator["observed_classes"] = np.asarray(classes).tolist()
    report = extend_report(report, curator=curator)
    extra = {}
    if isinstance(coef, FittedModel):
        coef, extra = coef.coef, coef.attributes
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
    for name, value in extra.items():
        setattr(estimator, name, value)
    warn_noise_dominated(type(estimator).__name__, report, stacklevel=4)
    return estimator


def warn_changed_classes(estimator, classes) -> None:
    """The :class:`~onpair.privacy.exceptions.PrivacyWarning` of a fit with ``classes="observed"`` whose labels
    read off ``y`` are not the previous fit's ``classes_`` (a class appeared, or one went missing): the released
    model's shape (``classes_``, the rows of ``coef_``, the posterior) then changed with the records, which no
    noise covers (one record can be a class's only one). The message names no label: the labels are data."""
    declared, previous = getattr(estimator, "classes", None), getattr(estimator, "classes_", None)
    if not (isinstance(declared, str) and declared == OBSERVED) or previous is None:
        return
    if set(np.asarray(previous).tolist()) != set(np.asarray(classes).tolist()):
        warnings.warn(
            f"{type(estimator).__name__}: classes='observed' read labels off y that differ from the previous fit's "
            "classes_ (a class appeared or went missing), so the released model's classes and shape changed "
            "with the records, which no noise covers: a single record can add or remove a class. Declare the "
            "public label domain, classes=[...], from the data's documentation.", PrivacyWarning, stacklevel=4)


def warn_noise_dominated(owner: str, report: dict, stacklevel: int) -> None:
    """The :class:`~onpair.privacy.exceptions.NoiseDominatedWarning` of a fit whose release is mostly noise.

    The message says what the figure means: an expected cosine of 0 is the estimate's floor (the release is
    no longer than its noise alone typically is), not a measured angle, and neither says how well the model
    ranks held-out data. The advice names another estimator only where one helps (not OffPairStats itself).
    """
    if not report.get("noise_dominated"):
        return
    cosine = report["expected_cosine"]
    if cosine > 0.0:
        meaning = (f"the expected cosine between its direction and the noiseless model's is {cosine:.2f} (below 1/2; "
                   f"privacy_report_['expected_cosine']): the noise's power is about {1.0 / cosine ** 2 - 1.0:.1f} "
                   "times the signal's")
    else:
        meaning = ("the expected cosine between its direction and the noiseless model's is 0.00, the estimate's "
                   "floor: the release is no longer than its noise alone typically is, so nothing in it shows a "
                   "direction beyond the noise's (an estimate from the release's length, not a measured angle)")
    advice = ("More records or a larger epsilon" if owner == "OffPairStats" else
              "More records, a larger epsilon or another estimator (OffPairStats releases the class statistics once)")
    warnings.warn(
        f"{owner}: the released model is dominated by noise: {meaning}. Its scores are mostly the noise's, although "
        f"a well-separated data set may still rank well: measure it on held-out data. {advice} help.",
        NoiseDominatedWarning, stacklevel=stacklevel + 1)


def _fixed_threshold(estimator) -> float:
    """The threshold b of a metric model without a learned one (1.0: the papers' losses)."""
    threshold = getattr(estimator, "threshold", 1.0)
    return float(threshold) if isinstance(threshold, (int, float)) else 1.0


def validate_training_data(X, y, metric=False, classes=None, minimum=2, coding=None):
    """``(X, signs or codes, classes_)`` checked; ``minimum`` records (a partition of a distributed
    fit may hold a single one). ``coding`` (:func:`label_coding`; default ``"codes"`` with ``metric``, else
    ``"signs"``) says how the labels are coded; ``classes`` is the public domain, or None or ``"observed"``
    to read it off ``y``."""
    coding = coding or ("codes" if metric else "signs")
    if isinstance(classes, str) and classes == OBSERVED:
        classes = None
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
        return X, *_codes_in_public_classes(y_arr, classes, coding)
    # No label domain given: it is read off y, so the label values present must be public (like
    # the bounds): see the ``classes`` parameter.
    classes, codes = np.unique(y_arr, return_inverse=True)
    if coding == "sorted" and classes.size < 2:
        raise ValueError(f"classification needs at least 2 classes in y, got {classes.size} class: "
                         f"{classes.tolist()[:5]} (declare the public domain with classes=[...])")
    if coding != "signs":
        # Any number of classes (one included for the metric task: every pair is then a same-class pair).
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


def public_classes(classes, coding: str) -> np.ndarray:
    """The fit's ``classes_`` for a **public** label domain ``classes``: sorted, as scikit-learn expects, for
    the AUC task and the classifier (``coding`` ``"signs"`` or ``"sorted"``), as declared for the metric task
    (``"codes"``); a ValueError for labels that are not distinct or too few for the task.

    The AUC task's positive class is ``classes_[1]``, the larger label, whatever order ``classes`` was given
    in: ROC AUC with one label positive under scores s equals ROC AUC with the other positive under −s, and
    every model of these estimators is antisymmetric in the two labels (swapping them negates it), so the
    order only set the sign of ``decision_function``, which scikit-learn's tools (``roc_auc_score``,
    ``scoring="roc_auc"``) read as the score of ``classes_[1]``. A domain declared in another order is
    accepted with a warning that says so (earlier versions took ``classes[1]`` as the positive class).

    Examples
    --------
    >>> public_classes(["b", "a"], "sorted").tolist(), public_classes(["b", "a"], "codes").tolist()
    (['a', 'b'], ['b', 'a'])
    """
    try:
        domain = np.asarray(classes)
        distinct = domain.ndim == 1 and domain.size >= 1 and np.unique(domain).size == domain.size
    except (TypeError, ValueError):  # labels NumPy cannot hold in one array or sort (a dict beside a number)
        distinct = False
    if not distinct:
        raise ValueError(f"classes must be a list of distinct labels, got {classes!r}")
    if coding == "signs" and domain.size != 2:
        raise ValueError(f"classes must hold exactly 2 labels for the AUC task (classes_[1], the larger, is the "
                         f"positive class), got {classes!r}")
    if coding == "sorted" and domain.size < 2:
        raise ValueError(f"classes must hold at least 2 labels for task='classify', got {classes!r}")
    if coding == "codes":
        return domain
    ordered = np.sort(domain)
    if coding == "signs" and not np.array_equal(ordered, domain):
        warnings.warn(f"classes={classes!r}: classes_ is sorted ({ordered.tolist()!r}), as scikit-learn expects, "
                      f"and decision_function and predict_proba[:, 1] score classes_[1] = {ordered[1].item()!r} "
                      f"(earlier versions made classes[1] = {domain[1].item()!r} positive). score, roc_auc_score "
                      "and cross_val_score(scoring='roc_auc') agree, and ROC AUC does not depend on which label is "
                      "called positive. Declare classes in sorted order to silence this warning.",
                      UserWarning, stacklevel=5)
    return ordered


def _codes_in_public_classes(y, classes, coding):
    """``(signs or codes, classes_)`` for labels in a **public** label domain ``classes``
    (:func:`public_classes` orders it).

    Inferring the classes from y lets one record decide them: with labels {0, 1} in the data set, a
    neighbour whose only 0 is replaced by a 2 has classes {1, 2}, a different positive class, and every
    other record's sign flips, far beyond the sensitivity 2Γ/n. With the domain given, one record
    changes one sign at most, and a data set with a single class present is fine (no opposite pair).
    AUC: exactly two classes, ``classes_[1]`` positive. Metric task and classifier: any number of classes.
    """
    domain = public_classes(classes, coding)
    matches = y[:, None] == domain[None, :]
    unknown = np.flatnonzero(~matches.any(axis=1))
    if unknown.size:
        i = int(unknown[0])
        raise ValueError(f"y[{i}] = {np.asarray(y[i]).tolist()!r} is not one of classes = {domain.tolist()!r}")
    codes = np.argmax(matches, axis=1)
    if coding != "signs":
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


def feature_names(X):
    """scikit-learn's ``feature_names_in_`` for ``X``: the column names of a data frame whose column names are all
    strings (an object array), else None (an array; a frame with other names, as scikit-learn ignores them)."""
    if not is_frame(X):
        return None
    names = list(X.columns)
    if not names or not all(isinstance(name, str) for name in names):
        return None
    return np.asarray(names, dtype=object)


def recording_feature_names(fit):
    """``fit`` that sets ``feature_names_in_`` from ``X`` (or removes it when ``X`` has no string column names)
    after a successful fit only, as scikit-learn does: a failed fit leaves the estimator as it was."""
    @functools.wraps(fit)
    def wrapped(self, X, *args, **kwargs):
        names = feature_names(X)
        result = fit(self, X, *args, **kwargs)
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = names
        return result

    wrapped.records_feature_names = True
    return wrapped


def check_feature_names(estimator, X) -> None:
    """scikit-learn's rule at prediction: a data frame must carry the column names ``X`` had at fit, in the same
    order (a ValueError naming what differs); a frame after a fit on an array, or an array after a fit on a
    frame, is read by position with a UserWarning."""
    fitted = getattr(estimator, "feature_names_in_", None)
    names = feature_names(X)
    owner = type(estimator).__name__
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {owner} was fitted without feature names", UserWarning, stacklevel=3)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {owner} was fitted with feature names", UserWarning,
                      stacklevel=3)
        return
    if len(names) == len(fitted) and all(a == b for a, b in zip(names, fitted)):
        return
    unseen = [name for name in names if name not in set(fitted)]
    missing = [name for name in fitted if name not in set(names)]
    parts = ["The feature names should match those that were passed during fit."]
    if unseen:
        parts.append(f"Feature names unseen at fit time: {unseen}")
    if missing:
        parts.append(f"Feature names seen at fit time, yet now missing: {missing}")
    if not unseen and not missing:
        parts.append(f"Feature names must be in the same order as they were in fit: {list(fitted)}, got {list(names)}")
    raise ValueError(" ".join(parts))


def fitted_feature_block(estimator, X, purpose="prediction") -> np.ndarray:
    """The records ``X`` given to a fitted estimator: its column names checked (:func:`check_feature_names`),
    then :func:`sklearn_feature_block` with its number of features."""
    check_feature_names(estimator, X)
    return sklearn_feature_block(X, estimator.n_features_in_, owner=type(estimator).__name__, purpose=purpose)


# -- the checks before a fit reads a record ------------------------------------------------------------------

def check_fit_accountant(estimator) -> None:
    """The checks of a fit's ``accountant`` before any record is read or any noise drawn (a failed call changes
    nothing and spends nothing): its type (TypeError), and whether it can ever pay for the kind of release the
    fit makes. An estimator whose release is proven (ε, δ)-DP by an argument that is not a zCDP one (its class
    attribute ``approximate_dp``: objective perturbation, Yang et al.'s SGD) needs an accountant with an (ε, δ)
    budget (:meth:`onpair.privacy.accountant.ZCDPAccountant.from_dp`), and a non-private twin
    (``private=False``) can be charged to no budget: both are refused here, naming the fix, instead of after
    the fit. Whether the budget left covers the fit is asked when the fit's events are known
    (:func:`set_fitted`: refused then, with nothing changed)."""
    owner = type(estimator).__name__
    accountant = check_accountant(getattr(estimator, "accountant", None), owner)
    if accountant is None:
        return
    private = getattr(estimator, "private", True)
    if isinstance(private, (bool, np.bool_)) and not private:
        exc = refusal([accountant], [NonPrivate()])
        if exc is not None:
            raise type(exc)(f"{owner}: private=False releases exact outputs, which no accountant can be charged "
                            f"({exc}); drop accountant= for the non-private twin")
    if getattr(estimator, "approximate_dp", False) and accountant.delta_budget is None:
        raise ValueError(f"{owner}'s release is (ε, δ)-DP (an ApproxDPRelease, not a zCDP bound), and accountant= "
                         f"has a ρ budget only ({accountant!r}): build the shared accountant with "
                         "ZCDPAccountant.from_dp(epsilon, delta)")


# -- range discovery for the (ε, δ) estimators ---------------------------------------------------------------
#: What an offline fit's report says of its budget split after a range discovery.
SPLIT_NOTE = ("planned by basic composition: the range finder gets (epsilon_f, delta_f), i.e. rho_f = "
              "rho_from_dp(epsilon_f, delta_f, 'gaussian'), the model (epsilon - epsilon_f, delta - delta_f) given "
              "the released box; accounted as what each is: the finder's levels are Gaussian releases (zCDP events "
              "with their rho), composed with the model's own events by the rule of epsilon_of")


def discovery_of(estimator):
    """The resolved ``discover_bounds`` of an estimator (None: no discovery); a bad value is a ValueError
    (scikit-learn's convention for parameters)."""
    try:
        return discovery_setting(getattr(estimator, "discover_bounds", False), type(estimator).__name__)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def refuse_discovery(estimator) -> None:
    """The checks of ``discover_bounds`` before any record is read: a private fit of a box."""
    if not bool(getattr(estimator, "private", True)):
        raise ValueError("discover_bounds is for a private fit: the non-private twin (private=False) has no "
                         "budget to share; give it the bounds to compare with")


def discovered_fit(estimator, setting, X, labels, classes):
    """``fit`` with a range discovery for an estimator budgeted in (ε, δ) (every offline estimator but
    :class:`onpair.OffPairStats`, which splits its ρ): the generic step of
    :meth:`onpair.core.estimator.PairwiseEstimator.fit`.

    The split (public): the finder gets ε_f = s·ε and δ_f = s·δ (s = ``rho_share``, default 0.2), i.e. the
    zCDP budget ρ_f = rho_from_dp(ε_f, δ_f, "gaussian"). The finder is a composition of Gaussian mechanisms
    (:mod:`onpair.privacy.ranges`), exactly √(2ρ_f)-GDP, and the "gaussian" conversion is exact for it: it is
    (ε_f, δ_f)-DP. It runs on the first m records (m as for OffPairStats: ``warmup``, or the automatic length;
    at most n). Given the released box the estimator is fitted on all n records mapped by it, at
    (ε − ε_f, δ − δ_f) with its own analysis; by basic composition (adaptive: the box is a released value)
    the fit is (ε, δ)-DP. When the finder runs no level (m too small for its thresholds: a public function of
    m, d and ρ_f) it releases nothing and the model gets the whole (ε, δ).

    **Checks first.** Everything that can refuse the fit for a parameter is asked before the finder runs: the
    split above is computed from public quantities (m, d, ρ_f and so whether the finder runs a level), and
    the model's own checks (:meth:`onpair.core.estimator.PairwiseEstimator._check_params`) run on the copy
    that will be fitted, at its share (ε − ε_f, δ − δ_f). A refused parameter draws no noise and reads no
    record beyond the checks of ``X`` and ``y``.

    **The accounting.** The finder is charged as what it is: one
    :class:`onpair.privacy.events.GaussianRelease` per level (sensitivity √(2d), its σ, its ρ;
    :func:`onpair.core.discovery.range_events`), zCDP events, followed by the estimator's own events. So a
    shared ``accountant=`` with a ρ budget only takes a fit with discovery whenever it takes the estimator's
    own release (a Gaussian one: OffPairC, OffPairStrC, GradientPerturbedGD; the (ε, δ) estimators need
    :meth:`~onpair.privacy.accountant.ZCDPAccountant.from_dp` with or without discovery, refused before the
    fit by :func:`check_fit_accountant`). ``epsilon_spent`` is :func:`onpair.privacy.events.epsilon_of` of all
    the events at δ: with a Gaussian model the levels and the model compose in zCDP, converted exactly
    ("gaussian": every event is a Gaussian mechanism), at most ε_f + the model's ε at δ − δ_f (the exact
    curve of the composition is below any basic composition of its parts); with an (ε, δ) model it is the
    finder's ε at δ − Σδ_i ≥ δ_f plus the model's ε, at most ε_f + the model's. Either way at most ε.

    The report (one, :func:`onpair.privacy.reports.build_report`): the finder's levels, then the estimator's
    own events; its ``range_discovery`` field lists the levels and the split. When every event has a ρ (a
    Gaussian model) it has the ρ keys: ``rho_budget`` = ρ_f + the model's ρ budget, ``rho_spent`` what the
    levels and the model spent. Nothing is set and nothing charged until the fit succeeded.
    """
    import copy

    refuse_discovery(estimator)
    epsilon, delta = check_epsilon(estimator.epsilon), check_delta(estimator.delta)
    n, d = X.shape
    declared = declared_box(fit_bounds(estimator, d), type(estimator).__name__)
    share = setting.share
    epsilon_f, delta_f = share * epsilon, share * delta
    rho_f = rho_from_dp(epsilon_f, delta_f, method="gaussian")
    # discover() and length() spend share·ρ of a learner's ρ: hand them the ρ whose share is ρ_f (the finder
    # splits what it is given with a margin, so a rounding of ρ_f/s·s never spends more than ρ_f·(1 + 1e-15)).
    rho_whole = rho_f / share
    m = setting.length(d, rho_whole, limit=n)
    ran = setting.levels(m, d, rho_whole) > 0  # public: whether the finder will release anything
    inner = copy.copy(estimator)
    inner.discover_bounds, inner.accountant = False, None
    if ran:
        inner.epsilon, inner.delta = _rest(epsilon, epsilon_f), _rest(delta, delta_f)
    inner._check_params(n, d, classes)  # every parameter of the model's fit, before the finder runs
    seeds = fit_seeds(estimator)  # a Generator is drawn from, a noise key taken: after the checks
    finder_rng = np.random.Generator(np.random.PCG64(range_seed_sequence(seeds)))
    found = discover(setting, X[:m], declared, rho_whole, finder_rng)
    if found.rho > rho_f or (found.rho > 0.0) != ran:  # never: find_bounds follows the public plan
        raise AssertionError(f"the range finder spent ρ = {found.rho!r} of ρ_f = {rho_f!r} (planned to run: {ran})")
    bounds = found_bounds(found) if ran else declared
    warn_clipped(declared, int(np.count_nonzero(declared.transform(X)[1])), stacklevel=3)
    Z, clipped = bounds.transform(X)  # clipping to the box found is the mechanism's: no warning
    coef, report = inner._fit_released(Z, labels, seeds)
    if seeds.n_children_spawned > RANGE_SPAWN_KEY:  # never: a fit spawns at most RANGE_SPAWN_KEY streams
        raise AssertionError(f"the fit spawned {seeds.n_children_spawned} random streams; the range finder's is "
                             f"child {RANGE_SPAWN_KEY} of the same sequence")
    describe = found.describe()
    levels = describe.pop("releases")
    finder_events = range_events(found) if ran else []
    own = {k: v for k, v in report.items() if k not in COMMON_KEYS + RHO_KEYS + ("record_level",)}
    hidden = set(report.get("curator_only", ()))
    discovery = dict(describe, lower=found.lower.tolist(), upper=found.upper.tolist(), levels=levels,
                     warmup=m, setting=setting.describe(), epsilon=epsilon_f if ran else 0.0,
                     delta=delta_f if ran else 0.0, rho_budget=rho_f,
                     epsilon_of_rho=float(eps_from_rho(found.rho, delta_f)) if ran else 0.0,
                     model_epsilon=float(inner.epsilon), model_delta=float(inner.delta), composition=SPLIT_NOTE)
    events = finder_events + list(report.events)
    # The ρ keys when every event has a ρ (the rule for ρ): the model's ρ budget and the finder's ρ_f.
    rho_budget = None
    if report.get("rho_budget") is not None and rho_of(events) is not None:
        rho_budget = (rho_f if ran else 0.0) + report["rho_budget"]
    combined = build_report(type(estimator).__name__, events, epsilon=epsilon, delta=delta,
                            accounting=_combined_accounting(report, events, ran), mode=report["mode"], n_seen=n,
                            status=report["status"], rho_budget=rho_budget,
                            public=dict({k: v for k, v in own.items() if k not in hidden}, range_discovery=discovery,
                                        delta_spent=(delta_f if ran else 0.0) + float(inner.delta)),
                            curator={k: v for k, v in own.items() if k in hidden})
    # The finder adds at most ε_f to what the model's own analysis gives (at most ε − ε_f for every estimator
    # whose report stays within its ε; Yang et al.'s SGD reports what its σ proves): see the docstring.
    limit = (epsilon_f if ran else 0.0) + report["epsilon_spent"]
    if not combined["epsilon_spent"] <= limit * (1.0 + 1e-12):
        raise AssertionError(f"{type(estimator).__name__}: the fit with discovery spent ε = "
                             f"{combined['epsilon_spent']!r}, more than ε_f + the model's {limit!r}")
    return set_fitted(estimator, coef, combined, classes, d, bounds, int(np.count_nonzero(clipped)))


def _combined_accounting(report, events, ran: bool) -> str:
    """The conversion of ``epsilon_spent`` after a discovery: the model's own when the finder released nothing;
    else "gaussian" when every event with a ρ is a Gaussian mechanism (the finder's levels always are: the
    conversion is exact for their composition), else the model's conversion if it is one
    (:data:`onpair.privacy.conversions.METHODS`), else "tight" (valid for any ρ-zCDP mechanism)."""
    own = report["accounting"]
    if not ran:
        return own
    if all(e.gaussian for e in leaves(events) if e.rho is not None):
        return "gaussian"
    return own if own in METHODS else "tight"


def _rest(total: float, part: float) -> float:
    """total − part, rounded down so that part + (total − part) ≤ total in floating point."""
    rest = total - part
    while part + rest > total:
        rest = float(np.nextafter(rest, 0.0))
    return rest
