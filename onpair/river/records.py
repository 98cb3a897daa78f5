"""River dict records → float64 arrays in one fixed feature order: the mapper both adapters share.

The rules (:class:`RecordMapper`), for :class:`~onpair.river.PrivatePairwiseClassifier` and
:class:`~onpair.river.MetricTransformer` alike:

* **Feature order.** Given up front (``features=[...]``), or fixed by the first record learned: its
  keys, sorted, so that the order in which a dict lists its keys never matters. The order never
  changes afterwards. The keys must be public: read off the first record, they are that record's
  (with one-hot dicts, ``'city=Paris'`` names its value; with sparse dicts, which keys it has set the
  dimension). So a private model without ``features=`` warns once (a ``PrivacyWarning``) when the first
  record fixes the order, and its report lists ``features`` and ``schedule`` (which shows the dimension)
  under ``curator_only``. Declare ``features=[...]`` from the data set's documentation instead.
* **A missing key reads as 0** (river's convention for sparse records), in the raw units of the
  feature, *before* the public bounds map. If 0 lies outside the declared bounds the value is
  clipped like any other out-of-bounds value (and counted in ``n_clipped``). A record whose keys are all
  undeclared (learned as all zeros: the declared names are probably not the stream's) is warned about,
  once per model (a ``UserWarning``); an empty record (river's sparse all-zero record) is not.
* **A key never declared is ignored** and the record is counted in
  ``privacy_report()["n_unknown_feature_records"]`` (with the first 100 such names in
  ``"unknown_features"``). ``unknown_features="raise"`` makes it a ``ValueError`` instead, in
  ``learn_*`` and in ``predict_*``. Undeclared values are not read, so they are not validated.
* **Values** must be real numbers (``int``, ``float``, ``bool``, NumPy scalars) and finite. A
  string, ``None`` or another non-number raises a ``TypeError``, and NaN, infinity or a complex
  number a ``ValueError`` (scikit-learn's and NumPy's convention), each naming the feature, the value
  and the record's stream position; the model, its counters and its budget are left exactly as
  they were. A record that is not a dict (a data frame for ``learn_many``) is a ``TypeError``.
* The caller's dict is never stored: values are copied into a new array at each call.

The counts are committed only once the learner has accepted a record (:meth:`RecordMapper.commit`), so
a failed call changes none of them.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings

import numpy as np
from river import utils

from ..privacy.exceptions import PrivacyWarning
from ..privacy.reports import ORDER_FIELDS

UNKNOWN_FEATURE_POLICIES = ("ignore", "raise")
#: At most this many undeclared feature names are kept for the report (bounded memory).
MAX_UNKNOWN_NAMES = 100
#: Exact value types taken by the fast path of the record conversion (others go through the checks).
_FAST_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.int64, np.int32, np.bool_})
_NO_KEYS = frozenset()


class RecordMapper:
    """One adapter's feature order and its (curator-only) counts of irregular records.

    Parameters
    ----------
    features : sequence, optional
        The feature names, in order; default: the sorted keys of the first record learned.
    unknown_features : {"ignore", "raise"}, default "ignore"
        What to do with a key that is not one of the features.

    Examples
    --------
    >>> mapper = RecordMapper(["a", "b"])
    >>> values, unknown, missing = mapper.vector({"b": 2.0, "c": 1.0}, "record 1")
    >>> values.tolist(), sorted(unknown), missing   # missing: how many declared keys the record lacks
    ([0.0, 2.0], ['c'], 1)
    """

    def __init__(self, features=None, unknown_features="ignore", owner="the model"):
        if not isinstance(unknown_features, str) or unknown_features not in UNKNOWN_FEATURE_POLICIES:
            raise ValueError(f"unknown_features must be one of {UNKNOWN_FEATURE_POLICIES}, got {unknown_features!r}")
        self.raise_unknown = unknown_features == "raise"
        self.owner = owner
        self._warned_empty = False
        self._fix_order(check_features(features))
        self.declared = self.order is not None  # False: the first record learned fixes the order
        self.n_unknown_records = 0
        self.unknown_names = {}  # insertion-ordered set, at most MAX_UNKNOWN_NAMES names
        self.n_missing_records = 0

    def _fix_order(self, order) -> None:
        """Set the feature order (a tuple or None) and what the fast path reads it with."""
        self.order = order
        self.feature_set = frozenset(order) if order is not None else frozenset()
        if order is None:
            self._getter = None
        else:
            self._getter = operator.itemgetter(*order)  # a tuple of values, a single value for one key
        # A conversion remembered for the next one only: (the values, the float64 vector made of them). A
        # predict_proba_one then learn_one of the same dict convert it once (see fast_vector).
        self._last = None

    # -- one record --------------------------------------------------------------------------------
    def order_for(self, x, where):
        """(order, feature set) to read ``x`` in: the fixed order, or the one its keys would fix."""
        if self.order is not None:
            return self.order, self.feature_set
        return order_from_first_record(x, where)

    def vector(self, x, where, order=None, feature_set=None, raise_unknown=None):
        """(values as a float64 array in ``order``, undeclared keys, how many declared keys are missing)."""
        if order is None or order is self.order:
            found = self.fast_vector(x) if raise_unknown is None or raise_unknown == self.raise_unknown else None
            if found is not None:
                return found
            order, feature_set = self.order, self.feature_set
        if raise_unknown is None:
            raise_unknown = self.raise_unknown
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features ({where}), got {type(x).__name__}")
        unknown = x.keys() - feature_set
        if unknown and raise_unknown:
            raise ValueError(f"x has the feature {sorted_keys(unknown)[0]!r} ({where}), which is not one of the "
                             f"model's {len(order)} features; unknown_features='ignore' ignores and counts such keys")
        get = x.get
        values = [get(f, 0.0) for f in order]
        try:
            fast = _FAST_TYPES.issuperset(map(type, values)) and math.isfinite(sum(values))
        except (TypeError, OverflowError):
            fast = False
        if not fast:
            check_values(order, values, where)
        missing = len(order) - (len(x) - len(unknown))
        return np.array(values, dtype=np.float64), unknown, missing

    def fast_vector(self, x, remember=False):
        """:meth:`vector` in the fixed order of a plain dict holding every declared key with values of the
        common exact types, finite; None where the general path must decide (it reads, checks and counts
        the same record in full).

        With ``remember``, the conversion is kept for the **next** call only, whatever that call is: when
        every value of the next record is the very same object as in this one (identity, not equality:
        a value replaced by an equal one of another type is checked again), its vector is this one, and
        so is the result of the checks. The values are immutable numbers held by the memo, so their
        identities cannot be reused by other objects meanwhile; which dict holds them does not matter
        (the declared keys are all present, and the undeclared ones are read from each record). So
        ``predict_proba_one`` then ``learn_one`` of the same dict convert it once, and the mapper holds
        no record's values after the ``learn_one``."""
        getter = self._getter
        if getter is None or type(x) is not dict:
            return None
        try:
            values = getter(x)
        except KeyError:  # a declared key is missing: read as 0 and counted by the general path
            return None
        if len(self.order) == 1:
            values = (values,)
        unknown = _NO_KEYS if len(x) == len(values) else x.keys() - self.feature_set
        if unknown and self.raise_unknown:
            return None
        last = self._last
        if last is not None:
            self._last = None
            if all(map(operator.is_, values, last[0])):
                return last[1], unknown, False
        try:
            fast = _FAST_TYPES.issuperset(map(type, values)) and math.isfinite(sum(values))
        except (TypeError, OverflowError):
            return None
        if not fast:
            return None
        vector = np.array(values, dtype=np.float64)
        if remember:
            self._last = (values, vector)
        return vector, unknown, False

    # -- a data frame ------------------------------------------------------------------------------
    def block(self, frame, order, offset):
        """(float64 block in ``order``, undeclared columns, how many declared columns are missing)."""
        columns = list(frame.columns)
        known = set(order)
        unknown = [c for c in columns if c not in known]
        if unknown and self.raise_unknown:
            raise ValueError(f"X has the column {unknown[0]!r}, which is not one of the model's {len(order)} "
                             "features; unknown_features='ignore' ignores and counts such columns")
        present = set(columns)
        block = np.zeros((len(frame), len(order)))
        for k, name in enumerate(order):
            if name in present:
                block[:, k] = column(frame, name, offset)
        return block, unknown, sum(name not in present for name in order)

    # -- commits (after the learner accepted the records) ------------------------------------------
    def warn_if_empty(self, order, missing, unknown, stacklevel: int = 3) -> None:
        """The one warning of a model about to learn a record that holds keys, none of them the ``order``'s
        declared ones (``missing`` of those lack, ``unknown`` are the undeclared keys it holds; issued before
        anything changes, so that ``-W error`` leaves the model as it was). An empty record is river's sparse
        all-zero record, not warned about. The message holds no key and no position."""
        if unknown and missing and missing >= len(order) and not self._warned_empty:
            self._warned_empty = True
            warnings.warn(
                f"{self.owner}: a record held none of the {len(self.order)} declared features and was learned as "
                "all zeros (a missing key reads as 0). Check that features=[...] names the keys the stream's "
                "records carry; privacy_report()['unknown_features'] (curator-only) lists the undeclared keys "
                "seen. unknown_features='raise' refuses records with undeclared keys.", UserWarning,
                stacklevel=stacklevel)

    def commit(self, order, unknown, missing, n_records) -> None:
        """Fix the order (if it was not) and count ``n_records`` records with undeclared or missing keys."""
        if self.order is None:
            self._fix_order(tuple(order))
        if unknown:
            self.n_unknown_records += n_records
            if len(self.unknown_names) < MAX_UNKNOWN_NAMES:
                for name in sorted_keys(unknown):  # sorted: which names are kept must not depend on hashing
                    if len(self.unknown_names) >= MAX_UNKNOWN_NAMES:
                        break
                    self.unknown_names.setdefault(name, None)
        if missing:
            self.n_missing_records += n_records

    def report(self) -> dict:
        """The report keys: ``features``, ``n_unknown_feature_records``, ``unknown_features``,
        ``n_missing_feature_records`` (from the data without noise: for the data curator only)."""
        return {
            "features": None if self.order is None else list(self.order),
            "n_unknown_feature_records": self.n_unknown_records,
            "unknown_features": list(self.unknown_names),
            "n_missing_feature_records": self.n_missing_records,
        }

    def curator_fields(self) -> tuple:
        """The report fields that the feature order makes curator-only: ``features`` and ``schedule`` (the
        release's description, which shows the dimension) unless the order was declared (``features=``).
        A function of the parameters only (not of whether a record has been learned yet)."""
        return () if self.declared else ORDER_FIELDS

    def warn_order_from_record(self, owner: str, stacklevel: int = 3) -> None:
        """The one warning of a private model whose first record is about to fix the feature order (issued
        before anything changes, so that ``-W error`` leaves the model as it was). The message holds no
        key: the keys are the record's."""
        if self.declared or self.order is not None:
            return
        warnings.warn(
            f"{owner}: features=None, so the first record's keys fix the feature order and the dimension, which "
            "every release then depends on: those keys must be public (a one-hot key names the record's value, "
            "and a sparse record's key set is data). Pass features=[...], the public list of feature names from "
            "the data set's documentation. Until then privacy_report() lists 'features' and 'schedule' under "
            "'curator_only'.", PrivacyWarning, stacklevel=stacklevel)

    def restore_counts(self, order, n_unknown, unknown_names, n_missing) -> None:
        """Counts read back from a snapshot (already checked by the caller)."""
        self._fix_order(None if order is None else tuple(order))
        self.n_unknown_records, self.n_missing_records = n_unknown, n_missing
        self.unknown_names = dict.fromkeys(unknown_names[:MAX_UNKNOWN_NAMES])


# -- helpers ---------------------------------------------------------------------------------------
def check_features(features):
    """``features`` as a tuple of distinct hashable names, or None; a ``ValueError`` otherwise."""
    if features is None:
        return None
    if isinstance(features, (str, bytes)) or not isinstance(features, (list, tuple)):
        raise ValueError(f"features must be a list or tuple of feature names, got {features!r}")
    if not features:
        raise ValueError("features must name at least one feature")
    try:
        distinct = len(set(features))
    except TypeError:
        raise ValueError(f"feature names must be hashable (dict keys), got {features!r}") from None
    if distinct != len(features):
        seen = set()
        duplicate = next(f for f in features if f in seen or seen.add(f))
        raise ValueError(f"features names {duplicate!r} twice")
    return tuple(features)


def has_array_bounds(bounds) -> bool:
    """Whether ``bounds`` are per feature (which need a declared feature order)."""
    if bounds is None:
        return False
    if getattr(bounds, "n_features", None) is not None:  # a FeatureBounds with per-feature arrays
        return True
    try:
        return any(np.ndim(b) > 0 for b in bounds)
    except TypeError:
        return False  # malformed: the learner says why


def sorted_keys(keys) -> tuple:
    """Keys in a deterministic order (mixed types by type name, then repr)."""
    keys = list(keys)
    try:
        return tuple(sorted(keys))
    except TypeError:  # keys of mixed types
        return tuple(sorted(keys, key=lambda k: (type(k).__name__, repr(k))))


def order_from_first_record(x, where: str):
    """The feature order (sorted keys) and key set that the first record fixes; ValueError if it cannot."""
    if not isinstance(x, dict):
        raise TypeError(f"x must be a dict of features ({where}), got {type(x).__name__}")
    if not x:
        raise ValueError(f"the first record has no features ({where}): pass features=[...] or a "
                         "non-empty record")
    order = sorted_keys(x)
    return order, frozenset(order)


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (str, bytes)):
        return "a string"
    return f"a {type(value).__name__}"


def check_values(order, values, where, prefix="x"):
    """Raise for the first value that is not a finite real number, naming it: TypeError for a value that
    is not a number (a string, None, an object), ValueError for a complex or non-finite number."""
    for name, value in zip(order, values):
        if isinstance(value, (bool, np.bool_)):
            continue
        if not isinstance(value, numbers.Number) or isinstance(value, (complex, np.complexfloating)):
            error = ValueError if isinstance(value, numbers.Number) else TypeError  # complex: a value error
            raise error(f"{prefix}[{name!r}] = {value!r} ({where}): features must be real numbers, "
                        f"got {_describe(value)}")
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{prefix}[{name!r}] = {value!r} ({where}): not representable as a float") from None
        if not math.isfinite(number):
            raise ValueError(f"{prefix}[{name!r}] = {value!r} ({where}): features must be finite")


def as_frame(X):
    """``X`` as a data frame river reads, or a ValueError."""
    try:
        return utils.dataframe.into_frame(X)
    except TypeError:
        raise TypeError(f"X must be a data frame (pandas, or another backend river reads), got "
                        f"{type(X).__name__}") from None


def series_values(y) -> list:
    """Labels of a series or sequence as a list."""
    try:
        return utils.dataframe.into_series(y).to_list()
    except TypeError:
        if isinstance(y, (str, bytes, dict)):
            raise ValueError(f"y must be a series or a sequence of labels, got {type(y).__name__}") from None
        return list(y)


def column(frame, name, offset) -> np.ndarray:
    """One column as finite float64, or a ValueError naming the column, the row and the value."""
    raw = frame[name].to_numpy()
    try:
        if raw.dtype.kind in "OSU" or raw.dtype.kind == "c":
            raise TypeError
        values = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or not np.all(np.isfinite(values)):
        for i, value in enumerate(raw.tolist()):
            where = f"row {i}" if offset is None else f"row {i}, stream position {offset + i + 1}"
            check_values([name], [value], where, prefix="X")
        values = np.asarray(raw, dtype=np.float64)  # every value checked: converts
    return values
