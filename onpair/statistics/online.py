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

import numpy as np

from ..core._validation import as_feature_block, as_feature_vector, check_positive
from ..core.stream import StreamLearner
from ..core.task import CLASSIFY, make_task
from ..privacy.accountant import ZCDPAccountant, charge, check_accountant, refusal
from ..privacy.continual.normals import NormalBlock
from ..privacy.conversions import METHODS, rho_from_dp
from ..privacy.exceptions import PrivacyWarning
from ..privacy.events import ContinualRelease
from ..privacy.reports import warn_large_delta
from .discriminant import check_covariance_model
from .model import DEFAULT_WEIGHTS, check_task, check_weights, model_kind, moment_layout
from .online_config import (check_classes, check_final_share, check_forgetting, check_lam, check_mechanism, horizon_value,
                            resolve_mechanism)
from .online_report import StatisticsReport
from .online_snapshot import StatisticsSnapshots
from .released import ReleasedStatistics
from .released_model import ReleasedModel
from .warmup import WarmupLearning


class OnPairStats(StatisticsSnapshots, StatisticsReport, WarmupLearning, StreamLearner, saved=True, algorithm="stats"):
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
        ``privacy_report(passes=k)["record_level"]`` (computed exactly from the mechanism's encoder for
        same-order passes).
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
    mechanism : {"auto", "blt", "toeplitz", "epochs", "tree", "blocks"}, default "auto"
        How the statistics are released (docs/continual_release.md). "auto": "blocks" without ``half_life`` and
        ``final_share``, else "blt" (:func:`onpair.statistics.online_config.resolve_mechanism`; :attr:`release_mechanism`).
        "blocks": blocks of 32, 64, … records released once each (:class:`onpair.privacy.continual.BlockRelease`:
        noise ≈ 1.7 one release's at any length; the model moves only at a block's end). The others release
        every prefix sum (a model after every record, at the continual-counting bound's noise): "blt", a buffered-linear-Toeplitz factorisation (:class:`onpair.privacy.continual.BufferedToeplitz`:
        O(buffers·k) work and memory per record, any stream length at the cost ρ; its error is within 0.2 %
        of the exact square-root factorisation's at a known ``horizon`` and within ×1.15 of it from 10³ to 10⁷
        records without one); "toeplitz", the banded square-root factorisation (band 64: as good up to
        about 100 records, then its error grows linearly, ×6 of the square root's at 1,250 records, ×24 at
        20,000; its copies farther apart than the band do not overlap, so k same-order passes cost exactly
        k·ρ against the BLT's slightly more, see ``privacy_report(passes=k)``); doubling epochs of
        least-squares trees (error O(log² t)); one tree (``horizon``, else level shares ρ_h ∝ 1/h²).
    band : int, optional
        Band of the banded factorisation (``mechanism="toeplitz"`` only; default
        :data:`onpair.privacy.continual.DEFAULT_BAND`). A band, a horizon or a number of features whose state
        would exceed :data:`onpair.privacy.continual.MAX_STATE_FLOATS` is refused (a ValueError naming it).
    horizon : int, optional
        A known stream length: records after it are not learned (the model is frozen, with a warning); the
        BLT takes the fit for it (the stored fit of the next power of two, its cost computed at the
        horizon itself), the tree is sized for it, the banded factorisation uses it to stop.
    final_share : float, default 0
        φ ∈ [0, 1), with ``mechanism="blt"`` and a ``horizon`` only: a public share of ρ spent on **one**
        Gaussian release of the statistics' total at the horizon, combined with the continual estimate by
        inverse variance (:class:`onpair.privacy.continual.BufferedToeplitz`'s ``final_share``). It buys a
        better **final** model for a worse model along the stream: the continual releases get (1 − φ)ρ, so
        their noise grows by 1/√(1 − φ), and the model after record T has the variance v_c·v_f/(v_c + v_f) of
        the two combined (v_f = Δ²/(2φρ): below one release of the total at the full ρ only as φ → 1). No
        continual mechanism gives the last prefix the error of one release at the same ρ (the BLT's, at a
        known horizon, is ×3–5 of it from 10³ to 10⁶ records); the default, 0, spends everything on the
        stream, whose every model is then as good as a continual release allows. The trade-off on Pima and
        Phishing: bench/results/final_share.md, "final share".
    half_life : float, optional
        Forgetting under concept drift: a public half-life H in records (4 ≤ H ≤ 2^24; ``mechanism="blt"``, or
        ``"blocks"``: blocks of at most max(32, ⌈H/4⌉) records, :class:`onpair.privacy.continual.BlockRelease`).
        The statistics become exponentially decayed sums Σ_{s≤t} γ^{t−s} v_s (γ = 2^{−1/H}: a record H positions
        old weighs 1/2, the model weighs about 1.44·H recent records) and every model is computed from them
        unchanged (the counts are decayed counts). They are released by a BLT factorisation of the decayed
        workload (:class:`onpair.privacy.continual.DecayedBLT`): the whole stream, of any length, costs the
        same ρ, and the noise of every release is bounded by a stationary level (about 8.9 Gaussian releases'
        variance at H = 1,000, 15 at H = 16,384), so the model follows a drift within a few half-lives where the
        cumulative one takes as many records as it has seen. None (default): no forgetting
        (docs/forgetting.md says when to set it).
    bounds, norm_bound : public feature bounds (:class:`onpair.core.bounds.FeatureBounds`): one of them is required
        (no default; a ValueError says where public bounds come from).
    n_features : int, optional
    accounting : {"gaussian", "tight", "lemma3"}, default "gaussian"
        (ε, δ) → ρ conversion; "gaussian" is exact here (the whole release is one Gaussian mechanism).
    private : bool, default True
        False gives the non-private twin: the exact statistics, no noise.
    seed : int or SeedSequence, optional
        For reproducible experiments only (a numpy ``SeedSequence`` acts as an int; it is not advanced).
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
        A budget shared with other models (:mod:`onpair.privacy.accountant`), charged the cost with the first
        record (refused, nothing changed, when it cannot pay); a learner with one refuses ``save``. Its noise
        is its own, even with another's ``seed`` (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

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
    >>> report["epsilon_spent"] <= 1.0, report["releases"][0]["nodes_released"]  # blocks of 32, 64, …, 512: ends 32 … 992
    (True, 5)
    """

    private = True
    _non_private_mode = "exact statistics"

    def __init__(self, *, epsilon=1.0, delta=1e-5, task="auc", classes=None, model_type=None, lam="auto",
                 covariance="auto", moments=None, weights=DEFAULT_WEIGHTS, mechanism="auto", band=None,
                 horizon=None, final_share=0.0, half_life=None, bounds=None, norm_bound=None, n_features=None, accounting="gaussian",
                 private=True, seed=None, accountant=None, discover_bounds=False):
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
        self.final_share = final_share
        self.half_life = half_life
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
        self._classes = check_classes(self._task.name, classes)
        self._model_kind = model_kind(task, model_type)
        check_covariance_model(task, covariance)
        self._pooled = moment_layout(task, moments)
        self._lam = check_lam(lam)
        self._weights, self._sensitivity = check_weights(weights)
        check_mechanism(mechanism, band)
        self._half_life = check_forgetting(half_life, mechanism)
        self._rho_budget = rho_from_dp(self._epsilon, self._delta, method=accounting)
        self._horizon = horizon_value(horizon)
        self._final_share = check_final_share(final_share, mechanism, horizon, half_life)
        self._mechanism = resolve_mechanism(mechanism, self._half_life, self._final_share)
        # The continual release's cost is fixed when it is built; it is committed with the first record.
        self._accountant = ZCDPAccountant(self._rho_budget, owner="OnPairStats") if self.private else None
        self._budget_committed = False
        self._setup_stream(bounds, norm_bound, n_features, seed)
        self._setup_discovery(discover_bounds, self._horizon)
        self._stats = None
        self._box = None  # (lower, upper, half-scale) rows of a box, once the dimension is known
        self._normal_block = None  # the release noise's normals, drawn ahead: _noise_source()
        self._frozen_warned = False
        self._current = None  # the ReleasedModel of the latest release (released_model(): the only model cache)
        if self._dim is not None:
            self._init_state(self._dim)
        elif self.private:
            # The mechanism is built with the first record; a twin of one feature checks its parameters
            # (band, horizon, the noise scale of the weights and ε) now, so that they fail here, not there.
            self._new_state(1)
        warn_large_delta(type(self).__name__, self._delta, self._horizon_value(), what="horizon", stacklevel=2)

    def _horizon_value(self):
        """The horizon, checked (:func:`onpair.statistics.online_config.horizon_value`)."""
        return horizon_value(self.horizon)

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
                mechanism=self._mechanism, band=self.band, horizon=self._horizon_value(),
                final_share=self._final_share, pooled=self._pooled,
                half_life=self._half_life)
        except ValueError as exc:
            raise ValueError(f"the release of the statistics of {dim} features in {self._n_classes} classes "
                             f"(weights {self._weights}, epsilon={self._epsilon:g}): {exc}") from None

    def _init_state(self, dim: int) -> None:
        self._stats = self._new_state(dim)
        self._dim = dim
        self._box = self._bounds.box_rows(dim) if self._bounds.kind == "box" else None  # the fast path's map

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
        stats, box = self._stats, self._box
        if (box is not None and type(x) is np.ndarray and x.dtype == np.float64 and x.shape == box[0].shape
                and not self._read_only and not self._holding and stats.fused
                and (self._horizon is None or self._t < self._horizon)
                and (self._budget_committed or self._shared is None)):
            # A BLT release, box bounds, no warm-up holding records, below the horizon (then t records were
            # learned; the budget committed unless a shared accountant must be asked): a finite record of a
            # known class (clipped to the box once the clipping warning has been issued: the first clipped
            # record takes the block path, which warns) takes the one fused call, the block path's bits.
            code = (1 if label > 0 else 0) if self._classes is None else self._classes.get(label)
            if code is not None:
                clip = self._warned_clipping or self._silent_clip
                normals = self._normal_block  # _noise_source(), without its frame where the block is current
                if normals is None or normals.rng is not self._noise_rng:
                    normals = self._noise_source()
                status = stats.add_record(x, box, code, normals, clip)
                if status == 0 or (status == 1 and clip):
                    self._t += 1
                    self._n_clipped += status
                    if not self._budget_committed:
                        self._commit_budget()
                    return self
        # anything else: validated, mapped and learned as a block of one (learn_many's path)
        X = as_feature_vector(x, self._dim, self._t, name="x")
        return self._learn_block(X, self._task.single_block(label))

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
            self._box = self._bounds.box_rows(self._dim) if self._bounds.kind == "box" else None
        self._stats.add(Z[:learned], codes[:learned], self._noise_source())
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
    def released_model(self) -> ReleasedModel:
        """The latest release and everything computed from it (:class:`onpair.statistics.released_model.ReleasedModel`:
        public, post-processing), built once per release: the only cache of the decode, the model and the posterior,
        keyed by the release (the state it came from and its index) and the public bounds that map records for it."""
        self._require_dim()
        stats, bounds = self._stats, self._bounds
        index = stats.release_index
        current = self._current
        if current is None or current.index != index or current.bounds is not bounds or current.source is not stats:
            current = self._current = ReleasedModel(index, stats.estimate(), stats.noise_variance(), stats.layout,
                                                    self._model_kind, self._lam, self.covariance, bounds, source=stats)
        return current

    def _released_view(self):
        return self.released_model()

    def _refresh_step_cap(self, cap):
        """Blocks: read at every block end (its count moves only then; the horizon's short block included)."""
        return 1 if self._stats is not None and self._stats.released_per_block else cap

    def class_statistics(self):
        """Counts, means and covariances decoded from the current release
        (:class:`onpair.statistics.model.ClassStatistics`); all public."""
        return self.released_model().statistics

    def ridge(self) -> float:
        """λ used by the current model: ``lam``, or for "auto" 10⁻³ (the non-private twin's: times its own within-class
        variance, :attr:`onpair.statistics.model.ClassStatistics.scale`) plus the noise ridge (public): the expected
        spectral norm of the covariances' noise (AUC and ``"whitening"``), or the noise standard deviation of
        one diagonal entry of the pooled within-class covariance (``"discriminant"``); the classifier's is
        :func:`onpair.statistics.discriminant.discriminant_ridge`."""
        return self.released_model().ridge()

    def posterior(self):
        """The calibrated posterior of the current release (:class:`onpair.statistics.discriminant.LinearDiscriminant`,
        public: post-processing), over the classes in the order of ``classes`` (the AUC task: negative,
        positive). For the classifier the linear discriminant (:func:`~onpair.statistics.discriminant.linear_discriminant`);
        for the AUC task the binary posterior along the released model (:func:`~onpair.statistics.discriminant.ranking_discriminant`:
        its log-odds increase with the model's score, so it ranks exactly as :attr:`model`). Before any
        record: the uniform distribution. Not for the metric task."""
        if self._task.name == "metric":
            raise ValueError("posterior() is for task='auc' or 'classify'; with task='metric' use transform(X) or model")
        return self.released_model().posterior

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
        return self.released_model().model.copy()

    @property
    def release_mechanism(self) -> str:
        """``mechanism``, or what "auto" chose (:func:`onpair.statistics.online_config.resolve_mechanism`). Public."""
        return self._mechanism

    @property
    def n_releases(self) -> int:
        """Releases so far (none while a warm-up holds records): one per record, or per completed block ("blocks")."""
        return self._stats.n_releases if self.private and self._stats is not None else 0

    @property
    def refresh_count(self) -> int:
        """What the refresh rule reads: the records the release describes (with blocks it moves only when one
        ends: :attr:`onpair.statistics.released.ReleasedStatistics.release_index`); the twin's records."""
        return self._t if not self.private else (self._stats.release_index if self._stats is not None else 0)

    def _noise_source(self) -> NormalBlock:
        """The normals of the release noise: a block drawn ahead from the learner's noise generator and
        consumed in order (:class:`onpair.privacy.continual.normals.NormalBlock`). A new generator (a
        resumed snapshot, or one detached after a save) starts a new, empty block: normals drawn ahead from
        the old one are never used (they went into the snapshot)."""
        block = self._normal_block
        if block is None or block.rng is not self._noise_rng:
            block = self._normal_block = NormalBlock(self._noise_rng)
        return block

    # A private learner's state holds noiseless sums of the stream and the noise: a copy would reuse its
    # noise and its budget (two copies fed neighbouring streams release noise that cancels in their
    # difference). The non-private twin copies and pickles normally.
    def __reduce_ex__(self, protocol):
        if self.private:
            raise TypeError(
                f"a private {type(self).__name__} cannot be pickled or copied: it holds noiseless sums of the "
                "stream, and a copy would reuse its noise and its budget. Share learner.model.")
        return object.__reduce_ex__(self, protocol)
