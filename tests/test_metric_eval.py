"""Evaluation helpers of the metric task: k-NN accuracy (against scikit-learn) and the pairwise risk
(against a slow loop written here)."""

import math

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from onpair.core import scoring
from onpair.evaluation import knn_accuracy, metric_objective


# -- knn_accuracy -----------------------------------------------------------------------------------
def _sklearn_accuracy(train_X, train_y, test_X, test_y, k):
    model = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(train_X, train_y)
    return float(np.mean(model.predict(test_X) == np.asarray(test_y)))


def _vote_tie_free(train_X, train_y, test_X, k):
    """Test rows whose k nearest neighbours (sklearn's) give one class strictly the most votes."""
    model = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(train_X, train_y)
    neighbours = model.kneighbors(test_X, return_distance=False)
    labels = np.asarray(train_y)[neighbours]
    keep = []
    for row in labels:
        _, counts = np.unique(row, return_counts=True)
        keep.append(np.sum(counts == counts.max()) == 1)
    return np.array(keep)


@pytest.mark.parametrize("k", [1, 3, 5, 9])
def test_knn_matches_sklearn_binary(k):
    rng = np.random.default_rng(k)
    train_X = rng.normal(size=(300, 4))
    train_y = (train_X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    test_X = rng.normal(size=(120, 4))
    test_y = (test_X[:, 0] > 0).astype(int)
    # Two classes and an odd k: no vote can tie; continuous data: no distance ties.
    expected = _sklearn_accuracy(train_X, train_y, test_X, test_y, k)
    assert knn_accuracy(train_X, train_y, test_X, test_y, k=k) == pytest.approx(expected, abs=0)


@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_knn_matches_sklearn_multiclass(k):
    rng = np.random.default_rng(100 + k)
    names = np.array(["brick", "sky", "grass", "path"])
    centres = rng.normal(scale=1.0, size=(4, 3))
    train_codes = rng.integers(0, 4, size=400)
    train_X = centres[train_codes] + rng.normal(size=(400, 3))
    test_codes = rng.integers(0, 4, size=200)
    test_X = centres[test_codes] + rng.normal(size=(200, 3))
    train_y, test_y = names[train_codes], names[test_codes]
    keep = _vote_tie_free(train_X, train_y, test_X, k)  # sklearn breaks vote ties differently
    assert keep.sum() > 100
    expected = _sklearn_accuracy(train_X, train_y, test_X[keep], test_y[keep], k)
    got = knn_accuracy(train_X, list(train_y), test_X[keep], list(test_y[keep]), k=k)
    assert got == pytest.approx(expected, abs=0)
    assert 0.3 < got < 1.0  # a real test: neither trivial nor degenerate


def test_knn_blocks_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(7)
    train_X = rng.integers(0, 4, size=(150, 2)).astype(float)  # many exact distance ties
    train_y = rng.integers(0, 3, size=150)
    test_X = rng.integers(0, 4, size=(60, 2)).astype(float)
    test_y = rng.integers(0, 3, size=60)
    expected = [knn_accuracy(train_X, train_y, test_X, test_y, k=k) for k in (1, 4, 7)]
    monkeypatch.setattr(scoring, "_KNN_BLOCK_FLOATS", 10)  # blocks of one test row, chunks of a few rows
    assert [knn_accuracy(train_X, train_y, test_X, test_y, k=k) for k in (1, 4, 7)] == expected


def test_knn_vote_ties_go_to_the_nearest_neighbours_class():
    line = lambda *xs: [[float(x)] for x in xs]  # noqa: E731
    # k = 2, one vote each: the nearer neighbour's class.
    assert knn_accuracy(line(0, 3), ["a", "b"], line(1, 2), ["a", "b"], k=2) == 1.0
    # k = 4 at distances 1 (b), 2 (a), 3 (a), 4 (b): a and b have 2 votes each; b's nearest is nearer.
    # (scikit-learn would answer "a", the smallest label.)
    train = line(1, 2, 3, 4)
    assert knn_accuracy(train, ["b", "a", "a", "b"], line(0), ["b"], k=4) == 1.0
    assert knn_accuracy(train, ["b", "a", "a", "b"], line(0), ["a"], k=4) == 0.0
    # Three classes, one vote each: the nearest.
    assert knn_accuracy(line(1, 2, 3), [2, 0, 1], line(0), [2], k=3) == 1.0
    # k = 5 at distances 1 (a), 2 (b), 3 (b), 4 (a), 5 (c): a and b tie, a's nearest is nearer.
    assert knn_accuracy(line(1, 2, 3, 4, 5), list("abbac"), line(0), ["a"], k=5) == 1.0
    # A clear majority wins over the nearest neighbour.
    assert knn_accuracy(line(1, 2, 3), list("abb"), line(0), ["b"], k=3) == 1.0


def test_knn_distance_ties_take_the_earlier_training_record():
    # Both training records at distance 1 from the test record: the earlier one is the neighbour.
    assert knn_accuracy([[-1.0], [1.0]], ["x", "y"], [[0.0]], ["x"], k=1) == 1.0
    assert knn_accuracy([[1.0], [-1.0]], ["y", "x"], [[0.0]], ["y"], k=1) == 1.0
    # k = 2 over three equidistant records: the first two, one vote each, the first one's class.
    assert knn_accuracy([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]], [3, 4, 4], [[0.0, 0.0]], [3], k=2) == 1.0


def test_knn_labels_unseen_in_training_are_wrong():
    assert knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0], [1.0]], [0, 7], k=1) == 0.5


@pytest.mark.parametrize("call, match", [
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0]], [0], k=0), "k must be between 1"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0]], [0], k=3), "k must be between 1"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0]], [0], k=1.0), "k must be a positive integer"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0]], [0], k=True), "k must be a positive integer"),
    (lambda: knn_accuracy([0.0, 1.0], [0, 1], [[0.0]], [0]), "train_X must be 2-D"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0, 1.0]], [0]), "test_X has 2 features"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0], [[0.0]], [0]), "train_y has 1 labels but train_X has 2"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[0.0]], [0, 1]), "test_y has 2 labels but test_X has 1"),
    (lambda: knn_accuracy([[0.0], [1.0]], [[0, 1]], [[0.0]], [0]), "train_y must be 1-D"),
    (lambda: knn_accuracy([[0.0], [1.0]], "ab", [[0.0]], [0]), "train_y must be a sequence"),
    (lambda: knn_accuracy([[0.0], [np.nan]], [0, 1], [[0.0]], [0]), r"train_X\[1, 0\] = .*nan.*must be finite"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], [[np.inf]], [0]), r"test_X\[0, 0\] = .*inf.*must be finite"),
    (lambda: knn_accuracy([[0.0], [1.0]], [0, 1], np.zeros((0, 1)), [], k=1), "test_X has no records"),
    (lambda: knn_accuracy([[0.0], [1.0]], [[0], {}], [[0.0]], [0], k=1), "hashable labels"),
])
def test_knn_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_knn_non_numeric_records_are_a_type_error():
    with pytest.raises(TypeError, match=r"test_X holds strings|test_X\[0, 0\] = 'a'"):
        knn_accuracy([[0.0], [1.0]], [0, 1], [["a"]], [0])


# -- metric_objective -------------------------------------------------------------------------------
def _slow_objective(W, Z, labels, loss):
    """Mean over pairs i < j of ℓ(h, τ), h = (z_i − z_j)ᵀ W (z_i − z_j), τ = +1 for one class."""
    total, pairs = 0.0, 0
    for i in range(len(Z)):
        for j in range(i + 1, len(Z)):
            v = Z[i] - Z[j]
            h = float(v @ W @ v)
            tau = 1.0 if labels[i] == labels[j] else -1.0
            if loss == "logistic":
                u = tau * (1.0 - h)
                total += math.log1p(math.exp(-u)) if u > 0 else -u + math.log1p(math.exp(u))  # log(1 + e^−u)
            else:
                total += max(0.0, 1.0 + tau * h)
            pairs += 1
    return total / pairs


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metric_objective_matches_a_slow_loop(loss, seed):
    rng = np.random.default_rng(seed)
    d, n = 4, 40
    A = rng.normal(size=(d, d))
    W = (A + A.T) / 2.0 * (0.3 if seed else 3.0)  # indefinite; large enough for h beyond 1 (seed 0)
    Z = rng.uniform(-0.5, 0.5, size=(n, d))
    labels = list(rng.choice(["sky", "grass", "path"], size=n))
    got = metric_objective(W, Z, labels, loss=loss)
    assert got == pytest.approx(_slow_objective(W, Z, labels, loss), rel=1e-10, abs=1e-10)


def test_metric_objective_labels_are_classes_as_the_learners_read_them():
    rng = np.random.default_rng(3)
    W, Z = np.eye(3), rng.normal(size=(12, 3))
    ints = [0, 1, 2] * 4
    mixed = [0.0, np.int64(1), 2] * 4  # 0.0 and 0, np.int64(1) and 1 are one class
    as_strings = ["a", "b", "c"] * 4
    values = {metric_objective(W, Z, labels) for labels in (ints, mixed, as_strings, np.array(ints))}
    assert len(values) == 1
    assert values.pop() == pytest.approx(_slow_objective(W, Z, ints, "logistic"), rel=1e-10)


def test_metric_objective_simple_values():
    Z = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert metric_objective(np.eye(2), Z, [1, 2]) == pytest.approx(math.log(2.0))  # h = 1, φ(0)
    assert metric_objective(np.zeros((2, 2)), Z, [1, 1], loss="hinge") == pytest.approx(1.0)
    assert metric_objective(np.eye(2), Z, [1, 2], loss="hinge") == 0.0


@pytest.mark.parametrize("call, match", [
    (lambda: metric_objective(np.eye(2), np.zeros((3, 3)), [0, 1, 2]), "Z must have 2 columns"),
    (lambda: metric_objective(np.ones((2, 3)), np.zeros((3, 2)), [0, 1, 2]), "W must be a non-empty square"),
    (lambda: metric_objective([[1.0, 2.0], [0.0, 1.0]], np.zeros((3, 2)), [0, 1, 2]), "W must be symmetric"),
    (lambda: metric_objective([[np.nan, 0.0], [0.0, 1.0]], np.zeros((3, 2)), [0, 1, 2]), r"W\[0, 0\]"),
    (lambda: metric_objective(np.eye(2), np.zeros((3, 2)), [0, 1]), "labels has 2 labels but Z has 3"),
    (lambda: metric_objective(np.eye(2), np.zeros((1, 2)), [0]), "at least 2 records"),
    (lambda: metric_objective(np.eye(2), np.zeros((3, 2)), [0, 0.5, 1]), "class label"),
    (lambda: metric_objective(np.eye(2), np.zeros((3, 2)), [0, None, 1]), "class label"),
    (lambda: metric_objective(np.eye(2), [[0.0, 0.0], [np.nan, 0.0]], [0, 1]), r"Z\[1, 0\] = .*nan.*must be finite"),
    (lambda: metric_objective(np.eye(2), np.zeros((3, 2)), [0, 1, 2], loss="square"), "loss must be one of"),
    (lambda: metric_objective(np.eye(2) * 1e300, [[0.0, 0.0], [1e10, 0.0]], [0, 0]), "not finite"),
])
def test_metric_objective_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_leave_one_out_matches_a_brute_force_loop():
    from onpair.evaluation import leave_one_out_knn_accuracy

    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, size=(60, 3))
    y = rng.integers(0, 3, size=60)
    for k in (1, 3, 5):
        correct = 0
        for i in range(60):
            others = np.delete(np.arange(60), i)
            correct += knn_accuracy(X[others], y[others], X[i:i + 1], y[i:i + 1], k=k)
        assert leave_one_out_knn_accuracy(X, y, k=k) == pytest.approx(correct / 60, abs=1e-12)
    with pytest.raises(ValueError, match="k must be between"):
        leave_one_out_knn_accuracy(X[:3], y[:3], k=3)
