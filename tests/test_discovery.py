"""Range discovery in the learners: ``discover_bounds=`` (onpair.core.discovery, onpair.statistics.warmup).

The warm-up boundary (learn_one = learn_many bit for bit wherever the blocks cut the stream), what is
predicted and reported during the warm-up, failed calls that change nothing (during the warm-up and on the
call that ends it, warnings as errors included), snapshots at every stage, the cost of the learner and the
finder together against dp-accounting, the record-level cost of passes, the parameter's checks, the
offline estimator and the river classifier. The finder itself is tested in tests/test_ranges.py; the
hostile-input, convention and persistence suites run every class that takes ``discover_bounds`` once more
with it (tests/public_api.py, ``SWITCHES``).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import warnings
from unittest import mock

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from hypothesis import given, settings
from hypothesis import strategies as st

import onpair
from learner_state import assert_same_state, state_of
from public_api import OFFLINE as PUBLIC_OFFLINE
from public_api import SWITCHES, make_offline
from onpair import OffPairStats, OnPairStats
from onpair.core import discovery
from onpair.core.discovery import (DEFAULT_SHARE, MAX_AUTO_WARMUP, MIN_AUTO_WARMUP, discovery_setting,
                                   range_seed_sequence)
from onpair.evaluation import roc_auc
from onpair.privacy import ZCDPAccountant, eps_from_rho, rho_from_dp
from onpair.privacy.events import ApproxDPRelease, GaussianRelease, leaves
from onpair.privacy.ranges import find_bounds, planned_levels, records_needed
from onpair.privacy.statistics_sensitivity import statistics_sensitivity

# Every estimator with discovery × every parameter and check: the fast tier (make test) runs each check
# once, on values in rotation, and each value at least once (conftest.py); the full tier every pair.
pytestmark = pytest.mark.covering("name", "cls")

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=25)
RHO = rho_from_dp(1.0, 1e-5, method="gaussian")
LOOSE = (0.0, 1000.0)


def stream(n=900, d=3, seed=0):
    """Two Gaussian classes in a 1-wide region of [0, 1000] (1/1000 of the declared box)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = 400.0 + 0.5 + 0.12 * rng.standard_normal((n, d)) + 0.08 * y[:, None]
    return X, y


def learner(**params):
    return OnPairStats(**{"epsilon": 1.0, "bounds": LOOSE, "seed": 3, "discover_bounds": 200, **params})


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


# -- the parameter --------------------------------------------------------------------------------------------

def test_the_setting_of_each_form():
    assert discovery_setting(False) is None and discovery_setting(None) is None
    auto = discovery_setting(True)
    assert auto.warmup is None and auto.share == DEFAULT_SHARE
    assert auto.length(9, RHO) == MIN_AUTO_WARMUP > records_needed(9, 0.2 * RHO) == 388
    assert auto.length(20, RHO) == records_needed(20, 0.2 * RHO) == 579
    assert auto.length(60, RHO) == MAX_AUTO_WARMUP and auto.length(9, RHO, limit=100) == 100
    assert discovery_setting(250).length(9, RHO) == 250
    custom = discovery_setting({"warmup": "auto", "rho_share": 0.1, "bins": [16, 16], "margin": 2})
    assert custom.share == 0.1 and custom.finder["bins"] == (16, 16) and custom.finder["margin"] == 2
    assert custom.length(40, RHO) == records_needed(40, 0.1 * RHO, bins=(16, 16)) > MIN_AUTO_WARMUP


@pytest.mark.parametrize("value, error, words", [
    (0, ValueError, "warm-up length"), (-3, ValueError, "warm-up length"), (2.5, TypeError, "discover_bounds"),
    ("yes", TypeError, "discover_bounds"), ([100], TypeError, "discover_bounds"),
    ({"warmup": 0}, ValueError, "warm-up"), ({"warmup": 1.5}, TypeError, "warm-up"),
    ({"rho_share": 0.0}, ValueError, "rho_share"), ({"rho_share": 1.0}, ValueError, "rho_share"),
    ({"rho_share": "a"}, TypeError, "rho_share"), ({"bins": (1,)}, ValueError, "bins"),
    ({"levels": 5}, ValueError, "levels"), ({"beta": 2.0}, ValueError, "beta"), ({"colour": 1}, ValueError, "colour")])
def test_a_bad_value_names_the_parameter(value, error, words):
    with pytest.raises(error, match=words):
        OnPairStats(bounds=LOOSE, discover_bounds=value)
    with pytest.raises(ValueError, match=words):  # scikit-learn's convention: at fit, a ValueError
        OffPairStats(bounds=LOOSE, discover_bounds=value).fit(*stream(20))


def test_what_discovery_needs():
    with pytest.raises(ValueError, match="declared box"):
        OnPairStats(norm_bound=5.0, discover_bounds=True)
    with pytest.raises(ValueError, match="needs the public bounds"):
        OnPairStats(discover_bounds=True)  # no declared range at all: refused as without discovery
    with pytest.raises(ValueError, match="private"):
        OnPairStats(bounds=LOOSE, private=False, discover_bounds=True)
    with pytest.raises(ValueError, match="horizon"):
        OnPairStats(bounds=LOOSE, horizon=100, discover_bounds=200)
    with pytest.raises(ValueError, match="private"):
        OffPairStats(bounds=LOOSE, private=False, discover_bounds=True).fit(*stream(20))
    short = OnPairStats(bounds=LOOSE, horizon=100, discover_bounds=True, n_features=3)
    assert short._range.length(3) == 100  # the automatic warm-up stops at the horizon


# -- the warm-up boundary -------------------------------------------------------------------------------------

def test_during_the_warm_up_nothing_is_released():
    X, y = stream()
    model = learner(n_features=3)
    prior = model.model
    model.learn_many(X[:150], y[:150])
    report = model.privacy_report()
    assert model.n_seen == 150 and model.n_releases == 0 and report["rho_spent"] == 0.0
    assert report["releases"] == [] and "warm-up: 150 of 200" in report["status"]
    assert np.array_equal(model.model, prior) and np.array_equal(model.model, np.zeros(3))
    assert np.array_equal(model.decision_function(X[:5]), np.zeros(5))  # the data-independent prior
    assert model.feature_bounds.to_dict() == {"lower": 0.0, "upper": 1000.0}
    model.learn_many(X[150:210], y[150:210])
    report = model.privacy_report()
    # the 210 records are fed to the default's block release (mechanism "auto" → "blocks"): blocks 32 and 64
    # completed (ends 32, 96), the next ends at 224
    assert model.release_mechanism == "blocks" and model.n_releases == 2 and report["range_discovery"]["done"]
    assert model.refresh_count == 96
    assert 0 < report["rho_spent"] <= report["rho_budget"]
    lower, upper = model.feature_bounds.lower, model.feature_bounds.upper
    assert np.all(upper - lower < 50) and np.all(lower >= 0) and np.all(upper <= 1000)
    assert report["range_discovery"]["lower"] == lower.tolist()


def _run(blocks, X, y, **params):
    model = learner(**params)
    start = 0
    for stop in blocks + [len(y)]:
        if stop - start == 1:
            model.learn_one(X[start], y[start])
        else:
            model.learn_many(X[start:stop], y[start:stop])
        start = stop
    return model


@SETTINGS
@given(cuts=st.lists(st.integers(0, 400), max_size=6), task=st.sampled_from(["auc", "metric"]))
def test_learn_one_equals_learn_many_across_the_boundary(cuts, task):
    """Any cut of the stream into blocks (single records through learn_one) gives the learner that one
    learn_many gives, bit for bit: the same box, statistics, generators, report."""
    X, y = stream(400)
    params = {} if task == "auc" else {"task": "metric", "classes": [-1, 1]}
    whole = quiet(_run, [], X, y, **params)
    pieces = quiet(_run, sorted(set(cuts)), X, y, **params)
    assert_same_state(state_of(whole), state_of(pieces))


def test_one_at_a_time_equals_one_block():
    X, y = stream(300)
    single = learner()
    for i in range(300):
        single.learn_one(X[i], y[i])
    assert_same_state(state_of(learner().learn_many(X, y)), state_of(single))


def test_the_finder_has_its_own_random_stream():
    """The model's noise comes from the same stream as without discovery (the same draws, in the same
    order), and the finder's box is the one find_bounds gives with the learner's spawned stream."""
    X, y = stream(400)
    with_discovery = learner().learn_many(X, y)
    plain = OnPairStats(epsilon=1.0, bounds=LOOSE, seed=3).learn_many(X, y)
    assert with_discovery._noise_rng.bit_generator.state == plain._noise_rng.bit_generator.state
    rng = np.random.Generator(np.random.PCG64(range_seed_sequence(np.random.SeedSequence(3))))
    found = find_bounds(X[:200], 0.0, 1000.0, 0.2 * RHO, random_state=rng)
    np.testing.assert_array_equal(with_discovery.feature_bounds.lower, found.lower)
    np.testing.assert_array_equal(with_discovery.feature_bounds.upper, found.upper)


def test_later_records_outside_the_box_are_clipped_and_counted_without_a_warning():
    X, y = stream(400)
    model = learner().learn_many(X[:200], y[:200])
    clipped_before = model.privacy_report()["n_clipped"]
    far = X[200:260].copy()
    far[:, 0] = 900.0  # inside the declared box, outside the discovered one
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.learn_many(far, y[200:260])
        model.learn_one(far[0], 1)
    assert model.privacy_report()["n_clipped"] == clipped_before + 61


def test_records_outside_the_declared_box_warn_during_the_warm_up():
    X, y = stream(300)
    X[5, 1] = 5000.0
    model = learner()
    with pytest.warns(UserWarning, match="declared feature bounds"):
        model.learn_many(X[:100], y[:100])


# -- failed calls change nothing ------------------------------------------------------------------------------

@pytest.mark.parametrize("stage", [0, 50, 199])
@pytest.mark.parametrize("bad", ["label", "nan", "shape"])
def test_a_failed_call_changes_nothing(stage, bad):
    """During the warm-up and on the call that would end it: nothing held, discovered, spent or drawn."""
    X, y = stream(400)
    model = learner().learn_many(X[:stage], y[:stage]) if stage else learner()
    block, labels = X[stage:stage + 60].copy(), y[stage:stage + 60].copy()
    if bad == "label":
        labels = labels.astype(object)
        labels[-1] = "spam"
    elif bad == "nan":
        block[-1, 2] = np.nan
    else:
        block = block[:, :2] if stage else block[:, :, None]  # a fresh learner takes any d: a 3-D block then
    before = state_of(model)
    with pytest.raises((ValueError, TypeError)):
        model.learn_many(block, labels)
    with pytest.raises((ValueError, TypeError)):
        model.learn_one(block[-1], labels[-1])
    assert_same_state(before, state_of(model))


def test_a_warning_raised_as_an_error_at_the_boundary_changes_nothing():
    X, y = stream(400)
    model = learner().learn_many(X[:150], y[:150])
    block = X[150:260].copy()
    block[10, 0] = -50.0  # outside the declared box: the clipping warning, an error here
    before = state_of(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            model.learn_many(block, y[150:260])
    assert_same_state(before, state_of(model))
    quiet(model.learn_many, block, y[150:260])
    assert model.privacy_report()["range_discovery"]["done"]


def test_the_frozen_warning_is_issued_before_anything_changes():
    X, y = stream(400)
    model = learner(horizon=250).learn_many(X[:150], y[:150])
    before = state_of(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the 200-record warm-up at d = 3 runs 2 of 3 levels (224 needed): that warning is not this test's
        warnings.simplefilter("ignore", onpair.NoiseDominatedWarning)
        with pytest.raises(onpair.PrivacyWarning):
            model.learn_many(X[150:300], y[150:300])
    assert_same_state(before, state_of(model))


# -- a stream shorter than the warm-up --------------------------------------------------------------------------

def test_finish_warmup_discovers_on_what_is_held():
    X, y = stream(400)
    model = learner().learn_many(X[:120], y[:120]).finish_warmup()
    report = model.privacy_report()
    assert report["range_discovery"]["done"] and report["range_discovery"]["n_records"] == 120
    assert model.n_releases == 2 and report["rho_spent"] > 0  # the 120 records fed: blocks ending 32, 96
    assert model.finish_warmup() is model and model.privacy_report() == report  # done: nothing more
    model.learn_many(X[120:], y[120:])
    assert model.n_releases == 3 and model.refresh_count == 224  # 400 records: the block ending 224 too


def test_finish_warmup_with_too_few_records_gives_the_model_the_whole_budget():
    X, y = stream(10)
    model = learner().learn_many(X[:3], y[:3]).finish_warmup()
    report = model.privacy_report()
    assert report["range_discovery"]["rho_spent"] == 0.0  # no level can clear its threshold: the declared box
    assert model.feature_bounds.lower.tolist() == [0.0] * 3 and model.feature_bounds.upper.tolist() == [1000.0] * 3
    assert report["rho_spent"] == pytest.approx(report["rho_budget"], rel=1e-8)  # the mechanism's own margin


def test_finish_warmup_with_nothing_held_keeps_the_declared_box(tmp_path):
    model = learner().finish_warmup()
    assert model.privacy_report()["rho_spent"] == 0.0 and model.feature_bounds.kind == "box"
    model.learn_many(*stream(50))
    assert model.privacy_report()["rho_spent"] == pytest.approx(RHO, rel=1e-8)
    model.save(tmp_path / "f")
    assert_same_state(state_of(model), state_of(onpair.load(tmp_path / "f")))
    assert OnPairStats(bounds=LOOSE).finish_warmup().n_seen == 0  # no discovery: nothing to do


# -- snapshots ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stops", [(0,), (1,), (120,), (199,), (200,), (120, 199, 250)])
def test_a_snapshot_at_any_stage_resumes_exactly(stops, tmp_path):
    X, y = stream(400)
    whole = learner().learn_many(X, y)
    model, start = learner(), 0
    for stop in stops:
        model.learn_many(X[start:stop], y[start:stop])
        model.save(tmp_path / "s")
        resumed = onpair.load(tmp_path / "s")
        assert_same_state(state_of(model), state_of(resumed))
        model, start = resumed, stop
    model.learn_many(X[start:], y[start:])
    assert_same_state(state_of(whole), state_of(model))


def test_the_river_classifier_resumes_mid_warm_up(tmp_path):
    from onpair.river import PrivatePairwiseClassifier
    X, y = stream(300)
    names = ["a", "b", "c"]
    rows = [(dict(zip(names, map(float, x))), bool(label > 0)) for x, label in zip(X, y)]

    def make():
        return PrivatePairwiseClassifier(bounds=LOOSE, features=names, seed=1, discover_bounds=200)
    whole, half = make(), make()
    for x, label in rows:
        whole.learn_one(x, label)
    for x, label in rows[:120]:
        assert half.predict_proba_one(x) == {False: 0.5, True: 0.5}  # the prior during the warm-up
        half.learn_one(x, label)
    with pytest.raises(TypeError):
        __import__("copy").deepcopy(half)  # it holds records: no copies
    half.save(tmp_path / "c")
    resumed = onpair.load(tmp_path / "c")
    assert resumed.discover_bounds == 200
    for x, label in rows[120:]:
        resumed.learn_one(x, label)
    assert np.array_equal(resumed.model, whole.model)
    assert resumed.predict_proba_one(rows[0][0]) == whole.predict_proba_one(rows[0][0]) != {False: 0.5, True: 0.5}


def test_an_unseeded_learner_detaches_the_finders_stream_when_saved(tmp_path):
    X, y = stream(100)
    model = OnPairStats(bounds=LOOSE, discover_bounds=200).learn_many(X, y)
    before = model._range.rng.bit_generator.state
    model.save(tmp_path / "u")
    assert model._range.rng.bit_generator.state != before


@pytest.mark.parametrize("edit, match", [
    (lambda s, a: s["range_discovery"].update(n_held=s["range_discovery"]["n_held"] - 1), "range_discovery"),
    (lambda s, a: s["range_discovery"].update(done=True), "range_discovery"),
    (lambda s, a: s["range_discovery"].update(found={"rho": 0.0, "sigmas": [], "n_records": 50}), "not done"),
    (lambda s, a: a.__setitem__("range_discovery.codes", a["range_discovery.codes"] + 5), "class code"),
])
def test_an_edited_warm_up_is_refused(edit, match, tmp_path):
    from onpair.core.snapshot import learner_document, rebuild_learner
    X, y = stream(100)
    model = learner().learn_many(X[:50], y[:50])
    arrays = {}
    name, params, config, scalars = learner_document(model, arrays, tmp_path / "x")
    edit(scalars, arrays)
    with pytest.raises(ValueError, match=match):
        rebuild_learner(OnPairStats, {"params": params, "config": config, "state": scalars}, arrays, "x")


def test_an_edited_discovery_is_refused(tmp_path):
    from onpair.core.snapshot import learner_document, rebuild_learner
    X, y = stream(300)
    model = learner().learn_many(X, y)
    for key, change in [("rho", lambda v: v * 0.5), ("sigmas", lambda v: [s * 2 for s in v])]:
        arrays = {}
        name, params, config, scalars = learner_document(model, arrays, tmp_path / "x")
        found = scalars["range_discovery"]["found"]
        found[key] = change(found[key])
        with pytest.raises(ValueError, match="range_discovery"):
            rebuild_learner(OnPairStats, {"params": params, "config": config, "state": scalars}, arrays, "x")
    arrays = {}
    name, params, config, scalars = learner_document(model, arrays, tmp_path / "x")
    arrays["range_discovery.lower"] = arrays["range_discovery.lower"] - 2000.0  # outside the declared box
    with pytest.raises(ValueError, match="inside the declared"):
        rebuild_learner(OnPairStats, {"params": params, "config": config, "state": scalars}, arrays, "x")


# -- the cost -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d, warmup", [(3, 200), (12, 500)])
def test_the_cost_of_learner_and_finder_against_dp_accounting(d, warmup):
    """Brute force: each finder level's sensitivity √(2d) is attained by the worst replacement (first bin ↔
    last bin of every feature, checked here on the declared box), the model's release is a Gaussian
    mechanism of noise multiplier σ/(Δκ); their composition, accounted by dp-accounting's PLD accountant,
    gives the ε the report gives, at most the ε asked for; and the zCDP costs add up to rho_spent ≤ ρ."""
    from onpair.privacy.ranges import range_histograms
    X, y = stream(warmup + 100, d=d)
    model = learner(discover_bounds=warmup).learn_many(X, y)
    report = model.privacy_report()
    finder = [r for r in report["releases"] if r["what"].startswith("range histogram")]
    (release,) = [r for r in report["releases"] if r["event"] == "continual"]
    assert [r["event"] for r in report["releases"]] == ["gaussian"] * len(finder) + ["continual"]
    assert len(finder) == model._range.found.params["levels_run"] >= 1
    worst = 0.0
    lower, upper = np.zeros(d), np.full(d, 1000.0)
    base = X[:warmup].copy()
    for first in (0.0, 500.0, 1000.0):
        for second in (0.0, 999.0, 1000.0, 400.5):
            A, B = base.copy(), base.copy()
            A[0], B[0] = first, second
            diff = range_histograms(B, lower, upper, 32) - range_histograms(A, lower, upper, 32)
            worst = max(worst, float(np.sum(diff.astype(float) ** 2)))
    assert worst == 2 * d
    for row in finder:
        assert row["sensitivity"] ** 2 == pytest.approx(worst) and row["rho"] == pytest.approx(
            worst / (2 * row["sigma"] ** 2), rel=1e-12)
    delta_stats = statistics_sensitivity(0.8, 1.0, 0.6)
    model_rho = delta_stats ** 2 * release["kappa2"] / (2 * release["sigma"] ** 2)
    assert release["rho"] == pytest.approx(model_rho, rel=1e-9)
    assert report["rho_spent"] == pytest.approx(sum(r["rho"] for r in finder) + release["rho"], rel=1e-12)
    assert report["rho_spent"] <= report["rho_budget"] == RHO
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    events = [dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"]) for r in finder]
    events.append(dp_accounting.GaussianDpEvent(release["sigma"] / (delta_stats * math.sqrt(release["kappa2"]))))
    accountant.compose(dp_accounting.ComposedDpEvent(events))
    theirs = accountant.get_epsilon(1e-5)
    assert report["epsilon_spent"] == pytest.approx(theirs, abs=3e-3)
    assert theirs <= 1.0 + 3e-3


def test_the_record_level_cost_of_passes():
    X, y = stream(300)
    model = learner()
    for _ in range(2):
        model.learn_many(X, y)  # two same-order passes of n = 300 ≥ m = 200: the finder saw each record once
    rho_range = model._range.found.rho
    level = model.privacy_report(passes=2)["record_level"]
    plain = OnPairStats(epsilon=1.0, bounds=LOOSE, seed=3)
    for _ in range(2):
        plain.learn_many(X, y)
    scale = (RHO - rho_range) * (1 - 1e-12) / RHO  # the model's share: its record-level cost scales with it
    assert level["rho"] == pytest.approx(plain.privacy_report(passes=2)["record_level"]["rho"] * scale + rho_range,
                                         rel=1e-6)
    short = learner()
    for _ in range(3):
        short.learn_many(X[:100], y[:100])  # n = 100 < m = 200: two copies of a record in the finder's block
    found = short._range.found
    report = short.privacy_report(passes=3)
    level = report["record_level"]
    assert "2 copies" in level["bound"]
    # the headline includes the finder's copies too (the figure of record_level after they are added)
    assert report["rho_spent"] == level["rho"] and report["epsilon_spent"] == level["epsilon"]
    anywhere = short.privacy_report(passes=3, order="any")["record_level"]
    assert anywhere["rho"] == pytest.approx(9 * short.privacy_report()["rho_spent"], rel=1e-9)
    assert found.rho > 0 and level["rho"] >= 4 * found.rho


# -- what it buys (one seeded stream; the benchmarks are in bench/ranges.py) --------------------------------------

def test_a_loose_box_with_discovery_gets_most_of_the_tight_box_back():
    X, y = stream(3000, d=5, seed=7)
    test_X, test_y = stream(2000, d=5, seed=8)
    scores = {}
    for name, params in {"tight": {"bounds": (399.5, 401.5), "discover_bounds": False},
                         "loose": {"discover_bounds": False}, "discovered": {"discover_bounds": True}}.items():
        model = quiet(learner(**params).learn_many, X, y)
        scores[name] = roc_auc(test_y, model.decision_function(test_X))
    assert scores["loose"] < 0.65 and scores["discovered"] > scores["tight"] - 0.05, scores


@pytest.mark.parametrize("kind", ["pairwise", "multiclass"])
def test_the_river_classifiers_predict_from_the_box_found_after_the_warm_up(kind):
    """The README's promise for river (section "Which bounds do I declare"): the prior 0.5 during the warm-up,
    then predictions read in the box found, so the progressive AUC of the records after the warm-up leaves
    the loose box's chance level. Issue 31: the wrappers kept the declared box's rows after the warm-up and
    predicted at chance (0.50) while the learner itself was right."""
    from onpair.river import PrivateClassifier, PrivatePairwiseClassifier
    X, y = stream(2000, d=3, seed=11)
    names = ["a", "b", "c"]
    rows = [(dict(zip(names, map(float, x))), bool(label > 0)) for x, label in zip(X, y)]
    extra = {} if kind == "pairwise" else {"classes": [False, True]}
    make = PrivatePairwiseClassifier if kind == "pairwise" else PrivateClassifier
    auc = {}
    for name, params in {"tight": {"bounds": (399.5, 401.5)}, "loose": {"bounds": LOOSE},
                         "found": {"bounds": LOOSE, "discover_bounds": 200}}.items():
        model = make(features=names, seed=0, **extra, **params)
        scores = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for x, label in rows:
                proba = model.predict_proba_one(x)
                if name == "found" and len(scores) < 200:
                    assert proba == {False: 0.5, True: 0.5}  # the prior while the records are held
                scores.append(proba[True])
                model.learn_one(x, label)
        auc[name] = roc_auc(y[200:] > 0, np.array(scores[200:]))
    assert auc["loose"] < 0.6 and auc["tight"] > 0.8, auc  # the stream: chance in the loose box, not in the tight
    assert auc["found"] > 0.7 and auc["found"] > auc["loose"] + 0.15, auc


# -- offline ----------------------------------------------------------------------------------------------------

def test_offpairstats_finds_the_box_on_the_first_records():
    X, y = stream(3000, d=5, seed=1)
    est = OffPairStats(bounds=LOOSE, random_state=4, discover_bounds=500).fit(X, y)
    report = est.privacy_report_
    assert report["range_discovery"]["n_records"] == 500 and len(report["releases"]) == 4
    assert [r["what"] for r in report["releases"]][-1] == "the class statistics"
    assert report["rho_spent"] <= report["rho_budget"] and report["epsilon_spent"] <= 1.0
    seq = np.random.SeedSequence(4)
    found = find_bounds(X[:500], 0.0, 1000.0, 0.2 * RHO,
                        random_state=np.random.Generator(np.random.PCG64(range_seed_sequence(seq))))
    np.testing.assert_array_equal(est.bounds_.lower, found.lower)
    loose = OffPairStats(bounds=LOOSE, random_state=4).fit(X, y)
    assert est.score(X, y) > loose.score(X, y) + 0.1
    assert est.n_clipped_ > 0  # the box holds the bulk, not all: clipping is the mechanism's, counted
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and not warned about
        OffPairStats(bounds=LOOSE, random_state=4, discover_bounds=500).fit(X, y)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"]) for r in report["releases"]]))
    assert accountant.get_epsilon(1e-5) == pytest.approx(report["epsilon_spent"], abs=3e-3)


def test_offpairstats_with_fewer_records_than_the_warm_up_uses_them_all():
    X, y = stream(120)
    est = OffPairStats(bounds=LOOSE, random_state=0, discover_bounds=True).fit(X, y)
    assert est.privacy_report_["range_discovery"]["n_records"] == 120


def test_offpairstats_refuses_discovery_on_dask_data():
    da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
    X, y = stream(100)
    with pytest.raises(ValueError, match="in memory"):
        OffPairStats(bounds=LOOSE, discover_bounds=True).fit(da.from_array(X, chunks=50), da.from_array(y, chunks=50))


# -- river ------------------------------------------------------------------------------------------------------

def test_the_river_classifier_passes_discovery_to_the_default_learner_only():
    from onpair.river import PrivatePairwiseClassifier
    model = PrivatePairwiseClassifier(bounds=LOOSE, features=["a"], discover_bounds=True)
    assert model._inner._range is not None and model.clone().discover_bounds is True
    with pytest.raises(ValueError, match="discover_bounds"):
        PrivatePairwiseClassifier(learner="onpairstrc", bounds=LOOSE, discover_bounds=True)
    with pytest.raises(ValueError, match="learner_params"):
        PrivatePairwiseClassifier(bounds=LOOSE, learner_params={"discover_bounds": True})
    short = PrivatePairwiseClassifier(bounds=LOOSE, features=["a", "b", "c"], seed=0, discover_bounds=200)
    X, y = stream(50)
    for x, label in zip(X, y):
        short.learn_one(dict(zip("abc", map(float, x))), bool(label > 0))
    assert short.finish_warmup().privacy_report()["range_discovery"]["n_records"] == 50


def test_a_snapshot_written_before_discovery_existed_loads(tmp_path):
    """Files without the parameter resume with discover_bounds=False (core.snapshot.LEGACY_PARAMS)."""
    from onpair.core.snapshot import learner_document, rebuild_learner
    X, y = stream(100)
    model = OnPairStats(bounds=(399.0, 402.0), seed=0).learn_many(X, y)
    arrays = {}
    name, params, config, scalars = learner_document(model, arrays, tmp_path / "x")
    del params["discover_bounds"]
    resumed = rebuild_learner(OnPairStats, {"params": params, "config": config, "state": scalars}, arrays, "x")
    assert resumed.discover_bounds is False
    assert_same_state(state_of(model), state_of(resumed))


def test_the_river_metric_transformer_learns_through_a_discovering_learner():
    from onpair.river import MetricTransformer
    X, y = stream(300)
    learner = OnPairStats(task="metric", classes=[-1, 1], bounds=LOOSE, seed=0, discover_bounds=200, n_features=3)
    step = MetricTransformer(learner, features=["a", "b", "c"])
    rows = [dict(zip("abc", map(float, x))) for x in X]
    before = step.transform_one(rows[0])
    for x, label in zip(rows[:150], y[:150]):
        step.learn_one(x, int(label))
    assert step.transform_one(rows[0]) == before  # the prior metric during the warm-up
    for x, label in zip(rows[150:], y[150:]):
        step.learn_one(x, int(label))
    assert learner.privacy_report()["range_discovery"]["done"] and step.transform_one(rows[0]) != before


def test_a_shared_accountant_is_charged_the_finder_and_the_release_or_refuses_both():
    from onpair.privacy import PrivacyBudgetExceeded, ZCDPAccountant
    X, y = stream(300)
    shared = ZCDPAccountant(RHO)
    model = learner(accountant=shared).learn_many(X, y)
    assert [e.label for e in shared.events][:-1] == [r["what"] for r in model.privacy_report()["releases"]][:-1]
    assert shared.rho_spent == pytest.approx(model.privacy_report()["rho_spent"], rel=1e-12)
    poor = ZCDPAccountant(0.5 * RHO)  # pays for the finder, not for the release after it
    model = learner(accountant=poor).learn_many(X[:150], y[:150])
    before = state_of(model)
    with pytest.raises(PrivacyBudgetExceeded):
        model.learn_many(X[150:], y[150:])
    assert_same_state(before, state_of(model))
    assert poor.rho_spent == 0.0


# -- hostile streams through the learners ------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0.0, 1000.0, 1e6])
def test_a_warm_up_of_one_value_everywhere_gives_a_box_inside_the_declared_one(value):
    """Every warm-up record equal, at a declared bound or beyond it (clipped to the bound, and warned about):
    the learner finishes its warm-up, the box found holds the (clipped) value, is of positive width and lies
    inside the declared box; later records far from it are clipped to it and counted."""
    X = np.full((300, 3), value)
    y = np.where(np.arange(300) % 2 == 0, 1, -1)
    model = quiet(learner(discover_bounds=200).learn_many, X, y)
    held = min(value, 1000.0)
    lower, upper = model.feature_bounds.lower, model.feature_bounds.upper
    assert np.all(lower <= held) and np.all(held <= upper) and np.all(lower < upper)
    assert np.all(lower >= 0.0) and np.all(upper <= 1000.0)
    assert np.all(np.isfinite(model.model))
    assert np.all(upper - lower < 100.0)  # the box found is narrow: 500 lies outside it
    before = model.privacy_report()["n_clipped"]
    quiet(model.learn_one, np.full(3, 500.0), 1)
    assert model.privacy_report()["n_clipped"] == before + 1


def test_nan_in_a_warm_up_block_or_an_offline_fit_is_refused_and_changes_nothing():
    X, y = stream(300)
    model = learner(discover_bounds=200)
    quiet(model.learn_many, X[:50], y[:50])
    before = state_of(model)
    bad = X[50:250].copy()
    bad[120, 1] = np.nan  # a record of the block that would end the warm-up
    with pytest.raises(ValueError, match="finite|NaN|nan"):
        model.learn_many(bad, y[50:250])
    assert_same_state(before, state_of(model))
    est = OffPairStats(bounds=LOOSE, random_state=0, discover_bounds=100)
    X_bad = X.copy()
    X_bad[10, 0] = np.inf  # inside the finder's block
    with pytest.raises(ValueError, match="finite|inf"):
        est.fit(X_bad, y)
    assert not hasattr(est, "coef_")


# -- the classifiers (issue 23) ----------------------------------------------------------------------------------

def three_classes(n=600, seed=0):
    """Three Gaussian classes in a 1-wide region of [0, 1000]."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n)
    X = 400.2 + 0.1 * rng.standard_normal((n, 3)) + 0.5 * np.eye(3)[codes]
    return X, np.array(["a", "b", "c"])[codes]


def test_the_multiclass_river_classifier_holds_predicts_the_prior_and_resumes(tmp_path):
    from onpair.river import PrivateClassifier
    X, labels = three_classes(2000)
    names = ["u", "v", "w"]
    rows = [(dict(zip(names, map(float, x))), str(label)) for x, label in zip(X, labels)]

    def make():
        return PrivateClassifier(classes=["a", "b", "c"], bounds=LOOSE, features=names, seed=2, discover_bounds=200)
    whole, half = make(), make()
    for x, label in rows:
        whole.learn_one(x, label)
    for x, label in rows[:150]:
        assert half.predict_proba_one(x) == {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}  # the prior during the warm-up
        half.learn_one(x, label)
    half.save(tmp_path / "m")
    resumed = onpair.load(tmp_path / "m")
    assert resumed.discover_bounds == 200
    for x, label in rows[150:]:
        resumed.learn_one(x, label)
    assert resumed.predict_proba_one(rows[0][0]) == whole.predict_proba_one(rows[0][0])
    report = whole.privacy_report()
    levels = planned_levels(200, 3, DEFAULT_SHARE * RHO)
    assert levels >= 1 and [r["what"] for r in report["releases"]] == (
        [f"range histogram, level {k} (32 bins)" for k in range(1, levels + 1)]
        + ["continual release of the class statistics"])
    assert report["epsilon_spent"] <= 1.0 and report["range_discovery"]["done"]
    accuracy = np.mean([whole.predict_one(x) == label for x, label in rows[200:]])
    loose = PrivateClassifier(classes=["a", "b", "c"], bounds=LOOSE, features=names, seed=2)
    for x, label in rows:
        loose.learn_one(x, label)
    assert accuracy > np.mean([loose.predict_one(x) == label for x, label in rows[200:]]) + 0.2



@pytest.mark.parametrize("C", [3, 5, 6, 7, 9, 10])
def test_the_multiclass_prior_during_the_warm_up_is_exactly_one_over_c(C):
    """During the warm-up (records held, nothing released) predict_proba_one and predict_proba_many give exactly
    the float 1.0 / C for every class (exp(log(1/C)) of the empty release's posterior is not, for C = 7, 10, ...),
    their sum 1 up to rounding; once the warm-up ends, predictions come from the release."""
    pd = pytest.importorskip("pandas")
    from onpair.river import PrivateClassifier
    rng = np.random.default_rng(C)
    names = ["u", "v", "w"]
    classes = [f"k{c}" for c in range(C)]
    model = PrivateClassifier(classes=classes, bounds=LOOSE, features=names, seed=1, discover_bounds=30)
    rows = [(dict(zip(names, map(float, 400.0 + rng.standard_normal(3)))), classes[i % C]) for i in range(40)]
    for x, label in rows[:29]:
        model.learn_one(x, label)
        p = model.predict_proba_one(x)
        assert list(p) == classes and all(type(v) is float and v == 1.0 / C for v in p.values())
        assert math.isclose(sum(p.values()), 1.0, rel_tol=0.0, abs_tol=C * 2.0 ** -52)
    frame = pd.DataFrame([x for x, _ in rows[:4]])
    assert (model.predict_proba_many(frame).to_numpy() == 1.0 / C).all()
    for x, label in rows[29:]:
        model.learn_one(x, label)
    assert model.privacy_report()["range_discovery"]["done"]
    assert any(v != 1.0 / C for v in model.predict_proba_one(rows[-1][0]).values())

def test_offpairstats_classify_finds_the_box_and_spends_one_budget():
    X, labels = three_classes(3000, seed=1)
    est = OffPairStats(task="classify", classes=["a", "b", "c"], bounds=LOOSE, random_state=0,
                       discover_bounds=500).fit(X, labels)
    loose = OffPairStats(task="classify", classes=["a", "b", "c"], bounds=LOOSE, random_state=0).fit(X, labels)
    report = est.privacy_report_
    assert report["range_discovery"]["n_records"] == 500 and report["rho_spent"] <= report["rho_budget"]
    assert est.score(X, labels) > loose.score(X, labels) + 0.2
    np.testing.assert_allclose(est.predict_proba(X[:5]).sum(axis=1), 1.0)


# -- issue 24, item 3: discover_bounds for every offline estimator (a share of (ε, δ) to the finder) ----------

OFFLINE = [
    pytest.param(onpair.OffPairStrC, {}, id="OffPairStrC"),
    pytest.param(onpair.OffPairC, {}, id="OffPairC"),
    pytest.param(onpair.GradientPerturbedGD, {"T": 3}, id="GradientPerturbedGD"),
    pytest.param(onpair.ObjectivePerturbedLogistic, {}, id="ObjectivePerturbedLogistic"),
    pytest.param(onpair.ApproxMinimaPerturbedLogistic, {}, id="ApproxMinimaPerturbedLogistic"),
    pytest.param(onpair.OutputPerturbedSGD, {"epsilon": 8.0, "T": 2000}, id="OutputPerturbedSGD"),
]


def off_centre(n=2000, d=3, seed=0):
    """Two Gaussian classes (unit spread, means 1.6 apart along (1, −1, 0.5)) around 400 in [0, 1000]^d: the
    data span ≈ 1/150 of the declared box, off its centre."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = 400.0 + rng.standard_normal((n, d)) + 1.6 * y[:, None] * np.array([1.0, -1.0, 0.5][:d])
    return X, y


def offline_auc(cls, kwargs, bounds, discover, seed):
    X, y = off_centre(seed=seed)
    args = dict({"epsilon": 1.0, "delta": 1e-5, "classes": [0, 1], "random_state": seed}, **kwargs)
    est = quiet(cls(bounds=bounds, discover_bounds=discover, **args).fit, X, y)
    return roc_auc(y == 1, est.decision_function(X)), est


@pytest.mark.parametrize("cls, kwargs", OFFLINE)
def test_each_offline_estimator_with_discovery_gets_close_to_its_tight_box_auc(cls, kwargs):
    """Mean AUC over 3 seeds (n = 2,000, d = 3, ε = 1, δ = 1e-5; OutputPerturbedSGD at ε = 8, its paper's σ
    drowns ε = 1): the declared box [0, 1000]^3 with discovery is within 0.06 of the tight box (the data's
    own min/max, an oracle). 0.06: the measured gaps are 0.008–0.022 (0.2 of ε and δ to the finder, a box
    cut to the bulk), so 0.06 is about three times the largest; the loose box without discovery loses
    0.49–0.74 for the gradient-, objective- and approximate-minima-perturbed estimators (tight 0.954; the
    GIGA and output-perturbed ones, whose noise is set by the radius, lose 0.01–0.03)."""
    seeds = (0, 1, 2)
    X, _ = off_centre()
    tight = (X.min(axis=0), X.max(axis=0))
    tight_auc = np.mean([offline_auc(cls, kwargs, tight, False, s)[0] for s in seeds])
    found_auc = np.mean([offline_auc(cls, kwargs, (0.0, 1000.0), True, s)[0] for s in seeds])
    assert found_auc >= tight_auc - 0.06, (tight_auc, found_auc)


def test_offline_discovery_budget_against_dp_accounting():
    """The split and its total: the finder gets ε_f = 0.2ε, δ_f = 0.2δ (its ρ by the exact Gaussian
    conversion), the model (ε − ε_f, δ − δ_f). The finder is charged as its levels, Gaussian releases, so with
    OffPairC's Gaussian release every event has a ρ: rho_spent is their sum, within rho_budget = ρ_f + the
    model's, and epsilon_spent their exact Gaussian conversion at δ. Independently, dp-accounting's PLD
    accountant: the levels (noise multiplier σ/√(2d)) give ε_f at δ_f, the model (σ/Δ) ε − ε_f at δ − δ_f, and
    all of them composed give epsilon_spent at δ, below the basic composition ε_f + (ε − ε_f) = ε (0.816 here:
    the split is planned by basic composition, the accounting composes the Gaussians exactly)."""
    X, y = off_centre(n=1500)
    epsilon, delta = 1.0, 1e-5
    est = quiet(onpair.OffPairC(epsilon=epsilon, delta=delta, bounds=(0.0, 1000.0), classes=[0, 1], random_state=0,
                                discover_bounds=True).fit, X, y)
    report = est.privacy_report_
    found = report["range_discovery"]
    assert found["epsilon"] == 0.2 * epsilon and found["delta"] == 0.2 * delta
    assert found["rho_budget"] == rho_from_dp(0.2 * epsilon, 0.2 * delta, method="gaussian")
    assert delta * (1 - 1e-12) <= report["delta_spent"] <= delta
    assert found["model_epsilon"] + found["epsilon"] <= epsilon and found["model_delta"] + found["delta"] <= delta
    *finder, model = report["releases"]
    levels = found["levels"]
    assert len(finder) == len(levels) >= 1 and model["event"] == "gaussian"
    assert [r["event"] for r in finder] == ["gaussian"] * len(levels)
    assert [(r["sigma"], r["sensitivity"], r["rho"]) for r in finder] == \
        [(r["sigma"], r["sensitivity"], r["rho"]) for r in levels]
    assert sum(r["rho"] for r in levels) <= found["rho_budget"]
    assert report["accounting"] == "gaussian"
    assert report["rho_spent"] == pytest.approx(math.fsum(r["rho"] for r in report["releases"]), rel=1e-15)
    assert report["rho_spent"] <= report["rho_budget"]
    assert report["epsilon_spent"] == eps_from_rho(report["rho_spent"], delta, method="gaussian")
    assert report["epsilon_spent"] <= found["epsilon"] + found["model_epsilon"]

    def pld_epsilon(rows, at):
        accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
        accountant.compose(dp_accounting.ComposedDpEvent(
            [dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"]) for r in rows]))
        return accountant.get_epsilon(at)

    eps_finder = pld_epsilon(levels, found["delta"])
    assert eps_finder == pytest.approx(found["epsilon"], abs=3e-3)
    eps_model = pld_epsilon([model], found["model_delta"])
    assert eps_model == pytest.approx(found["model_epsilon"], abs=3e-3)
    eps_all = pld_epsilon(report["releases"], delta)
    assert eps_all == pytest.approx(report["epsilon_spent"], abs=3e-3)
    assert eps_all <= eps_finder + eps_model - 0.15  # zCDP composition, not basic: 0.816 against 1.0


@pytest.mark.parametrize("cls", [onpair.ObjectivePerturbedLogistic, onpair.ApproxMinimaPerturbedLogistic])
def test_offline_discovery_with_an_approximate_dp_model_adds_the_finders_epsilon(cls):
    """(ε, δ) mechanisms: the finder's levels (Gaussian) are composed with the model's (ε, δ) event by the rule
    of epsilon_of: the Gaussian events' ε at the δ the model's (ε, δ) event leaves, plus its ε. For objective
    perturbation that is ε_f (at δ_f) plus the model's own ε, basic composition; AMP's output noise is Gaussian
    too and composes with the levels in zCDP, so less. Either way at most ε_f + the model's ε, that model's ε
    being what the same model fitted without discovery at (ε − ε_f, δ − δ_f) in the box found reports;
    dp-accounting's PLD accountant gives the Gaussian part."""
    X, y = off_centre(n=1000)
    est = quiet(cls(epsilon=1.0, delta=1e-5, bounds=(0.0, 1000.0), classes=[0, 1], random_state=3,
                    discover_bounds=300).fit, X, y)
    report = est.privacy_report_
    found = report["range_discovery"]
    assert found["warmup"] == 300
    alone = quiet(cls(epsilon=found["model_epsilon"], delta=found["model_delta"], bounds=(found["lower"], found["upper"]),
                      classes=[0, 1], random_state=3).fit, X, y)
    np.testing.assert_array_equal(alone.coef_, est.coef_)  # the same seed, the same box: the same model
    basic = found["epsilon"] + alone.privacy_report_["epsilon_spent"]
    assert report["epsilon_spent"] <= basic * (1 + 1e-12) and report["epsilon_spent"] <= 1.0
    (approximate,) = [r for r in report["releases"] if r["event"] == "approximate_dp"]
    gaussian = [r for r in report["releases"] if r["event"] == "gaussian"]
    assert len(gaussian) == len(found["levels"]) + (cls is onpair.ApproxMinimaPerturbedLogistic)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"]) for r in gaussian]))
    theirs = accountant.get_epsilon(1e-5 - approximate["delta"]) + approximate["epsilon"]
    assert report["epsilon_spent"] == pytest.approx(theirs, abs=3e-3)
    if cls is onpair.ObjectivePerturbedLogistic:  # the levels alone at δ_f: ε_f, up to the σ margin 1e-9
        assert report["epsilon_spent"] == pytest.approx(basic, rel=1e-8)
    else:  # the levels and the output noise composed in zCDP: well below basic composition
        assert report["epsilon_spent"] < basic - 0.02


def test_offline_discovery_charges_a_shared_accountant_once_or_changes_nothing():
    """The finder's levels are zCDP events: a ρ-only accountant takes a fit with discovery of an estimator with
    a Gaussian release (charged the levels and the release, the report's rho_spent), as one with an (ε, δ)
    budget does; an (ε, δ) estimator is refused by a ρ-only accountant before the finder runs (naming from_dp); a budget that
    cannot pay refuses the fit and changes nothing."""
    from onpair.privacy import PrivacyBudgetExceeded, ZCDPAccountant
    X, y = off_centre(n=800)
    rho_only = ZCDPAccountant(10.0)
    est = quiet(onpair.OffPairC(bounds=(0.0, 1000.0), classes=[0, 1], random_state=0, discover_bounds=True,
                                accountant=rho_only).fit, X, y)
    assert [e.label for e in rho_only.events] == [e.label for e in est.privacy_report_.events]
    assert len(rho_only.events) == len(est.privacy_report_["range_discovery"]["levels"]) + 1
    assert rho_only.rho_spent == pytest.approx(est.privacy_report_["rho_spent"], rel=1e-12)
    shared = ZCDPAccountant.from_dp(10.0, 1e-3)
    est = quiet(onpair.OffPairC(bounds=(0.0, 1000.0), classes=[0, 1], random_state=0, discover_bounds=True,
                                accountant=shared).fit, X, y)
    assert len(shared.events) == len(est.privacy_report_.events) == len(rho_only.events)
    with finder_calls() as calls, pytest.raises(ValueError, match="from_dp"):
        onpair.ObjectivePerturbedLogistic(bounds=(0.0, 1000.0), classes=[0, 1], discover_bounds=True,
                                          accountant=ZCDPAccountant(10.0)).fit(X, y)
    assert calls == []
    poor = ZCDPAccountant.from_dp(0.5, 1e-5)
    est = onpair.ObjectivePerturbedLogistic(bounds=(0.0, 1000.0), classes=[0, 1], random_state=0,
                                            discover_bounds=True, accountant=poor)
    with pytest.raises(PrivacyBudgetExceeded):
        quiet(est.fit, X, y)
    assert not hasattr(est, "coef_") and len(poor.events) == 0


@pytest.mark.parametrize("cls, kwargs", OFFLINE[:5])
def test_offline_discovery_hostile_inputs(cls, kwargs):
    """NaN: a ValueError, nothing set. One value everywhere: a box of positive width inside the declared one,
    holding the value, and a finite model. private=False and Dask data: refused with the reason."""
    X, y = off_centre(n=600)
    est = cls(bounds=(0.0, 1000.0), classes=[0, 1], random_state=0, discover_bounds=200, **kwargs)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN|finite"):
        est.fit(bad, y)
    assert not hasattr(est, "coef_")
    quiet(est.fit, np.full_like(X, 250.0), y)
    lower, upper = est.bounds_.lower, est.bounds_.upper
    assert np.all(lower <= 250.0) and np.all(250.0 <= upper) and np.all(lower < upper)
    assert np.all(lower >= 0.0) and np.all(upper <= 1000.0) and np.all(np.isfinite(est.coef_))
    if "private" in est.get_params():
        with pytest.raises(ValueError, match="private=False"):
            est.set_params(private=False).fit(X, y)
    with pytest.raises(ValueError, match="discover_bounds"):
        cls(bounds=(0.0, 1000.0), discover_bounds={"rho_share": 1.5}, **kwargs).fit(X, y)


def test_offline_discovery_for_the_metric_task():
    """The metric task fits in the box found as well (three classes, OffPairC's metric learner)."""
    X, y = off_centre(n=600)
    y = np.arange(600) % 3
    est = quiet(onpair.OffPairC(task="metric", classes=[0, 1, 2], bounds=(0.0, 1000.0), random_state=0,
                                discover_bounds=True).fit, X, y)
    assert est.coef_.shape == (3, 3) and np.all(np.isfinite(est.coef_))
    assert np.all(est.bounds_.upper - est.bounds_.lower < 100.0)
    assert est.privacy_report_["epsilon_spent"] <= 1.0


def test_offline_discovery_refuses_dask_data():
    da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
    X, y = off_centre(n=200)
    est = onpair.GradientPerturbedGD(bounds=(0.0, 1000.0), classes=[0, 1], discover_bounds=True)
    with pytest.raises(ValueError, match="in memory"):
        est.fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))


# -- a refused fit spends nothing: every offline estimator, with discovery ------------------------------------------

@contextlib.contextmanager
def finder_calls():
    """The range finder's calls inside the block (every learner and estimator reaches it through
    onpair.core.discovery): the shapes of the blocks it was given."""
    calls = []
    real = discovery.find_bounds

    def spy(X, *args, **kwargs):
        calls.append(np.shape(X))
        return real(X, *args, **kwargs)

    with mock.patch.object(discovery, "find_bounds", spy):
        yield calls


def parameters(name):
    return [p for p in inspect.signature(PUBLIC_OFFLINE[name].__init__).parameters if p != "self"]


#: The offline estimators of onpair.__all__ that take discover_bounds (tests/public_api.py), by name.
DISCOVERING = [name for name in PUBLIC_OFFLINE if "discover_bounds" in parameters(name)]
#: A value of each parameter of the offline estimators that every estimator taking it refuses, by a ValueError or
#: TypeError naming it. A parameter new to an estimator fails test_every_offline_parameter_has_a_refused_value
#: until it is given one here (and checked before the finder: the tests below).
INVALID = {
    "epsilon": -1.0, "delta": 1.5, "objective": "bad", "fit_intercept": "yes", "lam": -1.0, "curvature_share": 2.0,
    "gradient_tol": 0.0, "output_share": 1.5, "bounds": (1.0, 0.0), "norm_bound": -1.0, "classes": [0, 0],
    "private": "yes", "random_state": -1, "accountant": "budget", "discover_bounds": {"rho_share": 2.0},
    "loss": "bad", "radius": -1.0, "T": 0, "eta": -1.0, "task": "bad", "constraint": "bad", "step_sizes": "bad",
    "mode": "bad", "accounting": "bad", "threshold": 2.0, "pair_weights": (1.0, 2.0), "c": -1.0, "center": "bad",
    "output": "bad", "start_at_center": "yes", "model_type": "bad", "covariance": "bad", "moments": "bad",
    "weights": "bad",
}


def small_fit_data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 1.0, (n, d)), np.arange(n) % 2


def discovering(name, **params):
    """A fresh estimator of ``name`` on [0, 1] with discovery forced to run a level on 8 records."""
    return make_offline(name, classes=[0, 1], discover_bounds=SWITCHES["discover_bounds"], **params)


def test_every_offline_parameter_has_a_refused_value():
    missing = sorted(f"{name}.{p}" for name in PUBLIC_OFFLINE for p in parameters(name) if p not in INVALID)
    assert DISCOVERING and not missing, f"give INVALID a value each of these parameters refuses: {missing}"


@pytest.mark.parametrize("name, param", [(name, p) for name in DISCOVERING for p in parameters(name)])
def test_a_refused_parameter_is_refused_before_the_finder_and_spends_nothing(name, param):
    """Every parameter of every estimator with discovery (onpair.__all__): a bad value is a ValueError or
    TypeError naming it, raised before the range finder runs (no block handed to it), with nothing charged to
    a shared accountant, no fitted attribute set (or the earlier fit kept whole) and the caller's Generator
    (random_state) not advanced."""
    X, y = small_fit_data()
    bad = dict({param: INVALID[param]}, **({"bounds": None} if param == "norm_bound" else {}))
    shared = ZCDPAccountant.from_dp(100.0, 1e-3)
    fitted = discovering(name, accountant=shared)
    quiet(fitted.fit, X, y)
    coef, report, events = fitted.coef_.copy(), fitted.privacy_report_, list(shared.events)
    fitted.set_params(**bad)
    with finder_calls() as calls, pytest.raises((ValueError, TypeError), match=rf"\b{param}\b"):
        quiet(fitted.fit, X, y)
    assert calls == [] and list(shared.events) == events
    np.testing.assert_array_equal(fitted.coef_, coef)
    assert fitted.privacy_report_ is report
    generator = np.random.default_rng(7)
    state = generator.bit_generator.state
    fresh = discovering(name, accountant=ZCDPAccountant.from_dp(100.0, 1e-3), random_state=generator)
    fresh.set_params(**bad)
    with finder_calls() as calls, pytest.raises((ValueError, TypeError), match=rf"\b{param}\b"):
        quiet(fresh.fit, X, y)
    assert calls == [] and not hasattr(fresh, "coef_") and not hasattr(fresh, "privacy_report_")
    if isinstance(fresh.accountant, ZCDPAccountant):
        assert not fresh.accountant.events and fresh.accountant.rho_spent == 0.0
    assert generator.bit_generator.state == state


@pytest.mark.parametrize("name", DISCOVERING)
def test_a_rho_only_accountant_pays_for_the_finder_or_refuses_an_approximate_release_first(name):
    """A shared accountant with a ρ budget only (no δ): the finder's levels are zCDP events, so it takes a fit
    with discovery of every estimator whose own release is zCDP, charged exactly the report's events; an
    estimator whose release is (ε, δ) (``approximate_dp``) is refused before the finder runs, by a ValueError
    that names the fix, and nothing changes."""
    X, y = small_fit_data()
    rho_only = ZCDPAccountant(100.0)
    est = discovering(name, accountant=rho_only)
    if PUBLIC_OFFLINE[name].approximate_dp:
        with finder_calls() as calls, pytest.raises(ValueError, match=r"from_dp\(epsilon, delta\)"):
            quiet(est.fit, X, y)
        assert calls == [] and not rho_only.events and not hasattr(est, "coef_")
        return
    with finder_calls() as calls:
        quiet(est.fit, X, y)
    report = est.privacy_report_
    assert calls == [(8, 3)]
    assert [e.label for e in rho_only.events] == [e.label for e in report.events]
    assert any(e.label.startswith("range histogram") for e in rho_only.events)
    assert rho_only.rho_spent == pytest.approx(report["rho_spent"], rel=1e-12)


@pytest.mark.parametrize("name", list(PUBLIC_OFFLINE))
def test_approximate_dp_says_whether_a_fit_records_an_approximate_event(name):
    """The class attribute that refuses a ρ-only accountant before the fit agrees with the events a fit records,
    with and without discovery, and the finder's events are never approximate ones."""
    X, y = small_fit_data()
    for est in (make_offline(name, classes=[0, 1]), discovering(name)):
        quiet(est.fit, X, y)
        kinds = [type(e) for e in leaves(est.privacy_report_.events)]
        assert (ApproxDPRelease in kinds) == type(est).approximate_dp
        finder = [e for e in leaves(est.privacy_report_.events) if e.label.startswith("range histogram")]
        assert all(isinstance(e, GaussianRelease) for e in finder)
    assert finder, "the discovering fit ran the finder"


@pytest.mark.parametrize("name", [name for name in PUBLIC_OFFLINE if "private" in parameters(name)])
def test_a_non_private_twin_with_an_accountant_is_refused_before_it_fits(name):
    """The non-private twin releases exact outputs, which no budget can pay for: refused before any release is
    computed, nothing charged."""
    from onpair.privacy import PrivacyBudgetExceeded
    X, y = small_fit_data()
    shared = ZCDPAccountant.from_dp(100.0, 1e-3)
    est = make_offline(name, classes=[0, 1], private=False, accountant=shared)
    with mock.patch.object(type(est), "_fit_released", side_effect=AssertionError("the twin was fitted")), \
            pytest.raises(PrivacyBudgetExceeded, match="private=False"):
        est.fit(X, y)
    assert not shared.events and not hasattr(est, "coef_")


def test_a_seed_sequence_random_state_never_hands_the_finders_stream_to_a_model(monkeypatch):
    """A caller's SeedSequence gives every fit a fresh child, so no model stream of any fit (even after the caller
    or earlier fits advanced the sequence's counter) is the range finder's stream of any fit: the two noises stay
    independent, as the composition of their costs assumes (an independent review found that the caller's sequence
    itself was used, so the fourth fit of one GradientPerturbedGD drew its noise from the finder's stream)."""
    from onpair.core import fitting
    from onpair.core.discovery import range_seed_sequence

    finder_keys, model_keys = [], []
    original = fitting.seed_sequence

    def recording(state):
        seq = original(state)
        finder_keys.append(tuple(range_seed_sequence(seq).spawn_key))
        model_keys.append(seq)
        return seq

    monkeypatch.setattr(fitting, "seed_sequence", recording)
    rng = np.random.default_rng(0)
    X = rng.normal(0.5, 0.1, (600, 3))
    y = (X[:, 0] > 0.5).astype(int)
    ss = np.random.SeedSequence(11)
    ss.spawn(1)  # the caller used it before
    est = onpair.GradientPerturbedGD(T=1, bounds=(-10.0, 10.0), discover_bounds=True, random_state=ss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(5):
            est.fit(X, y)
    spawned = {tuple(seq.spawn_key) + (k,) for seq in model_keys for k in range(seq.n_children_spawned)}
    assert len(finder_keys) == 5 and len(set(finder_keys)) == 5
    assert not spawned & set(finder_keys)
    assert all(0 < seq.n_children_spawned <= 3 for seq in model_keys)


# -- a warm-up too short for the finder's levels: a warning with the numbers (issue 34) ---------------------------

def _records_for(levels, d, rho_range, bins=32, beta=0.05):
    """The block the public rule needs for ``levels`` levels, derived here from the rule's statement: the
    anchor threshold Φ⁻¹(1 − β/(2b))·σ at most m/2 (m for one level), σ = √(2d)·(1 + 10⁻⁹)/√(2ρ/L)."""
    from scipy.stats import norm
    sigma = math.sqrt(2 * d) * (1 + 1e-9) / math.sqrt(2 * rho_range / levels)
    return math.ceil(norm.isf(beta / (2 * bins)) * sigma / (0.5 if levels > 1 else 1.0))


@pytest.mark.parametrize("n, d, affordable", [(569, 30, "only 1 of its 3 levels runs"),
                                              (155, 19, "no level can run")])
def test_a_short_offline_warmup_warns_with_the_records_needed(n, d, affordable):
    """WDBC's and Hepatitis's shapes (569 records, d = 30; 155, d = 19) with discover_bounds=True: the fit
    warns (NoiseDominatedWarning) with m, d, what runs, and the records three levels and one level need."""
    rng = np.random.default_rng(d)
    X = 400.0 + rng.random((n, d))
    y = np.where(rng.random(n) < 0.5, 1, 0)
    with pytest.warns(onpair.NoiseDominatedWarning) as caught:
        OffPairStats(epsilon=1.0, delta=1e-5, bounds=LOOSE, random_state=0, discover_bounds=True).fit(X, y)
    message = " ".join(str(w.message) for w in caught if w.category is onpair.NoiseDominatedWarning)
    rho_range = DEFAULT_SHARE * RHO
    assert f"m = {n} records of d = {d} features" in message and affordable in message
    assert f"3 levels need m ≥ {_records_for(3, d, rho_range)} records" in message
    assert f"one level m ≥ {_records_for(1, d, rho_range)}" in message
    assert "a longer warm-up" in message and "tighter declared bounds" in message


def test_a_stream_ended_early_warns_and_a_long_enough_warmup_does_not():
    X, y = stream(600, d=9)
    with pytest.warns(onpair.NoiseDominatedWarning, match="m = 100 records of d = 9 features"):
        learner(discover_bounds=True).learn_many(X[:100], y[:100]).finish_warmup()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = learner(discover_bounds=True).learn_many(X, y)
    assert model.privacy_report()["range_discovery"]["levels_run"] == 3


def test_fixed_levels_on_a_short_block_warn():
    X, y = stream(60, d=4)
    with pytest.warns(onpair.NoiseDominatedWarning, match="fixed levels spend the finder's share"):
        learner(discover_bounds={"warmup": 60, "levels": 2}).learn_many(X, y)
