"""scikit-learn's own estimator checks on the offline estimators (scikit-learn is a test dependency only).

Every check passes, with no expected failure. (scikit-learn itself skips two checks here, with its own
reasons: pandas is not a test dependency, and SCIPY_ARRAY_API is not set.)
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from onpair import (ApproxMinimaPerturbedLogistic, GradientPerturbedGD, ObjectivePerturbedLogistic, OffPairC, OffPairStats,
                    OffPairStrC, OutputPerturbedSGD)
from onpair.preprocessing import PrivateStandardScaler

# Every estimator × every scikit-learn check: the fast tier (make test) runs each check
# once, on values in rotation, and each value at least once (conftest.py); the full tier every pair.
pytestmark = pytest.mark.covering("estimator")

ESTIMATORS = [
    OffPairStrC(norm_bound=1.0, random_state=0),
    OffPairC(norm_bound=1.0, random_state=0),
    OutputPerturbedSGD(norm_bound=1.0, random_state=0),
    GradientPerturbedGD(norm_bound=1.0, random_state=0),
    OffPairStats(norm_bound=1.0, random_state=0),
    # The classifier (any number of classes). scikit-learn's checks fit each clone on label sets of their own
    # (0/1, 0/1/2, strings), so the domain is read off y, as declared by classes="observed"; a public
    # domain (classes=[...]) is what the library asks of users (tests/test_classifier.py).
    OffPairStats(norm_bound=1.0, task="classify", classes="observed", random_state=0),
    OffPairStats(norm_bound=1.0, task="classify", classes="observed", moments="per-class", covariance="diagonal",
                 random_state=0),
    ObjectivePerturbedLogistic(norm_bound=1.0, random_state=0),
    ObjectivePerturbedLogistic(norm_bound=1.0, objective="pairwise", random_state=0),
    ApproxMinimaPerturbedLogistic(norm_bound=1.0, random_state=0),
    ApproxMinimaPerturbedLogistic(norm_bound=1.0, objective="pairwise", random_state=0),
    # The scaler needs public bounds (it refuses to guess them); the checks' data lie inside these.
    PrivateStandardScaler(bounds=(-100.0, 100.0), random_state=0),
]

with warnings.catch_warnings():
    # onpair implements scikit-learn's estimator API without importing scikit-learn, so its estimators
    # do not inherit from BaseEstimator, and scikit-learn says so while listing the checks (once per
    # estimator, at collection). The checks below are what tells whether the API is right.
    warnings.filterwarnings("ignore", message=r"Estimator \w+ does not inherit from `sklearn\.base\.BaseEstimator`",
                            category=UserWarning)
    SKLEARN_CHECKS = parametrize_with_checks(ESTIMATORS)


# The estimators need public bounds (they refuse to fit without); here the unit ball (norm_bound=1), which
# the checks' data (standard normal features, scaled by up to 10) exceeds: the estimators clip those records
# and warn, as they must.
@pytest.mark.filterwarnings("ignore:records lay outside the declared feature bounds:UserWarning")
@SKLEARN_CHECKS
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
