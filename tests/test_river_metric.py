"""onpair.river.MetricTransformer and metric_distance: a learned metric (task="metric") in river.

* ``transform_one`` is ``learner.transform`` (basis "eigen", exactly) or the same metric in the
  symmetric-root basis (basis "sqrt": same distances, ``W₊^{1/2} φ(x)``);
* ``metric_distance`` is the Euclidean distance between ``learner.transform`` outputs, follows the
  learner's releases, and survives river's copying of the k-NN search engine;
* both read only the visible (released) model, never the private iterate;
* ``MetricTransformer | KNNClassifier`` and ``KNNClassifier(dist_func=metric_distance(...))`` under
  progressive validation on a small synthetic stream;
* AUC learners and other objects are refused; a failed ``learn_one`` changes nothing.
"""

import copy
import math

import numpy as np
import pytest
from river import evaluate, metrics, neighbors

import onpair
from onpair.river import MetricTransformer, PrivatePairwiseClassifier, metric_distance

FEATURES = ["a", "b", "c"]
CLASSES = ["sky", "grass", "path"]


def stream(n, seed=0):
    """Three classes told apart by feature "a"; "b" and "c" are noise. Values in [0, 1]."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 3))
        x = {"a": float(np.clip(0.2 + 0.3 * k + 0.05 * rng.normal(), 0.0, 1.0)),
             "b": float(rng.uniform()), "c": float(rng.uniform())}
        out.append((x, CLASSES[k]))
    return out


def vector(x, order=FEATURES):
    return np.array([[x.get(f, 0.0) for f in order]])


def private(**params):
    params.setdefault("epsilon", 2.0)
    params.setdefault("n", 300)
    params.setdefault("release_every", 25)
    return onpair.OnPairStrC(task="metric", bounds=(0.0, 1.0), seed=3, **params)


def giga(**params):
    return onpair.PairwiseGIGA(task="metric", bounds=(0.0, 1.0), **params)


LEARNERS = {"giga": giga, "private": private}
#: Progressive k-NN accuracy each reaches on ``stream(300, seed=2)`` (chance: about 1/3); the private
#: metric pays for its noise (ε = 2 over 300 records).
GOOD_ACCURACY = {"giga": 0.8, "private": 0.65}


def fed(transformer, records):
    for x, y in records:
        transformer.learn_one(x, y)
    return transformer


def psd_root(W):
    values, vectors = np.linalg.eigh((W + W.T) / 2.0)
    return (vectors * np.sqrt(np.maximum(values, 0.0))) @ vectors.T


PROBES = [{"a": 0.1, "b": 0.9, "c": 0.3}, {"a": 0.8, "b": 0.2, "c": 0.5},
          {"a": 1.7, "b": -0.4, "c": 0.5},  # outside the bounds: clipped, as learner.transform does
          {"a": 0.5, "c": 0.25},  # "b" missing: reads as 0
          {"a": 0.5, "b": 0.5, "c": 0.5, "extra": 9.0}]  # an undeclared key: ignored


# -- transform_one ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", LEARNERS)
def test_transform_one_eigen_basis_is_learner_transform(kind):
    transformer = fed(MetricTransformer(LEARNERS[kind](), features=FEATURES, basis="eigen"), stream(120))
    learner = transformer.learner
    for x in PROBES:
        out = transformer.transform_one(x)
        assert list(out) == ["metric_0", "metric_1", "metric_2"]
        expected = learner.transform(vector(x))[0]
        values = np.array(list(out.values()))
        np.testing.assert_array_equal(values[:expected.size], expected)
        assert np.all(values[expected.size:] == 0.0)


@pytest.mark.parametrize("kind", LEARNERS)
def test_transform_one_sqrt_basis_gives_the_same_metric(kind):
    transformer = fed(MetricTransformer(LEARNERS[kind](), features=FEATURES), stream(120))
    learner = transformer.learner
    outputs = [np.array(list(transformer.transform_one(x).values())) for x in PROBES]
    mapped = [learner.transform(vector(x))[0] for x in PROBES]
    for x, out, z in zip(PROBES, outputs, mapped):
        phi, _ = learner.feature_bounds.transform(vector(x))  # the public bounds map
        np.testing.assert_allclose(out, psd_root(learner.model) @ phi[0], rtol=1e-12, atol=1e-15)
        assert np.linalg.norm(out) == pytest.approx(np.linalg.norm(z), rel=1e-9)
    for i in range(len(PROBES)):
        for j in range(len(PROBES)):
            assert np.linalg.norm(outputs[i] - outputs[j]) == pytest.approx(
                np.linalg.norm(mapped[i] - mapped[j]), rel=1e-9, abs=1e-12)


def test_transform_one_uses_the_released_model_not_the_private_iterate():
    transformer = fed(MetricTransformer(private(), features=FEATURES), stream(60))  # releases at 25, 50
    learner = transformer.learner
    assert not np.allclose(learner._iterate.w.reshape(3, 3), learner.model)  # 10 rounds since the last release
    x = PROBES[0]
    phi, _ = learner.feature_bounds.transform(vector(x))
    out = np.array(list(transformer.transform_one(x).values()))
    np.testing.assert_allclose(out, psd_root(learner.model) @ phi[0], rtol=1e-12, atol=1e-15)
    assert not np.allclose(out, psd_root(learner._iterate.w.reshape(3, 3)) @ phi[0])
    dist = metric_distance(transformer)
    expected = np.linalg.norm(np.subtract(*learner.transform(np.vstack([vector(PROBES[0]), vector(PROBES[1])]))))
    assert dist(PROBES[0], PROBES[1]) == pytest.approx(expected, rel=1e-9)


def test_transform_one_before_anything_is_known_is_empty():
    transformer = MetricTransformer(giga())
    assert transformer.transform_one({"a": 0.5}) == {}
    # A known order and a learner that knows its dimension: the start metric (a multiple of I).
    ready = MetricTransformer(giga(n_features=3), features=FEATURES)
    out = ready.transform_one({"a": 1.0, "b": 0.0, "c": 0.0})
    assert list(out) == ["metric_0", "metric_1", "metric_2"] and out["metric_0"] > 0.0


def test_default_order_is_the_sorted_keys_of_the_first_record():
    transformer = MetricTransformer(giga(), prefix="m")
    transformer.learn_one({"c": 0.1, "a": 0.2, "b": 0.3}, "x")
    assert transformer.feature_order == ("a", "b", "c")
    assert list(transformer.transform_one({"b": 0.3, "a": 0.2, "c": 0.1})) == ["m0", "m1", "m2"]


# -- metric_distance -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", LEARNERS)
def test_distance_is_the_euclidean_distance_of_transformed_records(kind):
    learner = LEARNERS[kind]()
    transformer = MetricTransformer(learner, features=FEATURES)
    dist = metric_distance(transformer)
    plain = metric_distance(learner, features=FEATURES)
    records = stream(150, seed=1)
    for start in (0, 40, 150):  # the distance follows the learner as it learns and releases
        fed(transformer, records[start:start + (40 if start < 150 else 0)])
        mapped = learner.transform(np.vstack([vector(x) for x in PROBES]))
        for i, a in enumerate(PROBES):
            for j, b in enumerate(PROBES):
                expected = float(np.linalg.norm(mapped[i] - mapped[j]))
                assert dist(a, b) == pytest.approx(expected, rel=1e-9, abs=1e-12)
                assert plain(a, b) == dist(a, b)
                if i == j:
                    assert dist(a, b) == 0.0
        out = [np.array(list(transformer.transform_one(x).values())) for x in PROBES[:2]]
        assert dist(PROBES[0], PROBES[1]) == pytest.approx(np.linalg.norm(out[0] - out[1]), rel=1e-9)


def test_distance_without_features_uses_the_sorted_keys():
    learner = fed(MetricTransformer(giga()), stream(30)).learner
    dist = metric_distance(learner)
    a, b = {"c": 0.3, "a": 0.1, "b": 0.9}, {"b": 0.2, "a": 0.8, "c": 0.5}
    expected = np.linalg.norm(np.subtract(*learner.transform(np.vstack([vector(a), vector(b)]))))
    assert dist(a, b) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match="the records have 2 features but the learner has 3"):
        dist({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.4})


def test_copies_of_the_distance_share_the_learner():
    transformer = MetricTransformer(private(), features=FEATURES)
    dist = metric_distance(transformer)
    assert copy.copy(dist) is dist and copy.deepcopy(dist) is dist
    knn = neighbors.KNNClassifier(engine=neighbors.LazySearch(window_size=20, dist_func=dist))
    assert knn._nn.dist_func.distance_function is dist  # river cloned the engine: the same view
    assert knn.clone()._nn.dist_func.distance_function is dist


def test_distance_bad_records():
    transformer = fed(MetricTransformer(giga(), features=FEATURES), stream(10))
    dist = metric_distance(transformer)
    with pytest.raises(TypeError, match=r"x\['b'\] = 'high'.*real numbers"):
        dist({"a": 0.1, "b": "high", "c": 0.0}, PROBES[0])
    with pytest.raises(ValueError, match=r"must be finite"):
        dist(PROBES[0], {"a": math.nan, "b": 0.0, "c": 0.0})
    strict = metric_distance(MetricTransformer(giga(n_features=3), features=FEATURES, unknown_features="raise"))
    with pytest.raises(ValueError, match="not one of the model's 3 features"):
        strict(PROBES[0], PROBES[4])
    unordered = metric_distance(MetricTransformer(giga()))
    with pytest.raises(ValueError, match="no feature order yet"):
        unordered(PROBES[0], PROBES[1])


# -- river pipelines and k-NN ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", LEARNERS)
def test_pipeline_with_knn_under_progressive_validation(kind):
    transformer = MetricTransformer(LEARNERS[kind](), features=FEATURES)
    knn = neighbors.KNNClassifier(n_neighbors=5, engine=neighbors.LazySearch(window_size=60))
    model = transformer | knn
    records = stream(300, seed=2)
    accuracy = evaluate.progressive_val_score(records, model, metrics.Accuracy())
    assert transformer.n_seen == 300  # the pipeline trained the metric (y passed on)
    assert all(set(item[0][0]) == {"metric_0", "metric_1", "metric_2"} for item in knn._nn.window)
    chance = metrics.Accuracy()
    for _, y in records:
        chance.update(y, "sky")
    assert accuracy.get() > GOOD_ACCURACY[kind] > 0.5 > chance.get()


@pytest.mark.parametrize("kind", LEARNERS)
def test_knn_with_the_learned_distance_under_progressive_validation(kind):
    transformer = MetricTransformer(LEARNERS[kind](), features=FEATURES)
    knn = neighbors.KNNClassifier(n_neighbors=5, engine=neighbors.LazySearch(
        window_size=60, dist_func=metric_distance(transformer)))
    accuracy = metrics.Accuracy()
    for x, y in stream(300, seed=2):
        accuracy.update(y, knn.predict_one(x))
        knn.learn_one(x, y)
        transformer.learn_one(x, y)
    assert accuracy.get() > GOOD_ACCURACY[kind]
    assert set(knn._nn.window[0][0][0]) == set(FEATURES)  # the window keeps raw records


# -- refusals and failures -------------------------------------------------------------------------
@pytest.mark.parametrize("learner", [
    onpair.OnPairStrC(epsilon=1.0, bounds=(0.0, 1.0), n=100),
    onpair.PairwiseGIGA(bounds=(0.0, 1.0)),
    onpair.OnPairC(epsilon=1.0, bounds=(0.0, 1.0), horizon=100),
])
def test_auc_learners_are_refused(learner):
    with pytest.raises(ValueError, match="task='auc'.*task='metric'"):
        MetricTransformer(learner)
    with pytest.raises(ValueError, match="task='auc'.*task='metric'"):
        metric_distance(learner)


@pytest.mark.parametrize("thing", [None, "giga", PrivatePairwiseClassifier(bounds=(0.0, 1.0))])
def test_other_objects_are_refused(thing):
    with pytest.raises(ValueError, match="onpair online learner"):
        MetricTransformer(thing)
    with pytest.raises(ValueError, match="onpair online learner"):
        metric_distance(thing)


@pytest.mark.parametrize("params, match", [
    ({"unknown_features": "warn"}, "unknown_features must be one of"),
    ({"basis": "pca"}, "basis must be one of"),
    ({"prefix": 3}, "prefix must be a string"),
    ({"features": ["a", "a"]}, "twice"),
    ({"features": ["a", "b"], "learner": "dim3"}, "names 2 features but the learner has 3"),
    ({"learner": "array bounds"}, "array bounds need features"),
    ({"learner": "fitted"}, "has learned already"),
])
def test_bad_parameters(params, match):
    learners = {"dim3": lambda: giga(n_features=3),
                "array bounds": lambda: onpair.PairwiseGIGA(task="metric", bounds=([0.0, 0.0], [1.0, 2.0])),
                "fitted": lambda: fed(MetricTransformer(giga()), stream(3)).learner}
    params = dict(params)
    params["learner"] = learners.get(params.get("learner"), giga)()
    with pytest.raises(ValueError, match=match):
        MetricTransformer(**params)


def snapshot(transformer):
    learner = transformer.learner
    out = {"n_seen": learner.n_seen, "order": transformer.feature_order,
           "counts": transformer._records.report(),
           "classes": dict(learner._history.class_codes), "clipped": learner.privacy_report()["n_clipped"]}
    if learner.dimension is not None:
        out.update(model=learner.model.copy(), w=learner._iterate.w.copy())
    if learner.private:
        out["report"] = learner.privacy_report()
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert a[key] == b[key], key


@pytest.mark.parametrize("kind", LEARNERS)
@pytest.mark.parametrize("bad, error, match", [
    (({"a": 0.1, "b": "high", "c": 0.2}, "sky"), TypeError, r"x\['b'\] = 'high'"),
    (({"a": 0.1, "b": math.inf, "c": 0.2}, "sky"), ValueError, "must be finite"),
    (({"a": 0.1, "b": None, "c": 0.2}, "sky"), TypeError, "got None"),
    (({"a": 0.1, "b": 0.2, "c": 0.3}, 0.5), ValueError, "class label"),
    (({"a": 0.1, "b": 0.2, "c": 0.3}, None), ValueError, "class label"),
    (([0.1, 0.2, 0.3], "sky"), TypeError, "must be a dict"),
])
def test_a_failed_learn_one_changes_nothing(kind, bad, error, match):
    records = stream(40, seed=4)
    transformer = fed(MetricTransformer(LEARNERS[kind](), features=FEATURES), records[:30])
    twin = fed(MetricTransformer(LEARNERS[kind](), features=FEATURES), records[:30])
    before = snapshot(transformer)
    with pytest.raises(error, match=match):
        transformer.learn_one(*bad)
    assert_same(snapshot(transformer), before)
    # And it goes on exactly as the twin that never saw the bad call.
    fed(transformer, records[30:])
    fed(twin, records[30:])
    assert_same(snapshot(transformer), snapshot(twin))
    assert transformer.transform_one(PROBES[0]) == twin.transform_one(PROBES[0])


def test_a_failed_first_record_fixes_no_order():
    transformer = MetricTransformer(giga())
    with pytest.raises(ValueError, match="must be finite"):
        transformer.learn_one({"b": 0.1, "a": math.nan}, "sky")
    with pytest.raises(ValueError, match="class label"):
        transformer.learn_one({"b": 0.1, "a": 0.2}, 1.5)
    assert transformer.feature_order is None and transformer.n_seen == 0 and transformer.learner.dimension is None
    transformer.learn_one({"z": 0.1, "y": 0.2}, "sky")
    assert transformer.feature_order == ("y", "z")


def test_unknown_and_missing_keys_are_counted_or_raise():
    transformer = MetricTransformer(giga(), features=FEATURES)
    transformer.learn_one({"a": 0.1, "b": 0.2, "c": 0.3, "d": 1.0}, "sky")
    transformer.learn_one({"a": 0.1, "c": 0.3}, "path")
    report = transformer.privacy_report()
    assert report["n_unknown_feature_records"] == 1 and report["unknown_features"] == ["d"]
    assert report["n_missing_feature_records"] == 1 and report["features"] == FEATURES
    assert report["private"] is False and report["n_seen"] == 2
    strict = MetricTransformer(giga(), features=FEATURES, unknown_features="raise")
    for call in (lambda: strict.learn_one({"a": 0.1, "b": 0.2, "c": 0.3, "d": 1.0}, "sky"),
                 lambda: strict.transform_one({"a": 0.1, "b": 0.2, "c": 0.3, "d": 1.0})):
        with pytest.raises(ValueError, match="'d'.*not one of the model's 3 features"):
            call()
    assert strict.n_seen == 0


def test_privacy_report_of_a_private_learner():
    transformer = fed(MetricTransformer(private(), features=FEATURES), stream(60))
    report = transformer.privacy_report()
    assert report["private"] is True
    assert [r["round"] for r in report["releases"]] == [25, 50]
    assert 0.0 < report["epsilon_spent"] <= 2.0


# -- clones ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", LEARNERS)
def test_a_clone_wraps_a_new_unfitted_learner_with_the_same_parameters(kind):
    transformer = fed(MetricTransformer(LEARNERS[kind](), features=FEATURES, prefix="m"), stream(30))
    clone = transformer.clone()
    assert clone.learner is not transformer.learner and clone.n_seen == 0
    assert type(clone.learner) is type(transformer.learner)
    assert clone.learner.radius == transformer.learner.radius and clone.prefix == "m"
    assert clone.feature_order == tuple(FEATURES)
    fed(clone, stream(30))
    np.testing.assert_array_equal(clone.model, transformer.model)  # same parameters, same seed
    with pytest.raises(TypeError, match="cannot be cloned with its attributes"):
        transformer.clone(include_attributes=True)
    other = transformer.clone({"prefix": "z", "learner": giga()})
    assert other.prefix == "z" and isinstance(other.learner, onpair.PairwiseGIGA)
    # river's recursive clone hands back the estimator's own parameters, learner included.
    assert transformer.clone(transformer._get_params()).learner is not transformer.learner
    pipeline = transformer | neighbors.KNNClassifier()
    assert pipeline.clone()["MetricTransformer"].learner is not transformer.learner


def test_clones_share_one_lineage_report():
    # A clone is a new mechanism with its own budget; the lineage report adds up what all spent.
    from onpair import OnPairStrC
    from onpair.river import MetricTransformer

    rng = np.random.default_rng(3)
    original = MetricTransformer(OnPairStrC(task="metric", bounds=(0, 1), n=80, epsilon=1.0, seed=1),
                                 features=["a", "b"])
    clone = original.clone()
    for model in (original, clone):
        for _ in range(80):
            model.learn_one({"a": rng.uniform(), "b": rng.uniform()}, int(rng.integers(0, 3)))
    lineage = original.privacy_report()["lineage"]
    assert lineage == clone.privacy_report()["lineage"] and lineage["members"] == 2
    assert lineage["rho_spent"] == pytest.approx(original.privacy_report()["rho_spent"]
                                                 + clone.privacy_report()["rho_spent"])
    assert lineage["epsilon_spent"] > original.privacy_report()["epsilon_spent"]


def test_a_shared_accountant_goes_on_the_learner_and_survives_clone():
    """The transformer has no accountant= of its own: its learner's holds the shared budget, every release is
    charged to it, and river's clone() of the transformer keeps sharing it (one budget for both)."""
    from onpair.privacy import ZCDPAccountant

    budget = ZCDPAccountant.from_dp(1.2, 1e-5)   # one ε = 1 stream fits, two (ρ adds up) do not
    learner = onpair.OnPairStats(task="metric", classes=[0, 1], epsilon=1.0, bounds=(0.0, 1.0), seed=0,
                                 accountant=budget)
    transformer = MetricTransformer(learner, features=["a", "b"])
    rng = np.random.default_rng(0)
    records = [({"a": float(a), "b": float(b)}, int(a > 0.5)) for a, b in rng.uniform(0, 1, (20, 2))]
    for x, y in records:
        transformer.learn_one(x, y)
    assert budget.report()["epsilon_spent"] == pytest.approx(transformer.learner.privacy_report()["epsilon_spent"])
    clone = transformer.clone()
    assert clone.learner is not transformer.learner
    with pytest.raises(onpair.PrivacyBudgetExceeded):  # the clone's stream does not fit in what is left
        clone.learn_one(*records[0])
    assert clone.learner.n_seen == 0
