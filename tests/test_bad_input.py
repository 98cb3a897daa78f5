"""Bad input to the online learners: a clear error and no change of state or budget.

Contract (``onpair.core._validation``): errors name the argument, the record (index in the call and 1-based
stream position) and the offending value; a feature of the wrong type (a string, a dict) is a
``TypeError``, a wrong value or shape a ``ValueError`` (NumPy's and scikit-learn's convention); a whole
block is validated before
anything is touched, so a failed call spends no budget, draws no noise and learns nothing. The last
claim is checked twice: on the internal state directly, and by running a twin learner (same seed) that
never saw the bad call and must end up bit-for-bit identical.
"""

import copy
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from learner_state import assert_same_state, state_of
from onpair import OnPairC, OnPairStrC, PairwiseGIGA

# Every learner (and class) × every bad call: the fast tier runs each bad call once, on learners in rotation,
# and each learner and class at least once (conftest.py); the full tier, every pair.
pytestmark = pytest.mark.covering("learner_name", "name", "cls_name")

D = 3
SEED = 7

# name -> factory of a fresh learner; all see records in [0, 0.5]^3, inside the unit ball and the box.
LEARNERS = {
    "strc": lambda: OnPairStrC(norm_bound=1.0, n=200, release_every=4, seed=SEED),
    "strc_square_box": lambda: OnPairStrC(loss="square", bounds=([0.0] * D, [1.0] * D), n=200,
                                          release_every=4, seed=SEED),
    "strc_unbounded_every": lambda: OnPairStrC(norm_bound=1.0, release_every=3, lam=1.0, seed=SEED),
    "c_n": lambda: OnPairC(norm_bound=1.0, n=200, release_every=5, center="random", seed=SEED),
    "c_lam_doubling": lambda: OnPairC(norm_bound=1.0, lam=0.5, seed=SEED),
    "giga": lambda: PairwiseGIGA(norm_bound=1.0, seed=SEED),
    "giga_square_nolam": lambda: PairwiseGIGA(norm_bound=1.0, loss="square", lam=0.0, seed=SEED),
    "giga_hinge": lambda: PairwiseGIGA(norm_bound=1.0, loss="hinge", seed=SEED),
}


def data(m, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 0.5, size=(m, D))
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(m) > 0.25, 1, -1)
    return X, y


X_FIRST, Y_FIRST = data(10, 1)   # seen before the bad call: stream positions 1..10
X_AFTER, Y_AFTER = data(60, 2)   # seen after it: reaches round 70, past the doubling release at 64
T0 = X_FIRST.shape[0]


# -- state snapshots ---------------------------------------------------------------------------------
def snapshot(learner):
    """Everything a failed call could have touched: the learner's whole state, through its objects."""
    return state_of(learner)


def assert_twins(a, b):
    """Two learners that must be bit-for-bit the same."""
    assert_same_state(snapshot(a), snapshot(b))
    assert np.array_equal(a.model, b.model)


# -- bad calls ---------------------------------------------------------------------------------------
def _nan_at(i, k, value=np.nan, m=10):
    X, _ = data(m, 3)
    X[i, k] = value
    return X


def _labels_with(i, value, m=10):
    y = [1, -1] * (m // 2)
    y[i] = value
    return y


def _object_block_with_string():
    X = data(10, 3)[0].astype(object)
    X[5, 2] = "zz"
    return X


def _outside_then_nan():
    X = data(10, 3)[0]
    X[2] = [5.0, 5.0, 5.0]   # outside every learner's bounds: would be clipped and counted
    X[5, 1] = np.nan
    return X


P = T0 + 6  # stream position of record index 5 of a call made after the first block

# (id, method, args, substrings the message must contain)
BAD_CALLS = [
    ("one_dim", "learn_one", (np.zeros(4), 1), ["x", "4 features", f"expects {D}"]),
    ("one_dim_short", "learn_one", ([0.1, 0.2], 1), ["x", "2 features", f"expects {D}"]),
    ("one_nan", "learn_one", (np.array([0.1, np.nan, 0.2]), 1),
     ["x[0, 1]", "nan", f"stream position {T0 + 1}", "feature 1"]),
    ("one_inf", "learn_one", (np.array([0.1, 0.2, -np.inf]), 1),
     ["x[0, 2]", "inf", f"stream position {T0 + 1}", "feature 2"]),
    ("one_string", "learn_one", ("abc", 1), ["x", "'abc'"]),
    ("one_string_array", "learn_one", (np.array(["a", "b", "c"]), 1), ["x", "'a'"]),
    ("one_object_string", "learn_one", (np.array([0.1, "q", 0.3], dtype=object), 1), ["x", "'q'"]),
    ("one_2d", "learn_one", (np.zeros((1, D)), 1), ["x", "1-D", "(1, 3)"]),
    ("one_scalar", "learn_one", (0.5, 1), ["x", "1-D"]),
    ("one_empty", "learn_one", (np.zeros(0), 1), ["x", "no features"]),
    ("one_ragged", "learn_one", ([0.1, [0.2, 0.3], 0.4], 1), ["x"]),
    ("one_dict", "learn_one", ({"a": 0.1, "b": 0.2, "c": 0.3}, 1), ["x", "dict"]),
    ("one_label_2", "learn_one", (np.zeros(D), 2), ["y[0] = 2", f"stream position {T0 + 1}"]),
    ("one_label_half", "learn_one", (np.zeros(D), 0.5), ["y[0] = 0.5", f"stream position {T0 + 1}"]),
    ("one_label_minus2", "learn_one", (np.zeros(D), -2), ["y[0] = -2", f"stream position {T0 + 1}"]),
    ("one_label_str", "learn_one", (np.zeros(D), "a"), ["y[0] = 'a'", f"stream position {T0 + 1}"]),
    ("one_label_str1", "learn_one", (np.zeros(D), "1"), ["y[0] = '1'", f"stream position {T0 + 1}"]),
    ("one_label_none", "learn_one", (np.zeros(D), None), ["y[0] = None", f"stream position {T0 + 1}"]),
    ("one_label_nan", "learn_one", (np.zeros(D), float("nan")), ["y[0] = nan", f"stream position {T0 + 1}"]),
    ("one_label_complex", "learn_one", (np.zeros(D), 1 + 0j), ["y[0]", f"stream position {T0 + 1}"]),
    ("one_label_list", "learn_one", (np.zeros(D), [1]), ["y[0]", f"stream position {T0 + 1}"]),
    ("many_dim", "learn_many", (np.zeros((10, 4)), [1] * 10), ["X", "4 features", f"expects {D}"]),
    ("many_nan_mid", "learn_many", (_nan_at(5, 1), [1] * 10),
     ["X[5, 1]", "nan", "record 5", f"stream position {P}", "feature 1"]),
    ("many_inf_mid", "learn_many", (_nan_at(5, 2, np.inf), [1] * 10),
     ["X[5, 2]", "inf", "record 5", f"stream position {P}", "feature 2"]),
    ("many_outside_then_nan", "learn_many", (_outside_then_nan(), [1] * 10),
     ["X[5, 1]", f"stream position {P}"]),
    ("many_object_string", "learn_many", (_object_block_with_string(), [1] * 10), ["X", "'zz'"]),
    ("many_string", "learn_many", ("abc", [1]), ["X", "'abc'"]),
    ("many_3d", "learn_many", (np.zeros((2, 5, D)), [1] * 2), ["X", "2-D", "(2, 5, 3)"]),
    ("many_1d", "learn_many", (np.zeros(D), [1]), ["X", "2-D"]),
    ("many_ragged", "learn_many", ([[0.1, 0.2, 0.3], [0.1, 0.2]], [1, 1]), ["X"]),
    ("many_label_2_mid", "learn_many", (data(10, 3)[0], _labels_with(5, 2)), ["y[5] = 2", f"stream position {P}"]),
    ("many_label_2_array", "learn_many", (data(10, 3)[0], np.array(_labels_with(5, 2))),
     ["y[5] = 2", f"stream position {P}"]),
    ("many_label_half_mid", "learn_many", (data(10, 3)[0], np.array(_labels_with(5, 0.5))),
     ["y[5] = 0.5", f"stream position {P}"]),
    ("many_label_str_mid", "learn_many", (data(10, 3)[0], _labels_with(5, "a")),
     ["y[5] = 'a'", f"stream position {P}"]),
    ("many_label_none_mid", "learn_many", (data(10, 3)[0], _labels_with(5, None)),
     ["y[5] = None", f"stream position {P}"]),
    ("many_label_nan_mid", "learn_many", (data(10, 3)[0], np.array(_labels_with(5, np.nan))),
     ["y[5] = nan", f"stream position {P}"]),
    ("many_label_strings", "learn_many", (data(2, 3)[0], np.array(["1", "0"])), ["y[0]", f"stream position {T0 + 1}"]),
    ("many_label_string", "learn_many", (data(3, 3)[0], "101"), ["y", "string"]),
    ("many_label_scalar", "learn_many", (data(1, 3)[0], 1), ["y", "1-D"]),
    ("many_label_2d", "learn_many", (data(10, 3)[0], np.ones((10, 1))), ["y", "1-D", "(10, 1)"]),
    ("many_short_y", "learn_many", (data(10, 3)[0], [1] * 9), ["X has 10 records", "y has 9 labels"]),
    ("many_long_y", "learn_many", (data(10, 3)[0], [1] * 11), ["X has 10 records", "y has 11 labels"]),
]


#: Calls whose features have the wrong type: TypeError (every other bad call is a ValueError).
WRONG_TYPE = {"one_string", "one_string_array", "one_object_string", "one_dict", "many_object_string",
              "many_string"}


@pytest.fixture(scope="module", params=list(LEARNERS), ids=list(LEARNERS))
def learner_name(request):
    return request.param


@pytest.mark.parametrize("call_id, method, args, needles", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_call_raises_names_it_and_changes_nothing(learner_name, call_id, method, args, needles):
    learner = LEARNERS[learner_name]().learn_many(X_FIRST, Y_FIRST)
    twin = LEARNERS[learner_name]().learn_many(X_FIRST, Y_FIRST)
    before = snapshot(learner)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed call must not even warn (e.g. about clipping)
        with pytest.raises(TypeError if call_id in WRONG_TYPE else ValueError) as info:
            getattr(learner, method)(*copy.deepcopy(args))
    assert not isinstance(info.value, ValueError if call_id in WRONG_TYPE else TypeError)
    message = str(info.value)
    for needle in needles:
        assert needle in message, (needle, message)
    assert_same_state(before, snapshot(learner))
    # ... and it goes on exactly as a twin that never saw the bad call
    for lr in (learner, twin):
        lr.learn_many(X_AFTER[:30], Y_AFTER[:30])
        for i in range(30, 34):
            lr.learn_one(X_AFTER[i], int(Y_AFTER[i]))
        lr.learn_many(X_AFTER[34:], Y_AFTER[34:])
    assert learner.n_seen == T0 + X_AFTER.shape[0]
    assert_twins(learner, twin)
    if learner.private:
        # the comparison is not vacuous: releases happened after the failed call
        rounds = [r["round"] for r in learner.privacy_report()["releases"]]
        assert any(t > T0 for t in rounds)


def test_failing_block_applies_none_of_it():
    """A bad record at index 5 of 10: records 0..4 are not learned either."""
    for name, factory in LEARNERS.items():
        learner = factory().learn_many(X_FIRST, Y_FIRST)
        before = snapshot(learner)
        X = X_AFTER[:10].copy()
        X[5, 0] = np.nan
        with pytest.raises(ValueError, match="record 5"):
            learner.learn_many(X, Y_AFTER[:10])
        assert learner.n_seen == T0, name
        assert_same_state(before, snapshot(learner))
        # the good prefix alone is learned normally afterwards
        learner.learn_many(X_AFTER[:5], Y_AFTER[:5])
        twin = factory().learn_many(X_FIRST, Y_FIRST).learn_many(X_AFTER[:5], Y_AFTER[:5])
        assert_twins(learner, twin)


@pytest.mark.parametrize("name", [name for name, make in LEARNERS.items() if make().dimension is None])
def test_bad_first_call_leaves_dimension_unknown(name):
    learner = LEARNERS[name]()
    before = snapshot(learner)
    with pytest.raises(ValueError, match=r"y\[1\] = 3"):
        learner.learn_many(np.zeros((2, 5)), [1, 3])
    with pytest.raises(ValueError, match=r"X\[0, 0\]"):
        learner.learn_many([[np.nan] * 5], [1])
    assert_same_state(before, snapshot(learner))
    assert learner.dimension is None
    with pytest.raises(ValueError, match="number of features is unknown"):
        learner.model
    # the failed 5-feature calls did not fix the dimension: 3 features are still fine
    learner.learn_many(X_FIRST, Y_FIRST)
    assert_twins(learner, LEARNERS[name]().learn_many(X_FIRST, Y_FIRST))


@pytest.mark.parametrize("make, width", [
    (lambda: PairwiseGIGA(norm_bound=1.0, n_features=3), 2),
    (lambda: PairwiseGIGA(bounds=([0, 0, 0], [1, 1, 1])), 4),
    (lambda: OnPairStrC(norm_bound=1.0, n_features=3, n=50), 4),
    (lambda: OnPairC(bounds=([0, 0, 0], [1, 1, 1]), n=50), 2),
])
def test_dimension_declared_up_front(make, width):
    learner = make()
    before = snapshot(learner)
    with pytest.raises(ValueError, match=f"x has {width} features per record but the learner expects 3"):
        learner.learn_one(np.zeros(width), 1)
    with pytest.raises(ValueError, match=f"X has {width} features per record but the learner expects 3"):
        learner.learn_many(np.zeros((4, width)), [1, 0, 1, 0])
    assert_same_state(before, snapshot(learner))


def test_step_sizes_too_short_is_refused_before_anything_changes():
    steps = [0.0] + [0.05] * 11
    learner = PairwiseGIGA(norm_bound=1.0, step_sizes=steps, seed=SEED).learn_many(X_FIRST, Y_FIRST)
    before = snapshot(learner)
    with pytest.raises(ValueError, match="step_sizes has 12 entries but this call reaches round 15"):
        learner.learn_many(X_AFTER[:5], Y_AFTER[:5])
    assert_same_state(before, snapshot(learner))
    learner.learn_many(X_AFTER[:2], Y_AFTER[:2])
    twin = PairwiseGIGA(norm_bound=1.0, step_sizes=steps, seed=SEED).learn_many(X_FIRST, Y_FIRST).learn_many(X_AFTER[:2], Y_AFTER[:2])
    assert_twins(learner, twin)


# -- known bugs ---------------------------------------------------------------------------------------
def test_string_feature_error_names_the_record():
    learner = PairwiseGIGA(norm_bound=1.0).learn_many(X_FIRST, Y_FIRST)
    with pytest.raises(TypeError) as info:
        learner.learn_many(_object_block_with_string(), [1] * 10)
    assert "record 5" in str(info.value) or "X[5, 2]" in str(info.value)
    assert f"stream position {P}" in str(info.value)


@pytest.mark.parametrize("method, args", [
    ("learn_one", (np.array([0.1 + 2j, 0.0, 0.0]), 1)),
    ("learn_many", (np.array([[0.1 + 2j, 0.0, 0.0]]), [1])),
])
def test_complex_features_rejected(method, args):
    learner = PairwiseGIGA(norm_bound=1.0).learn_many(X_FIRST, Y_FIRST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            getattr(learner, method)(*args)
    assert learner.n_seen == T0


@pytest.mark.parametrize("method, args", [
    ("learn_one", (np.zeros(3), 10**400)),
    ("learn_one", ([10**400, 0, 0], 1)),
    ("learn_many", (np.zeros((2, 3)), [1, 10**400])),
    ("learn_many", ([[0, 0, 0], [10**400, 0, 0]], [1, 1])),
])
def test_huge_int_is_a_value_error(method, args):
    learner = PairwiseGIGA(norm_bound=1.0).learn_many(X_FIRST, Y_FIRST)
    with pytest.raises(ValueError):
        getattr(learner, method)(*args)


# -- labels ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["strc", "c_n", "giga", "giga_square_nolam"])
def test_label_encodings_give_identical_models(name):
    X, y = data(40, 5)
    positive = y > 0
    encodings = {
        "pm1": y.astype(int),
        "pm1_float": y.astype(float),
        "01": positive.astype(int),
        "01_list": [int(v) for v in positive],
        "bool": positive,
        "bool_list": [bool(v) for v in positive],
        "object_mixed": np.array([True if v else -1 for v in positive], dtype=object),
    }
    models = {}
    for key, labels in encodings.items():
        learner = LEARNERS[name]().learn_many(X, labels)
        models[key] = learner.model
    one_by_one = LEARNERS[name]()
    for xi, pi in zip(X, positive):
        one_by_one.learn_one(xi, bool(pi))
    models["learn_one_bool"] = one_by_one.model
    one_by_one_01 = LEARNERS[name]()
    for xi, pi in zip(X, positive):
        one_by_one_01.learn_one(xi, np.int64(pi))
    models["learn_one_np01"] = one_by_one_01.model
    reference = models["pm1"]
    assert not np.array_equal(reference, LEARNERS[name]().learn_many(X, -y).model)  # labels matter
    for key, model in models.items():
        assert np.array_equal(model, reference), key


# -- empty blocks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(LEARNERS))
def test_empty_block_is_a_no_op(name):
    learner = LEARNERS[name]().learn_many(X_FIRST, Y_FIRST)
    twin = LEARNERS[name]().learn_many(X_FIRST, Y_FIRST)
    before = snapshot(learner)
    assert learner.learn_many(np.empty((0, D)), []) is learner
    assert learner.learn_many(np.empty((0, D)), np.empty(0)) is learner
    assert learner.learn_many(np.empty((0, D)), np.empty(0, dtype=bool)) is learner
    assert_same_state(before, snapshot(learner))
    learner.learn_many(X_AFTER, Y_AFTER)
    twin.learn_many(X_AFTER, Y_AFTER)
    assert_twins(learner, twin)


def test_empty_block_on_fresh_learner_does_not_fix_the_dimension():
    learner = PairwiseGIGA(norm_bound=1.0)
    learner.learn_many(np.empty((0, 5)), [])
    assert learner.dimension is None and learner.n_seen == 0
    learner.learn_many(X_FIRST, Y_FIRST)
    assert learner.model.shape == (D,)


# -- clipping ----------------------------------------------------------------------------------------
def _clipping_warnings(records):
    return [w for w in records if "outside the declared feature bounds" in str(w.message)]


@pytest.mark.parametrize("make, outside", [
    (lambda: OnPairStrC(bounds=(0.0, 0.5), n=100, release_every=10, seed=1), [1.5, 0.2, 0.2]),
    (lambda: OnPairC(bounds=([0.0] * D, [0.5] * D), n=100, release_every=10, seed=1), [0.2, -0.1, 0.2]),
    (lambda: OnPairStrC(norm_bound=1.0, n=100, seed=1), [2.0, 2.0, 0.0]),           # the unit ball
    (lambda: OnPairC(norm_bound=0.9, n=100, seed=1), [0.6, 0.6, 0.4]),  # ‖·‖ ≈ 0.938 > 0.9 ≥ √3/2
    (lambda: PairwiseGIGA(bounds=(0.0, 0.5)), [0.6, 0.0, 0.0]),
])
def test_clipped_records_are_counted_and_warned_once(make, outside):
    learner = make()
    X = data(20, 9)[0]
    assert np.all(X <= 0.5) and np.all(np.linalg.norm(X, axis=1) <= 0.5 * math.sqrt(D))
    X_in = X.copy()
    X[[2, 7, 11]] = outside
    y = np.where(np.arange(20) % 2 == 0, 1, -1)

    def n_clipped():
        return learner.privacy_report()["n_clipped"]

    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        learner.learn_many(X[:10], y[:10])     # records 2 and 7 outside
        learner.learn_many(X_in[10:], y[10:])  # nothing outside: nothing counted
        assert n_clipped() == 2
        learner.learn_many(X[10:], y[10:])     # record 11 outside
        learner.learn_one(np.array(outside), 1)
    clip = _clipping_warnings(records)
    assert len(clip) == 1
    assert clip[0].category is UserWarning
    assert "2" not in str(clip[0].message)  # the unnoised count stays out of logs (curator-only report)
    assert clip[0].filename == __file__    # attributed to the caller, not to the library
    assert n_clipped() == 4
    # a record exactly on the bounds is not clipped
    if learner.feature_bounds.kind == "box":
        learner.learn_one(np.broadcast_to(learner.feature_bounds.upper, (D,)).copy(), 1)
        assert n_clipped() == 4


def test_records_inside_bounds_never_warn():
    learner = OnPairStrC(bounds=(0.0, 0.5), n=100, release_every=10, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        learner.learn_many(*data(50, 4))
    assert learner.privacy_report()["n_clipped"] == 0


# -- decision_function -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(LEARNERS))
def test_decision_function_bad_input(name):
    learner = LEARNERS[name]().learn_many(X_FIRST, Y_FIRST)
    before = snapshot(learner)
    with pytest.raises(ValueError, match=f"X has 4 features per record but the learner expects {D}"):
        learner.decision_function(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"X\[1, 2\] = .*nan.*features must be finite"):
        learner.decision_function(np.array([[0.1, 0.1, 0.1], [0.2, 0.2, np.nan]]))
    with pytest.raises(ValueError, match=r"X\[0, 0\] = .*inf"):
        learner.decision_function(np.array([[np.inf, 0.1, 0.1]]))
    with pytest.raises(ValueError, match="2-D"):
        learner.decision_function(np.zeros(D))
    with pytest.raises(TypeError, match="X"):
        learner.decision_function("abc")
    assert_same_state(before, snapshot(learner))
    # a good call still works and scores with the visible model
    Z = np.array([[0.1, 0.2, 0.3]])
    scores = learner.decision_function(Z)
    assert scores.shape == (1,) and np.isfinite(scores).all()


def test_decision_function_before_dimension_known():
    with pytest.raises(ValueError, match="number of features is unknown"):
        PairwiseGIGA(norm_bound=1.0).decision_function(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="number of features is unknown"):
        OnPairStrC(norm_bound=1.0, n=10).decision_function(np.zeros((1, 3)))


# -- constructor -------------------------------------------------------------------------------------
CLASSES = {
    "OnPairStrC": (OnPairStrC, {}),
    "OnPairC": (OnPairC, {"n": 100}),
    "PairwiseGIGA": (PairwiseGIGA, {}),
}
PRIVATE = ["OnPairStrC", "OnPairC"]

NAN, INF = float("nan"), float("inf")

COMMON_BAD = [
    *[("radius", v, "radius") for v in (0, 0.0, -1.0, NAN, INF, True, "0.1", None)],
    *[("lam", v, "lam") for v in (-1.0, -1e-300, NAN, INF, True, "1", "automatic")],
    *[("loss", v, "loss") for v in ("foo", "Logistic", None, 1)],
    *[("norm_bound", v, "norm_bound") for v in (0.0, -1.0, NAN, INF, True)],
    *[("n_features", v, "n_features") for v in (0, -1, 2.5, True, "3")],
    ("step_sizes", "constant", "step_sizes"),
    ("step_sizes", [0.1, -0.1], r"step_sizes\[1\]"),
    ("step_sizes", [0.1, NAN], r"step_sizes\[1\]"),
    ("step_sizes", [], "step_sizes"),
    ("bounds", 5, "bounds"),
    ("bounds", (0.0, 1.0, 2.0), "bounds"),
    ("bounds", (1.0, 0.0), "feature 0"),
    ("bounds", ([0.0, 0.0], [1.0, np.nan]), "finite"),
]

PRIVATE_BAD = [
    *[("epsilon", v, "epsilon") for v in (0, 0.0, -1.0, NAN, INF, -INF, True, False, "1", None, 1j)],
    *[("delta", v, "delta") for v in (0, 0.0, 1, 1.0, 1.5, -1e-5, NAN, INF, True, "1e-5", None)],
    ("lam", 0, "lam"),
    ("lam", 0.0, "lam"),
    ("loss", "hinge", "loss"),
    ("mode", "foo", "mode"),
    ("mode", None, "mode"),
    ("mode", "Paper", "mode"),
    ("accounting", "foo", "accounting"),
    ("accounting", "zcdp", "accounting"),
    ("budget_split", "foo", "budget_split"),
    ("n", 2.5, r"\bn\b"),
    ("n", "100", r"\bn\b"),
    ("release_every", 0, "release_every"),
    ("release_every", 1.5, "release_every"),
    ("horizon", 0, "horizon"),
    ("max_releases", 0, "max_releases"),
]


def _with_bounds(base, arg, value):
    """``base`` with ``arg`` set to ``value``, and the public bounds every learner needs unless ``arg`` is one."""
    bounds = {} if arg in ("bounds", "norm_bound") else {"bounds": (0.0, 1.0)}
    return {**bounds, **base, arg: value}


@pytest.mark.parametrize("cls_name", list(CLASSES))
@pytest.mark.parametrize("arg, value, pattern", COMMON_BAD, ids=[f"{a}={v!r}" for a, v, _ in COMMON_BAD])
def test_constructor_common_bad_arguments(cls_name, arg, value, pattern):
    cls, base = CLASSES[cls_name]
    with pytest.raises(ValueError, match=pattern):
        cls(**_with_bounds(base, arg, value))


@pytest.mark.parametrize("cls_name", PRIVATE)
@pytest.mark.parametrize("arg, value, pattern", PRIVATE_BAD, ids=[f"{a}={v!r}" for a, v, _ in PRIVATE_BAD])
def test_constructor_private_bad_arguments(cls_name, arg, value, pattern):
    cls, base = CLASSES[cls_name]
    with pytest.raises(ValueError, match=pattern):
        cls(**_with_bounds(base, arg, value))


@pytest.mark.parametrize("cls_name", list(CLASSES))
def test_bounds_and_norm_bound_together(cls_name):
    cls, base = CLASSES[cls_name]
    with pytest.raises(ValueError) as info:
        cls(**base, bounds=(0.0, 1.0), norm_bound=1.0)
    assert "bounds" in str(info.value) and "norm_bound" in str(info.value)


@pytest.mark.parametrize("cls_name", list(CLASSES))
def test_n_features_disagreeing_with_bounds(cls_name):
    cls, base = CLASSES[cls_name]
    with pytest.raises(ValueError, match="n_features"):
        cls(**base, bounds=([0.0] * 3, [1.0] * 3), n_features=4)


@pytest.mark.parametrize("cls_name", PRIVATE)
def test_paper_mode_needs_n(cls_name):
    with pytest.raises(ValueError, match=r"mode='paper' needs the stream length n"):
        CLASSES[cls_name][0](norm_bound=1.0, mode="paper", lam=1.0)


@pytest.mark.parametrize("cls_name", PRIVATE)
@pytest.mark.parametrize("split", ["uniform", "proportional"])
def test_finite_split_for_unbounded_stream(cls_name, split):
    with pytest.raises(ValueError, match="budget_split"):
        CLASSES[cls_name][0](norm_bound=1.0, lam=1.0, release_every=10, budget_split=split)


@pytest.mark.parametrize("cls_name", PRIVATE)
def test_release_every_and_release_at_together(cls_name):
    cls, base = CLASSES[cls_name]
    with pytest.raises(ValueError, match="release_every or release_at"):
        cls(**base, norm_bound=1.0, release_every=10, release_at=[5, 50])


def test_onpairc_needs_n_or_lam():
    with pytest.raises(ValueError) as info:
        OnPairC(norm_bound=1.0)
    assert "n" in str(info.value) and "lam" in str(info.value)
    # either one is enough
    assert OnPairC(norm_bound=1.0, n=100).strong_convexity > 0
    assert OnPairC(norm_bound=1.0, horizon=100).strong_convexity > 0
    assert OnPairC(norm_bound=1.0, lam=0.5).strong_convexity == 0.5


@pytest.mark.parametrize("n", [0, -10])
def test_onpairstrc_bad_n(n):
    with pytest.raises(ValueError, match=r"\bn must be a positive integer"):
        OnPairStrC(norm_bound=1.0, n=n)


@pytest.mark.parametrize("kwargs, argument", [
    (dict(n=0), "n"), (dict(n=-10), "n"), (dict(n=INF), "n"),
    (dict(horizon=0), "horizon"), (dict(horizon=-10), "horizon"),
])
def test_onpairc_bad_n_is_named(kwargs, argument):
    with pytest.raises(ValueError, match=rf"\b{argument}\b"):
        OnPairC(**kwargs)


@pytest.mark.parametrize("c", [0, 0.0, -1.0, NAN, INF, True, "1"])
def test_onpairc_bad_c(c):
    with pytest.raises(ValueError, match=r"\bc\b"):
        OnPairC(norm_bound=1.0, n=100, c=c)


# None is the task's default centre; "identity" is for task="metric" only.
@pytest.mark.parametrize("center", ["foo", "Random", "identity", 0])
def test_onpairc_bad_center(center):
    with pytest.raises(ValueError, match="center"):
        OnPairC(norm_bound=1.0, n=100, center=center)


def test_valid_edge_arguments_are_accepted():
    # positive controls for the error tests above
    PairwiseGIGA(norm_bound=1.0, lam=0.0)
    PairwiseGIGA(norm_bound=1.0, loss="hinge")
    OnPairStrC(norm_bound=1.0, delta=0.999, epsilon=1e-3, lam=1e-3, radius=1e3)
    OnPairStrC(norm_bound=1.0, epsilon=np.float32(2.0), delta=np.float64(1e-6), lam=np.int64(2))
    OnPairC(norm_bound=1.0, n=np.int64(100), c=np.float64(2.0))
    OnPairStrC(norm_bound=1.0, loss="square", n=1000, mode="paper", accounting="tight")


# -- regression: privacy_report must not enumerate the future ----------------------------------------
def test_privacy_report_of_dense_unbounded_schedule_is_cheap():
    """privacy_report() on OnPairStrC(release_every=1) with no n/horizon/max_releases used to enumerate
    every release round up to 2**40 (np.arange: 8 TB). Run in a child limited to 8 GiB of address space."""
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30))\n"
        "import numpy as np\n"
        "from onpair import OnPairStrC\n"
        "l = OnPairStrC(norm_bound=1.0, release_every=1, lam=1.0, n_features=2, seed=0)\n"
        "r = l.privacy_report()\n"
        "assert r['status'] == 'learning; next release at round 1', r['status']\n"
        "l.learn_many(np.zeros((5, 2)), [1, 0, 1, 0, 1])\n"
        "r = l.privacy_report()\n"
        "assert r['status'].startswith('learning; next release at round 6'), r['status']\n"
        "assert len(r['releases']) == 5\n"
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS is only reliable on Linux")
    env = dict(os.environ)
    env["NUMBA_NUM_THREADS"] = "1"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-2000:]
