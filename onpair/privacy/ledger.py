"""The sensitivity ledger: a worst-case ℓ2 sensitivity of Pairwise GIGA's internal iterate, every round.

Huai et al.'s Lemma 4 (``‖w_t − w'_t‖ ≤ 8G/(αt)``) only holds when the gradient map contracts, which
needs ``t ≥ 16L²/α²`` with their step sizes; with the paper's λ = 10⁻³ that is never on a UCI data set
(docs/algorithms.md#t1). The ledger is valid for **any** step-size schedule. Couple two runs on neighbouring
streams that differ at position j (same randomness). With c_t = max(|1 − η_t α|, |1 − η_t L|) the
contraction factor of the round-t gradient map (α-strongly convex, L-smooth objective) and projection
being non-expansive:

* round j: ``‖w_j − w'_j‖ ≤ Γ η_j`` (every term of L̂_j contains z_j);
* round t > j: ``‖w_t − w'_t‖ ≤ c_t ‖w_{t−1} − w'_{t−1}‖ + Γ η_t κ_t`` where κ_t is the largest weight
  one earlier record has in L̂_t (1/(t−1) for the full history, 1/|B_t| for a buffer);
* always ``≤ diam(C)``.

Γ bounds how much one pair's gradient can change, at the same w, when one record of the pair is
replaced. docs/algorithms.md#pair-change uses the generic Γ = 2G (two gradients of norm ≤ G); for the logistic and
hinge AUC losses Γ = G (:meth:`onpair.core.losses.PairLoss.pair_change`, proof there, sampled worst cases
in ``tests/test_losses.py``), which halves every sensitivity. Taking the worst j gives
``U_t = min(diam, max(c_t U_{t−1} + Γη_tκ_t, Γη_t))`` with U = 0 before the first step. G and Γ bound
the **data term** ℓ only: the regulariser (λ/2)‖w − c‖² is the same function in both runs, so it
cancels in the gradient difference and enters only through α and L of the whole objective. Everything is public (schedule, G, L, α, radius, buffer size): the noise
schedule can be computed before any data is read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def ledger_round(bound, t, eta, pair_change, smoothness, strong_convexity, diameter, buffer_size):
    """U_t from U_{t−1} = ``bound`` for one round t ≥ 2 (the recursion of :func:`ledger_block`; the
    learners' single-record path calls it too, so both give the same bits).

    U_t = min(diameter, max(c_t·bound + Γ·η·κ_t, Γ·η)) with c_t = max(|1 − η·α|, |1 − η·L|) and
    κ_t = 1/min(t − 1, buffer_size) (docs/algorithms.md#ledger-recursion).

    Parameters
    ----------
    bound : float
        U_{t−1} ≥ 0.
    t : int
        The round, t ≥ 2 (round 1 takes no step and is not passed here).
    eta : float
        The step size η_t ≥ 0.
    pair_change : float
        Γ of the loss's data term (docs/algorithms.md#pair-change).
    smoothness : float
        L of the whole round objective (the loss's L plus λ).
    strong_convexity : float
        α of the round objective (λ); 0 is allowed.
    diameter : float
        diam(C), the cap.
    buffer_size : int
        The buffer capacity s, or ≤ 0 for the full history (κ_t = 1/(t − 1)).

    Returns
    -------
    float
        U_t as a float64.
    """
    contraction = max(abs(1.0 - eta * strong_convexity), abs(1.0 - eta * smoothness))
    stored = t - 1
    if buffer_size > 0 and buffer_size < stored:
        stored = buffer_size
    kappa = 1.0 / stored
    carried = contraction * bound + pair_change * eta * kappa
    fresh = pair_change * eta
    return min(diameter, max(carried, fresh))


@njit(**NJIT_OPTIONS)
def ledger_block(previous, t_start, steps, pair_change, smoothness, strong_convexity, diameter, buffer_size):
    """Continue the ledger over rounds ``t_start+1 … t_start+len(steps)`` from ``U_{t_start} = previous``.

    ``pair_change`` is Γ (2G in general, G for the logistic and hinge AUC losses).
    ``steps[i]`` is η for round ``t_start + i + 1``; ``buffer_size ≤ 0`` means the full history
    (κ_t = 1/(t−1)), otherwise κ_t = 1/min(t−1, buffer_size). Round 1 takes no step (there is no pair).

    Parameters
    ----------
    previous : float
        U_{t_start} (0.0 before the first round).
    t_start : int
        The number of rounds already accounted for, ≥ 0.
    steps : float64 array of shape (m,)
        ``steps[i]`` is η for round ``t_start + i + 1`` (read only).
    pair_change, smoothness, strong_convexity, diameter : float
        Γ, L and α of the round objective and diam(C), as for :func:`ledger_round`.
    buffer_size : int
        The buffer capacity s, or ≤ 0 for the full history.

    Returns
    -------
    float64 array of shape (m,)
        A new array whose entry i is U_{t_start + i + 1} (round 1 leaves the bound unchanged).
    """
    m = steps.shape[0]
    out = np.empty(m)
    bound = previous
    for i in range(m):
        t = t_start + i + 1
        if t >= 2:
            bound = ledger_round(bound, t, steps[i], pair_change, smoothness, strong_convexity, diameter,
                                  buffer_size)
        out[i] = bound
    return out


def sensitivity_ledger(step_sizes, lipschitz, smoothness, strong_convexity, diameter, buffer_size=None,
                       pair_change=None):
    """Worst-case ℓ2 sensitivity ``U_t`` of the internal iterate for rounds t = 1 … len(step_sizes).

    Parameters
    ----------
    step_sizes : array-like of float
        η_t for t = 1, 2, … (η_1 is ignored: round 1 has no pair).
    lipschitz : float
        G, the Lipschitz constant of the data term of the loss.
    smoothness : float
        L of the whole round objective (loss smoothness plus the regulariser's λ).
    strong_convexity : float
        α of the whole round objective (λ for ``(λ/2)‖w − c‖²``); 0 is allowed.
    diameter : float
        diam(C) = 2R for the ball of radius R.
    buffer_size : int, optional
        Buffer capacity s for the finite-buffer variants (κ_t = 1/min(t−1, s)); None = full history.
    pair_change : float, optional
        Γ, the largest change of one pair's gradient when one of its records is replaced. Default 2G,
        valid for every G-Lipschitz loss; pass ``loss.pair_change(radius)`` for the tighter per-loss bound.

    Returns
    -------
    ndarray
        ``U[t-1]`` is the sensitivity after round t.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(1, 1001)
    >>> U = sensitivity_ledger(2 / (1.0 * t), lipschitz=4, smoothness=5, strong_convexity=1, diameter=10)
    >>> bool(U[-1] <= 8 * 4 / (1.0 * 1000))   # Lemma 4 where its conditions hold
    True
    """
    steps = np.ascontiguousarray(step_sizes, dtype=np.float64)
    if steps.ndim != 1:
        raise ValueError(f"step_sizes must be 1-D, got shape {steps.shape}")
    if not np.all(np.isfinite(steps)) or np.any(steps < 0):
        raise ValueError("step_sizes must be finite and >= 0")
    for name, value in (("lipschitz", lipschitz), ("smoothness", smoothness),
                        ("strong_convexity", strong_convexity), ("diameter", diameter)):
        if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    change = 2.0 * float(lipschitz) if pair_change is None else float(pair_change)
    if not np.isfinite(change) or change < 0:
        raise ValueError(f"pair_change must be finite and >= 0, got {pair_change!r}")
    size = 0 if buffer_size is None else int(buffer_size)
    if buffer_size is not None and size < 1:
        raise ValueError(f"buffer_size must be >= 1, got {buffer_size!r}")
    return ledger_block(0.0, 0, steps, change, float(smoothness), float(strong_convexity),
                         float(diameter), size)


# The names these kernels had before the Pairwise GIGA family used them from its own package.
_ledger_round = ledger_round
_ledger_block = ledger_block
