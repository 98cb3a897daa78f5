"""The non-private twin's ridge follows the data's scale (issue 34, item 4); a private model's does not move.

The twin (``private=False``: noise variance 0) reads its exact statistics, so its base ridges are relative to its own
count-pooled within-class variance (:attr:`onpair.statistics.model.ClassStatistics.scale`). A record mapped by a box
1,000× too wide, with the data in its lowest corner, is an affine image z' = 10⁻³·z + c of the record mapped by the
tight box: every model and posterior of the twin is then the same (the ridge scales with the variances), so its
probabilities must agree between the two boxes to rounding. Before, a fixed ridge of 10⁻³ swamped within-class
variances of about 10⁻⁸ and flattened the wide box's probabilities (river's Shuttle: 0.05–0.21 for every record).

A private release must not read its data for its ridge: its scale is 1 (the box's), and its ridges are the box
formulas of public quantities, checked here bit for bit against those formulas written out.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from onpair import OffPairStats, OnPairStats
from onpair.statistics._kernels import statistics_rows
from onpair.statistics.discriminant import covariance_noise_norm, offdiagonal_shrinkage, pooled_covariance
from onpair.statistics.model import class_statistics, noise_ridge

TIGHT = (0.0, 1.0)
WIDE = (0.0, 1000.0)  # the data occupy its lowest 10⁻³ corner
#: Records after which the probabilities are compared (before, a class may hold one record: no within-class spread,
#: and the twin falls back to the box's scale, which differs between the boxes by design).
SETTLED = 20


def classes_stream(n, d, n_classes, seed):
    """Gaussian classes inside [0.05, 0.95]^d (so inside both boxes, never clipped), labels 0…C−1."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.uniform(0.3, 0.7, size=(n_classes, d))
    X = np.clip(centres[y] + 0.08 * rng.standard_normal((n, d)), 0.05, 0.95)
    return X, y


def twin_pair(**kwargs):
    return (OnPairStats(private=False, bounds=TIGHT, **kwargs), OnPairStats(private=False, bounds=WIDE, **kwargs))


@pytest.mark.parametrize("kwargs", [dict(task="auc"), dict(task="auc", model_type="centroid"),
                                    dict(task="classify", classes=[0, 1, 2]),
                                    dict(task="classify", classes=[0, 1, 2], moments="per-class"),
                                    dict(task="classify", classes=[0, 1, 2], covariance="full")],
                         ids=["auc", "centroid", "classify", "classify-per-class", "classify-full"])
def test_twin_probabilities_do_not_depend_on_the_box_width(kwargs):
    auc = kwargs["task"] == "auc"
    X, y = classes_stream(300, 5, 2 if auc else 3, seed=34)
    labels = y.astype(bool) if auc else y
    tight, wide = twin_pair(**kwargs)
    probe = X[:60]
    for i in range(len(X)):
        tight.learn_one(X[i], labels[i])
        wide.learn_one(X[i], labels[i])
        if i + 1 >= SETTLED and (i + 1) % 10 == 0:
            np.testing.assert_allclose(wide.predict_proba(probe), tight.predict_proba(probe), rtol=0, atol=1e-6,
                                       err_msg=f"after {i + 1} records")
    # not flat: the wide box's probabilities use their range (a fixed ridge of 10⁻³ held them near the priors)
    spread = wide.predict_proba(X)
    assert float(np.ptp(spread[:, 1])) > 0.5


@pytest.mark.parametrize("model_type", ["discriminant", "whitening"])
def test_twin_metric_measures_the_same_distances(model_type):
    """The metric task: W in the wide box's coordinates is 10⁶ times the tight box's (z' = 10⁻³·z + c), so distances
    are the same."""
    X, y = classes_stream(200, 4, 3, seed=5)
    tight, wide = twin_pair(task="metric", classes=[0, 1, 2], model_type=model_type)
    tight.learn_many(X, y)
    wide.learn_many(X, y)
    # to rounding: the wide box's covariances are differences M̂/n̂ − μμᵀ of terms 10⁷ times larger than them
    np.testing.assert_allclose(1e-6 * wide.model, tight.model, rtol=0, atol=1e-6 * float(np.max(np.abs(tight.model))))


def test_offline_twin_does_not_depend_on_the_box_width():
    X, y = classes_stream(400, 5, 3, seed=8)
    probabilities = []
    for box in (TIGHT, WIDE):
        estimator = OffPairStats(task="classify", classes=[0, 1, 2], private=False, bounds=box).fit(X, y)
        probabilities.append(estimator.predict_proba(X[:80]))
    np.testing.assert_allclose(probabilities[1], probabilities[0], rtol=0, atol=1e-6)


def test_river_twin_does_not_depend_on_the_box_width():
    """The river wrapper's path: the released model, its fused refresh kernel and its calibration along w."""
    from onpair.river import PrivatePairwiseClassifier

    X, y = classes_stream(250, 4, 2, seed=11)
    features = [f"f{k}" for k in range(4)]
    models = [PrivatePairwiseClassifier(bounds=box, features=features, learner_params={"private": False})
              for box in (TIGHT, WIDE)]
    seen = []
    for i, (row, label) in enumerate(zip(X, y)):
        x = dict(zip(features, row.tolist()))
        p = [model.predict_proba_one(x)[True] for model in models]
        if i >= SETTLED:
            assert p[1] == pytest.approx(p[0], abs=1e-6), i
            seen.append(p[1])
        for model in models:
            model.learn_one(x, bool(label))
    assert max(seen) - min(seen) > 0.5  # not flat


@pytest.mark.parametrize("spread", [1e-3, 1.0])
def test_a_private_release_keeps_the_box_ridge(spread):
    """Whatever the data's spread, a private release's scale is 1 and its ridges are the box formulas of public
    quantities (the released counts and the noise's σ), bit for bit."""
    X, y = classes_stream(300, 4, 2, seed=3)
    X = 0.5 + spread * (X - 0.5)
    labels = y.astype(bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        square = OnPairStats(epsilon=1.0, bounds=TIGHT, seed=2).learn_many(X, labels)
        lda = OnPairStats(epsilon=1.0, bounds=TIGHT, seed=2, task="classify", classes=[False, True]).learn_many(X, labels)
    stats = square.class_statistics()
    assert stats.scale == 1.0 and square.released_model().statistics.scale == 1.0
    assert square.ridge() == 1e-3 + 4.0 * noise_ridge(stats)
    assert square.posterior().ridge == square.released_model().posterior.ridge
    lda_stats = lda.class_statistics()
    assert lda_stats.scale == 1.0
    weights = lda_stats.counts / lda_stats.counts.sum()
    alpha = offdiagonal_shrinkage(lda_stats, pooled_covariance(lda_stats, weights), weights)
    assert lda.posterior().ridge == 1e-4 / 4 + 2.0 * covariance_noise_norm(lda_stats, weights, alpha)


def test_scale_is_the_twins_within_class_variance():
    """class_statistics: the exact statistics' scale is tr(S_w) computed from the records (1 where there is no
    within-class spread); a noisy release's is 1."""
    rng = np.random.default_rng(0)
    Z = 0.01 * rng.standard_normal((50, 3)) - 0.3
    codes = np.arange(50) % 2
    total = statistics_rows(Z, codes, 2, (0.8, 1.0, 0.6)).sum(axis=0)
    within = sum(np.mean(codes == c) * np.trace(np.cov(Z[codes == c].T, bias=True)) for c in range(2))
    assert class_statistics(total, 2, 3, (0.8, 1.0, 0.6), 0.0).scale == pytest.approx(within, rel=1e-9)
    assert class_statistics(total, 2, 3, (0.8, 1.0, 0.6), 1e-8).scale == 1.0
    assert class_statistics(total, 2, 3, (1.0, 1.0, 0.0), 0.0).scale == 1.0  # no second moments: nothing to read
    one_each = statistics_rows(Z[:2], codes[:2], 2, (0.8, 1.0, 0.6)).sum(axis=0)
    assert class_statistics(one_each, 2, 3, (0.8, 1.0, 0.6), 0.0).scale == 1.0
    assert math.isfinite(class_statistics(np.zeros(total.size), 2, 3, (0.8, 1.0, 0.6), 0.0).scale)


def test_river_multiclass_twin_sums_to_one_in_a_wide_box():
    """The multi-class twin in a box 1,000× too wide: its scores are large numbers (the ridge follows the data's
    variance, ≈ 10⁻⁸ here), yet its probabilities sum to 1 to rounding (river's checks ask 1e-9), one at a time and
    by blocks, and equal the tight box's."""
    from onpair.river import PrivateClassifier

    X, y = classes_stream(200, 4, 3, seed=13)
    features = [f"f{k}" for k in range(4)]
    models = [PrivateClassifier(classes=[0, 1, 2], bounds=box, features=features, learner_params={"private": False})
              for box in (TIGHT, WIDE)]
    for i, (row, label) in enumerate(zip(X, y)):
        x = dict(zip(features, row.tolist()))
        for model in models:
            model.learn_one(x, int(label))
        p = [model.predict_proba_one(x) for model in models]
        assert math.isclose(sum(p[1].values()), 1.0, rel_tol=1e-12), i
        if i >= SETTLED:
            assert [p[1][c] for c in range(3)] == pytest.approx([p[0][c] for c in range(3)], abs=1e-6), i
    import pandas as pd

    block = models[1].predict_proba_many(pd.DataFrame(X[:50], columns=features))
    np.testing.assert_allclose(block.to_numpy().sum(axis=1), 1.0, rtol=0, atol=1e-12)
