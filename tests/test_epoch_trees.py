"""EpochTrees: doubling epochs of horizon trees for unbounded streams (onpair.privacy.continual)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from onpair.privacy import continual
from onpair.privacy.continual import EpochTrees, PrefixSumMechanism, TreeAggregation

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=40)
ALPHA = 0.001


def make(dim=3, first_epoch=4, **kwargs):
    return EpochTrees(dim=dim, sensitivity=1.5, rho=0.7, first_epoch=first_epoch, **kwargs)


def data(n, k, seed=0):
    return np.random.default_rng(seed).standard_normal((n, k))


class _NoiselessEpochs(EpochTrees):
    """Every epoch's tree adds no noise (the kernels' scales set to 0): the releases must be exact."""

    def _tree(self, length):
        tree = super()._tree(length)
        tree._scales[:] = 0.0
        return tree


def test_epochs_double_and_every_record_lies_in_one():
    mech = make(first_epoch=4)
    bounds = [mech._epoch_of(t) for t in (0, 3, 4, 11, 12, 27, 28)]
    assert [(e, s, L) for e, s, L in bounds] == [(0, 0, 4), (0, 0, 4), (1, 4, 8), (1, 4, 8), (2, 12, 16),
                                                 (2, 12, 16), (3, 28, 32)]


def test_zero_noise_gives_exact_prefix_sums_across_epochs():
    mech = _NoiselessEpochs(dim=3, sensitivity=1.0, rho=1.0, first_epoch=4)
    V = data(100, 3, seed=1)
    out = np.vstack([mech.add_block(V[:30], np.random.default_rng(0), return_estimates=True),
                     mech.add_block(V[30:], np.random.default_rng(1), return_estimates=True)])
    np.testing.assert_allclose(out, np.cumsum(V, axis=0), rtol=1e-12, atol=1e-12)


def test_block_equals_singles_bit_for_bit(monkeypatch):
    monkeypatch.setattr(continual.base, "CHUNK_VALUES", 7)
    V = data(130, 3, seed=6)
    whole = make()
    out_whole = whole.add_block(V, np.random.default_rng(9), return_estimates=True)
    singles = make()
    rng = np.random.default_rng(9)
    out_singles = np.vstack([singles.add_block(V[i:i + 1], rng, return_estimates=True) for i in range(130)])
    assert np.array_equal(out_whole, out_singles)
    ones = make()
    rng = np.random.default_rng(9)
    for i in range(130):
        ones.add_one(V[i].copy(), rng)
    assert np.array_equal(ones.estimate(), out_whole[-1])


@SETTINGS
@given(cut=st.lists(st.integers(0, 90), max_size=4), seed=st.integers(0, 2**32 - 1))
def test_block_splitting_property(cut, seed):
    V = data(90, 2, seed=seed % 1000)
    expected = make(dim=2).add_block(V, np.random.default_rng(seed), return_estimates=True)
    mech = make(dim=2)
    rng = np.random.default_rng(seed)
    bounds = [0] + sorted(cut) + [90]
    parts = [mech.add_block(V[a:b], rng, return_estimates=True) for a, b in zip(bounds[:-1], bounds[1:])]
    assert np.array_equal(np.vstack(parts), expected)


@SETTINGS
@given(stop=st.integers(0, 80), seed=st.integers(0, 2**32 - 1))
def test_state_round_trip_property(stop, seed):
    V = data(80, 2, seed=seed % 997)
    expected = make(dim=2).add_block(V, np.random.default_rng(seed), return_estimates=True)
    rng = np.random.default_rng(seed)
    first = make(dim=2)
    head = first.add_block(V[:stop], rng, return_estimates=True)
    scalars, arrays = first.to_state()
    resumed = PrefixSumMechanism.from_state(json.loads(json.dumps(first.get_params())),
                                            json.loads(json.dumps(scalars)), arrays)
    assert type(resumed) is EpochTrees and resumed.n_seen == stop
    assert np.array_equal(resumed.estimate(), first.estimate()) and resumed.variance() == first.variance()
    tail = resumed.add_block(V[stop:], rng, return_estimates=True)
    assert np.array_equal(np.vstack([head, tail]), expected)


@pytest.mark.parametrize("n_seen, edit, words", [
    (0, lambda a: a.__setitem__("completed", np.ones(2)), "n_seen=0"),
    (10, lambda a: a.__setitem__("tree.left_sums", np.zeros((2, 2))), "shape"),
    (10, lambda a: a.pop("completed"), "keys"),
    (10, lambda a: a["completed"].__setitem__(0, np.nan), "NaN"),
])
def test_hostile_state_is_refused(n_seen, edit, words):
    mech = make(dim=2)
    mech.add_block(data(n_seen, 2), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    edit(arrays)
    with pytest.raises(ValueError, match=words):
        EpochTrees.from_state(mech.get_params(), scalars, arrays)


def test_empirical_variance_chi_square():
    """4,000 coordinates of zero data, epochs of 4, 8, 16, 32: Σ x²/variance(t) ~ χ²(4000) at each t
    checked (epoch ends included), two-sided at α = 0.001 with Bonferroni."""
    T, k = 60, 4000
    mech = EpochTrees(dim=k, sensitivity=1.0, rho=1.0, first_epoch=4)
    out = mech.add_block(np.zeros((T, k)), np.random.default_rng(3), return_estimates=True)
    checked = [1, 3, 4, 5, 11, 12, 13, 27, 28, 29, 45, 60]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)


def test_variance_is_the_sum_of_completed_roots_and_the_current_prefix():
    mech = make(dim=1, first_epoch=8)
    for t in (1, 8, 9, 24, 25, 100):
        e, start, length = mech._epoch_of(t - 1)
        completed = sum(TreeAggregation(dim=1, sensitivity=1.5, rho=0.7, horizon=8 << j).variance(8 << j)
                        for j in range(e))
        current = TreeAggregation(dim=1, sensitivity=1.5, rho=0.7, horizon=length).variance(t - start)
        assert math.isclose(mech.variance(t), completed + current, rel_tol=1e-12)


def test_every_epoch_costs_rho_and_the_stream_costs_the_largest():
    """Each epoch's tree is a Gaussian mechanism of cost Δ²L/(2σ²) ≤ ρ (a record lies in one node per
    level), checked against dp-accounting's tree event; a record lies in one epoch, so the stream's cost
    is the largest epoch's (parallel composition), never the sum."""
    import dp_accounting
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    mech = make(dim=1, first_epoch=16)
    mech.add_block(np.zeros((16 * 15, 1)), np.random.default_rng(0))  # epochs of 16, 32, 64, 128
    rows = mech.privacy_rows()
    assert len(rows) == 4 and all(r["rho"] <= mech.rho for r in rows)
    for e, row in enumerate(rows):
        length = 16 << e
        accountant = RdpAccountant(orders, dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
        accountant.compose(dp_event.SingleEpochTreeAggregationDpEvent(row["sigma"] / mech.sensitivity, length))
        np.testing.assert_allclose(accountant._rdp, orders * row["rho"], rtol=1e-9)
    assert mech.describe()["rho_spent_bound"] <= mech.rho


def test_memory_grows_only_with_the_current_epochs_levels():
    mech = EpochTrees(dim=8, sensitivity=1.0, rho=1.0, first_epoch=64)
    rng = np.random.default_rng(0)
    for _ in range(20):
        mech.add_block(np.zeros((50_000, 8)), rng)
    _, arrays = mech.to_state()
    levels = mech.describe()["levels"]
    assert sum(a.size for a in arrays.values()) == (2 * levels + 1) * 8 and levels <= 21


def test_constructor_checks():
    with pytest.raises(ValueError, match="power of two"):
        EpochTrees(dim=2, sensitivity=1.0, rho=1.0, first_epoch=6)
    with pytest.raises(TypeError, match="first_epoch"):
        EpochTrees(dim=2, sensitivity=1.0, rho=1.0, first_epoch=4.0)
    with pytest.raises(TypeError):
        EpochTrees(2, 1.0, 1.0)


def test_completed_totals_must_be_zero_inside_the_first_epoch():
    mech = make(dim=2, first_epoch=8)
    mech.add_block(data(5, 2), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    arrays["completed"] = np.ones(2)
    with pytest.raises(ValueError, match="first epoch"):
        EpochTrees.from_state(mech.get_params(), scalars, arrays)


def test_with_a_horizon_the_last_epoch_is_cut_to_the_records_left():
    """Epochs of 4, 8, 16 with a horizon of 20: the third epoch holds 8 records, so its tree has 4 levels
    instead of 5 (less noise); the variance formula and the releases agree (χ² over 4,000 coordinates)."""
    capped = EpochTrees(dim=1, sensitivity=1.0, rho=1.0, first_epoch=4, horizon=20)
    open_ended = EpochTrees(dim=1, sensitivity=1.0, rho=1.0, first_epoch=4)
    assert capped.variance(20) < open_ended.variance(20)
    mech = EpochTrees(dim=4000, sensitivity=1.0, rho=1.0, first_epoch=4, horizon=20)
    out = mech.add_block(np.zeros((20, 4000)), np.random.default_rng(5), return_estimates=True)
    for t in (13, 16, 20):
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, 4000), stats.chi2.sf(stat, 4000))
        assert p > ALPHA / 3
    assert mech.privacy_rows()[-1]["what"].endswith("13…20")
    with pytest.raises(ValueError):
        mech.add_block(np.zeros((1, 4000)), np.random.default_rng(0))
