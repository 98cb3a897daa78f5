"""What every online learner shares: public bounds, the dimension, the random streams, the counters,
validation of a block, snapshots, scoring.

:class:`StreamLearner` is the root of the online learners. Pairwise GIGA and its private variants
(:mod:`onpair.giga.online`) and the learners on released statistics
(:mod:`onpair.statistics.online`) add their own state objects and learning path; the root gives them:

* the public bounds map and the number of features (fixed by ``n_features``, array bounds, or the
  first record);
* three independent random streams from one ``SeedSequence`` (a start point, the release noise, a
  reservoir's slots);
* ``learn_many`` (validated as a whole before anything changes), the clipping warning, and the
  ``n_seen``/``n_clipped`` counters;
* the snapshot protocol that :mod:`onpair.core.persistence` drives: the constructor's parameters, the
  settings they resolve to, and the state (common part here, the learner's own objects through
  hooks), each part checked when it is read back;
* ``model``-based scoring: ``decision_function`` (AUC task) and ``transform`` (metric task).
"""

from __future__ import annotations

import copy
import inspect
import math
import warnings

import numpy as np

from ._validation import SeedNameHint, as_feature_block, root_sequence
from .bounds import BOUNDS_ADVICE, FeatureBounds, make_bounds
from .matrix_geometry import metric_factor
from .persistence import save_learner
from .predictor import DirectionModel, Refresh, release_window
from .registry import register_algorithm
from .snapshot import register_learner
from ..privacy.events import NonPrivate
from ..privacy.reports import build_report

#: The random streams of a learner, in the order they are spawned from its SeedSequence.
RNG_NAMES = ("init", "noise", "buffer")


class StreamLearner(SeedNameHint):
    """The root of the online learners (parameters are documented on the public classes)."""

    #: Whether the learner adds noise (private learners) or exposes what it learned.
    private = False
    #: Snapshot key naming the kind of the learner's own state.
    _STATE_KIND_KEY = "history"

    def __init_subclass__(cls, *, saved=False, algorithm=None, **kwargs):
        """A public learner registers itself with ``class X(..., saved=True)``: snapshots may then name it
        (:func:`onpair.core.snapshot.register_learner`; exact classes only, not their subclasses); and with
        ``algorithm="name"`` under the name users choose it by (:mod:`onpair.core.registry`)."""
        super().__init_subclass__(**kwargs)
        if saved:
            register_learner(cls)
        if algorithm is not None:
            register_algorithm(algorithm, cls)

    def _setup_stream(self, bounds, norm_bound, n_features, seed, extra_dimension=None) -> None:
        """Bounds, dimension, random streams and counters (called by every constructor)."""
        root = root_sequence(seed)
        shared = getattr(self, "_shared", None)  # a private learner's accountant=, set before this call
        if shared is not None:  # no two learners charging one accountant draw the same noise
            root = shared.noise_seed(root)
        self._bounds = make_bounds(bounds, norm_bound, type(self).__name__)
        self._dim = self._initial_dimension(n_features, extra_dimension)
        # Independent random streams from one SeedSequence: the start/centre point, the release noise and
        # the reservoir's slots (public). Without a seed, SeedSequence() draws fresh OS entropy (a seed is
        # for reproducible experiments only); with a shared accountant, the root is keyed by it.
        self._seed_sequence = root
        init_seq, noise_seq, buffer_seq = self._seed_sequence.spawn(3)
        self._init_rng = np.random.Generator(np.random.PCG64(init_seq))
        self._noise_rng = np.random.Generator(np.random.PCG64(noise_seq))
        self._buffer_rng = np.random.Generator(np.random.PCG64(buffer_seq))
        self._t = 0
        self._n_clipped = 0
        self._warned_clipping = False
        self._read_only = None  # why the learner refuses to learn and be saved (a consume=False view)
        self._refresh = None  # the view predictions read on the public refresh rule (predictor())

    def _initial_dimension(self, n_features, extra=None):
        """d from ``n_features``, array bounds and ``extra`` = (d, message if it disagrees), or None."""
        dims = []
        if n_features is not None:
            if isinstance(n_features, (bool, np.bool_)) or not isinstance(n_features, (int, np.integer)) \
                    or n_features < 1:
                raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
            dims.append(int(n_features))
        if self._bounds.n_features is not None:
            dims.append(self._bounds.n_features)
        if extra is not None:
            dims.append(extra[0])
            if len(set(dims)) > 1:
                raise ValueError(extra[1].format(records=dims[0]))
        if len(set(dims)) > 1:
            raise ValueError(f"n_features={n_features} disagrees with the bounds' {self._bounds.n_features} features")
        return dims[0] if dims else None

    # -- learning ----------------------------------------------------------------------------------
    def learn_many(self, X, y):
        """Learn from a block of records, exactly as repeated ``learn_one`` would.

        A block of 0 records (shape ``(0, d)``, with 0 labels) is a no-op: nothing is learned, spent or
        released, and a fresh learner does not fix its number of features from it. It is still
        validated: a block that is not 2-D, or whose ``d`` differs from the learner's, is an error.
        (The offline estimators' ``fit`` refuses 0 records instead: it has one release to make.)

        Returns
        -------
        self
        """
        X = as_feature_block(X, self._dim, self._t, name="X")
        return self._learn_block(X, self._task.label_block(y, X.shape[0], self._t))

    def _learn_block(self, X: np.ndarray, labels):
        if self._read_only:
            raise RuntimeError(self._read_only)
        if X.shape[0] == 0:
            return self
        Z, clipped = self._bounds.transform(X)
        return self._learn_mapped(Z, labels, int(np.count_nonzero(clipped)))

    def _learn_mapped(self, Z: np.ndarray, labels, n_clipped: int):
        raise NotImplementedError

    def _pending_warnings(self, n_clipped: int, m: int) -> list:
        """Warnings about the coming block as (message, category, mark it issued)."""
        if n_clipped and not self._warned_clipping:
            # No count in the message: warnings end up in logs, and the count is not private.
            return [(
                f"records lay outside the declared feature bounds ({self._bounds!r}) and were clipped to "
                f"them. {BOUNDS_ADVICE} privacy_report()['n_clipped'] has the (curator-only) count.",
                UserWarning, self._mark_clipping_warned,
            )]
        return []

    def _mark_clipping_warned(self) -> None:
        self._warned_clipping = True

    def _issue(self, pending) -> None:
        """Issue the pending warnings, then mark them issued: all or none (under warnings as errors a
        warning raises, and then no mark is set and nothing else has changed)."""
        for message, category, _ in pending:
            warnings.warn(message, category, stacklevel=5)  # attributed to the caller of learn_*
        for _, _, mark in pending:
            mark()

    # -- snapshots (driven by onpair.core.persistence) ---------------------------------------------
    def save(self, path) -> None:
        """Write the whole learner to ``path`` atomically; :func:`onpair.load` resumes it exactly.

        The file holds the internal state, the stored past, the random generators, the releases and
        the accountant's ledger, behind a format version and a SHA-256 digest
        (:mod:`onpair.core.persistence`). ``onpair.load(path)`` consumes the file: a snapshot resumes
        once, because two learners resumed from it would reuse the same noise and budget.

        Parameters
        ----------
        path : str or os.PathLike
            Destination; an existing file is replaced atomically.

        Examples
        --------
        >>> import os, tempfile
        >>> import onpair
        >>> path = os.path.join(tempfile.mkdtemp(), "learner.onpair")
        >>> onpair.OnPairStrC(bounds=(0, 1), n_features=2, n=100, seed=0).learn_one([0.5, 0.1], 1).save(path)
        >>> onpair.load(path).n_seen
        1
        """
        save_learner(self, path)

    @classmethod
    def _param_names(cls) -> tuple:
        """The constructor's (keyword-only) parameters, which a snapshot stores verbatim: all but
        ``accountant`` (a budget shared with other models is not the learner's to save)."""
        return tuple(name for name, p in inspect.signature(cls.__init__).parameters.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "accountant")

    def clone(self):
        """A new, unfitted learner with the same parameters (copies of them): nothing learned is copied.

        For a private learner that is a new mechanism with **its own budget**: a learner and its clone
        fed the same records spend ρ₁ + ρ₂ on them. With a ``seed`` the clone repeats the original's
        noise (seeds are for experiments only), unless it charges a shared ``accountant=``: that one is
        shared by the clone too (not copied), both charge the one budget, and so the clone draws noise of its
        own (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

        Examples
        --------
        >>> import onpair
        >>> learner = onpair.OnPairStrC(bounds=(0, 1), n_features=2, n=100, seed=0).learn_one([0.5, 0.1], 1)
        >>> learner.clone().n_seen, learner.clone().epsilon
        (0, 1.0)
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the parameters' warnings were issued for the original
            params = {name: copy.deepcopy(getattr(self, name)) for name in self._param_names()}
            if "accountant" in inspect.signature(type(self).__init__).parameters:
                params["accountant"] = getattr(self, "_shared", None)  # shared, not copied: one budget
            return type(self)(**params)

    def _settings(self) -> dict:
        """The settings the parameters resolve to (rebuilt and compared when a snapshot is written and read)."""
        raise NotImplementedError

    def _state_kind(self) -> str:
        """The tag of the learner's own state in a snapshot."""
        raise NotImplementedError

    def _export_state(self, arrays: dict) -> dict:
        """The learner's state for a snapshot: scalars returned, arrays written into ``arrays``."""
        seq = self._seed_sequence
        state = {
            "t": self._t,
            "dim": self._dim,
            "n_clipped": self._n_clipped,
            "warned_clipping": self._warned_clipping,
            self._STATE_KIND_KEY: self._state_kind(),
            "rng": {name: getattr(self, f"_{name}_rng").bit_generator.state for name in RNG_NAMES},
            "seed_sequence": {"entropy": _plain_ints(seq.entropy), "spawn_key": _plain_ints(seq.spawn_key),
                              "pool_size": int(seq.pool_size), "n_children_spawned": int(seq.n_children_spawned)},
        }
        self._export_own(state, arrays)
        if self._refresh is not None:  # the model predictions read (public): a restored learner predicts with it
            scalars, views = self._refresh.view.to_state()
            refresh = self._refresh
            state["predictor"] = {"start": refresh.start, "stop": refresh.stop, "read": refresh.read,
                                  "shift": refresh.shift, "cap": refresh.cap, **scalars}
            arrays.update({f"predictor.{name}": value for name, value in views.items()})
        return state

    def _export_own(self, state: dict, arrays: dict) -> None:
        raise NotImplementedError

    def _own_state_keys(self, dim) -> list:
        """Scalar keys of the learner's own state that a snapshot with this ``dim`` holds."""
        raise NotImplementedError

    def _restore_own(self, state: dict, reader, t: int, dim) -> None:
        raise NotImplementedError

    def _restore_state(self, state: dict, reader) -> None:
        """Overwrite this freshly built learner's state with a snapshot's, checking every value."""
        keys = ["t", "dim", "n_clipped", "warned_clipping", self._STATE_KIND_KEY, "rng", "seed_sequence"]
        reader.mapping(state, "state", None, required=keys)
        kind = state[self._STATE_KIND_KEY]
        if kind != self._state_kind():
            raise reader.error(f"{self._STATE_KIND_KEY} kind {kind!r}, but the parameters give {self._state_kind()!r}")
        t = reader.integer(state["t"], "t", low=0)
        dim = state["dim"]
        if dim is None:
            if t > 0:
                raise reader.error(f"dim is null after {t} records")
        else:
            dim = reader.integer(dim, "dim", low=1)
        if self._dim is not None and dim != self._dim:
            raise reader.error(f"dim = {dim!r}, but the parameters fix {self._dim} features")
        own = self._own_state_keys(dim)
        reader.mapping(state, "state", keys + own + ["predictor"], required=keys + own)
        n_clipped = reader.integer(state["n_clipped"], "n_clipped", low=0, high=t)
        warned = reader.boolean(state["warned_clipping"], "warned_clipping")
        reader.mapping(state["rng"], "rng", RNG_NAMES)
        self._restore_own(state, reader, t, dim)
        seq = state["seed_sequence"]
        reader.mapping(seq, "seed_sequence", ("entropy", "spawn_key", "pool_size", "n_children_spawned"))
        try:
            self._seed_sequence = np.random.SeedSequence(
                seq["entropy"], spawn_key=tuple(seq["spawn_key"]), pool_size=seq["pool_size"],
                n_children_spawned=seq["n_children_spawned"])
            for name in RNG_NAMES:
                generator = np.random.Generator(np.random.PCG64())
                generator.bit_generator.state = state["rng"][name]
                setattr(self, f"_{name}_rng", generator)
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            raise reader.error(f"unusable random generator state ({type(exc).__name__}: {exc})") from None
        self._t = t
        self._dim = dim
        self._n_clipped = n_clipped
        self._warned_clipping = warned
        self._refresh = None if "predictor" not in state else self._restore_predictor(state["predictor"], reader)

    def _restore_predictor(self, scalars, reader):
        """The refresh state of a snapshot, checked: exact keys; a window that :func:`release_window` derives from
        the count it was read at, its shift and cap; a view that is the release (or released model) of that count
        (:meth:`_view_from_state`). A window the learner's count has left since is dropped (the next prediction
        reads the current release, as the saved learner's would have)."""
        if self._dim is None:
            raise reader.error("predictor in the snapshot of a learner without features")
        reader.mapping(scalars, "predictor", ("start", "stop", "read", "shift", "cap") + self._VIEW_KEYS)
        start = reader.integer(scalars["start"], "predictor.start", low=0)
        stop = reader.integer(scalars["stop"], "predictor.stop", low=start + 1)
        read = reader.integer(scalars["read"], "predictor.read", low=start, high=stop - 1)
        shift = reader.integer(scalars["shift"], "predictor.shift", low=0, high=62)
        cap = None if scalars["cap"] is None else reader.integer(scalars["cap"], "predictor.cap", low=1)
        if release_window(read, self.private, shift, cap) != (start, stop):
            raise reader.error(f"predictor: the window [{start}, {stop}) is not the refresh rule's at count {read}")
        count = self.refresh_count
        if read > count:
            raise reader.error(f"predictor: read at count {read}, after the learner's count {count}")
        view = self._view_from_state(scalars, reader, read)
        if not start <= count < stop:
            return None  # the saved learner would read the current release at its next prediction
        return Refresh(start, stop, view, read, shift, cap)

    def _snapshot_written(self) -> None:
        """Called once a snapshot of this learner is on disk: a private learner without a seed detaches
        its noise generator, so that it and a learner resumed from the snapshot never add the same noise
        (which would cancel in their difference)."""
        if self.private and self.seed is None:
            self._noise_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence()))

    def _make_read_only(self, reason: str) -> None:
        """Refuse to learn and to be saved from now on (a view of someone else's snapshot)."""
        if self.private:
            self._read_only = reason

    # -- scoring -----------------------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """A copy of the model a user may see (subclasses decide which one)."""
        raise NotImplementedError

    @property
    def threshold_(self) -> float:
        """The metric's threshold b: the visible model's when b is learned, else the fixed one (metric
        task only; docs/algorithms.md#metric-threshold)."""
        if self._task.name != "metric":
            raise AttributeError("threshold_ is for task='metric'")
        self._require_dim()
        return self._task.threshold(self._model_flat(), self._dim)

    def _model_flat(self) -> np.ndarray:
        """The visible parameter, flat (subclasses that keep one)."""
        raise NotImplementedError

    def _as_visible(self, flat: np.ndarray) -> np.ndarray:
        """A parameter as users see it: the vector (AUC) or the d×d matrix (metric task)."""
        return self._task.visible(flat, self._dim)

    def transform(self, X) -> np.ndarray:
        """Records mapped so that Euclidean distances are the visible metric's (metric task).

        ``x ↦ L φ(x)`` with φ the public bounds map and ``LᵀL = W₊``, the positive semi-definite part of
        :attr:`model`: ``‖L φ(x) − L φ(x')‖² = (φ(x) − φ(x'))ᵀ W₊ (φ(x) − φ(x'))``. Any Euclidean
        nearest-neighbour method on the output uses the learned (released) metric.
        """
        if self._task.name != "metric":
            raise ValueError("transform is for task='metric'; use decision_function for the AUC task")
        factor = metric_factor(self.model)
        X = as_feature_block(X, self._dim, 0, name="X")
        Z, _ = self._bounds.transform(X)
        return Z @ factor.T

    def decision_function(self, X) -> np.ndarray:
        """Scores ``wᵀ φ(x)`` of records under the visible :attr:`model` (φ: the public bounds map).

        Higher scores rank a record as more likely positive; AUC depends only on this order.
        """
        if self._task.name == "metric":
            raise ValueError("decision_function scores records for the AUC task; with task='metric' use "
                             "transform(X) (records in the learned metric's space) or model (W)")
        model = self.model
        X = as_feature_block(X, model.shape[0], 0, name="X")
        Z, _ = self._bounds.transform(X)
        return Z @ model

    @property
    def n_seen(self) -> int:
        """Number of records learned so far."""
        return self._t

    @property
    def dimension(self):
        """Number of features d, or None until the parameters or the first record fix it."""
        return self._dim

    @property
    def feature_bounds(self) -> FeatureBounds:
        """The public bounds that map records onto the diameter-2 domain."""
        return self._bounds

    @property
    def n_releases(self) -> int:
        """Models released so far (0 for a non-private learner, which releases nothing)."""
        return 0

    @property
    def refresh_count(self) -> int:
        """The count the refresh rule of :meth:`predictor` reads: the releases (a private learner's: here one per
        record or per public schedule step, :attr:`n_releases`) or the records learned (the non-private twin).
        A learner whose release changes less often than it is counted says so by overriding it. Public."""
        return self.n_releases if self.private else self._t

    # -- the model predictions read ----------------------------------------------------------------
    def predictor(self, shift: int = 6, cap=None):
        """The view of a released model that predictions read now, on the public refresh rule
        (:func:`onpair.core.predictor.release_window` of :attr:`refresh_count`, with refresh shift ``shift`` and step cap ``cap``): the model is read when the count
        leaves the window of the last read, and kept until then. Post-processing of public releases, read by a
        public rule of the count alone. The window and the view are part of the learner's state: a snapshot
        holds them, so a restored learner predicts with the model the saved one predicted with.

        The view scores raw records: :class:`onpair.statistics.released_model.ReleasedModel` (the learners on
        released statistics) or :class:`onpair.core.predictor.DirectionModel` (the record-keeping learners).
        """
        count = self.refresh_count
        refresh = self._refresh
        if refresh is None or not refresh.start <= count < refresh.stop:  # refresh.covers(count), without its frame
            cap = self._refresh_step_cap(cap)
            start, stop = release_window(count, self.private, shift, cap)
            refresh = self._refresh = Refresh(start, stop, self._released_view(), count, shift, cap)
        return refresh.view

    def _refresh_step_cap(self, cap):
        """The step cap :meth:`predictor`'s window uses: ``cap``, or a smaller one where the learner's release
        schedule asks for it (a public function of public parameters)."""
        return cap

    def _released_view(self):
        """The view of the current release that :meth:`predictor` reads (the record-keeping learners': their model)."""
        return DirectionModel(self.n_releases, self.model, self._bounds)

    #: The keys of a snapshot's ``predictor`` that describe the view (beside the window's).
    _VIEW_KEYS = ("index",)

    def _view_from_state(self, scalars, reader, read: int):
        """The view a snapshot's ``predictor`` holds, checked: a private learner's must be the model it released at
        the count ``read`` (its last one, or an earlier one of its released models)."""
        index = reader.integer(scalars["index"], "predictor.index", low=0)
        model = reader.array("predictor.model", (self._task.param_size(self._dim),))
        if self.private:
            if index != read:
                raise reader.error(f"predictor.index = {index}, but the model was read at release {read}")
            expected = self._model_flat() if index == self.n_releases else (
                np.asarray(self.released_models[index - 1], dtype=np.float64).reshape(-1) if index >= 1 else None)
            if expected is None or not np.array_equal(model, expected):
                raise reader.error(f"predictor.model is not the model released at release {index}")
        return DirectionModel(index, model, self._bounds)

    def privacy_report(self, passes=1, order="same") -> dict:
        """What a non-private learner can say: it protects nothing.

        The keys of every report (:func:`onpair.privacy.reports.build_report`) with ``private`` False,
        ``epsilon_spent`` ∞, no ``rho_*`` keys and no release rows (its one event is
        :class:`onpair.privacy.events.NonPrivate`), ``record_level`` (ε ∞ whatever ``passes`` and
        ``order``, which are checked as the private learners check them), ``buffer`` and ``n_clipped``
        (curator-only: from the data without noise). ``epsilon`` and ``delta`` are the parameters of a
        private learner's twin (``private=False``), ∞ and 0 for ``PairwiseGIGA``, which has none.
        """
        return build_report(
            type(self).__name__, (NonPrivate(),), epsilon=getattr(self, "_epsilon", math.inf),
            delta=getattr(self, "_delta", 0.0), accounting=getattr(self, "accounting", "none"),
            mode=self._non_private_mode, n_seen=self._t, private=False,
            status="not private: the non-private twin protects nothing", passes=passes, order=order,
            public={"buffer": self._buffer_description()}, curator={"n_clipped": self._n_clipped})

    #: The report's ``mode`` of the non-private learner.
    _non_private_mode = "not private"

    def _buffer_description(self):
        return None

    def _require_dim(self):
        if self._dim is None:
            raise ValueError(
                "the number of features is unknown until the first record: pass n_features=, "
                "array bounds, or learn a record first"
            )


def _plain_ints(value):
    """A SeedSequence's entropy or spawn key (int, NumPy int, or a sequence of them) as JSON ints."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    return [int(v) for v in value]
