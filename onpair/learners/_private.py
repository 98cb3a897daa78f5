"""Private online learners: Pairwise GIGA whose only visible output is a noisy release per schedule.

What is private and what is not:

* the internal iterate ``_w`` and the history never leave the object; :attr:`model`,
  :meth:`decision_function` and the release list come from the last **released** model;
* release k at round t_k adds N(0, σ_k² I) with σ_k = U_{t_k}/√(2ρ_k), where U is the sensitivity
  ledger (:mod:`onpair.privacy.ledger`) and ρ_k the schedule's share, so release k is ρ_k-zCDP and the
  whole stream Σρ_k ≤ ρ-zCDP (zCDP composes additively, also adaptively);
* ρ comes from (ε, δ) through the chosen conversion (:mod:`onpair.privacy.conversions`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..privacy.accountant import ZCDPAccountant
from ..privacy.conversions import METHODS, eps_from_rho, rho_from_dp
from ..privacy.exceptions import PrivacyBudgetExceeded, PrivacyWarning
from ..privacy.gaussian import sigmas_for_shares
from ..privacy.ledger import _ledger_block, _ledger_round
from ..privacy.schedule import ReleaseSchedule
from .._validation import check_positive
from ._base import _OnlinePairwiseLearner

MODES = ("ledger", "paper")
#: First release of the default doubling schedule: early enough to replace the data-independent start
#: quickly, late enough that the iterate has seen a few dozen records.
DEFAULT_FIRST_RELEASE = 64


class _PrivateOnlineLearner(_OnlinePairwiseLearner):
    """Shared machinery of OnPairStrC and OnPairC (see their docstrings for the parameters)."""

    _private = True

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", lam="auto", radius=0.1,
                 step_sizes="capped", bounds=None, norm_bound=None, n_features=None, n=None,
                 release_every=None, release_at=None, horizon=None, max_releases=None, budget_split=None,
                 accounting=None, mode="ledger", buffer=None, task="auc", constraint=None, center=None,
                 seed=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n = n
        self.release_every = release_every
        self.release_at = release_at
        self.horizon = horizon
        self.max_releases = max_releases
        self.budget_split = budget_split
        self.accounting = accounting
        self.mode = mode
        # Settings are read from private copies fixed here: changing a public attribute after
        # construction must not change the privacy analysis half-way through a stream.
        self._mode = mode
        self._epsilon = check_positive(epsilon, "epsilon")
        self._delta = check_positive(delta, "delta")
        if not self._delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if accounting is None:
            # The paper converts with Lemma 3; the library with the exact Gaussian (GDP) curve.
            accounting = "lemma3" if mode == "paper" else "gaussian"
        if accounting not in METHODS:
            raise ValueError(f"accounting must be one of {METHODS}, got {accounting!r}")
        if mode == "paper" and n is None:
            raise ValueError("mode='paper' needs the stream length n (Huai Alg. 1 splits ρ over n − T₁ rounds)")
        if mode == "paper" and not (isinstance(step_sizes, str) and step_sizes == "capped"):
            raise ValueError("mode='paper' uses Alg. 1's step sizes; do not pass step_sizes")
        self._accounting = accounting
        super().__init__(loss=loss, lam=lam, radius=radius, step_sizes=step_sizes, bounds=bounds,
                         norm_bound=norm_bound, n_features=n_features, buffer=buffer, task=task,
                         constraint=constraint, center=center, seed=seed)
        if mode == "paper" and buffer is not None:
            raise ValueError("mode='paper' is Alg. 1 with the full history (Lemma 4); use mode='ledger' "
                             "with a buffer")
        if not self._loss.smooth:
            raise ValueError(
                f"loss={self._loss.name!r} is not smooth: the sensitivity ledger needs the contraction of "
                "a smooth gradient map. Use 'logistic' or 'square' here (the hinge loss is for "
                "PairwiseGIGA and Yang et al.'s output-perturbed SGD)."
            )
        if self._strong_convexity <= 0:
            raise ValueError(f"lam must be > 0 for a private online learner (strong convexity), got {lam!r}")
        self._rho_budget = rho_from_dp(self._epsilon, self._delta, method=self._accounting)
        self._accountant = ZCDPAccountant(self._rho_budget)
        self._schedule = self._make_schedule()
        if mode == "paper" and self._warmup_rounds >= self._schedule.n:
            warnings.warn(
                f"mode='paper': T₁ = {self._warmup_rounds} ≥ n = {self._schedule.n}, so Algorithm 1 never "
                "leaves its warm-up and every output is a random point of C (ALGORITHMS.md §3). "
                "Use mode='ledger' for a useful model.",
                PrivacyWarning,
                stacklevel=3,
            )
        if self._schedule.n is not None and self._delta >= 1.0 / self._schedule.n:
            warnings.warn(
                f"delta = {self._delta:g} ≥ 1/n = {1.0 / self._schedule.n:g}: a mechanism that publishes one "
                "random record in the clear satisfies such a δ. Prefer δ ≪ 1/n.",
                PrivacyWarning,
                stacklevel=3,
            )
        self._sensitivity = 0.0  # U_t of the ledger after the last round seen
        self._releases = []
        self._released_models = []
        self._frozen_warned = False

    # -- schedule ----------------------------------------------------------------------------------
    @property
    def _warmup_rounds(self) -> int:
        """Huai Alg. 1's T₁ = max(16L²/α², 7) in paper mode; no warm-up with the ledger."""
        if self._mode != "paper":
            return 0
        ratio = 16.0 * self._paper_smoothness**2 / self._strong_convexity**2
        return int(max(math.ceil(ratio), 7)) if math.isfinite(ratio) and ratio < 2**62 else 2**62

    @property
    def _paper_lipschitz(self) -> float:
        """G of the whole regularised loss, as the paper states it (used only in paper mode)."""
        raise NotImplementedError

    @property
    def _paper_smoothness(self) -> float:
        return self._smoothness

    def _make_schedule(self) -> ReleaseSchedule:
        common = dict(n=self.n, horizon=self.horizon, max_releases=self.max_releases)
        if self._mode == "paper":
            if any(v is not None for v in (self.release_every, self.release_at)):
                raise ValueError("mode='paper' releases every round after T₁; do not give release_every/release_at")
            return ReleaseSchedule(self._rho_budget, every=1, start=self._warmup_rounds, split="uniform", **common)
        given = [v is not None for v in (self.release_every, self.release_at)]
        if all(given):
            raise ValueError("give release_every or release_at, not both")
        if self.release_at is not None:
            return ReleaseSchedule(self._rho_budget, at=self.release_at, split=self.budget_split, **common)
        if self.release_every is not None:
            return ReleaseSchedule(self._rho_budget, every=self.release_every, split=self.budget_split, **common)
        split = self.budget_split
        if split is None and (self.n is not None or self.horizon is not None or self.max_releases is not None):
            split = "proportional"
        return ReleaseSchedule(self._rho_budget, doubling=DEFAULT_FIRST_RELEASE, split=split, **common)

    # -- step sizes and sensitivities --------------------------------------------------------------
    def _step_sizes_for(self, t_start, count):
        if self._mode != "paper":
            return super()._step_sizes_for(t_start, count)
        t = np.arange(t_start + 1, t_start + count + 1, dtype=np.float64)
        alpha = self._strong_convexity
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.where(t > self._warmup_rounds, 2.0 * (t - 1.0) / ((t - 2.0) * alpha * t), 0.0)
        return steps

    def _start_point(self, dim):
        if self._mode == "paper":
            # Alg. 1 lines 3-7: rounds 1…T₁ output random points of C; w_{T₁} is one of them.
            return self._random_point(dim)
        return super()._start_point(dim)

    def _no_event_at(self, t):
        """Round t has no release and no freeze warning pending: the fast single-record path may run."""
        quiet_until = self.__dict__.get("_quiet_until", 0)
        if t <= quiet_until:
            return True
        nxt = self._schedule.next_round_after(t - 1)
        if nxt is not None and nxt == t:
            return False
        last = self._schedule.frozen_after()
        if last is not None and t > last and not self._frozen_warned:
            return False
        # Rounds before the next release (or, past the schedule's end, every round) are quiet.
        self._quiet_until = (nxt - 1) if nxt is not None else 2**62
        return True

    def _step_size_one(self, t):
        if self._mode == "paper":
            return float(self._step_sizes_for(t - 1, 1)[0])
        return super()._step_size_one(t)

    def _after_round_fast(self, t, step):
        # The ledger's recursion for one round: the compiled function _ledger_block runs per round.
        if t < 2:
            return  # round 1 takes no step: the bound stays 0
        constants = self.__dict__.get("_ledger_constants")
        if constants is None:
            constants = self._ledger_constants = (self._pair_change, self._smoothness, self._strong_convexity,
                                                  self._diameter, self._buffer_size)
        self._sensitivity = _ledger_round(self._sensitivity, t, step, *constants)

    def _plan_releases(self, t_start, steps):
        m = steps.shape[0]
        ledger = _ledger_block(self._sensitivity, t_start, steps, self._pair_change, self._smoothness,
                               self._strong_convexity, self._diameter, self._buffer_size)
        rounds = self._schedule.rounds_between(t_start, t_start + m)
        shares = self._schedule.rho_shares_between(t_start, t_start + m)
        if self._mode == "paper":
            # Lemma 4 (valid after T₁ with the paper's steps), with the paper's G of the whole loss.
            sensitivities = 8.0 * self._paper_lipschitz / (self._strong_convexity * rounds.astype(np.float64))
        else:
            sensitivities = ledger[rounds - t_start - 1]
        sigmas = sigmas_for_shares(sensitivities, shares)
        if not self._accountant.can_spend(math.fsum(shares)):
            raise PrivacyBudgetExceeded(
                f"the schedule asks for ρ = {math.fsum(shares):.6g} in rounds {t_start + 1}…{t_start + m} but "
                f"only {self._accountant.rho_remaining:.6g} remains"
            )
        slots = np.full(m, -1, dtype=np.int64)
        slots[rounds - t_start - 1] = np.arange(rounds.size)
        return {"slots": slots, "sigmas": sigmas, "rounds": rounds, "shares": shares,
                "sensitivities": sensitivities, "ledger_end": float(ledger[-1]) if m else self._sensitivity}

    def _pending_warnings(self, n_clipped, m):
        pending = super()._pending_warnings(n_clipped, m)
        last = self._schedule.frozen_after()
        if last is not None and self._t + m > last and not self._frozen_warned:
            pending.append((
                f"{type(self).__name__}: the release schedule ends at round {last}; the model is frozen at "
                "its last release and later records only update the internal state (see privacy_report()).",
                PrivacyWarning, "_frozen_warned",
            ))
        return pending

    def _after_block(self, plan, released):
        """Commit the block's releases (called after the kernel; nothing here can raise)."""
        self._sensitivity = plan["ledger_end"]
        for k in range(plan["rounds"].size):
            t_k = int(plan["rounds"][k])
            self._accountant.spend(float(plan["shares"][k]), label=f"release at round {t_k}")
            self._releases.append({
                "round": t_k,
                "sensitivity": float(plan["sensitivities"][k]),
                "sigma": float(plan["sigmas"][k]),
                "rho": float(plan["shares"][k]),
            })
            self._released_models.append(released[k].copy())

    # -- what a user may see -----------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """A copy of the last **released** model (the data-independent start before the first release)."""
        self._require_dim()
        if not self._released_models:
            return self._as_visible(self._initial_model.copy())
        return self._as_visible(self._released_models[-1].copy())

    @property
    def released_models(self) -> np.ndarray:
        """Every model released so far, in release order (shape (k, d), or (k, d, d) for the metric
        task); entry i belongs to
        ``privacy_report()["releases"][i]``. All of them were paid for, so all of them are public:
        a ``learn_many`` block that crosses several release rounds makes each available here."""
        self._require_dim()
        shape = (self._dim, self._dim) if self._task == "metric" else (self._dim,)
        if not self._released_models:
            return np.zeros((0,) + shape)
        return np.array(self._released_models).reshape((-1,) + shape)

    # A private learner holds the raw history, and its noise generator and remaining budget would be
    # duplicated by a copy: two copies fed neighbouring streams release noise that cancels in their
    # difference. Share `model` instead.
    def __reduce_ex__(self, protocol):
        raise TypeError(
            f"a private {type(self).__name__} cannot be pickled or copied: it holds the raw stream, and a "
            "copy would reuse its noise and its budget. Share learner.model (or released_models)."
        )

    def __copy__(self):
        self.__reduce_ex__(2)

    def __deepcopy__(self, memo):
        self.__reduce_ex__(2)

    def _init_state(self, dim):
        super()._init_state(dim)
        # Visible before the first release: the data-independent start (a random point of C in paper
        # mode, Alg. 1's warm-up output).
        self._initial_model = self._w.copy()

    def privacy_report(self) -> dict:
        """What has been spent and released so far.

        Keys: ``rho_budget``, ``rho_spent``, ``rho_remaining``, ``epsilon_spent`` (at the learner's δ, with
        its conversion), ``releases`` (one dict per release: ``round``, ``sensitivity``, ``sigma``, ``rho``),
        and ``epsilon``, ``delta``, ``accounting``, ``mode``, ``n_seen``, ``frozen``, ``status``,
        ``schedule``, ``n_clipped``. ``n_clipped`` counts records clipped to the declared bounds: it is
        computed from the private data without noise, so it is for the data curator only and must not
        be published with the model.
        """
        last = self._schedule.frozen_after()
        frozen = last is not None and self._t >= last
        if frozen:
            status = f"frozen: the schedule's last release was at round {last}; the budget is spent"
        else:
            status = f"learning; next release at round {self._schedule.next_round_after(self._t)}"
        rho_spent = self._accountant.rho_spent
        return {
            "algorithm": type(self).__name__,
            "mode": self._mode,
            "accounting": self._accounting,
            "epsilon": self._epsilon,
            "delta": self._delta,
            "rho_budget": self._accountant.rho_budget,
            "rho_spent": rho_spent,
            "rho_remaining": self._accountant.rho_remaining,
            "epsilon_spent": float(eps_from_rho(rho_spent, self._delta, method=self._accounting)) if rho_spent > 0 else 0.0,
            "releases": [dict(r) for r in self._releases],
            "n_seen": self._t,
            "frozen": frozen,
            "status": status,
            "schedule": self._schedule.describe(),
            "buffer": None if self._buffer_kind is None else {"kind": self._buffer_kind, "size": self._buffer_size},
            "sensitivity_now": self._sensitivity,
            "n_clipped": self._n_clipped,
        }
