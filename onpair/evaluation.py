"""Evaluation of released scorers (docs/algorithms.md#evaluation): ROC AUC and k-NN accuracy
(:mod:`onpair.core.scoring`, which the estimators' ``score`` uses), the empirical pairwise risk and the
metric-learning objective."""

from __future__ import annotations

import numpy as np

from .batch._kernels import pairwise_risk as _compiled_pairwise_risk
from .batch._kernels import split_by_label
from .core._metric_pair_kernels import _metric_risk
from .core._validation import as_feature_block, class_codes, class_label
from .core.losses import get_loss
from .core.matrix_geometry import as_square_symmetric
from .core.metric_losses import PAPER_TERMS, get_metric_loss
from .core.scoring import label_list, real_vector, knn_accuracy, leave_one_out_knn_accuracy, roc_auc

__all__ = ["roc_auc", "knn_accuracy", "leave_one_out_knn_accuracy", "pairwise_risk", "metric_objective"]


def pairwise_risk(w, Z, labels, loss="logistic", block: int = 512) -> float:
    """Empirical pairwise risk L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j) (docs/algorithms.md#pairwise-risk).

    ``Z`` are records already mapped by the public bounds, ``labels`` are ±1 (or 0/1, booleans).
    Opposite-label pairs score ``ℓ(wᵀ(x⁺ − x⁻))`` (both orders, so twice); same-label pairs contribute
    ℓ(0) = log 2 each for the logistic loss (Huai et al.'s φ((y − y')·…) at y = y') and 0 for the
    hinge and square losses, whose indicator excludes them. This validates its inputs and runs the
    compiled pair loop of :func:`onpair.batch._kernels.pairwise_risk`.

    Examples
    --------
    >>> import numpy as np
    >>> round(pairwise_risk(np.zeros(2), np.eye(2), [1, -1]), 6) == round(float(np.log(2)), 6)
    True
    """
    loss = get_loss(loss)
    w = real_vector(w, "w")
    Z = np.asarray(Z, dtype=np.float64)
    labels = np.asarray(labels)
    if Z.ndim != 2 or Z.shape[1] != w.shape[0]:
        raise ValueError(f"Z must be 2-D with {w.shape[0]} columns (the length of w), got shape {Z.shape}")
    if labels.shape != (Z.shape[0],):
        raise ValueError(f"labels must have one entry per row of Z ({Z.shape[0]}), got shape {labels.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z must be finite")
    valid = np.isin(labels, [1, -1, 0, True, False]) if labels.dtype.kind in "biuf" else np.zeros(1, bool)
    if not np.all(valid):
        raise ValueError("labels must be ±1, 0/1 or booleans")
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive integer, got {block!r}")
    positive = (labels == 1) | (labels == True)  # noqa: E712
    n = Z.shape[0]
    if n < 2:
        raise ValueError("the pairwise risk needs at least 2 records")
    with np.errstate(over="raise", invalid="raise"):
        try:
            scores = Z @ w
        except FloatingPointError:
            raise ValueError("the scores Z @ w overflow: w or Z is too large") from None
    if not np.all(np.isfinite(scores)):
        raise ValueError("the scores Z @ w are not finite: w or Z is too large")
    # The computation itself is the compiled, parallel pair loop of the full-batch estimators.
    positives, negatives = split_by_label(Z, np.where(positive, 1, -1))
    return _compiled_pairwise_risk(positives, negatives, w, loss.name, block=block)


def metric_objective(W, Z, labels, loss="logistic") -> float:
    """Empirical pairwise risk of a metric: the mean of ℓ(W; z_i, z_j) over the pairs i < j.

    ``ℓ`` is a loss of the metric task (:mod:`onpair.core.metric_losses`) of the squared distance
    ``h = (z_i − z_j)ᵀ W (z_i − z_j)`` and the pair's agreement ``τ = +1`` (same class) or ``−1``:
    ``"logistic"`` φ(τ(1 − h)) with φ(u) = log(1 + e^(−u)), ``"hinge"`` (1 + τh)₊. Both are
    symmetric in the pair, so this is also the mean over ordered pairs i ≠ j. It runs the compiled
    pair loop of :func:`onpair.core._metric_pair_kernels._metric_risk`.

    Parameters
    ----------
    W : array-like of shape (d, d)
        A symmetric matrix, e.g. a learner's released ``model``.
    Z : array-like of shape (n, d)
        Records **already mapped** by the public bounds (as the learners map them), n ≥ 2.
    labels : array-like of shape (n,)
        Class labels as the metric learners take them: ints, booleans, strings, integral floats
        (``1`` and ``1.0`` are one class).
    loss : {"logistic", "hinge"}, default "logistic"

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.5]])
    >>> float(np.exp(metric_objective(np.eye(2), Z[:2], ["a", "b"])))  # h = 1: φ(0) = log 2
    2.0
    >>> metric_objective(np.eye(2), Z, ["a", "b", "a"], loss="hinge")  # (0 + 1.25 + 0)/3
    0.4166666666666667
    """
    code = get_metric_loss(loss).code
    M = as_square_symmetric(W)
    d = M.shape[0]
    Z = as_feature_block(Z, None, 0, name="Z")
    if Z.shape[1] != d:
        raise ValueError(f"Z must have {d} columns (W is {d}×{d}), got shape {Z.shape}")
    n = Z.shape[0]
    values = label_list(labels, n, "labels", "Z")
    if n < 2:
        raise ValueError("the pairwise risk needs at least 2 records")
    codes, _ = class_codes([class_label(v, i, 0, name="labels") for i, v in enumerate(values)])
    with np.errstate(over="ignore", invalid="ignore"):
        risk = float(_metric_risk(np.ascontiguousarray(M).reshape(-1), Z, codes, code, PAPER_TERMS.as_array()))
    if not np.isfinite(risk):
        raise ValueError("the pairwise risk is not finite: W or Z is too large")
    return risk
