"""The scores a fitted estimator reports (:meth:`onpair.core.estimator.PairwiseEstimator.score`): ROC AUC
(Mann–Whitney, ties one half) and k-nearest-neighbour accuracy, plain or leave-one-out. The public path is
:mod:`onpair.evaluation` (docs/algorithms.md#evaluation)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ._validation import as_feature_block, class_codes, label_array

__all__ = ["roc_auc", "knn_accuracy", "leave_one_out_knn_accuracy"]


def roc_auc(y_true, y_score) -> float:
    """Area under the ROC curve by the Mann–Whitney statistic, ties counted one half.

    The arguments come in scikit-learn's order (``sklearn.metrics.roc_auc_score(y_true, y_score)``):
    the labels first, then the scores. Swapping them is not always an error, and when it is not, the
    result is wrong (with 0/1 labels and scores in [0, 1] both orders run).

    Parameters
    ----------
    y_true : array-like
        The labels. Positive class: 1, +1 or True; everything else (0, −1, False) is negative.
    y_score : array-like of float
        The scores; higher means "more likely positive".

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    scores = real_vector(y_score, "y_score")
    labels = np.asarray(y_true)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise ValueError(f"y_true and y_score must be 1-D of the same length, got {labels.shape} and "
                         f"{scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("y_score must be finite")
    positive = (labels == 1) | (labels == True)  # noqa: E712 (booleans and ±1/0-1 labels alike)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC needs at least one positive and one negative label in y_true")
    ranks = rankdata(scores)  # average ranks: a tie counts one half
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def real_vector(values, name: str) -> np.ndarray:
    """A finite, real float64 vector, or a ValueError naming ``name``."""
    array = np.asarray(values)
    if array.dtype.kind == "c":
        raise ValueError(f"{name} are complex: they must be real numbers")
    if array.dtype.kind not in "biuf":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}") from None
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


#: Floats of scratch memory per block of :func:`knn_accuracy` (about 8 MiB): distances are computed
#: for a block of test rows against a chunk of training rows at a time.
_KNN_BLOCK_FLOATS = 1 << 20


def knn_accuracy(train_X, train_y, test_X, test_y, k: int = 3) -> float:
    """Accuracy of k-nearest-neighbour classification with the plain Euclidean distance.

    Meant for records already mapped into a learned metric's space (e.g. ``learner.transform(X)`` of
    a ``task="metric"`` learner), where the Euclidean distance *is* the learned metric. Each test
    record gets the majority label of its ``k`` nearest training records.

    * **Neighbours.** The k training records with the smallest distances; two training records at
      exactly the same distance are taken in training order (the earlier one first).
    * **Votes.** Every neighbour has one vote. When several classes share the largest number of
      votes, the class of the nearest neighbour among those classes wins (for k = 2 with two
      different labels: the label of the nearest one).

    Distances are computed exactly (``Σ (a − b)²``, not the expanded ``‖a‖² + ‖b‖² − 2aᵀb``, whose
    rounding can break ties) by blocks of test rows against chunks of training rows, so the scratch
    memory stays near 8 MiB whatever the data sizes (plus O(m·k) for the neighbours).

    Parameters
    ----------
    train_X : array-like of shape (n, d)
        The training records (finite).
    train_y : array-like of shape (n,)
        Their class labels: any hashable values (ints, strings, …); equal values are one class.
    test_X : array-like of shape (m, d)
        The records to classify, with the same d features.
    test_y : array-like of shape (m,)
        Their true labels.
    k : int, default 3
        Number of neighbours, 1 ≤ k ≤ n.

    Returns
    -------
    float
        The fraction of test records whose predicted label equals the true one.

    Examples
    --------
    >>> train_X = [[0.0], [1.0], [10.0], [11.0]]
    >>> knn_accuracy(train_X, ["a", "a", "b", "b"], [[0.5], [10.5], [4.0]], ["a", "b", "b"], k=1)
    0.6666666666666666

    With k = 2 and one vote each, the nearest neighbour's class wins the tie:

    >>> knn_accuracy([[0.0], [3.0]], [0, 1], [[1.0], [2.0]], [0, 1], k=2)
    1.0
    """
    train = as_feature_block(train_X, None, 0, name="train_X")
    test = as_feature_block(test_X, train.shape[1], 0, name="test_X")
    train_labels = label_list(train_y, train.shape[0], "train_y", "train_X")
    test_labels = label_list(test_y, test.shape[0], "test_y", "test_X")
    if test.shape[0] == 0:
        raise ValueError("test_X has no records: the accuracy of nothing is undefined")
    return _knn_accuracy(train, train_labels, test, test_labels, _check_k(k, train.shape[0]), leave_one_out=False)


def leave_one_out_knn_accuracy(X, y, k: int = 3) -> float:
    """Accuracy of predicting each record from its ``k`` nearest *other* records (the rules of
    :func:`knn_accuracy`: exact distances, ties in record order, ties between classes to the nearest).

    Examples
    --------
    >>> leave_one_out_knn_accuracy([[0.0], [0.1], [5.0], [5.1]], ["a", "a", "b", "b"], k=1)
    1.0
    """
    records = as_feature_block(X, None, 0, name="X")
    labels = label_list(y, records.shape[0], "y", "X")
    k = _check_k(k, records.shape[0] - 1)
    return _knn_accuracy(records, labels, records, labels, k, leave_one_out=True)


def _check_k(k, n: int) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of training records ({n}), got {k}")
    return k


def _knn_accuracy(train, train_labels, test, test_labels, k, leave_one_out) -> float:
    """The vote of :func:`knn_accuracy`; with ``leave_one_out`` (test is train), a record is not its
    own neighbour."""
    m = test.shape[0]
    try:
        train_codes, codes = class_codes(train_labels)
        # −1: a class never seen in training, which no prediction can match.
        test_codes = np.array([codes.get(label, -1) for label in test_labels], dtype=np.int64)
    except TypeError:
        raise ValueError("train_y and test_y must hold hashable labels (ints, strings, …)") from None

    d = train.shape[1]
    rows = max(1, min(m, _KNN_BLOCK_FLOATS // max(k * k, 1), _KNN_BLOCK_FLOATS // (d + k)))
    chunk = max(1, _KNN_BLOCK_FLOATS // (rows * d))
    correct = 0
    for start in range(0, m, rows):
        block = test[start:start + rows]
        nearest = _nearest(block, train, k, chunk, start if leave_one_out else None)
        votes = train_codes[nearest]  # (rows, k), nearest first
        # counts[i, j]: votes for the class of neighbour j; the first j with the most votes is the
        # class of the nearest neighbour among the tied classes.
        counts = (votes[:, :, None] == votes[:, None, :]).sum(axis=2)
        winner = votes[np.arange(votes.shape[0]), np.argmax(counts, axis=1)]
        correct += int(np.count_nonzero(winner == test_codes[start:start + rows]))
    return correct / m


def _nearest(block, train, k, chunk, self_offset=None):
    """Indices of the k nearest training rows of each row of ``block``, ordered by (distance, index);
    with ``self_offset``, block row i is training row ``self_offset + i`` and never its own neighbour."""
    rows = block.shape[0]
    best_dist = np.empty((rows, 0))
    best_index = np.empty((rows, 0), dtype=np.int64)
    for start in range(0, train.shape[0], chunk):
        part = train[start:start + chunk]
        diff = block[:, None, :] - part[None, :, :]
        dist = np.einsum("ijk,ijk->ij", diff, diff)
        index = np.broadcast_to(np.arange(start, start + part.shape[0]), dist.shape)
        if self_offset is not None:
            dist[index == (self_offset + np.arange(rows))[:, None]] = np.inf
        # The kept candidates come first and have smaller indices, each group in index order among
        # equal distances: a stable sort by distance orders the union by (distance, index).
        all_dist = np.concatenate([best_dist, dist], axis=1)
        all_index = np.concatenate([best_index, index], axis=1)
        order = np.argsort(all_dist, axis=1, kind="stable")[:, :k]
        best_dist = np.take_along_axis(all_dist, order, axis=1)
        best_index = np.take_along_axis(all_index, order, axis=1)
    return best_index


def label_list(labels, n_records: int, name: str, x_name: str) -> list:
    """Labels as a Python list with one entry per record of ``x_name``, or a ValueError naming ``name``."""
    array = label_array(labels, name)
    if array.shape[0] != n_records:
        raise ValueError(f"{name} has {array.shape[0]} labels but {x_name} has {n_records} records")
    return array.tolist()
