"""onpair.evaluation follows scikit-learn's argument order: labels first, then scores."""

import inspect

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from onpair import evaluation
from onpair.evaluation import roc_auc


def test_roc_auc_takes_labels_then_scores():
    assert list(inspect.signature(roc_auc).parameters) == ["y_true", "y_score"]
    assert roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert roc_auc(y_true=[0, 0, 1, 1], y_score=[0.1, 0.4, 0.35, 0.8]) == 0.75


def test_swapped_arguments_would_give_a_different_answer():
    # Labels 0/1 and scores that hold 0s and 1s: both orders run, only one is right. The old order
    # (scores, labels) read these scores as labels and gave 0.875 without complaint.
    y_true = [1, 1, 0, 1, 0, 0]
    y_score = [1.0, 0.9, 0.0, 1.0, 0.3, 0.0]
    assert roc_auc(y_true, y_score) == 1.0
    assert roc_auc(y_score, y_true) == 0.875  # what a caller who swaps them gets


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_agrees_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 2, 200)
    y_score = rng.normal(size=200) + 0.8 * y_true
    y_score[::7] = y_score[0]  # ties count one half in both
    assert roc_auc(y_true, y_score) == pytest.approx(roc_auc_score(y_true, y_score), abs=1e-12)
    assert roc_auc(y_true, y_score) > 0.6  # asymmetric: far from 0.5, so the order is visible
    assert roc_auc(np.where(y_true == 1, 1, -1), y_score) == roc_auc(y_true.astype(bool), y_score) == \
        roc_auc(y_true, y_score)


def test_every_function_with_labels_and_scores_takes_labels_first():
    """The evaluation functions that take labels and scores (or predictions) name them y_true first, as scikit-learn
    does; the others take records and labels (X, y) in scikit-learn's fit order."""
    assert len(evaluation.__all__) == 5
    for name in evaluation.__all__:
        function = getattr(evaluation, name)
        parameters = list(inspect.signature(function).parameters)
        if "y_score" in parameters or "y_pred" in parameters:
            assert parameters[0] == "y_true", (name, parameters)
        assert "scores" not in parameters, (name, parameters)
