"""Online learners end to end: one kernel path, only released models visible, calibrated noise,
accounting that never overspends, paper mode literal, schedules that freeze."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import naive
from onpair import OnPairC, OnPairStrC, PairwiseGIGA, PrivacyWarning
from onpair.core.bounds import FeatureBounds
from onpair.privacy import rho_from_dp

REPORT_KEYS = {"rho_budget", "rho_spent", "rho_remaining", "epsilon_spent", "releases"}
RELEASE_KEYS = {"event", "what", "round", "sensitivity", "sigma", "rho"}  # a GaussianRelease row


def _data(seed, n=300, d=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


LEARNERS = [
    lambda **kw: OnPairStrC(epsilon=1.0, bounds=(0, 1), n=300, seed=3, **kw),
    lambda **kw: OnPairC(epsilon=1.0, bounds=(0, 1), n=300, seed=3, **kw),
    lambda **kw: OnPairStrC(epsilon=1.0, bounds=(0, 1), release_every=25, seed=3, **kw),
    lambda **kw: OnPairStrC(epsilon=0.5, bounds=(0, 1), n=300, mode="paper", lam=3.0, seed=3, **kw),
    lambda **kw: PairwiseGIGA(bounds=(0, 1), **kw),
]


@pytest.mark.parametrize("make", LEARNERS)
@pytest.mark.parametrize("loss", ["logistic", "square"])
def test_learn_many_equals_repeated_learn_one(make, loss):
    X, y = _data(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        one = make(loss=loss)
        for xi, yi in zip(X, y):
            one.learn_one(xi, yi)
        many = make(loss=loss).learn_many(X, y)
        mixed = make(loss=loss).learn_many(X[:17], y[:17]).learn_one(X[17], y[17]).learn_many(X[18:], y[18:])
    assert np.array_equal(one.model, many.model) and np.array_equal(one.model, mixed.model)
    if one.private:
        assert one.privacy_report() == many.privacy_report() == mixed.privacy_report()


def test_report_has_the_documented_keys():
    X, y = _data(1)
    report = OnPairStrC(bounds=(0, 1), n=300, seed=0).learn_many(X, y).privacy_report()
    assert REPORT_KEYS <= set(report)
    assert report["releases"] and all(set(r) == RELEASE_KEYS for r in report["releases"])
    assert [r["round"] for r in report["releases"]] == [64, 128, 256, 300]


def test_private_model_is_the_release_and_gigas_twin_is_the_internal_iterate():
    X, y = _data(2)
    private = OnPairStrC(bounds=(0, 1), release_at=[300], seed=5).learn_many(X, y)
    twin = PairwiseGIGA(bounds=(0, 1)).learn_many(X, y)
    # Same kernel, same parameters: the internal iterate is exactly the non-private model ...
    assert np.array_equal(private._iterate.w, twin.model)
    # ... but what a user sees is the noisy release, and decision_function scores with it.
    assert not np.allclose(private.model, twin.model)
    Z, _ = FeatureBounds(0, 1).transform(X)
    np.testing.assert_allclose(private.decision_function(X), Z @ private.model)
    # The model handed out is a copy: mutating it does not change the learner.
    m = private.model
    m[:] = 123.0
    assert not np.any(private.model == 123.0)


def test_release_noise_has_the_calibrated_standard_deviation():
    """(release − iterate)/σ over many seeds is N(0, 1): Kolmogorov–Smirnov at α = 0.001.
    A large radius keeps the projection inactive, so the release is exactly iterate + noise."""
    X, y = _data(3, n=120)
    z = []
    for seed in range(200):
        learner = OnPairStrC(epsilon=1.0, bounds=(0, 1), radius=100.0, release_at=[120], seed=seed)
        learner.learn_many(X, y)
        sigma = learner.privacy_report()["releases"][0]["sigma"]
        z.append((learner.model - learner._iterate.w) / sigma)
    z = np.concatenate(z)
    assert stats.kstest(z, "norm").pvalue > 0.001
    assert abs(z.std() - 1.0) < 0.05


@pytest.mark.parametrize("accounting", ["gaussian", "tight", "lemma3"])
def test_sigma_is_ledger_sensitivity_over_sqrt_two_rho(accounting):
    X, y = _data(4)
    learner = OnPairStrC(epsilon=1.5, delta=1e-4, lam=1.0, bounds=(0, 1), n=300, accounting=accounting, seed=1)
    learner.learn_many(X, y)
    report = learner.privacy_report()
    # Everything recomputed here from public quantities with the slow twin of the ledger.
    steps = learner._step_rule.block(0, 300)
    G = 4.0 / (1.0 + math.exp(-4.0 * 0.1))
    U = naive.ledger(steps, G, 4.0 + 1.0, 1.0, 0.2, pair_change=G)  # logistic: Γ = G
    rho = rho_from_dp(1.5, 1e-4, method=accounting)
    assert report["rho_budget"] == pytest.approx(rho)
    rounds = np.array([r["round"] for r in report["releases"]])
    shares = np.array([r["rho"] for r in report["releases"]])
    np.testing.assert_allclose(shares, rho * rounds / rounds.sum(), rtol=1e-9)  # proportional split
    for r in report["releases"]:
        assert r["sensitivity"] == pytest.approx(U[r["round"] - 1], rel=1e-12)
        # σ carries a documented 1e-9 relative safety margin over U/√(2ρ_k).
        assert r["sigma"] == pytest.approx(r["sensitivity"] / math.sqrt(2 * r["rho"]), rel=2e-9)
        assert r["sigma"] >= r["sensitivity"] / math.sqrt(2 * r["rho"])
    assert math.fsum(shares) <= report["rho_budget"]
    assert report["epsilon_spent"] <= 1.5 and report["epsilon_spent"] == pytest.approx(1.5, rel=1e-6)


def test_paper_mode_reproduces_algorithm_1():
    n, eps, delta, lam, radius = 400, 1.0, 1.0 / 400, 3.0, 0.1
    X, y = _data(5, n=n)
    with pytest.warns(PrivacyWarning, match=r"delta = 0\.0025 ≥ 1/n"):  # δ = 1/n as in the paper: warned
        learner = OnPairStrC(epsilon=eps, delta=delta, lam=lam, radius=radius, bounds=(0, 1), n=n, mode="paper",
                             seed=2).learn_many(X, y)
    L, alpha = 4.0 + lam, lam
    T1 = max(math.ceil(16 * L**2 / alpha**2), 7)
    log_inv = math.log(1 / delta)
    rho = (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2  # Lemma 3 solved for ρ
    G = 4.0 / (1.0 + math.exp(-4.0 * radius)) + lam * radius  # G of the regularised loss
    report = learner.privacy_report()
    assert [r["round"] for r in report["releases"]] == list(range(T1 + 1, n + 1))
    assert report["rho_budget"] == pytest.approx(rho, rel=1e-9)
    for r in report["releases"]:
        t = r["round"]
        paper_sigma_sq = 32 * G**2 * (n - T1) / (alpha**2 * t**2 * rho)
        assert r["sigma"] ** 2 == pytest.approx(paper_sigma_sq, rel=5e-9) and r["sigma"] ** 2 >= paper_sigma_sq
        assert r["sensitivity"] == pytest.approx(8 * G / (alpha * t))
    steps = learner._step_rule.block(0, n)
    t = np.arange(1, n + 1)
    np.testing.assert_allclose(steps[t > T1], 2 * (t[t > T1] - 1) / ((t[t > T1] - 2) * alpha * t[t > T1]))
    assert np.all(steps[t <= T1] == 0)


def test_paper_mode_warns_that_it_only_outputs_random_points_when_T1_exceeds_n():
    X, y = _data(6, n=100)
    with pytest.warns(PrivacyWarning, match="never"):
        learner = OnPairStrC(lam=1e-3, bounds=(0, 1), n=100, mode="paper", seed=0)
    with pytest.warns(PrivacyWarning, match="frozen"):
        learner.learn_many(X, y)
    assert learner.privacy_report()["releases"] == []
    # The visible model is the warm-up's random point: it does not depend on the data.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        twin = OnPairStrC(lam=1e-3, bounds=(0, 1), n=100, mode="paper", seed=0).learn_many(X[::-1], 1 - y[::-1])
    assert np.array_equal(learner.model, twin.model) and np.linalg.norm(learner.model) <= 0.1 + 1e-12


def test_model_freezes_after_the_schedule_and_says_so():
    X, y = _data(7)
    learner = OnPairStrC(bounds=(0, 1), horizon=100, seed=0)
    learner.learn_many(X[:100], y[:100])
    frozen_model = learner.model
    with pytest.warns(PrivacyWarning, match="frozen"):
        learner.learn_many(X[100:150], y[100:150])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # warned once, not again
        learner.learn_many(X[150:], y[150:])
    report = learner.privacy_report()
    assert report["frozen"] and "frozen" in report["status"]
    assert np.array_equal(learner.model, frozen_model)
    assert max(r["round"] for r in report["releases"]) == 100
    assert report["n_seen"] == 300


def test_unbounded_stream_uses_a_convergent_split_and_never_overspends():
    X, y = _data(8, n=1500)
    learner = OnPairStrC(bounds=(0, 1), release_every=50, seed=0)
    for lo in range(0, 1500, 137):
        learner.learn_many(X[lo:lo + 137], y[lo:lo + 137])
        report = learner.privacy_report()
        assert report["rho_spent"] < report["rho_budget"]
    shares = [r["rho"] for r in report["releases"]]
    k = np.arange(1, len(shares) + 1)
    np.testing.assert_allclose(shares, report["rho_budget"] * 6 / (math.pi**2 * k**2), rtol=1e-9)


@given(cuts=st.lists(st.integers(1, 299), max_size=6, unique=True))
@settings(max_examples=15)
def test_any_cut_of_the_stream_gives_the_same_releases_and_spend(cuts):
    X, y = _data(9)
    reference = OnPairStrC(bounds=(0, 1), release_every=40, n=300, seed=4).learn_many(X, y)
    learner = OnPairStrC(bounds=(0, 1), release_every=40, n=300, seed=4)
    bounds = [0] + sorted(cuts) + [300]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        learner.learn_many(X[lo:hi], y[lo:hi])
        assert learner.privacy_report()["rho_spent"] <= learner.privacy_report()["rho_budget"]
    assert learner.privacy_report() == reference.privacy_report()
    assert np.array_equal(learner.model, reference.model)


def test_seed_reproduces_and_no_seed_draws_fresh_noise():
    X, y = _data(10)
    a = OnPairStrC(bounds=(0, 1), n=300, seed=11).learn_many(X, y).model
    b = OnPairStrC(bounds=(0, 1), n=300, seed=11).learn_many(X, y).model
    c = OnPairStrC(bounds=(0, 1), n=300).learn_many(X, y).model
    d = OnPairStrC(bounds=(0, 1), n=300).learn_many(X, y).model
    assert np.array_equal(a, b)
    assert not np.array_equal(c, d)


def test_learning_does_not_touch_numpy_global_random_state():
    X, y = _data(11)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    OnPairC(bounds=(0, 1), n=300, seed=1).learn_many(X, y)
    OnPairStrC(bounds=(0, 1), n=300).learn_many(X, y)
    assert np.array_equal(np.random.get_state()[1], before)


def test_default_lam_is_G_over_R_and_the_twin_uses_the_same():
    assert OnPairStrC(norm_bound=1.0, radius=0.1)._lam == pytest.approx(4 / (1 + math.exp(-0.4)) / 0.1)
    assert OnPairStrC(norm_bound=1.0, radius=2.0, loss="square")._lam == pytest.approx(4 * (1 + 4.0) / 2.0)
    assert PairwiseGIGA(norm_bound=1.0, radius=0.1)._lam == OnPairStrC(norm_bound=1.0, radius=0.1)._lam
    assert np.all(OnPairC(norm_bound=1.0, n=100, n_features=3)._iterate.center == 0)  # origin unless center="random"


def test_onpairc_uses_alpha_c_n_to_the_minus_quarter_and_a_random_center_in_C():
    X, y = _data(12)
    learner = OnPairC(c=2.0, center="random", bounds=(0, 1), n=300, seed=0, radius=0.5)
    assert learner.strong_convexity == pytest.approx(2.0 * 300 ** -0.25)
    learner.learn_many(X, y)
    assert 0 < np.linalg.norm(learner._iterate.center) <= 0.5
    other = OnPairC(c=2.0, center="random", bounds=(0, 1), n=300, seed=1, radius=0.5).learn_many(X, y)
    assert not np.array_equal(learner._iterate.center, other._iterate.center)
    # Paper mode: G̃ = G + α·diam(C). (Here T₁ ≥ n, which the learner warns about.)
    with pytest.warns(PrivacyWarning, match="warm-up"):
        paper = OnPairC(c=2.0, bounds=(0, 1), n=300, seed=0, radius=0.5, mode="paper")
    assert paper._paper_lipschitz == pytest.approx(4 / (1 + math.exp(-2.0)) + 2.0 * 300 ** -0.25 * 1.0)


def test_private_learner_beats_chance_and_nonprivate_beats_private():
    """A sanity check of usefulness on an easy synthetic problem (fixed seeds)."""
    X, y = _data(13, n=2000)
    Xt, yt = _data(14, n=2000)
    private = OnPairStrC(epsilon=2.0, bounds=(0, 1), n=2000, seed=0).learn_many(X, y)
    giga = PairwiseGIGA(bounds=(0, 1)).learn_many(X, y)
    auc_private = _auc(yt, private.decision_function(Xt))
    auc_giga = _auc(yt, giga.decision_function(Xt))
    assert auc_giga > 0.8 and auc_private > 0.7


def _auc(y, scores):  # scikit-learn's order, as onpair.evaluation.roc_auc
    ranks = stats.rankdata(scores)
    pos = y > 0
    n1, n0 = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)


def test_a_warning_raised_as_an_error_leaves_the_learner_untouched():
    """Under warnings-as-errors the clipping and frozen warnings abort the call before any change, so
    a retry learns the block once (a half-applied block would learn its records twice)."""
    X, y = _data(15, n=120)
    X_out = X.copy()
    X_out[5, 0] = 7.0  # outside the box
    # The reference gets, as warnings, the two that the learner below gets as errors.
    with pytest.warns(UserWarning, match="clipped"), pytest.warns(PrivacyWarning, match="frozen"):
        reference = OnPairStrC(bounds=(0, 1), horizon=100, seed=0).learn_many(X_out, y)
    learner = OnPairStrC(bounds=(0, 1), horizon=100, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="clipped"):
            learner.learn_many(X_out[:60], y[:60])
    assert learner.n_seen == 0 and learner._log.ledger_bound == 0.0 and learner.privacy_report()["releases"] == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", PrivacyWarning)
        learner.learn_many(X_out[:60], y[:60])
        with pytest.raises(PrivacyWarning, match="frozen"):
            learner.learn_many(X_out[60:], y[60:])  # crosses the horizon
    assert learner.n_seen == 60
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner.learn_many(X_out[60:], y[60:])
    assert learner.privacy_report() == reference.privacy_report()
    assert np.array_equal(learner.model, reference.model)


def test_private_learners_refuse_to_be_pickled_or_copied():
    import copy
    import pickle

    learner = OnPairStrC(bounds=(0, 1), n=300, seed=0).learn_many(*_data(16))
    for duplicate in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="cannot be pickled or copied"):
            duplicate(learner)
    pickle.loads(pickle.dumps(learner.model))  # the released model is what one shares


def test_changing_public_attributes_later_does_not_change_the_analysis():
    X, y = _data(17)
    reference = OnPairStrC(bounds=(0, 1), lam=1.0, n=300, seed=0).learn_many(X, y)
    learner = OnPairStrC(bounds=(0, 1), lam=1.0, n=300, seed=0).learn_many(X[:50], y[:50])
    learner.mode, learner.lam, learner.radius, learner.epsilon = "paper", 1e-3, 50.0, 100.0
    learner.learn_many(X[50:], y[50:])
    assert learner.privacy_report() == reference.privacy_report()
    assert np.array_equal(learner.model, reference.model)


def test_every_release_of_a_block_is_available():
    X, y = _data(18)
    learner = OnPairStrC(bounds=(0, 1), n=300, seed=0).learn_many(X, y)
    models = learner.released_models
    assert models.shape == (len(learner.privacy_report()["releases"]), 4) == (4, 4)
    assert np.array_equal(models[-1], learner.model)
    singly = OnPairStrC(bounds=(0, 1), n=300, seed=0)
    firsts = []
    for lo in range(0, 300, 1):
        singly.learn_one(X[lo], y[lo])
        if lo + 1 in (64, 128, 256, 300):
            firsts.append(singly.model)
    assert np.array_equal(np.array(firsts), models)


def test_delta_of_one_over_n_or_more_is_flagged():
    with pytest.warns(PrivacyWarning, match="δ ≪ 1/n"):
        OnPairStrC(norm_bound=1.0, delta=0.01, n=100, n_features=2)


@pytest.mark.parametrize("kwargs", [
    dict(bounds=(0, 1)), dict(norm_bound=2.0), dict(bounds=(0, 1), buffer=("reservoir", 8)),
    dict(bounds=(0, 1), loss="square"), dict(bounds=(0, 1), step_sizes=np.linspace(0.5, 0.01, 300)),
    dict(bounds=(0, 1), mode="paper", lam=8.0, n=300),
])
def test_learn_one_fast_path_equals_the_block_path_with_clipped_records_and_releases(kwargs):
    """learn_one takes a compiled single-record path on ordinary rounds and the general path on release
    rounds and for clipped records; both must give the block path's result bit for bit."""
    X, y = _data(19)
    X = X.copy()
    X[::17, 1] = 1.5  # outside the box: clipped on the general path
    make = lambda: OnPairStrC(release_every=23, seed=2, **{"n": 300, **kwargs}) if "mode" not in kwargs \
        else OnPairStrC(seed=2, **kwargs)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = make()
        for xi, yi in zip(X, y):
            single.learn_one(xi, yi)
        block = make().learn_many(X, y)
    assert np.array_equal(single._iterate.w, block._iterate.w)
    assert np.array_equal(single.released_models, block.released_models)
    assert single.privacy_report() == block.privacy_report()


@pytest.mark.parametrize("kwargs", [dict(bounds=(0, 1)), dict(bounds=(0, 1), mechanism="epochs"), dict(norm_bound=1.5),
                                    dict(bounds=(0, 1), private=False)])
def test_statistics_learn_one_equals_the_block_path_with_clipped_records(kwargs):
    """OnPairStats.learn_one takes a compiled single-record path for records inside the box and, once the
    clipping warning has been issued, for clipped ones: the block path's releases bit for bit, one warning."""
    from onpair import OnPairStats

    X, y = _data(23)
    X = X.copy()
    X[5::17, 1] = 1.5  # outside the box: clipped
    X[9::31, 2] = -0.25
    with pytest.warns(UserWarning, match="clipped") as caught:
        single = OnPairStats(seed=2, **kwargs)
        for xi, yi in zip(X, y):
            single.learn_one(xi, yi)
    assert sum("clipped" in str(w.message) for w in caught) == 1
    with pytest.warns(UserWarning, match="clipped"):
        block = OnPairStats(seed=2, **kwargs).learn_many(X, y)
    assert single.model.tobytes() == block.model.tobytes()
    assert single.privacy_report() == block.privacy_report() and single.privacy_report()["n_clipped"] > 0
    with pytest.raises(ValueError):
        single.learn_one(np.array([0.5, np.nan, 0.5, 0.5]), 1)
    assert single.n_seen == 300 and single.model.tobytes() == block.model.tobytes()


def test_no_public_entry_point_touches_numpy_global_random_state():
    """Randomness hygiene across the library: learners, estimators and the river wrapper draw from their
    own SeedSequence children only."""
    from onpair import GradientPerturbedGD, OffPairC, OffPairStrC, OutputPerturbedSGD
    from onpair.river import PrivatePairwiseClassifier

    X, y = _data(20, n=60)
    np.random.seed(321)
    before = np.random.get_state()[1].copy()
    for estimator in (OffPairStrC(bounds=(0, 1)), OffPairC(bounds=(0, 1)), GradientPerturbedGD(bounds=(0, 1), T=3),
                      OutputPerturbedSGD(bounds=(0, 1), T=200)):
        estimator.fit(X, y)
    OnPairStrC(bounds=(0, 1), buffer=("reservoir", 8)).learn_many(X, y)
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=[f"f{k}" for k in range(X.shape[1])])
    for row, label in zip(X, y):
        model.learn_one({f"f{k}": float(v) for k, v in enumerate(row)}, bool(label))
    assert np.array_equal(np.random.get_state()[1], before)
