"""The audits of objective perturbation and approximate minima perturbation (presets of
:mod:`onpair.audit`): the estimators read through the privacy loss of objective perturbation as claimed,
and the deliberately broken variants (too little noise, a regulariser below the condition), which override
this family's own hooks. ``build(epsilon, delta, n, d, bounds, neighbours) -> make(seed_sequence)``."""

from __future__ import annotations

import numpy as np

from ..core.bounds import FeatureBounds
from .estimators import ApproxMinimaPerturbedLogistic, ObjectivePerturbedLogistic
from .functions import PairwiseLogistic, PointwiseLogistic


def objective_setup(kind, cls_name, objective="pointwise"):
    """ObjectivePerturbedLogistic (``cls_name="objpert"``) or ApproxMinimaPerturbedLogistic (``"amp"``) with its
    defaults, read through the privacy loss of objective perturbation as claimed (:func:`objective_loss`).

    ``kind="noise0.05"``: broken, the σ of b is 5 % of the calibrated one; ``kind="lam0.01"``: broken, Λ is a
    hundredth of the condition's smallest value with the noise of a valid run. Both reports still claim ε.
    """

    def build(epsilon, delta, n, d, bounds, neighbours):
        base = ObjectivePerturbedLogistic if cls_name == "objpert" else ApproxMinimaPerturbedLogistic
        cls = base
        if kind == "noise0.05":
            class TooLittleNoise(base):
                def _noise_sigma(self, *args):
                    return 0.05 * super()._noise_sigma(*args)

            cls = TooLittleNoise
        elif kind == "lam0.01":
            class RegulariserBelowTheCondition(base):
                def _regulariser(self, smallest, requested, scale):
                    return 0.01 * super()._regulariser(smallest, requested, scale)

            cls = RegulariserBelowTheCondition
        params = dict(epsilon=epsilon, delta=delta, bounds=bounds, objective=objective)
        # The test is designed for the mechanism as claimed: Λ and σ of a correct run (public: they depend
        # on n, d, ε and δ only), whatever the variant does.
        claimed = base(random_state=0, **params).fit(*neighbours[1]).privacy_report_
        loss = objective_loss(claimed, objective, bounds, *neighbours)

        def make(seed_sequence):
            return cls(random_state=seed_sequence, **params), loss

        return make

    return build


def objective_loss(report, objective, bounds, D, D_prime):
    """The release read as the privacy loss log p_D(θ) − log p_D′(θ) of objective perturbation as claimed.

    The released θ (with the intercept, pointwise) has density ν(b_X(θ))·det(∇²F_X(θ) + ΛI) under data X,
    b_X(θ) = −∇F_X(θ) − Λθ (:mod:`onpair.objective.functions`), so the log-ratio of the two densities is the
    Neyman–Pearson test of D against D′ for objective perturbation, and a valid (if not optimal) test for AMP,
    whose output noise it ignores. σ and Λ are those of ``report``."""
    regulariser = report["regulariser_sum_units"]
    sigma = report["releases"][0]["sigma"]
    feature_map = FeatureBounds(*bounds)
    intercept = report["fit_intercept"]
    objectives = []
    for X, y in (D, D_prime):
        Z, _ = feature_map.transform(np.asarray(X, dtype=np.float64))
        objectives.append(PointwiseLogistic(Z, y, intercept) if objective == "pointwise" else PairwiseLogistic(Z, y))

    def log_density(f, theta):
        _, gradient, hessian = f.terms(theta)
        b = -gradient - regulariser * theta
        return -float(b @ b) / (2.0 * sigma ** 2) + np.linalg.slogdet(hessian + regulariser * np.eye(theta.size))[1]

    def release(estimator, X, y):
        fitted = estimator.fit(X, y)
        theta = np.append(fitted.coef_, fitted.intercept_) if intercept else fitted.coef_
        return np.array([log_density(objectives[0], theta) - log_density(objectives[1], theta)])

    return release
