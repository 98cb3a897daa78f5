"""Continual release of **exponentially decayed** sums at a cost that does not depend on the stream length.

A stream of vectors v_1, v_2, … ∈ R^k (neighbouring streams differ in one record, replaced: ‖v_s − v'_s‖₂ ≤ Δ)
and a public half-life of H records, γ = 2^{−1/H}. After every record t the mechanism releases an estimate of

    S_t = Σ_{s≤t} γ^{t−s} v_s,

the workload A_γ (lower-triangular Toeplitz, entries γ^{t−s}, generating function a(x) = 1/(1 − γx)): a record
H positions old weighs 1/2, and S_t weighs about 1/(1 − γ) ≈ 1.44·H records in all.

**Factorisation.** A_γ = B·C with C a buffered-linear-Toeplitz (BLT) matrix, c(x) = 1 + Σ_i ω_i x/(1 − θ_i x)
(:class:`~onpair.privacy.continual.blt.BLTParameters`: decays 1 > θ_1 > θ'_1 > … > θ_m > θ'_m > 0), fitted
offline to the square root (1 − γx)^{−1/2} (``bench/generators/decayed_optimise.py``, stored in
:mod:`~onpair.privacy.continual.decayed_fits`), and B = A_γ·C⁻¹, with generating function
1/((1 − γx)·c(x)). The mechanism releases

    Ŝ_t = S_t + σ·(B·Z)_t = (A_γ·C⁻¹·(C·V + σ·Z))_t,     Z ~ N(0, I) (k coordinates per record),

computed online by the kernel of the BLT (:func:`onpair.privacy.continual._blt_kernels.blt_record` with
workload decay γ): m buffers of k numbers for Y = C⁻¹Z, then N_t = γ·N_{t−1} + Y_t and S_t = γ·S_{t−1} + v_t.
Work and memory (m + 2)·k per record, whatever the stream length.

**Cost (exact, independent of the stream length).** Every release is post-processing of C·V + σZ, a Gaussian
mechanism on the linear image C·V. Replacing record s changes C·V by (C e_s)(v_s − v'_s)ᵀ, whose Frobenius norm
is ‖C e_s‖₂·‖v_s − v'_s‖₂ ≤ ‖C e_s‖₂·Δ. C is lower-triangular Toeplitz, so its column s is its first column
cut to the rows s … T: ‖C e_s‖² = Σ_{n≤T−s} c_n², largest for s = 1 and, over every stream length T (an
unbounded stream included), bounded by

    κ² = Σ_{n≥0} c_n² = 1 + Σ_{i,j} ω_iω_j / (1 − θ_iθ_j),

finite because every θ_i < 1 (and exact: the supremum over T of the largest column norm² of the T × T encoder,
approached as T → ∞). With σ = Δ·κ/√(2ρ) (× (1 + 10⁻⁹), the library's planning margin) the whole stream,
of any length, costs Δ²κ²/(2σ²) ≤ ρ in zCDP (the Gaussian mechanism's zCDP, Bun & Steinke 2016, Prop. 1.6).
The cost involves C alone: the workload's γ enters only B, i.e. the post-processing. With a known ``horizon``
T the sum stops at n < T (the BLT's closed form). Adaptively chosen records (each v_t a function of earlier
releases) keep the guarantee: C is lower-triangular, so C·V + σZ is released row by row, each row a Gaussian
mechanism given the earlier ones, and the zCDP costs of the rows a replaced record reaches add up to
Δ²‖C e_s‖²/(2σ²) (Denisov et al. 2022, Theorem 2.1 for matrix mechanisms with adaptive inputs).

**Error of every release (bounded).** B's generating function 1/((1 − γx)·c(x)) = Π(1 − θ_i x) / ((1 − γx)·
Π(1 − θ'_i x)) has simple poles λ = (γ, θ'_1, …, θ'_m) and coefficients β_n = Σ_p a_p λ_p^n, so release t
has per-coordinate variance

    var(t) = σ²·‖B_{t,:}‖² = σ²·Σ_{n<t} β_n² = σ²·Σ_{p,q} a_p a_q (1 − (λ_pλ_q)^t)/(1 − λ_pλ_q),

non-decreasing in t (a sum of squares) and bounded by its limit, the **stationary variance**
σ²·Σ_{p,q} a_p a_q/(1 − λ_pλ_q), finite because every pole is below 1: no release of an unbounded stream has
more error than that (:meth:`DecayedBLT.stationary_variance`). In units of one Gaussian release at the same ρ
(Δ²/(2ρ)) it is κ²·Σ_n β_n²; the exact square root (c = b = (1 − γx)^{−1/2}, coefficients γⁿ·C(2n, n)/4ⁿ) gives
(Σ_n γ^{2n} C(2n, n)²/16ⁿ)² = ((2/π)·K(γ²))² (≈ ((1/π)·ln(16/(1 − γ²)))² as γ → 1, K the complete elliptic
integral), the least any causal Toeplitz factorisation of the infinite workload reaches (docs/forgetting.md),
and the stored fits are within 0.2 % of it in standard deviation (about 4.5 releases' worth of variance at
H = 64, 8.9 at H = 1,000, 15 at H = 16,384).

**Half-lives between stored fits.** The fits are stored for H = 2^{j/2}, 4 ≤ H ≤ 2^24; a half-life between two
takes the fit of the nearest in log scale (ties: the larger), with its own exact γ (its κ² does not depend on
γ; its error is computed exactly at γ): ``bench/generators/decayed_optimise.py --rules`` measures the loss against
a fresh fit (see the table of docs/forgetting.md).

Privacy unit, adaptivity of the learners and the secrecy of the state: as every mechanism of
:mod:`onpair.privacy.continual` (a record is a stream position; the state holds noiseless sums and the
noise itself and refuses to be copied or pickled).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .blt import BLTParameters, BufferedToeplitz
from .decayed_fits import DECAYED_FITS

__all__ = ["DecayedBLT", "MIN_HALF_LIFE", "MAX_HALF_LIFE", "check_half_life", "decay_of",
           "fitted_decayed_parameters"]

#: The half-lives (records) a decayed mechanism accepts: those the stored fits cover.
MIN_HALF_LIFE = 4.0
MAX_HALF_LIFE = float(2**24)


def check_half_life(half_life, name="half_life"):
    """A half-life in records as a float: a real number (not a bool) in [MIN_HALF_LIFE, MAX_HALF_LIFE].

    Examples
    --------
    >>> check_half_life(1000)
    1000.0
    """
    if isinstance(half_life, (bool, np.bool_)) or not isinstance(half_life, (numbers.Real, np.floating,
                                                                          np.integer)):
        raise TypeError(f"{name} must be a number of records (a real number), got {half_life!r} "
                        f"({type(half_life).__name__})")
    value = float(half_life)
    if not MIN_HALF_LIFE <= value <= MAX_HALF_LIFE:  # NaN fails too
        raise ValueError(f"{name} must lie in [{MIN_HALF_LIFE:g}, {MAX_HALF_LIFE:g}] records, got {half_life!r} "
                         "(None: no forgetting)")
    return value


def decay_of(half_life) -> float:
    """γ = 2^(−1/H): a record H positions old weighs 1/2.

    Examples
    --------
    >>> decay_of(1.0)
    0.5
    """
    return 2.0 ** (-1.0 / float(half_life))


def fitted_decayed_parameters(half_life):
    """The stored fit for a half-life: (BLTParameters, a label saying which fit): the fit of the stored
    half-life nearest to ``half_life`` in log scale (ties: the larger).

    Examples
    --------
    >>> fitted_decayed_parameters(1000)[1]
    'half-life 2^10'
    """
    exponent = math.log2(check_half_life(half_life))
    stored = sorted(DECAYED_FITS)
    best = min(stored, key=lambda e: (abs(e - exponent), -e))
    decays, inverse = DECAYED_FITS[best]
    return BLTParameters(decays, inverse), f"half-life 2^{best:g}"


class DecayedBLT(BufferedToeplitz):
    """Continual release of decayed sums Σ_{s≤t} γ^{t−s} v_s (γ = 2^{−1/H}) by a BLT factorisation of the
    decayed workload (see the module docstring: the cost, the same for every stream length, and the error of
    every release, bounded).

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0 of the whole stream, of any length.
    half_life : float
        H in records, in [:data:`MIN_HALF_LIFE`, :data:`MAX_HALF_LIFE`] (public).
    horizon : int or None, optional
        A known stream length (records beyond it are refused; κ² is then the sum over T coefficients), or None.
    decays, inverse_decays : sequence of float or None, optional
        The BLT's decays; None (both) takes the stored fit (:func:`fitted_decayed_parameters`).

    Examples
    --------
    >>> import numpy as np
    >>> mech = DecayedBLT(dim=1, sensitivity=1.0, rho=0.5, half_life=1.0e3)
    >>> d = mech.describe()
    >>> d["fit"], d["buffers"], round(d["workload_decay"] ** 1000, 12)
    ('half-life 2^10', 4, 0.5)
    >>> est = mech.add_block(np.ones((3, 1)), np.random.default_rng(0), return_estimates=True)
    >>> round(mech.variance(1) / d["sigma"] ** 2, 12)   # B's first row is (1)
    1.0
    >>> bool(mech.variance(10**6) <= mech.stationary_variance())
    True
    """

    kind = "decayed_buffered_toeplitz"

    def __init__(self, *, dim, sensitivity, rho, half_life, horizon=None, decays=None, inverse_decays=None):
        self._half_life = check_half_life(half_life)
        self._workload_decay = decay_of(self._half_life)  # before the BLT's constructor: its error terms use it
        stored, label = fitted_decayed_parameters(self._half_life)
        if decays is None and inverse_decays is None:  # the stored fit (one of the two alone: the BLT refuses it)
            decays, inverse_decays = stored.decays.tolist(), stored.inverse_decays.tolist()
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon, decays=decays,
                         inverse_decays=inverse_decays)
        if (np.array_equal(self._params.decays, stored.decays)
                and np.array_equal(self._params.inverse_decays, stored.inverse_decays)):
            self._fit = label  # the stored fit, given or not, keeps its name; anything else is "given"

    @property
    def half_life(self) -> float:
        """float: H, in records."""
        return self._half_life

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "half_life": self._half_life,
                "horizon": self.horizon, "decays": self._params.decays.tolist(),
                "inverse_decays": self._params.inverse_decays.tolist()}

    def stationary_variance(self) -> float:
        """σ²·Σ_{n≥0} β_n²: the per-coordinate error variance every release tends to (and none exceeds)."""
        return self._sigma_nominal ** 2 * self._params.error_sum(math.inf, self._workload_decay)

    def describe(self):
        """Public summary: the BLT's (:meth:`BufferedToeplitz.describe`; no final share: ``final_share`` 0,
        ``final_sigma`` None) plus ``half_life``, ``workload_decay`` (γ) and ``stationary_variance``."""
        out = super().describe()
        out.update(half_life=self._half_life, workload_decay=self._workload_decay,
                   stationary_variance=self.stationary_variance())
        return out

    def privacy_rows(self):
        """One row: the factorisation (``what``, ``level`` None, ``nodes_released``, ``sigma``, ``kappa2``, ``rho``
        = Δ²κ²/(2σ²), the whole stream's cost at any length)."""
        row = super().privacy_rows()[0]
        row["what"] = (f"decayed sums, half-life {self._half_life:g} records: buffered linear Toeplitz "
                       f"factorisation ({self.buffers} buffers, fit: {self._fit})")
        return [row]
