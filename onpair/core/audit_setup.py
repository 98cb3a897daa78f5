"""What the audit variants of every family share (:mod:`onpair.audit`; each family keeps its own in
``<family>/audit_variants.py``): the integer seed of one run, how a release is read off a learner or an
estimator, and the constants of a strong audit of Huai et al.'s learners."""

from __future__ import annotations

import numpy as np
from .losses import get_loss
from .metric_losses import get_metric_loss

#: Huai et al.'s learners are audited at R = 0.01: G(R) ≈ 2.04 is close to the canary's actual change 2.
AUDIT_RADIUS = 0.01
#: The metric presets with a learned threshold: b in [0, 4R], pair weights those of 3 balanced classes.
LEARNED_TERMS = {"threshold": "learned", "pair_weights": (1.5, 0.75)}


def int_seed(seed_sequence: np.random.SeedSequence) -> int:
    """A 128-bit integer seed from a SeedSequence (the online learners take an int ``seed``)."""
    return int.from_bytes(seed_sequence.generate_state(4, np.uint32).tobytes(), "little")


def online_release(learner, X, y):
    """An online learner's release after the whole data set: its ``model``."""
    return learner.learn_many(X, y).model


def offline_release(estimator, X, y):
    """An offline estimator's release: its ``coef_``."""
    return estimator.fit(X, y).coef_


def offline_maker(cls, params: dict, *, epsilon, delta, bounds):
    """``make(seed_sequence) -> (estimator, offline_release)``: a fresh ``cls`` estimator per run, its noise
    seeded by the run."""
    def make(seed_sequence):
        return cls(epsilon=epsilon, delta=delta, bounds=bounds, random_state=seed_sequence, **params), \
            offline_release

    return make


def logistic_g(radius: float, metric: bool = False) -> float:
    """G(R) of the logistic loss of the AUC task, or of the metric task's with ``metric=True``."""
    return (get_metric_loss("logistic") if metric else get_loss("logistic")).lipschitz(radius)
