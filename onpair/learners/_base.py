"""Shared core of the online pairwise learners: state, validation, and the one kernel path.

``learn_one``, ``learn_many`` (and the offline wrappers' ``fit``) all go through
:meth:`_OnlinePairwiseLearner._learn_block`, which validates the whole block first (a failed call
changes no state and spends no budget), maps records through the public bounds, and hands the block
to one compiled kernel of :mod:`onpair._kernels`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _kernels, _metric_kernels
from .._validation import (as_feature_block, as_feature_vector, as_label_block, binary_label, check_positive,
                           check_radius, check_seed, class_codes, class_label, label_array)
from ..bounds import FeatureBounds, _map_box_row
from ..geometry import random_point_in_ball
from ..losses import SQUARE, get_loss
from ..matrix_geometry import (CONSTRAINTS, _as_square_symmetric, _project_matrix, constraint_code,
                               constraint_diameter, identity_center, metric_factor, random_symmetric_point,
                               symmetric_noise)
from ..metric_losses import get_metric_loss

STEP_RULES = ("capped",)
BUFFER_KINDS = ("reservoir", "fifo")
TASKS = ("auc", "metric")
#: Largest step size accepted (see _check_step_sizes).
MAX_STEP = 1e6


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


def _with_task_parameters(cls):
    """Class decorator: put :data:`TASK_PARAMETERS_DOC` where the docstring says ``{task_parameters}``."""
    cls.__doc__ = cls.__doc__.replace("    {task_parameters}\n", TASK_PARAMETERS_DOC)
    return cls


def _box_row_cache(learner, bounds):
    """(lower, upper, half-scale) as float64 rows of the learner's dimension, computed once."""
    cache = learner.__dict__.get("_box_row")
    if cache is None:
        dim = learner._dim
        lower = np.ascontiguousarray(np.broadcast_to(bounds.lower, (dim,)), dtype=np.float64)
        upper = np.ascontiguousarray(np.broadcast_to(bounds.upper, (dim,)), dtype=np.float64)
        half_scale = 0.5 * bounds._box_scale(upper - lower)
        cache = (lower, upper, np.ascontiguousarray(half_scale))
        learner._box_row = cache
    return cache


def _capped_step(learner, t: int) -> float:
    """The "capped" rule for one round t ≥ 3, in the same floating-point operations as the array form."""
    constants = learner.__dict__.get("_step_constants")
    if constants is None:
        constants = learner._step_constants = (learner._strong_convexity, learner._smoothness)
    alpha, smooth = constants
    if alpha > 0:
        tf = float(t)
        paper = 2.0 * (tf - 1.0) / ((tf - 2.0) * alpha * tf)
        if math.isfinite(smooth):
            return min(paper, 2.0 / (smooth + alpha))
        return paper
    return float(learner._radius / (learner._lipschitz * np.sqrt(float(t))))


class _OnlinePairwiseLearner:
    """Pairwise GIGA with the full history; subclasses decide what is released.

    Parameters are documented on the public subclasses.
    """

    #: Whether the learner adds noise (private learners) or exposes its iterate (Pairwise GIGA).
    _private = False
    #: Centres of the regulariser (λ/2)‖w − w₀‖² this learner accepts (OnPairC adds Alg. 2's "random").
    _CENTERS = ("zero", "identity")
    #: Why the learner refuses to learn and to be saved (a read-only view from
    #: ``onpair.load(path, consume=False)``), or None.
    _read_only = None

    def __init__(self, *, loss="logistic", lam="auto", radius=0.1, step_sizes="capped", bounds=None,
                 norm_bound=None, n_features=None, buffer=None, task="auc", constraint=None, center=None,
                 seed=None):
        self.task = task
        self.center = center
        self.constraint = constraint
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        self._task = task
        if task == "metric":
            self._constraint = constraint_code("frobenius" if constraint is None else constraint)
            self._class_codes = {}  # class label -> int code, in order of first appearance
        elif constraint not in (None, "l2"):
            raise ValueError(f"constraint={constraint!r} is for task='metric' (one of {sorted(CONSTRAINTS)}); "
                             "the AUC task's constraint set is the l2 ball")
        kind = center if center is not None else ("identity" if task == "metric" else "zero")
        self._center_given = None
        if not isinstance(kind, str):
            if task != "metric":
                raise ValueError(f"center must be one of {self._CENTERS} or None, got {center!r}")
            # A public starting metric W₀ (e.g. learned on public data): square and symmetric.
            self._center_given = _as_square_symmetric(center, name="center")  # a copy
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
        self._loss = get_metric_loss(loss) if task == "metric" else get_loss(loss)
        self._buffer_kind, self._buffer_size = self._check_buffer(buffer)
        self._radius = check_radius(radius)
        self._lam = self._resolve_lam(lam)
        if not self._lam <= 1e12:
            raise ValueError(f"lam must be <= 1e12 (the step sizes ~1/λ underflow), got {self._lam!r}")
        seed = check_seed(seed)
        self._bounds = self._make_bounds(bounds, norm_bound)
        self._steps_array = self._check_step_sizes(step_sizes)
        self._dim = self._initial_dimension(n_features)
        # Independent random streams from one SeedSequence: the start/centre point and the release
        # noise. Without a seed, SeedSequence() draws fresh OS entropy (a seed is for reproducible
        # experiments only).
        self._seed_sequence = np.random.SeedSequence(seed)
        init_seq, noise_seq, buffer_seq = self._seed_sequence.spawn(3)
        self._init_rng = np.random.Generator(np.random.PCG64(init_seq))
        self._noise_rng = np.random.Generator(np.random.PCG64(noise_seq))
        self._buffer_rng = np.random.Generator(np.random.PCG64(buffer_seq))  # reservoir slots (public)
        self._t = 0
        self._n_clipped = 0
        self._warned_clipping = False
        if self._dim is not None:
            self._init_state(self._dim)

    # -- configuration -----------------------------------------------------------------------------
    def _resolve_lam(self, lam) -> float:
        """λ, with ``"auto"`` = G(R)/R: the weakest regulariser under which the constraint ‖w‖ ≤ R can
        never bind at the optimum (there ‖w*‖ ≤ G/λ). A binding constraint keeps ‖w‖ at R while the
        sensitivity stays ~2Γ/(λt), so weaker λ only adds noise relative to the model; stronger λ
        shrinks model and sensitivity together. Data-independent: it depends on R and the loss only."""
        if isinstance(lam, str):
            if lam != "auto":
                raise ValueError(f"lam must be a number >= 0 or 'auto', got {lam!r}")
            return self._loss.lipschitz(self._radius) / self._radius
        return check_positive(lam, "lam", allow_zero=True)

    @staticmethod
    def _make_bounds(bounds, norm_bound):
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

    @staticmethod
    def _check_buffer(buffer):
        """None (full history), ("reservoir", s) or ("fifo", s)."""
        if buffer is None:
            return None, 0
        try:
            kind, size = buffer
        except (TypeError, ValueError):
            raise ValueError(f"buffer must be None, ('reservoir', s) or ('fifo', s), got {buffer!r}") from None
        if kind not in BUFFER_KINDS:
            raise ValueError(f"buffer kind must be one of {BUFFER_KINDS}, got {kind!r}")
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"buffer size must be a positive integer, got {size!r}")
        return kind, int(size)

    @staticmethod
    def _check_step_sizes(step_sizes):
        if isinstance(step_sizes, str):
            if step_sizes not in STEP_RULES:
                raise ValueError(f"step_sizes must be one of {STEP_RULES} or an array, got {step_sizes!r}")
            return None
        try:
            steps = np.array(step_sizes, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"step_sizes must be a string or an array of floats, got {step_sizes!r}") from None
        if steps.ndim != 1 or steps.size == 0:
            raise ValueError(f"step_sizes must be a non-empty 1-D array, got shape {steps.shape}")
        # The cap keeps every iterate finite (|step·gradient| ≤ 1e6·(G + λ·diam) with λ ≤ 1e12, R ≤ 1e8):
        # an overflow inside a step would make the release depend on the data through NaN (a model that
        # is NaN on one stream and finite on its neighbour), outside what the ledger bounds.
        bad = np.flatnonzero(~np.isfinite(steps) | (steps < 0) | (steps > MAX_STEP))
        if bad.size:
            k = int(bad[0])
            raise ValueError(f"step_sizes[{k}] = {steps[k]!r}: step sizes must be finite and in [0, {MAX_STEP:g}]")
        return steps

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

    # -- constants of the round objective -----------------------------------------------------------
    @property
    def _strong_convexity(self) -> float:
        """α of the round objective: the regulariser (λ/2)‖w − c‖² makes it λ-strongly convex."""
        return self._lam

    @property
    def _smoothness(self) -> float:
        """L of the round objective: the loss's L plus the regulariser's λ."""
        return self._loss.smoothness() + self._lam

    @property
    def _lipschitz(self) -> float:
        """G of the data term (the regulariser cancels between neighbouring runs)."""
        return self._loss.lipschitz(self._radius)

    @property
    def _pair_change(self) -> float:
        """Γ of the data term: the ledger's per-pair charge for a replaced record."""
        return self._loss.pair_change(self._radius)

    @property
    def _diameter(self) -> float:
        """diam(C): 2R for the ℓ2 ball; the Frobenius diameter of the metric task's set."""
        if self._task == "metric":
            return constraint_diameter(self._constraint, self._radius)
        return 2.0 * self._radius

    def _param_size(self, dim: int) -> int:
        """Entries of the parameter: d for AUC, d² (a flat symmetric matrix) for the metric task."""
        return dim * dim if self._task == "metric" else dim

    def _random_point(self, dim: int) -> np.ndarray:
        """A data-independent random point of C (Huai Alg. 1's warm-up, Alg. 2's centre)."""
        if self._task == "metric":
            return random_symmetric_point(self._init_rng, dim, self._radius, self._constraint)
        return random_point_in_ball(self._init_rng, dim, self._radius)

    def _center_point(self, dim: int) -> np.ndarray:
        """Centre w₀ of the regulariser (λ/2)‖w − w₀‖² (data-independent): the origin, a random point
        of C (OnPairC's Alg. 2), or for the metric task a multiple of the identity, so that the learned
        metric is a correction of the Euclidean metric on the public box (onpair.matrix_geometry)."""
        if self._center_kind == "identity":
            return identity_center(dim, self._radius, self._constraint)
        if self._center_kind == "given":
            flat = np.ascontiguousarray(self._center_given).reshape(-1).copy()
            projected = flat.copy()
            _project_matrix(projected, dim, self._radius, self._constraint)
            gap = float(np.linalg.norm(projected - flat))
            if gap > 1e-9 * self._radius:
                raise ValueError(
                    f"center (the starting metric W₀) lies outside the constraint set "
                    f"{self.constraint or 'frobenius'!r} of radius {self._radius} (‖W₀‖_F = "
                    f"{np.linalg.norm(flat):.6g}, distance to the set {np.linalg.norm(projected - flat):.3g}); "
                    "scale it into the set or raise radius")
            return projected  # inside C exactly (it moved by at most 1e-9·R)
        if self._center_kind == "random":
            return self._random_point(dim)
        return np.zeros(self._param_size(dim))

    def _start_point(self, dim: int) -> np.ndarray:
        """Internal iterate before the first step (data-independent)."""
        return self._center.copy()

    def _step_sizes_for(self, t_start: int, count: int) -> np.ndarray:
        """η_t for rounds t_start+1 … t_start+count (round 1 never steps)."""
        t = np.arange(t_start + 1, t_start + count + 1, dtype=np.float64)
        if self._steps_array is not None:
            if t_start + count > self._steps_array.size:
                raise ValueError(
                    f"step_sizes has {self._steps_array.size} entries but this call reaches round "
                    f"{t_start + count}: give a step size for every round"
                )
            return self._steps_array[t_start:t_start + count].copy()
        alpha = self._strong_convexity
        if alpha > 0:
            # Huai Alg. 1: η_t = 2(t−1)/((t−2)αt), capped at 2/(L+α) where the gradient map stops
            # contracting. The cap only binds for t ≲ (L+α)/α, the rounds Alg. 1 spends in its random
            # warm-up (T₁ = 16L²/α²); the ledger below is valid either way.
            cap = 2.0 / (self._smoothness + alpha) if math.isfinite(self._smoothness) else math.inf
            with np.errstate(divide="ignore", invalid="ignore"):
                paper = np.where(t > 2, 2.0 * (t - 1.0) / ((t - 2.0) * alpha * t), np.inf)
            steps = np.minimum(paper, cap)
            if not math.isfinite(cap):  # non-smooth loss without a cap: start at the paper's round 3
                steps = np.where(t > 2, paper, 2.0 / alpha)
        else:
            # Convex, no strong convexity: the usual R/(G√t) online-gradient schedule.
            steps = self._radius / (self._lipschitz * np.sqrt(t))
        steps[t < 2] = 0.0
        return steps

    # -- state -------------------------------------------------------------------------------------
    def _init_state(self, dim: int) -> None:
        self._dim = dim
        self._center = self._center_point(dim)
        self._w = self._start_point(dim)
        self._iterate_sum = np.zeros(self._param_size(dim))  # Σ_t w_t (internal; for the average output)
        if self._task == "metric":
            # Stored records as augmented rows (see onpair._metric_kernels): the buffer's s slots, or
            # the whole history, grown as records arrive.
            capacity = self._buffer_size if self._buffer_kind is not None else 0
            self._rows = np.empty((capacity, _metric_kernels.augmented_width(dim)))
            self._row_labels = np.zeros(capacity, dtype=np.int64)
            self._n_rows = 0
        elif self._buffer_kind is not None:
            # A finite buffer of s past records (any loss): O(s·d) memory whatever the stream length.
            self._buffer = np.empty((self._buffer_size, dim))
            self._buffer_signs = np.zeros(self._buffer_size, dtype=np.int8)
            self._n_buffered = 0
        elif self._loss.code == SQUARE:
            # Exact full history in O(d²) memory: counts, sums and second moments per class.
            self._counts = np.zeros(2)
            self._sums = np.zeros((2, dim))
            self._second_moments = np.zeros((2, dim, dim))
        else:
            self._positives = np.empty((0, dim))
            self._negatives = np.empty((0, dim))
            self._n_positives = 0
            self._n_negatives = 0

    @staticmethod
    def _grown(buffer: np.ndarray, used: int, needed: int) -> np.ndarray:
        if needed <= buffer.shape[0]:
            return buffer
        capacity = max(needed, 2 * buffer.shape[0], 64)
        grown = np.empty((capacity, buffer.shape[1]))
        grown[:used] = buffer[:used]
        return grown

    # -- the one learning path ---------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn from one record ``(x, y)``; ``y`` in {-1, +1}, {0, 1} or bool.

        Returns
        -------
        self
        """
        if self._task == "metric":
            label = class_label(y, 0, self._t, name="y")
            if (self._dim is not None and type(x) is np.ndarray and x.dtype == np.float64
                    and x.shape == (self._dim,) and not self._read_only):
                if self._learn_one_fast(x, label):
                    return self
            X = as_feature_vector(x, self._dim, self._t, name="x")
            codes, classes = self._encode_classes([label])
            return self._learn_block(X, codes, classes)
        if (self._dim is not None and type(x) is np.ndarray and x.dtype == np.float64
                and x.shape == (self._dim,) and not self._read_only):
            # NaN and ±inf fail the box test in _map_box_row, so they reach the general path's error.
            if self._learn_one_fast(x, binary_label(y, 0, self._t, name="y")):
                return self
        X = as_feature_vector(x, self._dim, self._t, name="x")
        labels = np.array([binary_label(y, 0, self._t, name="y")], dtype=np.int8)
        return self._learn_block(X, labels)

    def _learn_one_fast(self, x: np.ndarray, sign) -> bool:
        """The common single-record round without the block machinery; False sends the record down the
        general path instead (a release at this round, a clipped record, a first record, the norm map).

        It computes exactly what the general path computes, bit for bit (the tests feed the same stream
        both ways): the same box map, step size, ledger update, reservoir draw and kernel arithmetic.
        ``sign`` is the ±1 label (AUC) or the canonical class label (metric task)."""
        bounds = self._bounds
        if bounds.kind != "box" or not self._no_event_at(self._t + 1):
            return False
        row = _box_row_cache(self, bounds)
        z = np.empty(self._dim)
        if _map_box_row(x, row[0], row[1], row[2], z):
            return False  # outside the bounds: the general path counts it and warns
        t = self._t + 1
        step = self._step_size_one(t)
        slot = -1
        if self._buffer_kind is not None:
            size = self._buffer_size
            if self._buffer_kind == "fifo":
                slot = (t - 1) % size
            elif t <= size:
                slot = t - 1
            else:
                j = int(math.floor(self._buffer_rng.random() * t))  # the same double as random(1)[0]
                slot = j if j < size else -1
        if self._task == "metric":
            code = self._class_codes.get(sign)
            new_class = code is None
            if new_class:
                code = len(self._class_codes)
            if self._buffer_kind is None:
                slot = self._n_rows
                self._grow_metric_history(1)
            self._n_rows = _metric_kernels._metric_giga_one(
                z, code, self._w, self._rows, self._row_labels, self._n_rows, t, step, self._lam, self._center,
                self._radius, self._constraint, self._loss.code, slot, self._iterate_sum)
            if new_class:
                self._class_codes[sign] = code
        elif self._buffer_kind is not None:
            self._n_buffered = _kernels._giga_buffered_one(
                z, sign, self._w, self._buffer, self._buffer_signs, self._n_buffered, t, step, self._lam,
                self._center, self._radius, self._loss.code, slot, self._iterate_sum)
        elif self._loss.code == SQUARE:
            _kernels._giga_square_statistics_one(
                z, sign, self._w, self._counts, self._sums, self._second_moments, t, step, self._lam,
                self._center, self._radius, self._iterate_sum)
        else:
            if sign > 0:
                self._positives = self._grown(self._positives, self._n_positives, self._n_positives + 1)
            else:
                self._negatives = self._grown(self._negatives, self._n_negatives, self._n_negatives + 1)
            self._n_positives, self._n_negatives = _kernels._giga_full_history_one(
                z, sign, self._w, self._positives, self._n_positives, self._negatives, self._n_negatives, t,
                step, self._lam, self._center, self._radius, self._loss.code, self._iterate_sum)
        self._t = t
        self._after_round_fast(t, step)
        return True

    def _no_event_at(self, t: int) -> bool:
        """True when round t needs nothing but the step (the non-private learner: always)."""
        return True

    def _after_round_fast(self, t: int, step: float) -> None:
        pass

    def _step_size_one(self, t: int) -> float:
        """η_t for one round, the same number :meth:`_step_sizes_for` gives."""
        if self._steps_array is not None or t < 3:
            return float(self._step_sizes_for(t - 1, 1)[0])
        return _capped_step(self, t)

    def learn_many(self, X, y):
        """Learn from a block of records, exactly as repeated :meth:`learn_one` would.

        A block of 0 records (shape ``(0, d)``, with 0 labels) is a no-op: nothing is learned, spent or
        released, and a fresh learner does not fix its number of features from it. It is still
        validated: a block that is not 2-D, or whose ``d`` differs from the learner's, is an error.
        (The offline estimators' ``fit`` refuses 0 records instead: it has one release to make.)

        Returns
        -------
        self
        """
        X = as_feature_block(X, self._dim, self._t, name="X")
        if self._task == "metric":
            labels = self._class_labels(y, X.shape[0])
            codes, classes = self._encode_classes(labels)
            return self._learn_block(X, codes, classes)
        labels = as_label_block(y, X.shape[0], self._t, name="y")
        return self._learn_block(X, labels)

    def _class_labels(self, y, n_records: int) -> list:
        """Validated class labels of a block (metric task)."""
        values = label_array(y, "y")
        if values.shape[0] != n_records:
            raise ValueError(f"X has {n_records} records but y has {values.shape[0]} labels")
        return [class_label(v, i, self._t, name="y") for i, v in enumerate(values)]

    def _encode_classes(self, labels: list):
        """Integer codes of class labels and the label → code map including new classes (committed
        only once the block is learned, so a failed call adds no class)."""
        return class_codes(labels, self._class_codes)

    def _learn_block(self, X: np.ndarray, signs: np.ndarray, classes=None):
        if self._read_only:
            raise RuntimeError(self._read_only)
        m = X.shape[0]
        if m == 0:
            return self
        Z, clipped = self._bounds.transform(X)
        return self._learn_mapped(Z, signs, int(np.count_nonzero(clipped)), classes)

    def _learn_mapped(self, Z: np.ndarray, signs: np.ndarray, n_clipped: int, classes=None):
        """Learn records already mapped onto the diameter-2 domain (the offline estimators map once).

        ``signs`` are ±1 labels (AUC) or int64 class codes (metric task, with ``classes`` the label map
        to commit)."""
        if self._read_only:
            raise RuntimeError(self._read_only)
        m = Z.shape[0]
        # Everything that can raise happens before any state changes: planning (the budget check)
        # and the warnings (which raise under warnings-as-errors). A failed call changes nothing, so
        # retrying it cannot learn a record twice.
        steps = self._step_sizes_for(self._t, m)
        plan = self._plan_releases(self._t, steps)
        pending = self._pending_warnings(n_clipped, m)
        for message, category, _ in pending:
            warnings.warn(message, category, stacklevel=4)  # attributed to the caller of learn_*
        for _, _, flag in pending:
            setattr(self, flag, True)  # only once no warning raised (warnings as errors): all or none
        if self._dim is None:
            self._init_state(Z.shape[1])
        n_releases = int(plan["slots"].max()) + 1
        if self._task == "metric":
            return self._learn_metric(Z, signs, n_clipped, classes, steps, plan, n_releases)
        noise = self._noise_rng.standard_normal((n_releases, self._dim)) if n_releases else np.zeros((0, self._dim))
        released = np.zeros((n_releases, self._dim))
        if self._buffer_kind is not None:
            slots = self._buffer_slots(self._t, m)
        elif self._loss.code != SQUARE:
            n_pos = int(np.count_nonzero(signs > 0))
            self._positives = self._grown(self._positives, self._n_positives, self._n_positives + n_pos)
            self._negatives = self._grown(self._negatives, self._n_negatives, self._n_negatives + m - n_pos)
        # From here to the end nothing raises: the kernel and the bookkeeping commit together.
        if self._buffer_kind is not None:
            self._n_buffered = _kernels._giga_buffered(
                Z, signs, self._w, self._buffer, self._buffer_signs, self._n_buffered, self._t, steps,
                self._lam, self._center, self._radius, self._loss.code, slots, plan["slots"], plan["sigmas"],
                noise, released, self._iterate_sum,
            )
        elif self._loss.code == SQUARE:
            _kernels._giga_square_statistics(
                Z, signs, self._w, self._counts, self._sums, self._second_moments, self._t, steps,
                self._lam, self._center, self._radius, plan["slots"], plan["sigmas"], noise, released,
                self._iterate_sum,
            )
        else:
            self._n_positives, self._n_negatives = _kernels._giga_full_history(
                Z, signs, self._w, self._positives, self._n_positives, self._negatives, self._n_negatives,
                self._t, steps, self._lam, self._center, self._radius, self._loss.code, plan["slots"],
                plan["sigmas"], noise, released, self._iterate_sum,
            )
        self._t += m
        self._n_clipped += n_clipped
        self._after_block(plan, released)
        return self

    def _learn_metric(self, Z, codes, n_clipped, classes, steps, plan, n_releases):
        """The metric task's part of :meth:`_learn_mapped` (after planning; nothing here raises)."""
        m, dim = Z.shape
        size = self._param_size(dim)
        # Symmetric noise, isotropic in the Frobenius norm: σ·N is the Gaussian mechanism for a
        # Frobenius sensitivity (onpair.matrix_geometry.symmetric_noise).
        noise = symmetric_noise(self._noise_rng, n_releases, dim) if n_releases else np.zeros((0, size))
        released = np.zeros((n_releases, size))
        if self._buffer_kind is not None:
            slots = self._buffer_slots(self._t, m)
        else:
            slots = np.arange(self._n_rows, self._n_rows + m, dtype=np.int64)
            self._grow_metric_history(m)
        self._n_rows = _metric_kernels._metric_giga(
            Z, codes, self._w, self._rows, self._row_labels, self._n_rows, self._t, steps, self._lam,
            self._center, self._radius, self._constraint, self._loss.code, slots, plan["slots"],
            plan["sigmas"], noise, released, self._iterate_sum,
        )
        if classes is not None:
            self._class_codes = classes
        self._t += m
        self._n_clipped += n_clipped
        self._after_block(plan, released)
        return self

    def _grow_metric_history(self, extra: int) -> None:
        """Room for ``extra`` more augmented rows (and their labels) in the metric task's full history."""
        self._rows = self._grown(self._rows, self._n_rows, self._n_rows + extra)
        if self._row_labels.shape[0] < self._rows.shape[0]:
            grown = np.zeros(self._rows.shape[0], dtype=np.int64)
            grown[:self._n_rows] = self._row_labels[:self._n_rows]
            self._row_labels = grown

    def _buffer_slots(self, t_start: int, m: int) -> np.ndarray:
        """Buffer slot of each record of the block (−1: not kept), from public randomness only.

        FIFO: round t overwrites slot (t − 1) mod s. Reservoir (Vitter's Algorithm R): the first s
        records fill the slots; record t > s replaces slot j, j uniform on {0, …, t − 1}, when j < s, so
        the buffer is a uniform sample of the past without replacement (a record is in at most one slot).
        One draw per record, in stream order, so blocks and single records draw the same slots."""
        t = np.arange(t_start + 1, t_start + m + 1, dtype=np.int64)
        size = self._buffer_size
        if self._buffer_kind == "fifo":
            return (t - 1) % size
        slots = t - 1
        late = t > size
        if late.any():
            # j = ⌊u·t⌋ with u uniform on [0, 1): one double per record, so a block and its records
            # fed singly draw the same slots (Generator.integers buffers 32-bit draws, which would not).
            draws = np.floor(self._buffer_rng.random(int(late.sum())) * t[late]).astype(np.int64)
            slots[late] = np.where(draws < size, draws, -1)
        return slots

    def _pending_warnings(self, n_clipped: int, m: int) -> list:
        """Warnings about the coming block as (message, category, flag set once issued)."""
        if n_clipped and not self._warned_clipping:
            # No count in the message: warnings end up in logs, and the count is not private.
            return [(
                f"records lay outside the declared feature bounds ({self._bounds!r}) and were clipped to "
                "them; declare the data set's public bounds (bounds= or norm_bound=) to avoid shrinking "
                "the signal. privacy_report()['n_clipped'] has the (curator-only) count.",
                UserWarning, "_warned_clipping",
            )]
        return []

    def _plan_releases(self, t_start: int, steps: np.ndarray) -> dict:
        """Which rounds of the block release, with which σ. The non-private learner releases nothing."""
        return {"slots": np.full(steps.shape[0], -1, dtype=np.int64), "sigmas": np.zeros(0)}

    def _after_block(self, plan: dict, released: np.ndarray) -> None:
        pass

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

    # -- scoring -----------------------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """A copy of the model a user may see (subclasses decide which one)."""
        raise NotImplementedError

    def _as_visible(self, flat: np.ndarray) -> np.ndarray:
        """A parameter as users see it: the vector (AUC) or the d×d matrix (metric task)."""
        if self._task == "metric":
            return flat.reshape(self._dim, self._dim)
        return flat

    def transform(self, X) -> np.ndarray:
        """Records mapped so that Euclidean distances are the visible metric's (metric task).

        ``x ↦ L φ(x)`` with φ the public bounds map and ``LᵀL = W₊``, the positive semi-definite part of
        :attr:`model`: ``‖L φ(x) − L φ(x')‖² = (φ(x) − φ(x'))ᵀ W₊ (φ(x) − φ(x'))``. Any Euclidean
        nearest-neighbour method on the output uses the learned (released) metric.
        """
        if self._task != "metric":
            raise ValueError("transform is for task='metric'; use decision_function for the AUC task")
        factor = metric_factor(self.model)
        X = as_feature_block(X, self._dim, 0, name="X")
        Z, _ = self._bounds.transform(X)
        return Z @ factor.T

    def decision_function(self, X) -> np.ndarray:
        """Scores ``wᵀ φ(x)`` of records under the visible :attr:`model` (φ: the public bounds map).

        Higher scores rank a record as more likely positive; AUC depends only on this order.
        """
        if self._task == "metric":
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

    def _require_dim(self):
        if self._dim is None:
            raise ValueError(
                "the number of features is unknown until the first record: pass n_features=, "
                "array bounds, or learn a record first"
            )
