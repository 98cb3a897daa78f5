"""Seeds: what ``seed=`` accepts (int, None or a numpy SeedSequence, as ``check_seed`` says) and what a seeded
learner, estimator, scaler or river model draws, alone and when it charges a shared accountant (issue 31)."""

from __future__ import annotations

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


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_a_learner_takes_a_seed_sequence_as_it_takes_an_int(name):
    """check_seed accepts a SeedSequence: every learner builds with one (it raised a TypeError before), the
    same sequence reproduces the model, the caller's sequence is not advanced, and two children of one
    sequence draw differently."""
    root = np.random.SeedSequence(2024)
    first = learned(name, root)
    assert root.n_children_spawned == 0
    np.testing.assert_array_equal(first, learned(name, np.random.SeedSequence(2024)))
    a, b = root.spawn(2)
    assert not np.array_equal(learned(name, a), learned(name, b))


@pytest.mark.parametrize("kind", ["binary", "multiclass", "scaler"])
def test_a_river_model_takes_a_seed_sequence_as_it_takes_an_int(kind):
    root = np.random.SeedSequence(7)
    first = river_output(kind, root)
    assert root.n_children_spawned == 0
    np.testing.assert_array_equal(first, river_output(kind, np.random.SeedSequence(7)))
    a, b = root.spawn(2)
    assert not np.array_equal(river_output(kind, a), river_output(kind, b))


@pytest.mark.parametrize("bad", [-1, 1.5, "a", True])
def test_a_bad_seed_is_refused_naming_seed(bad):
    with pytest.raises(ValueError, match=r"seed must be None, a non-negative integer or a numpy SeedSequence"):
        onpair.OnPairStats(bounds=(0, 1), seed=bad)
