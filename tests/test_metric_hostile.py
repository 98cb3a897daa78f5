"""Hostile input for the metric task (the contract of tests/test_hostile.py, for ``task="metric"``).

Every call either succeeds with a finite, exactly symmetric model inside its constraint set, or raises
``ValueError``/``TypeError`` naming what is wrong and changes nothing: no state, no class, no budget.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onpair import GradientPerturbedGD, OffPairC, OnPairStrC, PairwiseGIGA
from onpair.core.matrix_geometry import project_matrix

HOSTILE = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
D = 3

FEATURES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, 1.0, -1e308, 1e308, 5e-324, math.nan, math.inf, -math.inf]),
    st.text(max_size=3), st.none(), st.booleans(), st.complex_numbers(max_magnitude=2),
)
LABELS = st.one_of(
    st.integers(-10**20, 10**20), st.text(max_size=4), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True), st.none(), st.lists(st.integers(), max_size=2),
    st.sampled_from([np.int8(3), np.float64(2.0), np.str_("a"), 1.5, (), b"x"]),
)


def _primed(constraint="frobenius"):
    rng = np.random.default_rng(0)
    learner = OnPairStrC(task="metric", bounds=(0, 1), n=100, epsilon=1.0, seed=0, constraint=constraint)
    learner.learn_many(rng.uniform(0, 1, size=(70, D)), rng.choice(["a", "b", "c"], size=70))
    return learner


def _state(learner):
    return (learner._iterate.w.copy(), learner._history.n_rows, dict(learner._history.class_codes), learner.n_seen,
            learner.privacy_report()["rho_spent"], learner.model.copy())


def _assert_valid_model(learner):
    W = learner.model
    assert np.all(np.isfinite(W)) and np.array_equal(W, W.T)
    constraint = learner.constraint or "frobenius"
    np.testing.assert_allclose(project_matrix(W, learner._radius, constraint), W, atol=1e-12)


@HOSTILE
@given(record=st.lists(FEATURES, min_size=D, max_size=D), label=LABELS)
def test_learn_one_either_learns_or_changes_nothing(record, label):
    learner = _primed()
    before = _state(learner)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # clipping warnings are allowed
            learner.learn_one(record, label)
    except (ValueError, TypeError) as exc:
        assert any(word in str(exc) for word in ("x", "y", "label", "feature", "record")), str(exc)
        after = _state(learner)
        assert all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(before, after))
        return
    assert learner.n_seen == before[3] + 1
    _assert_valid_model(learner)


@HOSTILE
@given(labels=st.lists(LABELS, min_size=4, max_size=4), scale=st.sampled_from([1.0, 1e300, -1e300, 1e-300]))
def test_learn_many_with_hostile_labels_and_extreme_values(labels, scale):
    learner = _primed("psd")
    before = _state(learner)
    X = np.full((4, D), 0.5) * scale
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner.learn_many(X, labels)
    except (ValueError, TypeError) as exc:
        assert "y" in str(exc) or "label" in str(exc), str(exc)
        after = _state(learner)
        assert all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(before, after))
        return
    _assert_valid_model(learner)


@pytest.mark.parametrize("estimator", [
    lambda: OffPairC(task="metric", bounds=(0, 1), random_state=0),
    lambda: GradientPerturbedGD(task="metric", bounds=(0, 1), random_state=0, constraint="nuclear"),
])
@pytest.mark.parametrize("y, message", [
    ([1.5, 2.0, 1.0, 2.0], "continuous"),
    ([np.nan, 1.0, 2.0, 1.0], "NaN"),
    (np.array([[1], [2], [1], [2]]), None),  # a column vector: flattened with a warning, as scikit-learn does
    (["a", 1, "b", 2], "mixes"),
])
def test_offline_metric_labels(estimator, y, message):
    X = np.random.default_rng(0).uniform(0, 1, size=(4, D))
    est = estimator()
    if message is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        assert est.coef_.shape == (D, D)
        return
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_a_failed_refit_keeps_the_released_metric():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 1, size=(30, D)), rng.integers(0, 3, size=30)
    est = OffPairC(task="metric", bounds=(0, 1), random_state=0).fit(X, y)
    W = est.coef_.copy()
    with pytest.raises(ValueError):
        est.fit(np.full((30, D), np.nan), y)
    np.testing.assert_array_equal(est.coef_, W)


@pytest.mark.parametrize("d", [1, 2])
def test_tiny_dimensions_and_extreme_radii(d):
    rng = np.random.default_rng(d)
    for radius in (1e-8, 1e8):
        for constraint in ("frobenius", "psd", "nuclear", "psd_nuclear"):
            learner = PairwiseGIGA(norm_bound=1.0, task="metric", n_features=d, radius=radius, constraint=constraint)
            learner.learn_many(rng.uniform(-1, 1, size=(20, d)) / (2 * d), rng.integers(0, 2, size=20))
            _assert_valid_model(learner)
