"""The privacy language (issue 21, deliverable 2): typed events, one accountant, one report builder.

* every event's cost, and every composition's, against dp-accounting's accountants (PLD for Gaussian
  mechanisms: our "gaussian" conversion is exact, PLD's is exact up to its discretisation; RDP for ρ-zCDP
  bounds: our "tight" conversion and RDP's optimise the same curve), and the tree mechanism's κ² against
  dp-accounting's own tree-aggregation event;
* every public learner's, estimator's and scaler's report: its ε from its events equals dp-accounting's
  for the same events, its keys are the common ones, ρ keys present exactly by the rule, never NaN or None;
* the accountant: typed spends, refusals that change nothing, (ε, δ) events, a shared accountant across
  models that clone() (river and scikit-learn) shares, a grid search whose total is the sum of its fits.
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import onpair
import onpair.preprocessing
import onpair.river
from onpair.privacy import PrivacyBudgetExceeded, ZCDPAccountant
from onpair.privacy.continual import BandedToeplitz, EpochTrees, TreeAggregation
from onpair.privacy.conversions import rho_from_dp
from onpair.privacy.events import (ApproxDPRelease, Composed, ContinualRelease, GaussianRelease, NonPrivate,
                                   ZCDPRelease, epsilon_of, leaves, rho_of)
from onpair.privacy.reports import COMMON_KEYS, RHO_KEYS

from public_api import OFFLINE, ONLINE

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import dp_event, privacy_accountant  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402
from tiers import by_tier

DELTA = 1e-5
#: PLD's discretisation (interval 1e-4, pessimistic) against our exact Gaussian curve: measured within 1e-8
#: relative for one to a few hundred Gaussian releases of noise multiplier 0.5–20.
PLD_TOLERANCE = 1e-4
#: RDP's ε (from its grid of orders) against our "tight" conversion of the same ρ-zCDP curve.
RDP_TOLERANCE = 2e-3


def pld_epsilon(events, delta=DELTA):
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.ComposedDpEvent([e.to_dp_event() for e in events]))
    return accountant.get_epsilon(delta)


def rdp_epsilon(events, delta=DELTA):
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.ComposedDpEvent([e.to_dp_event() for e in events]))
    return accountant.get_epsilon(delta)


def data(seed=0, n=120, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    return X, (X[:, 0] + 0.2 * rng.standard_normal(n) > 0.5).astype(int)


# -- the events, one by one, against dp-accounting ----------------------------------------------------
@pytest.mark.parametrize("multiplier", [0.5, 1.0, 3.0, 20.0])
def test_a_gaussian_release_costs_what_pld_says(multiplier):
    event = GaussianRelease(sensitivity=0.3, sigma=0.3 * multiplier, round=5)
    assert event.rho == pytest.approx(1.0 / (2.0 * multiplier**2), rel=1e-15)
    ours = epsilon_of([event], DELTA, "gaussian")
    assert ours == pytest.approx(pld_epsilon([event]), rel=PLD_TOLERANCE)
    assert ours <= rdp_epsilon([event])  # RDP is an upper bound, and the Gaussian curve is exact


@pytest.mark.parametrize("kind", ["tree", "toeplitz", "epochs", "unbounded tree"])
def test_a_continual_release_is_the_gaussian_mechanism_of_its_encoder(kind):
    mechanism = {"tree": lambda: TreeAggregation(dim=2, sensitivity=2.0, rho=0.3, horizon=100),
                 "toeplitz": lambda: BandedToeplitz(dim=2, sensitivity=2.0, rho=0.3),
                 "epochs": lambda: EpochTrees(dim=2, sensitivity=2.0, rho=0.3),
                 "unbounded tree": lambda: TreeAggregation(dim=2, sensitivity=2.0, rho=0.3)}[kind]()
    event = ContinualRelease.of(mechanism)
    # ρ = Δ²κ²/(2σ²) equals the mechanism's own bound (computed there from its levels or its encoder; the
    # doubling epochs claim their whole ρ, a few 1e-9 above one epoch's tree after the schedule's shrink)
    exact = 0.5 * (event.sensitivity / event.sigma) ** 2 * event.kappa2
    assert exact == pytest.approx(mechanism.describe()["rho_spent_bound"], rel=1e-8)
    assert exact <= mechanism.describe()["rho_spent_bound"] * (1 + 1e-12)
    assert event.rho == mechanism.describe()["rho_spent_bound"]
    assert epsilon_of([event], DELTA, "gaussian") == pytest.approx(pld_epsilon([event]), rel=PLD_TOLERANCE)


@pytest.mark.parametrize("horizon", [1, 2, 3, 8, 100, 1000])
def test_the_tree_encoder_norm_is_dp_accountings_tree_aggregation(horizon):
    """κ² of the tree = the levels a record is in: dp-accounting's tree-aggregation event (its own count of
    the nodes a record touches) gives the same ε as our Gaussian twin of noise multiplier σ/(Δκ)."""
    event = ContinualRelease.of(TreeAggregation(dim=1, sensitivity=1.0, rho=0.5, horizon=horizon))
    special = rdp_privacy_accountant.RdpAccountant(
        neighboring_relation=privacy_accountant.NeighboringRelation.REPLACE_SPECIAL)
    special.compose(dp_event.SingleEpochTreeAggregationDpEvent(event.sigma / event.sensitivity, horizon))
    assert rdp_epsilon([event]) == pytest.approx(special.get_epsilon(DELTA), rel=1e-12)


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.1, 2.0])
def test_a_zcdp_bound_costs_what_rdp_says(rho):
    event = ZCDPRelease(rho, "a ρ-zCDP mechanism")
    assert epsilon_of([event], DELTA, "tight") == pytest.approx(rdp_epsilon([event]), rel=RDP_TOLERANCE)
    assert epsilon_of([event], DELTA, "tight") <= rdp_epsilon([event]) * (1 + 1e-12)


@settings(max_examples=by_tier(fast=8, full=30), deadline=None)  # each example: a PLD of up to 6 releases
@given(st.lists(st.tuples(st.floats(0.01, 10.0), st.floats(0.5, 50.0)), min_size=1, max_size=6))
def test_a_composition_of_gaussian_releases_costs_what_pld_says(pairs):
    events = [GaussianRelease(sensitivity=d, sigma=d * z, round=i + 1) for i, (d, z) in enumerate(pairs)]
    whole = Composed(tuple(events))
    assert whole.rho == math.fsum(e.rho for e in events) == rho_of(events)
    assert epsilon_of([whole], DELTA) == epsilon_of(events, DELTA)
    assert epsilon_of(events, DELTA) == pytest.approx(pld_epsilon(events), rel=PLD_TOLERANCE)


def test_the_non_private_event_is_dp_accountings_null():
    assert epsilon_of([NonPrivate()], DELTA) == math.inf
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(NonPrivate().to_dp_event())
    assert accountant.get_epsilon(DELTA) == math.inf
    assert NonPrivate().rho is None and NonPrivate().row() is None


def test_an_approximate_dp_event_has_no_dp_accounting_twin_and_composes_by_the_basic_rule():
    approx = ApproxDPRelease(epsilon=0.7, delta=3e-6, what="b", conditions={"lam": 2.0})
    assert not rdp_privacy_accountant.RdpAccountant().supports(approx.to_dp_event())
    assert not pld_privacy_accountant.PLDAccountant().supports(approx.to_dp_event())
    gaussian = GaussianRelease(sensitivity=1.0, sigma=4.0, round=1)
    # basic composition: (ε_G(δ − δ₁) + ε₁, δ), the Gaussian part from PLD at the δ left over
    expected = pld_epsilon([gaussian], DELTA - 3e-6) + 0.7
    assert epsilon_of([approx, gaussian], DELTA) == pytest.approx(expected, rel=PLD_TOLERANCE)
    assert epsilon_of([approx, ApproxDPRelease(0.1, 1e-6)], DELTA) == pytest.approx(0.8, rel=1e-15)
    assert epsilon_of([approx, gaussian], 3e-6) == math.inf  # the δ left for the Gaussian part is 0
    assert rho_of([approx, gaussian]) is None and approx.rho is None


def test_events_are_frozen_checked_and_keep_their_labels():
    event = GaussianRelease(sensitivity=1.0, sigma=2.0, round=64)
    with pytest.raises(AttributeError):
        event.sigma = 3.0
    assert event.label == "release at round 64"  # the label the snapshots have always stored
    assert GaussianRelease(1.0, 2.0, what="w").label == "w"
    with pytest.raises(ValueError, match="sigma"):
        GaussianRelease(sensitivity=1.0, sigma=0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        GaussianRelease(sensitivity=-1.0, sigma=1.0)
    with pytest.raises(TypeError, match="round"):
        GaussianRelease(sensitivity=1.0, sigma=1.0, round=1.5)
    # an event may overstate its cost (a σ with a margin), never understate it beyond rounding
    assert GaussianRelease(1.0, 2.0, rho=0.2).rho == 0.2
    with pytest.raises(ValueError, match="below the cost"):
        GaussianRelease(1.0, 2.0, rho=0.1)
    assert GaussianRelease(0.0, 0.0).rho == 0.0  # a data-independent release
    with pytest.raises(TypeError, match="privacy events"):
        Composed((0.5,))
    assert list(leaves([Composed((event, Composed((event,))))])) == [event, event]


def test_every_row_has_the_same_keys_for_its_event_type():
    rows = [GaussianRelease(1.0, 2.0, 3).row(), GaussianRelease(1.0, 2.0).row()]
    assert [set(r) for r in rows] == [{"event", "what", "round", "sensitivity", "sigma", "rho"}] * 2
    continual = ContinualRelease.of(BandedToeplitz(dim=1, sensitivity=1.0, rho=0.5)).row()
    assert set(continual) == {"event", "what", "round", "sensitivity", "sigma", "rho", "mechanism", "kappa2",
                              "horizon", "nodes_released"}
    approx = ApproxDPRelease(1.0, 1e-6, sensitivity=1.0, sigma=2.0).row()
    assert set(approx) == {"event", "what", "round", "sensitivity", "sigma", "epsilon", "delta", "conditions"}
    assert "rho" not in approx  # the rule for ρ: absent, never None


# -- the accountant ---------------------------------------------------------------------------------
def test_the_accountant_records_typed_events_and_the_float_form_still_works():
    acc = ZCDPAccountant(1.0)
    acc.spend(GaussianRelease(sensitivity=1.0, sigma=2.0, round=3)).spend(0.25, "by hand")
    assert acc.history == [("release at round 3", 0.125), ("by hand", 0.25)]
    assert [type(e).__name__ for e in acc.events] == ["GaussianRelease", "ZCDPRelease"]
    assert acc.to_dict() == {"rho_budget": 1.0, "history": [["release at round 3", 0.125], ["by hand", 0.25]]}
    with pytest.raises(TypeError, match="label"):
        acc.spend(GaussianRelease(1.0, 2.0), label="x")


def test_a_refused_composition_changes_nothing():
    acc = ZCDPAccountant(0.2).spend(0.1, "first")
    whole = Composed((GaussianRelease(1.0, 4.0, 1), GaussianRelease(1.0, 4.0, 2)))  # 2 × 0.03125
    acc.spend(whole)
    assert len(acc.events) == 3
    before = (acc.rho_spent, acc.history, acc.events)
    with pytest.raises(PrivacyBudgetExceeded):
        acc.spend(Composed((GaussianRelease(1.0, 4.0, 3), GaussianRelease(1.0, 1.0, 4))))
    assert (acc.rho_spent, acc.history, acc.events) == before
    with pytest.raises(PrivacyBudgetExceeded, match="not private"):
        acc.spend(NonPrivate())
    assert (acc.rho_spent, acc.history, acc.events) == before


def test_an_approximate_dp_event_needs_an_epsilon_delta_budget():
    with pytest.raises(ValueError, match="from_dp"):
        ZCDPAccountant(1.0).spend(ApproxDPRelease(0.5, 1e-6))
    acc = ZCDPAccountant.from_dp(2.0, 1e-5)
    acc.spend(ApproxDPRelease(0.5, 1e-6, what="objective")).spend(GaussianRelease(1.0, 10.0, 1))
    assert acc.epsilon_spent(1e-5) == pytest.approx(epsilon_of(acc.events, 1e-5), rel=1e-15)
    assert acc.epsilon_spent(1e-5) == pytest.approx(pld_epsilon([GaussianRelease(1.0, 10.0)], 9e-6) + 0.5,
                                                    rel=PLD_TOLERANCE)
    before = acc.events
    with pytest.raises(PrivacyBudgetExceeded, match="epsilon"):
        acc.spend(ApproxDPRelease(1.4, 1e-6))
    assert acc.events == before
    restored = ZCDPAccountant.from_dict(acc.to_dict())
    assert restored.epsilon_spent(1e-5) == acc.epsilon_spent(1e-5) and restored.to_dict() == acc.to_dict()


def test_a_shared_accountant_is_shared_by_copies_and_refuses_pickling():
    acc = ZCDPAccountant(1.0)
    assert copy.copy(acc) is acc and copy.deepcopy(acc) is acc
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(acc)
    own = ZCDPAccountant(1.0, owner="a model").spend(0.5, "x")
    twin = copy.deepcopy(own)
    assert twin is not own and twin.history == own.history
    twin.spend(0.25, "y")
    assert own.rho_spent == 0.5
    assert pickle.loads(pickle.dumps(own)).history == own.history


# -- every public class: its report from its events -------------------------------------------------
def _online_reports():
    X, y = data()
    for name, cls in sorted(ONLINE.items()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kwargs = {"bounds": (0.0, 1.0), "seed": 0}
            if name in ("OnPairStrC", "OnPairC"):
                kwargs.update(n=len(X))
            learner = cls(**kwargs).learn_many(X, y)
        yield name, learner.privacy_report(passes=2)


def _offline_reports():
    X, y = data()
    for name, cls in sorted(OFFLINE.items()):
        for private in (True, False):
            kwargs = {"bounds": (0.0, 1.0), "random_state": 0, "private": private}
            if name == "OutputPerturbedSGD":
                kwargs["T"] = 300
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield f"{name}-{private}", cls(**kwargs).fit(X, y).privacy_report_


def _other_reports():
    X, y = data()
    yield "preprocessing.PrivateStandardScaler", onpair.preprocessing.PrivateStandardScaler(
        bounds=(0.0, 1.0), random_state=0).fit(X).privacy_report_
    records = [dict(zip("abc", row.tolist())) for row in X]
    scaler = onpair.river.PrivateStandardScaler(bounds=(0.0, 1.0), features=list("abc"), seed=0)
    model = onpair.river.PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=list("abc"), seed=0)
    for x, label in zip(records, y):
        scaler.learn_one(x)
        model.learn_one(x, bool(label))
    yield "river.PrivateStandardScaler", scaler.privacy_report(passes=2)
    yield "river.PrivatePairwiseClassifier", model.privacy_report(passes=2)


REPORTS = dict(list(_online_reports()) + list(_offline_reports()) + list(_other_reports()))


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_report_has_the_common_keys_and_rho_by_the_rule(name):
    report = REPORTS[name]
    assert set(COMMON_KEYS) <= set(report)
    zcdp = report["private"] and rho_of(report.events) is not None
    assert all((key in report) == zcdp for key in RHO_KEYS), "ρ keys present exactly when every event has a ρ"
    for key in RHO_KEYS:
        if key in report:
            assert isinstance(report[key], float) and math.isfinite(report[key])
    for row in report["releases"]:
        assert {"event", "what", "round", "sensitivity", "sigma"} <= set(row)
        assert ("rho" in row) != ("epsilon" in row)
        assert all(value is not None for key, value in row.items() if key in ("rho", "sensitivity", "sigma"))
    if "record_level" in report:
        level = report["record_level"]
        assert ("rho" in level) == zcdp and level["delta"] is not None
        assert "epsilon_per_position" in report and ("rho_per_position" in report) == zcdp
    assert report["curator_only"] == sorted(report["curator_only"])
    assert ("n_clipped" in report["curator_only"]) == ("n_clipped" in report)


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_reported_epsilon_is_dp_accountings_for_the_same_events(name):
    report = dict(REPORTS[name])
    events = list(leaves(REPORTS[name].events))
    # the events are one stream position's: privacy_report(passes=2)'s headline is two passes' (tests/test_replay.py)
    report["epsilon_spent"] = report.get("epsilon_per_position", report["epsilon_spent"])
    if not report["private"]:
        assert report["epsilon_spent"] == math.inf and report["releases"] == []
        assert [type(e) for e in events] == [NonPrivate]
        return
    gaussian = [e for e in events if e.rho is not None]
    approx = [e for e in events if isinstance(e, ApproxDPRelease)]
    assert len(gaussian) + len(approx) == len(events) == len(report["releases"])
    left = report["delta"] - math.fsum(e.delta for e in approx)
    expected = math.fsum(e.epsilon for e in approx)
    if gaussian and report["accounting"] == "gaussian":
        expected += pld_epsilon(gaussian, left)
    elif gaussian:  # a learner converting with "lemma3" or "tight": never below the exact curve
        assert report["epsilon_spent"] >= pld_epsilon(gaussian, left) * (1 - PLD_TOLERANCE)
        return
    assert report["epsilon_spent"] == pytest.approx(expected, rel=PLD_TOLERANCE)
    assert report["epsilon_spent"] <= report["epsilon"] * (1 + 1e-9) or report["mode"] == "paper"


def test_the_delta_warning_is_written_once():
    import pathlib
    import re

    message = re.compile(r"delta = \{[^}]*\}\S* (?:≥|>=) 1/")  # the warning's f-string, wherever it is
    root = pathlib.Path(onpair.__file__).parent
    holders = [p.relative_to(root).as_posix() for p in root.rglob("*.py") if message.search(p.read_text(encoding="utf-8"))]
    assert holders == ["privacy/reports.py"]


# -- shared accountants ------------------------------------------------------------------------------
def test_two_online_learners_share_one_budget_and_a_refused_block_changes_nothing():
    X, y = data(n=300)
    acc = ZCDPAccountant(rho_from_dp(1.0, 1e-5) * 1.5)
    first = onpair.OnPairStrC(bounds=(0, 1), n=300, seed=0, accountant=acc).learn_many(X, y)
    assert acc.rho_spent == first.privacy_report()["rho_spent"]
    second = onpair.OnPairStrC(bounds=(0, 1), n=300, seed=1, accountant=acc)
    second.learn_many(X[:100], y[:100])  # its first releases fit what is left
    state = (second.n_seen, second.model.copy(), second.accountant.history, acc.history)
    with pytest.raises(PrivacyBudgetExceeded):
        second.learn_many(X[100:], y[100:])
    assert (second.n_seen, second.accountant.history, acc.history) == (state[0], state[2], state[3])
    assert np.array_equal(second.model, state[1])
    assert acc.rho_spent == pytest.approx(first.privacy_report()["rho_spent"]
                                          + second.privacy_report()["rho_spent"], rel=1e-15)
    assert second.clone().shared_accountant is acc
    with pytest.raises(ValueError, match="shared accountant"):
        second.save("never-written.onpair")


def test_onpairstats_is_refused_at_its_first_record_when_the_shared_budget_cannot_pay():
    X, y = data()
    acc = ZCDPAccountant(rho_from_dp(1.0, 1e-5) / 2)
    learner = onpair.OnPairStats(bounds=(0, 1), n_features=3, seed=0, accountant=acc)
    with pytest.raises(PrivacyBudgetExceeded):
        learner.learn_one(X[0], int(y[0]))
    assert learner.n_seen == 0 and acc.events == () and learner.accountant.rho_spent == 0.0
    assert onpair.OnPairStats(bounds=(0, 1), seed=0, epsilon=0.5,
                              accountant=acc).learn_many(X, y).privacy_report()["rho_spent"] == acc.rho_spent


def test_river_clone_shares_the_accountant():
    pytest.importorskip("river")
    acc = ZCDPAccountant(1.0)
    model = onpair.river.PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=list("abc"), seed=0, accountant=acc)
    twin = model.clone()
    assert twin.accountant is acc and twin._inner.shared_accountant is acc
    X, y = data(n=40)
    for row, label in zip(X, y):
        x = dict(zip("abc", row.tolist()))
        model.learn_one(x, bool(label))
        twin.learn_one(x, bool(label))
    assert acc.rho_spent == pytest.approx(2 * model.privacy_report()["rho_spent"], rel=1e-15)
    assert model.privacy_report()["lineage"]["rho_spent"] == pytest.approx(acc.rho_spent, rel=1e-15)
    scaler = onpair.river.PrivateStandardScaler(bounds=(0.0, 1.0), features=list("abc"), accountant=acc)
    assert scaler.clone().accountant is acc
    with pytest.raises(ValueError, match="giga"):
        onpair.river.PrivatePairwiseClassifier(learner="giga", bounds=(0.0, 1.0), accountant=acc)


def test_scikit_learn_clone_shares_the_accountant_and_a_refused_fit_changes_nothing():
    sklearn_base = pytest.importorskip("sklearn.base")
    X, y = data()
    acc = ZCDPAccountant(rho_from_dp(1.0, 1e-5) * 1.5)
    est = onpair.OffPairStats(bounds=(0, 1), random_state=0, accountant=acc)
    assert sklearn_base.clone(est).accountant is acc
    est.fit(X, y)
    coef = est.coef_.copy()
    with pytest.raises(PrivacyBudgetExceeded):
        est.fit(X[::-1], y[::-1])
    assert np.array_equal(est.coef_, coef) and len(acc.events) == 1
    with pytest.raises(PrivacyBudgetExceeded, match="not private"):
        onpair.OffPairStats(bounds=(0, 1), private=False, accountant=ZCDPAccountant(1.0)).fit(X, y)
    with pytest.raises(TypeError, match="accountant"):
        onpair.OffPairStats(bounds=(0, 1), accountant=0.5).fit(X, y)


def test_a_grid_search_over_a_shared_accountant_spends_the_sum_of_its_fits():
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = data(n=200)
    epsilons = [0.5, 1.0, 2.0]
    acc = ZCDPAccountant(100.0)
    search = model_selection.GridSearchCV(onpair.OffPairStats(bounds=(0, 1), random_state=0, accountant=acc),
                                          {"epsilon": epsilons}, cv=3, scoring="roc_auc")
    search.fit(X, y)
    # the cost of one fit depends on ε and δ only: measured on a fresh estimator each
    cost = {e: onpair.OffPairStats(bounds=(0, 1), epsilon=e, random_state=0).fit(X, y).privacy_report_["rho_spent"]
            for e in epsilons}
    fits = [cost[e] for e in epsilons for _ in range(3)] + [cost[search.best_params_["epsilon"]]]
    assert len(acc.events) == len(fits) == 10
    assert acc.rho_spent == math.fsum(fits)
    assert acc.report()["rho_spent"] == acc.rho_spent
    small = ZCDPAccountant(cost[0.5] * 2.5)
    refused = model_selection.GridSearchCV(onpair.OffPairStats(bounds=(0, 1), random_state=0, accountant=small),
                                           {"epsilon": [0.5]}, cv=3, error_score="raise")
    with pytest.raises(PrivacyBudgetExceeded):
        refused.fit(X, y)
    assert len(small.events) == 2  # the third fold's fit was refused, before it released anything


def test_a_grid_search_in_several_processes_is_refused_before_any_fit():
    """joblib would pickle the shared accountant into each worker: a second budget per process. Refused."""
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = data(n=90)
    acc = ZCDPAccountant(100.0)
    search = model_selection.GridSearchCV(onpair.OffPairStats(bounds=(0, 1), accountant=acc), {"epsilon": [0.5, 1.0]},
                                          cv=3, n_jobs=2)
    with pytest.raises(Exception) as caught:
        search.fit(X, y)
    chain, error = [], caught.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert any("cannot be pickled" in text for text in chain) and acc.events == ()


def test_the_accountant_history_a_snapshot_stores_keeps_its_labels():
    """The events carry the labels the snapshots have always stored: the ledger of a saved learner is the
    same JSON as before the events (tests/test_golden.py loads the snapshots written before)."""
    X, y = data(n=150)
    learner = onpair.OnPairStrC(bounds=(0, 1), n=150, seed=1).learn_many(X, y)
    ledger = learner._log.accountant.to_dict()
    assert set(ledger) == {"rho_budget", "history"}
    assert ledger["history"] == [[f"release at round {r['round']}", r["rho"]] for r in learner.privacy_report()["releases"]]
    stats = onpair.OnPairStats(bounds=(0, 1), seed=1).learn_many(X, y)
    assert stats.accountant.history == [("continual release of the class statistics", stats.privacy_report()["rho_spent"])]
