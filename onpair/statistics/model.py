"""Models from released per-class statistics: post-processing, free of any further privacy cost.

The released prefix sum of the rows v(z) (:mod:`onpair.statistics._kernels`) gives, per class c, a
noisy count n̂_c, sum ŝ_c and second moment M̂_c. From these:

* :func:`class_statistics`: means μ_c = ŝ_c/n̂_c and covariances C_c = M̂_c/n̂_c − μ_cμ_cᵀ (noisy: they
  may be indefinite), with the counts floored at a public level so that a class with few records
  cannot blow up its mean;
* :func:`pairwise_square_model`: the exact minimiser of the regularised pairwise square loss over all
  opposite-label pairs,
  (1/(n₊n₋)) Σ_{i∈P, j∈N} (1 − wᵀ(x_i − x_j))² + (λ/2)‖w‖² = 1 − 2wᵀd + wᵀ(C₊ + C₋ + ddᵀ)w + (λ/2)‖w‖²,
  d = μ₊ − μ₋, whose gradient vanishes at (C₊ + C₋ + λ/2·I + ddᵀ)w = d, i.e. (Sherman–Morrison)
  w = A⁻¹d/(1 + dᵀA⁻¹d) with A = C₊ + C₋ + (λ/2)I. As λ → ∞ its direction is the centroid
  difference d (:func:`centroid_model`);
* :func:`within_class_metric`: the inverse of the regularised pooled within-class covariance (an
  RCA-type Mahalanobis metric) for the metric task;
* :func:`noise_ridge`: the ridge a noisy covariance needs, computed from public quantities only (the
  noise scale of the release and the released counts).

The one choice of a model and its ridge for both learners of the family (:func:`model_kind`,
:func:`choose_ridge`, :func:`released_model`), and the public weights of the statistics
(:func:`check_weights`), live here too.

Everything here reads released values and public constants only (docs/algorithms.md#continual-release).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.signal import signal_fields
from ..privacy.statistics_sensitivity import statistics_sensitivity
from ._kernels import _cholesky_solve, _decode_pooled, _decode_statistics, _twin_scale


#: The data-independent part of the automatic ridge (on the unit-ball domain, where a record's total variance is at
#: most 1). The non-private twin's is this times its own within-class variance (:attr:`ClassStatistics.scale`).
BASE_RIDGE = 1e-3
#: The automatic ridge is BASE_RIDGE + NOISE_RIDGE_FACTOR·noise_ridge: with A = C₊ + C₋ + (λ/2)I that adds
#: twice the expected spectral norm of the covariances' noise. Chosen on synthetic streams
#: (bench/studies/statistics_defaults.py: factors 0.5–8), where 2–8 beat factors ≤ 1 by 0.004–0.033 AUC at
#: every ε.
NOISE_RIDGE_FACTOR = 4.0


@dataclass(frozen=True)
class ClassStatistics:
    """Per-class statistics decoded from one release (all public).

    Attributes
    ----------
    counts : ndarray of float64, shape (C,)
        Released counts, floored at ``count_floor``.
    means : ndarray of float64, shape (C, d)
    covariances : ndarray of float64, shape (C, d, d)
        Symmetric; with noise they may have negative eigenvalues (the models project what they use
        onto the PSD cone, :func:`psd_projection`).
    count_sd, sum_sd, moment_sd : float
        Standard deviation of the noise on one released count, one coordinate of a sum and one entry
        (in orthonormal coordinates) of a second moment: public (the mechanism's variance and the weights).
    count_floor : float
        The floor applied to the counts.
    pooled : bool, default False
        Whether the release held one second moment for all classes (the pooled layout of
        :mod:`onpair.statistics._kernels`): every entry of ``covariances`` is then the one pooled
        within-class covariance, whose noise is that of one released moment (not of C).
    scale : float, default 1
        The variance the base ridges are relative to (:data:`BASE_RIDGE`,
        :data:`onpair.statistics.discriminant.BASE_RIDGE_PER_FEATURE`). 1 (the box's: a box-mapped record's total
        variance is at most 1) for a private release, a public constant. For the exact statistics of the
        non-private twin (noise variance 0), :func:`class_statistics` sets it to the data's own within-class
        variance tr(S_w) = Σ_c (n̂_c/Σn̂)·tr(C_c) (1 where that is at most
        :data:`~onpair.statistics._kernels.TWIN_SCALE_FLOOR`), so that the twin's ridge follows the data's scale:
        its model and probabilities are the same in a tight box and in a box 1,000× too wide.
    """

    counts: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    count_sd: float
    sum_sd: float
    moment_sd: float
    count_floor: float
    pooled: bool = False
    scale: float = 1.0


def class_statistics(estimate: np.ndarray, n_classes: int, dim: int, weights, noise_variance: float,
                     count_floor: float = 1.0, pooled: bool = False) -> ClassStatistics:
    """Decode a released prefix sum into per-class counts, means and covariances.

    Parameters
    ----------
    estimate : ndarray of float64, shape (C·q,)
        The released prefix sum of the rows v(z).
    n_classes : int
        C.
    dim : int
        d.
    weights : (a, b, m)
        The public block weights.
    noise_variance : float
        Per-coordinate variance of the release's noise (0 without noise: the non-private twin, whose
        :attr:`ClassStatistics.scale` is then its own within-class variance where it has a moment block).
    count_floor : float, default 1
        Counts below ``max(count_floor, 2·count_sd)`` are raised to it.
    pooled : bool, default False
        The release is in the pooled layout (one second moment for all classes).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.statistics._kernels import statistics_rows
    >>> Z = np.array([[0.1, 0.2], [0.3, -0.2], [-0.5, 0.1]]); codes = np.array([0, 0, 1])
    >>> stats = class_statistics(statistics_rows(Z, codes, 2, (1, 1, 1)).sum(axis=0), 2, 2, (1, 1, 1), 0.0)
    >>> stats.counts.tolist(), stats.means[0].round(3).tolist()
    ([2.0, 1.0], [0.2, 0.0])
    """
    w = np.asarray(weights, dtype=np.float64)
    a, b, m = (float(v) for v in w)
    sd = math.sqrt(max(float(noise_variance), 0.0))
    count_sd = sd / a
    floor = max(float(count_floor), 2.0 * count_sd)
    counts = np.empty(n_classes)
    means = np.empty((n_classes, dim))
    covariances = np.empty((n_classes, dim, dim))
    decode = _decode_pooled if pooled else _decode_statistics
    decode(np.ascontiguousarray(estimate, dtype=np.float64), n_classes, dim, w, floor, counts, means, covariances)
    # the twin's exact statistics may set the scale of its ridge; a private release's never reads its data for it
    scale = float(_twin_scale(counts, covariances)) if sd == 0.0 and m > 0.0 else 1.0
    return ClassStatistics(counts, means, covariances, count_sd, sd / b, sd / m if m > 0 else math.inf, floor,
                           bool(pooled), scale)


def psd_projection(M: np.ndarray) -> np.ndarray:
    """The nearest PSD matrix in the Frobenius norm (negative eigenvalues set to zero)."""
    S = 0.5 * (M + M.T)
    values, vectors = np.linalg.eigh(S)
    return (vectors * np.maximum(values, 0.0)) @ vectors.T


def noise_ridge(stats: ClassStatistics, classes=None) -> float:
    """The spectral norm that the noise of the covariances C_c (c in ``classes``, default all) is
    expected to reach, from public quantities: a symmetric d×d matrix of independent entries with
    standard deviation s has spectral norm about 2s√d, and the noise of C_c = M̂_c/n̂_c − … has entries
    of standard deviation about ``moment_sd``/n̂_c. A ridge of this size keeps C₊ + C₋ + λI from being
    dominated by noise directions; as the counts grow it vanishes like 1/n."""
    if not math.isfinite(stats.moment_sd):
        return 0.0
    d = stats.means.shape[1]
    picked = range(stats.counts.size) if classes is None else classes
    return 2.0 * math.sqrt(d) * stats.moment_sd * math.fsum(1.0 / stats.counts[c] for c in picked)


def auto_ridge(stats: ClassStatistics) -> float:
    """The ``lam="auto"`` ridge: BASE_RIDGE·scale + NOISE_RIDGE_FACTOR·noise_ridge(stats) (public quantities only for
    a private release, whose :attr:`~ClassStatistics.scale` is 1)."""
    return BASE_RIDGE * stats.scale + NOISE_RIDGE_FACTOR * noise_ridge(stats)


def pairwise_square_model(stats: ClassStatistics, lam: float, positive: int = 1, negative: int = 0) -> np.ndarray:
    """The exact minimiser of the regularised pairwise square loss over all opposite-label pairs.

    w = A⁻¹d/(1 + dᵀA⁻¹d) with A = C₊ + C₋ + (λ/2)I and d = μ₊ − μ₋ (module docstring), solved by Cholesky.
    The noisy covariances may be indefinite: when A is not positive definite, C₊ + C₋ is first projected
    onto the PSD cone (negative eigenvalues set to 0), which changes nothing for exact covariances.

    Examples
    --------
    >>> import numpy as np
    >>> stats = ClassStatistics(np.array([5.0, 5.0]), np.array([[0.0, 0.0], [0.2, 0.0]]),
    ...                         np.stack([np.eye(2) * 0.01] * 2), 0.0, 0.0, 0.0, 1.0)
    >>> pairwise_square_model(stats, lam=0.0).round(4).tolist()   # d = (0.2, 0), A = 0.02·I
    [3.3333, 0.0]
    """
    d = stats.means[positive] - stats.means[negative]
    scatter = stats.covariances[positive] + stats.covariances[negative]
    A = scatter + 0.5 * float(lam) * np.eye(d.size)
    solved = np.empty(d.size)
    if _cholesky_solve(A, d, solved):
        return solved / (1.0 + float(d @ solved))
    values, vectors = np.linalg.eigh(scatter)
    spectrum = np.maximum(values, 0.0) + 0.5 * float(lam)
    coordinates = vectors.T @ d
    with np.errstate(divide="ignore", invalid="ignore"):
        solved_coordinates = np.where(spectrum > 0.0, coordinates / spectrum, 0.0)
    solved = vectors @ solved_coordinates
    return solved / (1.0 + float(coordinates @ solved_coordinates))


def centroid_model(stats: ClassStatistics, positive: int = 1, negative: int = 0) -> np.ndarray:
    """d = μ₊ − μ₋: the direction of the pairwise square model as λ → ∞ (the private centroid scorer)."""
    return stats.means[positive] - stats.means[negative]


def within_class_metric(stats: ClassStatistics, lam: float) -> np.ndarray:
    """W = (Π(S_w) + λI)⁻¹ with S_w the count-weighted pooled within-class covariance and Π the projection
    onto the PSD cone (an RCA-type metric: directions along which classes are spread out weigh less).
    Symmetric positive definite for λ > 0."""
    weights = stats.counts / stats.counts.sum()
    values, vectors = np.linalg.eigh(np.tensordot(weights, stats.covariances, axes=1))
    spectrum = np.maximum(values, 0.0) + float(lam)
    W = (vectors / spectrum) @ vectors.T
    return 0.5 * (W + W.T)


#: The weight of the directions outside the discriminant subspace, relative to the mean weight inside it
#: (:func:`discriminant_metric`). Chosen on synthetic layouts only (bench/metric_statistics.py, defaults
#: table: κ ∈ {0.02, 0.05, 0.2, 1}; 0.05 is within 0.001 of the best at every ε there, 1 loses 0.01–0.06):
#: small enough that a handful of pure-noise features cannot drown the discriminant directions, non-zero so
#: that the metric stays positive definite and ties inside the subspace are broken by the other features.
COMPLEMENT_WEIGHT = 0.05


def within_class_diagonal_sd(stats: ClassStatistics) -> float:
    """The standard deviation of the noise on one diagonal entry of the pooled within-class covariance
    S_w = Σ_c (n̂_c/n̂) C_c (public). Each C_c carries M̂_c's noise divided by n̂_c, so the pooled entry carries
    Σ_c (noise of M̂_c)/n̂: the sum of C independent draws of standard deviation ``moment_sd``, over n̂."""
    if not math.isfinite(stats.moment_sd):
        return math.inf
    return stats.moment_sd * math.sqrt(stats.counts.size) / float(stats.counts.sum())


#: The identity part of the discriminant metric is at least this many times the noise level of the between-
#: class scatter (:func:`between_noise_level`): directions whose released spread is within a few noise
#: levels are not trusted more than the others. Chosen on the synthetic layouts (bench/metric_statistics.py,
#: defaults table: factor 3 against 0 gains 0.024 / 0.009 / 0.001 in mean 3-NN accuracy at ε = 0.5 / 1 / 2.5
#: and changes nothing without noise; factor 1 gains less).
NOISE_FLOOR_FACTOR = 3.0


def between_noise_level(stats: ClassStatistics) -> float:
    """The variance that the release's noise adds, per coordinate, to the between-class scatter
    S_b = Σ_c w_c(μ̂_c − μ̂)(μ̂_c − μ̂)ᵀ (w_c = n̂_c/n̂, μ̂ = Σ_c w_c μ̂_c; public). With μ̂_c = μ_c + e_c,
    e_c ~ N(0, s_c²I), s_c = ``sum_sd``/n̂_c independent, Var(e_c − ē) = s_c²(1 − 2w_c) + Σ_k w_k² s_k², so the
    noise adds τ·I with τ = Σ_c w_c (s_c²(1 − 2w_c) + Σ_k w_k² s_k²) (treating the counts as exact).

    Examples
    --------
    >>> import numpy as np
    >>> stats = ClassStatistics(np.array([10.0, 10.0]), np.zeros((2, 1)), np.zeros((2, 1, 1)), 0.0, 1.0, 1.0, 1.0)
    >>> round(between_noise_level(stats), 6)   # s_c = 0.1, w_c = 1/2: τ = 0.01·0 + 2·0.25·0.01 = 0.005
    0.005
    """
    w = stats.counts / stats.counts.sum()
    s2 = (stats.sum_sd / stats.counts) ** 2
    return float(np.sum(w * (s2 * (1.0 - 2.0 * w) + np.sum(w * w * s2))))


def released_signal(stats: ClassStatistics) -> dict:
    """``expected_cosine`` and ``noise_dominated`` (:func:`onpair.privacy.signal.signal_fields`) of released class
    statistics: the vector (√w_c (μ̂_c − μ̂))_c, whose squared norm is tr S_b (the AUC task: ½‖μ̂₊ − μ̂₋‖ at
    equal counts, the direction of the centroid model), against its noise power d·τ
    (:func:`between_noise_level`). Public: the released statistics and the noise's σ only.

    Examples
    --------
    >>> import numpy as np
    >>> means = np.array([[0.0, 0.0], [0.6, 0.8]])
    >>> stats = ClassStatistics(np.array([10.0, 10.0]), means, np.zeros((2, 2, 2)), 0.0, 0.0, 0.0, 1.0)
    >>> released_signal(stats)   # no noise
    {'expected_cosine': 1.0, 'noise_dominated': False}
    """
    w = stats.counts / stats.counts.sum()
    centred = np.sqrt(w)[:, None] * (stats.means - w @ stats.means)
    return signal_fields(centred, stats.means.shape[1] * between_noise_level(stats))


def discriminant_ridge(stats: ClassStatistics) -> float:
    """The ``lam="auto"`` ridge of :func:`discriminant_metric`: 10⁻³ (times :attr:`~ClassStatistics.scale`, 1 for a
    private release) plus :func:`within_class_diagonal_sd` (public)."""
    noise = within_class_diagonal_sd(stats)
    return BASE_RIDGE * stats.scale + (noise if math.isfinite(noise) else 0.0)


def discriminant_metric(stats: ClassStatistics, ridge: float | None = None, complement: float = COMPLEMENT_WEIGHT,
                        noise_floor: float = NOISE_FLOOR_FACTOR) -> np.ndarray:
    """A Fisher-discriminant Mahalanobis metric from released class statistics (metric task).

    1. Scale each feature by its pooled within-class spread: D = diag(S_w)₊ + ρI, with ρ the ridge (default
       10⁻³ plus the noise standard deviation of a diagonal entry, :func:`within_class_diagonal_sd`). Only
       the diagonal is used: d numbers, each as accurate as one entry of S_w, whereas the inverse of the
       full d×d S_w is dominated by its noise at the sample sizes where privacy bites (on the synthetic
       layouts of bench/metric_statistics.py the diagonal beats the full matrix at every ε ≤ 2.5).
    2. In those coordinates take the between-class scatter B = D^{-1/2} S_b D^{-1/2},
       S_b = Σ_c (n̂_c/n̂)(μ_c − μ)(μ_c − μ)ᵀ (from the means: counts and sums only), and keep its top
       r = min(C − 1, d) eigenpairs (V, β): the true S_b has rank ≤ C − 1, so the other directions hold
       only sampling and privacy noise.
    3. W = D^{-1/2} (V diag(β) Vᵀ + γI) D^{-1/2} with γ = max(κ·mean(β), fτ̄), κ = ``complement``, f = ``noise_floor`` and τ̄ the
       noise level of B (:func:`between_noise_level` times the mean of D⁻¹): distances are measured mostly
       along the discriminant directions, and with a small weight along all others; when the release is
       dominated by noise (β within a few noise levels) the identity part takes over and W tends to the
       diagonal scaling D⁻¹ (:data:`NOISE_FLOOR_FACTOR`).

    Without between-class information (one class, or β = 0) W = D⁻¹, the diagonal within-class whitening.
    W is symmetric positive definite (κ > 0 or β = 0) and is post-processing of the release.

    Parameters
    ----------
    stats : ClassStatistics
        The decoded release.
    ridge : float, optional
        ρ; default ``BASE_RIDGE·stats.scale + within_class_diagonal_sd(stats)``.
    complement : float, default :data:`COMPLEMENT_WEIGHT`
        κ > 0.
    noise_floor : float, default :data:`NOISE_FLOOR_FACTOR`
        The factor of τ̄ in γ (≥ 0; 0 ignores the noise level).

    Examples
    --------
    >>> import numpy as np
    >>> means = np.array([[0.2, 0.0, 0.0], [-0.2, 0.0, 0.0]])          # classes differ along feature 0 only
    >>> cov = np.stack([np.diag([0.01, 0.05, 0.05])] * 2)
    >>> stats = ClassStatistics(np.array([50.0, 50.0]), means, cov, 0.0, 0.0, 0.0, 1.0)
    >>> W = discriminant_metric(stats)
    >>> bool(W[0, 0] > 50 * W[1, 1]), np.allclose(W, W.T)
    (True, True)
    """
    if not complement > 0.0 or not math.isfinite(complement):
        raise ValueError(f"complement must be a finite number > 0, got {complement!r}")
    if not noise_floor >= 0.0 or not math.isfinite(noise_floor):
        raise ValueError(f"noise_floor must be a finite number >= 0, got {noise_floor!r}")
    counts = stats.counts
    weights = counts / counts.sum()
    pooled = np.tensordot(weights, stats.covariances, axes=1)
    if ridge is None:
        ridge = discriminant_ridge(stats)
    scale = 1.0 / np.sqrt(np.maximum(np.diag(pooled), 0.0) + float(ridge))  # D^{-1/2}, diagonal
    centre = weights @ stats.means
    spread = (stats.means - centre) * scale  # class means in whitened coordinates, (C, d)
    between = (spread.T * weights) @ spread
    values, vectors = np.linalg.eigh(0.5 * (between + between.T))
    rank = min(counts.size - 1, values.size)
    kept = np.maximum(values[values.size - rank:], 0.0) if rank > 0 else np.zeros(0)
    if kept.size == 0 or not kept.max() > 0.0:
        return np.diag(scale ** 2)
    basis = vectors[:, values.size - rank:]
    floor = float(noise_floor) * between_noise_level(stats) * float(np.mean(scale ** 2))
    inner = (basis * kept) @ basis.T + max(complement * float(kept.mean()), floor) * np.eye(values.size)
    W = (scale[:, None] * inner) * scale[None, :]
    return 0.5 * (W + W.T)


# ==================================================================================================
# the choice of a model and its ridge (OnPairStats and OffPairStats)
# ==================================================================================================
#: Models of the AUC task, of the metric task and of the classifier (the calibrated linear discriminant of
#: :mod:`onpair.statistics.discriminant`).
AUC_MODELS = ("square", "centroid")
METRIC_MODELS = ("discriminant", "whitening")
CLASSIFY_MODELS = ("lda",)
#: The tasks of the statistics family and their models, the default first.
TASK_MODELS = {"auc": AUC_MODELS, "metric": METRIC_MODELS, "classify": CLASSIFY_MODELS}
#: How the second moments are released: one per class, or one for all classes (the pooled layout: the
#: classifier's default, which needs only the pooled within-class covariance; ``moments=``).
MOMENT_LAYOUTS = ("pooled", "per-class")
#: Default public weights (count, sum, second moment): with b² ≥ 2m² and a² + m² ≤ b² the counts and
#: second moments cost nothing beyond the sums (Δ = 2b; onpair.privacy.statistics_sensitivity).
DEFAULT_WEIGHTS = (0.8, 1.0, 0.6)
#: The range of a weight (the moment weight may also be 0). The models divide the released blocks by the
#: weights and square the means: weights 10¹⁰⁰ apart would overflow them (a non-finite model).
WEIGHT_RANGE = (1e-50, 1e50)


def check_weights(weights):
    """``((a, b, m), Δ)``: the public weights as floats and the sensitivity of one record's statistics, or a
    TypeError/ValueError naming ``weights``. a and b must lie in :data:`WEIGHT_RANGE`, m too or be 0.

    Examples
    --------
    >>> check_weights((0.8, 1, 0.6))
    ((0.8, 1.0, 0.6), 2.0)
    """
    try:
        values = tuple(weights)
    except TypeError:
        raise TypeError(f"weights must be (count, sum, moment) numbers, got {weights!r}") from None
    if len(values) != 3:
        raise ValueError(f"weights must be three numbers (count, sum, moment), got {weights!r}")
    try:
        sensitivity = statistics_sensitivity(*values)  # checks each: a number ≥ 0, finite
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"weights {weights!r}: {exc}") from None
    a, b, m = (float(v) for v in values)
    if a <= 0 or b <= 0:
        raise ValueError(f"the count and sum weights must be > 0 (the model needs means), got weights {weights!r}")
    low, high = WEIGHT_RANGE
    if not (low <= a <= high and low <= b <= high and (m == 0.0 or low <= m <= high)):
        raise ValueError(f"weights must lie in [{low:g}, {high:g}] (the moment weight may be 0), got {weights!r}")
    return (a, b, m), sensitivity


def check_task(task) -> str:
    """``task`` if it is one of :data:`TASK_MODELS`, else a ValueError naming it."""
    if not isinstance(task, str) or task not in TASK_MODELS:
        raise ValueError(f"task must be one of {tuple(TASK_MODELS)}, got {task!r}")
    return task


def model_kind(task: str, model_type) -> str:
    """The model of ``model_type`` (None: the task's default) for ``task`` (:data:`TASK_MODELS`); a ValueError
    naming ``model_type`` and ``task`` for a model of another task."""
    models = TASK_MODELS[check_task(task)]
    kind = models[0] if model_type is None else model_type
    if kind not in models:
        raise ValueError(f"model_type must be one of {models} for task={task!r}, got {model_type!r}")
    return kind


def moment_layout(task: str, moments) -> bool:
    """Whether the release pools the second moments: ``moments`` (None: pooled for ``task="classify"``, one
    per class otherwise); the AUC and metric tasks' models need one per class, so "pooled" is refused there
    (their releases are unchanged). A ValueError names ``moments`` and ``task``."""
    if moments is None:
        return task == "classify"
    if not isinstance(moments, str) or moments not in MOMENT_LAYOUTS:
        raise ValueError(f"moments must be one of {MOMENT_LAYOUTS} or None, got {moments!r}")
    if moments == "pooled" and task != "classify":
        raise ValueError(f"moments='pooled' is for task='classify' (task={task!r} needs one second moment per class)")
    return moments == "pooled"


def choose_ridge(kind: str, stats: ClassStatistics, lam=None) -> float:
    """λ of a model: ``lam``, or for None ("auto") 10⁻³ (times the twin's :attr:`~ClassStatistics.scale`, 1 for a
    private release) plus the noise ridge (public): the noise standard
    deviation of one diagonal entry of the pooled within-class covariance for ``"discriminant"``
    (:func:`discriminant_ridge`), the expected spectral norm of the covariances' noise otherwise
    (:func:`auto_ridge`)."""
    if lam is not None:
        return lam
    return discriminant_ridge(stats) if kind == "discriminant" else auto_ridge(stats)


def released_model(kind: str, stats: ClassStatistics, ridge) -> np.ndarray:
    """The model ``kind`` from released statistics: a vector (AUC) or a d×d matrix (metric task); the
    centroid difference takes no ridge."""
    if kind == "centroid":
        return centroid_model(stats)
    if kind == "square":
        return pairwise_square_model(stats, ridge)
    if kind == "discriminant":
        return discriminant_metric(stats, ridge)
    return within_class_metric(stats, ridge)
