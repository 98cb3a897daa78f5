"""Tests of the public release schedule (docs/algorithms.md#release-schedules).

Expected rounds and shares are worked out by hand from the definitions in the schedule's docstring:
rounds ``at`` / ``every`` / ``doubling``, limited by ``n`` (plus a release at n), ``horizon``, ``start``
and ``max_releases``; shares ρ/K (uniform), ρ·t_k/Σt_j (proportional), ρ·6/(π²k²) (convergent), each
times 1 − 1e-12.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onpair.privacy.schedule import ReleaseSchedule

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=200,
                    suppress_health_check=[HealthCheck.too_slow])
SHRINK = 1.0 - 1e-12
BIG = 10**6


def rounds(schedule, t_low=0, t_high=BIG):
    return schedule.rounds_between(t_low, t_high).tolist()


# -- rounds ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, expected", [
    # explicit rounds: sorted, duplicates merged
    (dict(at=[30, 10, 20, 10]), [10, 20, 30]),
    (dict(at=(7,)), [7]),
    # every k
    (dict(every=100, n=250), [100, 200, 250]),           # a final release at n
    (dict(every=100, n=300), [100, 200, 300]),           # n already a release round: not doubled
    (dict(every=1, n=5), [1, 2, 3, 4, 5]),
    (dict(every=7, horizon=20), [7, 14, 20]),            # a last release at the horizon, nothing after
    (dict(every=7, horizon=21), [7, 14, 21]),
    (dict(every=7, horizon=20, n=30), [7, 14, 20]),      # n after the horizon: no release at n
    (dict(every=7, horizon=30, n=20), [7, 14, 20]),      # n before the horizon: n is the end
    (dict(doubling=5, horizon=4), [4]),
    (dict(every=10, start=20, n=55), [30, 40, 50, 55]),  # nothing at or before start
    (dict(every=10, start=25, max_releases=3), [30, 40, 50]),
    (dict(every=10, max_releases=3), [10, 20, 30]),
    (dict(every=10, n=25, max_releases=5), [10, 20, 25]),
    (dict(every=7, n=20, start=20), []),                 # n == start: not released either
    # doubling
    (dict(doubling=64, n=500), [64, 128, 256, 500]),
    (dict(doubling=64, n=512), [64, 128, 256, 512]),
    (dict(doubling=64, n=64), [64]),
    (dict(doubling=10, n=5), [5]),
    (dict(doubling=1, max_releases=4), [1, 2, 4, 8]),
    (dict(doubling=3, start=5, max_releases=4), [6, 12, 24, 48]),
    (dict(doubling=4, start=16, max_releases=3), [32, 64, 128]),
    (dict(doubling=4, start=16, horizon=100), [32, 64, 100]),
    (dict(doubling=4, start=16, horizon=16), []),        # horizon at start: nothing
    # explicit rounds with limits
    (dict(at=[1, 3, 5], horizon=4), [1, 3, 4]),
    (dict(at=[1, 3, 5], horizon=3), [1, 3]),
    (dict(at=[1, 3, 5], n=4), [1, 3, 4]),
    (dict(at=[10, 20, 21], start=20), [21]),
    (dict(at=[1, 2, 3, 4, 5], max_releases=2), [1, 2]),
    (dict(at=[5], start=10), []),
])
def test_finite_rounds(kwargs, expected):
    s = ReleaseSchedule(1.0, **kwargs)
    assert s.finite
    assert rounds(s) == expected
    assert s.n_releases == len(expected)
    assert s.last_round == (expected[-1] if expected else 0)
    assert s.frozen_after() == s.last_round


def test_rounds_between_is_half_open():
    s = ReleaseSchedule(1.0, every=100, n=250)
    assert rounds(s, 0, 99) == []
    assert rounds(s, 0, 100) == [100]
    assert rounds(s, 100, 200) == [200]      # t_low excluded, t_high included
    assert rounds(s, 199, 249) == [200]
    assert rounds(s, 200, 10**9) == [250]
    assert rounds(s, 250, 10**9) == []


def test_unbounded_every_and_doubling():
    s = ReleaseSchedule(1.0, every=100)
    assert not s.finite
    assert s.n_releases is None and s.last_round is None and s.frozen_after() is None
    assert s.split == "convergent"
    assert rounds(s, 0, 1000) == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    assert rounds(s, 250, 600) == [300, 400, 500, 600]
    assert rounds(s, 250, 299) == []

    d = ReleaseSchedule(1.0, doubling=64)
    assert not d.finite and d.split == "convergent"
    assert rounds(d, 0, 600) == [64, 128, 256, 512]
    assert rounds(d, 128, 1024) == [256, 512, 1024]
    assert rounds(d, 0, 63) == []
    assert rounds(d, 0, 2**20) == [64 * 2**j for j in range(15)]

    started = ReleaseSchedule(1.0, every=10, start=35)
    assert rounds(started, 0, 80) == [40, 50, 60, 70, 80]


@pytest.mark.parametrize("kwargs, queries", [
    (dict(every=10), [(0, 10), (9, 10), (10, 20), (15, 20)]),
    (dict(every=10, start=25), [(0, 30), (25, 30), (30, 40)]),
    (dict(doubling=64), [(0, 64), (63, 64), (64, 128), (200, 256), (1024, 2048)]),
    (dict(doubling=3, start=5), [(0, 6), (6, 12), (47, 48)]),
    (dict(every=100, n=250), [(0, 100), (200, 250), (249, 250), (250, None), (10**6, None)]),
    (dict(at=[4, 9]), [(0, 4), (4, 9), (9, None)]),
])
def test_next_round_after(kwargs, queries):
    s = ReleaseSchedule(1.0, **kwargs)
    for t, expected in queries:
        assert s.next_round_after(t) == expected
        # consistent with rounds_between
        upcoming = s.rounds_between(t, t + 10**5)
        assert (int(upcoming[0]) if upcoming.size else None) == expected


def test_next_round_after_is_cheap_for_dense_unbounded_schedule():
    # every=1 without a limit: the next release must be found without enumerating the future
    s = ReleaseSchedule(1.0, every=1)
    assert s.next_round_after(10**15) == 10**15 + 1


def test_default_split():
    assert ReleaseSchedule(1.0, every=10, n=100).split == "uniform"
    assert ReleaseSchedule(1.0, at=[3, 4]).split == "uniform"
    assert ReleaseSchedule(1.0, doubling=8).split == "convergent"


# -- shares ------------------------------------------------------------------------------------------
def test_uniform_shares_by_hand():
    s = ReleaseSchedule(1.0, every=100, n=250)
    shares = s.rho_shares_between(0, BIG)
    np.testing.assert_allclose(shares, [SHRINK / 3] * 3, rtol=1e-15, atol=0)
    # one share per round, in the same order as rounds_between
    assert s.rho_shares_between(150, 250).size == rounds(s, 150, 250).__len__() == 2
    assert s.rho_shares_between(0, 99).size == 0


def test_proportional_shares_by_hand():
    rho = 2.5
    s = ReleaseSchedule(rho, doubling=64, n=500, split="proportional")
    assert rounds(s) == [64, 128, 256, 500]
    total = 64 + 128 + 256 + 500  # 948
    expected = [rho * t / total * SHRINK for t in (64, 128, 256, 500)]
    np.testing.assert_allclose(s.rho_shares_between(0, BIG), expected, rtol=1e-14, atol=0)
    # later releases get more: share / round is constant
    shares = s.rho_shares_between(0, BIG)
    ratio = shares / np.array([64, 128, 256, 500])
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-14)


def test_proportional_shares_explicit_rounds():
    s = ReleaseSchedule(1.0, at=[1, 3, 6], split="proportional")
    np.testing.assert_allclose(s.rho_shares_between(0, 10), [SHRINK / 10, 3 * SHRINK / 10, 6 * SHRINK / 10],
                               rtol=1e-14, atol=0)


def convergent_share(rho, k):
    return rho * 6.0 / (math.pi**2 * k**2) * SHRINK


@pytest.mark.parametrize("kwargs", [dict(doubling=64), dict(every=7), dict(every=3, start=10)])
def test_convergent_shares_independent_of_queries(kwargs):
    rho = 0.7
    s = ReleaseSchedule(rho, **kwargs)
    assert s.split == "convergent"
    T = 5000
    all_rounds = s.rounds_between(0, T)
    expected = [convergent_share(rho, k) for k in range(1, all_rounds.size + 1)]
    one_shot = s.rho_shares_between(0, T)
    np.testing.assert_allclose(one_shot, expected, rtol=1e-14, atol=0)
    # round by round
    by_round = np.concatenate([s.rho_shares_between(t - 1, t) for t in range(1, T + 1)])
    assert np.array_equal(by_round, one_shot)
    # in uneven blocks
    cuts = [0, 1, 2, 63, 64, 65, 100, 777, 1024, 1025, 3000, T]
    blocks = np.concatenate([s.rho_shares_between(a, b) for a, b in zip(cuts[:-1], cuts[1:])])
    assert np.array_equal(blocks, one_shot)
    # a late window alone: the k-th release overall still gets the k-th share
    k0 = int(np.count_nonzero(all_rounds <= 1000))
    late = s.rho_shares_between(1000, T)
    np.testing.assert_allclose(late, [convergent_share(rho, k) for k in range(k0 + 1, all_rounds.size + 1)],
                               rtol=1e-14, atol=0)


def test_convergent_split_for_finite_schedule():
    s = ReleaseSchedule(1.0, every=10, n=35, split="convergent")
    assert rounds(s) == [10, 20, 30, 35]
    np.testing.assert_allclose(s.rho_shares_between(0, 100), [convergent_share(1.0, k) for k in (1, 2, 3, 4)],
                               rtol=1e-14, atol=0)
    np.testing.assert_allclose(s.rho_shares_between(20, 35), [convergent_share(1.0, k) for k in (3, 4)],
                               rtol=1e-14, atol=0)


def test_convergent_total_stays_below_budget_over_many_releases():
    s = ReleaseSchedule(1.0, every=1)
    shares = s.rho_shares_between(0, 200_000)
    total = math.fsum(shares)
    assert total <= 1.0
    # Σ_{k≤K} 6/(π²k²) = 1 − 6/(π²)·Σ_{k>K} 1/k² and Σ_{k>K} 1/k² ∈ (1/(K+1), 1/K)
    K = 200_000
    assert 1.0 - 6 / (math.pi**2 * K) - 1e-11 <= total <= 1.0 - 6 / (math.pi**2 * (K + 1))


# -- property: the budget is never exceeded, the schedule does not depend on the blocks -------------------
@st.composite
def schedules(draw):
    rho = draw(st.floats(1e-6, 1e3, allow_nan=False, allow_infinity=False))
    kind = draw(st.sampled_from(["at", "every", "doubling"]))
    if kind == "at":
        rule = {"at": draw(st.lists(st.integers(1, 3000), min_size=1, max_size=40))}
    elif kind == "every":
        rule = {"every": draw(st.integers(1, 500))}
    else:
        rule = {"doubling": draw(st.integers(1, 200))}
    opt = {}
    for name, strategy in (("n", st.integers(1, 3000)), ("horizon", st.integers(1, 3000)),
                           ("start", st.integers(0, 500)), ("max_releases", st.integers(1, 60))):
        if draw(st.booleans()):
            opt[name] = draw(strategy)
    finite = ReleaseSchedule(rho, **rule, **opt).finite
    split = draw(st.sampled_from(["uniform", "proportional", "convergent"] if finite else ["convergent"]))
    return ReleaseSchedule(rho, **rule, **opt, split=split), dict(rho=rho, **rule, **opt, split=split)


T_MAX = 20_000


@SETTINGS
@given(schedules(), st.lists(st.integers(1, T_MAX - 1), max_size=12, unique=True))
def test_shares_never_exceed_budget_and_do_not_depend_on_blocks(sched, cut_points):
    s, config = sched
    rho = config["rho"]
    T = max(T_MAX, s.last_round) if s.finite else T_MAX
    r = s.rounds_between(0, T)
    shares = s.rho_shares_between(0, T)
    assert r.shape == shares.shape
    assert np.all(shares > 0)
    assert math.fsum(shares) <= rho  # exactly, no tolerance

    # the rounds respect every limit
    assert np.all(np.diff(r) > 0)
    assert np.all(r > config.get("start", 0))
    for limit in ("n", "horizon"):
        if limit in config:
            assert np.all(r <= config[limit])
    if "max_releases" in config:
        assert r.size <= config["max_releases"]
    if s.finite:
        assert T >= s.last_round  # every release is inside [0, T]
        assert r.size == s.n_releases

    # cutting the stream into blocks gives the same releases with the same shares
    cuts = [0] + sorted(cut_points) + [T]
    pieces_r = [s.rounds_between(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    pieces_s = [s.rho_shares_between(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate(pieces_r), r)
    assert np.array_equal(np.concatenate(pieces_s), shares)
    assert math.fsum(np.concatenate(pieces_s)) <= rho

    # finite uniform / proportional schedules use the budget
    if config["split"] in ("uniform", "proportional") and r.size:
        assert math.fsum(shares) == pytest.approx(rho, rel=1e-9)
        if config["split"] == "uniform":
            np.testing.assert_allclose(shares, rho / r.size, rtol=1e-11)
        else:
            np.testing.assert_allclose(shares / r, rho / r.sum(), rtol=1e-11)
    if config["split"] == "convergent":
        k = np.arange(1, r.size + 1)
        np.testing.assert_allclose(shares, rho * 6 / (math.pi**2 * k**2), rtol=1e-11)


@SETTINGS
@given(st.floats(1e-6, 1e3), st.sampled_from(["every", "doubling"]), st.integers(1, 500), st.integers(0, 500))
def test_unbounded_schedule_sum_below_budget_far_out(rho, kind, param, start):
    s = ReleaseSchedule(rho, **{kind: param}, start=start)
    assert not s.finite and s.split == "convergent"
    # far beyond any test stream; doubling keeps this cheap, every=k needs T/k entries
    T = 10**15 if kind == "doubling" else 10**6
    shares = s.rho_shares_between(0, T)
    assert shares.size == s.rounds_between(0, T).size > 0
    assert math.fsum(shares) < rho


# -- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rho", [0, 0.0, -1.0, float("nan"), float("inf"), -float("inf"), "1", None, [1.0]])
def test_bad_budget(rho):
    with pytest.raises(ValueError, match="rho_budget"):
        ReleaseSchedule(rho, every=10)


@pytest.mark.parametrize("rho", [True, False, np.bool_(True)])
def test_bool_budget_rejected(rho):
    with pytest.raises(ValueError, match="rho_budget"):
        ReleaseSchedule(rho, every=10)


@pytest.mark.parametrize("rho", [np.int64(2), np.float32(2.0), 2, 2.0])
def test_numeric_budget_types_accepted(rho):
    s = ReleaseSchedule(rho, every=10, n=20)
    assert s.rho_budget == 2.0 and type(s.rho_budget) is float


@pytest.mark.parametrize("rules", [
    {},
    dict(at=[1], every=2),
    dict(at=[1], doubling=2),
    dict(every=1, doubling=2),
    dict(at=[1], every=2, doubling=3),
])
def test_exactly_one_rule(rules):
    with pytest.raises(ValueError, match="exactly one of at=, every=, doubling="):
        ReleaseSchedule(1.0, **rules)


@pytest.mark.parametrize("kwargs", [
    dict(at=[1.5]), dict(at=[0]), dict(at=[-3]), dict(at=["3"]), dict(at=[True]), dict(at=[2, None]),
    dict(at=5), dict(at=[]),
    dict(every=0), dict(every=-5), dict(every=2.0), dict(every=True), dict(every="10"),
    dict(doubling=0), dict(doubling=1.5), dict(doubling=False),
    dict(every=10, n=0), dict(every=10, n=2.5), dict(every=10, n=-1),
    dict(every=10, horizon=0), dict(every=10, horizon=10.0),
    dict(every=10, start=-1), dict(every=10, start=1.5), dict(every=10, start=True),
    dict(every=10, max_releases=0), dict(every=10, max_releases=2.0),
])
def test_bad_rounds(kwargs):
    with pytest.raises(ValueError):
        ReleaseSchedule(1.0, **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(every=0), "release_every"), (dict(doubling=0), "doubling"), (dict(every=10, n=0), "n"),
    (dict(every=10, horizon=0), "horizon"), (dict(every=10, start=-1), "start"),
    (dict(every=10, max_releases=0), "max_releases"), (dict(at=[0]), "release round"),
])
def test_bad_rounds_message_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ReleaseSchedule(1.0, **kwargs)


@pytest.mark.parametrize("split", ["uniform", "proportional"])
@pytest.mark.parametrize("rule", [dict(every=10), dict(doubling=64), dict(every=3, start=100)])
def test_finite_split_needs_finite_schedule(split, rule):
    with pytest.raises(ValueError, match="budget_split"):
        ReleaseSchedule(1.0, **rule, split=split)
    # the same rule with a limit is fine
    assert ReleaseSchedule(1.0, **rule, n=1000, split=split).finite


def test_unknown_split():
    with pytest.raises(ValueError, match="budget_split"):
        ReleaseSchedule(1.0, every=10, n=100, split="geometric")
