"""OnPairC: online private pairwise learning for convex losses (Huai et al. 2020, Alg. 2)."""

from __future__ import annotations

import numpy as np

from ..core._validation import check_in_range
from .private import PrivateOnlineLearner



class OnPairC(PrivateOnlineLearner, saved=True, algorithm="onpairc"):
    """Online (ε, δ)-DP pairwise learner for convex losses: Alg. 1 on ``ℓ + (α/2)‖w − w₀‖²``.

    Algorithm 2 of Huai et al. makes a convex loss α-strongly convex by pulling towards a random point
    w₀ of C, with α = c·n^(−1/4) (Theorem 3), then runs OnPairStrC. Parameters are those of
    :class:`OnPairStrC` except:

    Parameters
    ----------
    c : float, default 25.0
        α = c·n^(−1/4), which needs ``n`` (or ``horizon``, used in its place). The paper leaves c
        open (α = O(n^(−1/4))); c = 25 keeps α·R near G for the default R = 0.1 at n in the
        thousands, where the constraint stops binding (see ``lam="auto"`` of OnPairStrC). With c = 1,
        AUC on Phishing at ε = 1 drops from 0.94 to 0.67 (README).
    lam : float, optional
        Give α directly instead of ``c`` (then n is not needed).
    center : {"zero", "random", "identity"}, optional
        w₀: the origin (the default for AUC), a uniform random point of C as in Alg. 2 line 3, or
        for ``task="metric"`` a multiple of the identity (the default there, see OnPairStrC). Privacy does not depend on
        w₀ (it is data-independent either way); the random centre pulls the model towards a random
        direction and costs AUC (Phishing, ε = 1, c = 50: 0.71 against 0.94), so it is opt-in.

    Examples
    --------
    >>> import numpy as np
    >>> from onpair import OnPairC
    >>> rng = np.random.default_rng(1)
    >>> X = rng.uniform(0, 1, size=(300, 4)); y = X[:, 1] > 0.5
    >>> learner = OnPairC(epsilon=2.0, bounds=(0, 1), n=300, c=1.0, seed=1).learn_many(X, y)
    >>> round(learner.strong_convexity, 4)   # α = c·n^(-1/4)
    0.2403
    """

    _CENTERS = ("zero", "identity", "random")

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", c=25.0, lam=None, center=None,
                 radius=0.1, step_sizes="capped", bounds=None, norm_bound=None, n_features=None, n=None,
                 release_every=None, release_at=None, horizon=None, max_releases=None, budget_split=None,
                 accounting=None, mode="ledger", buffer=None, task="auc", constraint=None, threshold=1.0,
                 pair_weights=None, n_classes=None, seed=None, accountant=None):
        self.c = c
        if lam is None:
            c = check_in_range(c, "c", 1e-12, 1e12)
            length = n if n is not None else horizon
            if length is not None and (isinstance(length, (bool, np.bool_))
                                       or not isinstance(length, (int, np.integer)) or length < 1):
                which = "n" if n is not None else "horizon"
                raise ValueError(f"{which} must be a positive integer, got {length!r}")
            if length is None:
                raise ValueError("OnPairC needs n (or horizon) to set α = c·n^(−1/4), or lam= directly")
            lam_value = c * float(length) ** -0.25
        else:
            lam_value = lam
        super().__init__(epsilon=epsilon, delta=delta, loss=loss, lam=lam_value, radius=radius,
                         step_sizes=step_sizes, bounds=bounds, norm_bound=norm_bound, n_features=n_features,
                         n=n, release_every=release_every, release_at=release_at, horizon=horizon,
                         max_releases=max_releases, budget_split=budget_split, accounting=accounting,
                         mode=mode, buffer=buffer, task=task, constraint=constraint, center=center,
                         threshold=threshold, pair_weights=pair_weights, n_classes=n_classes, seed=seed,
                         accountant=accountant)
        self.lam = lam  # keep the constructor argument verbatim (None when derived from c)

    @property
    def _paper_lipschitz(self) -> float:
        # Alg. 2 line 4: G̃ = G + α‖C‖₂ with ‖C‖₂ the diameter of C.
        return self._objective.lipschitz + self._lam * self._objective.diameter
