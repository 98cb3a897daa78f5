"""Every compiled kernel against its slow NumPy twin in tests/naive.py (agreement to 1e-10)."""

import numpy as np
import pytest

import naive
from onpair.giga import _kernels
from onpair.core.losses import LOSSES


def _stream(seed, n=120, d=5, positive_rate=0.4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d)) * (2.0 / np.sqrt(d))  # diameter ≤ 2
    signs = np.where(rng.random(n) < positive_rate, 1, -1).astype(np.int8)
    steps = rng.uniform(0.0, 0.8, size=n)
    steps[0] = 0.0
    return rng, X, signs, steps


def _run_history_kernel(X, signs, steps, lam, center, radius, loss, w_start, release_rounds, sigmas, noise,
                        block_sizes=None):
    n, d = X.shape
    w = np.array(w_start, dtype=float)
    pos, neg = np.zeros((n, d)), np.zeros((n, d))
    n_pos = n_neg = 0
    released = np.zeros((len(release_rounds), d))
    slots_all = np.full(n, -1, dtype=np.int64)
    for k, r in enumerate(release_rounds):
        slots_all[r - 1] = k
    block_sizes = block_sizes or [n]
    iterate_sum = np.zeros(d)
    start = 0
    iterates = []
    for size in block_sizes:
        stop = start + size
        n_pos, n_neg = _kernels._giga_full_history(
            X[start:stop], signs[start:stop], w, pos, n_pos, neg, n_neg, start, steps[start:stop], lam,
            center, radius, LOSSES[loss].code, slots_all[start:stop], np.asarray(sigmas, dtype=float),
            noise, released, iterate_sum)
        iterates.append(w.copy())
        start = stop
    return w, released, n_pos, n_neg, iterate_sum


@pytest.mark.parametrize("loss", ["logistic", "hinge", "square"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_history_kernel_matches_naive(loss, seed):
    rng, X, signs, steps = _stream(seed)
    d = X.shape[1]
    center = rng.uniform(-0.2, 0.2, d)
    w_start = rng.uniform(-0.3, 0.3, d)
    radius = 0.7 if seed else 50.0  # seed 0: projection inactive; others: it binds
    releases = [1, 7, 60, 120]
    sigmas = rng.uniform(0.0, 0.5, len(releases))
    noise = rng.standard_normal((len(releases), d))
    iterates, expected_released = naive.giga(X, signs, steps, 0.3, center, radius, loss, w_start, releases,
                                             sigmas, noise)
    w, released, n_pos, n_neg, iterate_sum = _run_history_kernel(X, signs, steps, 0.3, center, radius, loss,
                                                                 w_start, releases, sigmas, noise)
    np.testing.assert_allclose(w, iterates[-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(iterate_sum, iterates.sum(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(released, expected_released, rtol=0, atol=1e-10)
    assert (n_pos, n_neg) == (int((signs > 0).sum()), int((signs < 0).sum()))


@pytest.mark.parametrize("loss", ["logistic", "square"])
def test_blocks_equal_single_records(loss):
    """The streaming contract: any cut of the stream into blocks gives the identical state."""
    rng, X, signs, steps = _stream(3, n=90)
    d = X.shape[1]
    args = (X, signs, steps, 0.5, np.zeros(d), 0.4, loss, np.zeros(d), [10, 45, 90], [0.1, 0.2, 0.3],
            rng.standard_normal((3, d)))
    w_one, rel_one, _, _, sum_one = _run_history_kernel(*args, block_sizes=[90])
    w_single, rel_single, _, _, sum_single = _run_history_kernel(*args, block_sizes=[1] * 90)
    w_mixed, rel_mixed, _, _, sum_mixed = _run_history_kernel(*args, block_sizes=[7, 1, 30, 2, 50])
    assert np.array_equal(sum_one, sum_single) and np.array_equal(sum_one, sum_mixed)
    assert np.array_equal(w_one, w_single) and np.array_equal(w_one, w_mixed)
    assert np.array_equal(rel_one, rel_single) and np.array_equal(rel_one, rel_mixed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_square_statistics_kernel_matches_naive(seed):
    rng, X, signs, steps = _stream(seed, n=100, d=4)
    d = X.shape[1]
    center = rng.uniform(-0.2, 0.2, d)
    w_start = rng.uniform(-0.3, 0.3, d)
    radius = 0.6 if seed else 50.0
    releases = [2, 50, 100]
    sigmas = rng.uniform(0.0, 0.5, len(releases))
    noise = rng.standard_normal((len(releases), d))
    iterates, expected_released = naive.giga(X, signs, steps, 0.2, center, radius, "square", w_start, releases,
                                             sigmas, noise)
    w = w_start.copy()
    counts, sums, moments = np.zeros(2), np.zeros((2, d)), np.zeros((2, d, d))
    slots = np.full(X.shape[0], -1, dtype=np.int64)
    slots[np.array(releases) - 1] = np.arange(len(releases))
    released = np.zeros((len(releases), d))
    iterate_sum = np.zeros(d)
    # In two blocks, to exercise the block contract of this kernel too.
    for lo, hi in [(0, 37), (37, 100)]:
        _kernels._giga_square_statistics(X[lo:hi], signs[lo:hi], w, counts, sums, moments, lo, steps[lo:hi], 0.2,
                                         center, radius, slots[lo:hi], sigmas, noise, released, iterate_sum)
    np.testing.assert_allclose(w, iterates[-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(iterate_sum, iterates.sum(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(released, expected_released, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sums[1], X[signs > 0].sum(0), atol=1e-12)
    np.testing.assert_allclose(moments[0], X[signs < 0].T @ X[signs < 0], atol=1e-12)


def test_single_class_stream_only_regularises():
    """Without an opposite-label record there is no pair: only the regulariser moves w."""
    rng, X, _, steps = _stream(4, n=30)
    d = X.shape[1]
    signs = np.ones(30, dtype=np.int8)
    center = np.full(d, 0.1)
    w_start = np.zeros(d)
    iterates, _ = naive.giga(X, signs, steps, 0.5, center, 10.0, "logistic", w_start)
    w, *_ = _run_history_kernel(X, signs, steps, 0.5, center, 10.0, "logistic", w_start, [], [], np.zeros((0, d)))
    np.testing.assert_allclose(w, iterates[-1], atol=1e-12)
    expected = w_start.copy()
    for eta in steps[1:]:
        expected = expected - eta * 0.5 * (expected - center)
    np.testing.assert_allclose(w, expected, atol=1e-12)
