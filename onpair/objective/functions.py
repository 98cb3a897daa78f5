"""The logistic objectives of objective perturbation, their privacy constants, and the solver's stopping rule.

Objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011; Kifer, Smith and Thakurta 2012, Gaussian
noise) releases the minimiser of

    F_b(θ; D) = F(θ; D) + (Λ/2)‖θ‖² + bᵀθ,      b ~ N(0, σ²I_p),

with ``F(θ; D)`` a sum of convex, twice differentiable terms, one per record (pointwise) or one per
opposite-label pair (pairwise AUC). The estimators (:mod:`onpair.objective.estimators`)
present the normalised objective ``J = scale·F_b`` (``scale`` = 1/n pointwise, 2/(n(n − 1)) pairwise, the
library's pairwise risk), whose regulariser weight is ``λ = scale·Λ``.

**The guarantee** (proof: docs/algorithms.md#objective-perturbation). Replace one record (D → D′, n
public). For every θ, with ``g(θ) = ∇F(θ; D′) − ∇F(θ; D)``:

1. *gradient*: ‖g(θ)‖ ≤ Δ_g, and g(θ) lies in a fixed subspace V (depending on the two records only) of
   dimension ≤ k;
2. *curvature*: ``∇²F(θ; D) = B + E`` and ``∇²F(θ; D′) = B + E′`` with B ⪰ 0 shared and E, E′ ⪰ 0 of
   rank ≤ r and trace ≤ T.

The map θ ↦ b = −∇F(θ; D) − Λθ is a bijection (F + (Λ/2)‖·‖² is Λ-strongly convex), so the released θ
has density ``ν(b_D(θ))·det(∇²F(θ; D) + ΛI)`` and the privacy loss at θ is

    log ν(b)/ν(b + g) + log det(B + E + ΛI)/det(B + E′ + ΛI)
      ≤ (Δ_g² + 2Δ_g‖P_V b‖)/(2σ²) + r·log(1 + T/(rΛ)),

the first term because ‖b + g‖² − ‖b‖² = ‖g‖² + 2⟨P_V b, g⟩, the second because
``det(B + E′ + ΛI) ≥ det(B + ΛI)`` and ``det(B + ΛI + E)/det(B + ΛI) ≤ Π(1 + μ_i/Λ) ≤ (1 + T/(rΛ))^r``
(μ_i the ≤ r eigenvalues of E, B + ΛI ⪰ ΛI, and AM–GM under Σμ_i ≤ T). Under D, b ~ N(0, σ²I) and
‖P_V b‖²/σ² ~ χ²_{dim V}, so ‖P_V b‖ ≤ σ·q with q² = χ²_k's upper-δ quantile, with probability ≥ 1 − δ.
With ``s = Δ_g/σ`` the loss is then at most ``ε_noise + ε_curv`` with ``ε_noise = s²/2 + s·q`` and
``ε_curv = r·log(1 + T/(rΛ))``: (ε_noise + ε_curv, δ)-DP. :func:`objective_noise_sigma` solves the first
for σ, :func:`smallest_regulariser` the second for Λ.

Constants per objective (records mapped into the unit ball by the public bounds):

* pointwise, ``φ(y·θᵀx̃)`` with x̃ = (x, 1) when fitting an intercept (‖x̃‖² ≤ c² = 2, else c² = 1):
  ∇ = φ'(m)·y·x̃ with |φ'| < 1, so Δ_g = 2c (two gradients of norm < c; approached, see the tests) and
  V = span{x̃, x̃′} (k ≤ 2); the Hessian φ''(m)·x̃x̃ᵀ has rank 1 and trace ≤ c²/4 (r = 1, T = c²/4);
* pairwise AUC logistic, ``Σ_{pos×neg} ℓ(θᵀ(x⁺ − x⁻))``, ℓ(u) = φ(2u): the record is in ≤ n − 1 pairs,
  each pair gradient changes by at most Γ = 4 (:meth:`onpair.core.losses.PairLoss.pair_change` at R = ∞, label
  flips included), so Δ_g = 4(n − 1) and V = R^d (k = d); E = Σ_j ℓ''(u_j)v_jv_jᵀ with ℓ'' ≤ 1, ‖v_j‖ ≤ 2:
  rank ≤ min(d, n − 1), trace ≤ 4(n − 1).

**Stopping rules.** Objective perturbation's theorem is about the exact minimiser: :func:`minimise`
runs damped Newton steps and stops when ‖∇J(θ)‖₂ ≤ :data:`EXACT_TOLERANCE`·max(1, scale·‖b‖) (the
floating-point stand-in for the exact minimiser: then ‖θ − θ*‖ ≤ tol/λ). Approximate minima perturbation
stops as soon as ‖∇J(θ)‖₂ ≤ γ and pays for the rest with output noise. A solver that does not meet its
rule within :data:`MAX_NEWTON_STEPS` raises :class:`SolverDidNotConverge`, and nothing is released. That
exception depends on the records: it is a data-dependent observable outside the guarantee (curator-only).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ._kernels import _logistic_point_terms, _pair_logistic_block
from ..core.losses import get_loss

__all__ = ["PointwiseLogistic", "PairwiseLogistic", "curvature_epsilon", "smallest_regulariser",
           "objective_noise_sigma", "noise_quantile", "minimise", "SolverDidNotConverge", "EXACT_TOLERANCE",
           "MAX_NEWTON_STEPS"]

#: ‖∇J‖ at which a Newton run counts as the exact minimiser (relative to max(1, scale·‖b‖)).
EXACT_TOLERANCE = 1e-10
#: Newton steps before the solver gives up (strongly convex and smooth: a few dozen suffice).
MAX_NEWTON_STEPS = 100
#: Positives per block of the pairwise terms: a block's two (b, n⁻) coefficient matrices stay small.
PAIR_BLOCK = 512


class SolverDidNotConverge(RuntimeError):
    """The solver did not meet its stopping rule: nothing is released (the guarantee needs the rule).

    **A data-dependent observable.** Whether the solver meets its rule within :data:`MAX_NEWTON_STEPS`
    steps, and the ‖∇J‖ and step count the message gives, depend on the records (and on the noise b, which
    is not released): the exception is outside the guarantee, like a curator-only report field. Keep it
    with the data curator; a published "the fit failed" (or a retry with other parameters that anyone can
    observe) is a release that no ε accounts for. Approximate minima perturbation
    (:class:`onpair.ApproxMinimaPerturbedLogistic`) is the option whose proof covers an inexact solver's
    point; it too raises when even its looser rule ‖∇J‖ ≤ γ is not met.
    """


class PointwiseLogistic:
    """``F(θ) = Σ_i φ(y_i·θᵀx̃_i)``, x̃ = (x, 1) with an intercept: logistic regression as a sum.

    Parameters
    ----------
    Z : ndarray (n, d)
        Records in the unit ball (the public bounds map).
    signs : ndarray (n,)
        Labels ±1.
    intercept : bool
        Append the constant feature 1 (the last coordinate of θ is then the intercept).

    Examples
    --------
    >>> import numpy as np
    >>> f = PointwiseLogistic(np.array([[0.5], [-0.5]]), np.array([1, -1]), intercept=True)
    >>> value, grad, hess = f.terms(np.zeros(2))
    >>> round(value, 6), grad.tolist(), f.gradient_sensitivity ** 2  # 2 log 2; (2c)² = 8
    (1.386294, [-0.5, 0.0], 8.000000000000002)
    """

    def __init__(self, Z, signs, intercept: bool):
        Z = np.asarray(Z, dtype=np.float64)
        if intercept:
            Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
        self.X = np.ascontiguousarray(Z)
        self.y = np.asarray(signs, dtype=np.float64)
        n, self.dim = self.X.shape
        self.scale = 1.0 / n
        reach = math.sqrt(2.0) if intercept else 1.0  # c ≥ ‖x̃‖
        self.gradient_sensitivity = 2.0 * reach
        self.noise_dim = min(2, self.dim)
        self.curvature_rank = 1
        self.curvature_trace = reach * reach / 4.0

    def terms(self, theta):
        """(F(θ), ∇F(θ), ∇²F(θ))."""
        margins = self.y * (self.X @ theta)
        slope = np.empty_like(margins)
        curvature = np.empty_like(margins)
        value = _logistic_point_terms(margins, slope, curvature)
        gradient = self.X.T @ (slope * self.y)
        hessian = (self.X * curvature[:, None]).T @ self.X
        return value, gradient, hessian


class PairwiseLogistic:
    """``F(θ) = Σ_{i∈pos} Σ_{j∈neg} ℓ(θᵀ(x_i − x_j))``, ℓ(u) = log(1 + e^(−2u)): the AUC logistic loss.

    The gradient is ``Σ_i A_i x_i − Σ_j B_j x_j`` (A, B the row and column sums of ℓ'(u_ij)) and the
    Hessian ``Σ_i C_i x_ix_iᵀ + Σ_j D_j x_jx_jᵀ − X⁺ᵀMX⁻ − (X⁺ᵀMX⁻)ᵀ`` with M_ij = ℓ''(u_ij) and C, D its
    row and column sums: O(n⁺n⁻d) per evaluation, in blocks of :data:`PAIR_BLOCK` positives.

    Parameters
    ----------
    Z : ndarray (n, d)
        Records in the unit ball (diameter 2).
    signs : ndarray (n,)
        Labels ±1.

    Examples
    --------
    >>> import numpy as np
    >>> f = PairwiseLogistic(np.array([[0.5], [-0.5], [0.0]]), np.array([1, -1, -1]))
    >>> value, grad, hess = f.terms(np.zeros(1))
    >>> round(value, 6), grad.tolist(), hess.tolist(), f.gradient_sensitivity  # 2 log 2; −(1 + 0.5); 4(n − 1)
    (1.386294, [-1.5], [[1.25]], 8.0)
    """

    def __init__(self, Z, signs):
        Z = np.asarray(Z, dtype=np.float64)
        positive = np.asarray(signs) > 0
        self.positives = np.ascontiguousarray(Z[positive])
        self.negatives = np.ascontiguousarray(Z[~positive])
        n, self.dim = Z.shape
        self.scale = 2.0 / (n * (n - 1.0))
        pair_change = get_loss("logistic").pair_change(math.inf)  # Γ = 4 on all of R^d
        self.gradient_sensitivity = (n - 1.0) * pair_change
        self.noise_dim = self.dim
        self.curvature_rank = max(1, min(self.dim, n - 1))
        self.curvature_trace = (n - 1.0) * get_loss("logistic").smoothness()  # ℓ''·‖v‖² ≤ 1·4

    def terms(self, theta):
        """(F(θ), ∇F(θ), ∇²F(θ))."""
        P, N = self.positives, self.negatives
        d = self.dim
        value = 0.0
        gradient = np.zeros(d)
        hessian = np.zeros((d, d))
        if P.shape[0] == 0 or N.shape[0] == 0:
            return value, gradient, hessian
        t = N @ theta
        column_slope = np.zeros(N.shape[0])
        column_curvature = np.zeros(N.shape[0])
        for i0 in range(0, P.shape[0], PAIR_BLOCK):
            block = P[i0:i0 + PAIR_BLOCK]
            s = block @ theta
            slope = np.empty((block.shape[0], N.shape[0]))
            curvature = np.empty_like(slope)
            row_loss = np.empty(block.shape[0])
            _pair_logistic_block(s, t, slope, curvature, row_loss)
            value += float(row_loss.sum())
            gradient += block.T @ slope.sum(axis=1)
            column_slope += slope.sum(axis=0)
            cross = block.T @ (curvature @ N)
            hessian += (block * curvature.sum(axis=1)[:, None]).T @ block - cross - cross.T
            column_curvature += curvature.sum(axis=0)
        gradient -= N.T @ column_slope
        hessian += (N * column_curvature[:, None]).T @ N
        return value, gradient, 0.5 * (hessian + hessian.T)


def curvature_epsilon(regulariser: float, rank: int, trace: float) -> float:
    """ε_curv = r·log(1 + T/(rΛ)): the Jacobian's share of the privacy loss (module docstring).

    Examples
    --------
    >>> round(curvature_epsilon(0.5, 1, 0.5), 12)  # log 2
    0.69314718056
    """
    return float(rank) * math.log1p(float(trace) / (float(rank) * float(regulariser)))


def smallest_regulariser(epsilon_curvature: float, rank: int, trace: float) -> float:
    """The smallest Λ with r·log(1 + T/(rΛ)) ≤ ε_curv: Λ = T/(r·(e^(ε_curv/r) − 1)), never below 10⁻¹²·T.

    The floor matters only for ε_curv/r > 27 (ε in the hundreds): any larger Λ is valid too (ε_curv only
    falls), and the floor keeps the Newton system well conditioned where e^(ε_curv/r) would overflow.

    Examples
    --------
    >>> round(smallest_regulariser(math.log(2.0), 1, 0.5), 12)
    0.5
    >>> smallest_regulariser(1e4, 1, 0.5)   # e^10000 overflows: the floor
    5e-13
    """
    ratio = float(epsilon_curvature) / float(rank)
    floor = 1e-12 * float(trace)
    if ratio > 700.0:
        return floor
    return max(float(trace) / (float(rank) * math.expm1(ratio)), floor)


def noise_quantile(delta: float, dim: int) -> float:
    """q with P(‖P_V b‖ > σq) = δ for b ~ N(0, σ²I): the square root of χ²_dim's upper-δ quantile.

    Examples
    --------
    >>> round(noise_quantile(math.exp(-3.0), 2) ** 2, 10)  # χ²₂ has tail e^(−x/2): x = 6
    6.0
    """
    return math.sqrt(float(stats.chi2.isf(float(delta), int(dim))))


def objective_noise_sigma(gradient_sensitivity: float, epsilon_noise: float, delta: float, dim: int) -> float:
    """σ of b such that s²/2 + s·q = ε_noise with s = Δ_g/σ and q = :func:`noise_quantile` (δ, dim).

    Examples
    --------
    >>> q = noise_quantile(1e-5, 2)
    >>> s = 2.0 / objective_noise_sigma(2.0, 1.0, 1e-5, 2)
    >>> round(s * s / 2 + s * q, 12)
    1.0
    """
    q = noise_quantile(delta, dim)
    epsilon_noise = float(epsilon_noise)
    s = 2.0 * epsilon_noise / (q + math.sqrt(q * q + 2.0 * epsilon_noise))  # −q + √(q² + 2ε), stably
    return float(gradient_sensitivity) / s


def minimise(objective, regulariser: float, linear, tolerance: float, max_steps: int = MAX_NEWTON_STEPS):
    """Minimise ``F(θ) + (Λ/2)‖θ‖² + bᵀθ`` from θ = 0 by damped Newton steps until ‖∇J‖ ≤ ``tolerance``.

    ``J = scale·(…)`` is the normalised objective (its ``scale``); ``linear`` is b (sum units).
    Each step solves the Newton system and halves the step until the objective decreases (Armijo,
    10⁻⁴) or, for the full step, until the gradient norm halves (near the minimiser the objective's
    decrease is below its rounding). Returns ``(θ, steps, ‖∇J(θ)‖)``; raises
    :class:`SolverDidNotConverge` when the rule is not met within ``max_steps`` steps or no step
    makes progress.

    Examples
    --------
    >>> import numpy as np
    >>> f = PointwiseLogistic(np.array([[0.5], [-0.5]]), np.array([1, -1]), intercept=False)
    >>> theta, steps, norm = minimise(f, 1.0, np.zeros(1), 1e-12)
    >>> bool(norm <= 1e-12), steps < 10
    (True, True)
    """
    lam = float(regulariser)
    linear = np.asarray(linear, dtype=np.float64)
    scale = objective.scale
    theta = np.zeros(objective.dim)

    def evaluate(point):
        value, gradient, hessian = objective.terms(point)
        return (value + 0.5 * lam * float(point @ point) + float(linear @ point),
                gradient + lam * point + linear, hessian)

    value, gradient, hessian = evaluate(theta)
    identity = np.eye(objective.dim)
    for step_count in range(max_steps + 1):
        norm = scale * float(np.linalg.norm(gradient))
        if norm <= tolerance:
            return theta, step_count, norm
        if step_count == max_steps:
            break
        direction = np.linalg.solve(hessian + lam * identity, gradient)
        decrease = float(gradient @ direction)
        t = 1.0
        while t > 1e-12:
            candidate = theta - t * direction
            c_value, c_gradient, c_hessian = evaluate(candidate)
            if c_value <= value - 1e-4 * t * decrease or (
                    t == 1.0 and np.linalg.norm(c_gradient) <= 0.5 * np.linalg.norm(gradient)):
                break
            t *= 0.5
        else:
            break  # no progress: the rule is below what floating point can reach here
        theta, value, gradient, hessian = candidate, c_value, c_gradient, c_hessian
    raise SolverDidNotConverge(
        f"the solver stopped at ‖∇J‖ = {scale * float(np.linalg.norm(gradient)):.3g} > {tolerance:.3g} after "
        f"{step_count} Newton steps; nothing was released (raise the tolerance or the regulariser)")
