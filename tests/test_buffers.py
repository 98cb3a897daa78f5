"""Finite-buffer variants: kernel = NumPy twin with the same slots, reservoir uniformity, ledger with
κ_t = 1/|B_t| bounding real neighbouring runs, and memory that does not grow with the stream."""

import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats

import naive
from onpair import OnPairC, OnPairStrC, PairwiseGIGA
from onpair.core.bounds import FeatureBounds
from onpair.core.losses import get_loss
from onpair.privacy.ledger import sensitivity_ledger
from tiers import by_tier


def _data(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5, 1, -1)
    return X, y


@pytest.mark.parametrize("kind", ["reservoir", "fifo"])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "square"])
def test_buffered_kernel_matches_the_numpy_twin(kind, loss):
    X, y = _data(0)
    learner = PairwiseGIGA(loss=loss, lam=0.5, radius=0.3, bounds=(0, 1), buffer=(kind, 16), seed=4)
    # The slots the learner will use: the same public draws, taken from a twin with the same seed.
    twin = PairwiseGIGA(loss=loss, lam=0.5, radius=0.3, bounds=(0, 1), buffer=(kind, 16), seed=4)
    slots = twin._slots.block(0, len(y), twin._buffer_rng, 0)
    learner.learn_many(X, y)
    Z, _ = FeatureBounds(0, 1).transform(X)
    steps = learner._step_rule.block(0, len(y))
    iterates = naive.giga_buffered(Z, y, steps, 0.5, np.zeros(3), 0.3, loss, np.zeros(3), slots, 16)
    np.testing.assert_allclose(learner.model, iterates[-1], atol=1e-10)
    np.testing.assert_allclose(learner._iterate.iterate_sum, iterates.sum(axis=0), atol=1e-9)


def test_fifo_keeps_the_last_s_records_and_reservoir_at_most_one_slot_each():
    X, y = _data(1, n=100)
    fifo = PairwiseGIGA(bounds=(0, 1), buffer=("fifo", 10)).learn_many(X, y)
    Z, _ = FeatureBounds(0, 1).transform(X)
    assert {tuple(r) for r in fifo._history.buffer} == {tuple(r) for r in Z[-10:]}
    reservoir = PairwiseGIGA(bounds=(0, 1), buffer=("reservoir", 10), seed=0).learn_many(X, y)
    rows = [tuple(r) for r in reservoir._history.buffer]
    assert len(set(rows)) == 10 and set(rows) <= {tuple(r) for r in Z}


def test_reservoir_is_a_uniform_sample_of_the_past():
    """After N records each record is kept with probability s/N: chi-square over 2,000 seeds (500 in the fast
    tier), α = 0.001."""
    size, length, runs = 5, 40, by_tier(fast=500, full=2000)
    counts = np.zeros(length)
    for seed in range(runs):
        learner = PairwiseGIGA(norm_bound=1.0, n_features=1, buffer=("reservoir", size), seed=seed)
        kept = {}
        slots = learner._slots.block(0, length, learner._buffer_rng, 0)
        for t, slot in enumerate(slots):
            if slot >= 0:
                kept[slot] = t
        for t in kept.values():
            counts[t] += 1
    expected = np.full(length, runs * size / length)
    assert counts.sum() == runs * size
    assert stats.chisquare(counts, expected).pvalue > 0.001


def test_blocks_equal_single_records_with_a_buffer():
    X, y = _data(2)
    make = lambda: OnPairStrC(bounds=(0, 1), buffer=("reservoir", 12), release_every=30, seed=9)  # noqa: E731
    one = make()
    for xi, yi in zip(X, y):
        one.learn_one(xi, yi)
    many = make().learn_many(X, y)
    assert np.array_equal(one.model, many.model) and one.privacy_report() == many.privacy_report()


@pytest.mark.parametrize("kind", ["reservoir", "fifo"])
def test_ledger_with_kappa_one_over_buffer_bounds_real_neighbouring_runs(kind):
    rng = np.random.default_rng(5)
    n, d, size, lam, radius = 200, 3, 8, 1.0, 1.0
    loss = get_loss("logistic")
    for trial in range(8):
        X = rng.standard_normal((n, d))
        # Inside the unit ball with a hair to spare: a row divided by its norm can round to a norm just
        # above 1, which the learner would clip (and warn about).
        inside = 1.0 - 1e-12
        X *= inside / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        y = np.where(rng.random(n) < 0.5, 1, -1)
        j = int(rng.integers(0, n))
        X2, y2 = X.copy(), y.copy()
        X2[j] = -X[j] * (inside / max(np.linalg.norm(X[j]), 1e-12))
        y2[j] = -y[j]
        a = PairwiseGIGA(lam=lam, radius=radius, norm_bound=1.0, buffer=(kind, size), seed=trial)
        b = PairwiseGIGA(lam=lam, radius=radius, norm_bound=1.0, buffer=(kind, size), seed=trial)
        dist = []
        for i in range(n):
            a.learn_one(X[i], y[i])
            b.learn_one(X2[i], y2[i])
            dist.append(np.linalg.norm(a.model - b.model))
        steps = a._step_rule.block(0, n)
        U = sensitivity_ledger(steps, loss.lipschitz(radius), loss.smoothness() + lam, lam, 2 * radius,
                               buffer_size=size, pair_change=loss.pair_change(radius))
        assert np.all(np.array(dist) <= U * (1 + 1e-9) + 1e-12)


def test_buffered_sensitivity_levels_off_near_gamma_over_lambda_s():
    """With a buffer the ledger stops decaying like 1/t: it settles near Γ/(λs) (the docs say so)."""
    X, y = _data(3, n=3000)
    learner = OnPairStrC(bounds=(0, 1), buffer=("fifo", 32), release_every=1000, seed=0).learn_many(X, y)
    gamma = get_loss("logistic").pair_change(0.1)
    level = gamma / (learner._lam * 32)
    sensitivities = [r["sensitivity"] for r in learner.privacy_report()["releases"]]
    assert all(abs(s / level - 1) < 0.05 for s in sensitivities[1:])
    full = OnPairStrC(bounds=(0, 1), release_every=1000, seed=0).learn_many(X, y)
    assert full.privacy_report()["releases"][-1]["sensitivity"] < sensitivities[-1]


@pytest.mark.slow  # a million records
def test_memory_is_flat_over_a_million_records():
    """O(s·d) state: the peak traced memory of learning 10⁶ records in blocks does not grow with n."""
    rng = np.random.default_rng(0)
    learner = OnPairStrC(n_features=20, norm_bound=1.0, buffer=("reservoir", 256), release_every=200_000,
                         seed=0)
    block = 10_000
    X = rng.uniform(-1, 1, size=(block, 20)) / math.sqrt(20)
    y = np.where(X[:, 0] > 0, 1, -1)
    learner.learn_many(X, y)  # compile and allocate the buffer first
    peaks = []
    for chunk in range(2):
        tracemalloc.start()
        for _ in range(50):  # 2 × 500,000 records
            learner.learn_many(X, y)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert learner.n_seen == 1_010_000
    assert peaks[1] <= peaks[0] * 1.5 + 100_000  # no growth between the two halves
    assert peaks[1] < 20 * block * 20 * 8  # a few copies of one block at most, not the stream
    assert learner._history.buffer.shape == (256, 20)


def test_bad_buffers_are_rejected():
    for bad in [("lifo", 4), ("fifo", 0), ("fifo", 2.5), "fifo", ("fifo",)]:
        with pytest.raises(ValueError, match="buffer"):
            OnPairStrC(norm_bound=1.0, buffer=bad)
    with pytest.raises(ValueError, match="paper"):
        OnPairC(norm_bound=1.0, n=100, mode="paper", buffer=("fifo", 8))
