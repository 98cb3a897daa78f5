"""The ecosystems' conventions for bad input, the same at every entry point.

* A feature of the wrong **type** (a string, a dict, an object) is a ``TypeError`` with NumPy's reason
  in its message (what scikit-learn's ``check_dtype_object`` matches); a wrong **value** (NaN, ±inf, a
  complex number) or **shape** is a ``ValueError``. Both name the record and the feature.
* A data frame's message names the column and the value (not the first letter of the column's name).
* 0 records: ``fit`` refuses them (``ValueError``, "X has 0 records"), ``learn_many`` learns nothing
  from them but still checks their shape.
"""

import re
import warnings

import numpy as np
import pytest

import onpair
from public_api import OFFLINE_CASES, ONLINE_CASES, make_offline, make_online

# Every public class (and entry point) × every check: the fast tier (make test) runs each check
# once, on values in rotation, and each value at least once (conftest.py); the full tier every pair.
pytestmark = pytest.mark.covering("entry", "name")

# Every public estimator and learner (discovered from onpair.__all__: a new class is covered the day it is
# exported), and each once more with every shared switch it takes (public_api.SWITCHES: discover_bounds).
ESTIMATORS = {name: (lambda name=name: make_offline(name)) for name in OFFLINE_CASES}
LEARNERS = {name: (lambda name=name: make_online(name)) for name in ONLINE_CASES}
SKLEARN_TYPE_MESSAGE = re.compile("argument must be .* string.* number")  # check_dtype_object's pattern


def _data(m=8, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (m, d)), np.where(np.arange(m) % 2 == 0, 1, 0)


def _entry_points():
    """(name, call(X, y)) for every public call that takes feature blocks."""
    X0, y0 = _data()
    for name, make in ESTIMATORS.items():
        yield f"{name}.fit", lambda X, y, make=make: make().fit(X, y)
        yield f"{name}.decision_function", lambda X, y, make=make: make().fit(X0, y0).decision_function(X)
    for name, make in LEARNERS.items():
        yield f"{name}.learn_many", lambda X, y, make=make: make().learn_many(X, y)
        yield f"{name}.learn_one", lambda X, y, make=make: make().learn_one(X[3], y[3])
        yield f"{name}.decision_function", lambda X, y, make=make: make().learn_many(X0, y0).decision_function(X)


ENTRY_POINTS = dict(_entry_points())


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("value", [{"foo": "bar"}, "abc", object()], ids=["dict", "string", "object"])
def test_a_non_numeric_feature_is_a_type_error_naming_the_record(entry, value):
    X, y = _data()
    X = X.astype(object)
    X[3, 1] = value
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS[entry](X, y)
    assert not isinstance(info.value, ValueError)
    message = str(info.value)
    record = "x[0, 1]" if entry.endswith("learn_one") else "X[3, 1]"
    assert f"{record} = {value!r}" in message and "feature 1" in message, message
    if isinstance(value, dict):
        assert SKLEARN_TYPE_MESSAGE.search(message), message


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("value", [np.nan, np.inf, 1j], ids=["nan", "inf", "complex"])
def test_a_wrong_number_is_a_value_error_naming_the_record(entry, value):
    X, y = _data()
    X = X.astype(object)
    X[3, 1] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the imaginary part is never dropped silently
        # The fit before decision_function learns 8 records: its release is noise, and says so.
        warnings.simplefilter("ignore", onpair.NoiseDominatedWarning)
        with pytest.raises(ValueError) as info:
            ENTRY_POINTS[entry](X, y)
    assert not isinstance(info.value, TypeError)
    record = "x[0, 1]" if entry.endswith("learn_one") else "X[3, 1]"
    assert record in str(info.value), str(info.value)


class _Frame:
    """What the validation sees of a pandas DataFrame (a test dependency onpair does not have): iterating
    gives the column names, ``columns`` holds them, ``__array__`` gives the values (object dtype for a
    frame with a string column; converting it to float fails on the string, as in pandas)."""

    def __init__(self, data: dict):
        self._data = data
        self.columns = list(data)

    def __iter__(self):
        return iter(self.columns)

    def __len__(self):
        return len(next(iter(self._data.values())))

    def __array__(self, dtype=None, copy=None):
        values = np.array(list(zip(*self._data.values())), dtype=object)
        return values if dtype is None else values.astype(dtype)


@pytest.mark.parametrize("entry", [e for e in ENTRY_POINTS if not e.endswith("learn_one")])
def test_a_data_frame_message_names_the_column_and_the_value(entry):
    X, y = _data()
    frame = _Frame({"height": X[:, 0], "age": ["41", "35", "unknown", "50", "8", "19", "62", "27"],
                    "weight": X[:, 2]})
    with pytest.raises(TypeError) as info:
        ENTRY_POINTS[entry](frame, y)
    message = str(info.value)
    assert "X[2, 1] = 'unknown'" in message and "column 'age'" in message, message
    assert "= 'a'" not in message  # not the first letter of the column name
    nan_frame = _Frame({"height": X[:, 0], "age": [41.0, np.nan, 1, 2, 3, 4, 5, 6], "weight": X[:, 2]})
    with pytest.raises(ValueError, match=r"X\[1, 1\] = nan .*column 'age'.*must be finite"):
        ENTRY_POINTS[entry](nan_frame, y)


# -- 0 records ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("X, y", [([], []), (np.empty((0, 3)), np.empty(0))], ids=["lists", "array"])
def test_fit_with_0_records_says_so(name, X, y):
    estimator = ESTIMATORS[name]()
    with pytest.raises(ValueError, match=r"^X has 0 records; fit needs at least 2 records") as info:
        estimator.fit(X, y)
    assert "Reshape your data" not in str(info.value)
    assert not hasattr(estimator, "coef_")


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fit_with_1_record_says_so(name):
    with pytest.raises(ValueError, match="at least 2 records"):
        ESTIMATORS[name]().fit([[0.5, 0.5, 0.5]], [1])


@pytest.mark.parametrize("name", list(LEARNERS))
def test_learn_many_with_0_records_is_a_checked_no_op(name):
    learner = LEARNERS[name]().learn_many(*_data())
    before = (learner.n_seen, learner.model.copy())
    assert learner.learn_many(np.empty((0, 3)), []) is learner
    assert (learner.n_seen, learner.model.tolist()) == (before[0], before[1].tolist())
    with pytest.raises(ValueError, match="X has 2 features per record but the learner expects 3"):
        learner.learn_many(np.empty((0, 2)), [])
    with pytest.raises(ValueError, match="2-D"):
        learner.learn_many([], [])
    with pytest.raises(ValueError, match="X has 0 records but y has 1 labels"):
        learner.learn_many(np.empty((0, 3)), [1])


@pytest.mark.parametrize("name", list(LEARNERS) + list(ESTIMATORS))
def test_the_0_record_behaviour_is_documented(name):
    cls = type((LEARNERS | ESTIMATORS)[name]())
    doc = (cls.learn_many if name in LEARNERS else cls.fit).__doc__
    assert "0 records" in doc, doc


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_score_with_a_label_count_unlike_the_records_names_both(name):
    # Found by tests/test_hostile.py (hypothesis): one record scored against three labels used to fail
    # inside roc_auc with a message about y_true and y_score, not about X and y.
    X, y = _data()
    est = ESTIMATORS[name]().fit(X, y)
    with pytest.raises(ValueError, match=r"X has 1 records but y has shape \(3,\)"):
        est.score(X[:1], [1, 0, 1])


def _seeded_classes() -> dict:
    """Every public class that takes a seed, by name: the online learners, the offline estimators, the river
    models (public_api's lists) and the scikit-learn scaler."""
    import inspect

    import onpair.preprocessing
    from public_api import OFFLINE, ONLINE, river_classes

    classes = {**ONLINE, **OFFLINE, **river_classes(),
               "preprocessing.PrivateStandardScaler": onpair.preprocessing.PrivateStandardScaler}
    return {name: cls for name, cls in classes.items()
            if {"seed", "random_state"} & set(inspect.signature(cls.__init__).parameters)}


@pytest.mark.parametrize("name", sorted(_seeded_classes()))
def test_the_other_ecosystems_seed_name_says_which_one_the_class_takes(name):
    """seed= (river's convention: online learners, river models) and random_state= (scikit-learn's: offline
    estimators) both stay; passing the other one is a TypeError that names the right one."""
    import inspect

    cls = _seeded_classes()[name]
    parameters = inspect.signature(cls.__init__).parameters
    right = "seed" if "seed" in parameters else "random_state"
    wrong = "random_state" if right == "seed" else "seed"
    assert wrong not in parameters
    with pytest.raises(TypeError, match=rf"unexpected keyword argument '{wrong}': did you mean '{right}'\?"):
        cls(**{wrong: 0})
    with pytest.raises(TypeError, match="unexpected keyword argument 'sead'") as caught:
        cls(sead=0)  # any other name: Python's own error, no hint
    assert "did you mean" not in str(caught.value)


def test_every_public_family_that_takes_a_seed_is_covered():
    """Both names, in the families the issue names: a class dropped from the lists above would leave a gap."""
    names = set(_seeded_classes())
    assert {"OnPairStats", "PairwiseGIGA", "OffPairStats", "OutputPerturbedSGD", "PrivatePairwiseClassifier",
            "PrivateClassifier", "PrivateStandardScaler", "preprocessing.PrivateStandardScaler"} <= names


def _frame(X, columns):
    pd = pytest.importorskip("pandas", reason="pandas is an optional dependency: data frames need it")
    return pd.DataFrame(X, columns=columns)


@pytest.mark.parametrize("name", list(ESTIMATORS) + ["PrivateStandardScaler"])
def test_a_data_frame_fit_sets_feature_names_in_and_predictions_refuse_other_columns(name):
    """scikit-learn's convention: a fit on a data frame sets ``feature_names_in_``; a frame with the columns
    renamed or reordered is a ValueError at prediction (reading it by position would swap features silently),
    the same columns in the same order are read as the array; a refit on an array removes the names."""
    from onpair.preprocessing import PrivateStandardScaler

    X, y = _data(m=20, d=3)  # OutputPerturbedSGD's quick T = 20 needs n <= 20
    make = (lambda: PrivateStandardScaler(bounds=(0, 1), random_state=0)) if name == "PrivateStandardScaler" \
        else ESTIMATORS[name]
    predict = "transform" if name == "PrivateStandardScaler" else "decision_function"
    columns = ["age", "income", "score"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", onpair.NoiseDominatedWarning)
        model = make().fit(_frame(X, columns), y)
    assert list(model.feature_names_in_) == columns
    expected = getattr(make().fit(X, y), predict)(X)
    assert np.array_equal(getattr(model, predict)(_frame(X, columns)), expected)
    for other, what in ((["score", "income", "age"], "same order"), (["age", "income", "rate"], "unseen")):
        with pytest.raises(ValueError, match=what):
            getattr(model, predict)(_frame(X[:, [columns.index(c) if c in columns else 2 for c in other]], other))
    with pytest.warns(UserWarning, match="fitted with feature names"):
        getattr(model, predict)(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", onpair.NoiseDominatedWarning)
        model.fit(X, y)
    assert not hasattr(model, "feature_names_in_")
