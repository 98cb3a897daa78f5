"""The audits of the Pairwise GIGA family (presets of :mod:`onpair.audit`): its learners set up for a strong
audit, and the deliberately broken variants that the audit must catch. They live here because they
override the family's own hooks (the release plan, the visible model).

Each ``*_setup`` returns ``build(epsilon, delta, n, d, bounds) -> make(seed_sequence) -> (mechanism,
release)``, the form :class:`onpair.audit.presets.Preset` takes.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.audit_setup import AUDIT_RADIUS, int_seed, logistic_g, offline_maker, online_release
from ..core.geometry import project_l2_ball
from ..core.matrix_geometry import project_matrix, symmetric_noise
from .offline import OffPairC, OffPairStrC
from .onpairc import OnPairC
from .onpairstrc import OnPairStrC


def onpairstrc_class(kind):
    """OnPairStrC (``kind`` None), or a broken variant: "noise0.1" (every planned σ × 0.1) or "internal"
    (the visible model is the internal iterate); the report still claims ε."""
    if kind == "noise0.1":
        class _NoiseScaledOnPairStrC(OnPairStrC):
            """Broken on purpose: the planned σ of every release multiplied by 0.1 (the report still
            claims ε: the log records the honest plan, since an event whose σ is below its claimed ρ's is
            refused)."""

            def _plan(self, t_start, steps):
                self._honest_plan = super()._plan(t_start, steps)
                return dataclasses.replace(self._honest_plan, sigmas=self._honest_plan.sigmas * 0.1)

            def _after_block(self, plan, released):
                super()._after_block(self._honest_plan, released)

        return _NoiseScaledOnPairStrC
    if kind == "internal":
        class _InternalIterateOnPairStrC(OnPairStrC):
            """Broken on purpose: ``model`` is the internal (noise-free) iterate."""

            @property
            def model(self):
                return self._iterate.w.copy()

        return _InternalIterateOnPairStrC
    return OnPairStrC


def online_setup(kind, algorithm, task="auc", extra=None):
    """``algorithm`` OnPairStrC (or its broken variant ``kind``) or OnPairC: one release at n."""
    if algorithm not in (OnPairStrC, OnPairC) or (kind is not None and algorithm is not OnPairStrC):
        raise ValueError(f"no online audit of {algorithm!r} (variant {kind!r})")

    def build(epsilon, delta, n, d, bounds):
        if algorithm is OnPairC:
            # α = c·n^(−1/4) = G(R)/R: the regulariser dominates the loss's curvature.
            g = logistic_g(AUDIT_RADIUS, metric=task == "metric")
            c = g / AUDIT_RADIUS * n ** 0.25
            params = dict(c=c)
            cls = OnPairC
        else:
            params = {}
            cls = onpairstrc_class(kind)
        if task == "metric":
            params["task"] = "metric"
        params.update(extra or {})

        def make(seed_sequence):
            learner = cls(epsilon=epsilon, delta=delta, bounds=bounds, n=n, release_at=(n,),
                          radius=AUDIT_RADIUS, seed=int_seed(seed_sequence), **params)
            return learner, online_release

        return make

    return build


def offline_setup(algorithm, task="auc", extra=None):
    """``algorithm`` OffPairStrC or OffPairC: the last iterate, R = 0.01."""
    if algorithm not in (OffPairStrC, OffPairC):
        raise ValueError(f"no offline audit of {algorithm!r} here")

    def build(epsilon, delta, n, d, bounds):
        metric = task == "metric"
        if algorithm is OffPairStrC:
            cls, params = OffPairStrC, dict(radius=AUDIT_RADIUS, output="last")
        else:
            # α = c/√n = G(R)/R.
            g = logistic_g(AUDIT_RADIUS, metric=metric)
            c = g / AUDIT_RADIUS * math.sqrt(n)
            cls, params = OffPairC, dict(radius=AUDIT_RADIUS, output="last", c=c)
        return offline_maker(cls, dict(params, **({"task": "metric"} if metric else {}), **(extra or {})),
                             epsilon=epsilon, delta=delta, bounds=bounds)

    return build


def offpairstrc_noise_setup(epsilon, delta, n, d, bounds, task="auc"):
    """Broken on purpose: OffPairStrC's non-private twin (same order, same kernel) plus 0.1·σ noise, with
    σ the estimator's own (a public quantity: it depends on n and the parameters only). For the metric
    task the noise is symmetric and isotropic in the Frobenius norm, as the estimator draws it."""
    params = dict(epsilon=epsilon, delta=delta, bounds=bounds, radius=AUDIT_RADIUS, output="last", task=task)
    probe_X = np.zeros((n, d))
    probe_y = np.where(np.arange(n) == 0, 1, -1)
    sigma = OffPairStrC(random_state=0, **params).fit(probe_X, probe_y).privacy_report_["releases"][0]["sigma"]

    def make(seed_sequence):
        fit_seq, noise_seq = seed_sequence.spawn(2)
        twin = OffPairStrC(private=False, random_state=fit_seq, **params)

        def release(estimator, X, y):
            w = estimator.fit(X, y).coef_
            rng = np.random.Generator(np.random.PCG64(noise_seq))
            if task == "metric":
                noise = symmetric_noise(rng, 1, d)[0].reshape(d, d)
                return project_matrix(w + 0.1 * sigma * noise, AUDIT_RADIUS)
            return project_l2_ball(w + 0.1 * sigma * rng.standard_normal(w.shape[0]), AUDIT_RADIUS)

        return twin, release

    return make


def offpairstrc_metric_noise_setup(epsilon, delta, n, d, bounds):
    """The metric task's broken OffPairStrC (see :func:`offpairstrc_noise_setup`)."""
    return offpairstrc_noise_setup(epsilon, delta, n, d, bounds, task="metric")
