"""Objective perturbation and approximate minima perturbation for logistic objectives (seed 004).

Two estimators with scikit-learn's API, each for the **pointwise** logistic regression a user tries first
for a private AUC scorer, and for the **pairwise** AUC logistic loss of the rest of the library:

* :class:`ObjectivePerturbedLogistic`: objective perturbation with Gaussian noise (Chaudhuri, Monteleoni and
  Sarwate 2011; Kifer, Smith and Thakurta 2012, the Gaussian variant). Release the exact minimiser
  of ``J(θ) = scale·[F(θ; D) + (Λ/2)‖θ‖² + bᵀθ]``, b ~ N(0, σ²I);
* :class:`ApproxMinimaPerturbedLogistic`: approximate minima perturbation (Iyengar, Near, Song, Thakkar,
  Thakurta and Wang 2019, Alg. 1, "AMP"). Stop the solver as soon as ‖∇J(θ)‖ ≤ γ, then add output
  noise N(0, σ₂²I) for the distance to the exact minimiser.

The constants are derived in :mod:`onpair.objective.functions` and docs/algorithms.md#objective-perturbation
(the bound proven there is ε = s²/2 + s·q + r·log(1 + T/(rΛ)) with s = Δ_g/σ, q² the χ²_k upper-δ
quantile and T a bound on the trace of the replaced record's Hessian terms; it asks less than the seed's
statements of the papers' constants, e.g. AMP's Λ ≥ rβ/(ε₁ − ε₃), see the docs).

**Conditions on the regulariser.** The Jacobian of θ ↦ b costs ε_curv = r·log(1 + T/(rΛ)). With
``lam=None`` Λ is the smallest value for which ε_curv = ``curvature_share``·ε₁ (ε₁ = ε for objective
perturbation, ε minus the output share for AMP); a ``lam`` below that value is **raised** to it (a
``UserWarning`` says so, and ``privacy_report_`` has ``lam_requested``, ``lam`` and ``lam_raised``). The
noise then gets what is left: ε_noise = ε₁ − ε_curv(Λ) ≥ (1 − curvature_share)·ε₁.

**AMP's output noise** (proof in docs/algorithms.md#approximate-minima-perturbation). Let θ* be the exact
minimiser (the objective-perturbation release, (ε₁, δ₁)-DP) and θ_a the solver's point, ‖∇J(θ_a)‖ ≤ γ, so
‖θ_a − θ*‖ ≤ γ/λ (J is λ-strongly convex, λ = scale·Λ). Given θ* = t the solver's point is a deterministic
function of (D, t) (b = b_D(t), start 0), within γ/λ of t under D and under D′: the second release
θ_a + b₂ is a Gaussian mechanism of sensitivity 2γ/λ, and adaptive composition gives (ε₁ + ε₂, δ₁ + δ₂).
Iyengar et al. state σ₂ for the sensitivity γ/λ (in their units nγ/Λ); this proof needs twice that, and the
library uses it, calibrated with the analytic Gaussian mechanism. δ is split evenly, δ₁ = δ₂ = δ/2.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .functions import (EXACT_TOLERANCE, PairwiseLogistic, PointwiseLogistic, curvature_epsilon,
                                   minimise, noise_quantile, objective_noise_sigma, smallest_regulariser)
from ..privacy.checks import EPSILON_RANGE, check_delta, check_epsilon
from ..privacy.events import ApproxDPRelease, GaussianRelease
from ..privacy.gaussian import gaussian_sigma
from ..privacy.signal import signal_fields
from ..privacy.reports import warn_large_delta
from ..core.estimator import PairwiseEstimator, fit_report
from ..core.fitting import fitted_feature_block

__all__ = ["ObjectivePerturbedLogistic", "ApproxMinimaPerturbedLogistic"]

OBJECTIVES = ("pointwise", "pairwise")

#: The relative margin below its share at which each noise is calibrated, so that the composed ε spent never
#: exceeds the ε asked for by rounding (the root finders and the sum of the shares are exact to ~1e-15).
PLANNING_MARGIN = 1e-12


def _check_share(value, name, upper=1.0):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or not 0.0 < value < upper:
        raise ValueError(f"{name} must be a number in (0, {upper:g}), got {value!r}")
    return float(value)


class _PerturbedLogistic(PairwiseEstimator):
    """Shared fit of the two estimators: validation, the objective, Λ, the noise b, the solve, the report."""

    _amp = False
    #: Objective perturbation's bound is an (ε, δ) one, not zCDP (:class:`onpair.privacy.events.ApproxDPRelease`).
    approximate_dp = True

    def _validated(self):
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        intercept = self.fit_intercept
        if intercept is None:
            intercept = self.objective == "pointwise"
        if not isinstance(intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be None, True or False, got {self.fit_intercept!r}")
        if intercept and self.objective == "pairwise":
            raise ValueError("fit_intercept=True is for objective='pointwise': the pairwise loss depends on "
                             "differences of records, in which an intercept cancels")
        lam = self.lam
        if lam is not None and (isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer))
                                or not math.isfinite(lam) or not 0.0 < lam <= 1e12):
            raise ValueError(f"lam must be None or a number in (0, 1e12], got {lam!r}")
        share = _check_share(self.curvature_share, "curvature_share")
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        return epsilon, delta, bool(intercept), lam, share

    def _checked(self):
        """Every parameter checked: ``(epsilon, delta, intercept, lam, curvature_share, amp, epsilon_output)``
        (``amp`` None for objective perturbation); a ValueError names the bad one."""
        epsilon, delta, intercept, lam_requested, share = self._validated()
        amp = self._validated_amp() if self._amp else None
        epsilon_output = amp["share"] * epsilon if amp else 0.0
        if amp and epsilon_output < EPSILON_RANGE[0]:
            raise ValueError(f"output_share·epsilon = {epsilon_output:g} is below the smallest ε a Gaussian release "
                             f"can be calibrated to ({EPSILON_RANGE[0]:g}): raise epsilon or output_share")
        return epsilon, delta, intercept, lam_requested, share, amp, epsilon_output

    def _check_params(self, n_records, n_features, classes) -> None:
        """Every parameter checked (:meth:`_checked`) before the fit draws noise or finds a range."""
        self._checked()

    def _fit_released(self, Z, signs, seed_sequence):
        epsilon, delta, intercept, lam_requested, share, amp, epsilon_output = self._checked()
        n = Z.shape[0]
        if self.private:
            warn_large_delta(type(self).__name__, delta, n, stacklevel=4)
        objective = PointwiseLogistic(Z, signs, intercept) if self.objective == "pointwise" else PairwiseLogistic(Z, signs)
        epsilon_objective = epsilon - epsilon_output
        delta_objective = delta / 2.0 if amp else delta
        rank, trace = objective.curvature_rank, objective.curvature_trace
        smallest = smallest_regulariser(share * epsilon_objective, rank, trace)
        regulariser = self._regulariser(smallest, lam_requested, objective.scale)
        raised = lam_requested is not None and lam_requested / objective.scale < smallest
        if raised and self.private:
            warnings.warn(f"lam = {lam_requested:g} is below the smallest value objective perturbation allows here "
                          f"({smallest * objective.scale:.4g}: ε_curv = {share:g}·ε); it was raised to that value "
                          "(privacy_report_['lam_raised'])", UserWarning, stacklevel=4)
        epsilon_curvature = curvature_epsilon(regulariser, rank, trace)
        # The noise is planned a relative PLANNING_MARGIN below its share: ε_curv + ε_noise (+ the output
        # noise's exact ε) then stays at most ε after rounding (it once came to 1.0000000000000009 for ε = 1,
        # and a shared (ε, δ) budget of exactly ε refused the fit).
        epsilon_noise = (epsilon_objective - epsilon_curvature) * (1.0 - PLANNING_MARGIN)
        rng = np.random.Generator(np.random.PCG64(seed_sequence))
        if self.private:
            sigma = self._noise_sigma(objective, epsilon_noise, delta_objective)
            linear = sigma * rng.standard_normal(objective.dim)
        else:
            sigma, linear = 0.0, np.zeros(objective.dim)
        exact_tol = EXACT_TOLERANCE * max(1.0, objective.scale * float(np.linalg.norm(linear)))
        tolerance = amp["gamma"] if amp else exact_tol
        theta, steps, gradient_norm = minimise(objective, regulariser, linear, tolerance)
        strong_convexity = objective.scale * regulariser
        stopping_rule = f"‖∇J(θ)‖ ≤ {tolerance:.3g}"
        events = [ApproxDPRelease(
            epsilon=epsilon_curvature + epsilon_noise, delta=delta_objective, round=n,
            sensitivity=objective.gradient_sensitivity, sigma=sigma, what="b, the objective's linear term (sum units)",
            conditions=(("regulariser_sum_units", regulariser), ("curvature_rank", rank), ("curvature_trace", trace),
                        ("noise_dim", objective.noise_dim),
                        ("minimiser", "AMP: ‖∇J‖ ≤ γ, then output noise" if amp else "exact")))]
        if amp and self.private:
            output_sensitivity = 2.0 * amp["gamma"] / strong_convexity
            sigma_output = gaussian_sigma(output_sensitivity, epsilon_output * (1.0 - PLANNING_MARGIN), delta / 2.0,
                                          method="analytic")
            theta = theta + sigma_output * rng.standard_normal(objective.dim)
            events.append(GaussianRelease(sensitivity=output_sensitivity, sigma=sigma_output, round=n,
                                          what="output noise b₂ on θ"))
        public = {
            "objective": self.objective, "fit_intercept": intercept,
            "lam": strong_convexity, "lam_requested": lam_requested, "lam_raised": bool(raised),
            "regulariser_sum_units": regulariser, "epsilon_curvature": epsilon_curvature,
            "epsilon_noise": epsilon_noise, "epsilon_output": epsilon_output,
            "delta_objective": delta_objective, "delta_output": delta - delta_objective,
            "gradient_sensitivity": objective.gradient_sensitivity, "noise_dim": objective.noise_dim,
            "noise_quantile": noise_quantile(delta_objective, objective.noise_dim),
            "curvature_rank": rank, "curvature_trace": trace,
        }
        if self.private:
            # b moves the minimiser by at most ‖b‖/Λ (the objective is Λ-strongly convex, sum units), and AMP's
            # output noise adds its own power: an upper bound on the noise's power, so expected_cosine is a
            # lower bound here.
            power = sigma**2 * objective.dim / regulariser**2
            if amp:
                power += sigma_output**2 * objective.dim
            public.update(signal_fields(theta, power))
        # The exact minimiser's tolerance scales with ‖b‖, and b = −∇F(θ; D) − Λθ at the released θ: a
        # function of the records, not of the release. AMP's γ is a public parameter.
        curator = {"solver_steps": steps, "gradient_norm": gradient_norm}
        (public if amp else curator)["stopping_rule"] = stopping_rule
        # (ε, δ) events (and AMP's Gaussian output noise, converted exactly at its δ/2): no ρ keys.
        return theta, fit_report(self, events, n=n, mode="amp" if amp else "objective", public=public,
                                 curator=curator)

    # Two seams, overridden only by the audit's deliberately broken variants (onpair.audit).
    def _regulariser(self, smallest, requested, scale):
        """Λ (sum units): the requested λ/scale, raised to the smallest value the condition allows."""
        return smallest if requested is None else max(requested / scale, smallest)

    def _noise_sigma(self, objective, epsilon_noise, delta):
        """σ of b: :func:`onpair.objective.functions.objective_noise_sigma` for the objective's constants."""
        return objective_noise_sigma(objective.gradient_sensitivity, epsilon_noise, delta, objective.noise_dim)

    # -- the released model ------------------------------------------------------------------------------
    def fit(self, X, y):
        """Fit on ``X`` (n, d) with two-class labels ``y`` and release one private model (see the class).

        As every offline estimator's ``fit``: ``X`` needs at least 2 records (with 0 records or 1 a
        ``ValueError``, and the estimator is left as it was); each call spends (ε, δ) again. The minimiser's
        last coordinate is ``intercept_`` when an intercept is fitted.

        Returns
        -------
        self
        """
        super().fit(X, y)
        theta = self.coef_
        if self.privacy_report_["fit_intercept"]:
            self.coef_, self.intercept_ = theta[:-1].copy(), float(theta[-1])
        else:
            self.intercept_ = 0.0
        return self

    def decision_function(self, X) -> np.ndarray:
        """Scores ``coef_ᵀφ(x) + intercept_`` (φ: the public bounds map)."""
        self._check_fitted()
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        X = fitted_feature_block(self, X)
        Z, _ = self.bounds_.transform(X)
        return Z @ self.coef_ + self.intercept_


_COMMON_PARAMETERS = """
    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        (ε, δ)-DP of ``coef_`` (and ``intercept_``). Prefer δ ≪ 1/n (a ``PrivacyWarning`` otherwise).
    objective : {"pointwise", "pairwise"}, default "pointwise"
        "pointwise": logistic regression, Σ_i log(1 + e^(−y_i(θᵀx_i + b))). "pairwise": the AUC logistic
        loss over all opposite-label pairs, Σ log(1 + e^(−2θᵀ(x⁺ − x⁻))) (the library's pairwise risk).
    fit_intercept : bool or None, default None
        Pointwise only (None: True). The intercept is the coefficient of a constant feature 1, so the
        records' bound grows from 1 to √2 and the constants with it.
    lam : float or None, default None
        Weight λ of (λ/2)‖θ‖² in the normalised objective (the mean loss plus the regulariser). None: the
        smallest valid value; a smaller value is raised to it (warned, and reported).
    curvature_share : float in (0, 1), default 0.05
        Share of ε (AMP: of ε₁) that pays for the Jacobian term at the smallest valid λ. A smaller share
        means a larger λ and less noise. Chosen on synthetic data (two Gaussian classes, isotropic and
        correlated, n = 500 and 2,000): over shares 0.005–0.4 the test AUC at 0.05 was within 0.02 of the
        best in every setting, and 0.1 or more lost up to 0.03 (0.2: up to 0.07).
    bounds, norm_bound : public feature bounds (:class:`onpair.core.bounds.FeatureBounds`)
        Required (one of them; no default). Records outside are clipped (that clipping is part of the mechanism).
    classes : sequence of two labels, optional
        The public label domain; ``classes_`` is it sorted and ``classes_[1]`` is positive (scikit-learn's
        convention); without it the labels are read off ``y``.
    private : bool, default True
        False: the non-private twin, the exact minimiser of the same regularised objective (same λ).
    random_state : int, SeedSequence, Generator or None
        The noise; None draws fresh OS entropy (a seed is for reproducible experiments only).
    discover_bounds : bool, int or dict, default False
        Find the data's box privately inside the declared (loose) box first, with a share of (ε, δ)
        (:func:`onpair.core.fitting.discovered_fit`; values as for :class:`onpair.OffPairStats`).
    accountant : ZCDPAccountant, optional
        A budget shared with other models, with an (ε, δ) budget
        (:meth:`onpair.privacy.accountant.ZCDPAccountant.from_dp`: objective perturbation's bound is an
        (ε, δ) one, not zCDP): each fit charges it its release events, and is refused
        (``PrivacyBudgetExceeded``, the estimator unchanged) when the budget cannot pay. scikit-learn's
        ``clone`` shares it. Each fit charged to it draws noise of its own, even with a fixed
        ``random_state`` (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`)."""

_COMMON_ATTRIBUTES = """
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        0 for the pairwise objective (a ranking score needs none).
    privacy_report_ : dict
        The keys of every estimator (``epsilon_spent`` = ε_curv + ε_noise (+ ε_output), ``releases``: one row
        per noise draw with its sensitivity and σ; the ρ keys are None: this is not a zCDP composition),
        and ``lam`` (used), ``lam_requested``, ``lam_raised``, ``epsilon_curvature``, ``epsilon_noise``,
        ``epsilon_output``, ``gradient_sensitivity``, ``noise_dim``, ``curvature_rank``, ``curvature_trace``,
        ``stopping_rule``, ``solver_steps``, ``gradient_norm``, ``curator_only``. ``solver_steps`` and
        ``gradient_norm`` (for AMP: before the output noise) depend on the records, as does objective
        perturbation's ``stopping_rule`` (its tolerance scales with ‖b‖, a function of the records at the
        released point): they are listed under ``curator_only``, with ``n_clipped``, and stay with the
        data curator.
    classes_, n_features_in_, bounds_, n_clipped_ : as for every offline estimator.

    Raises
    ------
    SolverDidNotConverge
        (:mod:`onpair.objective.functions`) when the solver misses its stopping rule within 100 Newton
        steps: nothing is released. Whether it converges, and the message (‖∇J‖, the step count), depend on
        the records: the exception is a data-dependent observable outside the guarantee, for the curator
        only (do not let it, or a retry loop around it, reach anyone else)."""


class ObjectivePerturbedLogistic(_PerturbedLogistic):
    __doc__ = """Logistic regression (pointwise or pairwise AUC) by objective perturbation, Gaussian noise.

    Perturbs ``J(θ) = scale·[F(θ; D) + (Λ/2)‖θ‖² + bᵀθ]`` on all of R^p, b ~ N(0, σ²I), and releases the
    point θ̂ that Newton's method reaches when ‖∇J(θ̂)‖ ≤ 10⁻¹⁰·max(1, scale·‖b‖), within that tolerance
    over λ of the exact minimiser θ* (a run that does not get there raises
    :class:`onpair.objective.functions.SolverDidNotConverge` and releases nothing). The bound
    (ε, δ) = ε_curv(Λ) + ε_noise(σ) of :mod:`onpair.objective.functions`
    is proven for **θ***, the exact minimiser; θ̂ is its floating-point stand-in, with no proof of its own
    (the gap is of the order of rounding, and a function of the records). For a guarantee proven for the
    point actually released by an inexact solver, use :class:`ApproxMinimaPerturbedLogistic`.
""" + _COMMON_PARAMETERS + "\n" + _COMMON_ATTRIBUTES + """

    Notes
    -----
    Pointwise: O(n·p²) per Newton step. Pairwise: O(n⁺·n⁻·d) per step (the Hessian's cross term), so
    thousands of records, not millions. The pairwise gradient changes by up to 4(n − 1) when one record is
    replaced, against 2√2 pointwise, and its Jacobian term has rank d instead of 1: pairwise objective
    perturbation needs far more noise and regularisation (bench/results/objective_perturbation.md measures what
    that costs).

    References
    ----------
    K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private empirical risk minimization. JMLR 12
    (2011). D. Kifer, A. Smith, A. Thakurta. Private convex empirical risk minimization and high-dimensional
    regression. COLT 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import ObjectivePerturbedLogistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = ObjectivePerturbedLogistic(epsilon=1.0, delta=1e-4, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9, est.coef_.shape, est.privacy_report_["epsilon_spent"] <= 1.0
    (True, (3,), True)
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, objective="pointwise", fit_intercept=None, lam=None,
                 curvature_share=0.05, bounds=None, norm_bound=None, classes=None, private=True, random_state=None,
                 accountant=None, discover_bounds=False):
        self._store_params(locals())


class ApproxMinimaPerturbedLogistic(_PerturbedLogistic):
    __doc__ = """Logistic regression (pointwise or pairwise AUC) by approximate minima perturbation (AMP).

    Objective perturbation with budget (ε₁, δ/2), ε₁ = (1 − ``output_share``)·ε, solved only until
    ‖∇J(θ)‖ ≤ γ (``gradient_tol``), then θ + N(0, σ₂²I) with σ₂ the analytic Gaussian σ for the
    sensitivity 2γ/λ at (``output_share``·ε, δ/2) (proof in the module docstring).
""" + _COMMON_PARAMETERS + """
    gradient_tol : float, default 1e-6
        γ, the stopping rule ‖∇J(θ)‖₂ ≤ γ on the normalised objective.
    output_share : float in (0, 1), default 0.05
        Share of ε spent on the output noise.
""" + _COMMON_ATTRIBUTES + """

    References
    ----------
    R. Iyengar, J. P. Near, D. Song, O. Thakkar, A. Thakurta, L. Wang. Towards practical differentially
    private convex optimization. IEEE S&P 2019, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import ApproxMinimaPerturbedLogistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(400, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> est = ApproxMinimaPerturbedLogistic(epsilon=1.0, delta=1e-4, bounds=(0, 1), random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9, len(est.privacy_report_["releases"]), est.privacy_report_["gradient_norm"] <= 1e-6
    (True, 2, True)
    """

    _amp = True

    def __init__(self, *, epsilon=1.0, delta=1e-5, objective="pointwise", fit_intercept=None, lam=None,
                 curvature_share=0.05, gradient_tol=1e-6, output_share=0.05, bounds=None, norm_bound=None,
                 classes=None, private=True, random_state=None, accountant=None, discover_bounds=False):
        self._store_params(locals())

    def _validated_amp(self):
        gamma = self.gradient_tol
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.floating, np.integer)) \
                or not math.isfinite(gamma) or not 1e-14 <= gamma <= 1e6:
            raise ValueError(f"gradient_tol must be a number in [1e-14, 1e6], got {gamma!r}")
        return {"gamma": float(gamma), "share": _check_share(self.output_share, "output_share")}
