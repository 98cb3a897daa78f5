"""OutputPerturbedSGD: private SGD for pairwise learning by output perturbation (Yang et al. 2021, Alg. 2).

Yang, Lei, Lyu and Ying (AISTATS 2021), Algorithm 2, exactly::

    w_1 = 0; draw i_1 uniformly from [n]
    for t = 1 … T:
        draw i_{t+1} uniformly from [n] (with replacement)
        w_{t+1} = Π_W(w_t − (η/t) Σ_{k=1}^{t} ∂ℓ(w_t; z_{i_{t+1}}, z_{i_k}))
    w̄_T = (1/T) Σ_{t=1}^{T} w_t
    release w_priv = Π_W(w̄_T + u),  u ~ N(0, σ² I_d)
    σ² = 8η²G² ln(2.5/δ)/ε² · (T + 3T² ln²(eT) ln²(2/δ)/n²)          (eq. (5))

with W = {‖w‖₂ ≤ R} and G the loss's Lipschitz constant on W (:meth:`onpair.core.losses.PairLoss.lipschitz`).

**Averaging range.** As printed in Alg. 1 and 2: the average of ``w_1 … w_T`` — it includes the start
``w_1 = 0`` and excludes ``w_{T+1}``. The proof of Theorem 4 bounds exactly this average (eq. (9)). So
the T + 1 draws ``i_1 … i_{T+1}`` are all made (the index stream is the paper's), but the last step,
which only produces ``w_{T+1}``, is not computed: it cannot change the output.

**Cost.** The sum over all earlier draws makes the literal algorithm O(T²·d). The kernel
(:mod:`onpair.batch._sgd_kernels`) computes the same sum grouped by record, with per-record draw counts over
the drawn records of the other label only, so each step is O(min(t, n)·d) and the whole run O(T·n·d):
with the paper's T = n², **O(n³·d)**. Measured for a whole fit on one core (AMD EPYC, defaults,
d = 8): n = 100 in 0.003 s, n = 200 in 0.015 s, n = 300 in 0.05 s, n = 1000 in 1.8 s (d = 30: 0.004 s,
0.03 s, 0.11 s, 3.9 s). Memory: O(T) for the index stream plus O(n·d).

**Symmetric loss (a difference from the paper's (10)).** ``onpair``'s losses score every opposite-label
pair as (positive, negative) whatever its order: ℓ_sym(w; z, z') = ℓ_Y(w; z, z') + ℓ_Y(w; z', z), where
ℓ_Y is Yang's (10), (1 − wᵀ(x − x'))₊·1[y = 1, y' = −1], which counts only the order y = 1, y' = −1.
ℓ_sym is convex and G-Lipschitz with the same G (at most one of its two terms is non-zero), so it is a
loss Alg. 2 and Theorem 4 apply to verbatim, and the noise is unchanged. But its empirical risk is
**twice** that of (10), and the update moves at every draw (a new negative draw is pushed away from the
drawn positives) where Yang's literal (10) moves only when the new draw is positive. At a fixed w and
averaged over the draws, a step here is twice a step of (10) (the two orders of an opposite-label pair
are equally likely): the effective step is 2η, so pass ``eta`` halved to follow (10)'s objective at its
scale. Pathwise the two runs differ.

**Privacy (the paper's claim, Theorem 4).** The proof couples runs on neighbouring data sets through
the same draws and shows that, with probability ≥ 1 − δ/2 over the draws (the event E of the proof),
the average has ℓ2 sensitivity Δ_T with Δ_T² ≤ 4e·η²G²(T + 3T² ln²(eT) ln²(2/δ)/n²) (eq. (9), γ = δ/2,
which assumes T ≥ n). On E the classic Gaussian mechanism (their Lemma 2, at δ/2) with
σ = √(2 ln(2.5/δ))·Δ_T/ε gives (ε, δ/2)-DP, and off E the δ/2 failure probability is added: (ε, δ)-DP.
Eq. (5) is that σ² **without the factor e** of the proof's bound: solving eq. (5) for the sensitivity of
the same mechanism gives ``Δ₅ = σ·ε/√(2 ln(2.5/δ)) = 2ηG·√(T + 3T² ln²(eT) ln²(2/δ)/n²)``, which is
1/√e ≈ 0.61 times the proof's bound on E. The estimator uses σ from eq. (5) as printed (this is the
paper's algorithm) and reports ``sensitivity = Δ₅`` with the proof's bound √e·Δ₅ beside it. Two more
caveats of the claim, stated and not corrected: Lemma 2 (the classic Gaussian mechanism) is proven for
ε < 1 only, and the bound on Δ_T uses T ≥ n (a ``PrivacyWarning`` is issued when T < n).

**An independent, unconditional bound.** Every iterate lies in W, so for any fixed draws the average
does too, and ‖w̄_T(S) − w̄_T(S')‖ ≤ diam(W) = 2R with probability one. The Gaussian mechanism with the
same σ and sensitivity 2R is (ε_W, δ)-DP for the exact (analytic, Balle & Wang 2018) ε_W, and a mixture
over data-independent draws keeps it. The report gives it as ``epsilon_diameter``: it needs neither the
high-probability event nor ε < 1.

With the paper's T = n² and η = n^(−3/2), Δ₅ ≈ 2√3·G·ln(en²)·ln(2/δ)/√n stays above 2R until n is in
the millions (hinge, R = 1, δ = 1e-5: Δ₅ ≈ 86 and σ ≈ 430 at n = 100, σ ≈ 198 at n = 1000; Δ₅ < 2 only
for n above about 2·10⁶). So at these settings the released model is almost pure noise (measured AUC
≈ 0.5, against ≈ 0.85 for the non-private twin), and ``epsilon_diameter`` (≈ 0.01 to 0.03 at ε = 1) is
the honest reading of its privacy.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..core._validation import check_in_range, check_radius
from ..core.estimator import PairwiseEstimator, fit_report, perturbed
from ..core.losses import get_loss
from ..core.matrix_geometry import constraint_code, constraint_diameter
from ..core.metric_losses import PAPER_TERMS, get_metric_loss
from ..privacy.checks import check_epsilon
from ..privacy.conversions import eps_from_rho
from ..privacy.events import ApproxDPRelease
from ..privacy.exceptions import PrivacyWarning
from ..privacy.signal import signal_fields
from ._metric_kernels import _metric_pairwise_sgd
from ._sgd_kernels import _pairwise_sgd

__all__ = ["OutputPerturbedSGD", "paper_sensitivity", "paper_sigma"]

LOSSES = ("hinge", "square")


def paper_sensitivity(n, T, eta, lipschitz, delta):
    """Δ₅ = 2ηG·√(T + 3T² ln²(eT) ln²(2/δ)/n²): the sensitivity for which eq. (5) is the classic σ.

    It is σ·ε/√(2 ln(2.5/δ)) with σ from eq. (5); the proof of Theorem 4 bounds the sensitivity on its
    high-probability event by √e times this (see the module docstring).

    Examples
    --------
    >>> round(paper_sensitivity(n=100, T=10_000, eta=1e-3, lipschitz=2.0, delta=1e-5), 2)
    86.35
    """
    T = float(T)
    log_eT = 1.0 + math.log(T)  # ln(eT)
    log_2_delta = math.log(2.0 / delta)
    inner = T + 3.0 * T * T * log_eT**2 * log_2_delta**2 / (float(n) * float(n))
    return 2.0 * eta * lipschitz * math.sqrt(inner)


def paper_sigma(n, T, eta, lipschitz, epsilon, delta):
    """σ of Yang et al.'s eq. (5): σ² = 8η²G² ln(2.5/δ)/ε² · (T + 3T² ln²(eT) ln²(2/δ)/n²).

    Examples
    --------
    >>> round(paper_sigma(n=100, T=10_000, eta=1e-3, lipschitz=2.0, epsilon=1.0, delta=1e-5), 1)
    430.5
    """
    T = float(T)
    log_eT = 1.0 + math.log(T)
    log_2_delta = math.log(2.0 / delta)
    inner = T + 3.0 * T * T * log_eT**2 * log_2_delta**2 / (float(n) * float(n))
    variance = 8.0 * eta**2 * lipschitz**2 * math.log(2.5 / delta) / epsilon**2 * inner
    return math.sqrt(variance)


class OutputPerturbedSGD(PairwiseEstimator, algorithm="sgd"):
    """(ε, δ)-DP SGD for pairwise AUC learning with a non-smooth loss (Yang et al. 2021, Alg. 2).

    Runs T steps of SGD in which each step pairs a fresh uniform draw with every earlier draw, averages
    the iterates, and releases the average plus Gaussian noise of eq. (5), projected onto the ball of
    radius R. See the module docstring for the exact algorithm, its cost (O(n³d) at the default
    T = n²), the averaging range, the privacy claim and its caveats, and how the symmetric loss differs
    from the paper's (10).

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        The (ε, δ) of Theorem 4; ε > 0, 0 < δ < 1.
    loss : {"hinge", "square"}, default "hinge"
        Pairwise loss of :mod:`onpair.core.losses` (symmetric: see the module docstring). G is 2 for the
        hinge and 4(1 + 2R) for the square loss.
    radius : float, default 1.0
        Radius R of W = {‖w‖₂ ≤ R}.
    T : int or None, default None
        Number of iterates averaged; None gives n² (Corollary 2). Theorem 4's bound assumes T ≥ n.
    eta : float or None, default None
        Step constant η (step t is η/t); None gives n^(−3/2) (Corollary 2's O(n^(−3/2)), constant 1).
    bounds, norm_bound : public feature bounds (see :class:`onpair.core.bounds.FeatureBounds`): one of them is required
        (no default; a ValueError says where public bounds come from).
    private : bool, default True
        False gives the non-private twin: the same draws (same ``random_state``), the same iterations,
        ``coef_ = w̄_T`` without noise or final projection (w̄_T lies in W already).
    classes : sequence of labels, optional
        The **public** label domain: for the AUC task two labels (``classes_``, sorted: ``classes_[1]`` is
        positive); for the
        metric task all class labels. Recommended: without it the classes are read off ``y``, so which
        label values occur must itself be public (as the bounds are); a record with a label outside
        ``classes`` is an error, and a data set in which only one class occurs can be fitted.
    random_state : int, SeedSequence, Generator or None
        The draws and the noise come from two independent children of one SeedSequence. None: fresh
        OS entropy (a seed is for reproducible experiments only).
    discover_bounds : bool, int or dict, default False
        Find the data's box privately inside the declared (loose) box first, with a share of (ε, δ)
        (:func:`onpair.core.fitting.discovered_fit`; values as for :class:`onpair.OffPairStats`).
    accountant : ZCDPAccountant, optional
        A budget shared with other models, with an (ε, δ) budget
        (:meth:`onpair.privacy.accountant.ZCDPAccountant.from_dp`: this release is an (ε, δ) claim, not
        zCDP): each fit charges it its release event, and is refused (``PrivacyBudgetExceeded``, the
        estimator unchanged) when the budget cannot pay. scikit-learn's ``clone`` shares it. Each fit
        charged to it draws noise of its own, even with a fixed ``random_state``
        (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).
    task : {"auc", "metric"}, default "auc"
        The metric task runs the same algorithm on Yang et al.'s metric hinge loss (11),
        ``(1 + τ h_W)₊`` with τ = +1 for a same-class pair, over symmetric d×d matrices (``coef_`` is W;
        ``transform``/``score`` use its PSD part); G = 4 in the Frobenius norm, and the release noise is
        symmetric, isotropic in the Frobenius norm.
    constraint : {"psd_nuclear", "nuclear", "psd", "frobenius"}, optional
        The metric task's set W; default "psd_nuclear" (PSD, trace ≤ R: Yang's nuclear-norm ball), whose
        Frobenius diameter √2·R is the ``sensitivity_diameter``.

    Attributes
    ----------
    coef_, classes_, n_features_in_, bounds_, n_clipped_ : see :mod:`onpair.core.estimator`.
    privacy_report_ : dict
        The keys of every report (:func:`onpair.privacy.reports.build_report`) with ``mode = "paper"``:
        one release, an :class:`onpair.privacy.events.ApproxDPRelease` row with ``sigma`` from eq. (5),
        ``sensitivity = Δ₅`` and the (ε, δ) spent; ``epsilon_spent`` is what is proven for this σ
        (``privacy_claim`` says how), the paper's claim is ``paper_epsilon``. There is no zCDP accounting
        here, so there are no ``rho`` keys. Also ``T``, ``eta``, ``lipschitz``, ``loss``, ``radius``,
        ``sensitivity_in_proof`` (√e·Δ₅), ``sigma_in_proof``, ``claim_probability`` (1 − δ/2: the
        probability over the draws of the event on which the sensitivity bound holds),
        ``sensitivity_diameter`` (diam(W): 2R, or √2·R for the PSD sets of the metric task) and
        ``epsilon_diameter`` (the unconditional ε at δ from that diameter).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.batch.output_perturbation import OutputPerturbedSGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(60, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> twin = OutputPerturbedSGD(bounds=(0, 1), private=False, random_state=0).fit(X, y)
    >>> twin.score(X, y) > 0.9, twin.privacy_report_["T"], twin.coef_.shape
    (True, 3600, (3,))
    >>> est = OutputPerturbedSGD(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.privacy_report_["releases"][0]["sigma"] > 100  # eq. (5) at T = n², η = n^(−3/2)
    True
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="hinge", radius=1.0, T=None, eta=None,
                 bounds=None, norm_bound=None, private=True, task="auc", constraint=None, classes=None, random_state=None,
                 accountant=None, discover_bounds=False):
        self.task = task
        self.constraint = constraint
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.radius = radius
        self.T = T
        self.eta = eta
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.private = private
        self.random_state = random_state
        self.accountant = accountant
        self.discover_bounds = discover_bounds

    #: Yang et al.'s claim, and the diameter bound beside it, are (ε, δ) ones: the release is an ApproxDPRelease.
    approximate_dp = True

    # -- parameters ---------------------------------------------------------------------------------
    def _check_params(self, n_records, n_features, classes) -> None:
        """Every parameter checked (:meth:`_checked_params`) before the fit draws noise or finds a range."""
        self._checked_params()

    def _checked_params(self):
        """The validated parameters (T and eta still possibly None); a ValueError names the bad one."""
        epsilon = check_epsilon(self.epsilon)
        # Narrower than check_delta below: eq. (5)'s log(2/δ)² overflows for δ under ~1e-300.
        delta = check_in_range(self.delta, "delta", 1e-300, 1.0 - 1e-12)
        if self._metric_task():
            if self.loss != "hinge":
                raise ValueError(f"loss must be 'hinge' for task='metric' (Yang et al. (11)), got {self.loss!r}")
            constraint_code("psd_nuclear" if self.constraint is None else self.constraint)
        else:
            if not isinstance(self.loss, str) or self.loss not in LOSSES:
                raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
            if self.constraint not in (None, "l2"):
                raise ValueError(f"constraint={self.constraint!r} is for task='metric'")
        radius = check_radius(self.radius)
        T = self.T
        if T is not None:
            if isinstance(T, (bool, np.bool_)) or not isinstance(T, numbers.Integral):
                raise ValueError(f"T must be None or an integer >= 1, got {T!r}")
            if T < 1:
                raise ValueError(f"T must be None or an integer >= 1, got {T!r}")
            T = int(T)
        eta = None if self.eta is None else check_in_range(self.eta, "eta", 1e-12, 1e6)
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        loss = get_metric_loss(self.loss) if self._metric_task() else get_loss(self.loss)
        return epsilon, delta, loss, radius, T, eta, bool(self.private)

    def fit(self, X, y):
        """Fit on ``X`` (n, d) with two-class labels ``y`` and release one model (see the class docstring).

        The parameters are checked before the data is read; a failed fit leaves the estimator as it was.
        ``X`` needs at least 2 records: 0 records (``fit([], [])`` included) or 1 is a ``ValueError``
        ("X has 0 records; fit needs at least 2 records").
        """
        self._checked_params()
        return super().fit(X, y)

    # -- the algorithm ------------------------------------------------------------------------------
    def _fit_released(self, Z, signs, seed_sequence):
        epsilon, delta, loss, radius, T, eta, private = self._checked_params()
        n, dim = Z.shape
        T = n * n if T is None else T
        eta = float(n) ** -1.5 if eta is None else eta
        G = loss.lipschitz(radius)
        if private and T < n:
            warnings.warn(
                f"T = {T} < n = {n}: the sensitivity bound behind eq. (5) (Yang et al. eq. (9)) assumes "
                "T >= n, so the paper's (epsilon, delta) claim is not established for this T "
                "(epsilon_diameter in privacy_report_ still holds).",
                PrivacyWarning, stacklevel=4)
        sampling_seq, noise_seq = seed_sequence.spawn(2)
        # i_1 … i_{T+1}, uniform on [n] with replacement: public randomness, independent of the data.
        indices = np.random.Generator(np.random.PCG64(sampling_seq)).integers(0, n, size=T + 1)
        metric = self._metric_task()
        if metric:
            # W_1 = 0 (Yang's w_1 = 0), PSD with nuclear norm ≤ R by default (Yang et al. (11)).
            constraint = constraint_code("psd_nuclear" if self.constraint is None else self.constraint)
            iterate_sum = np.zeros(dim * dim)
            _metric_pairwise_sgd(np.ascontiguousarray(Z, dtype=np.float64), np.ascontiguousarray(signs, dtype=np.int64),
                                 np.asarray(indices, dtype=np.int64), T, float(eta), float(radius), constraint,
                                 loss.code, PAPER_TERMS.as_array(), np.zeros(dim * dim), iterate_sum)
            diameter = constraint_diameter(constraint, radius)
        else:
            iterate_sum = np.zeros(dim)
            _pairwise_sgd(np.ascontiguousarray(Z, dtype=np.float64), np.ascontiguousarray(signs, dtype=np.int8),
                          np.asarray(indices, dtype=np.int64), T, float(eta), float(radius), loss.code, iterate_sum)
            diameter = 2.0 * radius
        w_bar = iterate_sum / T
        common = {"T": T, "eta": eta, "loss": loss.name, "lipschitz": G, "radius": radius}
        if not private:
            return w_bar, fit_report(self, (), n=n, mode="paper", accounting="paper", public=common)
        sigma = paper_sigma(n, T, eta, G, epsilon, delta)
        sensitivity = paper_sensitivity(n, T, eta, G, delta)
        coef = perturbed(w_bar, sigma, np.random.Generator(np.random.PCG64(noise_seq)), dim, radius,
                         constraint if metric else None)
        epsilon_diameter = float(eps_from_rho(0.5 * (diameter / sigma) ** 2, delta, method="gaussian"))
        # What this σ is proven to give: the proof's sensitivity √e·Δ₅ holds with probability 1 − δ/2, so
        # the release is (ε', δ/2)-DP on that event with the exact Gaussian curve, (ε', δ)-DP overall;
        # and, unconditionally, (epsilon_diameter, δ)-DP from ‖w̄ − w̄'‖ ≤ 2R. The smaller one is spent;
        # the paper's own claim stays beside it as paper_epsilon. Neither is a zCDP figure: the event is an
        # (ε, δ) one, and the report has no ρ keys.
        mu_proof = math.sqrt(math.e) * sensitivity / sigma
        epsilon_proof = float(eps_from_rho(0.5 * mu_proof**2, delta / 2.0, method="gaussian"))
        # For T < n the proof's sensitivity bound is not established (the warning above): only the
        # unconditional diameter bound is spent then.
        epsilon_spent = epsilon_diameter if T < n else min(epsilon_proof, epsilon_diameter)
        event = ApproxDPRelease(
            epsilon=epsilon_spent, delta=delta, round=T, sensitivity=sensitivity, sigma=sigma,
            what="w̄ + N(0, σ²I), σ from Yang et al. eq. (5)",
            conditions=(("T >= n", T >= n), ("claim_probability", 1.0 - delta / 2.0),
                        ("sensitivity_diameter", diameter)))
        public = {
            **common,
            "privacy_claim": (
                "Yang et al. (2021), Theorem 4 claims (paper_epsilon, delta)-DP. epsilon_spent is what "
                "is proven for this sigma: the smaller of epsilon_proof (the proof's sensitivity, exact "
                "Gaussian curve) and epsilon_diameter. The sensitivity bound holds with probability "
                "1 - delta/2 over the draws (for T >= n); eq. (5) omits the factor e of the proof's "
                "bound (sensitivity_in_proof); the classic Gaussian mechanism it uses is proven for "
                "epsilon < 1. epsilon_diameter is an unconditional bound from diam(W) (2R; sqrt(2)R for "
                "the PSD sets of the metric task)."
            ),
            "claim_probability": 1.0 - delta / 2.0,
            "sensitivity_in_proof": math.sqrt(math.e) * sensitivity,
            "sigma_in_proof": math.sqrt(math.e) * sigma,
            "sensitivity_diameter": diameter,
            "epsilon_diameter": epsilon_diameter,
            "epsilon_proof": epsilon_proof,
            "paper_epsilon": epsilon,
            # The noise's power: σ² per coordinate of R^d, or of the d(d + 1)/2 symmetric matrices.
            **signal_fields(coef, sigma**2 * (dim * (dim + 1) // 2 if metric else dim)),
        }
        return coef, fit_report(self, [event], n=n, mode="paper", accounting="paper", public=public)
