"""OnPairStrC: online private pairwise learning for strongly convex losses (Huai et al. 2020, Alg. 1)."""

from __future__ import annotations

from .online import with_task_parameters
from .private import PrivateOnlineLearner


@with_task_parameters
class OnPairStrC(PrivateOnlineLearner, saved=True, algorithm="onpairstrc"):
    """Online (ε, δ)-differentially private pairwise learner for λ-strongly convex objectives.

    The learner runs Pairwise GIGA on ``ℓ(w; z, z') + (λ/2)‖w‖²`` over ``‖w‖₂ ≤ radius`` and, at the
    rounds of its release schedule, publishes ``Π_C[w_t + N(0, σ_t² I)]``. Only released models are
    visible: :attr:`model`, :meth:`decision_function` and :meth:`privacy_report`.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 1e-5
        The (ε, δ)-DP guarantee for the whole stream (every release together). Neighbouring streams
        differ in one record, replaced at the same position.
    loss : {"logistic", "square"}, default "logistic"
        Smooth pairwise loss (the ledger needs smoothness).
    lam : float or "auto", default "auto"
        Strong convexity λ. "auto" = G(R)/R (≈ 23.9 for the logistic loss and R = 0.1): the weakest λ
        under which the ball cannot bind at the optimum, so model and sensitivity (~2Γ/(λt)) shrink
        together. The paper's 10⁻³ makes the sensitivity as large as the ball for any realistic n:
        every release is noise (README).
    radius : float, default 0.1
        Radius R of the constraint ball C.
    step_sizes : "capped" or array-like
        η_t for every round; "capped" = Alg. 1's η_t = 2(t−1)/((t−2)λt) capped at 2/(L+λ).
    bounds : (lower, upper), optional
        **Public** box bounds of the raw features; records are mapped onto a domain of diameter 2 and
        clipped to the box (:class:`onpair.core.bounds.FeatureBounds`).
    norm_bound : float, optional
        Public bound on ‖x‖₂ instead of a box. One of ``bounds`` and ``norm_bound`` is required.
    n_features : int, optional
        Number of features, if not fixed by the bounds or the first record.
    n : int, optional
        Stream length, when known: adds a final release at round n and lets the budget be split over
        a finite number of releases.
    release_every : int, optional
        Release every k rounds.
    release_at : sequence of int, optional
        Explicit release rounds.
    horizon : int, optional
        Freeze the model after this round (no later release).
    max_releases : int, optional
        Stop after this many releases.
    budget_split : {"uniform", "proportional", "convergent"}, optional
        How ρ is shared between releases (:mod:`onpair.privacy.schedule`). Default: releases at rounds
        64, 128, 256, … (and n), with a proportional split when the count is known, else convergent.
    accounting : {"gaussian", "tight", "lemma3"}, optional
        (ε, δ) ↔ ρ conversion. Default "gaussian" (exact for compositions of Gaussian mechanisms);
        "lemma3" in paper mode.
    mode : {"ledger", "paper"}, default "ledger"
        "paper" reproduces Algorithm 1 literally: T₁ = max(16L²/α², 7) rounds of random outputs, the
        paper's η_t, σ_t² = 32G²(n−T₁)/(α²t²ρ) at every round after T₁, Lemma 3's conversion.
    {task_parameters}
    seed : int or SeedSequence, optional
        For reproducible experiments only (a numpy ``SeedSequence`` acts as an int). Without it the start
        point and the noise come from fresh OS entropy.
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`): every release is also
        charged to it, and a block it cannot pay for is refused before anything changes. Shared, not
        copied, by :meth:`clone`; not saved in snapshots (a learner with one refuses ``save``). A learner
        charging it (a clone too) draws noise of its own, even with a ``seed`` another model charging it
        has (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OnPairStrC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(500, 3)); y = X[:, 0] + 0.1 * rng.standard_normal(500) > 0.5
    >>> learner = OnPairStrC(epsilon=1.0, delta=1e-5, bounds=(0, 1), n=500, seed=0)
    >>> learner = learner.learn_many(X, y)
    >>> report = learner.privacy_report()
    >>> report["rho_spent"] <= report["rho_budget"], len(report["releases"])
    (True, 4)
    """

    @property
    def _paper_lipschitz(self) -> float:
        # Alg. 1 takes G of the whole (regularised) loss: ‖∇(λ/2)‖w‖²‖ ≤ λR adds λR.
        return self._objective.lipschitz + self._lam * self._radius
