"""Continual release of prefix sums: a private estimate of S_t = Σ_{s≤t} v_s after every record.

A stream of vectors v_1, v_2, … ∈ R^k arrives one record at a time (or in blocks). Neighbouring
streams differ in one record, replaced: ‖v_t − v'_t‖₂ ≤ Δ (the public ``sensitivity``; the caller
guarantees it, e.g. by clipping). After every record the mechanism releases a noisy S_t. Every
mechanism here is a Gaussian mechanism on a linear image E·V of the stream, followed by
post-processing, so its zCDP cost is exact: ρ = Δ²·κ²/(2σ²) with κ the largest column norm of the
encoder E (``docs/algorithms.md`` §7 and §12; ``docs/continual_release.md``).

* :class:`TreeAggregation`: the binary tree (Dwork, Naor, Pitassi, Rothblum 2010; Chan, Shi, Song
  2011), with the bottom-up least-squares estimate of each complete subtree (Honaker 2015) or the
  plain sum of popcount(t) nodes. A known horizon T (L = ⌊log₂T⌋ + 1 levels, κ² = L) or an unbounded
  stream (level h gets ρ_h = ρ·6/(π²(h+1)²), which sums to less than ρ over all levels).
* :class:`BandedToeplitz`: the square-root factorisation A = B·C of the prefix-sum matrix (c_j =
  C(2j, j)/4^j; Fichtenberger, Henzinger, Upadhyay 2023) with C truncated to a band b, so that memory
  and time are O(b·k) and the cost κ² = Σ_{j<b} c_j² does not depend on the stream length.
* :class:`EpochTrees`: doubling epochs (T₀, 2T₀, 4T₀, … records), each a least-squares tree planned
  for its epoch's length with the whole ρ; a record lies in one epoch only (parallel composition), so
  the stream costs ρ for any length and the variance grows like (log t)² without a known horizon.

Noise is drawn with NumPy from the caller's ``Generator`` (``rng.standard_normal``) in a fixed
per-record order, so that a block equals its records fed one at a time, bit for bit; the compiled
kernels (:mod:`onpair.privacy._continual_kernels`) only do the noise-free arithmetic.

Privacy unit: a record is a stream position. A record replayed k times (several passes over a data
set) is k positions: its cost is at most k²·ρ in zCDP (group privacy for a Gaussian mechanism:
sensitivity kΔ), and often less; :func:`onpair.privacy.replay.record_rho` gives it exactly from the
encoder (k·ρ for copies farther apart than the band of the factorisation).

The state (:meth:`PrefixSumMechanism.to_state`) holds noiseless partial sums and the noise itself:
it is as secret as the raw stream. For the same reason a mechanism refuses to be copied or pickled
(a copy fed a neighbouring stream would release noise that cancels in the difference).
"""

from __future__ import annotations

import abc
import concurrent.futures
import inspect
import math
import numbers
import os

import numpy as np

from ._checks import check_positive, check_rho
from ._continual_kernels import (
    _first_row_beyond,
    _row_within,
    _toeplitz_add_block,
    _toeplitz_record,
    _toeplitz_release,
    _toeplitz_variance_advance,
    _tree_add_block,
    _tree_prefix,
)
from .exceptions import PrivacyBudgetExceeded
from .gaussian import gaussian_rho, sigmas_for_shares

__all__ = [
    "PrefixSumMechanism",
    "TreeAggregation",
    "BandedToeplitz",
    "EpochTrees",
    "sqrt_toeplitz_coefficients",
    "DEFAULT_BAND",
    "MAX_RECORDS",
    "MAX_ENTRY",
    "MAX_STATE_FLOATS",
]

#: The most records a mechanism accepts (positions stay exact in int64; 63 tree levels).
MAX_RECORDS = 2**62

#: The largest magnitude of a record's entry, and of the noise scale σ, that a mechanism accepts. Sums of
#: up to 2^62 such records (< 5e168) and their noise stay far from overflow, so every release is finite;
#: a record beyond it is refused like a NaN (a record of 1e308 plus another would release inf).
MAX_ENTRY = 1e150

#: The most float64 numbers (8 GiB) a mechanism's state may hold: a ``dim``, ``band`` or ``first_epoch``
#: that needs more is refused with a ValueError naming it, before anything is allocated (it would
#: otherwise exhaust the memory, or kill the process).
MAX_STATE_FLOATS = 2**30

#: Levels of an unbounded tree: record t ≤ 2^62 completes nodes up to level 62.
_UNBOUNDED_LEVELS = 63

#: Default band of :class:`BandedToeplitz`, chosen from ``bench/continual.py`` (docs/continual_release.md):
#: the largest band whose arithmetic still hides behind drawing the noise at k = 462 (about 120,000
#: records/s on the development VM, as fast as b = 1); it beats the least-squares tree up to horizons
#: of about 2,000 records (at 10³: worst prefix variance 34 against 53, in units Δ²/(2ρ)). A longer
#: known horizon is better served by a band of about T/30 or by the tree (see the table).
DEFAULT_BAND = 64

ESTIMATES = ("honaker", "plain")

#: Standard normals drawn per chunk of a block (2 MiB): bounds the scratch memory of a long block
#: (two chunks) and sets the granularity at which drawing the noise overlaps the kernels.
_CHUNK_VALUES = 1 << 18

_EXECUTOR = (None, None)  # (executor, pid of the process that created it)


def _noise_executor():
    """The one helper thread that draws the next chunk's normals while a kernel runs (created on
    first use, and again in a forked child, which inherits the executor but not its thread; used only
    by blocks of two chunks or more)."""
    global _EXECUTOR
    executor, pid = _EXECUTOR
    if executor is None or pid != os.getpid():
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="onpair-noise")
        _EXECUTOR = (executor, os.getpid())
    return executor


def _fill_normals(rng, dest):
    rng.standard_normal(out=dest)


# ---------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------
def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_int(value, name: str, minimum: int = 1, maximum: int = MAX_RECORDS) -> int:
    """An integer argument: TypeError for a non-integer (bools included), ValueError outside the range."""
    if not _is_int(value):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)


def _check_real(value, name: str) -> None:
    if isinstance(value, (bool, np.bool_)) or not (
            isinstance(value, numbers.Real)
            or (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu")):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")


def _check_state_size(floats: int, what: str) -> None:
    if floats > MAX_STATE_FLOATS:
        raise ValueError(f"{what} give a state of {floats:,} floats ({floats * 8 / 2**30:,.1f} GiB), more than "
                         f"MAX_STATE_FLOATS = 2**30 (8 GiB): refused before allocating it")


def _noise_scales(sensitivities, shares, sensitivity, rho) -> np.ndarray:
    """σ for each share (:func:`sigmas_for_shares`), refused unless every σ lies in [1/MAX_ENTRY, MAX_ENTRY]:
    beyond, the noise or its inverse variance would overflow (an extreme ``sensitivity`` or ``rho``)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sigmas = sigmas_for_shares(sensitivities, shares)
    if not np.all((sigmas >= 1.0 / MAX_ENTRY) & (sigmas <= MAX_ENTRY)):
        raise ValueError(f"sensitivity={sensitivity!r} and rho={rho!r} give a noise scale σ outside "
                         f"[1/MAX_ENTRY, MAX_ENTRY] = [{1 / MAX_ENTRY:g}, {MAX_ENTRY:g}] "
                         f"(σ = {float(np.min(sigmas)):g} to {float(np.max(sigmas)):g})")
    return sigmas


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (the caller's own, e.g. np.random.default_rng(seed)), "
            f"got {rng!r}")


def sqrt_toeplitz_coefficients(n):
    """The first n coefficients c_j = C(2j, j)/4^j of the square root of the prefix-sum matrix.

    They are the Taylor coefficients of (1 − x)^{−1/2}; the lower-triangular Toeplitz matrix C with
    first column c satisfies C·C = A (the lower-triangular matrix of ones).

    Parameters
    ----------
    n : int
        Number of coefficients, ≥ 1.

    Returns
    -------
    numpy.ndarray
        float64 (n,), by the recursion c_j = c_{j−1}·(2j − 1)/(2j) (relative error below j ulps).

    Examples
    --------
    >>> sqrt_toeplitz_coefficients(4).tolist()
    [1.0, 0.5, 0.375, 0.3125]
    """
    n = _check_int(n, "n")
    j = np.arange(1, n, dtype=np.float64)
    return np.concatenate(([1.0], np.cumprod((2.0 * j - 1.0) / (2.0 * j))))


def _popcount(x: int) -> int:
    return bin(x).count("1")


# ---------------------------------------------------------------------------------------------------
# base class
# ---------------------------------------------------------------------------------------------------
class PrefixSumMechanism(abc.ABC):
    """A continual-release mechanism for prefix sums of a stream of vectors (abstract base).

    Subclasses: :class:`TreeAggregation`, :class:`BandedToeplitz`. Construct them with keyword
    arguments only (a swapped ``sensitivity`` and ``rho`` would silently change the noise).

    Attributes
    ----------
    dim : int
        k, the length of every record.
    sensitivity : float
        Δ, the public ℓ2 bound on the change of one record under replacement.
    rho : float
        zCDP budget of the whole stream (with a horizon: of up to ``horizon`` records). The cost of the
        noise actually drawn is at most this (``describe()['rho_spent_bound']``).
    horizon : int or None
        Records accepted in all; None for an unbounded stream.
    n_seen : int
        Records added so far (read-only).
    """

    #: Name in :meth:`describe` and in the state (``scalars['kind']``).
    kind = ""
    _registry: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):  # a subclass that does not name its own kind registers nothing
            PrefixSumMechanism._registry[cls.kind] = cls

    def __init__(self, *, dim, sensitivity, rho, horizon=None):
        self._dim = _check_int(dim, "dim", maximum=2**31)
        _check_real(sensitivity, "sensitivity")
        self._sensitivity = check_positive(sensitivity, "sensitivity")
        _check_real(rho, "rho")
        self._rho = check_rho(rho, "rho", allow_zero=False)
        self._horizon = None if horizon is None else _check_int(horizon, "horizon")
        self._n_seen = 0

    # -- public read-only: the noise was calibrated to these, so they cannot be changed ---------------
    @property
    def dim(self) -> int:
        """int: k, the length of every record."""
        return self._dim

    @property
    def sensitivity(self) -> float:
        """float: Δ, the public ℓ2 bound on the change of one record under replacement."""
        return self._sensitivity

    @property
    def rho(self) -> float:
        """float: the zCDP budget of the whole stream."""
        return self._rho

    @property
    def horizon(self):
        """int or None: records accepted in all (None: unbounded)."""
        return self._horizon

    @property
    def n_seen(self) -> int:
        """int: records added so far."""
        return self._n_seen

    @property
    def capacity(self) -> int:
        """int: the most records this mechanism accepts in all (``horizon``, or 2^62)."""
        return MAX_RECORDS if self.horizon is None else self.horizon

    def get_params(self) -> dict:
        """The constructor's arguments (JSON-able): ``type(m)(**m.get_params())`` is a fresh twin."""
        return {name: getattr(self, name) for name in self._param_names()}

    @classmethod
    def _param_names(cls):
        return tuple(name for name, p in inspect.signature(cls.__init__).parameters.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY)

    # -- adding records ---------------------------------------------------------------------------
    def add_block(self, V, rng, *, return_estimates=False):
        """Add records (rows of ``V``) in stream order and release the prefix estimates.

        Parameters
        ----------
        V : array_like of float, shape (m, k)
            The records; float64 C-contiguous is used in place, anything else real is converted.
            m = 0 is allowed (nothing happens).
        rng : numpy.random.Generator
            The caller's generator; the only source of noise (never NumPy's global state). Normals
            are drawn in a fixed per-record order, so ``add_block(V)`` equals ``add_block(V[:i])``
            followed by ``add_block(V[i:])``, bit for bit, with the same generator.
        return_estimates : bool, optional
            Return the (m, k) prefix estimates after each record (default: return nothing).

        Returns
        -------
        numpy.ndarray or None

        Raises
        ------
        TypeError
            ``rng`` is not a Generator, or ``V`` does not hold real numbers.
        ValueError
            ``V`` has the wrong shape or holds NaN, ±inf or an entry beyond ±:data:`MAX_ENTRY` (whose sums
            could overflow); :class:`PrivacyBudgetExceeded` (a ValueError)
            if the block would take the stream past the horizon. Every check runs before any state
            changes and before any noise is drawn.

        Notes
        -----
        A block of more than 2¹⁸ normals is processed in chunks; the next chunk's normals are drawn
        (from ``rng``, in order) in a helper thread while the compiled kernel processes the current
        one, so a long block keeps up to two cores busy. The results do not depend on it.
        """
        V = self._check_block(V)
        _check_rng(rng)
        m = V.shape[0]
        out = np.empty((m, self.dim)) if return_estimates else None
        if m:
            self._feed(V, rng, out)
        return out

    def _check_block(self, V, name="V") -> np.ndarray:
        if not isinstance(V, np.ndarray):
            try:
                V = np.asarray(V)
            except (TypeError, ValueError, OverflowError) as exc:  # a ragged list, a failing __array__
                shape = f"({self.dim},)" if name == "v" else f"(m, {self.dim})"
                raise ValueError(f"{name} must be an array of shape {shape} of real numbers: {exc}") from None
        if V.dtype.kind not in "fiu":
            raise TypeError(f"{name} must hold real numbers, got dtype {V.dtype}")
        if name == "v":
            if V.ndim != 1 or V.shape[0] != self.dim:
                raise ValueError(f"v must be one record, of shape ({self.dim},), got {V.shape}")
            V = V[None, :]
        elif V.ndim != 2 or V.shape[1] != self.dim:
            raise ValueError(f"V must have shape (m, {self.dim}), got {V.shape}")
        if V.dtype != np.float64:
            V = V.astype(np.float64)
        bad = _first_row_beyond(V, MAX_ENTRY)
        if bad >= 0:
            where = "v" if name == "v" else f"V[{bad}]"
            raise ValueError(f"{where} holds NaN, inf or an entry beyond ±MAX_ENTRY = {MAX_ENTRY:g}; nothing was "
                             "added")
        m = V.shape[0]
        if self._n_seen + m > self.capacity:
            what = f"horizon={self.horizon}" if self.horizon is not None else f"the limit of {MAX_RECORDS} records"
            raise PrivacyBudgetExceeded(
                f"adding {m} records to the {self._n_seen} already seen would exceed {what}; the budget "
                f"rho={self.rho!r} covers no more. Nothing was added (the released estimates stay frozen)."
            )
        return V

    def add_one(self, v, rng) -> None:
        """Add one record: exactly ``add_block(v[None, :], rng)`` (the same normals, the same state), with
        the per-call overhead of a learner's single-record path.

        Parameters
        ----------
        v : array_like of real numbers, shape (k,)
            The record (float64 and C-contiguous takes the fast path; other real arrays are converted).
            Another shape is a ValueError, a block of records included: that is :meth:`add_block`.
        rng : numpy.random.Generator
            The caller's generator.

        Raises
        ------
        TypeError, ValueError
            As :meth:`add_block` (naming ``v``), before any state changes or noise is drawn.
        """
        if not (type(v) is np.ndarray and v.dtype == np.float64 and v.shape == (self._dim,)
                and v.flags.c_contiguous and _row_within(v, MAX_ENTRY)
                and self._n_seen < (MAX_RECORDS if self._horizon is None else self._horizon)
                and isinstance(rng, np.random.Generator)):
            V = self._check_block(v, name="v")  # raises with the reason (a vector of another shape included)
            _check_rng(rng)
            self._feed(np.ascontiguousarray(V), rng, None)
            return
        self._add_checked_one(v, rng)

    def _add_checked_one(self, v, rng) -> None:
        """:meth:`add_one` of a record that passed its checks (float64, C-contiguous, within ±MAX_ENTRY,
        below the capacity). Subclasses may feed it without building a block of one."""
        Z = rng.standard_normal((self._noise_rows(self._n_seen, 1), self._dim))
        self._apply(v[None, :], Z)

    def _feed(self, V, rng, out) -> None:
        m, k = V.shape
        step = max(1, _CHUNK_VALUES // (k * self._rows_per_record))
        chunks = [(lo, min(m, lo + step)) for lo in range(0, m, step)]
        rows, t = [], self._n_seen
        for lo, hi in chunks:
            rows.append(self._noise_rows(t, hi - lo))
            t += hi - lo
        # Scratch buffers filled in place (a fresh array per chunk costs a page fault every few hundred
        # normals: measured +60 % on the time to draw them). With several chunks, the next chunk's
        # normals are drawn in a helper thread while the kernel (which releases the GIL, as NumPy's
        # sampler does) processes the current one: the same draws in the same order from the same
        # generator, so the results are unchanged, bit for bit.
        buffers = [np.empty((max(rows), k)) for _ in range(min(2, len(chunks)))]
        if len(chunks) == 1:
            rng.standard_normal(out=buffers[0][:rows[0]])
            self._apply(np.ascontiguousarray(V), buffers[0][:rows[0]], out)
            return
        executor = _noise_executor()
        pending = executor.submit(_fill_normals, rng, buffers[0][:rows[0]])
        try:
            for i, (lo, hi) in enumerate(chunks):
                pending.result()
                Z = buffers[i % 2][:rows[i]]
                pending = (executor.submit(_fill_normals, rng, buffers[(i + 1) % 2][:rows[i + 1]])
                           if i + 1 < len(chunks) else None)
                self._apply(np.ascontiguousarray(V[lo:hi]), Z, None if out is None else out[lo:hi])
        finally:
            if pending is not None:  # interrupted: let the draw in flight finish before returning
                pending.result()

    #: Upper bound on the average normals per record in a chunk (chunk sizing only).
    _rows_per_record = 1

    @abc.abstractmethod
    def _noise_rows(self, t0: int, m: int) -> int:
        """Rows of standard normals (each of length k) that records t0+1 … t0+m consume."""

    @abc.abstractmethod
    def _apply(self, V, Z, out=None, nodes=None) -> None:
        """Feed records with the given standard normals (C-contiguous float64; Z may be overwritten),
        update the state and ``n_seen``. No checks: ``add_block`` has made them. Tests call it with
        chosen noise to read the mechanism off as a linear map."""

    # -- releases ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def estimate(self) -> np.ndarray:
        """(k,) the released prefix estimate at ``n_seen`` (zeros before the first record)."""

    def variance(self, t=None) -> float:
        """Per-coordinate error variance of the prefix estimate after t records (public).

        Parameters
        ----------
        t : int, optional
            0 ≤ t ≤ ``capacity``; default ``n_seen``. The estimate at t is unbiased, with independent
            coordinates of this variance.

        Returns
        -------
        float
        """
        t = self._n_seen if t is None else _check_int(t, "t", minimum=0, maximum=self.capacity)
        return 0.0 if t == 0 else self._variance(t)

    @abc.abstractmethod
    def _variance(self, t: int) -> float:
        ...

    @abc.abstractmethod
    def describe(self) -> dict:
        """Public summary: kind, noise scale(s), ρ, κ², band or levels, horizon."""

    @abc.abstractmethod
    def privacy_rows(self) -> list:
        """Public accounting rows (bounded in number: one per tree level or per factorisation)."""

    def _common_description(self) -> dict:
        return {"kind": self.kind, "dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho,
                "horizon": self.horizon, "n_seen": self._n_seen}

    # -- persistence ------------------------------------------------------------------------------
    def to_state(self):
        """The state as JSON-able scalars and float64 arrays (copies), for persistence.

        Returns
        -------
        (dict, dict of str to numpy.ndarray)
            ``scalars`` = ``{"kind": str, "n_seen": int, "params": dict}``; ``arrays`` depend on the
            subclass. Rebuild with ``cls.from_state(mech.get_params(), scalars, arrays)``: the parameters
            must be the ones the state was made with (the factorisation keeps its noise unscaled, so a
            state resumed at another ρ or Δ would release the same noise at another σ, and the two
            releases together would give the prefix sums away). The arrays hold noiseless partial sums
            of the stream and the noise: keep them as secret as the raw data, and resume a state once
            (two mechanisms from one state share their noise).
        """
        return {"kind": self.kind, "n_seen": self._n_seen, "params": self.get_params()}, self._export_arrays()

    @classmethod
    def from_state(cls, params, scalars, arrays):
        """Rebuild a mechanism from :meth:`get_params` and :meth:`to_state`, checking everything.

        Parameters
        ----------
        params : dict
            Constructor arguments, exactly the keyword names of the class.
        scalars : dict
            ``{"kind": str, "n_seen": int, "params": dict}``; ``params`` must equal the ``params`` given.
        arrays : dict of str to numpy.ndarray
            Exactly the arrays :meth:`to_state` gives, float64, of the expected shapes, finite and
            consistent with ``n_seen`` (entries that ``n_seen`` says were never written are zero).

        Returns
        -------
        PrefixSumMechanism
            Of the class named by ``scalars['kind']`` (which must be ``cls`` or a subclass of it).

        Raises
        ------
        ValueError
            Naming the first thing that is wrong; a stored state is untrusted input.
        """
        if not isinstance(scalars, dict) or set(scalars) != {"kind", "n_seen", "params"}:
            raise ValueError(f"scalars must be a dict with exactly the keys 'kind', 'n_seen' and 'params', got "
                             f"{scalars!r}")
        if scalars["params"] != params:
            raise ValueError(f"the state was made with the parameters {scalars['params']!r}, not {params!r}: a state "
                             "resumes only with the parameters its noise was calibrated to")
        target = PrefixSumMechanism._registry.get(scalars["kind"]) if isinstance(scalars["kind"], str) else None
        if target is None or not issubclass(target, cls):
            raise ValueError(f"scalars['kind'] = {scalars['kind']!r} does not name a {cls.__name__}")
        if not isinstance(params, dict) or set(params) != set(target._param_names()):
            raise ValueError(f"params must be a dict with exactly the keys {sorted(target._param_names())}, "
                             f"got {params!r}")
        try:
            mech = target(**params)
        except (TypeError, ValueError) as err:
            raise ValueError(f"params: {err}") from None
        n_seen = scalars["n_seen"]
        if not _is_int(n_seen) or not 0 <= n_seen <= mech.capacity:
            raise ValueError(f"scalars['n_seen'] must be an integer in [0, {mech.capacity}], got {n_seen!r}")
        n_seen = int(n_seen)
        if not isinstance(arrays, dict):
            raise ValueError(f"arrays must be a dict of arrays, got {type(arrays).__name__}")
        expected = mech._array_shapes_at(n_seen)
        if set(arrays) != set(expected):
            raise ValueError(f"arrays must have exactly the keys {sorted(expected)}, got {sorted(arrays)}")
        checked = {}
        for name, shape in expected.items():
            value = arrays[name]
            if not isinstance(value, np.ndarray) or value.dtype != np.float64:
                raise ValueError(f"arrays[{name!r}] must be a float64 numpy array, got "
                                 f"{getattr(value, 'dtype', type(value).__name__)}")
            if value.shape != shape:
                raise ValueError(f"arrays[{name!r}] must have shape {shape}, got {value.shape}")
            if not np.isfinite(value).all():
                raise ValueError(f"arrays[{name!r}] holds NaN or inf")
            checked[name] = np.array(value, dtype=np.float64, order="C", copy=True)
        mech._import_arrays(n_seen, checked)
        mech._n_seen = n_seen
        return mech

    @abc.abstractmethod
    def _array_shapes(self) -> dict:
        ...

    def _array_shapes_at(self, n_seen: int) -> dict:
        """The arrays' shapes after ``n_seen`` records (fixed for the tree and the factorisation)."""
        return self._array_shapes()

    @abc.abstractmethod
    def _export_arrays(self) -> dict:
        ...

    @abc.abstractmethod
    def _import_arrays(self, n_seen: int, arrays: dict) -> None:
        """Check the arrays' consistency with n_seen (ValueError) and install them."""

    # -- no copies --------------------------------------------------------------------------------
    def __reduce_ex__(self, protocol):
        raise TypeError(
            f"a {type(self).__name__} cannot be pickled or copied: it holds noiseless sums of the stream, "
            "and a copy would reuse its noise. Persist it with to_state()/from_state().")

    def __copy__(self):
        self.__reduce_ex__(2)

    def __deepcopy__(self, memo):
        self.__reduce_ex__(2)

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params}; n_seen={self._n_seen})"


# ---------------------------------------------------------------------------------------------------
# binary tree
# ---------------------------------------------------------------------------------------------------
class TreeAggregation(PrefixSumMechanism):
    """Binary-tree aggregation with the least-squares (Honaker) or the plain prefix estimate.

    Node (h, j) releases the sum of records (j−1)·2^h + 1 … j·2^h plus N(0, σ_h² I) as soon as it is
    complete. Each complete subtree is summarised bottom-up by the inverse-variance combination of
    its node's own value and its two children's subtree estimates (var_0 = σ_0²,
    var_h = 1/(1/σ_h² + 1/(2·var_{h−1}))); the prefix estimate at t adds the subtree estimates of the
    nodes of the dyadic decomposition of [1, t], one per set bit of t, so its per-coordinate
    variance is Σ var_h over those bits. ``estimate="plain"`` adds the nodes' own values instead
    (variance Σ σ_h²; popcount(t)·σ² with a horizon). Memory: two (levels, k) arrays.

    Budget. A record lies in exactly one node per level.

    * ``horizon=T``: L = ⌊log₂T⌋ + 1 levels (the bit length of T), σ = Δ·√(L/(2ρ)) on every level,
      κ² = L; after T records the mechanism refuses more (:class:`PrivacyBudgetExceeded`, a
      ValueError, nothing changed): the caller keeps the last release, frozen.
    * ``horizon=None``: level h gets ρ_h = ρ·6/(π²(h+1)²) (Σ_h ρ_h < ρ), σ_h = Δ/√(2ρ_h); any
      number of records (up to 2^62) costs at most ρ.

    Every σ carries the library's planning margin (× (1 + 10⁻⁹), :func:`~onpair.privacy.gaussian.
    sigmas_for_shares`), so the cost of the noise drawn is a hair below ρ.

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0.
    horizon : int or None, optional
        Known stream length T ≥ 1, or None (unbounded).
    estimate : {"honaker", "plain"}, optional
        Prefix estimate (stored as the attribute ``estimate_kind``: ``estimate()`` is the release).

    Examples
    --------
    >>> import numpy as np
    >>> tree = TreeAggregation(dim=2, sensitivity=1.0, rho=0.5, horizon=8)
    >>> est = tree.add_block(np.ones((5, 2)), np.random.default_rng(0), return_estimates=True)
    >>> est.shape, tree.n_seen, tree.describe()["levels"]
    ((5, 2), 5, 4)
    >>> round(tree.variance(), 3) <= tree.describe()["sigma"] ** 2 * 2   # 5 = 101₂: two nodes
    True
    """

    kind = "tree"
    _rows_per_record = 2

    def __init__(self, *, dim, sensitivity, rho, horizon=None, estimate="honaker"):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        if not isinstance(estimate, str):
            raise TypeError(f"estimate must be a str, one of {ESTIMATES}, got {estimate!r}")
        if estimate not in ESTIMATES:
            raise ValueError(f"estimate must be one of {ESTIMATES}, got {estimate!r}")
        self._estimate_kind = estimate
        if self.horizon is not None:
            self._levels = self.horizon.bit_length()
            shares = np.full(self._levels, self.rho / self._levels)
        else:
            self._levels = _UNBOUNDED_LEVELS
            h = np.arange(1, self._levels + 1, dtype=np.float64)
            shares = self.rho * 6.0 / (math.pi ** 2 * h * h)
        _check_state_size(2 * (self._levels + 1) * self.dim, f"dim={self.dim!r} and {self._levels} levels")
        sigmas = _noise_scales(np.full(self._levels, self.sensitivity), shares, self.sensitivity, self.rho)
        self._sigmas = sigmas
        self._scales = sigmas.copy()  # what the kernel adds (tests set it to 0)
        ls_var = np.empty(self._levels)
        ls_var[0] = sigmas[0] ** 2
        for lvl in range(1, self._levels):
            ls_var[lvl] = 1.0 / (1.0 / sigmas[lvl] ** 2 + 1.0 / (2.0 * ls_var[lvl - 1]))
        if estimate == "honaker":
            self._a = ls_var / sigmas ** 2
            self._a[0] = 1.0
            self._b = 1.0 - self._a
            self._level_var = ls_var
        else:
            self._a = np.ones(self._levels)
            self._b = np.zeros(self._levels)
            self._level_var = sigmas ** 2
        self._left_sums = np.zeros((self._levels, self.dim))
        self._left_est = np.zeros((self._levels, self.dim))
        self._work = np.zeros((2, self.dim))

    @property
    def levels(self) -> int:
        """int: tree levels held: ⌊log₂ horizon⌋ + 1, or 63 when unbounded."""
        return self._levels

    @property
    def estimate_kind(self) -> str:
        """str: the constructor's ``estimate`` ("honaker" or "plain")."""
        return self._estimate_kind

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho,
                "horizon": self.horizon, "estimate": self.estimate_kind}

    def _noise_rows(self, t0, m):
        t1 = t0 + m
        # Σ_{t=1}^{n} (trailing zeros of t) = n − popcount(n); one more node (level 0) per record
        return m + (t1 - _popcount(t1)) - (t0 - _popcount(t0))

    def _apply(self, V, Z, out=None, nodes=None):
        empty = np.empty((0, self.dim))
        _tree_add_block(V, Z, self._n_seen, self._scales, self._a, self._b, self._left_sums,
                        self._left_est, self._work, empty if out is None else out,
                        empty if nodes is None else nodes)
        self._n_seen += V.shape[0]

    def estimate(self):
        """The released prefix estimate at ``n_seen``: float64 (k,), zeros before the first record.

        Examples
        --------
        >>> import numpy as np
        >>> TreeAggregation(dim=3, sensitivity=1.0, rho=1.0).estimate().tolist()
        [0.0, 0.0, 0.0]
        """
        dest = np.empty(self.dim)
        _tree_prefix(self._left_est, self._n_seen, dest)
        return dest

    def _variance(self, t):
        return math.fsum(self._level_var[h] for h in range(t.bit_length()) if (t >> h) & 1)

    def level_variances(self) -> np.ndarray:
        """Per-coordinate variance of a complete subtree's estimate at each level (σ_h² when plain)."""
        return self._level_var.copy()

    def _level_rho(self) -> np.ndarray:
        return np.array([gaussian_rho(self.sensitivity, s) for s in self._sigmas])

    def _levels_in_use(self) -> int:
        """Levels shown in the privacy rows: all L with a horizon; those that released a node so far
        when unbounded (at least level 0)."""
        return self._levels if self.horizon is not None else max(1, self._n_seen.bit_length())

    def describe(self):
        """Public summary of the tree.

        Returns
        -------
        dict
            ``kind``, ``estimate``, ``dim``, ``sensitivity``, ``rho`` (the budget), ``rho_spent_bound``
            (Σ_h Δ²/(2σ_h²) over every level that can ever exist: the cost of the whole stream,
            ≤ ``rho``), ``horizon``, ``levels``, ``sigma`` (the common σ with a horizon, None when
            unbounded), ``sigmas`` (per level), ``kappa2`` (L with a horizon: a record is in one node
            per level; None when unbounded, where the levels have different σ_h), ``n_seen``.

        Examples
        --------
        >>> d = TreeAggregation(dim=1, sensitivity=1.0, rho=2.0, horizon=1000).describe()
        >>> d["levels"], d["kappa2"], round(d["sigma"], 6)
        (10, 10, 1.581139)
        """
        out = self._common_description()
        out.update(
            estimate=self.estimate_kind, levels=self._levels,
            sigma=float(self._sigmas[0]) if self.horizon is not None else None,
            sigmas=self._sigmas.tolist(),
            kappa2=self._levels if self.horizon is not None else None,
            rho_spent_bound=math.fsum(self._level_rho()),
        )
        return out

    def privacy_rows(self):
        """One row per tree level: ``what``, ``level``, ``nodes_released`` (so far), ``sigma`` and
        ``rho`` (Δ²/(2σ_h²): the level's share, paid once per record since a record is in one node
        of the level). With a horizon all L levels are listed; unbounded, the levels that have
        released a node so far (the later ones are paid for by the remaining share of ρ).

        Examples
        --------
        >>> rows = TreeAggregation(dim=1, sensitivity=1.0, rho=1.0, horizon=4).privacy_rows()
        >>> [(r["level"], r["nodes_released"]) for r in rows]
        [(0, 0), (1, 0), (2, 0)]
        """
        rho = self._level_rho()
        return [{"what": f"tree level {h}", "level": h, "nodes_released": self._n_seen >> h,
                 "sigma": float(self._sigmas[h]), "rho": float(rho[h])}
                for h in range(self._levels_in_use())]

    # -- state ---------------------------------------------------------------------------------------
    def _array_shapes(self):
        shape = (self._levels, self.dim)
        return {"left_sums": shape, "left_estimates": shape}

    def _live_mask(self, n):
        """Levels whose stored left node is still needed: the set bits of n."""
        return np.array([(n >> h) & 1 == 1 for h in range(self._levels)])

    def _export_arrays(self):
        live = self._live_mask(self._n_seen)[:, None]
        # rows of the cleared bits are stale (never read again): exported as zeros, so that a state
        # is a function of n_seen and the live nodes only, and can be checked against n_seen
        return {"left_sums": np.where(live, self._left_sums, 0.0),
                "left_estimates": np.where(live, self._left_est, 0.0)}

    def _import_arrays(self, n_seen, arrays):
        dead = ~self._live_mask(n_seen)
        for name, value in arrays.items():
            rows = np.flatnonzero(dead & np.any(value != 0.0, axis=1))
            if rows.size:
                raise ValueError(
                    f"arrays[{name!r}] row {int(rows[0])} is not zero, but n_seen={n_seen} has bit "
                    f"{int(rows[0])} clear: no node of that level is pending (inconsistent with n_seen)")
        self._left_sums = arrays["left_sums"]
        self._left_est = arrays["left_estimates"]


# ---------------------------------------------------------------------------------------------------
# banded square-root Toeplitz factorisation
# ---------------------------------------------------------------------------------------------------
class BandedToeplitz(PrefixSumMechanism):
    """The square-root factorisation of the prefix-sum matrix, banded (a Gaussian matrix mechanism).

    With A the lower-triangular matrix of ones, A = B·C where C is lower-triangular Toeplitz with the
    square-root coefficients c_j = C(2j, j)/4^j (:func:`sqrt_toeplitz_coefficients`) truncated to the
    band b, and B = A·C⁻¹. The mechanism releases B(CV + Z) = S + B·Z, Z ~ N(0, σ²I), computed
    online in O(b·k) memory: Y = C⁻¹Z by Y_t = (Z_t − Σ_{j=1}^{b−1} c_j Y_{t−j})/c_0, then
    (BZ)_t = Σ_{s≤t} Y_s. With b ≥ T it is the exact square-root factorisation (B = C).

    Budget. κ² = max column norm² of C = Σ_{j<b'} c_j² with b' = min(b, horizon) (b when
    unbounded), independent of the stream length; σ = Δ·κ/√(2ρ) (× (1 + 10⁻⁹)), so any number of
    records costs at most ρ. With a horizon, more records are refused as in
    :class:`TreeAggregation`.

    Error. The estimate at t is S_t plus noise of per-coordinate variance σ²‖B_{t,:}‖² =
    σ²·Σ_{n<t} β_n², β the prefix sums of γ, the coefficients of 1/C(x). For t ≤ b it grows like
    σ²·ln(t)/π; beyond the band, β tends to 1/Σ_{j<b} c_j ≈ √(π/(4b)) and the variance grows
    linearly in t: the band should be of the order of the horizon (see docs/continual_release.md).

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0.
    band : int, optional
        b ≥ 1 (b = 1 releases S_t + Σ_{s≤t} Z_s: input perturbation). Default :data:`DEFAULT_BAND`.
    horizon : int or None, optional
        Known stream length T; bands beyond T are cut to T (the same releases for less noise).

    Examples
    --------
    >>> import numpy as np
    >>> mech = BandedToeplitz(dim=2, sensitivity=1.0, rho=0.5, band=4)
    >>> mech.add_block(np.ones((3, 2)), np.random.default_rng(0)) is None
    True
    >>> mech.estimate().shape, mech.describe()["kappa2"]
    ((2,), 1.48828125)
    >>> round(mech.variance(1), 4)   # σ² = Δ²κ²/(2ρ) at t = 1 (B's first row is (1))
    1.4883
    """

    kind = "banded_toeplitz"

    def __init__(self, *, dim, sensitivity, rho, band=DEFAULT_BAND, horizon=None):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        self._band_given = _check_int(band, "band", maximum=2**31)
        self._band = self._band_given if self.horizon is None else min(self._band_given, self.horizon)
        # the coefficients, the noise rows and the variance series' ring, the two running sums
        _check_state_size(self._band * (self.dim + 2) + 2 * self.dim, f"dim={self.dim!r} and band={self._band!r}")
        self._c = sqrt_toeplitz_coefficients(self._band)
        self._kappa2 = math.fsum(self._c * self._c)
        self._sigma_nominal = float(_noise_scales(np.array([self.sensitivity * math.sqrt(self.kappa2)]),
                                                  np.array([self.rho]), self.sensitivity, self.rho)[0])
        self._sigma = self._sigma_nominal  # what the kernel adds (tests set it to 0)
        self._ring = np.zeros((self._band - 1, self.dim))
        self._prefix_sum = np.zeros(self.dim)
        self._noise_sum = np.zeros(self.dim)
        self._normals = np.empty(self.dim)  # scratch: one record's normals (add_one), not state
        self._reset_tracker()

    @property
    def band(self) -> int:
        """int: the band as given (``describe()['band_used']`` is min(band, horizon))."""
        return self._band_given

    @property
    def kappa2(self) -> float:
        """float: κ² = Σ_{j<band_used} c_j², the largest column norm² of C."""
        return self._kappa2

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "band": self.band,
                "horizon": self.horizon}

    def _noise_rows(self, t0, m):
        return m

    def _apply(self, V, Z, out=None, nodes=None):
        _toeplitz_add_block(V, Z, self._n_seen, self._c, self._sigma, self._ring, self._prefix_sum,
                            self._noise_sum, np.empty((0, self.dim)) if out is None else out)
        self._n_seen += V.shape[0]

    def _add_checked_one(self, v, rng) -> None:
        # One record's k normals, drawn from ``rng`` into a scratch row in the order add_block draws them,
        # and the block kernel's own per-record step: the same state, bit for bit, without a block of one.
        normals = self._normals
        rng.standard_normal(out=normals)
        _toeplitz_record(v, normals, self._n_seen + 1, self._c, self._ring, self._prefix_sum, self._noise_sum)
        self._n_seen += 1

    def estimate(self):
        """The released prefix estimate S_t + σ(BZ)_t at t = ``n_seen``: float64 (k,).

        Examples
        --------
        >>> BandedToeplitz(dim=2, sensitivity=1.0, rho=1.0).estimate().tolist()
        [0.0, 0.0]
        """
        dest = np.empty(self.dim)
        _toeplitz_release(self._prefix_sum, self._noise_sum, self._sigma, dest)
        return dest

    # -- variance: a public series, advanced lazily --------------------------------------------------
    def _reset_tracker(self):
        # n_done, γ ring, β_{n_done−1}, Σ_{n<n_done} β², converged (then β is final and n_done is where)
        self._tracker = (0, np.zeros(max(self._band - 1, 0)), 0.0, 0.0, False)

    def _series_sum(self, t):
        """Σ_{n<t} β_n², a function of t alone: the stored series is continued when t is ahead of it
        and recomputed from the start when t is behind it; past convergence it is closed-form."""
        n_done, ring, beta, sumsq, converged = self._tracker
        if t < n_done:
            ring = np.zeros_like(ring)
            beta, sumsq, n_stop, converged = _toeplitz_variance_advance(self._c, ring, 0, t, 0.0, 0.0)
            return sumsq + (t - n_stop) * beta * beta if converged else sumsq
        if not converged:
            beta, sumsq, n_stop, converged = _toeplitz_variance_advance(self._c, ring, n_done, t, beta, sumsq)
            self._tracker = (n_stop, ring, beta, sumsq, converged)
            n_done = n_stop
        return sumsq + (t - n_done) * beta * beta if converged else sumsq

    def _variance(self, t):
        return self._sigma_nominal ** 2 * self._series_sum(t)

    def describe(self):
        """Public summary of the factorisation.

        Returns
        -------
        dict
            ``kind``, ``dim``, ``sensitivity``, ``rho`` (budget), ``rho_spent_bound`` (Δ²κ²/(2σ²) ≤ ρ,
            for any number of records), ``horizon``, ``band`` (as given), ``band_used``
            (min(band, horizon)), ``kappa2`` (Σ_{j<band_used} c_j²), ``sigma``, ``n_seen``.

        Examples
        --------
        >>> d = BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0, band=2).describe()
        >>> d["band_used"], d["kappa2"]
        (2, 1.25)
        """
        out = self._common_description()
        out.update(band=self.band, band_used=self._band, kappa2=self.kappa2, sigma=self._sigma_nominal,
                   rho_spent_bound=self._rho_spent())
        return out

    def _rho_spent(self):
        return gaussian_rho(self.sensitivity * math.sqrt(self.kappa2), self._sigma_nominal)

    def privacy_rows(self):
        """One row for the factorisation: ``what``, ``level`` (None), ``nodes_released`` (noisy
        outputs so far, one per record), ``sigma``, ``kappa2`` and ``rho`` (Δ²κ²/(2σ²), the whole
        stream's cost).

        Examples
        --------
        >>> [r["nodes_released"] for r in BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0).privacy_rows()]
        [0]
        """
        return [{"what": f"banded square-root Toeplitz factorisation (band {self._band})", "level": None,
                 "nodes_released": self._n_seen, "sigma": self._sigma_nominal, "kappa2": self.kappa2,
                 "rho": self._rho_spent()}]

    # -- state ---------------------------------------------------------------------------------------
    def _array_shapes(self):
        return {"prefix_sum": (self.dim,), "noise_sum": (self.dim,), "noise_history": (self._band - 1, self.dim)}

    def _export_arrays(self):
        R = self._band - 1
        history = np.zeros((R, self.dim))
        # history[j−1] = Y_{n+1−j} for j = 1 … R, newest first (zero where n + 1 − j < 1): the rows
        # record n + 1 needs, in a canonical order that does not depend on the ring's position
        for j in range(1, min(R, self._n_seen) + 1):
            history[j - 1] = self._ring[(self._n_seen - j) % R]
        return {"prefix_sum": self._prefix_sum.copy(), "noise_sum": self._noise_sum.copy(),
                "noise_history": history}

    def _import_arrays(self, n_seen, arrays):
        R = self._band - 1
        history = arrays["noise_history"]
        filled = min(R, n_seen)
        rows = np.flatnonzero(np.any(history[filled:] != 0.0, axis=1))
        if rows.size:
            raise ValueError(f"arrays['noise_history'] row {filled + int(rows[0])} is not zero, but only "
                             f"{n_seen} records were seen (inconsistent with n_seen)")
        if n_seen == 0:
            for name in ("prefix_sum", "noise_sum"):
                if np.any(arrays[name] != 0.0):
                    raise ValueError(f"arrays[{name!r}] is not zero, but n_seen=0 (inconsistent with n_seen)")
        ring = np.zeros((R, self.dim))
        for j in range(1, filled + 1):
            ring[(n_seen - j) % R] = history[j - 1]
        self._ring = ring
        self._prefix_sum = arrays["prefix_sum"]
        self._noise_sum = arrays["noise_sum"]


# ---------------------------------------------------------------------------------------------------
# doubling epochs of horizon trees (unbounded streams)
# ---------------------------------------------------------------------------------------------------
class EpochTrees(PrefixSumMechanism):
    """Unbounded continual release by doubling epochs, each a least-squares tree with a known horizon.

    Epoch e covers records s_e + 1 … s_e + L_e with L_e = T₀·2^e and s_e = T₀(2^e − 1); it runs a
    :class:`TreeAggregation` with ``horizon=L_e`` and the **whole** budget ρ. The prefix estimate at t
    is the sum of the completed epochs' final estimates (each the least-squares estimate of its root,
    released when the epoch ends) plus the current epoch's prefix estimate.

    Cost. Neighbouring streams differ in one record, which lies in exactly one epoch: only that epoch's
    tree sees a different input, and the trees draw independent noise, so the joint release is as
    private as that one tree, ρ-zCDP (parallel composition over disjoint parts of the stream). It holds
    for adaptive inputs too (later records chosen after seeing earlier releases): given the releases so
    far, every later epoch's tree is the same mechanism on the same inputs under both streams, so by
    adaptive composition it adds nothing. So any number of records costs ρ, and the error of a prefix is
    that of a tree whose horizon is known: variance O(log² t), against O(t/b) for a band b and a
    larger constant for the unbounded tree with level shares ρ_h ∝ 1/h² (docs/continual_release.md).

    Memory: the current tree's two (levels, k) arrays and one k-vector of completed totals.

    Parameters
    ----------
    dim, sensitivity, rho : as :class:`TreeAggregation`.
    first_epoch : int, default 64
        T₀, the length of the first epoch (a power of two, so that every epoch's root node exists).
    horizon : int or None
        Optional total length (records beyond it are refused).

    Examples
    --------
    >>> import numpy as np
    >>> mech = EpochTrees(dim=2, sensitivity=1.0, rho=0.5, first_epoch=4)
    >>> est = mech.add_block(np.ones((13, 2)), np.random.default_rng(0), return_estimates=True)
    >>> mech.describe()["epoch"], mech.describe()["epoch_start"]   # epochs of 4, 8, 16 records
    (2, 12)
    >>> bool(mech.variance(13) > mech.variance(12) - 1e-12)
    True
    """

    kind = "epochs"
    _rows_per_record = 2

    def __init__(self, *, dim, sensitivity, rho, first_epoch=64, horizon=None):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        first_epoch = _check_int(first_epoch, "first_epoch", maximum=2**40)
        if first_epoch & (first_epoch - 1):
            raise ValueError(f"first_epoch must be a power of two, got {first_epoch!r}")
        self._first = first_epoch
        # The trees of later epochs have more levels (a larger σ and state, up to 63 levels): check the
        # largest one now, so that no epoch can fail to start in the middle of a block.
        # (an epoch is at most twice as long as the records before its end: up to 2·max(horizon, T₀))
        last = self.capacity if self.horizon is None else min(MAX_RECORDS, 2 * max(self.horizon, first_epoch))
        _check_state_size(2 * (last.bit_length() + 1) * self.dim + self.dim,
                          f"dim={self.dim!r} and trees of up to {last.bit_length()} levels")
        TreeAggregation(dim=1, sensitivity=self.sensitivity, rho=self.rho, horizon=last)
        self._completed = np.zeros(self.dim)
        self._start_epoch(0)

    @property
    def first_epoch(self) -> int:
        """int: T₀, the first epoch's length."""
        return self._first

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "first_epoch": self.first_epoch,
                "horizon": self.horizon}

    # -- epochs ------------------------------------------------------------------------------------
    def _epoch_of(self, t: int):
        """(epoch index, its start s_e, its length L_e) of the epoch that record t + 1 falls in."""
        e = (t // self._first + 1).bit_length() - 1
        start = self._first * ((1 << e) - 1)
        return e, start, self._length(e, start)

    def _length(self, e: int, start: int) -> int:
        """L_e = T₀·2^e, cut to the records the horizon leaves (its tree then has fewer levels and less
        noise); at least 1, for the never-fed epoch after a horizon that is reached."""
        length = self._first << e
        if self.horizon is not None:
            length = max(1, min(length, self.horizon - start))
        return length

    def _tree(self, length: int) -> TreeAggregation:
        return TreeAggregation(dim=self.dim, sensitivity=self.sensitivity, rho=self.rho, horizon=length)

    def _start_epoch(self, e: int) -> None:
        self._epoch = e
        self._epoch_start = self._first * ((1 << e) - 1)
        self._current = self._tree(self._length(e, self._epoch_start))

    def _feed(self, V, rng, out) -> None:
        lo = 0
        m = V.shape[0]
        while lo < m:
            room = self._current.horizon - self._current.n_seen
            hi = min(m, lo + room)  # room ≥ 1: the capacity check refused records past the horizon
            part = self._current.add_block(V[lo:hi], rng, return_estimates=out is not None)
            if out is not None:
                out[lo:hi] = part + self._completed
            self._n_seen += hi - lo
            if self._current.n_seen == self._current.horizon:
                self._completed = self._completed + self._current.estimate()  # the epoch's released total
                self._start_epoch(self._epoch + 1)
            lo = hi

    def add_one(self, v, rng) -> None:
        V = self._check_block(v, name="v")
        _check_rng(rng)
        self._feed(np.ascontiguousarray(V), rng, None)

    def _noise_rows(self, t0, m):  # not used: _feed delegates to the epoch trees
        raise NotImplementedError

    def _apply(self, V, Z, out=None, nodes=None):  # not used: _feed delegates to the epoch trees
        raise NotImplementedError

    # -- releases ----------------------------------------------------------------------------------
    def estimate(self):
        """The released prefix estimate at ``n_seen``: completed epochs' totals plus the current epoch's."""
        return self._completed + self._current.estimate()

    def _variance(self, t):
        e, start, length = self._epoch_of(t)
        if t == start and e > 0:  # t ends epoch e − 1 exactly
            e -= 1
            start -= self._first << e
            length = self._length(e, start)
        total = math.fsum(self._tree(L).variance(L) for L in
                          (self._length(j, self._first * ((1 << j) - 1)) for j in range(e)))
        return total + self._tree(length).variance(t - start)

    def describe(self):
        """Public summary: ``kind``, ``first_epoch``, ``epoch`` (current index), ``epoch_start``,
        ``epoch_length``, ``sigma`` (of the current epoch's tree), ``rho_spent_bound`` (ρ: every epoch's tree
        costs at most ρ, and epochs hold disjoint records), ``n_seen``."""
        out = self._common_description()
        tree = self._current.describe()
        # Every epoch's tree costs Δ²L/(2σ²) ≤ ρ (its σ carries the planning margin), and an unbounded
        # stream has epochs of every length: the bound for the whole stream is ρ itself.
        out.update(first_epoch=self._first, epoch=self._epoch, epoch_start=self._epoch_start,
                   epoch_length=self._current.horizon, sigma=tree["sigma"], levels=tree["levels"],
                   rho_spent_bound=self.rho, composition="parallel over epochs")
        return out

    def privacy_rows(self):
        """One row per epoch so far (``what``, ``level`` None, ``nodes_released``, ``sigma``, ``rho``).
        Each epoch's ``rho`` is what a record of that epoch pays; epochs hold disjoint records, so the
        rows do **not** add up: the stream costs the largest of them (parallel composition)."""
        rows = []
        for e in range(self._epoch + 1):
            start = self._first * ((1 << e) - 1)
            length = self._length(e, start)
            seen = min(length, self._n_seen - start)
            if seen <= 0 and e > 0:
                break
            tree = self._tree(length).describe()
            nodes = sum(seen >> h for h in range(tree["levels"]))
            rows.append({"what": f"epoch {e}: tree over records {start + 1}…{start + length}", "level": None,
                         "nodes_released": nodes, "sigma": tree["sigma"], "rho": tree["rho_spent_bound"]})
        return rows

    # -- persistence -------------------------------------------------------------------------------
    def _array_shapes(self):
        return self._array_shapes_at(self._n_seen)

    def _array_shapes_at(self, n_seen):
        _, _, length = self._epoch_of(n_seen)
        shapes = {"completed": (self.dim,)}
        shapes.update({f"tree.{k}": v for k, v in self._tree(length)._array_shapes().items()})
        return shapes

    def _export_arrays(self):
        arrays = {"completed": self._completed.copy()}
        arrays.update({f"tree.{k}": v for k, v in self._current._export_arrays().items()})
        return arrays

    def _import_arrays(self, n_seen, arrays):
        e, start, _ = self._epoch_of(n_seen)
        if e == 0 and np.any(arrays["completed"] != 0.0):
            raise ValueError(f"arrays['completed'] is not zero, but n_seen={n_seen} lies in the first epoch: no "
                             "epoch has completed (inconsistent with n_seen)")
        self._start_epoch(e)
        tree_arrays = {k[len("tree."):]: v for k, v in arrays.items() if k.startswith("tree.")}
        self._current._import_arrays(n_seen - start, tree_arrays)
        self._current._n_seen = n_seen - start
        self._completed = arrays["completed"]

