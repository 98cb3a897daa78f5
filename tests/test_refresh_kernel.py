"""The model refresh in one compiled call (onpair.statistics._ranking_kernels.square_refresh, issue 22's speed
target): the square model and its ranking posterior of one release.

* against the separate compiled calls it fuses (the model's ``_auc_square_model``, the posterior's
  ``fast_ranking_discriminant`` of the decoded statistics with the model's ridge): the same bits;
* against its NumPy twin (tests/naive_statistics.py: decoding, solve, and the reference posterior
  ``ranking_discriminant``): equal to 1e-12 relative, on sampled releases and edge cases (no record yet, one
  class empty, huge noise, no moment block, a given ridge, indefinite scatters), and None exactly where the
  twin's A is not positive definite;
* the Cholesky pieces of ``_ranking_posterior`` (the inverse along the model, the positive-definite covariance
  model) against NumPy;
* OnPairStats and the river wrapper: the posterior and the model are the reference paths', bit for bit, and the
  calibration along the model and the probabilities are theirs to rounding, along streams of every mechanism, with
  and without a half-life, whatever was asked first.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive_statistics as naive
from onpair import OnPairStats
from onpair.statistics._kernels import _auc_square_model, statistics_rows
from onpair.statistics._ranking_kernels import (MAX_CHOLESKY_CONDITION, _cholesky_lower, _well_conditioned_inverse,
                                                fast_ranking_discriminant, square_model_of, square_refresh)
from onpair.statistics.discriminant import score_calibration
from onpair.statistics.model import class_statistics

FIELDS = ("coef", "intercept", "log_priors", "calibration", "agreement", "alpha", "ridge")
WEIGHTS = (0.8, 1.0, 0.6)


def release(rng, n, d, sd, weights=WEIGHTS, positive=0.4):
    """A release of n records of the unit ball (a fraction ``positive`` of class 1) with Gaussian noise of
    standard deviation ``sd`` per coordinate, as a mechanism of that variance releases it."""
    Z = naive.ball(rng, n, d)
    codes = (rng.random(n) < positive).astype(np.int64)
    total = statistics_rows(Z, codes, 2, weights).sum(axis=0) if n else np.zeros(2 * (1 + d + d * (d + 1) // 2))
    return total + sd * rng.standard_normal(total.size)


def separate(estimate, d, weights, variance, lam=None):
    """The separate compiled calls of the reference path: OnPairStats._square_model's kernel, and
    fast_ranking_discriminant of the decoded statistics with the model's ridge."""
    sd = math.sqrt(variance)
    a, _, m = weights
    out = np.empty(d)
    used = _auc_square_model(estimate, d, np.array(weights, float), max(1.0, 2.0 * sd / a), sd / m if m > 0 else 0.0,
                             0.0 if lam is None else lam, 1e-3 if lam is None else -1.0, 4.0, out)
    if used < 0.0:
        return None
    stats = class_statistics(estimate, 2, d, weights, variance)
    return out, fast_ranking_discriminant(stats, "square", used)


def fused(estimate, d, weights, variance, lam=None):
    return square_refresh(estimate, d, np.array(weights, float), variance, 0.0 if lam is None else lam,
                          1e-3 if lam is None else -1.0, 4.0)


def cases():
    """(estimate, d, weights, variance, lam): sampled releases and edge cases."""
    rng = np.random.default_rng(2201)
    out = []
    for trial in range(60):
        d = [1, 2, 4, 9, 15][trial % 5]
        n = [0, 3, 40, 300, 2000][trial % 7 % 5]
        sd = [0.0, 0.01, 0.3, 2.0, 30.0][trial % 11 % 5]
        weights = WEIGHTS if trial % 13 != 6 else (1.0, 1.0, 0.0)  # no moment block
        lam = None if trial % 4 else [0.0, 1e-3, 0.5][trial % 3]
        out.append((release(rng, n, d, sd, weights, positive=[0.4, 0.0, 1.0, 0.5][trial % 9 % 4]), d, weights,
                    sd * sd, lam))
    return out


def assert_posteriors(got, want, rtol, atol_scale):
    for field in FIELDS:
        a, b = np.asarray(getattr(got, field), float), np.asarray(getattr(want, field), float)
        scale = 1.0 + float(np.max(np.abs(b)))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol_scale * scale, err_msg=field)


def test_equals_the_separate_calls_bit_for_bit():
    seen = {True: 0, False: 0}
    for estimate, d, weights, variance, lam in cases():
        want = separate(estimate, d, weights, variance, lam)
        got = fused(estimate, d, weights, variance, lam)
        seen[want is None] += 1
        if want is None:
            assert got is None
            continue
        assert got is not None
        assert np.array_equal(got[0], want[0])
        for field in FIELDS:
            assert np.array_equal(np.asarray(getattr(got[1], field)), np.asarray(getattr(want[1], field))), field
        # the calibration along w: the reference's formula (NumPy's dot products) to rounding
        slope, offset = score_calibration(want[1], want[0])
        assert got[2][1] == offset
        assert abs(got[2][0] - slope) <= 1e-13 * abs(slope) + 1e-300
    assert seen[True] >= 3 and seen[False] >= 30  # both outcomes sampled


def test_equals_the_numpy_twin():
    deferred = 0
    for estimate, d, weights, variance, lam in cases():
        want = naive.square_refresh(estimate, d, weights, variance, lam)
        got = fused(estimate, d, weights, variance, lam)
        if want is None:
            # the twin's A is not positive definite: the kernel leaves it to the reference paths
            assert got is None
            deferred += 1
            continue
        if got is None:
            raise AssertionError(f"kernel deferred a positive-definite release (d={d}, variance={variance})")
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12 * (1.0 + np.max(np.abs(want[0]))))
        assert_posteriors(got[1], want[1], 1e-12, 1e-12)
        slope, offset = score_calibration(want[1], want[0])
        # a = (coef₊ − coef₋)ᵀw/‖w‖² and b = intercept₊ − intercept₋ difference the posterior's fields, which agree
        # to 1e-12 of their largest entry (above): a and b to that, carried through (where the twin's data-scaled
        # ridge leaves the system ill-conditioned, with fewer records than features, the differences are far
        # smaller than the fields)
        w = want[0]
        energy = float(w @ w)
        coef_error = 2e-12 * (1.0 + float(np.max(np.abs(want[1].coef))))
        slope_tol = 1e-12 * abs(slope) + (coef_error * float(np.sum(np.abs(w))) / energy if energy > 0.0 else 0.0)
        offset_tol = 2e-12 * (1.0 + float(np.max(np.abs(want[1].intercept))))
        assert abs(got[2][0] - slope) <= slope_tol, (got[2][0], slope)
        assert abs(got[2][1] - offset) <= offset_tol, (got[2][1], offset)
    assert deferred >= 3


def test_edge_releases():
    d = 3
    zero = np.zeros(2 * (1 + d + d * (d + 1) // 2))
    # before any record: counts at the floor, no separation; the model is 0 and the posterior the prior
    model, posterior, (slope, offset) = fused(zero, d, WEIGHTS, 0.0)
    assert np.all(model == 0.0)
    assert np.all(posterior.coef == 0.0) and posterior.intercept[0] == posterior.intercept[1]
    assert slope == 0.0 and offset == 0.0  # w = 0: the prior (here even)
    # no moment block and λ = 0: A = 0, not positive definite: deferred
    assert fused(zero, d, (1.0, 1.0, 0.0), 0.0, lam=0.0) is None
    # noise so large that the scatter is indefinite beyond the ridge: deferred, and the learner's reference
    # path then gives the posterior (tested below)
    rng = np.random.default_rng(5)
    noisy = release(rng, 20, d, 0.0) + 200.0 * rng.standard_normal(zero.size)
    assert (fused(noisy, d, WEIGHTS, 1e-6) is None) == (naive.square_refresh(noisy, d, WEIGHTS, 1e-6) is None)


# -- the Cholesky pieces of _ranking_posterior ----------------------------------------------------------
def test_cholesky_lower_against_numpy():
    rng = np.random.default_rng(8)
    for d in (1, 2, 5, 9):
        a = rng.normal(size=(d, d))
        A = a @ a.T + 0.1 * np.eye(d)
        L = np.zeros((d, d))
        assert _cholesky_lower(A, L)
        np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), rtol=1e-10, atol=1e-12)
        if d > 1:
            indefinite = A - 2.0 * np.linalg.eigvalsh(A).max() * np.outer(np.eye(d)[0], np.eye(d)[0])
            assert not _cholesky_lower(indefinite, np.zeros((d, d)))
    assert not _cholesky_lower(np.zeros((3, 3)), np.zeros((3, 3)))  # PSD but singular: no fast path


@pytest.mark.parametrize("d", [1, 2, 5, 9, 20])
def test_well_conditioned_inverse_against_numpy(d):
    rng = np.random.default_rng(100 + d)
    for trial in range(20):
        a = rng.normal(size=(d, d)) * 0.3
        S = 0.5 * (a + a.T) if trial % 3 == 0 else a @ a.T  # indefinite or PSD
        shift = [1e-3, 0.1, 2.0, 0.0][trial % 4]
        M = S + shift * np.eye(d)
        out = np.empty((d, d))
        values = np.linalg.eigvalsh(M)
        condition = np.linalg.norm(M) * (np.linalg.norm(np.linalg.inv(M)) if values.min() > 0 else np.inf)
        ok = _well_conditioned_inverse(S, shift, out)
        if ok:
            assert values.min() > 0.0 and condition <= MAX_CHOLESKY_CONDITION * (1 + 1e-9)
            assert np.array_equal(out, out.T)
            np.testing.assert_allclose(out, np.linalg.inv(M), rtol=1e-10 * max(condition, 1.0),
                                       atol=1e-13 * condition * np.abs(np.linalg.inv(M)).max())
        else:
            assert values.min() <= 1e-12 * np.abs(values).max() or condition > MAX_CHOLESKY_CONDITION * (1 - 1e-9)
    # positive definite but beyond the condition bound: the eigendecomposition's path
    big = np.diag([1.0] + [1e-8] * (d - 1)) if d > 1 else np.diag([1.0])
    assert _well_conditioned_inverse(big, 0.0, np.empty((d, d))) == (d == 1)


@settings(derandomize=True, deadline=None, database=None, max_examples=80)
@given(d=st.integers(1, 6), entries=st.lists(st.floats(-3.0, 3.0), min_size=36, max_size=36),
       shift=st.sampled_from([0.0, 1e-9, 1e-3, 0.5]), spd=st.booleans())
def test_cholesky_pieces_property(d, entries, shift, spd):
    """Any symmetric matrix (indefinite, singular or positive definite): the fast paths are taken only where the
    reference's eigenvalue tests pass, and then agree with it (the inverse to the condition number's rounding)."""
    a = np.array(entries[:d * d]).reshape(d, d)
    S = a @ a.T if spd else 0.5 * (a + a.T)
    M = S + shift * np.eye(d)
    values = np.linalg.eigvalsh(M)
    size = max(np.abs(values).max(), 1e-300)
    if _cholesky_lower(M, np.zeros((d, d))):
        # a PSD projection of M changes it by rounding only: its negative eigenvalues are rounding-sized
        assert values.min() >= -1e-12 * size
    out = np.empty((d, d))
    if _well_conditioned_inverse(S, shift, out):
        assert values.min() > 0.0
        inverse = np.linalg.inv(M)
        condition = np.linalg.norm(M) * np.linalg.norm(inverse)
        assert condition <= MAX_CHOLESKY_CONDITION * (1 + 1e-6)
        np.testing.assert_allclose(out, inverse, rtol=0, atol=1e-13 * condition * np.abs(inverse).max())


# -- the learner and the wrapper -----------------------------------------------------------------------
def reference_posterior(learner):
    """The posterior by the path before the fused call: the decoded statistics, the learner's ridge."""
    return fast_ranking_discriminant(learner._stats.class_statistics(), "square", learner.ridge())


@pytest.mark.parametrize("kwargs", [{}, {"mechanism": "tree"}, {"mechanism": "toeplitz"}, {"mechanism": "epochs"},
                                    {"half_life": 30}, {"private": False}, {"lam": 0.2}, {"epsilon": 0.05}])
def test_learner_posterior_and_model_are_the_reference_paths(kwargs):
    rng = np.random.default_rng(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = OnPairStats(bounds=(0.0, 1.0), seed=3, **kwargs)
    d = 4
    for t in range(150):
        x = rng.uniform(size=d)
        learner.learn_one(x, 1 if x[0] + 0.3 * rng.normal() > 0.5 else -1)
        if t % 7:
            continue
        learner._current = None  # the one cache of the release's post-processing
        posterior = learner.posterior()  # the fused call fills the model, the posterior and (a, b) (or the references do)
        model = learner.model
        released = learner.released_model()
        scored = (released.model, *released.calibration)  # the river wrapper's refresh: the same model and its (a, b)
        assert np.array_equal(scored[0], model)
        slope, offset = score_calibration(posterior, model)
        assert scored[2] == offset and abs(scored[1] - slope) <= 1e-13 * abs(slope) + 1e-300
        learner._current = None
        again = learner.released_model()  # (a, b) asked first gives the same bits
        calibration = again.calibration
        assert np.array_equal(again.model, model) and calibration == tuple(scored[1:])
        learner._current = None
        stats = learner._stats
        want_model = square_model_of(stats.estimate(), stats.dim, stats.weight_array, stats.noise_variance(),
                                     learner._lam)  # the model's kernel alone
        if want_model is None:  # the projection's path
            want_model = learner.model
        assert np.array_equal(model, want_model)
        want = reference_posterior(learner)
        for field in FIELDS:
            assert np.array_equal(np.asarray(getattr(posterior, field)), np.asarray(getattr(want, field))), field


def test_wrapper_probabilities_follow_the_reference_posterior():
    from onpair.core.predictor import logistic as _logistic
    from onpair.river import PrivatePairwiseClassifier

    rng = np.random.default_rng(12)
    checked = 0
    model = PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), features=["a", "b", "c"], seed=4)
    for t in range(200):
        x = dict(zip("abc", rng.uniform(size=3).tolist()))
        got = model.predict_proba_one(x)[True]
        # the model the wrapper reads (its refresh schedule), recomputed by the reference path
        refresh = model._inner._refresh
        inner, start = model._inner, refresh.start if refresh is not None else None
        if start == inner.refresh_count:  # the release read now is the current one
            w = inner.model
            slope, intercept = score_calibration(reference_posterior(inner), w)
            z = inner.feature_bounds.map_one(np.array([x[k] for k in "abc"]))
            want = _logistic(slope * float(z.dot(w)) + intercept)
            assert abs(got - want) <= 1e-13 * want
            checked += 1
        model.learn_one(x, bool(x["a"] > 0.5))
    assert checked >= 40


@pytest.mark.parametrize("d", [1, 2, 9, 16, 21])
def test_box_probability_is_the_python_path_bit_for_bit(d):
    """The compiled scorer of a released model (onpair.core.bounds._box_probability: box map, BLAS dot, logistic in
    one call) against the Python path it replaces (FeatureBounds.map_one, ndarray.dot, predictor.logistic): the
    same bits, for records inside the box, clipped to it, and scores of both signs and large magnitude; NaN for a
    record holding NaN or ±inf."""
    from onpair.core.bounds import FeatureBounds, _box_probability
    from onpair.core.predictor import logistic

    rng = np.random.default_rng(33 + d)
    lower = rng.uniform(-2.0, 0.0, d)
    bounds = FeatureBounds(lower=lower, upper=lower + rng.uniform(0.1, 3.0, d))
    pack = np.empty((5, d))
    pack[:3] = bounds.box_rows(d)
    for trial in range(400):
        model = rng.standard_normal(d) * rng.uniform(0.01, 50.0)
        slope, intercept = float(rng.uniform(0.1, 40.0)), float(rng.normal(0.0, 3.0))
        x = rng.uniform(-4.0, 4.0, d) if trial % 2 else rng.uniform(bounds.lower, bounds.upper, d)
        expected = logistic(slope * float(bounds.map_one(x).dot(model)) + intercept)
        pack[3] = model
        got = _box_probability(x, pack, slope, intercept)
        assert got == expected, (trial, got, expected)
    bad = np.full(d, 0.5)
    bad[d // 2] = np.nan
    assert math.isnan(_box_probability(bad, pack, 1.0, 0.0))
    bad[d // 2] = -np.inf
    assert math.isnan(_box_probability(bad, pack, 1.0, 0.0))


def test_released_model_scorer_is_the_python_path():
    """ReleasedModel.positive_probability (the compiled scorer once bound) equals the Python path's bits along a
    stream, for records in and outside the box; a record with NaN still takes the general path (what it gives)."""
    from onpair.core.predictor import logistic

    rng = np.random.default_rng(7)
    learner = OnPairStats(epsilon=1.0, bounds=(0.0, 1.0), n_features=5, seed=3)
    for i in range(60):
        learner.learn_one(rng.uniform(0.0, 1.0, 5), 1 if rng.uniform() < 0.4 else -1)
        view = learner.predictor(4)
        for x in (rng.uniform(0.0, 1.0, 5), rng.uniform(-1.0, 2.0, 5)):
            slope, intercept = view.calibration
            expected = logistic(slope * float(view.bounds.map_one(x).dot(view.model)) + intercept)
            assert view.positive_probability(x) == expected
    bad = np.array([0.5, np.nan, 0.5, 0.5, 0.5])
    slope, intercept = view.calibration
    expected = logistic(slope * float(view.bounds.map_one(bad).dot(view.model)) + intercept)
    got = view.positive_probability(bad)
    assert got == expected or (math.isnan(got) and math.isnan(expected))
