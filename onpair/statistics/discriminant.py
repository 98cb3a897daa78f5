"""Calibrated multi-class classifiers from released class statistics: linear discriminant analysis as
post-processing of one release (docs/algorithms.md §12).

The release (:func:`onpair.statistics.model.class_statistics`) gives, per public class c, a noisy
count n̂_c, mean μ̂_c = ŝ_c/n̂_c and covariance Ĉ_c = M̂_c/n̂_c − μ̂_cμ̂_cᵀ of the box-mapped records z, and
the **public** standard deviations of its noise (``count_sd``, ``sum_sd``, ``moment_sd``). From these
alone, :func:`linear_discriminant` builds

* class frequencies π_c = n̂_c/Σ_k n̂_k (the counts are already floored at max(1, 2·count_sd), so a class
  that the noise could hide keeps a small positive weight);
* a pooled within-class covariance Σ̂ = Σ_c ω_c Ĉ_c (ω_c = n̂_c/Σn̂, or 1/C with ``pooling="equal"``),
  debiased for the noise of the means (E[μ̂_cμ̂_cᵀ] = μ_cμ_cᵀ + s_c²I, s_c = sum_sd/n̂_c), with its
  off-diagonal part shrunk towards the diagonal by a factor α (0 for ``"full"``, 1 for ``"diagonal"``, and
  for ``"auto"`` the Schäfer–Strimmer ratio of the off-diagonal entries' sampling variance, a public function
  of the release, to their released squares: :func:`offdiagonal_shrinkage`), projected onto the PSD cone
  (Σ̃), plus a ridge λ from the public noise level of the second moments (:func:`discriminant_ridge`);
* shrunk priors log π̃_c (:func:`shrunk_log_priors`): the released frequencies, pulled together where their
  differences are within the noise of the counts;
* with W = (Σ̃ + λI)⁻¹, the linear-discriminant log-posterior

      log P(c | z) = κ·(zᵀWμ̂_c − ½(μ̂_cᵀWμ̂_c − tr(W V_c))₊) + log π̃_c − logsumexp_k(·),

  where V_c is the (public) covariance of the error of μ̂_c (privacy noise and sampling; subtracting
  tr(WV_c) removes its bias from μ̂_cᵀWμ̂_c, and the positive part keeps the estimate of μ_cᵀWμ_c ≥ 0, so that
  it cannot grow with the noise) and κ is the **calibration factor** (:func:`calibration_factor`):
  the slope of the true log-odds against the released ones, estimated from the release, the product of a
  James–Stein factor (the expected squared cosine between the released and the noiseless direction) and a
  capped factor undoing the ridge. κ falls to 1 % of the released scale where the release is mostly noise,
  so the posterior shrinks towards the priors instead of flipping; κ ≈ 1 without noise and with many
  records.

Everything here reads released values and public constants only: it is post-processing, free of any
further privacy cost. Two classes: the log-odds are wᵀz + b with w = κW(μ̂₁ − μ̂₀); with
``covariance="full"`` and ``pooling="equal"`` (and Ĉ₀ + Ĉ₁ positive semi-definite, so that the PSD
projection changes nothing) the direction is exactly that of the pairwise square-loss minimiser
(:func:`onpair.statistics.model.pairwise_square_model`, whose scatter Ĉ₊ + Ĉ₋ weighs the two
classes equally) with its λ = 4(λ_LDA + (s₀² + s₁²)/2), the LDA ridge plus the debiasing of Σ̂. With the
default ``pooling="counts"`` (classical LDA) the two directions coincide only when the classes have equal
counts or equal covariances; otherwise LDA weighs the larger class's covariance more.

Examples
--------
>>> import numpy as np
>>> from onpair.statistics._kernels import statistics_total
>>> from onpair.statistics.model import class_statistics
>>> rng = np.random.default_rng(0)
>>> codes = rng.integers(0, 3, 3000); Z = 0.05 * rng.standard_normal((3000, 2)) + 0.1 * np.eye(3)[codes, :2]
>>> stats = class_statistics(statistics_total(Z, codes, 3, (0.8, 1.0, 0.6)), 3, 2, (0.8, 1.0, 0.6), 0.0)
>>> model = linear_discriminant(stats)
>>> p = model.predict_proba(np.array([[0.1, 0.0], [0.0, 0.0]]))
>>> p.argmax(axis=1).tolist(), bool(np.allclose(p.sum(axis=1), 1.0))
([0, 2], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._discriminant_kernels import _log_posterior_row, _log_posterior_rows
from .model import ClassStatistics

#: Covariance models of :func:`linear_discriminant` (a number in [0, 1] is also accepted: a fixed α).
COVARIANCES = ("auto", "full", "diagonal")
#: How the per-class covariances are pooled.
POOLINGS = ("counts", "equal")
#: The data-independent part of the ridge, per feature: a box-mapped feature has variance at most 1/d, so
#: the base ridge is ``BASE_RIDGE_PER_FEATURE/d`` (the non-private twin's: times its own within-class variance,
#: :attr:`onpair.statistics.model.ClassStatistics.scale`).
BASE_RIDGE_PER_FEATURE = 1e-4
#: The ridge adds this many times the expected spectral norm of the pooled covariance's privacy noise
#: (:func:`covariance_noise_norm`). Chosen on synthetic streams only (bench/studies/classifier_prototype.py
#: ``defaults``: Hyperplane, SEA and three Gaussian streams at ε = 1 and 4, progressive accuracy): factor 1
#: loses 0.003 on average (up to 0.013), factor 4 gains 0.003 on average (−0.008 to +0.019): a flat optimum.
RIDGE_FACTOR = 2.0
#: The largest factor by which the calibration may undo the ridge's shrinkage of the log-odds
#: (:func:`calibration_factor`): a safety bound only. The factor's denominator, the within-class variance along
#: the released direction, is read off the debiased, unprojected pooled covariance and floored at
#: :data:`SPREAD_NOISE_FACTOR` times its public noise level, which is what keeps it from over-shooting (caps 30
#: and 100 give identical probabilities on the synthetic grid of bench/classifier_limits.py). Until 0.1 the
#: denominator was the PSD-projected covariance (inflated by the projection of noise) and the cap, 10, bound
#: almost always: under-confident probabilities, the AUC task's most (held-out recalibration slopes up to 5.5
#: on Hyperplane at ε = 1).
MAX_UNDO = 100.0
#: The within-class variance along the released direction, estimated without bias from the unprojected pooled
#: covariance, is floored at this many times the standard deviation of its privacy noise
#: (:func:`calibration_factor`). Chosen on synthetic streams only (bench/classifier_limits.py, calibration
#: release by release: Hyperplane, SEA and two Gaussian classes, ε = 1 and 4, both tasks, 3 noise seeds, held-out
#: recalibration after 300 … 10,000 records): mean excess log-loss over the 48 private cells 0.022 nats per record
#: with factor 1, against 0.024 (factor 0.7), 0.025 (1.5), 0.030 (2) and 0.027 for the previous estimate; the
#: plain positive part (factor 0) over-shoots (log-loss 3.7 on SEA at ε = 1 in an earlier exploration).
SPREAD_NOISE_FACTOR = 1.0
#: The smallest James–Stein factor (:func:`calibration_factor`): where the released separation of the class
#: means is within its noise the log-odds shrink to 1 % of their released size (the probabilities sit at the
#: priors to within that), not to 0, so that between classes of equal priors the discriminant, not the class
#: order, breaks the tie. A positive factor never changes a sign.
MIN_SHRINKAGE = 0.01
#: The released log-counts keep their differences only in proportion to how far their spread exceeds this many
#: times its noise (:func:`shrunk_log_priors`). With few classes the positive-part James–Stein factor (factor 1)
#: under-shrinks: it has C − 1 degrees of freedom, and its dominance needs at least 3; noisy priors then
#: decide predictions whose discriminant part the calibration has shrunk. Chosen on synthetic streams only
#: (bench/studies/classifier_prototype.py ``defaults``): factor 1 loses 0.006 progressive accuracy on average
#: (−0.035 to +0.016), equal priors (factor ∞) lose 0.009 on average (−0.080 to +0.028).
PRIOR_NOISE_FACTOR = 4.0

#: Released class means whose centred separation Σ_c π_c μ̃_cᵀWμ̃_c is at most this share of Σ_c π_c μ̂_cᵀWμ̂_c do not
#: differ beyond the rounding of their centring (equal means leave ~1e-32 of it): :func:`calibration_factor` then
#: returns (0, 1), the "no difference" answer, instead of a ratio of two rounding errors (which the compiled and
#: the NumPy paths round differently). A real difference of relative size 1e-10 leaves 1e-20.
SEPARATION_FLOOR = 1e-20


@dataclass(frozen=True)
class LinearDiscriminant:
    """A linear discriminant classifier over C public classes (all fields public: post-processing).

    Attributes
    ----------
    coef : ndarray of float64, shape (C, d)
        κ·Wμ̂_c per class.
    intercept : ndarray of float64, shape (C,)
        −½κ(μ̂_cᵀWμ̂_c − tr(WV_c))₊ + log π̃_c.
    log_priors : ndarray of float64, shape (C,)
        log π̃_c (normalised).
    calibration : float
        κ = κ_JS·κ_ridge (:func:`calibration_factor`; 1 with ``calibrate=False``).
    agreement : float
        κ_JS, the James–Stein factor: the estimated squared cosine between the released and the noiseless
        discriminant directions, floored at :data:`MIN_SHRINKAGE` (1 with ``calibrate=False``).
    alpha : float
        α, how far the off-diagonal entries of the covariance were shrunk towards 0.
    ridge : float
        λ, what was added to the diagonal of the PSD-projected covariance model.
    """

    coef: np.ndarray
    intercept: np.ndarray
    log_priors: np.ndarray
    calibration: float
    agreement: float
    alpha: float
    ridge: float

    def decision_function(self, Z: np.ndarray) -> np.ndarray:
        """The unnormalised log-posteriors zᵀcoef_c + intercept_c, shape (m, C), of box-mapped records."""
        return np.asarray(Z, dtype=np.float64) @ self.coef.T + self.intercept

    def log_proba(self, Z: np.ndarray) -> np.ndarray:
        """log P(c | z) for every record (rows of ``Z``, box-mapped) and class: a log-softmax, shape (m, C).
        Row i is exactly :meth:`log_proba_one` of ``Z[i]`` (the same compiled arithmetic)."""
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != self.coef.shape[1]:
            raise ValueError(f"Z must have shape (m, {self.coef.shape[1]}), got {Z.shape}")
        out = np.empty((Z.shape[0], self.coef.shape[0]))
        _log_posterior_rows(Z, self.coef, self.intercept, out)
        return out

    def log_proba_one(self, z: np.ndarray) -> np.ndarray:
        """log P(c | z) of one box-mapped record ``z`` (d,), shape (C,) (the per-record path)."""
        z = np.ascontiguousarray(z, dtype=np.float64)
        if z.shape != (self.coef.shape[1],):
            raise ValueError(f"z must have shape ({self.coef.shape[1]},), got {z.shape}")
        out = np.empty(self.coef.shape[0])
        _log_posterior_row(z, self.coef, self.intercept, out)
        return out

    def predict_proba(self, Z: np.ndarray) -> np.ndarray:
        """P(c | z), shape (m, C); rows sum to 1."""
        return np.exp(self.log_proba(Z))


def log_softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax, stable for any finite scores."""
    top = scores.max(axis=1, keepdims=True)
    shifted = scores - top
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def shrunk_log_priors(stats: ClassStatistics, noise_factor: float = PRIOR_NOISE_FACTOR) -> np.ndarray:
    """log π̃_c: the released log-counts shrunk towards their π-weighted mean by their own signal-to-noise
    ratio, normalised (public).

    The log of a released count n̂_c = n_c + e_c (e_c of standard deviation ``count_sd``) has error variance
    ≈ (count_sd/n̂_c)² (delta method). As for the means (:func:`calibration_factor`), the π-weighted spread
    S_π = Σ_c π_c(log n̂_c − m)² of the log-counts around their mean m exceeds the noiseless one by
    N_π = Σ_c π_c(1 − π_c)(count_sd/n̂_c)² in expectation, so the log-counts are shrunk towards m by the
    factor max(0, 1 − k·N_π/S_π), k = ``noise_factor`` (default :data:`PRIOR_NOISE_FACTOR`; k = 1 is the positive-part James–Stein
    factor, which under-shrinks with few classes). Classes whose released counts differ by less than about
    √k times their noise get equal priors (the noise then cannot decide a prediction); without noise the
    priors are the released frequencies n̂_c/Σn̂. The counts themselves are floored at max(1, 2·count_sd)
    (:func:`onpair.statistics.model.class_statistics`), so every prior is positive.

    Examples
    --------
    >>> import numpy as np
    >>> stats = ClassStatistics(np.array([30.0, 10.0]), np.zeros((2, 1)), np.zeros((2, 1, 1)), 0.0, 0.0, 0.0, 1.0)
    >>> np.exp(shrunk_log_priors(stats)).round(3).tolist()   # no noise: the frequencies
    [0.75, 0.25]
    >>> noisy = ClassStatistics(np.array([60.0, 40.0]), np.zeros((2, 1)), np.zeros((2, 1, 1)), 10.0, 1.0, 1.0, 1.0)
    >>> np.exp(shrunk_log_priors(noisy)).round(3).tolist()   # a difference within the noise: equal priors
    [0.5, 0.5]
    """
    counts = stats.counts
    priors = counts / counts.sum()
    logs = np.log(counts)
    centre = float(priors @ logs)
    spread = float(priors @ (logs - centre) ** 2)
    noise = float(np.sum(priors * (1.0 - priors) * (stats.count_sd / counts) ** 2))
    factor = max(0.0, 1.0 - float(noise_factor) * noise / spread) if spread > 0.0 else 0.0
    shrunk = centre + factor * (logs - centre)
    top = float(shrunk.max())
    return shrunk - (top + math.log(float(np.sum(np.exp(shrunk - top)))))


def pooling_weights(stats: ClassStatistics, pooling: str = "counts") -> np.ndarray:
    """ω_c: n̂_c/Σn̂ (``"counts"``, classical LDA) or 1/C (``"equal"``, the pairwise square loss's C₊ + C₋; not
    for a release of one pooled moment, whose covariance is count-pooled by construction)."""
    if pooling == "counts":
        return stats.counts / stats.counts.sum()
    if pooling == "equal":
        if stats.pooled:
            raise ValueError("pooling='equal' needs one second moment per class; this release holds one pooled "
                             "moment (count-pooled by construction): use pooling='counts'")
        return np.full(stats.counts.size, 1.0 / stats.counts.size)
    raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")


def mean_noise_sd(stats: ClassStatistics) -> np.ndarray:
    """s_c = sum_sd/n̂_c: the standard deviation of the privacy noise on one coordinate of μ̂_c (public)."""
    return stats.sum_sd / stats.counts


def pooled_noise_sd(stats: ClassStatistics, weights: np.ndarray) -> float:
    """The standard deviation of the privacy noise on one diagonal entry of Σ̂ = Σ_c ω_c Ĉ_c (public).

    Ĉ_c carries the noise of M̂_c divided by n̂_c: entries of standard deviation ``moment_sd``/n̂_c on the
    diagonal (moment_sd/(√2·n̂_c) off it: the release is in orthonormal coordinates), independent across
    classes, so the pooled diagonal entry has standard deviation moment_sd·√(Σ_c ω_c²/n̂_c²). A release of one
    pooled moment (``stats.pooled``) carries one draw, divided by Σ_c n̂_c: moment_sd/Σ_c n̂_c (with count
    pooling, 1/√C of the per-class release's moment_sd·√C/Σ_c n̂_c). 0 without a moment block (m = 0 gives no
    covariance at all; then the covariance is 0 and only the ridge remains).
    """
    if not math.isfinite(stats.moment_sd):
        return 0.0
    if stats.pooled:
        return float(stats.moment_sd / stats.counts.sum())
    return float(stats.moment_sd * math.sqrt(np.sum((weights / stats.counts) ** 2)))


def offdiagonal_shrinkage(stats: ClassStatistics, pooled: np.ndarray, weights: np.ndarray) -> float:
    """α ∈ [0, 1]: how far the off-diagonal entries of Σ̂ are shrunk towards 0, from the release alone.

    The Schäfer–Strimmer (2005) target-D rule α = Σ_{k≠l} Var(Σ̂_kl) / Σ_{k≠l} Σ̂_kl², with the **sampling**
    variance of each entry computed, not estimated from records (which the release does not hold):
    Σ_c ω_c²·(Σ_kkΣ_ll + Σ_kl²)/n̂_c, the variance of a Gaussian sample covariance entry (Σ read off the
    released Σ̂, diagonal clipped at 0). It is a function of the release and of public constants, so α is
    post-processing (Ledoit–Wolf's fourth-moment estimate would need the records). α → 0 as the counts grow;
    it shrinks towards the diagonal early in a stream, when Σ̂ is singular or nearly so.

    The **privacy** noise of Σ̂ is left to the ridge (:func:`discriminant_ridge`), a spectral treatment.
    Counting it here, entry by entry, shrinks the covariance to (nearly) its diagonal under privacy (α ≈ 0.85–
    0.98); in the exploration behind bench/studies/classifier_prototype.py that lost 0.023 progressive accuracy on
    Hyperplane at ε = 4 and 0.011 on SEA at ε = 1, and gained 0.027 on a 3-class Gaussian stream at ε = 1:
    the within-class correlations of the river streams are of low rank, and their few strong eigen-directions
    stand out of the noise's spectrum and survive a ridge, while every single entry is within the noise.
    ``covariance="diagonal"`` remains available (the defaults table has it beside the default).
    """
    d = pooled.shape[0]
    if d < 2:
        return 0.0
    diagonal = np.maximum(np.diag(pooled), 0.0)
    off = ~np.eye(d, dtype=bool)
    sampling = float(np.sum(weights ** 2 / stats.counts)) * (np.outer(diagonal, diagonal) + pooled ** 2)
    variance = float(np.sum(sampling[off]))
    energy = float(np.sum(pooled[off] ** 2))
    if not energy > 0.0:
        return 1.0
    return min(1.0, variance / energy)


def covariance_noise_norm(stats: ClassStatistics, weights: np.ndarray, alpha: float) -> float:
    """The spectral norm that the privacy noise of the shrunk pooled covariance is expected to reach (public).

    A symmetric d×d matrix of independent centred entries of standard deviation s off the diagonal has
    spectral norm ≈ 2s√d (the semicircle law's edge); here s = (1 − α)·s_Σ/√2 with s_Σ =
    :func:`pooled_noise_sd`, and the diagonal adds at most a few s_Σ: ν = ((1 − α)√(2d) + 1)·s_Σ.
    """
    d = stats.means.shape[1]
    return ((1.0 - alpha) * math.sqrt(2.0 * d) + 1.0) * pooled_noise_sd(stats, weights)


def discriminant_ridge(stats: ClassStatistics, weights: np.ndarray, alpha: float,
                       factor: float = RIDGE_FACTOR, base: float = BASE_RIDGE_PER_FEATURE) -> float:
    """The automatic ridge: base·scale/d + factor·:func:`covariance_noise_norm` (public quantities only for a private
    release, whose :attr:`~onpair.statistics.model.ClassStatistics.scale` is 1; the non-private twin's scale is its
    own within-class variance)."""
    d = stats.means.shape[1]
    return base * stats.scale / d + factor * covariance_noise_norm(stats, weights, alpha)


def _check_covariance(covariance) -> None:
    if isinstance(covariance, str):
        if covariance not in COVARIANCES:
            raise ValueError(f"covariance must be one of {COVARIANCES} or a number in [0, 1], got {covariance!r}")
        return
    if isinstance(covariance, bool) or not isinstance(covariance, (int, float, np.floating, np.integer)):
        raise TypeError(f"covariance must be one of {COVARIANCES} or a number in [0, 1], got {covariance!r}")
    if not 0.0 <= float(covariance) <= 1.0:
        raise ValueError(f"covariance must be one of {COVARIANCES} or a number in [0, 1], got {covariance!r}")


def check_covariance_model(task: str, covariance) -> None:
    """The classifier's ``covariance`` parameter (:func:`linear_discriminant`: "auto", "full", "diagonal" or a
    number in [0, 1]); anything but "auto" is refused outside ``task="classify"``, whose parameter it is."""
    _check_covariance(covariance)
    if task != "classify" and not (isinstance(covariance, str) and covariance == "auto"):
        raise ValueError(f"covariance is for task='classify' (the classifier's covariance model), got "
                         f"covariance={covariance!r} with task={task!r}")


def pooled_covariance(stats: ClassStatistics, weights: np.ndarray) -> np.ndarray:
    """Σ̂ = Σ_c ω_c Ĉ_c + (Σ_c ω_c s_c²)·I: the pooled covariance, debiased for the noise of the means
    (Ĉ_c subtracts μ̂_cμ̂_cᵀ, whose expectation is μ_cμ_cᵀ + s_c²I). Symmetric, possibly indefinite."""
    pooled = np.tensordot(weights, stats.covariances, axes=1)
    pooled = 0.5 * (pooled + pooled.T)
    bias = float(np.sum(weights * mean_noise_sd(stats) ** 2))
    return pooled + bias * np.eye(pooled.shape[0])


def _shrunk_psd(pooled: np.ndarray, alpha: float):
    """Eigen-decomposition (values clipped at 0, vectors) of the PSD projection of
    (1 − α)·Σ̂ + α·diag(Σ̂)."""
    target = (1.0 - alpha) * pooled
    target[np.diag_indices_from(target)] = np.diag(pooled)
    values, vectors = np.linalg.eigh(target)
    return np.maximum(values, 0.0), vectors


def calibration_factor(W: np.ndarray, means: np.ndarray, priors: np.ndarray, error_covariances: np.ndarray,
                       sigma: np.ndarray, max_undo: float = MAX_UNDO,
                       min_shrinkage: float = MIN_SHRINKAGE, pooled: np.ndarray | None = None,
                       pooled_sd: float = 0.0,
                       spread_noise_factor: float | None = SPREAD_NOISE_FACTOR) -> tuple[float, float]:
    """κ: the slope of the true discriminant scores against the released ones, from the release alone.

    **Two classes (the exact statement).** Let w = W(μ̂₁ − μ̂₀) be the released direction and project every
    record on it: p = wᵀz. Within each class p has mean wᵀμ_c and variance wᵀΣw (shared covariance Σ), so
    the exact posterior given p is the one-dimensional discriminant with log-odds slope
    wᵀ(μ₁ − μ₀)/wᵀΣw per unit of p. The released log-odds have slope 1 per unit of p, so the calibrated
    ones are κ times them,

        κ = wᵀ(μ₁ − μ₀)/wᵀΣw = [wᵀ(μ₁ − μ₀)/wᵀW⁻¹w] · [wᵀW⁻¹w/wᵀΣw] = κ_JS · κ_ridge.

    *The first factor* is the released direction's agreement with the noiseless one. Write μ̂_c = μ_c + e_c
    with E[e_c] = 0, Cov(e_c) = V_c (privacy noise and sampling, public), Δ = μ₁ − μ₀ and
    S = (μ̂₁ − μ̂₀)ᵀW(μ̂₁ − μ̂₀) = wᵀW⁻¹w (the released Mahalanobis separation). **For a W held fixed**
    (conditionally on W, if E[e_c | W] = 0 and Cov(e_c | W) = V_c), E[S] = ΔᵀWΔ + N with
    N = tr(W(V₀ + V₁)), and E[(μ̂₁ − μ̂₀)ᵀWΔ] = ΔᵀWΔ = E[S] − N exactly: κ_JS = 1 − N/S is the plug-in
    (positive-part James–Stein) estimate of the released direction's agreement with the noiseless one, the
    squared cosine between them in W's geometry. **W as built is not fixed**: the privacy noise of the second
    moments is drawn independently of the sums', but Ĉ_c subtracts μ̂_cμ̂_cᵀ and divides by the noisy
    count n̂_c, so W moves with e_c to first order (δW = W·Σ_c ω_c(μ_ce_cᵀ + e_cμ_cᵀ)·W), and for sampling
    errors the empirical mean and centred second moment are uncorrelated only for class distributions
    symmetric about their mean. That dependence adds to E[S] − N a term of first order in the V_c (as N is)
    that E[(μ̂₁ − μ̂₀)ᵀWΔ] holds only once, so κ_JS is **approximately** unbiased, not exactly: the error is
    of the order of N itself, small where the means' noise is small in W's geometry, and where N is not
    small κ_JS sits near its floor anyway. tests/test_classifier.py checks the resulting calibration
    empirically (reliability on synthetic Gaussian classes; private probabilities shrink, never invert on
    average). Where S is within its noise N, κ_JS → 0 and the log-odds fall to the log prior ratio instead of
    taking the sign of the noise; it is floored at ``min_shrinkage`` > 0 (:data:`MIN_SHRINKAGE`), which never
    changes a sign.

    *The second factor* undoes the ridge: W = (Σ̃ + λI)⁻¹ with Σ̃ the (PSD) covariance model, so
    wᵀW⁻¹w ≥ wᵀΣ̃w and κ_ridge = wᵀW⁻¹w/wᵀΣw. With ``pooled`` given (the default path) wᵀΣw is read off the
    debiased, **unprojected** pooled covariance Σ̂ (unbiased for a fixed w; the PSD projection inflates it by
    the projected noise) and floored at ``spread_noise_factor`` (:data:`SPREAD_NOISE_FACTOR`) times the standard
    deviation of its privacy noise: Σ̂'s noise has entries of sd ``pooled_sd`` on the diagonal and pooled_sd/√2
    off it, so uᵀEu has variance pooled_sd²‖u‖⁴ and the floor is spread_noise_factor·pooled_sd·‖u‖². The
    factor is clipped to [1, ``max_undo``] (:data:`MAX_UNDO`, a safety bound). ``spread_noise_factor=None``
    (or no ``pooled``) is the previous estimate: Σ̃ for Σ, capped at ``max_undo``.

    **C classes.** The same least-squares slope pooled over the classes, with centred means
    μ̃_c = μ̂_c − Σ_k π_kμ̂_k and the released class frequencies π:
    S = Σ_c π_c μ̃_cᵀWμ̃_c, N = Σ_c π_c(1 − π_c)tr(WV_c) (the expectation of the noise's share of the
    between-class scatter: Cov(e_c − Σ_k π_ke_k) weighted by π_c sums to Σ_c π_c(1 − π_c)V_c for independent
    errors) and the within-class spread Σ_c π_c (Wμ̃_c)ᵀΣ̃(Wμ̃_c). For C = 2 these are the binary quantities
    times π₀π₁, which cancels.

    Every input is public (the release and constants), so κ is post-processing.

    Parameters
    ----------
    W : ndarray (d, d)
        The inverse covariance model (symmetric positive definite).
    means : ndarray (C, d)
        μ̂_c.
    priors : ndarray (C,)
        The released class frequencies π_c.
    error_covariances : ndarray (C, d, d)
        V_c.
    sigma : ndarray (d, d)
        Σ̃, PSD: the covariance model without its ridge.
    max_undo, min_shrinkage : float
    pooled : ndarray (d, d) or None
        Σ̂, the debiased, unprojected pooled covariance (:func:`pooled_covariance`), released.
    pooled_sd : float
        The public sd of the privacy noise on a diagonal entry of Σ̂ (:func:`pooled_noise_sd`).
    spread_noise_factor : float or None

    Returns
    -------
    (float, float)
        (κ_JS, κ_ridge): κ_JS ∈ [min_shrinkage, 1] and κ_ridge ∈ [1, max_undo], or (0, 1) where the released
        means do not differ beyond rounding (:data:`SEPARATION_FLOOR`); κ = κ_JS·κ_ridge.
    """
    centred = means - priors @ means
    projected = centred @ W  # rows Wμ̃_c (W symmetric)
    separation = float(np.sum(priors * np.einsum("cd,cd->c", centred, projected)))
    noise = float(np.sum(priors * (1.0 - priors) * np.einsum("de,ced->c", W, error_covariances)))
    scale = float(np.sum(priors * np.einsum("cd,de,ce->c", means, W, means)))
    if not separation > SEPARATION_FLOOR * scale:  # the means do not differ beyond rounding: nothing to calibrate
        return 0.0, 1.0
    agreement = max(1.0 - noise / separation, float(min_shrinkage))
    if spread_noise_factor is None or pooled is None:
        spread = float(np.sum(priors * np.einsum("cd,de,ce->c", projected, sigma, projected)))
        undo = separation / spread if spread * max_undo > separation else float(max_undo)
        return agreement, max(1.0, undo)
    # the within-class variance along the released directions from the debiased, unprojected pooled covariance
    # (unbiased for a fixed direction), floored at a multiple of its privacy noise's standard deviation
    # pooled_sd·Σ_c π_c‖Wμ̃_c‖² (see the docstring); all of it released values and public constants
    released = float(np.sum(priors * np.einsum("cd,de,ce->c", projected, pooled, projected)))
    noise_sd = float(pooled_sd) * float(np.sum(priors * np.einsum("cd,cd->c", projected, projected)))
    spread = max(released, float(spread_noise_factor) * noise_sd)
    if not spread > 0.0:
        return agreement, float(max_undo)
    return agreement, min(max(1.0, separation / spread), float(max_undo))


def linear_discriminant(stats: ClassStatistics, *, covariance="auto", ridge="auto", pooling: str = "counts",
                        calibrate: bool = True, ridge_factor: float = RIDGE_FACTOR, max_undo: float = MAX_UNDO,
                        prior_noise_factor: float = PRIOR_NOISE_FACTOR) -> LinearDiscriminant:
    """The calibrated linear-discriminant classifier of one decoded release (module docstring).

    Parameters
    ----------
    stats : ClassStatistics
        The decoded release (:func:`onpair.statistics.model.class_statistics`), with its public
        noise levels.
    covariance : {"auto", "full", "diagonal"} or float in [0, 1], default "auto"
        The within-class covariance model: the off-diagonal entries of Σ̂ shrunk towards 0 by α = 0 (full),
        1 (diagonal), the given number, or the public rule :func:`offdiagonal_shrinkage` ("auto").
    ridge : float or "auto", default "auto"
        Added to the diagonal after the PSD projection; "auto" is :func:`discriminant_ridge`.
    pooling : {"counts", "equal"}, default "counts"
        Pool the class covariances by their released counts (LDA) or equally (the pairwise square loss).
    calibrate : bool, default True
        Multiply the discriminant part by the calibration factor κ (:func:`calibration_factor`) and shrink the
        priors by their noise (:func:`shrunk_log_priors`); False gives plain LDA: κ = 1 and the released
        frequencies as priors.
    ridge_factor, max_undo, prior_noise_factor : float
        The factor of the noise norm in the automatic ridge (:data:`RIDGE_FACTOR`), the cap of κ's
        ridge-undoing part (:data:`MAX_UNDO`), and the noise factor of the priors' shrinkage
        (:data:`PRIOR_NOISE_FACTOR`).

    Returns
    -------
    LinearDiscriminant
    """
    _check_covariance(covariance)
    _check_factors(calibrate, ridge_factor, max_undo, prior_noise_factor)
    weights = pooling_weights(stats, pooling)
    pooled = pooled_covariance(stats, weights)
    alpha = shrinkage_of(covariance, stats, pooled, weights)
    if isinstance(ridge, str):
        if ridge != "auto":
            raise ValueError(f"ridge must be a number >= 0 or 'auto', got {ridge!r}")
        lam = discriminant_ridge(stats, weights, alpha, ridge_factor)
    else:
        lam = float(ridge)
        if not lam >= 0.0 or not math.isfinite(lam):
            raise ValueError(f"ridge must be a finite number >= 0 or 'auto', got {ridge!r}")
    sigma, W = covariance_model(pooled, alpha, lam)
    return discriminant_posterior(stats, W, sigma, alpha=alpha, ridge=lam, calibrate=calibrate, max_undo=max_undo,
                                  prior_noise_factor=prior_noise_factor, pooled=pooled,
                                  pooled_sd=pooled_noise_sd(stats, weights))


def _check_factors(calibrate, ridge_factor, max_undo, prior_noise_factor) -> None:
    if not isinstance(calibrate, (bool, np.bool_)):
        raise TypeError(f"calibrate must be True or False, got {calibrate!r}")
    for name, value, low in (("ridge_factor", ridge_factor, 0.0), ("max_undo", max_undo, 1.0),
                             ("prior_noise_factor", prior_noise_factor, 0.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number >= {low:g}, got {value!r}")
        if not (value >= low and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number >= {low:g}, got {value!r}")


def shrinkage_of(covariance, stats: ClassStatistics, pooled: np.ndarray, weights: np.ndarray) -> float:
    """α of a covariance model: 0 ("full"), 1 ("diagonal"), the number given, or :func:`offdiagonal_shrinkage`."""
    if isinstance(covariance, str):
        if covariance == "auto":
            return offdiagonal_shrinkage(stats, pooled, weights)
        return 0.0 if covariance == "full" else 1.0
    return float(covariance)


def covariance_model(pooled: np.ndarray, alpha: float, lam: float):
    """(Σ̃, W): the PSD projection of (1 − α)·Σ̂ + α·diag(Σ̂) (the covariance model without its ridge) and
    W = (Σ̃ + λI)⁻¹, symmetric; a ValueError where Σ̃ + λI is singular (λ = 0)."""
    if alpha == 1.0:
        values = np.maximum(np.diag(pooled), 0.0)
        if not np.all(values + lam > 0.0):
            raise ValueError("the covariance model is singular: pass a ridge > 0")
        return np.diag(values), np.diag(1.0 / (values + lam))
    values, vectors = _shrunk_psd(pooled, alpha)
    if not np.all(values + lam > 0.0):
        raise ValueError("the covariance model is singular: pass a ridge > 0")
    sigma = (vectors * values) @ vectors.T
    W = (vectors / (values + lam)) @ vectors.T
    return sigma, 0.5 * (W + W.T)


def discriminant_posterior(stats: ClassStatistics, W: np.ndarray, sigma: np.ndarray, *, alpha: float = 0.0,
                           ridge: float = 0.0, calibrate: bool = True, max_undo: float = MAX_UNDO,
                           prior_noise_factor: float = PRIOR_NOISE_FACTOR, pooled: np.ndarray | None = None,
                           pooled_sd: float | None = None,
                           spread_noise_factor: float | None = SPREAD_NOISE_FACTOR,
                           min_shrinkage: float = MIN_SHRINKAGE) -> LinearDiscriminant:
    """The calibrated posterior of the discriminant with inverse covariance model ``W`` (d×d, symmetric
    positive definite) and covariance model ``sigma`` (Σ̃, PSD, without ridge): coef_c = κWμ̂_c, intercept_c =
    −½κ(μ̂_cᵀWμ̂_c − tr(WV_c))₊ + log π̃_c (module docstring; ``alpha`` and ``ridge`` are recorded only)."""
    counts = stats.counts
    d = stats.means.shape[1]
    frequencies = counts / counts.sum()
    # V_c, the covariance of μ̂_c's error: privacy noise of the sum (s_c²I), the count's noise scaling the mean
    # ((count_sd/n̂_c)²μ̂_cμ̂_cᵀ), and sampling (Σ̃/n̂_c).
    s2 = mean_noise_sd(stats) ** 2
    relative = (stats.count_sd / counts) ** 2
    error = (s2[:, None, None] * np.eye(d) + relative[:, None, None] * np.einsum("ci,cj->cij", stats.means, stats.means)
             + sigma[None, :, :] / counts[:, None, None])
    if calibrate:
        if pooled is None:
            weights = pooling_weights(stats, "counts")
            pooled, pooled_sd = pooled_covariance(stats, weights), pooled_noise_sd(stats, weights)
        agreement, undo = calibration_factor(W, stats.means, frequencies, error, sigma, max_undo, min_shrinkage,
                                             pooled, float(pooled_sd), spread_noise_factor)
        kappa = agreement * undo
        log_priors = shrunk_log_priors(stats, prior_noise_factor)
    else:
        agreement, kappa, log_priors = 1.0, 1.0, np.log(frequencies)
    slopes = stats.means @ W
    # the positive part of the unbiased estimate of μ_cᵀWμ_c: where the noise dominates it falls to 0 (the
    # intercepts to the log priors), instead of growing with the noise's trace
    quadratic = np.maximum(np.einsum("cd,cd->c", slopes, stats.means) - np.einsum("de,ced->c", W, error), 0.0)
    coef = kappa * slopes
    intercept = -0.5 * kappa * quadratic + log_priors
    return LinearDiscriminant(coef, intercept, log_priors, float(kappa), float(agreement), float(alpha), float(ridge))


def score_calibration(posterior: LinearDiscriminant, model: np.ndarray, energy=None) -> tuple:
    """(a, b) with log-odds a·wᵀz + b equal to the binary posterior's (:func:`ranking_discriminant`, whose log-odds
    direction is a positive multiple of the released model w): a = (coef₊ − coef₋)ᵀw/‖w‖² (0 for w = 0: the
    prior; floored at 0), b = intercept₊ − intercept₋. ``energy``: ‖w‖² = wᵀw if already computed. The river
    classifier's calibrated probability σ(a·wᵀz + b) (:class:`onpair.river.PrivatePairwiseClassifier`).

    Examples
    --------
    >>> posterior = LinearDiscriminant(np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([-0.5, -1.0]), np.zeros(2),
    ...                                1.0, 1.0, 0.0, 0.0)
    >>> score_calibration(posterior, np.array([0.5, 0.0]))   # coef difference (2, 0) = 4·w
    (4.0, -0.5)
    """
    if energy is None:
        energy = float(model.dot(model))
    coef = posterior.coef
    slope = float((coef[1] - coef[0]).dot(model)) / energy if energy > 0.0 else 0.0
    negative, positive = posterior.intercept.tolist()
    return max(slope, 0.0), positive - negative


def ranking_discriminant(stats: ClassStatistics, kind: str, lam: float) -> LinearDiscriminant:
    """The calibrated binary posterior **along the AUC task's released model** (class 0 negative, 1 positive):
    its log-odds are an increasing affine function of the model's score wᵀz, so it ranks records exactly as
    the model does (ties aside).

    The AUC models are Wd̂ up to a positive factor, d̂ = μ̂₁ − μ̂₀, with W = ((Ĉ₀ + Ĉ₁)/2 + (λ/4)I)⁻¹ for
    ``"square"`` (:func:`onpair.statistics.model.pairwise_square_model`: A = Ĉ₊ + Ĉ₋ + (λ/2)I = 2W⁻¹; where A
    is not positive definite, Ĉ₀ + Ĉ₁ is projected onto the PSD cone, as the model does) and W = (τI)⁻¹ for
    ``"centroid"``, with τ = d̂ᵀΣ̃d̂/‖d̂‖² + λ (the within-class variance along d̂ plus the discriminant ridge,
    so that the ridge-undoing factor of :func:`calibration_factor` measures what it measures for LDA). The
    posterior is :func:`discriminant_posterior` with that W, and Σ̃ the count-pooled covariance model of
    :func:`linear_discriminant`'s defaults: the slope of the log-odds along the released direction is
    κ_JS·κ_ridge, exactly the calibration derived there for a direction w = Wd̂ (public quantities only).
    """
    weights = pooling_weights(stats, "counts")
    pooled = pooled_covariance(stats, weights)
    alpha = offdiagonal_shrinkage(stats, pooled, weights)
    ridge = discriminant_ridge(stats, weights, alpha)
    sigma, _ = covariance_model(pooled, alpha, ridge)
    d = stats.means.shape[1]
    if kind == "square":
        scatter = 0.5 * (stats.covariances[0] + stats.covariances[1])
        values, vectors = np.linalg.eigh(0.5 * (scatter + scatter.T))
        spectrum = values + 0.25 * float(lam)
        if not np.all(spectrum > 0.0):  # the model's projection onto the PSD cone (a pseudo-inverse for λ = 0)
            spectrum = np.maximum(values, 0.0) + 0.25 * float(lam)
        with np.errstate(divide="ignore"):
            inverse = np.where(spectrum > 0.0, 1.0 / spectrum, 0.0)
        W = (vectors * inverse) @ vectors.T
        W = 0.5 * (W + W.T)
    elif kind == "centroid":
        diff = stats.means[1] - stats.means[0]
        energy = float(diff @ diff)
        tau = (float(diff @ sigma @ diff) / energy if energy > 0.0 else 0.0) + ridge
        W = np.eye(d) / tau
    else:
        raise ValueError(f"no ranking posterior for the model {kind!r}")
    return discriminant_posterior(stats, W, sigma, alpha=alpha, ridge=ridge, pooled=pooled,
                                  pooled_sd=pooled_noise_sd(stats, weights))
