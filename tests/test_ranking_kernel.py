"""The compiled ranking posterior (onpair.statistics._ranking_kernels) against its NumPy reference,
onpair.statistics.discriminant.ranking_discriminant (which stays the definition): the same posterior to rounding
on sampled and adversarial releases (noisy indefinite covariances, a pooled release, no moment block, equal means,
a singular covariance model, both kinds), and the reference's own errors where the kernel defers to it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from onpair.statistics._ranking_kernels import fast_ranking_discriminant
from onpair.statistics.discriminant import ranking_discriminant
from onpair.statistics.model import ClassStatistics

FIELDS = ("coef", "intercept", "log_priors", "calibration", "agreement", "alpha", "ridge")


def release(rng, d, noise, *, pooled=False, moment_sd=None, equal_means=False, counts=None):
    counts = rng.uniform(1.0, 200.0, 2) if counts is None else np.asarray(counts, float)
    means = rng.normal(size=(2, d)) * 0.3
    if equal_means:
        means[1] = means[0]
    covs = []
    for _ in range(2):
        a = rng.normal(size=(d, d)) * 0.2
        e = rng.normal(size=(d, d)) * noise
        covs.append(a @ a.T + 0.5 * (e + e.T))  # noisy: possibly indefinite
    if pooled:
        covs[1] = covs[0]
    sd = noise if moment_sd is None else moment_sd
    return ClassStatistics(counts, means, np.array(covs), 0.5 * noise * 10, noise * 3, sd, 1.0, pooled)


def check_same(stats, kind, lam):
    want = ranking_discriminant(stats, kind, lam)
    got = fast_ranking_discriminant(stats, kind, lam)
    for field in FIELDS:
        a, b = np.asarray(getattr(got, field), float), np.asarray(getattr(want, field), float)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * (1.0 + float(np.max(np.abs(b)))), err_msg=field)


@pytest.mark.parametrize("kind", ["square", "centroid"])
@pytest.mark.parametrize("d", [1, 2, 9, 20])
def test_matches_reference_on_sampled_releases(kind, d):
    rng = np.random.default_rng(1000 + d)
    for trial in range(25):
        noise = [0.0, 1e-3, 0.05, 0.5, 5.0][trial % 5]
        stats = release(rng, d, noise, pooled=trial % 7 == 3,
                        moment_sd=math.inf if trial % 11 == 4 else None, equal_means=trial % 9 == 2)
        lam = [0.0, 1e-3, 0.1, 2.0][trial % 4] if kind == "square" else 0.05
        check_same(stats, kind, lam)


def test_adversarial_releases():
    rng = np.random.default_rng(7)
    # unbalanced counts at the floor; huge noise on the counts; a zero covariance (λ = 0: a pseudo-inverse)
    check_same(release(rng, 5, 0.1, counts=[1.0, 5000.0]), "square", 0.01)
    zero = ClassStatistics(np.array([10.0, 12.0]), rng.normal(size=(2, 4)), np.zeros((2, 4, 4)), 0.0, 0.0, 0.0, 1.0)
    check_same(zero, "square", 0.0)
    check_same(zero, "centroid", 0.0)
    identical = ClassStatistics(np.array([10.0, 10.0]), np.zeros((2, 3)), np.zeros((2, 3, 3)), 0.0, 0.0, 0.0, 1.0)
    check_same(identical, "square", 0.5)


def test_defers_to_the_reference_for_its_errors():
    rng = np.random.default_rng(3)
    stats = release(rng, 3, 0.1)
    with pytest.raises(ValueError) as want:
        ranking_discriminant(stats, "whitening", 0.1)
    with pytest.raises(ValueError) as got:
        fast_ranking_discriminant(stats, "whitening", 0.1)
    assert str(got.value) == str(want.value)
