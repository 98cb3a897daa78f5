"""Public feature bounds: map raw records onto a domain of diameter 2.

Every constant of the privacy analysis (docs/algorithms.md#public-bounds) assumes ``‖x − x'‖₂ ≤ 2`` for any two
records. The bounds that make this true must be **public**: declared by the user or taken from the
data set's documentation, never computed from the private records (a min/max or a standard deviation
read off the data leaks it). A record outside the declared bounds is clipped to them; the clipping is
part of the mechanism, and the learners count clipped records in their (curator-side) report.

Two kinds of bounds:

* a box ``lower ≤ x ≤ upper`` (per feature, or scalars): each feature is centred on the box's middle
  and put on a unit range, then the box is scaled to diagonal 2,
  ``x_k ↦ (2·clip(x_k) − lower_k − upper_k)/((upper_k − lower_k)·√d)``, so the box maps onto
  ``[−1/√d, 1/√d]^d`` inside the unit ball, with its centre at the origin. This reaches diameter exactly 2 without shrinking any record that respects the box (docs/algorithms.md#public-bounds
  measures AUC 0.75 against 0.64 with unit-ball clipping on Pima). Putting features on a unit range
  first matters: the single scale ``2/‖upper − lower‖₂`` would let the widest feature (Pima's insulin,
  0–900) swamp the others (AUC 0.67 against 0.81 for the non-private learner on Pima);
* a norm bound ``‖x‖₂ ≤ B``: ``x ↦ x·min(1, B/‖x‖)/B``, i.e. records scaled into the unit ball.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS


#: What every message about bounds says: where public bounds come from, and what not to do.
#: A record whose norm exceeds a norm bound by at most this factor is not counted as clipped (it is still
#: scaled onto the ball): 8 ulps, above the rounding of x/‖x‖ and of the norm computed here (≤ 2 ulps measured
#: for d from 2 to 10,000).
NORM_ROUNDING = 1.0 + 8.0 * np.finfo(np.float64).eps

BOUNDS_ADVICE = ("Declare the data's public bounds (bounds=(lower, upper) or norm_bound=) from its documentation "
                 "or the features' physical ranges (streams.uci.get_spec(name).bounds for the bundled UCI sets); "
                 "never from the data: bounds=(X.min(0), X.max(0)) or a StandardScaler in front of the model leak "
                 "the records and void the guarantee. Where only a generous range is known, declare it with "
                 "discover_bounds=True (OnPairStats, every offline estimator, the river classifiers): the data's box "
                 "is then found privately, within the same budget.")


@njit(**NJIT_OPTIONS)
def _map_box_row(x, lower, upper, half_scale, out):
    """One record through the box map, in the same floating-point operations as
    :meth:`FeatureBounds.transform` (``(2·x − lower − upper)·half_scale``).

    A record outside the box or not finite is left to the caller's general path, where clipping is
    counted and warned about and NaN is an error (docs/algorithms.md#public-bounds).

    Parameters
    ----------
    x : float64 array of shape (d,)
        The raw record (read only).
    lower, upper : float64 arrays of shape (d,)
        The public box (read only).
    half_scale : float64 array of shape (d,)
        1/((upper − lower)·√d), half the map's scale (read only).
    out : float64 array of shape (d,)
        Written in place with the mapped record, which lies in [−1/√d, 1/√d]^d; partly written and
        unspecified when True is returned.

    Returns
    -------
    bool
        True when the record lies outside the box or is not finite (a NaN fails both comparisons);
        False when ``out`` holds the mapped record.
    """
    for k in range(x.shape[0]):
        v = x[k]
        if not (v >= lower[k] and v <= upper[k]):  # also true for NaN
            return True
        out[k] = (2.0 * v - lower[k] - upper[k]) * half_scale[k]
    return False


@njit(**NJIT_OPTIONS)
def _clip_box_row(x, lower, upper, half_scale, out):
    """One finite record through the box map, clipped to the box first: the same floating-point
    operations as :meth:`FeatureBounds.transform` (``(2·clip(x, lower, upper) − lower − upper)·half_scale``)
    for one row, and the same as :func:`_map_box_row` for a record inside the box.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The raw record (read only).
    lower, upper : float64 arrays of shape (d,)
        The public box, lower < upper (read only).
    half_scale : float64 array of shape (d,)
        1/((upper − lower)·√d), half the map's scale (read only).
    out : float64 array of shape (d,)
        Written in place with the mapped record, in [−1/√d, 1/√d]^d; unspecified when −1 is returned.

    Returns
    -------
    int
        0 when the record lies inside the box, 1 when it was clipped to it, −1 when an entry is NaN or
        ±inf (the caller's general path reports it).
    """
    status = 0
    for k in range(x.shape[0]):
        v = x[k]
        if not (abs(v) < np.inf):  # NaN compares false
            return -1
        if v < lower[k]:
            v = lower[k]
            status = 1
        elif v > upper[k]:
            v = upper[k]
            status = 1
        out[k] = (2.0 * v - lower[k] - upper[k]) * half_scale[k]
    return status


@njit(**NJIT_OPTIONS)
def _clip_box_block(X, lower, upper, half_scale, Z, clipped):
    """:func:`_clip_box_row` of every row of ``X`` (:meth:`FeatureBounds.transform`'s box map, compiled).

    Parameters
    ----------
    X : float64 array of shape (m, d)
        The records (read only).
    lower, upper, half_scale : float64 arrays of shape (d,)
        :meth:`FeatureBounds.box_rows` (read only).
    Z : float64 array of shape (m, d)
        Written with the mapped records.
    clipped : bool array of shape (m,)
        Written: whether each record was clipped to the box.

    Returns
    -------
    int
        −1 when every row was finite (Z and clipped written), else the index of the first row holding NaN or
        ±inf (Z and clipped unspecified: the caller takes its NumPy path).
    """
    for i in range(X.shape[0]):
        status = _clip_box_row(X[i], lower, upper, half_scale, Z[i])
        if status < 0:
            return i
        clipped[i] = status == 1
    return -1


@njit(**NJIT_OPTIONS)
def _box_probability(x, pack, slope, intercept):
    """σ(a·wᵀφ(x) + b) of one raw record in one compiled call: :func:`_clip_box_row` into a scratch row, the dot
    product through BLAS (``np.dot``, the routine NumPy's ``ndarray.dot`` calls, bit for bit) and the logistic of
    :func:`onpair.core.predictor.logistic` (the same branches and libm ``exp``); NaN for a record holding NaN or
    ±inf (the caller's general path reports it). ``pack`` (5, d), C-contiguous: the box's lower, upper and
    half-scale rows, the model w, and the scratch row (written), so that the call types four arguments.
    tests/test_refresh_kernel.py checks it against the Python path.

    Parameters
    ----------
    x : ndarray of float64, shape (d,)
        The raw record. Read only.
    pack : ndarray of float64, shape (5, d)
        Rows: the box's lower, upper and half-scale, the model w (read only), and a scratch row (written).
    slope, intercept : float
        a and b of the log-odds a·wᵀz + b.
    """
    row = pack[4]
    if _clip_box_row(x, pack[0], pack[1], pack[2], row) < 0:
        return np.nan
    u = slope * np.dot(row, pack[3]) + intercept
    if u >= 0.0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)

class FeatureBounds:
    """Public bounds on the features and the map onto a domain of diameter 2.

    Parameters
    ----------
    lower, upper : float or array-like, optional
        A box. Scalars apply to every feature; arrays fix the number of features.
    norm : float, optional
        A bound on the ℓ2 norm of every record (mutually exclusive with the box).

    Examples
    --------
    >>> import numpy as np
    >>> b = FeatureBounds(lower=0.0, upper=1.0)
    >>> Z, clipped = b.transform(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]]))
    >>> round(float(np.linalg.norm(Z[1] - Z[0])), 12), clipped.tolist()
    (2.0, [False, False, True])
    """

    def __init__(self, lower=None, upper=None, norm=None):
        self._rows = {}  # dim -> the box map's constant rows (see box_rows)
        if norm is not None:
            if lower is not None or upper is not None:
                raise ValueError("give either a box (lower, upper) or a norm bound, not both")
            norm = _finite_float(norm, "norm_bound")
            if norm <= 0.0:
                raise ValueError(f"norm_bound must be > 0, got {norm!r}")
            self.kind = "norm"
            self.norm = norm
            self.lower = self.upper = None
            self.n_features = None
            return
        if lower is None or upper is None:
            raise ValueError("a box needs both lower and upper bounds")
        lower_arr = _finite_array(lower, "lower bound")
        upper_arr = _finite_array(upper, "upper bound")
        lower_arr, upper_arr = np.broadcast_arrays(lower_arr, upper_arr)
        if lower_arr.ndim > 1:
            raise ValueError(f"bounds must be scalars or 1-D arrays, got shape {lower_arr.shape}")
        bad = np.flatnonzero(~(upper_arr > lower_arr))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"bounds: the upper bound must exceed the lower bound for every feature; feature {k} has "
                f"lower={float(np.atleast_1d(lower_arr)[k])!r}, upper={float(np.atleast_1d(upper_arr)[k])!r}"
            )
        with np.errstate(over="ignore"):
            width = upper_arr - lower_arr
        if not np.all(np.isfinite(width)):
            k = int(np.flatnonzero(~np.isfinite(np.atleast_1d(width)))[0])
            raise ValueError(f"the box is too wide to represent: upper − lower overflows for feature {k}")
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            # The map computes (2·x − lower − upper)·s left to right: for x in [lower, upper] its intermediate
            # 2·x − lower lies between lower and 2·upper − lower, so both ends must be finite (review of issue 34:
            # a record on the face of (−8e307, 8e307) mapped to inf, and the release to NaN).
            doubled_ok = (np.all(np.isfinite(2.0 * lower_arr)) and np.all(np.isfinite(2.0 * upper_arr))
                          and np.all(np.isfinite(2.0 * upper_arr - lower_arr))
                          and np.all(np.isfinite(2.0 * lower_arr - upper_arr)))
            scale = self._box_scale(np.atleast_1d(width).astype(np.float64))  # the map's own scale
        if not doubled_ok or not np.all(np.isfinite(scale)):
            raise ValueError("the box's bounds are too extreme to map (2·bound, 2·upper − lower or 2/width "
                             f"overflows): lower={lower!r}, upper={upper!r}; rescale the features first")
        self.kind = "box"
        self.norm = None
        self.lower = np.array(lower_arr, dtype=np.float64)
        self.upper = np.array(upper_arr, dtype=np.float64)
        self.n_features = None if self.lower.ndim == 0 else int(self.lower.shape[0])

    @staticmethod
    def _box_scale(width: np.ndarray) -> np.ndarray:
        # Unit range per feature, then diagonal 2: ‖z − z'‖₂ ≤ 2/√d · √d = 2.
        return 2.0 / (width * np.sqrt(width.shape[0]))

    def transform(self, X: np.ndarray):
        """Map finite records (rows of ``X``) onto the diameter-2 domain.

        Returns
        -------
        Z : ndarray of shape (n, d)
            The mapped records.
        clipped : ndarray of bool, shape (n,)
            Which records were outside the declared bounds and clipped to them. Under a norm bound B, a
            record with B < ‖x‖ ≤ B·(1 + 8 ulp) (:data:`NORM_ROUNDING`: a record normalised as x/‖x‖ in
            floating point, under B = 1) is scaled onto the ball like any other, but not counted.
        """
        X = np.asarray(X, dtype=np.float64)
        if self.kind == "norm":
            # Norms of rescaled rows, so that a huge (finite) record keeps its direction instead of
            # overflowing to inf and collapsing to 0.
            peak = np.max(np.abs(X), axis=1) if X.shape[1] else np.zeros(X.shape[0])
            safe_peak = np.where(peak > 0, peak, 1.0)
            unit_norms = np.linalg.norm(X / safe_peak[:, None], axis=1)  # ‖x‖ / peak, in [1, √d]
            # norm/peak overflows to inf for a tiny (subnormal) peak, and X/norm for a huge record: inf
            # rightly reads "inside" in the first, and the second only happens in rows clipped below.
            with np.errstate(over="ignore"):
                limit = self.norm / safe_peak
                scaled = unit_norms > limit
                # Counted (and warned about) only beyond rounding: x/‖x‖ computed in floating point has a norm
                # of 1 within a few ulps, and is inside a unit ball by intent. Such a record is still scaled
                # onto the ball (the map, hence the sensitivity, is unchanged); it is just not "clipped".
                clipped = unit_norms > limit * NORM_ROUNDING
                Z = X / self.norm
            if scaled.any():
                Z[scaled] = X[scaled] / safe_peak[scaled, None] / unit_norms[scaled, None]
            return Z, clipped
        if X.ndim == 2 and X.shape[1]:
            # one compiled pass over the rows (the operations of the expression below, row by row: the same bits)
            Z = np.empty(X.shape)
            clipped = np.empty(X.shape[0], dtype=np.bool_)
            if _clip_box_block(X, *self.box_rows(X.shape[1]), Z, clipped) < 0:
                return Z, clipped
        lower = np.broadcast_to(self.lower, X.shape[1:])
        upper = np.broadcast_to(self.upper, X.shape[1:])
        clipped = np.any((X < lower) | (X > upper), axis=1)
        Z = (2.0 * np.clip(X, lower, upper) - lower - upper) * (0.5 * self._box_scale(upper - lower))
        return Z, clipped

    def box_rows(self, dim: int):
        """(lower, upper, half-scale) of a box as C-contiguous float64 rows of length ``dim``, computed
        once per dimension (the single-record map's constants)."""
        if self.kind != "box":
            raise ValueError("box_rows is for box bounds; these are a norm bound")
        rows = self._rows.get(dim)
        if rows is None:
            lower = np.ascontiguousarray(np.broadcast_to(self.lower, (dim,)), dtype=np.float64)
            upper = np.ascontiguousarray(np.broadcast_to(self.upper, (dim,)), dtype=np.float64)
            rows = self._rows[dim] = (lower, upper, np.ascontiguousarray(0.5 * self._box_scale(upper - lower)))
        return rows

    def map_inside(self, x: np.ndarray):
        """One float64 record through the box map if it lies inside the box, else None.

        The compiled single-record map of the learners' fast path, in the same floating-point
        operations as :meth:`transform` (a record outside the box, or NaN, returns None: the caller
        takes the general path, which clips, counts and validates)."""
        if self.kind != "box":
            return None
        lower, upper, half_scale = self.box_rows(x.shape[0])
        z = np.empty(x.shape[0])
        if _map_box_row(x, lower, upper, half_scale, z):
            return None
        return z

    def map_one(self, x: np.ndarray) -> np.ndarray:
        """One finite float64 record mapped onto the diameter-2 domain (clipped to the bounds if needed).

        Examples
        --------
        >>> import numpy as np
        >>> FeatureBounds(lower=0.0, upper=1.0).map_one(np.array([1.0, 2.0])).round(4).tolist()
        [0.7071, 0.7071]
        """
        if self.kind == "box" and x.dtype == np.float64 and x.ndim == 1:
            lower, upper, half_scale = self.box_rows(x.shape[0])
            z = np.empty(x.shape[0])
            if _clip_box_row(x, lower, upper, half_scale, z) >= 0:
                return z
        return self.transform(x[None, :])[0][0]

    def map_into(self, x: np.ndarray, out: np.ndarray) -> bool:
        """One finite float64 record of a box's length mapped into ``out`` (clipped to the box if needed), in
        the floating-point operations of :meth:`map_one`, without allocating: True when ``out`` holds it,
        False (``out`` unspecified) for a norm bound or a non-finite record (use :meth:`map_one`)."""
        if self.kind != "box":
            return False
        lower, upper, half_scale = self.box_rows(x.shape[0])
        return _clip_box_row(x, lower, upper, half_scale, out) >= 0

    def to_dict(self) -> dict:
        if self.kind == "norm":
            return {"norm": self.norm}
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist()}

    def __repr__(self) -> str:
        if self.kind == "norm":
            return f"FeatureBounds(norm={self.norm!r})"
        return f"FeatureBounds(lower={self.lower.tolist()!r}, upper={self.upper.tolist()!r})"


def _finite_float(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def _finite_array(value, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def missing_bounds_message(owner: str, *, norm: bool = True, example: str = "") -> str:
    """Why ``owner`` refuses to run without bounds, and what to pass: the one message of every learner,
    estimator, scaler and river adapter (a private model cannot guess public bounds, and a silent default
    such as the unit ball would clip most records of most data sets: on river's Phishing, progressive ROC
    AUC 0.69 at ε = 1 against 0.86 with the documented bounds)."""
    kinds = "bounds=(lower, upper) (scalars, or one per feature" + (f"; {example}" if example else "") + ")"
    if norm:
        kinds += ", or norm_bound=B if every record has ‖x‖₂ ≤ B"
    return f"{owner} needs the public bounds of the features: pass {kinds}. {BOUNDS_ADVICE}"


def make_bounds(bounds, norm_bound, owner: str = "this model") -> FeatureBounds:
    """The public feature bounds of the ``bounds``/``norm_bound`` parameters; a ValueError naming ``owner``
    (:func:`missing_bounds_message`) when neither is given: there is no default."""
    if bounds is None and norm_bound is None:
        raise ValueError(missing_bounds_message(owner))
    if bounds is not None and norm_bound is not None:
        raise ValueError("give either bounds=(lower, upper) or norm_bound, not both")
    if bounds is not None:
        if isinstance(bounds, FeatureBounds):
            return bounds
        try:
            lower, upper = bounds
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be a pair (lower, upper), got {bounds!r}") from None
        return FeatureBounds(lower=lower, upper=upper)
    return FeatureBounds(norm=norm_bound)
