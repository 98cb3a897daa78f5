"""Input validation for every public entry point.

A failed call must change no state and spend no budget, so the learners validate a whole block before
touching anything. Errors name the argument, the record (its position in the stream, 1-based, and its
index in the call) and the offending value. Their type follows NumPy and scikit-learn:

* a feature of the wrong **type** (a string, a dict, a date, any object that is not a number; a whole
  argument that is a string, or a dict where an array is expected) is a ``TypeError``;
* a number of the wrong **value** (NaN, ±inf, an integer beyond the float range, a complex number,
  as scikit-learn's "Complex data not supported"), and a wrong **shape** (ragged or nested records,
  a missing dimension, the wrong number of features), is a ``ValueError``.

``None`` inside an array is NumPy's missing value: it reads as NaN, so it is a ``ValueError`` ("must be
finite"). Labels are judged by their value: a label outside the label domain is a ``ValueError``
whatever its type, as scikit-learn's "Unknown label type".
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings

import numpy as np

from ..privacy.checks import check_positive as _check_positive_number, check_rho as _check_rho


#: Each ecosystem's name for the seed of a model's randomness: river's ``seed`` (the online learners, the
#: river models), scikit-learn's ``random_state`` (the offline estimators, the scikit-learn scaler).
SEED_NAMES = {"seed": "random_state", "random_state": "seed"}


class SeedNameHint:
    """A mixin whose constructor, given the other ecosystem's seed name (``seed=`` for ``random_state=`` or the
    reverse), raises a TypeError that says which name the class takes ("did you mean 'random_state'?"), before
    anything is built. Python's own TypeError is left for every other unexpected keyword.

    Examples
    --------
    >>> class Estimator(SeedNameHint):
    ...     def __init__(self, random_state=None):
    ...         self.random_state = random_state
    >>> Estimator(seed=0)
    Traceback (most recent call last):
    ...
    TypeError: Estimator() got an unexpected keyword argument 'seed': did you mean 'random_state'? (scikit-learn's name, taken by onpair's offline estimators; river's seed= by its online learners and river models)
    """

    def __new__(cls, *args, **kwargs):
        wrong = next((name for name in SEED_NAMES if name in kwargs), None)
        if wrong is not None:
            import inspect

            parameters = inspect.signature(cls.__init__).parameters
            right = SEED_NAMES[wrong]
            if wrong not in parameters and right in parameters:
                family = ("scikit-learn's name, taken by onpair's offline estimators; river's seed= by its online "
                          "learners and river models" if right == "random_state" else
                          "river's name, taken by onpair's online learners and river models; scikit-learn's "
                          "random_state= by its offline estimators")
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {wrong!r}: did you mean "
                                f"{right!r}? ({family})")
        return super().__new__(cls)


def as_feature_block(X, n_features, stream_offset: int, name: str = "X") -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 (m, d) array of finite values.

    A non-numeric feature raises ``TypeError``; a non-finite value, a complex value or a wrong shape
    raises ``ValueError`` (see the module docstring)."""
    arr = _as_float_array(X, name, lambda exc: _locate_unconvertible(X, name, stream_offset, exc))
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (records × features), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {arr.shape})")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features per record but the learner expects {n_features}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        i, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}[{i}, {k}] = {float(arr[i, k])!r} (record {i} of this call, stream position "
            f"{stream_offset + i + 1}, feature {k}{_column_name(X, k)}): features must be finite"
        )
    return np.ascontiguousarray(arr)


def _as_float_array(X, name: str, describe_failure) -> np.ndarray:
    """A float64 copy of ``X``. Strings and dates are a TypeError naming ``name``; complex values (also
    as scalars inside a list or an object array, which NumPy would cast with only a ComplexWarning) a
    ValueError. ``describe_failure(exc)`` gives ``(exception class, message)`` when NumPy cannot convert."""
    if type(X) is np.ndarray and X.dtype.kind in "fiub":  # real numbers already: nothing to warn about
        return np.array(X, dtype=np.float64, copy=True)
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be numeric, got a string {X!r}")
    if _is_complex(X):
        raise ValueError(f"{name} has complex values: features must be real numbers")
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    if kind in ("U", "S", "M", "m"):
        first = X.flat[0].item() if X.size else None
        raise TypeError(f"{name} holds {'dates or times' if kind in 'Mm' else 'strings'} (dtype {X.dtype}, "
                        f"first value {first!r}): features must be numbers")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            return np.array(X, dtype=np.float64, copy=True)
    except np.exceptions.ComplexWarning:
        raise ValueError(f"{name} has complex values: features must be real numbers") from None
    except (TypeError, ValueError, OverflowError) as exc:
        error, message = describe_failure(exc)
        raise error(message) from None


def _is_complex(X) -> bool:
    """Complex input would lose its imaginary part silently in a float conversion."""
    dtype = getattr(X, "dtype", None)
    return dtype is not None and np.issubdtype(dtype, np.complexfloating)


def is_dask_collection(X) -> bool:
    """A Dask collection (array, DataFrame, Series, …), recognised without importing Dask: if ``X`` is
    one, Dask is already imported."""
    dask = sys.modules.get("dask")
    return dask is not None and bool(dask.is_dask_collection(X))


def is_frame(X) -> bool:
    """A data frame (pandas and the like): iterating it gives its column names, not its rows."""
    return getattr(X, "columns", None) is not None and hasattr(X, "__array__")


def _column_name(X, k: int) -> str:
    """``", column 'age'"`` for a data frame's column ``k``, else ``""``."""
    if not is_frame(X):
        return ""
    try:
        return f", column {X.columns[k]!r}"
    except (IndexError, KeyError, TypeError):
        return ""


def _locate_unconvertible(X, name, stream_offset, exc):
    """``(exception class, message)`` naming the first element of ``X`` that does not convert to a float:
    TypeError for a value that is not a number (a string, a dict, an object), ValueError for one that
    is out of range (an integer beyond the float range), complex, or a nested sequence (a shape error)."""
    try:
        rows = np.asarray(X, dtype=object) if is_frame(X) else list(X)
        for i, row in enumerate(rows):
            for k, value in enumerate(row):
                error, reason = _element_failure(value)
                if error is not None:
                    return error, (f"{name}[{i}, {k}] = {value!r} (record {i} of this call, stream position "
                                   f"{stream_offset + i + 1}, feature {k}{_column_name(X, k)}): {reason}")
    except TypeError:
        pass
    # Nothing to point at: NumPy's TypeError is about X's type (a generator, an object), its ValueError
    # about X's shape (ragged rows).
    return (TypeError if isinstance(exc, TypeError) else ValueError), (
        f"{name} must be a numeric array; could not convert it ({exc})")


def _element_failure(value):
    """``(None, None)`` when ``value`` converts to a float, else ``(exception class, reason)``."""
    if isinstance(value, (complex, np.complexfloating)):
        return ValueError, "features must be real numbers, not complex"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ValueError, (f"features must be numbers, not a {type(value).__name__} (nested or ragged "
                            "records: each record must be a flat row of the same length)")
    try:
        float(value)
    except OverflowError:
        return ValueError, "the number is beyond the float64 range"
    except (TypeError, ValueError) as exc:
        # A string or an object is the wrong type (NumPy's own reason, in brackets, is what tools match).
        return TypeError, f"features must be real numbers, not {type(value).__name__} ({exc})"
    return None, None


def as_feature_vector(x, n_features, stream_offset: int, name: str = "x") -> np.ndarray:
    """One record as a (1, d) block (see :func:`as_feature_block`)."""
    if isinstance(x, dict):
        raise TypeError(f"{name} is a dict: use onpair.river for dict records, or pass an array")
    arr = _as_float_array(x, name, lambda exc: _locate_unconvertible([x], name, stream_offset, exc))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of features, got shape {arr.shape}")
    return as_feature_block(arr[None, :], n_features, stream_offset, name=name)


def binary_label(value, index: int, stream_offset: int, name: str = "y") -> int:
    """Map one label to ±1: accepts {-1, +1}, {0, 1} and booleans; anything else is an error."""
    kind = type(value)
    if kind is int or kind is bool:  # the common labels, before the abstract-class checks below
        if value == 1:
            return 1
        if value == 0 or value == -1:
            return -1
    if isinstance(value, (bool, np.bool_)):
        return 1 if value else -1
    if isinstance(value, numbers.Real):
        try:
            v = float(value)
        except OverflowError:  # a Python int beyond float range is not a label either
            v = math.nan
        if v == 1.0:
            return 1
        if v == -1.0 or v == 0.0:
            return -1
    raise ValueError(
        f"{name}[{index}] = {value!r} (stream position {stream_offset + index + 1}): labels must be "
        "-1/+1, 0/1 or booleans"
    )


def label_array(y, name: str = "y") -> np.ndarray:
    """``y`` as a 1-D array (object dtype for Python sequences), or a ValueError naming ``name`` for a
    string, a scalar or another shape. The one entry point of every label block (AUC and metric task,
    learners and :mod:`onpair.evaluation`)."""
    if isinstance(y, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of labels, got a string {y!r}")
    arr = y if isinstance(y, np.ndarray) else np.asarray(y, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {np.shape(arr)}")
    return arr


def class_label(value, index: int, stream_offset: int, name: str = "y"):
    """A class label of the metric task: an int, a bool, a string or a finite integral float.

    Returned in a hashable canonical form (Python int or str) so that ``1``, ``1.0`` and ``np.int64(1)``
    are one class."""
    where = f"{name}[{index}] (record {stream_offset + index + 1} of the stream)"
    if isinstance(value, (str, np.str_)):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return int(bool(value))
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if np.isfinite(value) and float(value) == int(value):
            return int(value)
        raise ValueError(f"{where} = {value!r}: a class label must be an integer, a string or a boolean")
    raise ValueError(f"{where} = {value!r} ({type(value).__name__}): a class label must be an integer, a "
                     "string or a boolean")


def class_codes(labels, known=None):
    """Integer codes (int64, in order of first appearance) of canonical class labels, and the label →
    code map extended by the new classes; ``known`` (not modified) holds the classes seen before."""
    classes = dict(known or {})
    codes = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels):
        codes[i] = classes.setdefault(label, len(classes))
    return codes, classes


def as_label_block(y, n_records: int, stream_offset: int, name: str = "y") -> np.ndarray:
    """Labels as an int8 array of ±1, checked one by one, with the length of ``X``."""
    arr = label_array(y, name)
    if arr.shape[0] != n_records:
        raise ValueError(f"X has {n_records} records but {name} has {arr.shape[0]} labels")
    if arr.dtype.kind in "iuf" and arr.size:
        values = arr.astype(np.float64)
        ok = (values == 1.0) | (values == -1.0) | (values == 0.0)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            binary_label(arr[i].item(), i, stream_offset, name)  # raises with the message
        return np.where(values == 1.0, 1, -1).astype(np.int8)
    if arr.dtype.kind == "b":
        return np.where(arr, 1, -1).astype(np.int8)
    return np.array([binary_label(v, i, stream_offset, name) for i, v in enumerate(arr)], dtype=np.int8)


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """A finite float > 0 (or ≥ 0), rejecting bools, strings, NaN and inf (one implementation:
    :mod:`onpair.privacy.checks`)."""
    if allow_zero:
        return _check_rho(value, name, allow_zero=True)
    return _check_positive_number(value, name)


#: Radii outside this range make the loss constants (G/R, the ledger's 2R) overflow or underflow.
RADIUS_RANGE = (1e-8, 1e8)


def check_radius(value, name: str = "radius") -> float:
    """A radius R of the constraint ball within :data:`RADIUS_RANGE`."""
    radius = check_positive(value, name)
    if not RADIUS_RANGE[0] <= radius <= RADIUS_RANGE[1]:
        raise ValueError(f"{name} must lie in [{RADIUS_RANGE[0]:g}, {RADIUS_RANGE[1]:g}], got {radius!r}")
    return radius


def check_in_range(value, name: str, low: float, high: float) -> float:
    """A finite number in [low, high] (rejecting bools and strings)."""
    number = check_positive(value, name, allow_zero=low == 0)
    if not low <= number <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {number!r}")
    return number


def check_seed(seed, name: str = "seed"):
    """None, a non-negative int, or a numpy SeedSequence (every learner's and river model's ``seed=``;
    :func:`root_sequence` turns it into the learner's root sequence)."""
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name} must be None, a non-negative integer or a numpy SeedSequence, got {seed!r}")
    return int(seed)


def root_sequence(seed, name: str = "seed") -> np.random.SeedSequence:
    """The root SeedSequence of a learner's random streams from its ``seed`` (checked by :func:`check_seed`).

    An int is ``SeedSequence(seed)``; None draws fresh OS entropy; a SeedSequence acts as an int does, as in
    ``numpy.random.default_rng(sequence)``: the root is a copy of it (its entropy, spawn key and pool size,
    with no child spawned yet), so two learners given the same sequence draw the same streams and the
    caller's sequence is not advanced. Give learners distinct children (``sequence.spawn(k)``) for
    independent streams.
    """
    seed = check_seed(seed, name)
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
    return np.random.SeedSequence(seed)
