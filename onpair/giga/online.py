"""The online pairwise learner: parameters, validation, and the one learning path over the state objects.

A learner orchestrates; it holds no arrays of its own. Its state is a few objects, each with its own
module:

* the task axis (:mod:`onpair.core.task`) and the round objective with its step sizes
  (:mod:`onpair.giga.round_objective`), fixed at construction from public parameters;
* the internal iterate (:mod:`onpair.giga.iterate`) and the stored past, a
  :class:`~onpair.giga.pair_history.PairHistory` of the kind that
  :func:`~onpair.giga.histories.make_history` chooses, created with the first record;
* for the private learners, the release planner and log (:mod:`onpair.giga.release`).

``learn_one``, ``learn_many`` (and the offline estimators' ``fit``) all run
:func:`onpair.giga.path.giga_path`: a block is validated first (a failed call changes no state and
spends no budget), mapped through the public bounds, planned, and handed to one compiled kernel. A
single record in the box with no release due takes a compiled shortcut with the same arithmetic.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..core._validation import as_feature_vector, check_radius
from ..core.metric_losses import make_pair_terms
from .histories import HISTORY_KINDS, history_class, make_history
from .iterate import Iterate
from .round_objective import RoundObjective, StepRule, check_step_sizes, resolve_lam
from .path import giga_path
from .release import ReleasePlan
from .slots import SlotPolicy
from ..core.stream import StreamLearner
from ..core.task import given_center, make_task

#: The task/constraint/center parameters, shared by the online learners' docstrings.
TASK_PARAMETERS_DOC = """    task : {"auc", "metric"}, default "auc"
        ``"metric"`` learns a symmetric d×d matrix W (``model`` is (d, d)) from records with any class
        labels: pairs of one class should be close in h_W(x, x') = (x − x')ᵀW(x − x'), others far
        (losses of :mod:`onpair.core.metric_losses`; ``transform(X)`` maps records into the metric's space).
        Sensitivities are Frobenius-norm bounds and the release noise is symmetric (README, "Metric
        learning").
    constraint : {"frobenius", "psd", "nuclear", "psd_nuclear"}, optional
        The metric task's constraint set of radius R (:mod:`onpair.core.matrix_geometry`); default
        "frobenius" (Huai et al., Example 1).
    center : {"zero", "identity"} or array of shape (d, d), optional
        Centre W₀ of the regulariser (λ/2)‖W − W₀‖² and start of the iterate: "zero" (the default for
        AUC, and the paper's choice), "identity" (the metric default: a multiple of the identity at
        half the radius, so the metric starts as Euclidean and learns a correction), or a public
        symmetric matrix inside the constraint set.
    threshold : float, "learned" or (low, high), default 1.0
        Metric task: the threshold b of the losses φ(τ(b − h)) and (1 + τ(h − b + 1))₊. 1.0 is the
        papers' losses; "learned" learns b with W in the public interval [0, 4R] (a pair: in that
        interval), with its share of the noise (``threshold_``: the visible model's b;
        docs/algorithms.md#metric-threshold).
    pair_weights : None, "balanced" or (same, different), default None
        Metric task: weights of the pairs of one class and of two classes. None: uniform (the papers');
        "balanced": equal totals if the ``n_classes`` public classes had equal sizes (ω₊/ω₋ = C − 1).
        Γ, and so the noise, scales with the larger weight.
    n_classes : int, optional
        The **public** number of classes, needed by ``pair_weights="balanced"``.
"""


def with_task_parameters(cls):
    """Class decorator: put :data:`TASK_PARAMETERS_DOC` where the docstring says ``{task_parameters}``."""
    cls.__doc__ = cls.__doc__.replace("    {task_parameters}\n", TASK_PARAMETERS_DOC)
    return cls


class OnlinePairwiseLearner(StreamLearner):
    """Pairwise GIGA with a stored past; subclasses decide what is released.

    Parameters are documented on the public subclasses.
    """

    #: Centres of the regulariser (λ/2)‖w − w₀‖² this learner accepts (OnPairC adds Alg. 2's "random").
    _CENTERS = ("zero", "identity")

    def __init__(self, *, loss="logistic", lam="auto", radius=0.1, step_sizes="capped", bounds=None,
                 norm_bound=None, n_features=None, buffer=None, task="auc", constraint=None, center=None,
                 threshold=1.0, pair_weights=None, n_classes=None, seed=None):
        self.task = task
        self.center = center
        self.constraint = constraint
        self.threshold = threshold
        self.pair_weights = pair_weights
        self.n_classes = n_classes
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
        if task == "metric":
            self._task = make_task(task, constraint, make_pair_terms(threshold, pair_weights, radius_value,
                                                                     _public_class_count(n_classes)))
        elif not (threshold == 1.0 and pair_weights is None and n_classes is None):
            raise ValueError("threshold, pair_weights and n_classes are for task='metric'")
        terms = getattr(self._task, "terms", None)
        self._objective = RoundObjective(self._task, loss_object, resolve_lam(lam, loss_object, radius_value, terms),
                                         radius_value)
        self._step_rule = self._make_step_rule(check_step_sizes(step_sizes))
        given = self._center_given
        self._setup_stream(bounds, norm_bound, n_features, seed, None if given is None else (
            given.shape[0], f"center is {given.shape[0]}×{given.shape[0]} but the records have {{records}} features"))
        self._iterate = None  # created with the first record (or now, if the dimension is known)
        self._history = None
        if self._dim is not None:
            self._init_state(self._dim)

    # -- configuration -----------------------------------------------------------------------------
    def _make_step_rule(self, steps) -> StepRule:
        return StepRule(self._objective, steps)

    @property
    def _radius(self) -> float:
        return self._objective.radius

    @property
    def _lam(self) -> float:
        return self._objective.lam

    def _center_point(self, dim: int) -> np.ndarray:
        """Centre w₀ of the regulariser (λ/2)‖w − w₀‖² (data-independent): the origin, a random point
        of C (OnPairC's Alg. 2), or for the metric task a multiple of the identity, so that the learned
        metric is a correction of the Euclidean metric on the public box (onpair.core.matrix_geometry)."""
        task, radius = self._task, self._radius
        if self._center_kind == "identity":
            return task.default_center(dim, radius)
        if self._center_kind == "given":
            flat = task.given_center(np.ascontiguousarray(self._center_given).reshape(-1).copy(), dim, radius)
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
        return task.zero_center(dim)

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
        self._issue(self._pending_warnings(n_clipped, m))
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

    # -- snapshots ---------------------------------------------------------------------------------
    def _state_kind(self) -> str:
        return history_class(self._task, self._objective.loss, self._slots).kind

    def _export_own(self, state, arrays):
        if self._dim is not None:
            self._iterate.export(arrays)
            self._history.export(state, arrays)

    def _own_state_keys(self, dim):
        keys = list(HISTORY_KINDS[self._state_kind()].STATE_KEYS) if dim is not None else []
        return keys + self._private_state_keys()

    def _restore_own(self, state, reader, t, dim):
        if dim is not None:
            if self._dim is None:
                self._init_state(dim)
            self._iterate = Iterate.restore(reader, self._task.param_size(dim), self._task, dim, self._radius)
            self._history = HISTORY_KINDS[self._state_kind()].restore(dim, self._slots, t, state, reader)
        self._restore_releases(state, reader, t, dim)

    def _private_state_keys(self) -> list:
        return []

    def _restore_releases(self, state, reader, t, dim) -> None:
        pass

    # -- what a user may see -----------------------------------------------------------------------
    @property
    def strong_convexity(self) -> float:
        """α of the round objective: λ (OnPairC: c·n^(−1/4) unless ``lam`` is given)."""
        return self._objective.strong_convexity

    def _buffer_description(self):
        return self._slots.describe()


def _public_class_count(n_classes):
    """``n_classes`` checked: None, or a positive integer (public, never counted from the data)."""
    if n_classes is None:
        return None
    if isinstance(n_classes, (bool, np.bool_)) or not isinstance(n_classes, (int, np.integer)):
        raise TypeError(f"n_classes must be a positive integer or None, got {n_classes!r}")
    if not 1 <= n_classes <= 10**6:
        raise ValueError(f"n_classes must be in [1, 10**6], got {n_classes!r}")
    return int(n_classes)
