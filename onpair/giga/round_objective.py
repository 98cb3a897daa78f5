"""The round objective of Pairwise GIGA and its step sizes: public constants, fixed at construction.

Round t of every online learner steps on ``L̂_t(w) + (λ/2)‖w − w₀‖²`` (docs/algorithms.md, "Pairwise
GIGA and the online private learners"). :class:`RoundObjective` holds what the kernels and the
sensitivity ledger need of it (λ, R, the loss and its constants G, L, Γ, diam C); :class:`StepRule`
gives η_t for any round, as one block or one round at a time, in the same floating-point operations.
Both depend on public parameters only, so the whole noise schedule can be planned before a record
is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core._validation import check_positive

#: Step-size rules accepted by name.
STEP_RULES = ("capped",)
#: Largest step size accepted (see :func:`check_step_sizes`).
MAX_STEP = 1e6


def resolve_lam(lam, loss, radius: float, terms=None) -> float:
    """λ, with ``"auto"`` = G(R)/R: the weakest regulariser under which the constraint ‖w‖ ≤ R can never
    bind at the optimum (there ‖w*‖ ≤ G/λ). A binding constraint keeps ‖w‖ at R while the sensitivity
    stays ~2Γ/(λt), so weaker λ only adds noise relative to the model; stronger λ shrinks model and
    sensitivity together. Data-independent: it depends on R and the loss only (for the metric task also
    on the public threshold interval and pair weights ``terms``).

    Examples
    --------
    >>> from onpair.core.losses import get_loss
    >>> round(resolve_lam("auto", get_loss("logistic"), 0.1), 3)
    23.948
    """
    if isinstance(lam, str):
        if lam != "auto":
            raise ValueError(f"lam must be a number >= 0 or 'auto', got {lam!r}")
        return (loss.lipschitz(radius) if terms is None else loss.lipschitz(radius, terms)) / radius
    value = check_positive(lam, "lam", allow_zero=True)
    if not value <= 1e12:
        raise ValueError(f"lam must be <= 1e12 (the step sizes ~1/λ underflow), got {lam!r}")
    return value


def check_step_sizes(step_sizes):
    """None for a named rule, else the step sizes as a checked float64 array."""
    if isinstance(step_sizes, str):
        if step_sizes not in STEP_RULES:
            raise ValueError(f"step_sizes must be one of {STEP_RULES} or an array, got {step_sizes!r}")
        return None
    try:
        steps = np.array(step_sizes, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"step_sizes must be a string or an array of floats, got {step_sizes!r}") from None
    if steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"step_sizes must be a non-empty 1-D array, got shape {steps.shape}")
    # The cap keeps every iterate finite (|step·gradient| ≤ 1e6·(G + λ·diam) with λ ≤ 1e12, R ≤ 1e8):
    # an overflow inside a step would make the release depend on the data through NaN (a model that
    # is NaN on one stream and finite on its neighbour), outside what the ledger bounds.
    bad = np.flatnonzero(~np.isfinite(steps) | (steps < 0) | (steps > MAX_STEP))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"step_sizes[{k}] = {steps[k]!r}: step sizes must be finite and in [0, {MAX_STEP:g}]")
    return steps


@dataclass(frozen=True)
class RoundObjective:
    """λ, R, the loss and the task of the round objective, with the constants derived from them.

    Parameters
    ----------
    task : AUCTask or MetricTask
        The task axis (:mod:`onpair.core.task`).
    loss : PairLoss or MetricLoss
        The pair loss, with its declared constants.
    lam : float
        λ of the regulariser (λ/2)‖w − w₀‖².
    radius : float
        R of the constraint set.

    Examples
    --------
    >>> from onpair.core.task import make_task
    >>> task = make_task("auc")
    >>> objective = RoundObjective(task, task.get_loss("logistic"), lam=1.0, radius=0.1)
    >>> objective.smoothness, round(objective.pair_change, 4), objective.diameter
    (5.0, 2.3948, 0.2)
    """

    task: object
    loss: object
    lam: float
    radius: float

    @property
    def strong_convexity(self) -> float:
        """α of the round objective: the regulariser makes it λ-strongly convex."""
        return self.lam

    @property
    def _terms(self) -> dict:
        """The metric task's threshold and pair weights as keyword arguments of the loss constants."""
        terms = getattr(self.task, "terms", None)
        return {} if terms is None else {"terms": terms}

    @property
    def terms_array(self) -> np.ndarray:
        """[low, high, ω₊, ω₋] for the metric kernels (:class:`onpair.core.metric_losses.PairTerms`)."""
        return self.task.terms.as_array()

    @property
    def smoothness(self) -> float:
        """L of the round objective: the loss's L plus the regulariser's λ."""
        return self.loss.smoothness(**self._terms) + self.lam

    @property
    def lipschitz(self) -> float:
        """G of the data term (the regulariser cancels between neighbouring runs)."""
        return self.loss.lipschitz(self.radius, **self._terms)

    @property
    def pair_change(self) -> float:
        """Γ of the data term: the ledger's per-pair charge for a replaced record (with the metric task's
        threshold and pair weights: :meth:`onpair.core.metric_losses.MetricLoss.pair_change`)."""
        return self.loss.pair_change(self.radius, **self._terms)

    @property
    def diameter(self) -> float:
        """diam(C)."""
        return self.task.diameter(self.radius)

    @property
    def loss_code(self) -> int:
        return self.loss.code

    @property
    def constraint(self) -> int:
        return self.task.constraint


class StepRule:
    """η_t for every round t: an explicit array, the capped rule, or Huai et al.'s Alg. 1 as printed.

    * ``"capped"``: Alg. 1's η_t = 2(t−1)/((t−2)αt), capped at 2/(L+α) where the gradient map stops
      contracting (the cap binds only for t ≲ (L+α)/α, rounds Alg. 1 spends in its random warm-up);
      R/(G√t) without strong convexity. Round 1 never steps (there is no pair).
    * ``"paper"``: the uncapped η_t from round T₁ + 1 on, 0 during the warm-up.
    * an array: η_t = steps[t − 1], for exactly as many rounds as it has entries.

    :meth:`block` and :meth:`one` give the same numbers, bit for bit (the single-record path and
    the block path of a learner must agree).

    Examples
    --------
    >>> from onpair.core.task import make_task
    >>> task = make_task("auc")
    >>> rule = StepRule(RoundObjective(task, task.get_loss("logistic"), 1.0, 0.1))
    >>> [round(float(s), 4) for s in rule.block(0, 9)]   # capped at 2/(L+λ) = 1/3, then 2(t−1)/((t−2)λt)
    [0.0, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.2917, 0.254]
    >>> bool(rule.one(9) == rule.block(8, 1)[0])
    True
    """

    def __init__(self, objective: RoundObjective, steps=None, *, paper_warmup=None):
        self._objective = objective
        self._steps = steps
        self._paper_warmup = paper_warmup
        self._alpha = objective.strong_convexity
        self._smooth = objective.smoothness
        self._cap = 2.0 / (self._smooth + self._alpha) if math.isfinite(self._smooth) else math.inf

    @property
    def explicit(self):
        """The explicit array of step sizes, or None for a rule."""
        return self._steps

    def block(self, t_start: int, count: int) -> np.ndarray:
        """η_t for rounds t_start+1 … t_start+count."""
        t = np.arange(t_start + 1, t_start + count + 1, dtype=np.float64)
        alpha = self._alpha
        if self._paper_warmup is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(t > self._paper_warmup, 2.0 * (t - 1.0) / ((t - 2.0) * alpha * t), 0.0)
        if self._steps is not None:
            if t_start + count > self._steps.size:
                raise ValueError(
                    f"step_sizes has {self._steps.size} entries but this call reaches round "
                    f"{t_start + count}: give a step size for every round"
                )
            return self._steps[t_start:t_start + count].copy()
        if alpha > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                paper = np.where(t > 2, 2.0 * (t - 1.0) / ((t - 2.0) * alpha * t), np.inf)
            steps = np.minimum(paper, self._cap)
            if not math.isfinite(self._cap):  # non-smooth loss without a cap: start at the paper's round 3
                steps = np.where(t > 2, paper, 2.0 / alpha)
        else:
            # Convex, no strong convexity: the usual R/(G√t) online-gradient schedule.
            steps = self._objective.radius / (self._objective.lipschitz * np.sqrt(t))
        steps[t < 2] = 0.0
        return steps

    def one(self, t: int) -> float:
        """η_t for one round, the same number :meth:`block` gives."""
        if self._steps is not None or self._paper_warmup is not None or t < 3:
            return float(self.block(t - 1, 1)[0])
        alpha = self._alpha
        if alpha > 0:
            tf = float(t)
            paper = 2.0 * (tf - 1.0) / ((tf - 2.0) * alpha * tf)
            if math.isfinite(self._smooth):
                return min(paper, self._cap)
            return paper
        return float(self._objective.radius / (self._objective.lipschitz * np.sqrt(float(t))))
