"""GradientPerturbedGD: full-batch gradient descent with Gaussian gradient perturbation (Kang et al. 2021, Alg. 1).

Kang, Liu, Li and Wang, "Towards Sharper Utility Bounds for Differentially Private Pairwise Learning"
(2021), Algorithm 1, on the constraint ball C = {‖θ‖₂ ≤ R}::

    θ_0 = 0
    for t = 1 … T:
        θ_t = Π_C[θ_{t−1} − η_t (∇L(θ_{t−1}; D) + λθ_{t−1} + b_t)],   b_t ~ N(0, σ_t² I_d)
    release θ_T

with the pairwise empirical risk ``L(θ; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(θ; z_i, z_j)`` (Kang eq. (1)). The
paper starts from a random θ_0 and has no projection; θ_0 = 0 is data-independent too, and the
projection is post-processing that keeps θ in the ball where the loss constants G(R) and Γ(R) hold.

**Symmetric losses.** ``onpair``'s losses (:mod:`onpair.core.losses`) score an opposite-label pair through
the margin of (positive − negative), whatever the order of the two records, so each unordered
opposite-label pair appears twice among the ordered pairs and
``∇L = 2/(n(n−1)) Σ_{i∈pos} Σ_{j∈neg} ℓ'(u_ij)(x_i − x_j)``. For the logistic loss this is Kang's
Example 1 exactly (same-label pairs have the constant loss log 2). For hinge and square it is twice the
risk of Yang's one-order form ``ℓ·1[y = 1, y' = −1]``: the same minimiser, and the factor 2 appears in
the gradient and in its sensitivity alike.

**Sensitivity of one step.** Replace record z_k by z'_k. Only the 2(n−1) ordered pairs containing it
change, i.e. the n−1 unordered pairs {k, j}, each counted twice; for each j the pair's gradient moves
from ∇ℓ(θ; z_k, z_j) to ∇ℓ(θ; z'_k, z_j), by at most Γ(‖θ‖) (:meth:`onpair.core.losses.PairLoss.pair_change`:
Γ = G for logistic and hinge — including the case where the label flips and one of the two pairs
becomes a same-label pair — and 2G for square). So

    ‖∇L(θ; D) − ∇L(θ; D')‖ ≤ 2(n−1)·Γ/(n(n−1)) = 2Γ/n =: Δ_t,

and λθ does not depend on the data. Γ is taken at a **public** bound r_{t−1} on ‖θ_{t−1}‖: r_0 = 0
(θ_0 = 0) and r_t = R afterwards (the projection). For the logistic loss Γ(0) = 2, so the first step
has Δ_1 = 4/n: with T = 1 this is the private "centroid" scorer of docs/algorithms.md#private-centroid (one noisy step
from the origin, the difference of the class means).

Step t is the Gaussian mechanism applied to ∇L(θ_{t−1}; D), where θ_{t−1} is a function of the earlier
noisy gradients only; zCDP composes adaptively, so the run is (Σ_t ρ_t)-zCDP with
ρ_t = Δ_t²/(2σ_t²). Every θ_t, and so the released θ_T, is post-processing.

**Modes.**

* ``mode="ledger"`` (default): ρ = ``rho_from_dp(ε, δ, accounting)``, split evenly, ρ_t = ρ/T·(1 − 10⁻¹²),
  σ_t = Δ_t·(1 + 10⁻⁹)/√(2ρ_t) (the margins cover floating point). The report's ``epsilon_spent`` is
  ``eps_from_rho(Σρ_t, δ, accounting)`` ≤ ε. ``accounting="gaussian"`` (default) is exact for Gaussian
  noise, which is all this estimator adds.
* ``mode="paper"``: Kang's Theorem 1 as printed, σ = 8G√(T log(1/δ))/(nε) at every step with
  G = ``loss.lipschitz(R)``. The report keeps the paper's claim (``paper_epsilon``, ``paper_delta``)
  and, beside it, what the same noise gives under the accounting above: ρ_t = Δ_t²/(2σ²) and
  ``epsilon_spent = eps_from_rho(Σρ_t, δ, accounting)`` (docs/algorithms.md#gradient-sensitivity). With Δ_t ≤ 2Γ/n
  the paper's σ is several times what this accounting needs per step (3.5–5.6× at n = 614, δ = 1/n,
  ε ∈ [0.5, 2.5]), and ``epsilon_spent`` is far below ``paper_epsilon``.

**Step size.** ``step_sizes=None`` is the constant η = R/(G + λR), G = ``loss.lipschitz(R)``: G + λR
bounds ‖∇L(θ) + λθ‖ on C, so one noise-free step moves θ by at most R (from the origin: at most to the
sphere of C) and never across the ball. It is data-independent, and for T = 1 the step size does not
change the released direction (the ranking) at all.

**Cost.** Each step is one full pairwise gradient: O(n⁺·n⁻) scalar operations plus O(n·d) with the A/B
algebra of :mod:`onpair.batch._kernels` (parallel over the positives; at n = 4,000, d = 20 one gradient
takes about 0.6 ms on two cores, see ``bench/offline.py``), so a fit is O(T·(n⁺n⁻ + nd)) time and O(n·d)
memory.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import distributed_gradient
from ._kernels import DEFAULT_BLOCK, pairwise_gradient_sum, split_by_label
from ..core._validation import check_in_range, check_radius
from ..core.geometry import _project_l2_ball
from ..giga.round_objective import MAX_STEP
from ..core._metric_pair_kernels import _project_parameter
from ._metric_kernels import _metric_full_gradient
from ..core.losses import get_loss
from ..core.matrix_geometry import constraint_code, identity_center, symmetric_noise
from ..core.metric_losses import get_metric_loss, make_pair_terms
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.conversions import METHODS, rho_from_dp
from ..privacy.events import GaussianRelease
from ..privacy.gaussian import sigmas_for_shares
from ..privacy.signal import signal_fields
from ..privacy.reports import warn_large_delta
from ..core.estimator import PairwiseEstimator, fit_report
from ..core.fitting import count_classes

__all__ = ["GradientPerturbedGD", "paper_sigma", "default_step_size"]

MODES = ("ledger", "paper")
LOSS_NAMES = ("logistic", "hinge", "square")
#: Shrink of each step's ρ share (σ grows by privacy.gaussian.SIGMA_MARGIN): floating point never
#: overspends the budget.
_RHO_SHRINK = 1.0 - 1e-12


def paper_sigma(lipschitz: float, T: int, n: int, epsilon: float, delta: float) -> float:
    """Kang et al. Theorem 1: σ = 8G√(T log(1/δ))/(nε).

    Examples
    --------
    >>> round(paper_sigma(2.0, 4, 100, 1.0, math.exp(-4.0)), 12)  # 8·2·√16/100
    0.64
    """
    return 8.0 * lipschitz * math.sqrt(T * math.log(1.0 / delta)) / (n * epsilon)


def default_step_size(loss, radius: float, lam: float) -> float:
    """η = R/(G(R) + λR): the largest noise-free step on C moves θ by at most R.

    Examples
    --------
    >>> default_step_size("hinge", 0.1, 0.0)  # G = 2 for the hinge loss
    0.05
    """
    loss = get_loss(loss)
    return float(radius) / (loss.lipschitz(radius) + float(lam) * float(radius))


class GradientPerturbedGD(PairwiseEstimator, algorithm="gradient"):
    """Private full-batch pairwise gradient descent by gradient perturbation (Kang et al. 2021, Alg. 1).

    T projected gradient steps on the pairwise empirical risk (plus (λ/2)‖θ‖²) from θ_0 = 0, each with
    Gaussian noise calibrated to the step's gradient sensitivity 2Γ/n; ``coef_`` is the last iterate
    θ_T. See the module docstring (:mod:`onpair.batch.gradient_perturbation`) for the sensitivity
    proof and the two accountings.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        (ε, δ)-DP of the whole run (all T noisy gradients) and so of ``coef_``. δ ∈ (0, 1); prefer δ ≪ 1/n
        (a ``PrivacyWarning`` is issued otherwise).
    loss : {"logistic", "hinge", "square"}, default "logistic"
        Pairwise AUC loss (:mod:`onpair.core.losses`). Privacy needs neither convexity nor smoothness here.
    lam : float, default 0.0
        Weight λ ≥ 0 of the regulariser (λ/2)‖θ‖² (data-independent: no effect on the sensitivity).
    radius : float, default 0.1
        Radius R > 0 of the constraint ball C.
    T : int, default 1
        Number of noisy gradient steps (≥ 1). T = 1 is the private centroid scorer (docs/algorithms.md#private-centroid),
        and the default: on Pima (n = 614, δ = 1/n, 20 splits) T = 10 gave AUC 0.70 / 0.79 / 0.805 at
        ε = 0.5 / 1.5 / 2.5 against 0.74 / 0.80 / 0.81 for T = 1. With R = 0.1 the loss is nearly
        linear on C, so more steps, each with 1/T of the budget, do not pay for their noise; raise T
        for larger n or a larger radius.
    step_sizes : None, float or array-like of T floats, default None
        η_t > 0. None: the constant R/(G(R) + λR) (see :func:`default_step_size`).
    bounds, norm_bound : public feature bounds (see :class:`onpair.core.bounds.FeatureBounds`)
        Required (one of them; no default). Records outside are clipped (scaled into the ball).
    mode : {"ledger", "paper"}, default "ledger"
        Noise from the zCDP split of the budget, or Kang's Theorem 1 as printed.
    accounting : {"gaussian", "tight", "lemma3"}, default "gaussian"
        Conversion between ρ-zCDP and (ε, δ) (:mod:`onpair.privacy.conversions`).
    private : bool, default True
        False gives the non-private twin: the same iterations without noise.
    task : {"auc", "metric"}, default "auc"
        The metric task learns a symmetric d×d matrix W (``coef_``) from any number of classes, with
        the losses of :mod:`onpair.core.metric_losses`; θ_0 is the public scaled identity
        (:func:`onpair.core.matrix_geometry.identity_center`), the regulariser pulls towards it, the noise is
        symmetric and isotropic in the Frobenius norm, and ``transform``/``score`` use W's PSD part.
    constraint : {"frobenius", "psd", "nuclear", "psd_nuclear"}, optional
        The metric task's constraint set (default "frobenius").
    classes : sequence of labels, optional
        The **public** label domain: for the AUC task two labels (``classes_``, sorted: ``classes_[1]`` is
        positive); for the
        metric task all class labels. Recommended: without it the classes are read off ``y``, so which
        label values occur must itself be public (as the bounds are); a record with a label outside
        ``classes`` is an error, and a data set in which only one class occurs can be fitted.
    threshold : "learned", float or (low, high), default "learned"
        Metric task only: the threshold b of the losses φ(τ(b − h)) and (1 + τ(h − b + 1))₊. "learned":
        θ = (W, b) with b in the public interval [0, 4R] (starting at its midpoint, regularised towards
        it, noised with W: ``threshold_``); a number: the fixed b, 1.0 being the papers' losses
        (docs/algorithms.md#metric-threshold).
    pair_weights : "balanced", None or (same, different), default "balanced"
        Metric task only: weights of the pairs of one class and of two classes. "balanced": equal totals
        if the C public classes (``classes``, or the labels in ``y``) had equal sizes, ω₊/ω₋ = C − 1
        (:func:`onpair.core.metric_losses.balanced_pair_weights`); None: uniform (the papers'). Γ, and so the
        noise, scales with the larger weight.
    random_state : int, SeedSequence, Generator or None
        The noise comes from a child of one SeedSequence. None: fresh OS entropy (a seed is for
        reproducible experiments only).
    discover_bounds : bool, int or dict, default False
        Find the data's box privately inside the declared (loose) box first, with a share of (ε, δ)
        (:func:`onpair.core.fitting.discovered_fit`; values as for :class:`onpair.OffPairStats`).
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`; e.g. every fit of a grid
        search): each fit charges it its release events, and is refused (``PrivacyBudgetExceeded``, the
        estimator unchanged) when the budget cannot pay. scikit-learn's ``clone`` shares it. Each fit
        charged to it draws noise of its own, even with a fixed ``random_state``
        (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,), or (n_features, n_features) for the metric task
        The released θ_T (for the metric task its W part).
    threshold_ : float
        Metric task only: the released threshold b (learned), or the fixed one.
    privacy_report_ : dict
        ``rho_budget``, ``rho_spent``, ``rho_remaining``, ``epsilon_spent``, ``releases`` (one row per
        step: ``round``, ``sensitivity``, ``sigma``, ``rho``), ``algorithm``, ``mode``, ``accounting``,
        ``epsilon``, ``delta``, ``private``, ``T``, ``step_sizes``, ``n_clipped`` (curator-only); in paper
        mode also ``paper_epsilon``, ``paper_delta``, ``paper_sigma``.
    classes_, n_features_in_, bounds_, n_clipped_ : as for every offline estimator.

    Notes
    -----
    Cost: T full pairwise gradients, each O(n⁺·n⁻) scalar operations plus O(n·d), parallel over the
    positive records (:mod:`onpair.batch._kernels`); memory O(n·d).

    References
    ----------
    Y. Kang, Y. Liu, J. Li, W. Wang. Towards Sharper Utility Bounds for Differentially Private Pairwise
    Learning (2021). Algorithm 1 (gradient perturbation), Theorem 1 (σ).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.batch.gradient_perturbation import GradientPerturbedGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = GradientPerturbedGD(epsilon=1.0, T=5, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9, est.coef_.shape, len(est.privacy_report_["releases"])
    (True, (3,), 5)
    >>> est.privacy_report_["epsilon_spent"] <= 1.0
    True
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", lam=0.0, radius=0.1, T=1,
                 step_sizes=None, bounds=None, norm_bound=None, mode="ledger", accounting="gaussian",
                 private=True, task="auc", constraint=None, classes=None, threshold="learned",
                 pair_weights="balanced", random_state=None, accountant=None, discover_bounds=False):
        self.task = task
        self.threshold = threshold
        self.pair_weights = pair_weights
        self.constraint = constraint
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.lam = lam
        self.radius = radius
        self.T = T
        self.step_sizes = step_sizes
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.mode = mode
        self.accounting = accounting
        self.private = private
        self.random_state = random_state
        self.accountant = accountant
        self.discover_bounds = discover_bounds

    # -- validation --------------------------------------------------------------------------------
    def _validated_params(self, n_classes=None) -> dict:
        """Every parameter checked (ValueError naming it and its value); nothing is stored.

        Called by ``fit`` (through :meth:`_fit_released`) before anything is assigned, so a bad
        parameter leaves a fitted estimator as it was (scikit-learn's convention: parameters are
        stored verbatim by ``__init__`` and ``set_params`` and checked when used).
        """
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        metric = self._metric_task()
        if metric:
            loss = get_metric_loss(self.loss)
            constraint = constraint_code("frobenius" if self.constraint is None else self.constraint)
        else:
            if not (isinstance(self.loss, str) and self.loss in LOSS_NAMES):
                raise ValueError(f"loss must be one of {LOSS_NAMES}, got {self.loss!r}")
            if self.constraint not in (None, "l2"):
                raise ValueError(f"constraint={self.constraint!r} is for task='metric'")
            loss = get_loss(self.loss)
            constraint = None
        lam = check_in_range(self.lam, "lam", 0.0, 1e12)
        radius = check_radius(self.radius)
        if metric:
            terms = make_pair_terms(self.threshold, self.pair_weights, radius, n_classes)
        elif not (isinstance(self.threshold, str) and self.threshold == "learned"
                  and isinstance(self.pair_weights, str) and self.pair_weights == "balanced"):
            raise ValueError("threshold and pair_weights are for task='metric'")
        else:
            terms = None
        T = self.T
        if isinstance(T, (bool, np.bool_)) or not isinstance(T, numbers.Integral) or T < 1 or T > 10**6:
            raise ValueError(f"T must be an integer in [1, 10**6], got {T!r}")
        T = int(T)
        steps = self._validated_steps(T, loss, radius, lam, terms)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.accounting not in METHODS:
            raise ValueError(f"accounting must be one of {METHODS}, got {self.accounting!r}")
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        return {"epsilon": epsilon, "delta": delta, "loss": loss, "lam": lam, "radius": radius, "T": T,
                "metric": metric, "constraint": constraint, "terms": terms,
                "steps": steps, "mode": self.mode, "accounting": self.accounting, "private": bool(self.private)}

    def _check_params(self, n_records, n_features, classes) -> None:
        """Every parameter checked (:meth:`_validated_params`, with the number of classes of the fit's label
        domain for the metric task) before the fit draws noise or finds a range."""
        self._validated_params(len(classes) if self._metric_task() else None)

    def _validated_steps(self, T, loss, radius, lam, terms=None) -> np.ndarray:
        step_sizes = self.step_sizes
        if step_sizes is None:
            lipschitz = loss.lipschitz(radius) if terms is None else loss.lipschitz(radius, terms)
            return np.full(T, float(radius) / (lipschitz + float(lam) * float(radius)))
        if isinstance(step_sizes, (str, bytes, bool, np.bool_)):
            raise ValueError(f"step_sizes must be None, a number or an array of T numbers, got {step_sizes!r}")
        try:
            steps = np.array(step_sizes, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"step_sizes must be None, a number or an array of T numbers, got {step_sizes!r}") from None
        if steps.ndim == 0:
            steps = np.full(T, float(steps))
        elif steps.ndim != 1 or steps.shape[0] != T:
            raise ValueError(f"step_sizes must have T = {T} entries (one per step), got shape {steps.shape}")
        bad = ~(np.isfinite(steps) & (steps > 0) & (steps <= MAX_STEP))  # the cap keeps θ finite
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f"step_sizes[{k}] = {steps[k]!r}: step sizes must be finite and in (0, {MAX_STEP:g}]")
        return steps

    # -- the algorithm -----------------------------------------------------------------------------
    def _sensitivities(self, loss, radius, T, n, start_norm=0.0, terms=None) -> np.ndarray:
        """Δ_t = 2Γ(r_{t−1})/n with the public norm bounds r_0 = ‖θ_0‖ (0, or the metric task's public
        identity start; for the metric task the norm of W, on which Γ depends, b's interval being
        public), r_t = R (t ≥ 1). With pair weights Γ includes them
        (:meth:`onpair.core.metric_losses.MetricLoss.pair_change`)."""
        extra = {} if terms is None else {"terms": terms}
        gammas = np.full(T, loss.pair_change(radius, **extra))
        gammas[0] = loss.pair_change(start_norm, **extra)
        return 2.0 * gammas / n

    def _fit_released(self, Z, signs, seed_sequence):
        # Public: the declared classes, or (documented) the label values of y taken as public.
        p = self._validated_params(count_classes(self, signs) if self._metric_task() else None)
        n, dim = Z.shape
        if p["metric"]:
            # θ_0 = the scaled identity (public): one noisy step is a private correction of the
            # Euclidean metric, as the online metric learners' default centre.
            theta_start = identity_center(dim, p["radius"], p["constraint"])
            # Γ depends on the norm of W only (b's interval is public): the start norm leaves b out.
            start_norm = float(np.linalg.norm(theta_start))
            terms = p["terms"]
            if terms.learned:  # b₀: the middle of its public interval
                theta_start = np.append(theta_start, 0.5 * (terms.low + terms.high))
            terms_array = terms.as_array()
            codes = np.ascontiguousarray(signs, dtype=np.int64)

            def gradient_sum(theta):
                return _metric_full_gradient(theta, Z, codes, p["loss"].code, terms_array)
        else:
            theta_start = np.zeros(dim)
            start_norm = 0.0
            positives, negatives = split_by_label(Z, signs)

            def gradient_sum(theta):
                return pairwise_gradient_sum(positives, negatives, theta, p["loss"].code, DEFAULT_BLOCK)
        return self._descend(p, n, dim, theta_start, start_norm, gradient_sum, seed_sequence)

    #: A distributed fit keeps each partition's positives and negatives apart (the pair kernel's input;
    #: the protocol of :class:`onpair.core.distributed.PartitionedFit`).
    partition_layout = "split"

    def check_partitioned_fit(self) -> dict:
        """The parameter checks of a distributed fit, before any task is submitted."""
        p = self._validated_params()
        if p["metric"]:
            raise ValueError("task='metric' has no distributed fit yet: fit it on a NumPy array (or use "
                             "OffPairStats(task='metric'), whose fit is distributed)")
        return p

    def fit_partitions(self, partitions, seed_sequence):
        """The distributed fit (:mod:`onpair.core.distributed`): at each step the workers compute the pairwise
        gradient sum from their partitions (:mod:`onpair.batch.distributed_gradient`: only scores,
        pair-weight sums and d-vectors cross the network) and the noise is drawn here, once per step,
        exactly as in :meth:`_fit_released`."""
        p = self.check_partitioned_fit()
        code = p["loss"].code
        return self._descend(p, partitions.n, partitions.dim, np.zeros(partitions.dim), 0.0,
                             lambda theta: distributed_gradient.pairwise_gradient_sum(partitions, theta, code),
                             seed_sequence)

    def _descend(self, p, n, dim, theta_start, start_norm, gradient_sum, seed_sequence):
        """The T noisy steps from ``theta_start`` (d features; θ has d entries, or d² (+ 1 for a learned
        threshold) for the metric task), whose public norm for Γ is ``start_norm`` (the metric task: the
        norm of W₀ alone); ``gradient_sum(θ)`` is the data's only entry point (the exact Σ over
        opposite-label pairs, or over all pairs for the metric task). Noise is drawn here."""
        loss, T, steps, radius, lam, delta = p["loss"], p["T"], p["steps"], p["radius"], p["lam"], p["delta"]
        if p["private"]:
            warn_large_delta(type(self).__name__, delta, n, stacklevel=4)
        metric = p["metric"]
        terms = p["terms"]
        terms_array = terms.as_array() if metric else None
        sensitivities = self._sensitivities(loss, radius, T, n, start_norm, terms)
        if p["private"]:
            rho_budget = rho_from_dp(p["epsilon"], delta, method=p["accounting"])
            if p["mode"] == "ledger":
                shares = np.full(T, rho_budget / T * _RHO_SHRINK)
                sigmas = sigmas_for_shares(sensitivities, shares)
                rhos = shares
            else:
                lipschitz = loss.lipschitz(radius, p["terms"]) if metric else loss.lipschitz(radius)
                sigma = paper_sigma(lipschitz, T, n, p["epsilon"], delta)
                sigmas = np.full(T, sigma)
                rhos = sensitivities**2 / (2.0 * sigmas**2)
            rng = np.random.Generator(np.random.PCG64(seed_sequence.spawn(1)[0]))
        else:
            sigmas = np.zeros(T)

        # Each unordered pair counts twice among the n(n−1) ordered pairs (AUC: each opposite-label pair;
        # metric: every pair, the loss being symmetric in its two records).
        scale = 2.0 / (n * (n - 1.0))
        theta = theta_start.copy()
        for t in range(T):
            gradient = scale * gradient_sum(theta)
            update = gradient + lam * (theta - theta_start)
            if p["private"]:
                # Drawn step by step (the same stream as one (T, ·) draw; T can be 10⁶). Metric task:
                # symmetric noise isotropic in the Frobenius norm, the norm of Δ_t; a learned b gets
                # one more standard normal (isotropic in ‖(W, b)‖).
                if metric:
                    noise = symmetric_noise(rng, 1, dim)[0]
                    if terms.learned:
                        noise = np.append(noise, rng.standard_normal())
                else:
                    noise = rng.standard_normal(dim)
                update = update + sigmas[t] * noise
            theta = theta - steps[t] * update
            if metric:
                _project_parameter(theta, dim, radius, p["constraint"], terms_array)
            else:
                _project_l2_ball(theta, radius)

        common = {"T": T, "step_sizes": [float(s) for s in steps], "lam": lam,
                  "radius": radius, "loss": loss.name, "task": "metric" if metric else "auc"}
        if metric:
            common.update(threshold=[terms.low, terms.high],
                          pair_weights=[terms.same_weight, terms.different_weight])
        if not p["private"]:
            return theta, fit_report(self, (), n=n, mode=p["mode"], accounting=p["accounting"], public=common)
        # The final iterate's noise: each step's σ_t·N moves θ by η_t·σ_t·N, which the later steps'
        # regulariser contracts by (1 − η_s λ) (the loss's curvature contracts it further, the projections
        # too): its power as if the steps were linear, Σ_t η_t² σ_t² Π_{s>t} (1 − η_s λ)² · k.
        power, contraction = 0.0, 1.0
        for t in range(T - 1, -1, -1):
            power += (steps[t] * sigmas[t] * contraction) ** 2
            contraction *= abs(1.0 - steps[t] * lam)
        k = (dim * (dim + 1) // 2 + (1 if terms.learned else 0)) if metric else dim
        extra = dict(common, **signal_fields(theta, power * k))
        if p["mode"] == "paper":
            extra.update(paper_epsilon=p["epsilon"], paper_delta=delta, paper_sigma=float(sigmas[0]))
        events = [GaussianRelease(sensitivity=float(u), sigma=float(s), round=t + 1, rho=float(r), what="noisy gradient")
                  for t, (u, s, r) in enumerate(zip(sensitivities, sigmas, rhos))]
        return theta, fit_report(self, events, n=n, mode=p["mode"], accounting=p["accounting"],
                                 rho_budget=rho_budget, public=extra)
