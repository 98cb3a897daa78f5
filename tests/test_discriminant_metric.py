"""The discriminant metric from released class statistics (the statistics learners' default metric).

Against a computation from the raw records that shares no code with the library (pooled within-class
variances and class means by NumPy, the metric built from its definition); its structure (symmetric,
positive definite, the between-class rank, the one-class fallback); that it finds the informative
features of the synthetic layouts without noise and at ε = 2.5; and that it reaches river through
MetricTransformer with only released values.
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from onpair import OffPairStats, OnPairStats
from onpair.statistics._kernels import statistics_rows
from onpair.statistics.model import (BASE_RIDGE, COMPLEMENT_WEIGHT, ClassStatistics, class_statistics,
                                     discriminant_metric, discriminant_ridge, within_class_diagonal_sd)
from onpair.evaluation import knn_accuracy
from onpair.river import MetricTransformer
from streams.synthetic import BOUNDS, LAYOUTS, noise_feature_classes

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=40)
WEIGHTS = (0.8, 1.0, 0.6)


def naive_discriminant(Z, codes, n_classes, ridge, kappa):
    """The metric from its definition, on raw records: D = diag of the count-weighted pooled within-class
    covariance + ridge; B = D^{-1/2} S_b D^{-1/2}; top C−1 eigenpairs; W = D^{-1/2}(VβVᵀ + κβ̄I)D^{-1/2}."""
    n, d = Z.shape
    variances = np.zeros(d)
    means = []
    for c in range(n_classes):
        members = Z[codes == c]
        means.append(members.mean(axis=0))
        variances += ((members - members.mean(axis=0)) ** 2).sum(axis=0) / n
    D_inv_root = np.diag(1.0 / np.sqrt(variances + ridge))
    fractions = np.array([np.mean(codes == c) for c in range(n_classes)])
    overall = Z.mean(axis=0)
    S_b = sum(f * np.outer(m - overall, m - overall) for f, m in zip(fractions, means))
    values, vectors = np.linalg.eigh(D_inv_root @ S_b @ D_inv_root)
    top = np.argsort(values)[::-1][: n_classes - 1]
    beta = values[top]
    inner = vectors[:, top] @ np.diag(beta) @ vectors[:, top].T + kappa * beta.mean() * np.eye(d)
    return D_inv_root @ inner @ D_inv_root


def exact_stats(Z, codes, n_classes):
    return class_statistics(statistics_rows(Z, codes, n_classes, WEIGHTS).sum(axis=0), n_classes, Z.shape[1],
                            WEIGHTS, 0.0)


@pytest.mark.parametrize("n_classes, d", [(2, 3), (3, 5), (5, 4), (4, 2)])
def test_equals_its_definition_on_exact_statistics(n_classes, d):
    rng = np.random.default_rng([n_classes, d])
    n = 120
    codes = np.arange(n) % n_classes
    Z = 0.3 * rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d) + 0.1 * rng.standard_normal((n_classes, d))[codes] / d
    stats = exact_stats(Z, codes, n_classes)
    for ridge, kappa in [(0.01, 0.05), (0.001, 0.3)]:
        np.testing.assert_allclose(discriminant_metric(stats, ridge, kappa),
                                   naive_discriminant(Z, codes, n_classes, ridge, kappa), rtol=1e-8, atol=1e-10)


def test_default_ridge_is_the_noise_of_one_diagonal_entry():
    Z = np.random.default_rng(0).uniform(-0.5, 0.5, size=(60, 3))
    codes = np.arange(60) % 3
    exact = exact_stats(Z, codes, 3)
    # no noise (the non-private twin): the base only, relative to the data's count-pooled within-class variance
    within = sum(np.mean(codes == c) * np.trace(np.cov(Z[codes == c].T, bias=True)) for c in range(3))
    assert discriminant_ridge(exact) == pytest.approx(BASE_RIDGE * within, rel=1e-12)
    sigma = 2.0
    total = statistics_rows(Z, codes, 3, WEIGHTS).sum(axis=0)
    noisy = class_statistics(total, 3, 3, WEIGHTS, sigma ** 2)
    # Each C_c carries N(0, (σ/m)²)/n̂_c per diagonal entry; weighted by n̂_c/n̂ they add up to C draws over n̂.
    expected = (sigma / WEIGHTS[2]) * np.sqrt(3) / noisy.counts.sum()
    assert within_class_diagonal_sd(noisy) == pytest.approx(expected, rel=1e-12)
    assert discriminant_ridge(noisy) == pytest.approx(BASE_RIDGE + expected, rel=1e-12)


def test_the_ridge_formula_matches_the_empirical_noise_of_the_pooled_diagonal():
    """The noise sd the ridge uses, against the spread of the pooled diagonal over 2,000 noise draws
    (a χ² interval at α = 0.001 on the variance)."""
    rng = np.random.default_rng(3)
    Z = rng.uniform(-0.3, 0.3, size=(300, 2))
    codes = np.arange(300) % 3
    total = statistics_rows(Z, codes, 3, WEIGHTS).sum(axis=0)
    sigma, draws = 3.0, 2000
    entries = []
    for _ in range(draws):
        s = class_statistics(total + sigma * rng.standard_normal(total.size), 3, 2, WEIGHTS, sigma ** 2)
        pooled = np.tensordot(s.counts / s.counts.sum(), s.covariances, axes=1)
        entries.append(pooled[0, 0])
    predicted = (sigma / WEIGHTS[2]) * np.sqrt(3) / 300
    from scipy import stats as sstats
    low, high = sstats.chi2.ppf([0.0005, 0.9995], draws - 1) / (draws - 1)
    ratio = np.var(entries, ddof=1) / predicted ** 2
    # The released counts' noise and the mean products add a little variance: allow 10 % above.
    assert low * 0.9 <= ratio <= high * 1.1


@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 10 ** 6), st.floats(0.0, 5.0))
@SETTINGS
def test_symmetric_positive_definite_for_any_release(n_classes, d, seed, sigma):
    """Any release (noisy: indefinite covariances, tiny counts) gives a symmetric PD, finite W."""
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, size=(20, d)) / np.sqrt(d)
    codes = rng.integers(0, n_classes, size=20)
    total = statistics_rows(Z, codes, n_classes, WEIGHTS).sum(axis=0)
    stats = class_statistics(total + sigma * rng.standard_normal(total.size), n_classes, d, WEIGHTS, sigma ** 2)
    W = discriminant_metric(stats)
    assert np.all(np.isfinite(W))
    np.testing.assert_array_equal(W, W.T)
    assert np.linalg.eigvalsh(W).min() > 0.0


def test_one_class_or_equal_means_fall_back_to_the_diagonal_whitening():
    cov = np.stack([np.diag([0.01, 0.04])])
    stats = ClassStatistics(np.array([10.0]), np.zeros((1, 2)), cov, 0.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(discriminant_metric(stats, ridge=0.0), np.diag([100.0, 25.0]))
    same = ClassStatistics(np.array([5.0, 5.0]), np.zeros((2, 2)), np.stack([cov[0]] * 2), 0.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(discriminant_metric(same, ridge=0.0), np.diag([100.0, 25.0]))


def test_complement_weight_is_checked():
    stats = ClassStatistics(np.array([5.0, 5.0]), np.eye(2), np.stack([np.eye(2)] * 2), 0.0, 0.0, 0.0, 1.0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="complement"):
            discriminant_metric(stats, complement=bad)
    assert COMPLEMENT_WEIGHT > 0


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_weights_the_informative_features_above_the_noise_features(layout):
    """Without noise and at ε = 2.5 (n = 2,000, fixed seeds): the smallest diagonal weight of an informative
    feature exceeds the largest of a noise feature, and 3-NN beats Euclidean."""
    X, y = noise_feature_classes(layout, 3000, seed=[21, 0])
    n_classes, informative, _ = LAYOUTS[layout]
    classes = list(range(n_classes))
    for params in (dict(private=False), dict(epsilon=2.5, delta=1e-5, random_state=4)):
        est = OffPairStats(task="metric", classes=classes, bounds=BOUNDS, **params).fit(X[:2000], y[:2000])
        W = est.coef_
        if layout != "rotated":  # rotated mixes its informative features with each other only
            assert np.diag(W)[:informative].min() > np.diag(W)[informative:].max()
        else:
            assert np.abs(W[:informative, :informative]).sum() > 10 * np.abs(W[informative:, informative:]).sum()
        learned = knn_accuracy(est.transform(X[:2000]), y[:2000], est.transform(X[2000:]), y[2000:], k=3)
        euclid = knn_accuracy(X[:2000], y[:2000], X[2000:], y[2000:], k=3)
        assert learned > euclid + 0.05


def test_default_metric_model_and_privacy_unchanged_by_the_model():
    """The model is post-processing: the same release (seed) gives the same report for both models."""
    X, y = noise_feature_classes("circle", 300, seed=1)
    reports = {}
    for kind in ("discriminant", "whitening"):
        est = OffPairStats(task="metric", classes=[0, 1, 2], model_type=kind, bounds=BOUNDS, random_state=0).fit(X, y)
        reports[kind] = {k: v for k, v in est.privacy_report_.items() if k not in ("model_type", "ridge")}
    assert reports["discriminant"] == reports["whitening"]
    assert OffPairStats(task="metric", classes=[0, 1, 2], bounds=BOUNDS, random_state=0).fit(X, y) \
        .privacy_report_["model_type"] == "discriminant"
    online = OnPairStats(task="metric", classes=[0, 1, 2], bounds=BOUNDS, seed=0).learn_many(X, y)
    assert online.model.shape == (12, 12)
    assert online.ridge() == pytest.approx(discriminant_ridge(online.class_statistics()))


def test_river_metric_transformer_takes_the_statistics_learner():
    """MetricTransformer around OnPairStats: a private metric at every record, only released values read."""
    X, y = noise_feature_classes("circle", 400, seed=2)
    names = [f"f{i}" for i in range(X.shape[1])]
    learner = OnPairStats(task="metric", classes=["a", "b", "c"], epsilon=1.0, bounds=BOUNDS, seed=0)
    transformer = MetricTransformer(learner, features=names)
    for row, label in zip(X, y):
        transformer.learn_one(dict(zip(names, row.tolist())), "abc"[label])
    out = transformer.transform_one(dict(zip(names, X[0].tolist())))
    assert sorted(out) == sorted(f"metric_{i}" for i in range(12))
    report = transformer.privacy_report()
    assert report["private"] and report["epsilon_spent"] <= 1.0 + 1e-9 and report["n_seen"] == 400
    with pytest.raises(ValueError, match="task='metric'"):
        MetricTransformer(OnPairStats(bounds=BOUNDS))


def test_between_noise_level_matches_monte_carlo():
    """τ of between_noise_level against the mean diagonal of S_b over 4,000 draws of noisy means with no
    signal (fixed counts): within 5 standard errors."""
    from onpair.statistics.model import between_noise_level
    counts = np.array([30.0, 50.0, 120.0])
    stats = ClassStatistics(counts, np.zeros((3, 2)), np.zeros((3, 2, 2)), 0.0, 2.0, 1.0, 1.0)
    rng = np.random.default_rng(8)
    w = counts / counts.sum()
    diagonals = []
    for _ in range(4000):
        means = rng.standard_normal((3, 2)) * (2.0 / counts)[:, None]
        centre = w @ means
        diagonals.append(np.sum(w * (means[:, 0] - centre[0]) ** 2))
    diagonals = np.array(diagonals)
    assert abs(diagonals.mean() - between_noise_level(stats)) <= 5 * diagonals.std() / np.sqrt(diagonals.size)


def test_noise_dominated_release_tends_to_the_diagonal_scaling():
    """With noise far above the signal, the identity part dominates: W·D is close to a multiple of I."""
    rng = np.random.default_rng(2)
    Z = rng.uniform(-0.3, 0.3, size=(200, 4))
    codes = np.arange(200) % 3
    total = statistics_rows(Z, codes, 3, WEIGHTS).sum(axis=0)
    sigma = 1e4
    stats = class_statistics(total + sigma * rng.standard_normal(total.size), 3, 4, WEIGHTS, sigma ** 2)
    W = discriminant_metric(stats)
    pooled = np.tensordot(stats.counts / stats.counts.sum(), stats.covariances, axes=1)
    root = np.sqrt(np.maximum(np.diag(pooled), 0.0) + discriminant_ridge(stats))
    inner = W * root[:, None] * root[None, :]
    values = np.linalg.eigvalsh(inner)
    assert values.max() / values.min() < 1.0 + 1.0 / 3.0 * 10  # β ≤ ~10·τ̄ here: at most 1 + β/(3τ̄)


def test_synthetic_layouts_are_reproducible_and_validated():
    X1, y1 = noise_feature_classes("rotated", 50, seed=3)
    X2, y2 = noise_feature_classes("rotated", 50, seed=3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert X1.shape == (50, 18) and X1.dtype == np.float64 and y1.dtype == np.int64
    # The noise features are independent of the label: their class means agree within sampling error.
    X, y = noise_feature_classes("circle", 6000, seed=4)
    spread = np.abs(X[y == 0, 2:].mean(axis=0) - X[y == 1, 2:].mean(axis=0))
    assert spread.max() < 5 * np.sqrt(1 / 3 * 2 / 2000)  # 5 standard errors (variance 1/3, ~2,000 a class)
    with pytest.raises(ValueError, match="layout"):
        noise_feature_classes("spiral", 10)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n must"):
            noise_feature_classes("circle", bad)
