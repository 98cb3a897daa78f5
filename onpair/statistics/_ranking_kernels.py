"""The calibrated binary posterior along the AUC model (:func:`onpair.statistics.discriminant.ranking_discriminant`)
in one compiled call: the river wrapper recomputes it at every model refresh, where NumPy's per-call overhead on
d×d arrays (about 150 small calls) made it most of the cost of a short stream (issue 22).

The kernel follows ``ranking_discriminant`` step by step (pooling by counts, the debiased pooled covariance, the
Schäfer–Strimmer shrinkage, the automatic ridge, the PSD covariance model, W for "square" or "centroid",
:func:`~onpair.statistics.discriminant.discriminant_posterior` with its defaults): the same quantities, summed
in loops instead of NumPy's pairwise sums and BLAS, so equal to rounding (tests/test_ranking_kernel.py checks
it against ``ranking_discriminant``, which stays the reference). Two eigendecompositions of the reference are
replaced where the result is the same to rounding: a positive-definite covariance target (Cholesky succeeds) is its
own projection onto the PSD cone, and the inverse along the square model is taken by Cholesky where the matrix is
positive definite and well conditioned (:data:`MAX_CHOLESKY_CONDITION`); each LAPACK eigendecomposition of a 9×9
matrix cost about a third of a model refresh. :func:`square_refresh` computes the AUC square model and this posterior
from one release in one call (the river wrapper's model refresh; tests/test_refresh_kernel.py). Every case it does
not handle (an unknown kind, a singular covariance model, C ≠ 2) is left to ``ranking_discriminant`` (its errors
and messages).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ._kernels import _auc_square_model, _cholesky_lower, _decode_statistics, _square_from_decoded, _twin_scale
from .discriminant import (BASE_RIDGE_PER_FEATURE, MAX_UNDO, MIN_SHRINKAGE, PRIOR_NOISE_FACTOR, RIDGE_FACTOR,
                           SEPARATION_FLOOR,
                           SPREAD_NOISE_FACTOR, LinearDiscriminant, ranking_discriminant)
from .model import BASE_RIDGE, NOISE_RIDGE_FACTOR

__all__ = ["fast_ranking_discriminant", "square_refresh", "released_refresh", "square_model"]

_KINDS = {"square": 0, "centroid": 1}
#: The discriminant's public constants, in the order :func:`_square_refresh` reads them (an argument, not globals
#: frozen into the cached kernel: a changed constant reaches it).
_POSTERIOR_CONSTANTS = np.array([BASE_RIDGE_PER_FEATURE, RIDGE_FACTOR, MAX_UNDO, MIN_SHRINKAGE, PRIOR_NOISE_FACTOR,
                                 SPREAD_NOISE_FACTOR])


@njit(**NJIT_OPTIONS)
def _sym_from_eigen(vectors, scale):
    """V·diag(scale)·Vᵀ, a new symmetric (d, d) array.

    Parameters
    ----------
    vectors : ndarray of float64, shape (d, d)
        V, the eigenvectors in its columns. Read only.
    scale : ndarray of float64, shape (d,)
        The diagonal. Read only.
    """
    d = vectors.shape[0]
    out = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            acc = 0.0
            for k in range(d):
                acc += vectors[i, k] * scale[k] * vectors[j, k]
            out[i, j] = acc
    return out


#: The largest condition number ‖M‖_F‖M⁻¹‖_F for which :func:`_well_conditioned_inverse` inverts M by Cholesky
#: instead of the eigendecomposition: there the two agree to about 10⁶ ulps of ‖M⁻¹‖ at worst (both are backward
#: stable; their errors scale with the condition number), and the smallest eigenvalue of M exceeds ‖M‖/10⁶, far
#: beyond the eigendecomposition's error (about d ulps of ‖M‖), so the eigenvalue test of the reference path
#: (is every eigenvalue positive?) is certain to pass.
MAX_CHOLESKY_CONDITION = 1e6


@njit(**NJIT_OPTIONS)
def _well_conditioned_inverse(S, shift, out):
    """(S + shift·I)⁻¹ into ``out`` by Cholesky (exactly symmetric) where S + shift·I is positive definite with a
    condition number ‖·‖_F‖·⁻¹‖_F of at most :data:`MAX_CHOLESKY_CONDITION`: True; False otherwise (``out``
    unspecified; the caller then takes the eigendecomposition).

    Parameters
    ----------
    S : ndarray of float64, shape (d, d)
        Symmetric. Read only.
    shift : float
        Added to the diagonal.
    out : ndarray of float64, shape (d, d)
        Written.
    """
    d = S.shape[0]
    M = S.copy()
    for i in range(d):
        M[i, i] += shift
    L = np.zeros((d, d))
    if not _cholesky_lower(M, L):
        return False
    inverse_l = np.zeros((d, d))  # L⁻¹, lower triangular
    for j in range(d):
        inverse_l[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, d):
            total = 0.0
            for k in range(j, i):
                total -= L[i, k] * inverse_l[k, j]
            inverse_l[i, j] = total / L[i, i]
    size = 0.0
    inverse_size = 0.0
    for i in range(d):
        for j in range(i, d):
            total = 0.0
            for k in range(j, d):
                total += inverse_l[k, i] * inverse_l[k, j]
            out[i, j] = total
            out[j, i] = total
            weight = 1.0 if i == j else 2.0
            inverse_size += weight * total * total
            size += weight * M[i, j] * M[i, j]
    return math.sqrt(size * inverse_size) <= MAX_CHOLESKY_CONDITION


@njit(**NJIT_OPTIONS)
def _ranking_posterior(counts, means, covs, count_sd, sum_sd, moment_sd, pooled_release, kind, lam, scale,
                       base, ridge_factor, max_undo, min_shrinkage, prior_noise_factor, spread_noise_factor, coef,
                       intercept, log_priors):
    """Fills coef (2, d), intercept (2,), log_priors (2,); returns (κ, κ_JS, α, ridge, status), status 0 when
    filled, 1 where the covariance model is singular (the caller's reference path raises). Follows
    :func:`onpair.statistics.discriminant.ranking_discriminant` step by step (tests/test_ranking_kernel.py).

    Parameters
    ----------
    counts : ndarray of float64, shape (2,)
        The released (floored) class counts. Read only.
    means, covs : ndarray of float64, shapes (2, d) and (2, d, d)
        The released class means and covariances. Read only.
    count_sd, sum_sd, moment_sd : float
        The public noise standard deviations of the release.
    pooled_release : bool
        Whether the second moments were released pooled (one block for both classes).
    kind : int
        The AUC model: 0 "square", 1 "centroid".
    scale : float
        The variance scale of the base ridge (:attr:`onpair.statistics.model.ClassStatistics.scale`: 1 for a
        private release).
    lam, base, ridge_factor, max_undo, min_shrinkage, prior_noise_factor, spread_noise_factor : float
        The model's ridge and the discriminant's public constants.
    coef : ndarray of float64, shape (2, d)
        Written in place.
    intercept, log_priors : ndarray of float64, shape (2,)
        Written in place.
    """
    d = means.shape[1]
    total = counts[0] + counts[1]
    weights = counts / total
    s2 = np.empty(2)
    for c in range(2):
        s = sum_sd / counts[c]
        s2[c] = s * s
    # pooled covariance, debiased for the noise of the means
    bias = weights[0] * s2[0] + weights[1] * s2[1]
    pooled = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            pooled[i, j] = weights[0] * covs[0, i, j] + weights[1] * covs[1, i, j]
    sym = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            sym[i, j] = 0.5 * (pooled[i, j] + pooled[j, i]) + (bias if i == j else 0.0)
    debiased = sym.copy()  # Σ̂, unprojected: the calibration reads the within-class variance off it
    # Schäfer–Strimmer off-diagonal shrinkage
    alpha = 0.0
    if d >= 2:
        factor = weights[0] ** 2 / counts[0] + weights[1] ** 2 / counts[1]
        variance = 0.0
        energy = 0.0
        for i in range(d):
            for j in range(d):
                if i != j:
                    variance += factor * (max(sym[i, i], 0.0) * max(sym[j, j], 0.0) + sym[i, j] ** 2)
                    energy += sym[i, j] ** 2
        alpha = min(1.0, variance / energy) if energy > 0.0 else 1.0
    # automatic ridge
    if not math.isfinite(moment_sd):
        noise_sd = 0.0
    elif pooled_release:
        noise_sd = moment_sd / total
    else:
        noise_sd = moment_sd * math.sqrt((weights[0] / counts[0]) ** 2 + (weights[1] / counts[1]) ** 2)
    ridge = base * scale / d + ridge_factor * ((1.0 - alpha) * math.sqrt(2.0 * d) + 1.0) * noise_sd
    # covariance model Σ̃ (PSD, without ridge)
    sigma = np.zeros((d, d))
    if alpha == 1.0:
        for i in range(d):
            v = max(sym[i, i], 0.0)
            if not v + ridge > 0.0:
                return 0.0, 0.0, alpha, ridge, 1
            sigma[i, i] = v
    else:
        target = np.empty((d, d))
        for i in range(d):
            for j in range(d):
                target[i, j] = sym[i, j] if i == j else (1.0 - alpha) * sym[i, j]
        if ridge > 0.0 and _cholesky_lower(target, np.zeros((d, d))):
            # positive definite: the projection onto the PSD cone leaves it as it is (to rounding: the
            # eigendecomposition below rebuilds it to within a few ulps of its norm), and Σ̃ + ridge·I > 0
            sigma = target
        else:
            values, vectors = np.linalg.eigh(target)
            for k in range(d):
                values[k] = max(values[k], 0.0)
                if not values[k] + ridge > 0.0:
                    return 0.0, 0.0, alpha, ridge, 1
            sigma = _sym_from_eigen(vectors, values)
    # W along the released model
    if kind == 0:
        scatter = np.empty((d, d))
        for i in range(d):
            for j in range(d):
                scatter[i, j] = 0.5 * (covs[0, i, j] + covs[1, i, j])
        for i in range(d):
            for j in range(d):
                sym[i, j] = 0.5 * (scatter[i, j] + scatter[j, i])
        W = np.empty((d, d))
        if not _well_conditioned_inverse(sym, 0.25 * lam, W):
            values, vectors = np.linalg.eigh(sym)
            positive = True
            for k in range(d):
                if not values[k] + 0.25 * lam > 0.0:
                    positive = False
            inverse = np.empty(d)
            for k in range(d):
                spectrum = values[k] + 0.25 * lam if positive else max(values[k], 0.0) + 0.25 * lam
                inverse[k] = 1.0 / spectrum if spectrum > 0.0 else 0.0
            raw = _sym_from_eigen(vectors, inverse)
            for i in range(d):
                for j in range(d):
                    W[i, j] = 0.5 * (raw[i, j] + raw[j, i])
    else:
        diff = means[1] - means[0]
        energy = 0.0
        quad = 0.0
        for i in range(d):
            energy += diff[i] * diff[i]
            for j in range(d):
                quad += diff[i] * sigma[i, j] * diff[j]
        tau = (quad / energy if energy > 0.0 else 0.0) + ridge
        W = np.zeros((d, d))
        for i in range(d):
            W[i, i] = 1.0 / tau
    # error covariances V_c = s_c²I + (count_sd/n̂_c)²μ̂_cμ̂_cᵀ + Σ̃/n̂_c, and tr(W V_c)
    trace = np.zeros(2)
    for c in range(2):
        relative = (count_sd / counts[c]) ** 2
        acc = 0.0
        for i in range(d):
            for j in range(d):
                v = relative * means[c, j] * means[c, i] + sigma[j, i] / counts[c]
                if i == j:
                    v += s2[c]
                acc += W[i, j] * v
        trace[c] = acc
    # calibration factor κ = κ_JS·κ_ridge
    centre = weights[0] * means[0] + weights[1] * means[1]
    separation = 0.0
    released = 0.0
    reach = 0.0
    noise = 0.0
    scale = 0.0  # Σ_c π_c μ̂_cᵀWμ̂_c: the floor of the separation (discriminant.SEPARATION_FLOOR)
    for c in range(2):
        for i in range(d):
            for j in range(d):
                scale += weights[c] * means[c, i] * W[i, j] * means[c, j]
    for c in range(2):
        centred = means[c] - centre
        projected = np.zeros(d)
        for j in range(d):
            for i in range(d):
                projected[j] += centred[i] * W[i, j]
        dot = 0.0
        quad = 0.0
        length = 0.0
        for i in range(d):
            dot += centred[i] * projected[i]
            length += projected[i] * projected[i]
            for j in range(d):
                quad += projected[i] * debiased[i, j] * projected[j]
        separation += weights[c] * dot
        released += weights[c] * quad
        reach += weights[c] * length
        noise += weights[c] * (1.0 - weights[c]) * trace[c]
    if not separation > SEPARATION_FLOOR * scale:
        agreement, undo = 0.0, 1.0
    else:
        agreement = max(1.0 - noise / separation, min_shrinkage)
        # the within-class variance along w off the unprojected Σ̂, floored at its noise's standard deviation
        spread = max(released, spread_noise_factor * noise_sd * reach)
        undo = min(max(1.0, separation / spread), max_undo) if spread > 0.0 else max_undo
    kappa = agreement * undo
    # shrunk log priors
    logs = np.log(counts)
    centre_log = weights[0] * logs[0] + weights[1] * logs[1]
    log_spread = weights[0] * (logs[0] - centre_log) ** 2 + weights[1] * (logs[1] - centre_log) ** 2
    prior_noise = 0.0
    for c in range(2):
        prior_noise += weights[c] * (1.0 - weights[c]) * (count_sd / counts[c]) ** 2
    shrink = max(0.0, 1.0 - prior_noise_factor * prior_noise / log_spread) if log_spread > 0.0 else 0.0
    shrunk = centre_log + shrink * (logs - centre_log)
    top = max(shrunk[0], shrunk[1])
    norm = top + math.log(math.exp(shrunk[0] - top) + math.exp(shrunk[1] - top))
    for c in range(2):
        log_priors[c] = shrunk[c] - norm
    # coefficients and intercepts
    for c in range(2):
        quadratic = 0.0
        for j in range(d):
            slope = 0.0
            for i in range(d):
                slope += means[c, i] * W[i, j]
            coef[c, j] = kappa * slope
            quadratic += slope * means[c, j]
        quadratic = max(quadratic - trace[c], 0.0)
        intercept[c] = -0.5 * kappa * quadratic + log_priors[c]
    return kappa, agreement, alpha, ridge, 0


def fast_ranking_discriminant(stats, kind: str, lam: float) -> LinearDiscriminant:
    """:func:`~onpair.statistics.discriminant.ranking_discriminant` (the same posterior, to rounding) in one
    compiled call; the reference function itself for whatever the kernel leaves to it (module docstring)."""
    code = _KINDS.get(kind) if isinstance(kind, str) else None
    if code is None or stats.counts.shape[0] != 2:
        return ranking_discriminant(stats, kind, lam)
    d = stats.means.shape[1]
    coef, intercept, log_priors = np.empty((2, d)), np.empty(2), np.empty(2)
    kappa, agreement, alpha, ridge, status = _ranking_posterior(
        np.ascontiguousarray(stats.counts, dtype=np.float64), np.ascontiguousarray(stats.means, dtype=np.float64),
        np.ascontiguousarray(stats.covariances, dtype=np.float64), float(stats.count_sd), float(stats.sum_sd),
        float(stats.moment_sd), bool(stats.pooled), code, float(lam), float(stats.scale), BASE_RIDGE_PER_FEATURE,
        RIDGE_FACTOR,
        MAX_UNDO, MIN_SHRINKAGE, PRIOR_NOISE_FACTOR, SPREAD_NOISE_FACTOR, coef, intercept, log_priors)
    if status != 0:
        return ranking_discriminant(stats, kind, lam)
    return LinearDiscriminant(coef, intercept, log_priors, float(kappa), float(agreement), float(alpha), float(ridge))


@njit(**NJIT_OPTIONS)
def _square_refresh(estimate, weights, sd, lam, auto_base, auto_factor, constants, model, coef, intercept, log_priors,
                    scalars):
    """The AUC square model and its ranking posterior from one release of the per-class layout (C = 2), in one
    call: the decoding of :func:`onpair.statistics.model.class_statistics` (floor max(1, 2·sd/a)), the model of
    :func:`onpair.statistics._kernels._auc_square_model` (its ridge, its Cholesky solve) and
    :func:`_ranking_posterior` with that ridge, each by the same kernel on the same values as the separate calls
    (so the same bits). Returns 0 when all is filled, 1 where C₊ + C₋ + (λ/2)I is not positive definite (the
    model's projection) and 2 where the covariance model is singular: both left to the reference paths.

    Parameters
    ----------
    estimate : ndarray of float64, shape (2·q,)
        The released prefix sum. Read only.
    weights : ndarray of float64, shape (3,)
        (a, b, m). Read only.
    sd : float
        The standard deviation of the release's noise per coordinate (√variance; 0 without noise).
    lam, auto_base, auto_factor : float
        The model's ridge as :func:`~onpair.statistics._kernels._auc_square_model` takes it (auto_base < 0: λ = lam).
    constants : ndarray of float64, shape (6,)
        :data:`_POSTERIOR_CONSTANTS`. Read only.
    model : ndarray of float64, shape (d,)
        Written: w.
    coef, intercept, log_priors : ndarray of float64, shapes (2, d), (2,), (2,)
        Written: the posterior's.
    scalars : ndarray of float64, shape (6,)
        Written: κ, κ_JS, α, the posterior's ridge, and the posterior's log-odds along w as a·wᵀz + b: a and b
        (:func:`onpair.statistics.discriminant.score_calibration`, in loops).
    """
    d = model.shape[0]
    a, b, m = weights[0], weights[1], weights[2]
    counts = np.empty(2)
    means = np.empty((2, d))
    covariances = np.empty((2, d, d))
    _decode_statistics(estimate, 2, d, weights, max(1.0, 2.0 * sd / a), counts, means, covariances)
    scale = _twin_scale(counts, covariances) if sd == 0.0 and m > 0.0 else 1.0
    used = _square_from_decoded(counts, means, covariances, sd / m if m > 0 else 0.0, lam, auto_base, auto_factor,
                                scale, model)
    if used < 0.0:
        return 1
    kappa, agreement, alpha, ridge, status = _ranking_posterior(
        counts, means, covariances, sd / a, sd / b, sd / m if m > 0 else math.inf, False, 0, used, scale, constants[0],
        constants[1], constants[2], constants[3], constants[4], constants[5], coef, intercept, log_priors)
    if status != 0:
        return 2
    scalars[0] = kappa
    scalars[1] = agreement
    scalars[2] = alpha
    scalars[3] = ridge
    energy = 0.0
    along = 0.0
    for k in range(d):
        energy += model[k] * model[k]
        along += (coef[1, k] - coef[0, k]) * model[k]
    slope = along / energy if energy > 0.0 else 0.0
    scalars[4] = slope if slope > 0.0 else 0.0
    scalars[5] = intercept[1] - intercept[0]
    return 0


def square_refresh(estimate, d: int, weights, variance: float, lam, auto_base: float, auto_factor: float):
    """``(w, posterior, (a, b))``: the square model of one release (what :meth:`onpair.OnPairStats.model` computes),
    its ranking posterior (:func:`fast_ranking_discriminant` of the decoded statistics with the model's ridge, what
    :meth:`onpair.OnPairStats.posterior` computes) and that posterior's log-odds along w, a·wᵀz + b
    (:func:`onpair.statistics.discriminant.score_calibration`, to rounding), in one compiled call
    (:func:`_square_refresh`); None where the kernel leaves them to those reference paths. ``estimate``: the release
    (2·q,) of ``d`` features; ``variance``: the release's noise variance per coordinate; ``lam``, ``auto_base``,
    ``auto_factor``: the model's ridge, as :func:`onpair.statistics._kernels._auc_square_model` takes it.
    Post-processing of the release only."""
    model, coef, intercept, log_priors, scalars = np.empty(d), np.empty((2, d)), np.empty(2), np.empty(2), np.empty(6)
    status = _square_refresh(estimate, weights, math.sqrt(max(float(variance), 0.0)), float(lam), float(auto_base),
                             float(auto_factor), _POSTERIOR_CONSTANTS, model, coef, intercept, log_priors, scalars)
    if status != 0:
        return None
    kappa, agreement, alpha, ridge, slope, offset = scalars.tolist()
    return model, LinearDiscriminant(coef, intercept, log_priors, kappa, agreement, alpha, ridge), (slope, offset)


def _ridge_arguments(lam):
    """(λ, auto_base, auto_factor) as :func:`~onpair.statistics._kernels._auc_square_model` takes a learner's ridge
    ``lam``: the given λ (auto_base < 0), or for None the automatic ridge (:func:`~onpair.statistics.model.auto_ridge`)."""
    return (0.0, BASE_RIDGE, NOISE_RIDGE_FACTOR) if lam is None else (lam, -1.0, NOISE_RIDGE_FACTOR)


def square_model_of(estimate, d: int, weights, variance: float, lam):
    """The AUC square model of one release (``estimate`` (2·q,) of ``d`` features, its noise ``variance``; ``weights``
    (a, b, m) as a float64 array; ``lam`` the learner's ridge, None: automatic) by the fused kernel
    :func:`~onpair.statistics._kernels._auc_square_model`, or None where its Cholesky fails (an indefinite noisy
    scatter: the general path projects it)."""
    sd = math.sqrt(max(float(variance), 0.0))
    a, _, m = (float(v) for v in weights)
    out = np.empty(d)
    used = _auc_square_model(estimate, d, weights, max(1.0, 2.0 * sd / a), sd / m if m > 0 else 0.0,
                             *_ridge_arguments(lam), out)
    return out if used >= 0.0 else None


def released_refresh_of(estimate, d: int, weights, variance: float, lam):
    """:func:`square_refresh` of one release with the learner's ridge ``lam`` (None: automatic):
    ``(w, posterior, (a, b))`` or None, as there."""
    return square_refresh(estimate, d, weights, variance, *_ridge_arguments(lam))
