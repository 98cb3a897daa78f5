"""Seeds: what ``seed=`` accepts (int, None or a numpy SeedSequence, as ``check_seed`` says) and what a seeded
learner, estimator, scaler or river model draws, alone and when it charges a shared accountant (issue 31)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import onpair
from onpair import river as onpair_river

D = 3
FEATURES = ["a", "b", "c"]


def stream(seed, n=80):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


def records(X):
    return [dict(zip(FEATURES, row)) for row in X]


#: Every online learner taking ``seed=``, built from a seed; what it shows is ``.model``.
LEARNERS = {
    "OnPairStats": lambda seed: onpair.OnPairStats(bounds=(0, 1), seed=seed),
    "OnPairStrC": lambda seed: onpair.OnPairStrC(bounds=(0, 1), n=80, seed=seed),
    "OnPairC": lambda seed: onpair.OnPairC(bounds=(0, 1), n=80, seed=seed),
    # the non-private learner draws its reservoir's slots from the seed
    "PairwiseGIGA": lambda seed: onpair.PairwiseGIGA(bounds=(0, 1), buffer=("reservoir", 8), seed=seed),
}


def learned(name, seed):
    X, y = stream(0)
    return LEARNERS[name](seed).learn_many(X, y).model


def river_output(kind, seed):
    """What a river model with ``seed`` outputs on a fixed stream (a probability or the scaled records)."""
    X, y = stream(1, n=120)
    if kind == "scaler":
        model = onpair_river.PrivateStandardScaler(bounds=(0.0, 1.0), epsilon=1.0, features=FEATURES, seed=seed)
        out = []
        for x in records(X):
            model.learn_one(x)
            out.append(list(model.transform_one(x).values()))
        return np.array(out)
    if kind == "binary":
        model = onpair_river.PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=FEATURES, seed=seed)
    else:
        model = onpair_river.PrivateClassifier(classes=[0, 1, 2], bounds=(0.0, 1.0), features=FEATURES, seed=seed)
    out = []
    for x, label in zip(records(X), y):
        out.append(list(model.predict_proba_one(x).values()))
        model.learn_one(x, bool(label) if kind == "binary" else int(label))
    return np.array(out)


#: What each model taking ``seed=`` outputs on a fixed stream, as a function of its seed.
OUTPUTS = dict({name: (lambda seed, name=name: learned(name, seed)) for name in LEARNERS},
               **{f"river {kind}": (lambda seed, kind=kind: river_output(kind, seed))
                  for kind in ("binary", "multiclass", "scaler")})


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_a_model_takes_a_seed_sequence_as_it_takes_an_int(name):
    """check_seed accepts a SeedSequence: every learner and river model builds with one (a learner raised a
    TypeError before), the same sequence reproduces its output, the caller's sequence is not advanced, and two
    children of one sequence draw differently."""
    output = OUTPUTS[name]
    root = np.random.SeedSequence(2024)
    first = output(root)
    assert root.n_children_spawned == 0
    np.testing.assert_array_equal(first, output(np.random.SeedSequence(2024)))
    a, b = root.spawn(2)
    assert not np.array_equal(output(a), output(b))


@pytest.mark.parametrize("bad", [-1, 1.5, "a", True])
def test_a_bad_seed_is_refused_naming_seed(bad):
    with pytest.raises(ValueError, match=r"seed must be None, a non-negative integer or a numpy SeedSequence"):
        onpair.OnPairStats(bounds=(0, 1), seed=bad)


# -- seeds under a shared accountant (issue 31, item 3) ------------------------------------------------------

from public_api import OFFLINE_CASES, ONLINE_CASES, make_offline, make_online, online_class  # noqa: E402

from onpair.preprocessing import PrivateStandardScaler  # noqa: E402
from onpair.privacy import ZCDPAccountant  # noqa: E402

#: The online cases (each class and each switch) whose learner takes ``accountant=``.
ACCOUNTED_ONLINE = [name for name in ONLINE_CASES if getattr(online_class(name), "private", False)]


def budget():
    """A shared accountant that pays for anything below (an (ε, δ) budget: some estimators need one)."""
    return ZCDPAccountant.from_dp(1e4, 1e-3)


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping, discovery's and δ's warnings: not what is tested here
        return call(*args, **kwargs)


def neighbours(n=200):
    """Two streams that differ in their first record (features and label)."""
    X, y = stream(3, n=n)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [0.9, 0.1, 0.7], 1 - y[0]
    return (X, y), (X2, y2)


def released_sums(learner):
    """The per-class sums an OnPairStats release shows (counts × means: public)."""
    stats = learner.class_statistics()
    return stats.counts[:, None] * stats.means


def sum_difference(make):
    """Released sums on the neighbouring stream minus those on the stream, each from a learner ``make()``."""
    (X, y), (X2, y2) = neighbours()
    return released_sums(make().learn_many(X2, y2)) - released_sums(make().learn_many(X, y))


@pytest.mark.parametrize("mechanism, scale", [("blt", 1.0), ("auto", 96 * 32 / (32 ** 2 + 64 ** 2))])
def test_two_seeded_learners_on_one_accountant_do_not_reveal_a_record(mechanism, scale):
    """The attack of issue 31: OnPairStats(seed=0) on two neighbouring streams. Without an accountant the
    noise cancels and the difference of the released sums is the record's, to rounding (the seed's documented
    cost: seeds are for experiments), times its public weight in the release (1 for the continual release;
    the default's blocks after 200 records: blocks of 32 and 64 released, the first record's block weighted
    N·n_0/Σn_j² = 96·32/(32² + 64²) = 0.6). Charged to one accountant, which adds both costs as independent
    releases, the noises must be independent: the difference is then off by the noise (σ ≈ 30 here)."""
    true = scale * sum_difference(lambda: onpair.OnPairStats(bounds=(0, 1), private=False))
    assert np.abs(true).max() > 0.1  # the record changes the sums
    alone = sum_difference(lambda: onpair.OnPairStats(bounds=(0, 1), seed=0, mechanism=mechanism))
    np.testing.assert_allclose(alone, true, rtol=0, atol=1e-12)  # what a seed without an accountant gives away
    acc = budget()
    shared = sum_difference(lambda: onpair.OnPairStats(bounds=(0, 1), seed=0, accountant=acc, mechanism=mechanism))
    assert np.abs(shared - true).min() > 1e-3
    assert acc.noise_keys == 2 and len(acc.events) == 2


def online_output(name, X, y, **params):
    learner = quiet(make_online(name, **params).learn_many, X, y)
    return np.array(learner.model, dtype=float)


def offline_output(name, X, y, **params):
    return np.array(quiet(make_offline(name, **params).fit, X, y).coef_, dtype=float)


@pytest.mark.parametrize("name", ACCOUNTED_ONLINE)
def test_every_online_learner_on_one_accountant_draws_its_own_noise(name):
    """Same seed, same records: identical models without an accountant (seeds reproduce), distinct with a shared
    one, and the same sequence of learners on a fresh accountant reproduces both bit for bit."""
    X, y = stream(4, n=100)
    np.testing.assert_array_equal(online_output(name, X, y), online_output(name, X, y))

    def script():
        acc = budget()
        return [online_output(name, X, y, accountant=acc) for _ in range(2)], acc.noise_keys

    (first, second), keys = script()
    assert keys == 2 and not np.array_equal(first, second)
    (again, again_second), _ = script()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(second, again_second)


@pytest.mark.parametrize("name", OFFLINE_CASES)
def test_every_estimator_fit_on_one_accountant_draws_its_own_noise(name):
    """Same random_state, same records: identical fits without an accountant, distinct fits charged to one,
    reproduced bit for bit by the same script on a fresh accountant; one noise key per fit."""
    X, y = stream(5, n=60)
    np.testing.assert_array_equal(offline_output(name, X, y), offline_output(name, X, y))

    def script():
        acc = budget()
        estimator = make_offline(name, accountant=acc)
        fits = [np.array(quiet(estimator.fit, X, y).coef_, dtype=float) for _ in range(2)]
        return fits, acc.noise_keys

    (first, second), keys = script()
    assert keys == 2 and not np.array_equal(first, second)
    (again, again_second), _ = script()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(second, again_second)


def test_the_scikit_learn_scaler_on_one_accountant_draws_its_own_noise():
    X, _ = stream(6, n=100)
    alone = [PrivateStandardScaler(bounds=(0, 1), random_state=0).fit(X).mean_ for _ in range(2)]
    np.testing.assert_array_equal(*alone)
    # an int random_state draws what numpy.random.default_rng(random_state) draws, as before
    acc = budget()
    shared = [PrivateStandardScaler(bounds=(0, 1), random_state=0, accountant=acc).fit(X).mean_ for _ in range(2)]
    assert not np.array_equal(*shared) and acc.noise_keys == 2


@pytest.mark.parametrize("kind", ["binary", "multiclass", "scaler"])
def test_a_river_clone_on_one_accountant_draws_its_own_noise(kind):
    """river's clone() of a seeded model repeats its noise, unless both charge one accountant; the same
    script on a fresh accountant reproduces the first model and its clone."""
    river_base = pytest.importorskip("river.base")
    X, y = stream(7, n=60)

    def build(accountant):
        if kind == "scaler":
            return onpair_river.PrivateStandardScaler(bounds=(0.0, 1.0), features=FEATURES, seed=0,
                                                      accountant=accountant)
        if kind == "binary":
            return onpair_river.PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=FEATURES, seed=0,
                                                          accountant=accountant)
        return onpair_river.PrivateClassifier(classes=[0, 1], bounds=(0.0, 1.0), features=FEATURES, seed=0,
                                              accountant=accountant)

    def run(model):
        assert isinstance(model, river_base.Base)
        out = []
        for x, label in zip(records(X), y):
            if kind == "scaler":
                model.learn_one(x)
                out.append(list(model.transform_one(x).values()))
            else:
                model.learn_one(x, bool(label) if kind == "binary" else int(label))
                out.append(list(model.predict_proba_one(x).values()))
        return np.array(out)

    original = build(None)
    np.testing.assert_array_equal(run(original.clone()), run(original))

    def script():
        acc = budget()
        model = build(acc)
        twin = model.clone()
        assert twin.accountant is acc
        return run(model), run(twin)

    first, twin = script()
    assert not np.array_equal(first, twin)
    again, again_twin = script()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(twin, again_twin)


def test_a_grid_search_with_a_random_state_and_one_accountant_draws_distinct_noise_per_fit():
    """GridSearchCV over folds with the same training records (the worst overlap) and a fixed random_state: the
    fits charged to one accountant release distinct models (without one, all would be the same model)."""
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = stream(8, n=120)
    everything = np.arange(len(y))
    folds = [(everything, everything)] * 3

    def fitted_models(accountant):
        seen = []

        def record(estimator, X_test, y_test):
            seen.append(estimator.coef_.copy())
            return 0.0

        search = model_selection.GridSearchCV(
            onpair.OffPairStats(bounds=(0, 1), random_state=0, accountant=accountant), {"epsilon": [1.0]},
            cv=folds, scoring=record)
        search.fit(X, y)
        seen.append(search.best_estimator_.coef_.copy())
        return seen

    alone = fitted_models(None)
    assert len(alone) == 4 and all(np.array_equal(alone[0], coef) for coef in alone)
    acc = budget()
    shared = fitted_models(acc)
    assert len(shared) == 4 and len(acc.events) == 4 and acc.noise_keys == 4
    assert len({coef.tobytes() for coef in shared}) == 4


def test_an_accountant_saved_as_a_dict_goes_on_with_its_next_noise_key():
    """to_dict keeps the noise keys handed out: a learner charged to the rebuilt accountant does not repeat the
    noise of one charged before it was saved (and a fresh accountant's first learner would)."""
    X, y = stream(9, n=100)
    acc = budget()
    before = online_output("OnPairStats", X, y, accountant=acc)
    state = acc.to_dict()
    assert state["noise_keys"] == 1
    restored = ZCDPAccountant.from_dict(state)
    assert restored.noise_keys == 1 and restored.rho_spent == acc.rho_spent
    after = online_output("OnPairStats", X, y, accountant=restored)
    assert not np.array_equal(before, after)
    np.testing.assert_array_equal(before, online_output("OnPairStats", X, y, accountant=budget()))
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="noise_keys"):
            ZCDPAccountant.from_dict(dict(state, noise_keys=bad))
    assert "noise_keys" not in budget().to_dict()  # unchanged for an accountant that handed out none


def test_noise_seed_keys_a_sequence_and_leaves_it_alone():
    acc = ZCDPAccountant(1.0)
    seq = np.random.SeedSequence(5)
    keyed = [acc.noise_seed(seq) for _ in range(3)]
    assert seq.n_children_spawned == 0 and acc.noise_keys == 3
    assert len({tuple(k.generate_state(4)) for k in keyed} | {tuple(seq.generate_state(4))}) == 4
    assert all(k.entropy == seq.entropy and k.n_children_spawned == 0 for k in keyed)
    with pytest.raises(TypeError, match="SeedSequence"):
        acc.noise_seed(5)


def test_a_copied_river_scaler_draws_its_own_noise():
    """Independent review (issue 31): copy.deepcopy (or a pickle) of an unfitted river PrivateStandardScaler copied its
    generator, so the copy and the original drew the same noise, which cancels in the difference of their releases on
    neighbouring streams (a record revealed to 1e-14), with or without a seed. A copy is now a new scaler with its
    own noise (fresh entropy, or the next key of a shared accountant); a fitted one refuses to be copied."""
    import copy
    import pickle

    from onpair.river import PrivateStandardScaler as RiverScaler

    record = {"a": 0.2, "b": 0.7}
    for seed, accountant in ((None, None), (0, ZCDPAccountant(10.0))):
        base = RiverScaler(bounds=(0.0, 1.0), epsilon=1.0, features=["a", "b"], seed=seed, accountant=accountant)
        twins = [copy.deepcopy(base), copy.copy(base)]
        if accountant is None:  # a shared accountant refuses to be pickled (its own rule)
            twins.append(pickle.loads(pickle.dumps(base)))
        base.learn_one(record)
        for twin in twins:
            twin.learn_one(record)  # the same record: equal releases would mean the same noise
            assert not np.allclose(twin._mechanism.estimate(), base._mechanism.estimate())
        with pytest.raises(TypeError, match="cannot be"):
            copy.deepcopy(base)
        if accountant is None:
            with pytest.raises(TypeError, match="cannot be"):
                pickle.dumps(base)


def test_noise_keys_stay_below_two_to_the_32():
    """Independent review: numpy splits a spawn-key word of 2**32 or more into 32-bit words, so key 2**32 would
    collide with another model's child: the accountant refuses to hand it out, and to be rebuilt beyond it."""
    from onpair.privacy.accountant import MAX_NOISE_KEYS

    state = ZCDPAccountant(1.0).to_dict()
    state["noise_keys"] = MAX_NOISE_KEYS
    full = ZCDPAccountant.from_dict(state)
    with pytest.raises(ValueError, match="noise keys"):
        full.noise_seed(np.random.SeedSequence(0))
    state["noise_keys"] = MAX_NOISE_KEYS + 1
    with pytest.raises(ValueError, match="noise_keys"):
        ZCDPAccountant.from_dict(state)
