"""Buffered-linear-Toeplitz (BLT) continual release of prefix sums: near-optimal error at every horizon with
O(buffers·k) work and memory per record.

The mechanism is a Gaussian matrix mechanism for the prefix-sum matrix A (lower-triangular ones),
factorised A = B·C with C lower-triangular Toeplitz and **rational**: its generating function is

    c(x) = Σ_n c_n xⁿ = Π_{i=1}^{m} (1 − θ'_i x) / Π_{i=1}^{m} (1 − θ_i x) = 1 + Σ_i ω_i x / (1 − θ_i x),

with m buffers whose decays θ_i (C's) and θ'_i (C⁻¹'s) interlace strictly inside (0, 1):
1 > θ_1 > θ'_1 > θ_2 > θ'_2 > … > θ_m > θ'_m > 0. Then c_0 = 1, c_n = Σ_i ω_i θ_i^{n−1} with output scales
ω_i = Π_j (θ_i − θ'_j) / Π_{j≠i} (θ_i − θ_j) > 0, and C⁻¹ is a BLT too, with decays θ'_i and output scales
ω'_i = Π_j (θ'_i − θ_j) / Π_{j≠i} (θ'_i − θ'_j) < 0 (the same formula with the roles swapped). The interlacing
is what makes every ω_i positive and every ω'_i negative (each factor pairs off into a ratio in (0, 1)),
so that c is a positive mixture of geometric sequences like the square-root coefficients C(2n, n)/4ⁿ it
imitates, and every closed form below is a sum of positive terms (no cancellation).

**Release.** After record t the mechanism releases S_t + σ·(B·Z)_t, Z ~ N(0, I) (k coordinates each), with
B = A·C⁻¹: the noise Y = C⁻¹Z is computed online by m buffers of k numbers (Y_t = Z_t − Σ_i ω_i b_i, then
b_i ← θ_i b_i + Y_t; :mod:`onpair.privacy.continual._blt_kernels`), and (B·Z)_t = Σ_{s≤t} Y_s is a running sum. Work
and memory: a state of (m + 2)·k numbers (the m buffers, the data's and the noise's running sums) and a scratch
row of k normals, (m + 3)·k in all ((m + 4)·k with a final share, which keeps the release at the horizon);
about 2m multiply-adds per coordinate and record, whatever the length of the stream. The releases are
post-processing of C·V + σZ, a Gaussian mechanism.

**Cost.** Replacing record s changes C·V by column s of C times (v_s − v'_s); the columns of a
lower-triangular Toeplitz matrix are its first column cut shorter, so the largest column norm over every
column of the encoder (those a finite stream cuts included) is that of the first:

    κ² = Σ_{n<T} c_n² = 1 + Σ_{i,j} ω_i ω_j (1 − (θ_iθ_j)^{T−1}) / (1 − θ_iθ_j)      (horizon T),
    κ² = Σ_{n≥0} c_n² = 1 + Σ_{i,j} ω_i ω_j / (1 − θ_iθ_j)                          (unbounded: finite, θ_i < 1),

and σ = Δ·κ/√(2ρ) (× (1 + 10⁻⁹), the library's planning margin), so the whole stream costs
ρ = Δ²κ²/(2σ²) in zCDP, a hair below the budget. An unbounded stream pays the infinite sum once, for any
number of records.

**Error.** B has generating function Π(1 − θ_i x) / ((1 − x)·Π(1 − θ'_i x)): its coefficients are
β_n = Σ_{p=0}^{m} a_p λ_p^n with poles λ_0 = 1, λ_p = θ'_p and residues a_p > 0 (the same product formula),
and the released prefix t has per-coordinate error variance

    var(t) = σ²·‖B_{t,:}‖² = σ²·Σ_{n<t} β_n² = σ²·Σ_{p,q} a_p a_q (1 − (λ_pλ_q)^t) / (1 − λ_pλ_q),

O(m²) per query for any t (1 − λ_pλ_q and the powers are computed through log1p/expm1, exact to a few ulps
when λ_pλ_q → 1). In units of one Gaussian release of the total at the same ρ (variance Δ²/(2ρ)), the
error of prefix t is κ²·Σ_{n<t} β_n²; it grows with t, so the last prefix has the largest error.

**Parameters.** The decays are fitted once, offline, by ``bench/generators/blt_optimise.py`` and stored in
:mod:`onpair.privacy.continual.blt_fits`:
:data:`HORIZON_FITS` (known horizon T = 2^j: minimise the last prefix's error κ²(T)·Σ_{n<T} β_n², which is
the largest over t ≤ T; with the fewest buffers, up to :data:`FIT_MAX_BUFFERS`, within
:data:`FIT_TOLERANCE` of the exact square-root factorisation's standard deviation) and :data:`UNBOUNDED_FIT`
(no horizon: minimise the worst ratio, over T from 10³ to 10⁷, of the last prefix's standard deviation to
the exact square-root factorisation's at the same T). The fits reach the square root within 0.05–0.19 % (2 to
2^29 records; 0.25 % at 2^30 with 8 buffers), the unbounded fit within ×1.145 over 10³–10⁷ records (×1.30 at
100, ×1.68 at 10⁸, ×4.1 at 10⁹: beyond its slowest buffer, ~1/(1 − θ_1) ≈ 5·10⁶ records, its error grows
linearly). A known horizon that is not a power of two takes the fit of the next power of two (its κ² is
computed at the true horizon), and one beyond 2^30 the fit of 2^30. Measured by ``bench/generators/blt_optimise.py
--rules`` at eight horizons from 100 to 5·10⁶: that rule is within 0.02 % of a fresh fit at the horizon (which
takes seconds with scipy) and of a log-linear interpolation between the neighbouring fits, so neither is
worth its code.

**Decayed sums.** The decoder is written for the workload 1/(1 − γx) (γ = 1: prefix sums): the kernel and
:class:`BLTParameters` take γ, so that the decayed sums Σ_s γ^{t−s} v_s of docs/algorithms.md §13 can reuse
them with a BLT fitted to (1 − γx)^{−1/2} (``bench/generators/blt_optimise.py --workload-decay``). The mechanism
below releases prefix sums only.

Literature: Dvijotham, McMahan, Pillutla, Steinke, Thakurta (2024), "Efficient and near-optimal noise
generation for streaming differential privacy"; McKenna (2024), "Scaling up the banded matrix
factorization mechanism for differentially private ML" (the BLT inverse as buffers; the pair
parametrisation by the decays of C and C⁻¹).

Privacy unit, adaptivity and the secrecy of the state: as every mechanism of
:mod:`onpair.privacy.continual` (a record is a stream position; the state holds noiseless sums and the
noise itself and refuses to be copied or pickled). After two records nothing in the arrays pins ``n_seen``: a
state whose ``n_seen`` was lowered would resume and let records past the horizon in, above the reported ρ.
Whoever can write the state can read the data (noiseless sums and the noise): keep it **as secret as the
data**; ``from_state``'s checks catch corruption and mistakes, not an attacker who holds the state.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numba import njit

from ..._config import NJIT_OPTIONS
from ..gaussian import gaussian_rho
from ._blt_kernels import _blt_add_block, blt_record
from ._kernels import _toeplitz_release
from ._noise import draw_normals
from .base import PrefixSumMechanism
from .blt_fits import FIT_LOSS, FIT_MAX_BUFFERS, FIT_TOLERANCE, HORIZON_FITS, UNBOUNDED_FIT, UNBOUNDED_LOSS
from .limits import MAX_RECORDS, check_real, check_state_size, noise_scales

__all__ = [
    "BLTParameters",
    "BufferedToeplitz",
    "HORIZON_FITS",
    "UNBOUNDED_FIT",
    "FIT_LOSS",
    "UNBOUNDED_LOSS",
    "FIT_TOLERANCE",
    "FIT_MAX_BUFFERS",
    "MAX_BUFFERS",
    "NEED_NORMALS",
    "fitted_parameters",
]

#: What a kernel of :meth:`BufferedToeplitz.add_one_compiled` returns when the block holds fewer than k normals.
NEED_NORMALS = -3

#: The most buffers a BLT may have (the closed forms are O(m²); the fits use at most FIT_MAX_BUFFERS).
MAX_BUFFERS = 32



def _real_sequence(values, name):
    """A non-empty 1-D sequence of real numbers (not bools, not strings) as float64."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}")
    for x in values:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
            raise TypeError(f"{name} must hold real numbers, got {x!r} ({type(x).__name__})")
    arr = np.array([float(x) for x in values], dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds NaN or inf: {arr.tolist()}")
    return arr


def _residues(poles, zeros):
    """r_i = Π_j (p_i − z_j) / Π_{k≠i} (p_i − p_k), for poles and zeros in descending order, as a product of
    paired ratios (p_i − z_j)/(p_i − p_k(j)) (each in (0, 1) when poles and zeros interlace: no overflow)."""
    n = poles.shape[0]
    j = np.arange(n - 1)
    others = poles[j[None, :] + (j[None, :] >= np.arange(n)[:, None])]  # row i: the poles but p_i, in order
    paired = min(n - 1, zeros.shape[0])
    p = poles[:, None]
    ratios = np.prod((p - zeros[None, :paired]) / (p - others[:, :paired]), axis=1)
    return ratios * np.prod(p - zeros[None, paired:], axis=1) / np.prod(p - others[:, paired:], axis=1)


def _phi2(y):
    """(e^y − 1 − y)/y², elementwise, for y ≤ 0 (a Taylor series where |y| < 10⁻², relative error < 10⁻¹⁵)."""
    y = np.asarray(y, dtype=np.float64)
    small = np.abs(y) < 1e-2
    safe = np.where(small, -1.0, y)
    direct = (np.expm1(safe) - safe) / (safe * safe)
    series = 0.5 + y * (1 / 6 + y * (1 / 24 + y * (1 / 120 + y * (1 / 720 + y / 5040))))
    return np.where(small, series, direct)


def _pair_logs(u):
    """For λ = 1 − u (u ≥ 0 given exactly): 1 − λ_pλ_q = u_p + u_q·λ_p (a sum of non-negative terms) and
    log(λ_pλ_q) = log1p(−u_p) + log1p(−u_q), over all pairs (p, q)."""
    one_minus = u[:, None] + u[None, :] * (1.0 - u[:, None])
    with np.errstate(divide="ignore"):
        logs = np.log1p(-u)[:, None] + np.log1p(-u)[None, :]
    return one_minus, logs


def _geometric_sums(one_minus, logs, t):
    """Σ_{n<t} x^n = (1 − x^t)/(1 − x) for x = λ_pλ_q (t = inf: 1/(1 − x)); t itself where x = 1. A scalar t
    gives the pairs' array; an array of t adds a leading axis."""
    t = np.asarray(t, dtype=np.float64)[..., None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(np.isinf(t), 1.0 / one_minus, -np.expm1(np.where(np.isinf(t), 0.0, t) * logs) / one_minus)
    return np.where(one_minus == 0.0, t, g)


def _weighted_geometric_sums(one_minus, logs, T):
    """Σ_{n<T} (T − n)·x^n = Σ_{t=1}^{T} Σ_{n<t} x^n, without cancellation as x → 1: with ℓ = log x and
    φ₂(y) = (e^y − 1 − y)/y², it is [T·ℓ²·(T·φ₂(Tℓ) − φ₂(ℓ)) + (1 − x)(1 − x^T)] / (1 − x)²; T(T + 1)/2 at x = 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        num = T * logs * logs * (T * _phi2(T * logs) - _phi2(logs)) - one_minus * np.expm1(T * logs)
        h = num / (one_minus * one_minus)
    return np.where(one_minus == 0.0, 0.5 * T * (T + 1.0), h)


class BLTParameters:
    """A buffered-linear-Toeplitz factor C (and its inverse), from the decays of both.

    Parameters
    ----------
    decays : sequence of float
        θ_1 > … > θ_m, the decays of C's buffers (the poles of c(x) are 1/θ_i).
    inverse_decays : sequence of float
        θ'_1 > … > θ'_m, the decays of C⁻¹'s buffers (the zeros of c(x) are 1/θ'_i). The two must interlace
        strictly inside (0, 1): 1 > θ_1 > θ'_1 > θ_2 > … > θ_m > θ'_m > 0.

    Attributes
    ----------
    decays, inverse_decays : numpy.ndarray
        θ and θ' (float64, descending).
    output_scales, inverse_output_scales : numpy.ndarray
        ω > 0 and ω' < 0: c(x) = 1 + Σ ω_i x/(1 − θ_i x) and 1/c(x) = 1 + Σ ω'_i x/(1 − θ'_i x).

    Examples
    --------
    >>> p = BLTParameters([0.5], [0.25])     # c(x) = (1 − x/4)/(1 − x/2): c = 1, 1/4, 1/8, …
    >>> p.coefficients(4).tolist(), p.inverse_coefficients(3).tolist()
    ([1.0, 0.25, 0.125, 0.0625], [1.0, -0.25, -0.0625])
    >>> p.sensitivity_squared(2), round(p.sensitivity_squared(), 6)   # 1 + 1/16; 1 + (1/16)/(1 − 1/4)
    (1.0625, 1.083333)
    """

    def __init__(self, decays, inverse_decays):
        theta = _real_sequence(decays, "decays")
        theta_inv = _real_sequence(inverse_decays, "inverse_decays")
        m = theta.shape[0]
        if not 1 <= m <= MAX_BUFFERS:
            raise ValueError(f"decays must hold between 1 and {MAX_BUFFERS} values, got {m}")
        if theta_inv.shape[0] != m:
            raise ValueError(f"inverse_decays must hold as many values as decays ({m}), got {theta_inv.shape[0]}")
        merged = np.empty(2 * m)
        merged[0::2] = theta
        merged[1::2] = theta_inv
        if not (merged[0] < 1.0 and merged[-1] > 0.0 and np.all(merged[:-1] > merged[1:])):
            raise ValueError(
                "decays and inverse_decays must interlace strictly inside (0, 1): 1 > decays[0] > "
                "inverse_decays[0] > decays[1] > … > inverse_decays[-1] > 0; got "
                f"decays={theta.tolist()}, inverse_decays={theta_inv.tolist()}")
        self.decays, self.inverse_decays = theta, theta_inv
        self.output_scales = _residues(theta, theta_inv)
        self.inverse_output_scales = _residues(theta_inv, theta)
        if not (np.all(np.isfinite(self.output_scales)) and np.all(self.output_scales > 0)
                and np.all(np.isfinite(self.inverse_output_scales)) and np.all(self.inverse_output_scales < 0)):
            raise ValueError(f"decays={theta.tolist()} and inverse_decays={theta_inv.tolist()} are too close to "
                             "each other for float64 (their output scales underflow)")
        self._decoders = {}

    @property
    def buffers(self) -> int:
        """int: m, the number of buffers."""
        return self.decays.shape[0]

    def __repr__(self):
        return f"BLTParameters(decays={self.decays.tolist()}, inverse_decays={self.inverse_decays.tolist()})"

    # -- the matrices' coefficients (for tests and benchmarks; O(n·m)) ------------------------------
    def coefficients(self, n):
        """c_0 … c_{n−1}, the first column of C."""
        powers = self.decays[None, :] ** np.arange(max(n - 1, 0), dtype=np.float64)[:, None]
        return np.concatenate(([1.0], powers @ self.output_scales))[:n]

    def inverse_coefficients(self, n):
        """The first n coefficients of C⁻¹ (γ_0 = 1, γ_n = Σ ω'_i θ'_i^{n−1})."""
        powers = self.inverse_decays[None, :] ** np.arange(max(n - 1, 0), dtype=np.float64)[:, None]
        return np.concatenate(([1.0], powers @ self.inverse_output_scales))[:n]

    def _decoder(self, workload_decay):
        """(residues a_p, 1 − λ_p) of the decoder B = W·C⁻¹, W = 1/(1 − γx): poles λ = (γ, θ'_1, …, θ'_m)."""
        key = float(workload_decay)
        if key not in self._decoders:
            if not 0.0 < key <= 1.0:
                raise ValueError(f"workload_decay must lie in (0, 1], got {workload_decay!r}")
            lam = np.concatenate(([key], self.inverse_decays))
            if np.any(lam[0] == lam[1:]):
                raise ValueError(f"workload_decay={workload_decay!r} equals an inverse decay (a double pole)")
            order = np.argsort(-lam, kind="stable")
            a = np.empty_like(lam)
            a[order] = _residues(lam[order], self.decays)
            u = np.concatenate(([1.0 - key], 1.0 - self.inverse_decays))
            self._decoders[key] = (a, np.outer(a, a), *_pair_logs(u))
        return self._decoders[key]

    def decoder_coefficients(self, n, workload_decay=1.0):
        """β_0 … β_{n−1}, the coefficients of W(x)/c(x) (γ = 1: the running sums of C⁻¹'s coefficients);
        row t of B holds β_{t−1}, …, β_0."""
        a, *_ = self._decoder(workload_decay)
        lam = np.concatenate(([float(workload_decay)], self.inverse_decays))
        return (lam[None, :] ** np.arange(n, dtype=np.float64)[:, None]) @ a

    # -- closed forms (O(m²) whatever the horizon) --------------------------------------------------
    def sensitivity_squared(self, horizon=None):
        """κ² = Σ_{n<T} c_n², the largest column norm² of C over a stream of T = ``horizon`` records (None:
        the infinite sum)."""
        t = math.inf if horizon is None else float(horizon) - 1.0
        w = self.output_scales
        one_minus, logs = _pair_logs(1.0 - self.decays)
        return 1.0 + float(np.sum(np.outer(w, w) * _geometric_sums(one_minus, logs, t)))

    def column_inner(self, lag, length=None):
        """Σ_{n<L} c_n·c_{n+lag}: the inner product of two columns of C ``lag`` ≥ 0 positions apart, the later
        one of ``length`` = L rows (None: infinite), i.e. (C e_a)ᵀ(C e_b) for b = a + lag and L = T − b + 1.
        With c_0 = 1 and c_n = Σ_i ω_i θ_i^{n−1}: [lag = 0 ? 1 : c_lag] + Σ_{i,j} ω_iω_j θ_j^lag Σ_{n<L−1}
        (θ_iθ_j)^n (a sum of positive terms). lag = 0 gives :meth:`sensitivity_squared` of L.

        Examples
        --------
        >>> p = BLTParameters([0.5], [0.25])
        >>> c = p.coefficients(40)
        >>> round(p.column_inner(3, 6), 15) == round(float(c[:6] @ c[3:9]), 15)
        True
        """
        lag = int(lag)
        if lag < 0:
            raise ValueError(f"lag must be >= 0, got {lag!r}")
        t = math.inf if length is None else float(length) - 1.0
        if t < 0:
            return 0.0
        w, theta = self.output_scales, self.decays
        one_minus, logs = _pair_logs(1.0 - theta)
        first = 1.0 if lag == 0 else float(np.dot(w, theta ** (lag - 1)))
        shifted = np.outer(w, w * theta ** lag)  # ω_i·ω_j·θ_j^lag
        return first + float(np.sum(shifted * _geometric_sums(one_minus, logs, t)))

    def error_sum(self, t, workload_decay=1.0):
        """Σ_{n<t} β_n² = ‖B_{t,:}‖² (the variance of release t over σ²); t = inf allowed when γ < 1. A float
        for a scalar t (by the compiled :func:`_error_sum_at`, as the mechanism's ``variance``), an array for
        an array of t."""
        if np.ndim(t) == 0 and math.isfinite(t):
            return float(_error_sum_at(float(t), *_closed_form_terms(self, workload_decay)))
        _, aa, one_minus, logs = self._decoder(workload_decay)
        sums = np.sum(aa * _geometric_sums(one_minus, logs, t), axis=(-2, -1))
        return float(sums) if sums.ndim == 0 else sums

    def mean_error_sum(self, T, workload_decay=1.0):
        """(1/T)·Σ_{t=1}^{T} Σ_{n<t} β_n², the mean over the first T releases of var(t)/σ²."""
        _, aa, one_minus, logs = self._decoder(workload_decay)
        return float(np.sum(aa * _weighted_geometric_sums(one_minus, logs, float(T)))) / T


def _closed_form_terms(params, workload_decay):
    """(a_p·a_q, 1 − λ_pλ_q, log λ_pλ_q) flattened: what :func:`_error_sum_at` needs for Σ_{n<t} β_n²."""
    _, aa, one_minus, logs = params._decoder(workload_decay)
    return aa.ravel().copy(), one_minus.ravel().copy(), logs.ravel().copy()


@njit(**NJIT_OPTIONS)
def _error_sum_at(t, aa, one_minus, logs):
    """Σ_{n<t} β_n² = Σ_{p,q} a_pa_q·(1 − (λ_pλ_q)^t)/(1 − λ_pλ_q) (t where λ_pλ_q = 1), for one t: the
    arithmetic of :meth:`BLTParameters.error_sum` (−expm1(t·log x)/(1 − x)), compiled for the model refresh
    (a learner asks for the variance of its current release at every refresh).

    Parameters
    ----------
    t : float
        The release, t ≥ 0 (finite).
    aa, one_minus, logs : float64 arrays of shape ((m + 1)²,)
        a_pa_q, 1 − λ_pλ_q and log(λ_pλ_q) over the pairs (:func:`_closed_form_terms`; read only).
    """
    total = 0.0
    for j in range(aa.shape[0]):
        if one_minus[j] == 0.0:
            total += aa[j] * t
        else:
            total += aa[j] * (-math.expm1(t * logs[j]) / one_minus[j])
    return total


def fitted_parameters(horizon=None):
    """The stored fit for a horizon: (BLTParameters, a label saying which fit).

    Parameters
    ----------
    horizon : int or None
        None: :data:`UNBOUNDED_FIT`. Otherwise the fit of the smallest stored horizon T ≥ ``horizon`` (the
        largest stored one beyond the table).

    Examples
    --------
    >>> fitted_parameters(None)[1]
    'unbounded'
    """
    if horizon is None or not HORIZON_FITS:
        decays, inverse = UNBOUNDED_FIT
        return BLTParameters(decays, inverse), "unbounded"
    stored = sorted(HORIZON_FITS)
    T = next((s for s in stored if s >= horizon), stored[-1])
    decays, inverse = HORIZON_FITS[T]
    return BLTParameters(decays, inverse), f"horizon {T}"


class BufferedToeplitz(PrefixSumMechanism):
    """Continual release of prefix sums by a buffered-linear-Toeplitz factorisation (see the module docstring).

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0 of the whole stream.
    horizon : int or None, optional
        Known stream length T (records beyond it are refused; κ² is the sum over T coefficients), or None
        for an unbounded stream (κ² the infinite sum).
    decays, inverse_decays : sequence of float or None, optional
        The BLT's decays (:class:`BLTParameters`); None (both) takes the stored fit
        (:func:`fitted_parameters`: the next stored horizon ≥ T, or the unbounded fit).
        :meth:`get_params` reports the decays actually used, so a state resumes only with them.
    final_share : float, default 0
        φ ∈ [0, 1), with a ``horizon`` only: the public share of ρ spent on **one** Gaussian release of the
        total at the horizon, S_T + σ_f·z (σ_f = Δ/√(2φρ)), drawn right after record T; the factorisation gets
        (1 − φ)ρ. The two releases compose: (1 − φ)ρ + φρ = ρ in zCDP. From the horizon on, :meth:`estimate`
        is their inverse-variance combination (post-processing of the two), whose variance
        v_c·v_f/(v_c + v_f) (v_c = the factorisation's at T, v_f = σ_f²) is below either; before it, the
        releases carry the factorisation's noise at (1 − φ)ρ, 1/√(1 − φ) times more.

    Examples
    --------
    >>> import numpy as np
    >>> mech = BufferedToeplitz(dim=2, sensitivity=1.0, rho=0.5, horizon=20_000)
    >>> mech.describe()["fit"], mech.describe()["buffers"]
    ('horizon 32768', 5)
    >>> est = mech.add_block(np.ones((3, 2)), np.random.default_rng(0), return_estimates=True)
    >>> est.shape, mech.n_seen
    ((3, 2), 3)
    >>> round(mech.variance(1) / mech.describe()["sigma"] ** 2, 12)   # B's first row is (1)
    1.0
    """

    kind = "buffered_toeplitz"
    option = "blt"
    #: γ of the workload 1/(1 − γx): 1 for prefix sums (a decayed-sum mechanism would change it).
    _workload_decay = 1.0

    def __init__(self, *, dim, sensitivity, rho, horizon=None, decays=None, inverse_decays=None, final_share=0.0):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        check_real(final_share, "final_share")
        if not 0.0 <= final_share < 1.0:
            raise ValueError(f"final_share must lie in [0, 1), got {final_share!r}")
        if final_share > 0.0 and self.horizon is None:
            raise ValueError(f"final_share={final_share!r} needs a horizon: the final release is of the total at the "
                             "horizon")
        self._final_share = float(final_share)
        for values, name in ((decays, "decays"), (inverse_decays, "inverse_decays")):
            if values is not None:
                _real_sequence(values, name)  # a TypeError for a wrong type comes before the pairing's ValueError
        if (decays is None) != (inverse_decays is None):
            raise ValueError("give both decays and inverse_decays, or neither (the stored fit)")
        params, self._fit = fitted_parameters(self.horizon)
        if decays is not None:
            given = BLTParameters(decays, inverse_decays)
            # the stored fit given back (get_params, a snapshot) keeps its name; anything else is "given"
            if not (np.array_equal(given.decays, params.decays)
                    and np.array_equal(given.inverse_decays, params.inverse_decays)):
                params, self._fit = given, "given"
        self._params = params
        m = params.buffers
        check_state_size((m + 4) * self.dim, f"dim={self.dim!r} and {m} buffers")
        self._kappa2 = params.sensitivity_squared(self.horizon)
        share = self._final_share
        self._sigma_nominal = float(noise_scales(np.array([self.sensitivity * math.sqrt(self._kappa2)]),
                                                  np.array([self.rho * (1.0 - share)]), self.sensitivity, self.rho)[0])
        self._final_sigma = float(noise_scales(np.array([self.sensitivity]), np.array([self.rho * share]),
                                               self.sensitivity, self.rho)[0]) if share > 0.0 else math.inf
        self._final = np.zeros(self.dim) if share > 0.0 else None  # S_T + σ_f·z, once record T is in
        self._sigma = self._sigma_nominal  # what the kernel adds (tests set it to 0)
        # (2, m): ω and θ; the state in one (m + 2, k) array: rows 0 … m−1 the buffers, m the data's running
        # sums S, m + 1 the noise's running sums N (views below), so that a compiled caller takes it whole
        self._coefficients = np.stack([params.output_scales, params.decays])
        self._omega, self._theta = self._coefficients
        self._state = np.zeros((m + 2, self.dim))
        self._buffers, self._prefix_sum, self._noise_sum = self._state[:m], self._state[m], self._state[m + 1]
        self._normals = np.empty(self.dim)  # scratch: one record's normals (add_one), not state
        self._variance_sums = _closed_form_terms(params, self._workload_decay)

    @property
    def parameters(self) -> BLTParameters:
        """BLTParameters: the factorisation (its decays and output scales)."""
        return self._params

    @property
    def buffers(self) -> int:
        """int: m, the number of buffers."""
        return self._params.buffers

    @property
    def kappa2(self) -> float:
        """float: κ², the largest column norm² of the encoder C (over the horizon, or all of it)."""
        return self._kappa2

    @property
    def workload_decay(self) -> float:
        """float: γ of the released workload 1/(1 − γx) (1.0: prefix sums)."""
        return self._workload_decay

    @property
    def final_share(self) -> float:
        """float: φ, the share of ρ spent on the one release of the total at the horizon (0: none)."""
        return self._final_share

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "horizon": self.horizon,
                "decays": self._params.decays.tolist(), "inverse_decays": self._params.inverse_decays.tolist(),
                "final_share": self._final_share}

    # -- adding records ---------------------------------------------------------------------------
    def _noise_rows(self, t0, m):
        return m

    def _apply(self, V, Z, out=None, nodes=None):
        _blt_add_block(V, Z, self._omega, self._theta, self._workload_decay, self._sigma, self._buffers,
                       self._prefix_sum, self._noise_sum, np.empty((0, self.dim)) if out is None else out)
        self._n_seen += V.shape[0]

    def _feed(self, V, rng, out) -> None:
        super()._feed(V, rng, out)
        self._release_final(rng)
        if out is not None and self._final is not None and self._n_seen == self._horizon:
            out[-1] = self.estimate()  # the release at T is the combination (as estimate() after add_one)

    def _release_final(self, rng) -> None:
        """With a final share, once record T (the horizon) is in: the one release of the total, S_T + σ_f·z,
        its k normals the next ones of ``rng`` (right after record T's, in every path)."""
        if self._final is not None and self._n_seen == self._horizon:
            z = np.empty(self._dim)
            draw_normals(rng, z)
            self._final = self._prefix_sum + self._final_sigma * z

    def _add_checked_one(self, v, rng) -> None:
        # One record's k normals, drawn from ``rng`` into a scratch row in the order add_block draws them,
        # and the block kernel's own per-record step: the same state, bit for bit, without a block of one.
        normals = self._normals
        draw_normals(rng, normals)
        blt_record(v, normals, self._omega, self._theta, self._workload_decay, self._buffers,
                    self._prefix_sum, self._noise_sum)
        self._n_seen += 1
        self._release_final(rng)

    def add_one_compiled(self, kernel, args, block) -> int:
        """Add one record in one compiled call: ``kernel(*args, normals, pos, end, state)``.

        The protocol of the learners' single-record path
        (:meth:`onpair.statistics.released.ReleasedStatistics.add_box_one`): the ``kernel`` computes the
        record's row v from its own ``args`` (a raw record, the public map, the class, and the public
        ω = ``parameters.output_scales``, θ = ``parameters.decays`` and γ = :attr:`workload_decay`) and calls
        :func:`~onpair.privacy.continual._blt_kernels.blt_record` with v, the k normals ``normals[pos:pos + k]``
        (the block's next ones, unconsumed up to ``end``), ω, θ, γ and the views state[:m], state[m],
        state[m + 1] (buffers, data sums, noise sums); it returns a status, negative when it changed nothing
        (no row: the caller's general path decides), :data:`NEED_NORMALS` when it would add the record but
        fewer than k normals are left (the block is then refilled and the kernel called again: a record that
        is not added never makes the block draw). The same arithmetic as :meth:`add_one` of v with the same
        normals, so the same state bit for bit. The caller guarantees what :meth:`add_one` checks of v
        (finite, within ±MAX_ENTRY; a row of the public map is).

        Parameters
        ----------
        kernel : numba dispatcher
        args : tuple
        block : NormalBlock
            The source of the normals (k of them consumed when the record is added).

        Returns
        -------
        int
            The kernel's status.

        Raises
        ------
        PrivacyBudgetExceeded
            The horizon is reached (nothing changed).
        """
        if self._n_seen >= (MAX_RECORDS if self._horizon is None else self._horizon):
            self._check_capacity(1)  # raises, naming the horizon
        status = kernel(*args, block.values, block.pos, block.end, self._state)
        if status == NEED_NORMALS:  # a record to add, fewer than k normals left: refill (nothing else changed)
            block.ensure(self._dim)
            status = kernel(*args, block.values, block.pos, block.end, self._state)
        if status >= 0:
            block.pos += self._dim
            self._n_seen += 1
            if self._final is not None:
                self._release_final(block)
        return status

    def add_block_compiled(self, kernel, args, m, source) -> None:
        """Add m records whose rows a compiled ``kernel`` computes: ``kernel(*args, lo, hi, Z, coefficients,
        decay, state)`` feeds records lo … hi − 1 (rows computed from its own ``args``) through
        :func:`~onpair.privacy.continual._blt_kernels.blt_record` with the rows of Z as their normals, in
        the chunks and the noise pipeline of :meth:`add_block`, without building the (m, k) block of rows.
        The same arithmetic as :meth:`add_block` of those rows, so the same state bit for bit (the learners'
        block path; the caller guarantees the rows' checks, as for :meth:`add_one_compiled`).

        Raises
        ------
        PrivacyBudgetExceeded
            The block would pass the horizon (nothing changed).
        """
        self._check_capacity(m)
        if m == 0:
            return

        def apply(lo, hi, Z):
            kernel(*args, lo, hi, Z, self._coefficients, self._workload_decay, self._state)
            self._n_seen += hi - lo

        self._pipeline(m, source, apply)
        self._release_final(source)

    # -- releases ---------------------------------------------------------------------------------
    def estimate(self):
        """The released prefix estimate S_t + σ(BZ)_t at t = ``n_seen``: float64 (k,).

        Examples
        --------
        >>> BufferedToeplitz(dim=2, sensitivity=1.0, rho=1.0).estimate().tolist()
        [0.0, 0.0]
        """
        dest = np.empty(self.dim)
        _toeplitz_release(self._prefix_sum, self._noise_sum, self._sigma, dest)
        if self._final is not None and self._n_seen == self._horizon:
            # the inverse-variance combination of the two releases at T (post-processing of both)
            v_c, v_f = self._stream_variance(self._n_seen), self._final_sigma ** 2
            dest = (v_f * dest + v_c * self._final) / (v_c + v_f)
        return dest

    def _stream_variance(self, t):
        return self._sigma_nominal ** 2 * _error_sum_at(t, *self._variance_sums)

    def _variance(self, t):
        v_c = self._stream_variance(t)
        if self._final is not None and t == self._horizon:
            v_f = self._final_sigma ** 2
            return v_c * v_f / (v_c + v_f)
        return v_c

    def _rho_spent(self):
        stream = gaussian_rho(self.sensitivity * math.sqrt(self._kappa2), self._sigma_nominal)
        return stream + (gaussian_rho(self.sensitivity, self._final_sigma) if self._final is not None else 0.0)

    def describe(self):
        """Public summary of the factorisation.

        Returns
        -------
        dict
            ``kind``, ``dim``, ``sensitivity``, ``rho`` (budget), ``rho_spent_bound`` (Δ²κ²/(2σ²), plus
            Δ²/(2σ_f²) with a final share: ≤ ρ), ``horizon``, ``n_seen``, ``fit`` (which stored fit, or
            "given"), ``buffers``, ``decays``, ``inverse_decays``, ``output_scales``, ``kappa2``, ``sigma``,
            ``final_share``, ``final_sigma`` (None without a final share) and ``final_released``.

        Examples
        --------
        >>> d = BufferedToeplitz(dim=1, sensitivity=1.0, rho=1.0, decays=[0.5], inverse_decays=[0.25]).describe()
        >>> d["fit"], d["buffers"], d["output_scales"], round(d["kappa2"], 6)
        ('given', 1, [0.25], 1.083333)
        """
        out = self._common_description()
        p = self._params
        out.update(fit=self._fit, buffers=p.buffers, decays=p.decays.tolist(),
                   inverse_decays=p.inverse_decays.tolist(), output_scales=p.output_scales.tolist(),
                   kappa2=self._kappa2, sigma=self._sigma_nominal, rho_spent_bound=self._rho_spent(),
                   final_share=self._final_share,
                   final_sigma=self._final_sigma if self._final is not None else None,
                   final_released=self._final is not None and self._n_seen == self._horizon)
        return out

    def privacy_rows(self):
        """One row for the factorisation: ``what``, ``level`` (None), ``nodes_released`` (one noisy release
        per record), ``sigma``, ``kappa2`` and ``rho`` (Δ²κ²/(2σ²), the whole stream's cost); with a final
        share, a second row for the release of the total at the horizon (``rho`` Δ²/(2σ_f²)). The rows add."""
        rows = [{"what": f"buffered linear Toeplitz factorisation ({self.buffers} buffers, fit: {self._fit})",
                 "level": None, "nodes_released": self._n_seen, "sigma": self._sigma_nominal,
                 "kappa2": self._kappa2,
                 "rho": gaussian_rho(self.sensitivity * math.sqrt(self._kappa2), self._sigma_nominal)}]
        if self._final is not None:
            rows.append({"what": f"one release of the total at the horizon ({self._horizon} records; share "
                                 f"{self._final_share:g} of ρ)", "level": None,
                         "nodes_released": int(self._n_seen == self._horizon), "sigma": self._final_sigma,
                         "kappa2": 1.0, "rho": gaussian_rho(self.sensitivity, self._final_sigma)})
        return rows

    # -- state --------------------------------------------------------------------------------------
    def _array_shapes(self):
        shapes = {"prefix_sum": (self.dim,), "noise_sum": (self.dim,), "buffers": (self.buffers, self.dim)}
        if self._final is not None:
            shapes["final"] = (self.dim,)
        return shapes

    def _export_arrays(self):
        arrays = {"prefix_sum": self._prefix_sum.copy(), "noise_sum": self._noise_sum.copy(),
                  "buffers": self._buffers.copy()}
        if self._final is not None:
            arrays["final"] = self._final.copy()
        return arrays

    def _import_arrays(self, n_seen, arrays):
        if n_seen == 0:
            for name, value in arrays.items():
                if np.any(value != 0.0):
                    raise ValueError(f"arrays[{name!r}] is not zero, but n_seen=0 (inconsistent with n_seen)")
        elif n_seen == 1:
            # after one record every buffer and the noise sum hold Y_1 exactly (θ·0 + Y_1, γ·0 + Y_1)
            rows = np.flatnonzero(np.any(arrays["buffers"] != arrays["noise_sum"][None, :], axis=1))
            if rows.size:
                raise ValueError(f"arrays['buffers'] row {int(rows[0])} differs from arrays['noise_sum'], but after "
                                 "one record every buffer holds that record's noise (inconsistent with n_seen=1)")
        if "final" in arrays and n_seen < self._horizon and np.any(arrays["final"] != 0.0):
            raise ValueError(f"arrays['final'] is not zero, but n_seen={n_seen} is below the horizon "
                             f"{self._horizon} (inconsistent with n_seen)")
        if "final" in arrays:
            self._final = arrays["final"]
        self._prefix_sum[:] = arrays["prefix_sum"]  # into the views of the one state array
        self._noise_sum[:] = arrays["noise_sum"]
        self._buffers[:] = arrays["buffers"]
