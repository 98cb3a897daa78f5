"""The sensitivity ledger: its recursion, Lemma 4 where Lemma 4 applies, the diameter cap, and a direct
check that it bounds the distance between real runs of the kernel on neighbouring streams."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from onpair import OnPairStrC
from onpair.giga import _kernels
from onpair.core.losses import get_loss
from onpair.privacy.ledger import ledger_block, sensitivity_ledger


@given(seed=st.integers(0, 2**32 - 1), buffer=st.sampled_from([None, 1, 5, 40]))
@settings(max_examples=40)
def test_compiled_ledger_matches_naive_and_is_capped(seed, buffer):
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0, 2.0, size=80)
    G, L, alpha, diameter = rng.uniform(0.5, 5), rng.uniform(1, 10), rng.uniform(0, 2), rng.uniform(0.1, 4)
    U = sensitivity_ledger(steps, G, L, alpha, diameter, buffer_size=buffer)
    np.testing.assert_allclose(U, naive.ledger(steps, G, L, alpha, diameter, buffer), rtol=0, atol=1e-13)
    assert np.all(U <= diameter) and np.all(U >= 0)


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=25)
def test_recursion_equals_the_worst_differing_position(seed):
    """The O(1)-per-round recursion is exactly the max over j of the per-position coupling bound."""
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0, 1.0, size=50)
    G, L, alpha, diameter = rng.uniform(0.5, 5), rng.uniform(1, 10), rng.uniform(0.01, 2), rng.uniform(0.5, 8)
    np.testing.assert_allclose(sensitivity_ledger(steps, G, L, alpha, diameter),
                               naive.ledger_worst_position(steps, G, L, alpha, diameter), rtol=1e-12, atol=1e-15)


@given(alpha=st.floats(0.5, 4.0), smooth=st.floats(1.0, 8.0), lipschitz=st.floats(0.5, 6.0))
@settings(max_examples=30)
def test_reproduces_lemma4_under_its_conditions(alpha, smooth, lipschitz):
    """Huai Lemma 4: with T₁ = max(16L²/α², 7) random rounds and η_t = 2(t−1)/((t−2)αt) after it,
    U_t ≤ 8G/(αt) for every t > T₁."""
    L = smooth + alpha
    T1 = max(math.ceil(16 * L**2 / alpha**2), 7)
    t = np.arange(1, T1 + 1500, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.where(t > T1, 2 * (t - 1) / ((t - 2) * alpha * t), 0.0)
    U = sensitivity_ledger(steps, lipschitz, L, alpha, diameter=1e9)
    after = t > T1
    assert np.all(U[after] <= 8 * lipschitz / (alpha * t[after]) * (1 + 1e-12))


@given(alpha=st.floats(0.05, 4.0), smooth=st.floats(0.5, 8.0), lipschitz=st.floats(0.5, 6.0))
@settings(max_examples=30)
def test_sharper_4G_over_alpha_t_once_the_map_contracts(alpha, smooth, lipschitz):
    """docs/algorithms.md#ledger-closed-form: from t₀ ≥ (L+α)/α with η_t = 2/(αt), U_t ≤ 4G/(αt)."""
    L = smooth + alpha
    t0 = math.ceil((L + alpha) / alpha)
    t = np.arange(1, t0 + 800, dtype=float)
    steps = np.where(t >= t0, 2 / (alpha * t), 0.0)
    U = sensitivity_ledger(steps, lipschitz, L, alpha, diameter=1e9)
    assert np.all(U <= 4 * lipschitz / (alpha * t) * (1 + 1e-12))


def test_blocks_continue_the_same_ledger():
    steps = np.linspace(0.5, 0.01, 300)
    whole = ledger_block(0.0, 0, steps, 4.0, 5.0, 1.0, 0.2, 0)
    first = ledger_block(0.0, 0, steps[:101], 4.0, 5.0, 1.0, 0.2, 0)
    second = ledger_block(first[-1], 101, steps[101:], 4.0, 5.0, 1.0, 0.2, 0)
    assert np.array_equal(whole, np.concatenate([first, second]))


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="step_sizes"):
        sensitivity_ledger([0.1, -1.0], 1, 1, 1, 1)
    with pytest.raises(ValueError, match="diameter"):
        sensitivity_ledger([0.1], 1, 1, 1, -1)
    with pytest.raises(ValueError, match="buffer_size"):
        sensitivity_ledger([0.1], 1, 1, 1, 1, buffer_size=0)


def _run_iterates(learner, X, signs):
    """Internal iterates of a learner's kernel after every round (the test may look inside)."""
    d = X.shape[1]
    steps = learner._step_rule.block(0, X.shape[0])
    w = np.zeros(d)  # the learner's start: its centre, the origin (AUC)
    pos, neg = np.zeros(X.shape), np.zeros(X.shape)
    n_pos = n_neg = 0
    out = np.zeros(X.shape)
    none = np.full(1, -1, dtype=np.int64)
    for i in range(X.shape[0]):
        n_pos, n_neg = _kernels._giga_full_history(
            X[i:i + 1], signs[i:i + 1], w, pos, n_pos, neg, n_neg, i, steps[i:i + 1], learner._lam,
            np.zeros(d), learner._radius, learner._objective.loss.code, none, np.zeros(0), np.zeros((0, d)), np.zeros((0, d)),
            np.zeros(d))
        out[i] = w
    return out, steps


@pytest.mark.parametrize("radius,lam", [(0.1, 1.0), (1.0, 1.0), (1.0, 0.1), (5.0, 4.0), (0.1, 23.9)])
def test_ledger_bounds_real_neighbouring_runs(radius, lam):
    """Replace one record by an adversarial one (label flipped, features pushed to the other end of the
    domain): the distance between the two runs' iterates never exceeds the ledger, at any round."""
    rng = np.random.default_rng(int(radius * 10 + lam))
    n, d = 160, 3
    learner = OnPairStrC(epsilon=1.0, lam=lam, radius=radius, n_features=d, norm_bound=1.0, seed=0)
    loss = get_loss("logistic")
    worst_ratio = 0.0
    for trial in range(12):
        X = rng.standard_normal((n, d))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # unit ball: diameter 2
        signs = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
        j = int(rng.integers(0, n))
        X2, signs2 = X.copy(), signs.copy()
        X2[j] = -X[j] / max(np.linalg.norm(X[j]), 1e-12)
        signs2[j] = -signs[j]
        W1, steps = _run_iterates(learner, X, signs)
        W2, _ = _run_iterates(learner, X2, signs2)
        U = sensitivity_ledger(steps, loss.lipschitz(radius), loss.smoothness() + lam, lam, 2 * radius,
                               pair_change=loss.pair_change(radius))
        dist = np.linalg.norm(W1 - W2, axis=1)
        assert np.all(dist <= U * (1 + 1e-9) + 1e-12), (trial, j, np.max(dist - U))
        worst_ratio = max(worst_ratio, float(np.max(dist[j:] / np.maximum(U[j:], 1e-300))))
    assert worst_ratio > 0.0  # the replaced record did move the iterate: the check is not vacuous
