"""scikit-learn's own estimator checks on the offline estimators (scikit-learn is a test dependency only)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from onpair import GradientPerturbedGD, OffPairC, OffPairStrC, OutputPerturbedSGD

ESTIMATORS = [
    OffPairStrC(random_state=0),
    OffPairC(random_state=0),
    OutputPerturbedSGD(random_state=0),
    GradientPerturbedGD(random_state=0),
]

@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
