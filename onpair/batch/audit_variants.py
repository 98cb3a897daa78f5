"""The audits of the full-batch estimators (presets of :mod:`onpair.audit`): Kang et al.'s gradient
perturbation with one step and Yang et al.'s SGD with T = n, set up as ``build(epsilon, delta, n, d,
bounds) -> make(seed_sequence) -> (estimator, release)`` (:class:`onpair.audit.presets.Preset`)."""

from __future__ import annotations

from ..core.audit_setup import AUDIT_RADIUS, offline_maker
from .gradient_perturbation import GradientPerturbedGD
from .output_perturbation import OutputPerturbedSGD


def offline_setup(algorithm, task="auc", extra=None):
    """``algorithm`` GradientPerturbedGD (T = 1) or OutputPerturbedSGD (T = n)."""
    if algorithm not in (GradientPerturbedGD, OutputPerturbedSGD):
        raise ValueError(f"no batch audit of {algorithm!r}")

    def build(epsilon, delta, n, d, bounds):
        metric = task == "metric"
        if algorithm is GradientPerturbedGD:
            # Metric task: R = 0.01 as for the Huai et al. learners, so that Γ at the public start
            # (‖W₀‖_F = R/2) is close to the canary's change 4 (4.16 against 4.35 at the default R = 0.1).
            # The papers' loss (threshold 1, uniform pairs), whose canary is computed by hand in the tests.
            cls, params = GradientPerturbedGD, (
                dict(T=1, radius=AUDIT_RADIUS, threshold=1.0, pair_weights=None) if metric else dict(T=1))
        else:  # Yang et al.: T = n, the smallest T for which their bound is stated
            cls, params = OutputPerturbedSGD, dict(T=n, loss="hinge")
        return offline_maker(cls, dict(params, **({"task": "metric"} if metric else {}), **(extra or {})),
                             epsilon=epsilon, delta=delta, bounds=bounds)

    return build
