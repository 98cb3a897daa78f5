"""The base class of the continual-release mechanisms: checks, the chunked noise pipeline, releases,
persistence (``to_state``/``from_state``, every stored array checked) and the refusal to be copied.

Each mechanism is one module beside this one (:mod:`~onpair.privacy.continual.tree`,
:mod:`~onpair.privacy.continual.toeplitz`, :mod:`~onpair.privacy.continual.epochs`) and registers itself
by its ``kind`` (the tag of its saved state) and its ``option`` (the name users choose it by).
"""

from __future__ import annotations

import abc
import inspect

import numpy as np

from ..checks import check_positive, check_rho
from ..exceptions import PrivacyBudgetExceeded
from ._kernels import _first_row_beyond
from ._noise import CHUNK_VALUES, draw_normals, noise_executor
from .limits import MAX_ENTRY, MAX_RECORDS, check_int, check_real, check_rng, is_int


class PrefixSumMechanism(abc.ABC):
    """A continual-release mechanism for prefix sums of a stream of vectors (abstract base).

    Subclasses: :class:`BufferedToeplitz`, :class:`TreeAggregation`, :class:`BandedToeplitz`,
    :class:`EpochTrees`. Construct them with keyword arguments only (a swapped ``sensitivity`` and ``rho``
    would silently change the noise).

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
    #: The name users choose the mechanism by (``OnPairStats(mechanism=...)``; :meth:`for_option`).
    option = ""
    _registry: dict = {}
    _options: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):  # a subclass that does not name its own kind registers nothing
            PrefixSumMechanism._registry[cls.kind] = cls
        if cls.__dict__.get("option"):
            PrefixSumMechanism._options[cls.option] = cls

    @staticmethod
    def options() -> tuple:
        """The names users may choose a mechanism by, in the order the mechanisms registered."""
        return tuple(PrefixSumMechanism._options)

    @staticmethod
    def for_option(name: str) -> type:
        """The mechanism class users choose by ``name`` (:attr:`option`); a ValueError names the choices.

        Examples
        --------
        >>> PrefixSumMechanism.for_option("toeplitz").__name__
        'BandedToeplitz'
        """
        cls = PrefixSumMechanism._options.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"mechanism must be one of {PrefixSumMechanism.options()}, got {name!r}")
        return cls

    def __init__(self, *, dim, sensitivity, rho, horizon=None):
        self._dim = check_int(dim, "dim", maximum=2**31)
        check_real(sensitivity, "sensitivity")
        self._sensitivity = check_positive(sensitivity, "sensitivity")
        check_real(rho, "rho")
        self._rho = check_rho(rho, "rho", allow_zero=False)
        self._horizon = None if horizon is None else check_int(horizon, "horizon")
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
        rng : numpy.random.Generator or NormalBlock
            The caller's generator (or a learner's block of normals drawn ahead from it); the only source of
            noise (never NumPy's global state). Normals are drawn in a fixed per-record order, so ``add_block(V)`` equals ``add_block(V[:i])``
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
        check_rng(rng)
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
        self._check_capacity(V.shape[0])
        return V

    def _check_capacity(self, m: int) -> None:
        """PrivacyBudgetExceeded (nothing added) when m more records would pass the capacity."""
        if self._n_seen + m > self.capacity:
            what = f"horizon={self.horizon}" if self.horizon is not None else f"the limit of {MAX_RECORDS} records"
            raise PrivacyBudgetExceeded(
                f"adding {m} records to the {self._n_seen} already seen would exceed {what}; the budget "
                f"rho={self.rho!r} covers no more. Nothing was added (the released estimates stay frozen)."
            )

    def add_one(self, v, rng) -> None:
        """Add one record: :meth:`add_block` of a block of one (the same checks, naming ``v``, the same
        normals, the same state), for callers that hold one vector.

        Parameters
        ----------
        v : array_like of real numbers, shape (k,)
            The record. Another shape is a ValueError, a block of records included: that is :meth:`add_block`.
        rng : numpy.random.Generator or NormalBlock
            The caller's generator (or a learner's block of normals drawn ahead from it).

        Raises
        ------
        TypeError, ValueError
            As :meth:`add_block` (naming ``v``), before any state changes or noise is drawn.
        """
        V = self._check_block(v, name="v")
        check_rng(rng)
        self._feed(V, rng, None)

    def _feed(self, V, rng, out) -> None:
        def apply(lo, hi, Z):
            self._apply(np.ascontiguousarray(V[lo:hi]), Z, None if out is None else out[lo:hi])

        self._pipeline(V.shape[0], rng, apply)

    def _pipeline(self, m, rng, apply) -> None:
        """Feed m records in chunks: ``apply(lo, hi, Z)`` feeds records lo … hi − 1 with their standard normals
        Z, drawn from ``rng`` in order (the one noise pipeline of :meth:`add_block` and of compiled callers)."""
        k = self._dim
        step = max(1, CHUNK_VALUES // (k * self._rows_per_record))
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
            draw_normals(rng, buffers[0][:rows[0]])
            apply(0, m, buffers[0][:rows[0]])
            return
        executor = noise_executor()
        pending = executor.submit(draw_normals, rng, buffers[0][:rows[0]])
        try:
            for i, (lo, hi) in enumerate(chunks):
                pending.result()
                Z = buffers[i % 2][:rows[i]]
                pending = (executor.submit(draw_normals, rng, buffers[(i + 1) % 2][:rows[i + 1]])
                           if i + 1 < len(chunks) else None)
                apply(lo, hi, Z)
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
        t = self._n_seen if t is None else check_int(t, "t", minimum=0, maximum=self.capacity)
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
        if not is_int(n_seen) or not 0 <= n_seen <= mech.capacity:
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
