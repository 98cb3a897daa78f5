"""Pairwise GIGA (Kar et al. 2013): the non-private online baseline and every private learner's twin."""

from __future__ import annotations

from .online import OnlinePairwiseLearner, with_task_parameters


@with_task_parameters
class PairwiseGIGA(OnlinePairwiseLearner, saved=True, algorithm="giga"):
    """Online projected gradient descent on the pairwise online penalty, **without privacy**.

    At round t the learner steps on ``L̂_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) + (λ/2)‖w‖²`` and
    projects onto ``‖w‖₂ ≤ radius``. It is the same compiled kernel the private learners run, so with
    the same parameters it is exactly what :class:`OnPairStrC` would learn without noise.

    Parameters
    ----------
    loss : {"logistic", "hinge", "square"}, default "logistic"
        Pairwise loss (:mod:`onpair.core.losses`).
    lam : float or "auto", default "auto"
        Strength λ of the regulariser ``(λ/2)‖w‖²``; "auto" = G(R)/R, the weakest λ under which the
        ball constraint cannot bind at the optimum (≈ 23.9 for the logistic loss and R = 0.1).
    radius : float, default 0.1
        Radius R of the constraint ball.
    step_sizes : "capped" or array-like, default "capped"
        η_t for t = 1, 2, …; "capped" is Huai's Alg. 1 schedule capped at 2/(L+λ), or R/(G√t) when λ = 0.
    bounds : (lower, upper), optional
        Public box bounds of the features (see :class:`onpair.core.bounds.FeatureBounds`).
    norm_bound : float, optional
        Public bound on ‖x‖₂ instead of a box. One of ``bounds`` and ``norm_bound`` is required.
    n_features : int, optional
        Number of features, if not fixed by the bounds or the first record.
    {task_parameters}
    seed : int or SeedSequence, optional
        Seeds the reservoir buffer's slots (``buffer=("reservoir", s)``) and a random centre; no noise
        is drawn by the non-private learner.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import PairwiseGIGA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(200, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> giga = PairwiseGIGA(bounds=(0, 1)).learn_many(X, y)
    >>> bool(giga.model[0] > abs(giga.model[1]))
    True
    """

    @property
    def model(self):
        """A copy of the current iterate (this learner is not private)."""
        self._require_dim()
        return self._as_visible(self._model_flat())

    def _model_flat(self):
        return self._iterate.w.copy()
