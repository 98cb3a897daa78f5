"""The metric task through the public API: online learners, offline estimators, the command line.

Kernels and losses are checked against their NumPy twins in test_metric_kernels.py / test_metric_losses.py;
this module checks what a user sees: shapes, labels, defaults, bad input, reports and persistence.
"""

import json
import os

import numpy as np
import pytest

import onpair
from onpair import OnPairC, OnPairStrC, PairwiseGIGA
from onpair.cli import main
from onpair.estimators import GradientPerturbedGD, OffPairC, OffPairStrC, OutputPerturbedSGD
from onpair.core.matrix_geometry import identity_center, psd_part
from onpair.core.metric_losses import get_metric_loss
from onpair.privacy import eps_from_rho


def _classes(n, seed=0, classes=("a", "b", "c")):
    """Three classes whose means differ in feature 0 only; features 1-3 are noise."""
    rng = np.random.default_rng(seed)
    y = rng.choice(classes, size=n)
    X = rng.uniform(0.0, 1.0, size=(n, 4))
    X[:, 0] = np.clip(0.5 + 0.3 * (np.searchsorted(sorted(classes), y) - 1) + 0.05 * rng.standard_normal(n), 0, 1)
    return X, y


ONLINE = [
    lambda **kw: PairwiseGIGA(task="metric", bounds=(0, 1), **kw),
    lambda **kw: OnPairStrC(task="metric", bounds=(0, 1), n=300, epsilon=2.0, seed=1, **kw),
    lambda **kw: OnPairC(task="metric", bounds=(0, 1), n=300, epsilon=2.0, seed=2, **kw),
]


@pytest.mark.parametrize("make", ONLINE)
def test_online_metric_models_are_symmetric_matrices_in_the_set(make):
    X, y = _classes(300)
    for constraint in ("frobenius", "psd", "nuclear", "psd_nuclear"):
        learner = make(constraint=constraint).learn_many(X, y)
        W = learner.model
        assert W.shape == (4, 4) and np.array_equal(W, W.T)
        assert np.linalg.norm(W) <= learner._radius * (1 + 1e-12)
        if constraint.startswith("psd"):
            assert np.linalg.eigvalsh(W).min() >= -1e-12
        if "nuclear" in constraint:
            assert np.abs(np.linalg.eigvalsh(W)).sum() <= learner._radius * (1 + 1e-9)


def test_the_learned_metric_stretches_the_informative_feature():
    # The non-private twin must learn what the data says: feature 0 separates the classes, so the
    # metric weighs it more than each noise feature (all four start equal, at the identity centre).
    X, y = _classes(600)
    W = psd_part(PairwiseGIGA(task="metric", bounds=(0, 1), lam=0.5).learn_many(X, y).model)
    assert W[0, 0] > 1.25 * max(W[1, 1], W[2, 2], W[3, 3])
    # With the labels shuffled (no signal in any feature), no such gap appears.
    rng = np.random.default_rng(1)
    W_null = psd_part(PairwiseGIGA(task="metric", bounds=(0, 1), lam=0.5).learn_many(X, rng.permutation(y)).model)
    assert W_null[0, 0] < 1.1 * max(W_null[1, 1], W_null[2, 2], W_null[3, 3])


def test_default_centre_is_the_scaled_identity_and_the_model_before_any_release():
    learner = OnPairStrC(task="metric", bounds=(0, 1), n_features=4, n=100, seed=0)
    np.testing.assert_array_equal(learner.model, (0.1 / (2 * np.sqrt(4))) * np.eye(4))
    # The paper's centre is still available.
    assert not PairwiseGIGA(norm_bound=1.0, task="metric", center="zero", n_features=3).model.any()
    nuclear = identity_center(4, 1.0, 2).reshape(4, 4)
    assert np.isclose(np.abs(np.linalg.eigvalsh(nuclear)).sum(), 0.5)


def test_labels_of_any_type_and_any_number_of_classes():
    X, y = _classes(120, classes=("x", "y", "z", "w"))
    codes = {c: i for i, c in enumerate(("x", "y", "z", "w"))}
    a = PairwiseGIGA(task="metric", bounds=(0, 1)).learn_many(X, y)
    b = PairwiseGIGA(task="metric", bounds=(0, 1)).learn_many(X, [codes[c] for c in y])
    np.testing.assert_array_equal(a.model, b.model)  # only equality of labels matters


def test_a_single_class_is_not_an_error():
    X, _ = _classes(50)
    learner = OnPairStrC(task="metric", bounds=(0, 1), n=50, seed=0).learn_many(X, ["only"] * 50)
    assert learner.privacy_report()["n_seen"] == 50
    # Every pair is a same-class pair: the metric shrinks (no pair asks for distance).
    twin = PairwiseGIGA(task="metric", bounds=(0, 1)).learn_many(X, [1] * 50)
    assert np.trace(twin.model) < np.trace(identity_center(4, 0.1, 0).reshape(4, 4))


@pytest.mark.parametrize("center, message", [
    (np.ones((2, 3)), "square"),
    (np.array([[0.01, 0.0], [0.02, 0.01]]), "symmetric"),
    (np.array([[np.nan, 0.0], [0.0, 0.01]]), "not finite"),
    (np.eye(2), "outside the constraint set"),
    (np.eye(3) * 0.01, "features"),
    ("random", "center"),
])
def test_bad_starting_metric_is_a_value_error(center, message):
    with pytest.raises(ValueError, match=message):
        OnPairStrC(norm_bound=1.0, task="metric", n_features=2, n=10, center=center, seed=0)


def test_a_public_starting_metric_is_where_the_model_starts():
    W0 = np.array([[0.02, 0.01], [0.01, 0.03]])
    learner = OnPairC(norm_bound=1.0, task="metric", n_features=2, n=50, center=W0, seed=0)
    np.testing.assert_array_equal(learner.model, W0)


@pytest.mark.parametrize("kwargs, message", [
    ({"task": "ranking"}, "task"),
    ({"task": "metric", "constraint": "l1"}, "constraint"),
    ({"constraint": "psd"}, "task='metric'"),
    ({"task": "metric", "loss": "square"}, "loss"),
    ({"center": "identity"}, "identity"),
])
def test_bad_task_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OnPairStrC(n=10, **kwargs)


@pytest.mark.parametrize("bad_label", [None, float("nan"), 1.5, [1], {"a": 1}])
def test_a_bad_label_changes_nothing(bad_label):
    X, y = _classes(40)
    learner = OnPairStrC(task="metric", bounds=(0, 1), n=100, seed=0).learn_many(X[:20], y[:20])
    before = (learner._iterate.w.copy(), learner._history.n_rows, dict(learner._history.class_codes), learner.privacy_report())
    with pytest.raises(ValueError, match="y"):
        learner.learn_many(X[20:23], [y[20], bad_label, "new class"])
    with pytest.raises(ValueError, match="y"):
        learner.learn_one(X[20], bad_label)
    assert np.array_equal(learner._iterate.w, before[0]) and learner._history.n_rows == before[1]
    assert learner._history.class_codes == before[2] and learner.privacy_report() == before[3]


def test_metric_releases_spend_the_budget_with_frobenius_sensitivities():
    X, y = _classes(256)
    learner = OnPairStrC(task="metric", bounds=(0, 1), n=256, epsilon=1.0, delta=1e-5, seed=3).learn_many(X, y)
    report = learner.privacy_report()
    assert [r["round"] for r in report["releases"]] == [64, 128, 256]
    assert report["epsilon_spent"] <= 1.0 + 1e-9
    assert np.isclose(eps_from_rho(report["rho_spent"], 1e-5, method="gaussian"), report["epsilon_spent"])
    loss = get_metric_loss("logistic")
    for release in report["releases"]:
        assert np.isclose(release["rho"], (release["sensitivity"] / release["sigma"]) ** 2 / 2, rtol=1e-8)
        assert release["sensitivity"] <= 2 * 0.1  # the diameter of the Frobenius ball
    assert learner.released_models.shape == (3, 4, 4)
    assert loss.pair_change(0.1) < 2 * loss.lipschitz(0.1)


def test_transform_is_the_released_metric():
    X, y = _classes(200)
    learner = OnPairStrC(task="metric", bounds=(0, 1), n=200, epsilon=2.0, seed=4).learn_many(X, y)
    Z = learner.transform(X[:5])
    mapped, _ = learner.feature_bounds.transform(X[:5])
    W = psd_part(learner.model)
    for i in range(5):
        for j in range(5):
            v = mapped[i] - mapped[j]
            assert np.isclose(np.sum((Z[i] - Z[j]) ** 2), v @ W @ v, atol=1e-12)
    with pytest.raises(ValueError, match="transform"):
        learner.decision_function(X[:2])
    with pytest.raises(ValueError, match="transform is for task='metric'"):
        PairwiseGIGA(norm_bound=1.0, n_features=4).transform(X[:2])


def test_metric_learners_save_and_resume_exactly(tmp_path):
    X, y = _classes(200)
    for buffer in (None, ("reservoir", 16)):
        a = OnPairStrC(task="metric", bounds=(0, 1), n=200, seed=5, buffer=buffer, constraint="psd")
        a.learn_many(X[:90], y[:90])
        path = tmp_path / f"m{buffer is None}.onpair"
        a.save(path)
        b = onpair.load(path)
        assert b._history.class_codes == a._history.class_codes
        a.learn_many(X[90:], y[90:])
        b.learn_many(X[90:], y[90:])
        np.testing.assert_array_equal(a.model, b.model)
        assert a.privacy_report() == b.privacy_report()


@pytest.mark.parametrize("make", [
    lambda **kw: OffPairStrC(task="metric", bounds=(0, 1), random_state=0, **kw),
    lambda **kw: OffPairC(task="metric", bounds=(0, 1), random_state=0, **kw),
    lambda **kw: GradientPerturbedGD(task="metric", bounds=(0, 1), random_state=0, T=3, **kw),
    lambda **kw: OutputPerturbedSGD(task="metric", bounds=(0, 1), random_state=0, T=2000, **kw),
])
def test_offline_estimators_learn_a_metric(make):
    X, y = _classes(150)
    for private in (True, False):
        est = make(private=private).fit(X, y)
        W = est.coef_
        assert W.shape == (4, 4) and np.array_equal(W, W.T)
        assert list(est.classes_) == ["a", "b", "c"]
        assert 0.0 <= est.score(X, y) <= 1.0
        assert est.transform(X).shape[0] == 150
        np.testing.assert_array_equal(est.get_mahalanobis_matrix(), W)
        for method in ("decision_function", "predict", "predict_proba"):
            with pytest.raises(ValueError, match="metric"):
                getattr(est, method)(X)
        if private:
            assert est.privacy_report_["epsilon_spent"] <= 1.0 + 1e-9


def test_the_auc_estimators_have_no_transform():
    # scikit-learn's tools take an estimator with `transform` for a transformer.
    est = OffPairStrC(bounds=(0, 1), random_state=0).fit(*_binary(60))
    assert not hasattr(est, "transform")


def _binary(n):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(n, 3))
    return X, (X[:, 0] > 0.5).astype(int)


def test_gradient_perturbation_metric_sensitivity_is_two_gamma_over_n():
    X, y = _classes(100)
    est = GradientPerturbedGD(task="metric", threshold=1.0, pair_weights=None, bounds=(0, 1), random_state=0,
                              T=2).fit(X, y)
    loss = get_metric_loss("logistic")
    start_norm = np.linalg.norm(identity_center(4, 0.1, 0))
    sensitivities = [r["sensitivity"] for r in est.privacy_report_["releases"]]
    assert np.isclose(sensitivities[0], 2 * loss.pair_change(start_norm) / 100)
    assert np.isclose(sensitivities[1], 2 * loss.pair_change(0.1) / 100)


def test_sgd_metric_defaults_to_yangs_psd_nuclear_ball():
    X, y = _classes(60)
    est = OutputPerturbedSGD(task="metric", bounds=(0, 1), random_state=0, radius=1.0).fit(X, y)
    eigenvalues = np.linalg.eigvalsh(est.coef_)
    assert eigenvalues.min() >= -1e-12 and eigenvalues.sum() <= 1.0 + 1e-9
    assert np.isclose(est.privacy_report_["sensitivity_diameter"], np.sqrt(2.0))
    with pytest.raises(ValueError, match="hinge"):
        OutputPerturbedSGD(norm_bound=1.0, task="metric", loss="square").fit(X, y)


HAS_PIMA = os.path.exists(os.path.join(os.environ.get("ONPAIR_DATA", ""), "pima-indians-diabetes.csv"))


@pytest.mark.skipif(not HAS_PIMA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
@pytest.mark.parametrize("algo", ["giga", "onpairstrc", "offpairc", "gradient"])
def test_replay_task_metric_json(algo, capsys):
    status = main(["replay", "pima", "--task", "metric", "--algo", algo, "--epsilon", "2.5", "--seed", "0", "--json"])
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert result["task"] == "metric" and "auc" not in result
    for key in ("knn_accuracy", "euclidean_knn_accuracy", "objective"):
        assert 0.0 <= result[key] <= 1.0 or key == "objective"
    assert 0.6 < result["euclidean_knn_accuracy"] < 0.85 and 0.6 < result["knn_accuracy"] < 0.85


def test_replay_csv_with_several_classes(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 10, size=(80, 3))
    labels = rng.integers(0, 4, size=80)
    path = tmp_path / "multi.csv"
    np.savetxt(path, np.column_stack([rows, labels]), delimiter=",")
    assert main(["replay", str(path), "--task", "metric", "--lower", "0", "--upper", "10", "--algo", "giga",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["task"] == "metric"
    assert main(["replay", str(path), "--constraint", "psd", "--lower", "0", "--upper", "10"]) == 1
    assert "--constraint" in capsys.readouterr().err


@pytest.mark.parametrize("buffer", [None, ("reservoir", 16), ("fifo", 8)])
@pytest.mark.parametrize("make", [
    lambda buffer: OnPairStrC(task="metric", bounds=(0, 1), n=150, epsilon=1.0, seed=9, buffer=buffer),
    lambda buffer: OnPairC(task="metric", bounds=(0, 1), n=150, seed=9, buffer=buffer, constraint="psd"),
    lambda buffer: PairwiseGIGA(task="metric", bounds=(0, 1), seed=9, buffer=buffer, constraint="nuclear"),
])
def test_learn_one_fast_path_equals_the_block_path(make, buffer, monkeypatch):
    X, y = _classes(150)
    X[7] = 1.5  # a clipped record: the general path
    one, block = make(buffer), make(buffer)
    taken = []
    fast = type(one)._learn_one_fast

    def counting(self, x, label):
        result = fast(self, x, label)
        taken.append(result)
        return result

    monkeypatch.setattr(type(one), "_learn_one_fast", counting)
    with pytest.warns(UserWarning, match="clipped"):
        for i in range(150):
            one.learn_one(X[i], y[i])
    monkeypatch.undo()
    with pytest.warns(UserWarning, match="clipped"):
        block.learn_many(X, y)
    assert sum(taken) > 100 and not all(taken)  # mostly fast; release rounds and the clipped record not
    np.testing.assert_array_equal(one._iterate.w, block._iterate.w)
    np.testing.assert_array_equal(one.model, block.model)
    np.testing.assert_array_equal(one._iterate.iterate_sum, block._iterate.iterate_sum)
    assert one._history.class_codes == block._history.class_codes and one._history.n_rows == block._history.n_rows
    if one.private:
        assert one.privacy_report() == block.privacy_report()
