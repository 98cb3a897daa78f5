"""The online pairwise learner: parameters, validation, and the one learning path over the state objects.

A learner orchestrates; it holds no arrays of its own. Its state is a few objects, each with its own
module:

* the task axis (:mod:`onpair.learners.task`) and the round objective with its step sizes
  (:mod:`onpair.learners.objective`), fixed at construction from public parameters;
* the internal iterate (:mod:`onpair.learners.iterate`) and the stored past, a
  :class:`~onpair.learners.pair_history.PairHistory` of the kind that
  :func:`~onpair.learners.histories.make_history` chooses, created with the first record;
* for the private learners, the release planner and log (:mod:`onpair.learners.release`).

``learn_one``, ``learn_many`` (and the offline estimators' ``fit``) all run
:func:`onpair.learners.path.giga_path`: a block is validated first (a failed call changes no state and
spends no budget), mapped through the public bounds, planned, and handed to one compiled kernel. A
single record in the box with no release due takes a compiled shortcut with the same arithmetic.
"""

from __future__ import annotations

import copy
import inspect
import hashlib
import warnings

import numpy as np

from .._validation import as_feature_block, as_feature_vector, check_radius, check_seed
from ..bounds import FeatureBounds
from ..matrix_geometry import metric_factor
from .histories import HISTORY_KINDS, make_history
from .iterate import Iterate
from .objective import RoundObjective, StepRule, check_step_sizes, resolve_lam
from .path import giga_path
from .release import ReleasePlan
from .slots import SlotPolicy
from .task import given_center, make_task

#: The task/constraint/center parameters, shared by the online learners' docstrings.
TASK_PARAMETERS_DOC = """    task : {"auc", "metric"}, default "auc"
        ``"metric"`` learns a symmetric d×d matrix W (``model`` is (d, d)) from records with any class
        labels: pairs of one class should be close in h_W(x, x') = (x − x')ᵀW(x − x'), others far
        (losses of :mod:`onpair.metric_losses`; ``transform(X)`` maps records into the metric's space).
        Sensitivities are Frobenius-norm bounds and the release noise is symmetric (README, "Metric
        learning").
    constraint : {"frobenius", "psd", "nuclear", "psd_nuclear"}, optional
        The metric task's constraint set of radius R (:mod:`onpair.matrix_geometry`); default
        "frobenius" (Huai et al., Example 1).
    center : {"zero", "identity"} or array of shape (d, d), optional
        Centre W₀ of the regulariser (λ/2)‖W − W₀‖² and start of the iterate: "zero" (the default for
        AUC, and the paper's choice), "identity" (the metric default: a multiple of the identity at
        half the radius, so the metric starts as Euclidean and learns a correction), or a public
        symmetric matrix inside the constraint set.
"""


def with_task_parameters(cls):
    """Class decorator: put :data:`TASK_PARAMETERS_DOC` where the docstring says ``{task_parameters}``."""
    cls.__doc__ = cls.__doc__.replace("    {task_parameters}\n", TASK_PARAMETERS_DOC)
    return cls


def make_bounds(bounds, norm_bound) -> FeatureBounds:
    """The public feature bounds of the ``bounds``/``norm_bound`` parameters (the unit ball if neither)."""
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
    # Default: records are assumed to lie in the unit ball; any record outside is clipped to it
    # (and counted). Declare the data set's public bounds to avoid shrinking the signal.
    return FeatureBounds(norm=1.0 if norm_bound is None else norm_bound)


class OnlinePairwiseLearner:
    """Pairwise GIGA with a stored past; subclasses decide what is released.

    Parameters are documented on the public subclasses.
    """

    #: Whether the learner adds noise (private learners) or exposes its iterate (Pairwise GIGA).
    private = False
    #: Centres of the regulariser (λ/2)‖w − w₀‖² this learner accepts (OnPairC adds Alg. 2's "random").
    _CENTERS = ("zero", "identity")

    def __init__(self, *, loss="logistic", lam="auto", radius=0.1, step_sizes="capped", bounds=None,
                 norm_bound=None, n_features=None, buffer=None, task="auc", constraint=None, center=None,
                 seed=None):
        self.task = task
        self.center = center
        self.constraint = constraint
        self._task = make_task(task, constraint)
        kind = center if center is not None else ("identity" if task == "metric" else "zero")
        self._center_given = None
        if not isinstance(kind, str):
            if task != "metric":
                raise ValueError(f"center must be one of {self._CENTERS} or None, got {center!r}")
            # A public starting metric W₀ (e.g. learned on public data): square and symmetric.
            self._center_given = given_center(center, name="center")  # a copy
            self.center = self._center_given.copy()  # later edits of the caller's array change nothing
            kind = "given"
        elif kind not in self._CENTERS:
            raise ValueError(f"center must be one of {self._CENTERS} or None, got {center!r}")
        if kind == "identity" and task != "metric":
            raise ValueError("center='identity' is for task='metric' (W₀ ∝ I); the AUC task uses 'zero'")
        self._center_kind = kind
        self.loss = loss
        self.lam = lam
        self.radius = radius
        self.step_sizes = step_sizes
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.n_features = n_features
        self.buffer = buffer
        self.seed = seed
        loss_object = self._task.get_loss(loss)
        self._slots = SlotPolicy.from_buffer(buffer)
        radius_value = check_radius(radius)
        self._objective = RoundObjective(self._task, loss_object, resolve_lam(lam, loss_object, radius_value),
                                         radius_value)
        seed = check_seed(seed)
        self._bounds = make_bounds(bounds, norm_bound)
        self._step_rule = self._make_step_rule(check_step_sizes(step_sizes))
        self._dim = self._initial_dimension(n_features)
        # Independent random streams from one SeedSequence: the start/centre point, the release noise and
        # the reservoir's slots (public). Without a seed, SeedSequence() draws fresh OS entropy (a seed is
        # for reproducible experiments only).
        self._seed_sequence = np.random.SeedSequence(seed)
        init_seq, noise_seq, buffer_seq = self._seed_sequence.spawn(3)
        self._init_rng = np.random.Generator(np.random.PCG64(init_seq))
        self._noise_rng = np.random.Generator(np.random.PCG64(noise_seq))
        self._buffer_rng = np.random.Generator(np.random.PCG64(buffer_seq))
        self._t = 0
        self._n_clipped = 0
        self._warned_clipping = False
        self._read_only = None  # why the learner refuses to learn and be saved (a consume=False view)
        self._iterate = None  # created with the first record (or now, if the dimension is known)
        self._history = None
        if self._dim is not None:
            self._init_state(self._dim)

    # -- configuration -----------------------------------------------------------------------------
    def _make_step_rule(self, steps) -> StepRule:
        return StepRule(self._objective, steps)

    def _initial_dimension(self, n_features):
        dims = []
        if n_features is not None:
            if isinstance(n_features, (bool, np.bool_)) or not isinstance(n_features, (int, np.integer)) \
                    or n_features < 1:
                raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
            dims.append(int(n_features))
        if self._bounds.n_features is not None:
            dims.append(self._bounds.n_features)
        if self._center_given is not None:
            dims.append(self._center_given.shape[0])
            if len(set(dims)) > 1:
                raise ValueError(f"center is {self._center_given.shape[0]}×{self._center_given.shape[0]} but the "
                                 f"records have {dims[0]} features")
        if len(set(dims)) > 1:
            raise ValueError(f"n_features={n_features} disagrees with the bounds' {self._bounds.n_features} features")
        return dims[0] if dims else None

    @property
    def _radius(self) -> float:
        return self._objective.radius

    @property
    def _lam(self) -> float:
        return self._objective.lam

    def _center_point(self, dim: int) -> np.ndarray:
        """Centre w₀ of the regulariser (λ/2)‖w − w₀‖² (data-independent): the origin, a random point
        of C (OnPairC's Alg. 2), or for the metric task a multiple of the identity, so that the learned
        metric is a correction of the Euclidean metric on the public box (onpair.matrix_geometry)."""
        task, radius = self._task, self._radius
        if self._center_kind == "identity":
            return task.default_center(dim, radius)
        if self._center_kind == "given":
            flat = np.ascontiguousarray(self._center_given).reshape(-1).copy()
            projected = task.project(flat, dim, radius)
            gap = float(np.linalg.norm(projected - flat))
            if gap > 1e-9 * radius:
                raise ValueError(
                    f"center (the starting metric W₀) lies outside the constraint set "
                    f"{self.constraint or 'frobenius'!r} of radius {radius} (‖W₀‖_F = "
                    f"{np.linalg.norm(flat):.6g}, distance to the set {gap:.3g}); "
                    "scale it into the set or raise radius")
            return projected  # inside C exactly (it moved by at most 1e-9·R)
        if self._center_kind == "random":
            return task.random_point(self._init_rng, dim, radius)
        return np.zeros(task.param_size(dim))

    def _start_point(self, dim: int, center: np.ndarray) -> np.ndarray:
        """Internal iterate before the first step (data-independent): the centre."""
        return center.copy()

    def _init_state(self, dim: int) -> None:
        self._dim = dim
        center = self._center_point(dim)
        self._iterate = Iterate(self._start_point(dim, center), center)
        self._history = make_history(self._task, self._objective.loss, self._slots, dim)

    # -- the one learning path ---------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn from one record ``(x, y)``: ``y`` in {-1, +1}, {0, 1} or bool for the AUC task, a
        class label (int, bool or string) for the metric task.

        Returns
        -------
        self
        """
        label = self._task.label_one(y, self._t)
        if (self._dim is not None and type(x) is np.ndarray and x.dtype == np.float64
                and x.shape == (self._dim,) and not self._read_only):
            # NaN and ±inf fail the box test of the compiled map, so they reach the general path's error.
            if self._learn_one_fast(x, label):
                return self
        X = as_feature_vector(x, self._dim, self._t, name="x")
        return self._learn_block(X, self._task.single_block(label))

    def _learn_one_fast(self, x: np.ndarray, label) -> bool:
        """The common single-record round without the block machinery; False sends the record down the
        general path instead (a release at this round, a clipped record, the norm map).

        It computes exactly what the general path computes, bit for bit (the tests feed the same stream
        both ways): the same box map, step size, ledger update, reservoir draw and kernel arithmetic."""
        t = self._t + 1
        if not self._quiet(t):
            return False
        z = self._bounds.map_inside(x)
        if z is None:
            return False  # outside the bounds (or the norm map): the general path counts and warns
        step = self._step_rule.one(t)
        self._history.learn_one(z, label, self._iterate, self._objective, t, step, self._buffer_rng)
        self._t = t
        self._after_round_fast(t, step)
        return True

    def _quiet(self, t: int) -> bool:
        """True when round t needs nothing but the step (the non-private learner: always)."""
        return True

    def _after_round_fast(self, t: int, step: float) -> None:
        pass

    def learn_many(self, X, y):
        """Learn from a block of records, exactly as repeated :meth:`learn_one` would.

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
        """Learn records already mapped onto the diameter-2 domain: ``labels`` are ±1 (AUC) or
        validated class labels (metric task)."""
        if self._read_only:
            raise RuntimeError(self._read_only)
        m = Z.shape[0]
        # Everything that can raise happens before any state changes: planning (the budget check)
        # and the warnings (which raise under warnings-as-errors). A failed call changes nothing, so
        # retrying it cannot learn a record twice.
        steps = self._step_rule.block(self._t, m)
        plan = self._plan(self._t, steps)
        pending = self._pending_warnings(n_clipped, m)
        for message, category, _ in pending:
            warnings.warn(message, category, stacklevel=4)  # attributed to the caller of learn_*
        for _, _, mark in pending:
            mark()  # only once no warning raised (warnings as errors): all or none
        if self._history is None:
            self._init_state(Z.shape[1])
        # From here to the end nothing raises: the kernel and the bookkeeping commit together.
        noise = self._task.noise(self._noise_rng, plan.n_releases, self._dim)
        released = giga_path(Z, self._history.encode(labels), history=self._history, iterate=self._iterate,
                             objective=self._objective, steps=steps, t_start=self._t, plan=plan, noise=noise,
                             rng=self._buffer_rng)
        self._t += m
        self._n_clipped += n_clipped
        self._after_block(plan, released)
        return self

    def _plan(self, t_start: int, steps: np.ndarray) -> ReleasePlan:
        """Which rounds of the block release, with which σ. The non-private learner releases nothing."""
        return ReleasePlan.nothing(steps.shape[0])

    def _after_block(self, plan: ReleasePlan, released: np.ndarray) -> None:
        pass

    def _pending_warnings(self, n_clipped: int, m: int) -> list:
        """Warnings about the coming block as (message, category, mark it issued)."""
        if n_clipped and not self._warned_clipping:
            # No count in the message: warnings end up in logs, and the count is not private.
            return [(
                f"records lay outside the declared feature bounds ({self._bounds!r}) and were clipped to "
                "them; declare the data set's public bounds (bounds= or norm_bound=) to avoid shrinking "
                "the signal. privacy_report()['n_clipped'] has the (curator-only) count.",
                UserWarning, self._mark_clipping_warned,
            )]
        return []

    def _mark_clipping_warned(self) -> None:
        self._warned_clipping = True

    # -- persistence -------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the whole learner to ``path`` atomically; :func:`onpair.load` resumes it exactly.

        The file holds the internal state, the history or buffer, the random generators, the
        releases and the accountant's ledger, behind a format version and a SHA-256 digest
        (:mod:`onpair.persistence`). ``onpair.load(path)`` consumes the file: a snapshot resumes
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
        >>> onpair.OnPairStrC(n_features=2, n=100, seed=0).learn_one([0.5, 0.1], 1).save(path)
        >>> onpair.load(path).n_seen
        1
        """
        from ..persistence import save_learner

        save_learner(self, path)

    @classmethod
    def _param_names(cls) -> tuple:
        """The constructor's (keyword-only) parameters, which a snapshot stores verbatim."""
        return tuple(name for name, p in inspect.signature(cls.__init__).parameters.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY)

    def clone(self):
        """A new, unfitted learner with the same parameters (copies of them): nothing learned is copied.

        For a private learner that is a new mechanism with **its own budget**: a learner and its clone
        fed the same records spend ρ₁ + ρ₂ on them. With a ``seed`` the clone repeats the original's
        noise (seeds are for experiments only).

        Examples
        --------
        >>> import onpair
        >>> learner = onpair.OnPairStrC(n_features=2, n=100, seed=0).learn_one([0.5, 0.1], 1)
        >>> learner.clone().n_seen, learner.clone().epsilon
        (0, 1.0)
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the parameters' warnings were issued for the original
            return type(self)(**{name: copy.deepcopy(getattr(self, name)) for name in self._param_names()})

    def _settings(self) -> dict:
        """The settings the parameters resolve to: rebuilt and compared when a snapshot is written and
        read, so that a parameter changed after construction, or a library whose defaults changed, cannot
        resume a different analysis silently."""
        steps = self._step_rule.explicit
        settings = {
            "private": self.private,
            "loss": self._objective.loss.name,
            "lam": self._lam,
            "radius": self._radius,
            "buffer": self._slots.as_parameter(),
            "bounds": self._bounds.to_dict(),
            "step_sizes": None if steps is None else hashlib.sha256(steps.tobytes()).hexdigest(),
            "center": self._center_kind,
        }
        settings.update(self._task.settings())
        return settings

    def _history_kind(self) -> str:
        from .histories import history_class

        return history_class(self._task, self._objective.loss, self._slots).kind

    def _export_state(self, arrays: dict) -> dict:
        """The learner's state for a snapshot: scalars returned, arrays written into ``arrays``."""
        seq = self._seed_sequence
        state = {
            "t": self._t,
            "dim": self._dim,
            "n_clipped": self._n_clipped,
            "warned_clipping": self._warned_clipping,
            "history": self._history_kind(),
            "rng": {name: getattr(self, f"_{name}_rng").bit_generator.state for name in ("init", "noise", "buffer")},
            "seed_sequence": {"entropy": _plain_ints(seq.entropy), "spawn_key": _plain_ints(seq.spawn_key),
                              "pool_size": int(seq.pool_size), "n_children_spawned": int(seq.n_children_spawned)},
        }
        if self._dim is not None:
            self._iterate.export(arrays)
            self._history.export(state, arrays)
        return state

    def _restore_state(self, state: dict, reader) -> None:
        """Overwrite this freshly built learner's state with a snapshot's, checking every value."""
        keys = ["t", "dim", "n_clipped", "warned_clipping", "history", "rng", "seed_sequence"]
        reader.mapping(state, "state", None, required=keys)
        kind = state["history"]
        if kind != self._history_kind():
            raise reader.error(f"history kind {kind!r}, but the parameters give {self._history_kind()!r}")
        t = reader.integer(state["t"], "t", low=0)
        dim = state["dim"]
        if dim is None:
            if t > 0:
                raise reader.error(f"dim is null after {t} records")
        else:
            dim = reader.integer(dim, "dim", low=1)
        if self._dim is not None and dim != self._dim:
            raise reader.error(f"dim = {dim!r}, but the parameters fix {self._dim} features")
        optional = list(HISTORY_KINDS[kind].STATE_KEYS) if dim is not None else []
        optional += self._private_state_keys()
        reader.mapping(state, "state", keys + optional)
        n_clipped = reader.integer(state["n_clipped"], "n_clipped", low=0, high=t)
        warned = reader.boolean(state["warned_clipping"], "warned_clipping")
        reader.mapping(state["rng"], "rng", ("init", "noise", "buffer"))
        if dim is not None:
            if self._dim is None:
                self._init_state(dim)
            self._iterate = Iterate.restore(reader, self._task.param_size(dim), self._task, dim, self._radius)
            self._history = HISTORY_KINDS[kind].restore(dim, self._slots, t, state, reader)
        self._restore_releases(state, reader, t, dim)
        seq = state["seed_sequence"]
        reader.mapping(seq, "seed_sequence", ("entropy", "spawn_key", "pool_size", "n_children_spawned"))
        try:
            self._seed_sequence = np.random.SeedSequence(
                seq["entropy"], spawn_key=tuple(seq["spawn_key"]), pool_size=seq["pool_size"],
                n_children_spawned=seq["n_children_spawned"])
            for name in ("init", "noise", "buffer"):
                generator = np.random.Generator(np.random.PCG64())
                generator.bit_generator.state = state["rng"][name]
                setattr(self, f"_{name}_rng", generator)
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            raise reader.error(f"unusable random generator state ({type(exc).__name__}: {exc})") from None
        self._t = t
        self._dim = dim
        self._n_clipped = n_clipped
        self._warned_clipping = warned

    def _private_state_keys(self) -> list:
        return []

    def _restore_releases(self, state, reader, t, dim) -> None:
        pass

    def _snapshot_written(self) -> None:
        """Called once a snapshot of this learner is on disk (the private learners detach their noise)."""

    def _make_read_only(self, reason: str) -> None:
        """Refuse to learn and to be saved from now on (a view of someone else's snapshot)."""
        if self.private:
            self._read_only = reason

    # -- scoring -----------------------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """A copy of the model a user may see (subclasses decide which one)."""
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
    def strong_convexity(self) -> float:
        """α of the round objective: λ (OnPairC: c·n^(−1/4) unless ``lam`` is given)."""
        return self._objective.strong_convexity

    @property
    def n_releases(self) -> int:
        """Models released so far (0 for the non-private learner, which releases nothing)."""
        return 0

    def privacy_report(self) -> dict:
        """What a non-private learner can say: it protects nothing.

        Keys: ``algorithm``, ``private`` (False), ``n_seen``, ``n_clipped`` (curator-only: from the data
        without noise), ``buffer`` and ``status``.
        """
        return {"algorithm": type(self).__name__, "private": False, "n_seen": self._t,
                "n_clipped": self._n_clipped, "buffer": self._slots.describe(),
                "status": "not private: the non-private twin protects nothing"}

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
