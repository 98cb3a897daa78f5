"""OnPairStats: online private pairwise learning from continually released class statistics.

Instead of perturbing an iterate at a few release rounds (OnPairStrC), the learner releases, after
**every** record, the per-class counts, sums and second moments of the stream seen so far, through a
continual-release mechanism whose zCDP cost is fixed once for the whole stream
(:mod:`onpair.privacy.continual`). The model at any round is post-processing of the latest release:
the exact minimiser of the regularised pairwise square loss over all opposite-label pairs seen (AUC
task), or a discriminant metric (metric task). No record is stored, each round costs
O(k) = O(C·d²), and the model is useful from the first few hundred records on
(docs/algorithms.md#continual-release, docs/continual_release.md). With ``task="classify"`` the
model is a calibrated multi-class classifier over a public class domain (the linear-discriminant posterior
of :mod:`onpair.statistics.discriminant`); every task's ``predict_proba`` is the calibrated posterior of the
latest release.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import as_feature_block, as_feature_vector, check_positive, class_label
from ..core.stream import StreamLearner
from ..core.task import CLASSIFY, make_task
from ..privacy.accountant import ZCDPAccountant, charge, check_accountant, refusal
from ..privacy.continual import MAX_RECORDS
from ..privacy.conversions import METHODS, rho_from_dp
from ..privacy.exceptions import PrivacyWarning
from ..privacy.events import ContinualRelease
from ..privacy.reports import build_report, extend_report, warn_large_delta
from ..privacy.signal import NOTHING_RELEASED
from ._kernels import _auc_square_model
from .discriminant import check_covariance_model, linear_discriminant, ranking_discriminant
from .model import (BASE_RIDGE, DEFAULT_WEIGHTS, NOISE_RIDGE_FACTOR, check_task, check_weights, choose_ridge,
                    model_kind, moment_layout, released_model,
                    released_signal)
from .released import MECHANISMS, ReleasedStatistics
from .warmup import WarmupLearning


class OnPairStats(WarmupLearning, StreamLearner, saved=True):
    """Online (ε, δ)-DP pairwise learner on continually released class statistics.

    After every record the learner releases the prefix sum of the per-class statistics (counts, sums,
    second moments of the records mapped by the public bounds) through a continual-release mechanism,
    and its model is computed from that release alone: for the AUC task the minimiser of the
    regularised pairwise square loss over every opposite-label pair seen,
    ``w ∝ (C₊ + C₋ + (λ/2)I)⁻¹(μ₊ − μ₋)`` (``model_type="square"``) or the centroid difference
    ``μ₊ − μ₋`` (``model_type="centroid"``); for the metric task the discriminant metric (Fisher's
    directions between the class means, scaled by the within-class spread; docs/algorithms.md#discriminant-metric)
    or the within-class-whitening metric ``W = (S_w + λI)⁻¹``; for the classifier (``task="classify"``) the
    calibrated linear discriminant over every class of the public domain (docs/algorithms.md#classifier).
    :meth:`predict_proba` is the calibrated posterior of the latest release: for the AUC task, along the
    released model's direction (it ranks exactly as the model). The budget is spent once for the whole
    stream, whatever the number of classes (Δ is per record); ``privacy_report()`` has one row per tree
    level or factorisation.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        The (ε, δ)-DP guarantee for the whole stream (every release together). Neighbouring streams
        differ in one record, replaced at the same position; a record replayed k times costs more:
        ``privacy_report(passes=k)["record_level"]`` (exactly k·ρ over same-order passes of n ≥ band
        records with the default mechanism).
    task : {"auc", "metric", "classify"}, default "auc"
        Bipartite ranking (labels −1/+1, 0/1 or booleans), metric learning or classification (class
        labels of the public domain ``classes``).
    classes : sequence of labels, optional
        The **public** class domain of the metric task and of the classifier (required there: at least
        two labels for the classifier, each once); every label must be one of them, and a label outside it
        is a ValueError that changes nothing. The AUC task's domain is always {negative, positive}.
    model_type : {"square", "centroid", "discriminant", "whitening", "lda"}, optional
        Default "square" (AUC), "discriminant" (metric task: Fisher's discriminant directions scaled by
        the within-class spread, :func:`onpair.statistics.model.discriminant_metric`;
        "whitening" is the inverse regularised within-class covariance) and "lda" (the classifier).
    lam : float or "auto", default "auto"
        The ridge λ. "auto" = 10⁻³ plus the spectral norm the noise of the released covariances is
        expected to reach (computed from the noise scale and the released counts, so it is itself
        post-processing): large early in the stream (the model tends to the centroid), vanishing like 1/n.
        The classifier's "auto" is :func:`onpair.statistics.discriminant.discriminant_ridge`.
    covariance : {"auto", "full", "diagonal"} or float in [0, 1], default "auto"
        The classifier's within-class covariance model (:func:`onpair.statistics.discriminant.linear_discriminant`:
        the off-diagonal entries shrunk towards 0 by a public rule, not at all, entirely, or by the number
        given). ``task="classify"`` only.
    moments : {"pooled", "per-class"}, optional
        How the second moments are released. The classifier needs only the pooled within-class covariance,
        so by default it releases **one** second moment for all classes (``"pooled"``: the same Δ, and 1/C of
        the noise variance of a sum of C noisy moments; docs/algorithms.md#classifier). The AUC and metric
        tasks release one per class (their only choice).
    weights : (float, float, float), default (0.8, 1.0, 0.6)
        Public weights of counts, sums and second moments: they share the noise between the three
        (onpair.privacy.statistics_sensitivity explains why the default costs no more than the sums alone). Each
        lies in [1e-50, 1e50] (:data:`onpair.statistics.model.WEIGHT_RANGE`; the moment weight may also be 0).
    mechanism : {"toeplitz", "epochs", "tree"}, default "toeplitz"
        How the prefix sums are released (:mod:`onpair.privacy.continual`): the banded square-root
        factorisation (memory O(band·k), any stream length at the cost ρ; the best progressive AUC up to a
        few thousand records on synthetic streams), doubling epochs of least-squares trees (any stream
        length at the cost ρ, error O(log² t): **the better choice for streams of more than ~5,000
        records**, e.g. 0.646 against 0.608 at 8,000 records, ε = 1, on the synthetic streams), or one tree
        (with ``horizon``; unbounded otherwise, with level shares ρ_h ∝ 1/h²).
    band : int, optional
        Band of the factorisation (default :data:`onpair.privacy.continual.DEFAULT_BAND`). A band, a
        horizon or a number of features whose state would exceed
        :data:`onpair.privacy.continual.MAX_STATE_FLOATS` is refused (a ValueError naming it).
    horizon : int, optional
        A known stream length: the tree is sized for it and records after it are not learned (the model
        is frozen, with a warning); the factorisation uses it to stop.
    bounds, norm_bound : public feature bounds (:class:`onpair.core.bounds.FeatureBounds`): one of them is required
        (no default; a ValueError says where public bounds come from).
    n_features : int, optional
    accounting : {"gaussian", "tight", "lemma3"}, default "gaussian"
        (ε, δ) → ρ conversion; "gaussian" is exact here (the whole release is one Gaussian mechanism).
    private : bool, default True
        False gives the non-private twin: the exact statistics, no noise.
    seed : int, optional
        For reproducible experiments only.
    discover_bounds : bool, int or dict, default False
        Find the box privately inside the declared (loose) ``bounds`` from a warm-up of the stream, with a
        public share of the one budget (:mod:`onpair.core.discovery`): True (a warm-up of
        m = min(max(records_needed(d, 0.2ρ), 500), 1,000) records, 20 % of ρ), a warm-up length m, or a dict
        (``warmup``, ``rho_share``, the finder's parameters). The first m records are held inside the learner,
        unreleased (a snapshot holds them; the model meanwhile is the data-independent prior: scores 0),
        then the finder runs on them and they and every later record are learned in the box it found; a later
        record outside it is clipped to it (part of the mechanism, counted in the curator-only ``n_clipped``,
        no warning). ``finish_warmup()`` ends a warm-up early (a stream shorter than m). Recommended whenever
        the documentation gives no tight range (docs/guide.md, "Which bounds do I declare"); needs a box.
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`): the release's cost is also
        charged to it, with the first record, and a learner it cannot pay for refuses that record (nothing
        changes). Not saved in snapshots: a learner with one refuses ``save``.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OnPairStats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(2000, 3)); y = X[:, 0] + 0.1 * rng.standard_normal(2000) > 0.5
    >>> learner = OnPairStats(epsilon=1.0, bounds=(0, 1), seed=0).learn_many(X, y)
    >>> bool(learner.model[0] > abs(learner.model[1]))
    True
    >>> report = learner.privacy_report()
    >>> report["epsilon_spent"] <= 1.0, report["releases"][0]["nodes_released"]
    (True, 2000)
    """

    private = True
    _non_private_mode = "exact statistics"

    def __init__(self, *, epsilon=1.0, delta=1e-5, task="auc", classes=None, model_type=None, lam="auto",
                 covariance="auto", moments=None, weights=DEFAULT_WEIGHTS, mechanism="toeplitz", band=None,
                 horizon=None, bounds=None, norm_bound=None, n_features=None, accounting="gaussian", private=True,
                 seed=None, accountant=None, discover_bounds=False):
        self.epsilon = epsilon
        self.delta = delta
        self.task = task
        self.classes = classes
        self.model_type = model_type
        self.lam = lam
        self.covariance = covariance
        self.moments = moments
        self.weights = weights
        self.mechanism = mechanism
        self.band = band
        self.horizon = horizon
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.n_features = n_features
        self.accounting = accounting
        self.seed = seed
        self.discover_bounds = discover_bounds
        if not isinstance(private, (bool, np.bool_)):
            raise TypeError(f"private must be True or False, got {private!r}")
        self.private = bool(private)
        self._shared = check_accountant(accountant, type(self).__name__)
        if self._shared is not None and not self.private:
            raise ValueError("accountant= is for a private learner: the non-private twin (private=False) has no "
                             "finite ε to charge")
        self._task = CLASSIFY if check_task(task) == "classify" else make_task(task)
        self._epsilon = check_positive(epsilon, "epsilon")
        self._delta = check_positive(delta, "delta")
        if not self._delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        if accounting not in METHODS:
            raise ValueError(f"accounting must be one of {METHODS}, got {accounting!r}")
        self._classes = self._check_classes(classes)
        self._model_kind = model_kind(task, model_type)
        check_covariance_model(task, covariance)
        self._pooled = moment_layout(task, moments)
        if isinstance(lam, str):
            if lam != "auto":
                raise ValueError(f"lam must be a number >= 0 or 'auto', got {lam!r}")
            self._lam = None
        else:
            self._lam = check_positive(lam, "lam", allow_zero=True)
        self._weights, self._sensitivity = check_weights(weights)
        if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
        if band is not None:
            if mechanism != "toeplitz":
                raise ValueError("band is for mechanism='toeplitz'")
            if isinstance(band, (bool, np.bool_)) or not isinstance(band, (int, np.integer)):
                raise TypeError(f"band must be a positive integer, got {band!r} ({type(band).__name__})")
            if band < 1:
                raise ValueError(f"band must be a positive integer, got {band!r}")
        self._rho_budget = rho_from_dp(self._epsilon, self._delta, method=accounting)
        self._horizon = self._horizon_value()
        # The continual release's cost is fixed when it is built; it is committed with the first record.
        self._accountant = ZCDPAccountant(self._rho_budget, owner="OnPairStats") if self.private else None
        self._budget_committed = False
        self._setup_stream(bounds, norm_bound, n_features, seed)
        self._setup_discovery(discover_bounds, self._horizon)
        self._stats = None
        self._frozen_warned = False
        self._model_cache = None
        self._posterior_cache = None
        if self._dim is not None:
            self._init_state(self._dim)
        elif self.private:
            # The mechanism is built with the first record; a twin of one feature checks its parameters
            # (band, horizon, the noise scale of the weights and ε) now, so that they fail here, not there.
            self._new_state(1)
        warn_large_delta(type(self).__name__, self._delta, self._horizon_value(), what="horizon", stacklevel=2)

    # -- configuration -----------------------------------------------------------------------------
    def _check_classes(self, classes):
        if self._task.name == "auc":
            if classes is not None:
                raise ValueError("classes is for task='metric' or 'classify'; the AUC task's labels are -1/+1, 0/1 or booleans")
            return None
        if classes is None:
            raise ValueError(f"task={self._task.name!r} needs the public class domain: classes=[...] (every label "
                             "the stream may carry; read it from the data set's documentation, never from the data)")
        if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
            raise TypeError(f"classes must be a sequence of class labels, got {classes!r}")
        canonical = [class_label(c, i, 0, name="classes") for i, c in enumerate(classes)]
        least = 2 if self._task.name == "classify" else 1
        if len(canonical) < least or len(set(canonical)) != len(canonical):
            raise ValueError(f"classes must list at least {least} label{'s' if least > 1 else ''}, each once, for "
                             f"task={self._task.name!r}, got {classes!r}")
        return {label: code for code, label in enumerate(canonical)}

    def _horizon_value(self):
        if self.horizon is None:
            return None
        if isinstance(self.horizon, (bool, np.bool_)) or not isinstance(self.horizon, (int, np.integer)) \
                or not 1 <= self.horizon <= MAX_RECORDS:
            raise ValueError(f"horizon must be a positive integer of at most 2**62, got {self.horizon!r}")
        return int(self.horizon)

    @property
    def _n_classes(self) -> int:
        return 2 if self._classes is None else len(self._classes)

    def _new_state(self, dim: int, rho=None) -> ReleasedStatistics:
        """A fresh release state for ``dim`` features with the budget ``rho`` (default: the model's share)
        (nothing of the learner changes; a ValueError names the features, the weights and the mechanism's
        parameter when the release cannot be built)."""
        try:
            return ReleasedStatistics.build(
                dim=dim, n_classes=self._n_classes, weights=self._weights,
                rho=(self._model_rho(dim) if rho is None else rho) if self.private else None,
                mechanism=self.mechanism, band=self.band, horizon=self._horizon_value(), pooled=self._pooled)
        except ValueError as exc:
            raise ValueError(f"the release of the statistics of {dim} features in {self._n_classes} classes "
                             f"(weights {self._weights}, epsilon={self._epsilon:g}): {exc}") from None

    def _init_state(self, dim: int) -> None:
        self._stats = self._new_state(dim)
        self._dim = dim

    # -- learning ----------------------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one record ``(x, y)``: a ±1/0/1/bool label (AUC) or a label of ``classes`` (metric).

        Returns
        -------
        self
        """
        # ±1 as given (the wrapper's labels) is valid as it is; anything else goes through the task's checks
        label = y if type(y) is int and (y == 1 or y == -1) and self._classes is None else \
            self._task.label_one(y, self._t)
        stats = self._stats
        if (stats is not None and type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (self._dim,)
                and self._bounds.kind == "box" and not self._read_only and not self._holding
                and not self._capacity_reached() and (self._budget_committed or self._shared is None)):
            # The common round without the block machinery: a finite record (clipped to the box once the
            # clipping warning has been issued: the first clipped record takes the general path, which warns),
            # a known class; the same row and the same noise as the block path, bit for bit.
            code = (1 if label > 0 else 0) if self._classes is None else self._classes.get(label)
            if code is not None:
                clip = self._warned_clipping or self._silent_clip
                status = stats.add_box_one(x, self._bounds.box_rows(self._dim), code, self._noise_rng, clip)
                if status == 0 or (status == 1 and clip):
                    self._t += 1
                    self._n_clipped += status
                    if not self._budget_committed:
                        self._commit_budget()
                    return self
        X = as_feature_vector(x, self._dim, self._t, name="x")
        return self._learn_block(X, self._task.single_block(label))

    def _capacity_reached(self) -> bool:
        return self._horizon is not None and self._stats.n_seen >= self._horizon

    def _codes(self, labels) -> np.ndarray:
        """Class codes of validated labels: 0 negative / 1 positive (AUC), the public domain's codes
        (metric); a label outside the domain is a ValueError naming the record."""
        if self._classes is None:
            return (np.asarray(labels) > 0).astype(np.int64)
        codes = np.empty(len(labels), dtype=np.int64)
        for i, label in enumerate(labels):
            code = self._classes.get(label)
            if code is None:
                raise ValueError(f"y[{i}] = {label!r} (stream position {self._t + i + 1}) is not one of the public "
                                 f"classes {list(self._classes)}")
            codes[i] = code
        return codes

    def _learn_mapped(self, Z, labels, n_clipped):
        if self._read_only:
            raise RuntimeError(self._read_only)
        codes = self._codes(labels)
        m = Z.shape[0]
        capacity = self._horizon_value()
        learned = m if capacity is None else max(0, min(m, capacity - self._learned()))
        pending = self._pending_warnings(n_clipped, m)
        if learned < m and not self._frozen_warned:
            pending.append(self._frozen_warning(capacity))
        fresh = self._new_state(Z.shape[1]) if self._stats is None else None  # may fail: nothing changed yet
        if self.private and not self._budget_committed and learned > 0:
            # The shared accountant is asked before anything changes (the own budget was planned to fit).
            exc = refusal([self._shared], [self._release_event((fresh or self._stats).mechanism)])
            if exc is not None:
                raise exc
        self._issue(pending)
        if fresh is not None:
            self._stats, self._dim = fresh, Z.shape[1]
        self._stats.add(Z[:learned], codes[:learned], self._noise_rng)
        self._t += m
        self._n_clipped += n_clipped
        self._commit_budget()
        return self

    def _frozen_warning(self, capacity: int):
        return (f"OnPairStats: the horizon of {capacity} records is reached; later records are not learned and "
                "the model stays at the last release (see privacy_report()).", PrivacyWarning, self._mark_frozen)

    def _commit_budget(self) -> None:
        """Spend the release's cost once, with its first record (nothing here raises: the cost was planned
        to fit the budget when the mechanism was built)."""
        if self._budget_committed:
            return
        if self.private and self._learned() > 0:
            self._budget_committed = True
            charge([self._accountant, self._shared], [self._release_event(self._stats.mechanism)])

    def _release_event(self, mechanism):
        """The continual release of the whole stream, as one event: the mechanism's cost, capped at the budget
        it was calibrated to (the rounding of the root finders)."""
        description = mechanism.describe()
        cost = min(float(description["rho_spent_bound"]), float(description["rho"]))  # ρ, or the finder's remainder
        return ContinualRelease.of(mechanism, what="continual release of the class statistics", rho=cost)

    def _mark_frozen(self) -> None:
        self._frozen_warned = True

    def _learned(self) -> int:
        return 0 if self._stats is None else self._stats.n_seen

    # -- the model (post-processing of the current release) ----------------------------------------
    def class_statistics(self):
        """Counts, means and covariances decoded from the current release
        (:class:`onpair.statistics.model.ClassStatistics`); all public."""
        self._require_dim()
        return self._stats.class_statistics()

    def ridge(self) -> float:
        """λ used by the current model: ``lam``, or for "auto" 10⁻³ plus the noise ridge (public): the expected
        spectral norm of the covariances' noise (AUC and ``"whitening"``), or the noise standard deviation of
        one diagonal entry of the pooled within-class covariance (``"discriminant"``); the classifier's is
        :func:`onpair.statistics.discriminant.discriminant_ridge`."""
        if self._lam is not None:
            return self._lam
        if self._model_kind == "lda":
            return self.posterior().ridge
        return choose_ridge(self._model_kind, self.class_statistics())

    def posterior(self):
        """The calibrated posterior of the current release (:class:`onpair.statistics.discriminant.LinearDiscriminant`,
        public: post-processing), over the classes in the order of ``classes`` (the AUC task: negative,
        positive). For the classifier the linear discriminant (:func:`~onpair.statistics.discriminant.linear_discriminant`);
        for the AUC task the binary posterior along the released model (:func:`~onpair.statistics.discriminant.ranking_discriminant`:
        its log-odds increase with the model's score, so it ranks exactly as :attr:`model`). Before any
        record: the uniform distribution. Not for the metric task."""
        if self._task.name == "metric":
            raise ValueError("posterior() is for task='auc' or 'classify'; with task='metric' use transform(X) or model")
        self._require_dim()
        key = self._learned()
        if self._posterior_cache is None or self._posterior_cache[0] != key:
            stats = self._stats.class_statistics()
            if self._model_kind == "lda":
                posterior = linear_discriminant(stats, covariance=self.covariance,
                                                ridge="auto" if self._lam is None else self._lam)
            else:
                posterior = ranking_discriminant(stats, self._model_kind, self.ridge())
            self._posterior_cache = (key, posterior)
        return self._posterior_cache[1]

    def _mapped(self, X) -> np.ndarray:
        self._require_dim()
        Z, _ = self._bounds.transform(as_feature_block(X, self._dim, 0, name="X"))
        return Z

    def predict_proba(self, X) -> np.ndarray:
        """P(c | x) of every record (rows of ``X``) and class (columns: ``classes``' order; the AUC task's
        negative then positive), from the latest release (:meth:`posterior`); rows sum to 1."""
        posterior = self.posterior()
        return posterior.predict_proba(self._mapped(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class of every record (the arg-max of :meth:`predict_proba`): labels of
        ``classes`` (an object array), or −1/+1 for the AUC task."""
        best = np.argmax(self.predict_proba(X), axis=1)
        if self._classes is None:
            return np.where(best == 1, 1, -1)
        return np.array(list(self._classes), dtype=object)[best]

    def decision_function(self, X) -> np.ndarray:
        """AUC task: the released model's scores ``wᵀφ(x)`` (the ranking). Classifier: with two classes the
        log-odds of ``classes[1]`` against ``classes[0]``, shape (m,); with more, the unnormalised
        log-posteriors, shape (m, C) (their log-softmax is ``log P(c | x)``), as scikit-learn's classifiers."""
        if self._model_kind == "lda":
            scores = self.posterior().decision_function(self._mapped(X))
            return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores
        return super().decision_function(X)

    @property
    def model(self) -> np.ndarray:
        """The model computed from the current release: a vector (AUC), a d×d matrix (metric task), or the
        classifier's coefficients, one row per class (C, d) (:meth:`posterior` has the whole model)."""
        self._require_dim()
        if self._model_kind == "lda":
            return self.posterior().coef.copy()
        key = self._learned()
        if self._model_cache is None or self._model_cache[0] != key:
            model = self._square_model() if self._model_kind == "square" else None
            if model is not None:
                self._model_cache = (key, model)
                return model.copy()
            stats = self._stats.class_statistics()
            ridge = None if self._model_kind == "centroid" else self.ridge()
            model = released_model(self._model_kind, stats, ridge)
            self._model_cache = (key, model)
        return self._model_cache[1].copy()

    def _square_model(self):
        """The AUC square model by the fused kernel (the per-round hot path), or None where its Cholesky
        fails (an indefinite noisy scatter: the general path projects it)."""
        stats = self._stats
        sd = math.sqrt(stats.noise_variance())
        a, _, m = self._weights
        floor = max(1.0, 2.0 * sd / a)
        moment_sd = sd / m if m > 0 else 0.0
        out = np.empty(self._dim)
        auto = -1.0 if self._lam is not None else BASE_RIDGE  # < 0: the given lam
        used = _auc_square_model(stats.estimate(), self._dim, stats.weight_array, floor, moment_sd,
                                 0.0 if self._lam is None else self._lam, auto, NOISE_RIDGE_FACTOR, out)
        return out if used >= 0.0 else None

    @property
    def n_releases(self) -> int:
        """Releases so far: one per record learned."""
        return self._learned() if self.private else 0

    # -- snapshots ---------------------------------------------------------------------------------
    def _state_kind(self) -> str:
        return ReleasedStatistics.kind

    def _settings(self) -> dict:
        return {"private": self.private, "task": self._task.name, "classes": None if self._classes is None else
                list(self._classes), "model": self._model_kind, "lam": self._lam, "weights": list(self._weights),
                "mechanism": self.mechanism, "band": self.band, "horizon": self._horizon_value(),
                "epsilon": self._epsilon, "delta": self._delta, "accounting": self.accounting,
                "rho_budget": self._rho_budget, **self._discovery_settings(),
                # the classifier's (the earlier tasks' settings, and so their snapshots, are unchanged)
                **({"moments": "pooled" if self._pooled else "per-class", "covariance": self.covariance}
                   if self._task.name == "classify" else {})}

    def _export_own(self, state, arrays):
        state["frozen_warned"] = self._frozen_warned
        if self._dim is not None:
            self._stats.export(state, arrays)
        if self._range is not None:
            self._range.export(state, arrays)

    def _own_state_keys(self, dim):
        return (["frozen_warned"] + (["statistics"] if dim is not None else [])
                + (["range_discovery"] if self._range is not None else []))

    def _restore_own(self, state, reader, t, dim):
        frozen = reader.boolean(state["frozen_warned"], "frozen_warned")
        self._restore_discovery(state, reader, t, dim)
        if dim is not None:
            if self._dim is None:
                self._init_state(dim)
            capacity = self._horizon_value()
            learned = 0 if self._holding else t if capacity is None else min(t, capacity)
            self._stats = ReleasedStatistics.restore(self._stats, learned, state, reader)
        self._frozen_warned = frozen
        self._accountant = ZCDPAccountant(self._rho_budget, owner="OnPairStats") if self.private else None
        self._budget_committed = False
        self._spend_discovery()
        self._commit_budget()

    @property
    def accountant(self):
        """A read-only view of the learner's own zCDP accountant (the release's cost, spent with the first
        record; an empty one for the non-private twin). The shared one given as ``accountant=`` is
        :attr:`shared_accountant`."""
        return (self._accountant or ZCDPAccountant(self._rho_budget, owner="OnPairStats")).view()

    @property
    def shared_accountant(self):
        """The accountant given as ``accountant=`` (shared with other models), or None."""
        return self._shared

    # -- what has been spent -----------------------------------------------------------------------
    def privacy_report(self, passes=1, order="same") -> dict:
        """What has been spent and released so far.

        The keys of every report (:func:`onpair.privacy.reports.build_report`; ``rho_spent`` is the whole
        stream's cost for a record at one position, committed with the first record), ``releases`` (one
        row: the :class:`onpair.privacy.events.ContinualRelease` of the whole stream, with its
        ``mechanism``, ``kappa2``, ``horizon`` and ``nodes_released`` so far), and ``frozen``, ``schedule``
        (the mechanism's public description, one entry per tree level or factorisation), ``buffer``
        (None), ``sensitivity_now`` (Δ of one record's statistics), ``n_clipped`` (curator-only),
        ``noise_sd`` (the per-coordinate noise of the current release), ``expected_cosine`` and
        ``noise_dominated`` (:func:`onpair.statistics.model.released_signal`: the released class means'
        direction against its noiseless one, below 1/2 the model is mostly noise; public) and
        ``record_level``.

        ``record_level`` is the cost of a **record** learned ``passes`` times. With ``order="same"`` (a data
        set of n records replayed k times in the same order: ``n_seen`` = k·n) it is exact, computed from
        the continual-release mechanism's encoder (:func:`onpair.privacy.replay.replay_rho`): with the
        default banded factorisation and n ≥ its band (64), exactly k·ρ, since the copies' encoder columns
        do not overlap (four passes of river's Phishing at ε = 1: record-level ε 2.15, not the group
        bound's 4.75). Shuffled passes, bagging or any other schedule: ``order="any"``, the group bound
        k²ρ. Example: ``learner.privacy_report(passes=4)["record_level"]["epsilon"]``.
        """
        if not self.private:
            return extend_report(super().privacy_report(passes, order), public={"sensitivity_now": self._sensitivity})
        mechanism = None if self._stats is None else self._stats.mechanism
        events = [ContinualRelease.of(mechanism, e.what, rho=e.rho) if isinstance(e, ContinualRelease) else e
                  for e in self._accountant.events]  # the continual release brought up to date; the finder's as spent
        horizon = self._horizon_value()
        frozen = horizon is not None and self._t >= horizon
        signal = self._signal()
        noise_dominated = signal["noise_dominated"]
        status = (f"frozen: the horizon of {horizon} records is reached" if frozen else
                  self._warmup_status() or "learning; a release after every record")
        if noise_dominated:
            status += (f"; the released statistics are dominated by noise (expected cosine "
                       f"{signal['expected_cosine']:.2f} between their direction and the noiseless one): more records "
                       "or a larger ε help")
        return self._discovery_record_level(build_report(
            type(self).__name__, events, epsilon=self._epsilon, delta=self._delta, accounting=self.accounting,
            mode="continual", n_seen=self._t, status=status, rho_budget=self._rho_budget, passes=passes,
            order=order, mechanism=mechanism,
            public={"frozen": frozen, "schedule": None if mechanism is None else mechanism.describe(),
                    "buffer": None, "sensitivity_now": self._sensitivity,
                    "noise_sd": 0.0 if self._stats is None else math.sqrt(self._stats.noise_variance()),
                    **signal, **self._discovery_fields()},
            curator={"n_clipped": self._n_clipped}))

    def _signal(self) -> dict:
        """``expected_cosine`` and ``noise_dominated`` of the latest release
        (:func:`onpair.statistics.model.released_signal`; before any record: None and False)."""
        if self._stats is None or self._learned() == 0:
            return dict(NOTHING_RELEASED)
        return released_signal(self._stats.class_statistics())

    # A private learner's state holds noiseless sums of the stream and the noise: a copy would reuse its
    # noise and its budget (two copies fed neighbouring streams release noise that cancels in their
    # difference). The non-private twin copies and pickles normally.
    def __reduce_ex__(self, protocol):
        if self.private:
            raise TypeError(
                f"a private {type(self).__name__} cannot be pickled or copied: it holds noiseless sums of the "
                "stream, and a copy would reuse its noise and its budget. Share learner.model.")
        return object.__reduce_ex__(self, protocol)
