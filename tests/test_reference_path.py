"""Every river model and the array learner answer to the slow reference of tests/reference_path.py, at every
record: the fast path's ``predict_proba_one`` (and ``predict_one``) equals the reference's within 1e-12 on every
configuration the package tests river with (each ``_unit_test_params`` entry), across the end of a range-discovery
warm-up (where the box changes), with a half-life, with string class domains, and after ``save`` → ``load`` at
points inside and after the warm-up (a restored model predicts what the saved one would have: the reference keeps
the live model's refresh state across the reload)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import onpair
from onpair import OnPairStats
from onpair.privacy.exceptions import PrivacyWarning
from onpair.river import PrivateClassifier, PrivatePairwiseClassifier

from reference_path import ReferencePredictions, stats_scorer

TOL = 1e-12
BINARY_FEATURES = ["a", "b", "c", "d"]


def binary_stream(n, seed, labels=(False, True), scale=1.0, offset=0.0):
    """Records in [offset, offset + scale]^4 whose first two features lean with the label."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        y = bool(rng.random() < 0.4)
        x = np.clip(rng.normal(0.5 + (0.15 if y else -0.15) * np.array([1.0, -1.0, 0.3, 0.0]), 0.2), 0.0, 1.0)
        yield {name: float(offset + scale * v) for name, v in zip(BINARY_FEATURES, x)}, labels[int(y)]


MULTI_LABELS = ["cement", "sky", "grass", True]


def multiclass_stream(n, seed, labels=MULTI_LABELS):
    """Records of three features in [0, 1000] whose means depend on the class (any of ``labels``)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(200, 800, size=(len(labels), 3))
    for _ in range(n):
        c = int(rng.integers(len(labels)))
        x = np.clip(rng.normal(centres[c], 120.0), 0.0, 1000.0)
        yield {f"f{j}": float(x[j]) for j in range(3)}, labels[c]


def close(fast: dict, reference: dict, where: str) -> None:
    assert list(fast) == list(reference), where
    for label, value in reference.items():
        assert math.isclose(fast[label], value, rel_tol=TOL, abs_tol=TOL), (
            f"{where}: P({label!r}) fast {fast[label]!r} != reference {value!r}")


def drive(model, stream, shift, tmp_path=None, reload_at=(), check_many_every=0):
    """Progressive validation of ``model`` against the reference at every record; ``reload_at``: positions after
    which the model is saved and loaded (the reference goes on with the live model's state)."""
    reference = ReferencePredictions(model, shift)
    held = []
    for i, (x, y) in enumerate(stream):
        where = f"record {i + 1}"
        expected = reference.proba(model, x)
        close(model.predict_proba_one(x), expected, where)
        best = max(expected.values())
        if sum(v > best - 1e-9 for v in expected.values()) == 1:  # no tie: the arg-max is defined
            assert model.predict_one(x) == max(expected, key=expected.get), where
        held.append(x)
        if check_many_every and (i + 1) % check_many_every == 0:
            pd = pytest.importorskip("pandas")
            frame = pd.DataFrame(held[-5:])
            many = model.predict_proba_many(frame)
            for r, row in enumerate(held[-5:]):
                close({label: float(many[label].iloc[r]) for label in expected}, reference.proba(model, row),
                      f"{where}, predict_proba_many row {r}")
        model.learn_one(x, y)
        if i + 1 in reload_at:
            path = tmp_path / f"model-{i + 1}.npz"
            model.save(path)
            model = onpair.load(path)
    return model


def pairwise_configurations():
    for params in PrivatePairwiseClassifier._unit_test_params():
        yield pytest.param(params, id="unit:" + ",".join(f"{k}={v}" for k, v in params.items() if k != "bounds"))
    yield pytest.param({"bounds": (-1000.0, 1000.0), "discover_bounds": 100, "features": BINARY_FEATURES},
                       id="discovery-wide")
    yield pytest.param({"bounds": (0.0, 1.0), "discover_bounds": 60, "half_life": 64.0, "features": BINARY_FEATURES},
                       id="discovery+half_life")
    yield pytest.param({"bounds": (0.0, 1.0), "classes": ("no", "yes"), "features": BINARY_FEATURES},
                       id="string-classes")
    yield pytest.param({"bounds": (0.0, 1.0), "learner_params": {"private": False}, "features": BINARY_FEATURES},
                       id="twin")
    yield pytest.param({"bounds": (0.0, 1.0), "learner_params": {"model_type": "centroid"},
                        "features": BINARY_FEATURES}, id="centroid")


@pytest.mark.parametrize("params", list(pairwise_configurations()))
def test_pairwise_classifier_answers_to_the_reference(params):
    labels = params.get("classes", (False, True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # the unit configurations read the order off the stream
        model = PrivatePairwiseClassifier(seed=3, **params)
        drive(model, binary_stream(700, seed=11, labels=labels), PrivatePairwiseClassifier.REFRESH_SHIFT)


def multiclass_configurations():
    for params in PrivateClassifier._unit_test_params():
        yield pytest.param(params, id="unit:" + ",".join(f"{k}={v}" for k, v in params.items()
                                                         if k not in ("classes", "bounds")))
    yield pytest.param({"classes": MULTI_LABELS, "bounds": (-5000.0, 5000.0), "discover_bounds": 120,
                        "features": ["f0", "f1", "f2"]}, id="discovery-wide")
    yield pytest.param({"classes": MULTI_LABELS, "bounds": (0.0, 1000.0), "half_life": 100.0,
                        "features": ["f0", "f1", "f2"]}, id="half_life")


@pytest.mark.parametrize("params", list(multiclass_configurations()))
def test_classifier_answers_to_the_reference(params):
    labels = [c for c in params["classes"] if c in MULTI_LABELS] if len(params["classes"]) > 4 else MULTI_LABELS
    labels = labels[:3] if len(labels) > 3 else labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        model = PrivateClassifier(seed=5, **params)
        drive(model, multiclass_stream(700, seed=13, labels=labels), 6)


@pytest.mark.parametrize("reload_at", [(30,), (150,), (30, 77, 300, 511)], ids=["in-warmup", "after", "many"])
def test_a_restored_pairwise_model_predicts_what_the_saved_one_would(tmp_path, reload_at):
    model = PrivatePairwiseClassifier(bounds=(-1000.0, 1000.0), discover_bounds=100, features=BINARY_FEATURES)
    drive(model, binary_stream(700, seed=17), PrivatePairwiseClassifier.REFRESH_SHIFT, tmp_path, reload_at)


@pytest.mark.parametrize("params", [
    pytest.param({"bounds": (0.0, 1.0)}, id="default"),
    pytest.param({"bounds": (0.0, 1.0), "half_life": 40.0}, id="half_life"),
    pytest.param({"bounds": (0.0, 1.0), "learner_params": {"private": False}}, id="twin"),
    pytest.param({"learner": "onpairstrc", "bounds": (0.0, 1.0), "buffer": ("reservoir", 16), "release_every": 10},
                 id="onpairstrc"),
])
def test_every_restored_pairwise_model_kind_predicts_as_saved(tmp_path, params):
    model = PrivatePairwiseClassifier(features=BINARY_FEATURES, **params)
    drive(model, binary_stream(500, seed=19), PrivatePairwiseClassifier.REFRESH_SHIFT, tmp_path, (45, 133, 290))


@pytest.mark.parametrize("params", [
    pytest.param({"bounds": (0.0, 1000.0)}, id="default"),
    pytest.param({"bounds": (-5000.0, 5000.0), "discover_bounds": 120}, id="discovery"),
])
def test_a_restored_classifier_predicts_what_the_saved_one_would(tmp_path, params):
    model = PrivateClassifier(classes=MULTI_LABELS, features=["f0", "f1", "f2"], **params)
    drive(model, multiclass_stream(600, seed=23), 6, tmp_path, (60, 200, 333))


def test_frames_answer_to_the_reference():
    pytest.importorskip("pandas", reason="predict_proba_many takes a pandas frame")
    model = PrivatePairwiseClassifier(bounds=(-1000.0, 1000.0), discover_bounds=100, features=BINARY_FEATURES, seed=1)
    drive(model, binary_stream(400, seed=29), PrivatePairwiseClassifier.REFRESH_SHIFT, check_many_every=37)
    model = PrivateClassifier(classes=MULTI_LABELS, bounds=(-5000.0, 5000.0), discover_bounds=120,
                              features=["f0", "f1", "f2"], seed=1)
    drive(model, multiclass_stream(400, seed=31), 6, check_many_every=37)


# -- the array learner: learn_one, learn_many and the reference, release by release -----------------------------
LEARNER_CONFIGURATIONS = [
    pytest.param({}, id="auc"),
    pytest.param({"model_type": "centroid"}, id="centroid"),
    pytest.param({"half_life": 50.0}, id="auc-decayed"),
    pytest.param({"mechanism": "toeplitz"}, id="toeplitz"),
    pytest.param({"discover_bounds": 80, "bounds": (-50.0, 50.0)}, id="discovery"),
    pytest.param({"task": "classify", "classes": [0, 1, 2]}, id="classify"),
    pytest.param({"task": "classify", "classes": [0, 1, 2], "discover_bounds": 80, "bounds": (-50.0, 50.0)},
                 id="classify-discovery"),
    pytest.param({"private": False}, id="twin"),
]


@pytest.mark.parametrize("params", LEARNER_CONFIGURATIONS)
def test_array_learner_answers_to_the_reference(params):
    rng = np.random.default_rng(7)
    n, d = 300, 3
    classify = params.get("task") == "classify"
    y = rng.integers(0, 3, n) if classify else np.where(rng.random(n) < 0.5, 1, -1)
    X = np.clip(rng.normal(0.3 * np.asarray(y, dtype=float)[:, None], 1.0, size=(n, d)), -3, 3)
    settings = dict({"bounds": (-3.0, 3.0), "n_features": d, "seed": 2}, **params)
    one, many = OnPairStats(**settings), OnPairStats(**settings)
    Xq = rng.normal(size=(4, d))
    for i in range(n):
        one.learn_one(X[i], y[i])
        if one.task == "metric":
            continue
        score = stats_scorer(one)
        expected = np.array([score(q) for q in Xq])
        np.testing.assert_allclose(one.predict_proba(Xq), expected, rtol=TOL, atol=TOL, err_msg=f"record {i + 1}")
    # learn_many in blocks of uneven sizes gives the same release and the same predictions, bit for bit
    cuts = [0, 1, 38, 39, 150, 151, n]
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        many.learn_many(X[lo:hi], y[lo:hi])
    np.testing.assert_array_equal(many.predict_proba(Xq), one.predict_proba(Xq))
    np.testing.assert_array_equal(many._stats.estimate(), one._stats.estimate())


# -- a snapshot's predictor is checked on restore (independent review of issue 31's change) ---------------------
def _saved_model(tmp_path):
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=BINARY_FEATURES, seed=3)
    for i, (x, y) in enumerate(binary_stream(300, seed=5)):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return model


@pytest.mark.parametrize("field, value, message", [
    ("stop", 10 ** 15, "refresh rule"),
    ("variance", 0.0, "variance"),
    ("index", 1, "index"),
    ("extra", 1, "unexpected"),
])
def test_an_edited_predictor_is_refused(tmp_path, field, value, message):
    model = _saved_model(tmp_path)
    inner = model._inner
    arrays = {}
    state = inner._export_state(arrays)
    state["predictor"][field] = value
    from onpair.core.snapshot import SnapshotReader
    fresh = OnPairStats(**{k: getattr(inner, k) for k in ("bounds", "seed")}, n_features=4)
    with pytest.raises(ValueError, match=message):
        fresh._restore_state(state, SnapshotReader("edited", dict(arrays)))


def test_an_edited_predictor_estimate_is_refused(tmp_path):
    model = _saved_model(tmp_path)
    inner = model._inner
    arrays = {}
    state = inner._export_state(arrays)
    arrays["predictor.estimate"] = arrays["predictor.estimate"] + 1e-3
    from onpair.core.snapshot import SnapshotReader
    fresh = OnPairStats(bounds=(0.0, 1.0), seed=3, n_features=4)
    if state["predictor"]["index"] == inner.n_releases:
        with pytest.raises(ValueError, match="estimate"):
            fresh._restore_state(state, SnapshotReader("edited", dict(arrays)))
    arrays["predictor.estimate"] = np.full_like(arrays["predictor.estimate"], 1e300)
    with pytest.raises(ValueError, match="estimate"):
        OnPairStats(bounds=(0.0, 1.0), seed=3, n_features=4)._restore_state(state, SnapshotReader("edited",
                                                                                                   dict(arrays)))


def test_an_edited_direction_model_is_refused():
    model = PrivatePairwiseClassifier(learner="onpairstrc", bounds=(0.0, 1.0), features=BINARY_FEATURES,
                                      buffer=("reservoir", 16), release_every=10, seed=3)
    for x, y in binary_stream(200, seed=5):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    inner = model._inner
    arrays = {}
    state = inner._export_state(arrays)
    arrays["predictor.model"] = arrays["predictor.model"] * 1.5 + 0.01
    from onpair.core.snapshot import SnapshotReader
    fresh = inner.clone()  # the same parameters, nothing learned
    with pytest.raises(ValueError, match="predictor.model"):
        fresh._restore_state(state, SnapshotReader("edited", dict(arrays)))
