"""Tests of the zCDP budget accountant."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onpair.privacy.accountant import ZCDPAccountant
from onpair.privacy.conversions import METHODS, eps_from_rho
from onpair.privacy.exceptions import PrivacyBudgetExceeded

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=200)


def test_spend_remaining_history():
    acc = ZCDPAccountant(1.0)
    assert acc.rho_budget == 1.0
    assert acc.rho_spent == 0.0
    assert acc.rho_remaining == 1.0
    assert acc.history == []
    out = acc.spend(0.25, label="a")
    assert out is acc
    acc.spend(0.5, "b").spend(0.0, "free")
    assert acc.rho_spent == 0.75
    assert acc.rho_remaining == 0.25
    assert acc.history == [("a", 0.25), ("b", 0.5), ("free", 0.0)]
    # history is a copy
    acc.history.append(("evil", 10.0))
    assert len(acc.history) == 3


def test_overspend_raises_and_changes_nothing():
    acc = ZCDPAccountant(1.0).spend(0.7, "first")
    before = (acc.rho_spent, acc.history, acc.rho_remaining)
    with pytest.raises(PrivacyBudgetExceeded) as info:
        acc.spend(0.4, label="release 7")
    msg = str(info.value)
    assert "release 7" in msg
    assert "0.4" in msg  # requested
    assert "0.7" in msg  # spent
    assert repr(acc.rho_remaining) in msg  # remaining
    assert (acc.rho_spent, acc.history, acc.rho_remaining) == before
    # it is a ValueError too
    with pytest.raises(ValueError):
        acc.spend(1.0)
    assert (acc.rho_spent, acc.history) == before[:2]


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", True, None])
def test_invalid_spend_raises_and_changes_nothing(bad):
    acc = ZCDPAccountant(1.0).spend(0.2, "ok")
    with pytest.raises(ValueError, match="rho"):
        acc.spend(bad, "bad")
    assert acc.rho_spent == 0.2
    assert acc.history == [("ok", 0.2)]
    with pytest.raises(ValueError):
        acc.can_spend(bad)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "1", False])
def test_invalid_budget(bad):
    with pytest.raises(ValueError, match="rho_budget"):
        ZCDPAccountant(bad)


def test_exact_exhaustion_allowed_and_no_tolerance():
    acc = ZCDPAccountant(0.5)
    assert acc.can_spend(0.5)
    acc.spend(0.5)
    assert acc.rho_remaining == 0.0
    assert acc.can_spend(0.0)
    acc.spend(0.0)  # free releases remain possible
    tiny = math.ulp(0.5)
    assert not acc.can_spend(tiny)
    with pytest.raises(PrivacyBudgetExceeded):
        acc.spend(tiny)


def test_total_is_fsum_not_running_float_sum():
    # Adding 0.1 ten times one by one gives 0.9999999999999999; the accountant
    # keeps the correctly rounded total (math.fsum), which is 1.0, and
    # compares that with the budget: a plan whose fsum is <= budget fits.
    assert sum([0.1] * 10) != 1.0
    acc = ZCDPAccountant(1.0)
    for _ in range(10):
        acc.spend(0.1)
    assert acc.rho_spent == math.fsum([0.1] * 10) == 1.0
    assert acc.rho_remaining == 0.0
    with pytest.raises(PrivacyBudgetExceeded):
        acc.spend(1e-16)


def test_can_spend_is_a_dry_run():
    acc = ZCDPAccountant(1.0)
    assert acc.can_spend(1.0)
    assert not acc.can_spend(1.0000001)
    assert acc.rho_spent == 0.0 and acc.history == []


@pytest.mark.parametrize("method", METHODS)
def test_epsilon_spent(method):
    acc = ZCDPAccountant(2.0).spend(0.1).spend(0.3)
    assert acc.epsilon_spent(1e-5, method) == eps_from_rho(0.4, 1e-5, method)
    assert ZCDPAccountant(1.0).epsilon_spent(1e-5, method) == 0.0
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon_spent(0.0, method)


def test_epsilon_spent_default_is_the_learners_gaussian_conversion():
    """One default everywhere (issue 20): the accountant, eps_from_rho and rho_from_dp convert with
    "gaussian", as every learner reports; "tight" only when asked."""
    import inspect

    from onpair.privacy.conversions import rho_from_dp

    acc = ZCDPAccountant(2.0).spend(0.4)
    assert acc.epsilon_spent(1e-5) == eps_from_rho(0.4, 1e-5, "gaussian") == eps_from_rho(0.4, 1e-5)
    assert acc.view().epsilon_spent(1e-5) == acc.epsilon_spent(1e-5)
    assert acc.epsilon_spent(1e-5) < eps_from_rho(0.4, 1e-5, "tight")
    assert rho_from_dp(1.0, 1e-5) == rho_from_dp(1.0, 1e-5, "gaussian")
    for function in (eps_from_rho, rho_from_dp, ZCDPAccountant.epsilon_spent, type(acc.view()).epsilon_spent):
        assert inspect.signature(function).parameters["method"].default == "gaussian", function
    from onpair import OnPairStats, OnPairStrC
    for learner in (OnPairStats(norm_bound=1.0, n_features=2), OnPairStrC(norm_bound=1.0, n_features=2)):  # their defaults, unchanged
        assert learner.privacy_report()["accounting"] == "gaussian", learner


def test_repr():
    r = repr(ZCDPAccountant(1.5).spend(0.5))
    assert "ZCDPAccountant" in r and "1.5" in r and "0.5" in r


def test_to_dict_from_dict_round_trip_through_json():
    acc = ZCDPAccountant(1.0)
    for i, rho in enumerate([0.1, 0.2, 1e-17, 0.3]):
        acc.spend(rho, f"release {i}")
    d = acc.to_dict()
    text = json.dumps(d)
    back = ZCDPAccountant.from_dict(json.loads(text))
    assert back.rho_budget == acc.rho_budget
    assert back.rho_spent == acc.rho_spent
    assert back.history == acc.history
    assert back.to_dict() == d


@pytest.mark.parametrize(
    "state",
    [
        {"rho_budget": 1.0, "history": [["a", 0.6], ["b", 0.6]]},  # exceeds budget
        {"rho_budget": 1.0, "history": [["a", -0.1]]},  # negative entry
        {"rho_budget": 1.0, "history": [["a", float("nan")]]},
        {"rho_budget": 1.0, "history": [["a", float("inf")]]},
        {"rho_budget": 1.0, "history": [["a", "0.1"]]},
        {"rho_budget": 1.0, "history": [["a"]]},
        {"rho_budget": 1.0, "history": [[1, 0.1]]},
        {"rho_budget": 1.0, "history": "a"},
        {"rho_budget": -1.0, "history": []},
        {"rho_budget": 1.0},
        {"history": []},
        [1.0, []],
    ],
)
def test_from_dict_rejects_tampered_state(state):
    with pytest.raises(ValueError):
        ZCDPAccountant.from_dict(state)


def test_from_dict_negative_entry_cannot_unlock_budget():
    # A negative entry would make the sum look fine; it must still be refused.
    state = {"rho_budget": 1.0, "history": [["a", 1.5], ["b", -0.5]]}
    with pytest.raises(ValueError):
        ZCDPAccountant.from_dict(state)


SPENDS = st.one_of(
    st.floats(0.0, 0.5, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 0.1, 1 / 3, 1e-300, 5e-324, 0.25]),
)


@SETTINGS
@given(
    budget=st.floats(1e-6, 10.0, allow_nan=False, allow_infinity=False),
    requests=st.lists(SPENDS, max_size=60),
)
def test_never_exceeds_budget_and_equals_fsum(budget, requests):
    acc = ZCDPAccountant(budget)
    accepted = []
    for i, r in enumerate(requests):
        expected_ok = math.fsum(accepted + [r]) <= budget
        assert acc.can_spend(r) == expected_ok
        if expected_ok:
            acc.spend(r, str(i))
            accepted.append(r)
        else:
            before = acc.rho_spent
            with pytest.raises(PrivacyBudgetExceeded):
                acc.spend(r, str(i))
            assert acc.rho_spent == before
        assert acc.rho_spent <= budget
        assert acc.rho_spent == math.fsum(accepted)
        assert acc.rho_remaining == max(0.0, budget - acc.rho_spent)
    assert [rho for _, rho in acc.history] == accepted


@SETTINGS
@given(requests=st.lists(st.floats(0.0, 1e-3, allow_nan=False), max_size=400))
def test_long_history_equals_fsum(requests):
    acc = ZCDPAccountant(1.0)
    for r in requests:
        acc.spend(r)
    assert acc.rho_spent == math.fsum(requests)


@pytest.mark.parametrize("total", [1.0, 2.0, 3.3, 4.0, 8.0])
@pytest.mark.parametrize("fits", [1, 3, 7, 10, 16])
def test_epsilon_per_fit_lets_exactly_that_many_fits_fit(total, fits):
    """The exact share eps_from_rho(rho_budget / n) overshoots by one rounding for some (total, n) (8.0 and 16:
    the 16th fit was refused): epsilon_per_fit's share lets n fits charge rho_from_dp(share) each, and an
    (n + 1)-th does not fit."""
    from onpair.privacy.conversions import rho_from_dp

    budget = ZCDPAccountant.from_dp(total, 1e-5)
    share = budget.epsilon_per_fit(fits)
    for _ in range(fits):
        budget.spend(rho_from_dp(share, 1e-5))
    assert not budget.can_spend(rho_from_dp(share, 1e-5))
    assert share > total / fits or fits == 1  # ρ divides: the per-fit ε is more than the ε/n of a naive split


def test_epsilon_per_fit_refuses_a_bad_count_and_a_missing_delta():
    budget = ZCDPAccountant.from_dp(1.0, 1e-5)
    for bad in (2.5, True, "4"):
        with pytest.raises(TypeError, match="fits"):
            budget.epsilon_per_fit(bad)
    with pytest.raises(ValueError, match="fits"):
        budget.epsilon_per_fit(0)
    with pytest.raises(ValueError, match="delta"):
        ZCDPAccountant(0.1).epsilon_per_fit(4)
    assert ZCDPAccountant(budget.rho_budget).epsilon_per_fit(4, 1e-5) == budget.epsilon_per_fit(4)


def test_a_shared_accountants_refusal_names_the_per_fit_share_that_fits():
    """A grid search that runs out of budget once got no advice: the refusal names how many such fits the
    budget pays for and the ε per fit for n fits, and that ε lets n fits of the estimator fit."""
    import re

    import numpy as np

    from onpair import OffPairStats

    rng = np.random.default_rng(2)
    X, y = rng.uniform(0, 1, size=(300, 3)), np.repeat([0, 1], 150)
    budget = ZCDPAccountant.from_dp(2.0, 1e-5)
    OffPairStats(epsilon=1.5, bounds=(0, 1), accountant=budget, random_state=0).fit(X, y)
    with pytest.raises(PrivacyBudgetExceeded) as refused:
        OffPairStats(epsilon=1.5, bounds=(0, 1), accountant=budget, random_state=1).fit(X, y)
    message = str(refused.value)
    assert "the whole budget pays for it 1 times" in message and "Splitting a budget" in message
    shares = {int(n): float(e) for e, n in re.findall(r"(\d+\.\d+) for n=(\d+)", message)}
    assert set(shares) == {2, 4, 8, 16}
    fresh = ZCDPAccountant.from_dp(2.0, 1e-5)
    for seed in range(4):
        OffPairStats(epsilon=shares[4], bounds=(0, 1), accountant=fresh, random_state=seed).fit(X, y)
    with pytest.raises(PrivacyBudgetExceeded):
        OffPairStats(epsilon=shares[4], bounds=(0, 1), accountant=fresh, random_state=5).fit(X, y)
