"""Evaluation of released scorers (ALGORITHMS.md §8)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def roc_auc(scores, labels) -> float:
    """Area under the ROC curve by the Mann–Whitney statistic, ties counted one half.

    Parameters
    ----------
    scores : array-like of float
        Higher means "more likely positive".
    labels : array-like
        Positive class: 1, +1 or True; everything else (0, −1, False) is negative.

    Examples
    --------
    >>> roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise ValueError(f"scores and labels must be 1-D of the same length, got {scores.shape} and {labels.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    positive = (labels == 1) | (labels == True)  # noqa: E712 (booleans and ±1/0-1 labels alike)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC needs at least one positive and one negative label")
    ranks = rankdata(scores)  # average ranks: a tie counts one half
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))
