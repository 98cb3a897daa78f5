"""The private standard scalers (scikit-learn and river): sensitivity, noise, outputs, pipelines."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from river import checks, datasets
from scipy import stats

from onpair import OffPairStats
from onpair.evaluation import roc_auc
from onpair.preprocessing import PrivateStandardScaler, scaler_sensitivity
from onpair.river import PrivatePairwiseClassifier
from onpair.river import PrivateStandardScaler as RiverScaler
from tiers import by_tier


def contribution(u):
    return np.concatenate([u, u * u])


def test_sensitivity_is_the_supremum_over_the_unit_range():
    """Exhaustive grid per feature (the change separates over features) and random pairs in d = 3."""
    grid = np.linspace(-1.0, 1.0, 401)
    worst = max((u - v) ** 2 * (1 + (u + v) ** 2) for u, v in itertools.product(grid, grid))
    assert math.isclose(worst, 4.0) and scaler_sensitivity(1) == 2.0
    rng = np.random.default_rng(0)
    d = 3
    sampled = max(np.linalg.norm(contribution(rng.uniform(-1, 1, d)) - contribution(rng.uniform(-1, 1, d)))
                  for _ in range(20000))
    assert sampled <= scaler_sensitivity(d)
    assert math.isclose(np.linalg.norm(contribution(np.ones(d)) - contribution(-np.ones(d))), scaler_sensitivity(d))


def test_released_sums_carry_the_reported_noise():
    """All-zero records: the released mean of feature 0 is pure noise/n; over 300 seeds its variance is
    σ²/n² (χ² test, α = 0.001; 100 seeds in the fast tier)."""
    X = np.zeros((50, 2))
    draws = []
    for seed in range(by_tier(fast=100, full=300)):
        scaler = PrivateStandardScaler(epsilon=1.0, bounds=(-1.0, 1.0), random_state=seed).fit(X)
        draws.append(scaler.mean_[0])
    sigma = scaler.privacy_report_["sigma"]
    statistic = np.sum(np.square(draws)) / (sigma / 50) ** 2
    p = 2 * min(stats.chi2.cdf(statistic, len(draws)), stats.chi2.sf(statistic, len(draws)))
    assert p > 0.001
    assert scaler.privacy_report_["rho_spent"] <= scaler.privacy_report_["rho_budget"]


def test_outputs_are_standardised_and_inside_the_public_output_box():
    rng = np.random.default_rng(1)
    X = rng.normal([20.0, 300.0], [5.0, 80.0], size=(5000, 2))
    scaler = PrivateStandardScaler(epsilon=2.0, bounds=([0.0, 0.0], [100.0, 900.0]), random_state=0).fit(X)
    Z = scaler.transform(X)
    assert np.all(np.abs(Z) <= 3.0) and scaler.output_bounds_ == (-3.0, 3.0)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, atol=0.05)


def test_scaler_refuses_to_guess_bounds_and_failed_fit_changes_nothing():
    with pytest.raises(ValueError, match="public bounds"):
        PrivateStandardScaler().fit(np.ones((3, 2)))
    scaler = PrivateStandardScaler(bounds=(0.0, 1.0), random_state=0).fit(np.full((4, 2), 0.5))
    before = scaler.mean_.copy()
    with pytest.raises(ValueError):
        scaler.fit(np.array([[0.5, np.nan]]))
    assert np.array_equal(scaler.mean_, before)
    with pytest.raises(ValueError, match="public bounds"):
        RiverScaler()


def test_a_private_pipeline_in_scikit_learn():
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(2)
    X = rng.normal([10.0, 100.0, 0.0], [2.0, 30.0, 1.0], size=(3000, 3))
    y = (X[:, 0] - 10 + (X[:, 1] - 100) / 15 + rng.standard_normal(3000) > 0).astype(int)
    pipeline = make_pipeline(PrivateStandardScaler(epsilon=0.5, bounds=([0, 0, -5], [50, 500, 5]), random_state=0),
                             OffPairStats(epsilon=0.5, bounds=(-3.0, 3.0), random_state=0))
    pipeline.fit(X[:2000], y[:2000])
    assert pipeline.score(X[2000:], y[2000:]) > 0.8


def test_river_scaler_passes_rivers_checks():
    for params in RiverScaler._unit_test_params():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # river's checks feed records whose keys change: features=None, and its one warning, is expected
            warnings.filterwarnings("ignore", message=".*features=None, so the first record's keys")
            # ... and records made only of keys the first record lacked (learned as all zeros, warned about once)
            warnings.filterwarnings("ignore", message=".*a record held none of the", category=UserWarning)
            checks.check_estimator(RiverScaler(**params))


def test_river_scaler_in_a_pipeline_with_the_private_classifier():
    from streams import PHISHING_FEATURES

    # The exact AUC of the progressive predictions (predict, then learn), mean of 3 seeds (one seed's spread
    # is ±0.1 here: 0.52–0.77 over seeds 0–4): at ε = 0.5 split in two the calibrated probabilities sit near
    # the prior, where river's 10-threshold ROCAUC reads ties (docs/algorithms.md §12.4b).
    aucs = []
    for seed in range(3):
        model = RiverScaler(bounds=(0.0, 1.0), epsilon=0.5, seed=seed, features=PHISHING_FEATURES) | \
            PrivatePairwiseClassifier(bounds=(-3.0, 3.0), epsilon=0.5, seed=seed, features=PHISHING_FEATURES)
        probabilities, labels = [], []
        for x, y in datasets.Phishing():
            probabilities.append(model.predict_proba_one(x)[True])
            labels.append(y)
            model.learn_one(x, y)
        aucs.append(roc_auc(np.array(labels), np.array(probabilities)))
        scaler = model["PrivateStandardScaler"]
        assert scaler.privacy_report()["epsilon_spent"] <= 0.5 and scaler.n_seen == 1250
    # Phishing is already on [0, 1]: the scaler only splits the budget here
    assert np.mean(aucs) > 0.6
    before = (scaler.n_seen, scaler.privacy_report())
    with pytest.raises(TypeError):
        scaler.learn_one({"age_of_domain": "old"})
    assert (scaler.n_seen, scaler.privacy_report()) == before
