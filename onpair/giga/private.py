"""Private online learners: Pairwise GIGA whose only visible output is a noisy release per schedule.

What is private and what is not:

* the internal iterate and the stored past never leave the object; :attr:`model`,
  ``decision_function`` and the release list come from the last **released** model;
* release k at round t_k adds N(0, σ_k² I) with σ_k = U_{t_k}/√(2ρ_k), where U is the sensitivity
  ledger (:mod:`onpair.privacy.ledger`) and ρ_k the schedule's share, so release k is ρ_k-zCDP and the
  whole stream Σρ_k ≤ ρ-zCDP (zCDP composes additively, also adaptively);
* ρ comes from (ε, δ) through the chosen conversion (:mod:`onpair.privacy.conversions`).

The release machinery is :mod:`onpair.giga.release`: a planner fixes each block's releases from
public quantities before any record is read, and a log keeps what was released and spent.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..privacy.accountant import check_accountant
from ..privacy.conversions import METHODS, rho_from_dp
from ..privacy.exceptions import PrivacyWarning
from ..privacy.reports import build_report, warn_large_delta
from ..privacy.schedule import ReleaseSchedule
from ..privacy.signal import NOTHING_RELEASED, signal_fields
from ..core._validation import check_positive
from .online import OnlinePairwiseLearner
from .round_objective import StepRule
from .release import ReleaseLog, ReleasePlanner

MODES = ("ledger", "paper")
#: First release of the default doubling schedule: early enough to replace the data-independent start
#: quickly, late enough that the iterate has seen a few dozen records.
DEFAULT_FIRST_RELEASE = 64


class PrivateOnlineLearner(OnlinePairwiseLearner):
    """Shared machinery of OnPairStrC and OnPairC (see their docstrings for the parameters)."""

    private = True

    def __init__(self, *, epsilon=1.0, delta=1e-5, loss="logistic", lam="auto", radius=0.1,
                 step_sizes="capped", bounds=None, norm_bound=None, n_features=None, n=None,
                 release_every=None, release_at=None, horizon=None, max_releases=None, budget_split=None,
                 accounting=None, mode="ledger", buffer=None, task="auc", constraint=None, center=None,
                 threshold=1.0, pair_weights=None, n_classes=None, seed=None, accountant=None):
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
        self._shared = check_accountant(accountant, type(self).__name__)
        # The log exists before the state (the state's start is the model visible before any release).
        self._log = ReleaseLog(rho_from_dp(self._epsilon, self._delta, method=self._accounting))
        super().__init__(loss=loss, lam=lam, radius=radius, step_sizes=step_sizes, bounds=bounds,
                         norm_bound=norm_bound, n_features=n_features, buffer=buffer, task=task,
                         constraint=constraint, center=center, threshold=threshold, pair_weights=pair_weights,
                         n_classes=n_classes, seed=seed)
        if mode == "paper" and buffer is not None:
            raise ValueError("mode='paper' is Alg. 1 with the full history (Lemma 4); use mode='ledger' "
                             "with a buffer")
        if not self._objective.loss.smooth:
            raise ValueError(
                f"loss={self._objective.loss.name!r} is not smooth: the sensitivity ledger needs the contraction "
                "of a smooth gradient map. Use 'logistic' or 'square' here (the hinge loss is for "
                "PairwiseGIGA and Yang et al.'s output-perturbed SGD)."
            )
        if self._objective.strong_convexity <= 0:
            raise ValueError(f"lam must be > 0 for a private online learner (strong convexity), got {lam!r}")
        self._schedule = self._make_schedule()
        self._planner = ReleasePlanner(self._schedule, self._objective, self._slots.ledger_size,
                                       self._paper_lipschitz if mode == "paper" else None)
        if mode == "paper" and self._warmup_rounds >= self._schedule.n:
            warnings.warn(
                f"mode='paper': T₁ = {self._warmup_rounds} ≥ n = {self._schedule.n}, so Algorithm 1 never "
                "leaves its warm-up and every output is a random point of C (docs/algorithms.md, "
                "\"What the papers' constants get wrong\"). Use mode='ledger' for a useful model.",
                PrivacyWarning,
                stacklevel=3,
            )
        warn_large_delta(type(self).__name__, self._delta, self._schedule.n, stacklevel=3)

    # -- schedule ----------------------------------------------------------------------------------
    @property
    def _rho_budget(self) -> float:
        return self._log.rho_budget

    @property
    def _warmup_rounds(self) -> int:
        """Huai Alg. 1's T₁ = max(16L²/α², 7) in paper mode; no warm-up with the ledger."""
        if self._mode != "paper":
            return 0
        ratio = 16.0 * self._objective.smoothness**2 / self._objective.strong_convexity**2
        return int(max(math.ceil(ratio), 7)) if math.isfinite(ratio) and ratio < 2**62 else 2**62

    @property
    def _paper_lipschitz(self) -> float:
        """G of the whole regularised loss, as the paper states it (used only in paper mode)."""
        raise NotImplementedError

    def _make_step_rule(self, steps) -> StepRule:
        if self._mode == "paper":
            return StepRule(self._objective, paper_warmup=self._warmup_rounds)
        return StepRule(self._objective, steps)

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

    # -- the learning path's hooks -----------------------------------------------------------------
    def _start_point(self, dim, center):
        if self._mode == "paper":
            # Alg. 1 lines 3-7: rounds 1…T₁ output random points of C; w_{T₁} is one of them.
            return self._task.random_point(self._init_rng, dim, self._radius)
        return super()._start_point(dim, center)

    def _init_state(self, dim):
        super()._init_state(dim)
        # Visible before the first release: the data-independent start (a random point of C in paper
        # mode, Alg. 1's warm-up output).
        self._log.initial_model = self._iterate.w.copy()

    def _quiet(self, t):
        """Round t has no release and no freeze warning pending: the fast single-record path may run."""
        return self._planner.quiet(t, self._log.frozen_warned)

    def _after_round_fast(self, t, step):
        self._log.ledger_bound = self._planner.ledger_round(self._log.ledger_bound, t, step)

    def _plan(self, t_start, steps):
        return self._planner.plan(t_start, steps, self._log.ledger_bound, self._log.accountant, self._shared)

    def _pending_warnings(self, n_clipped, m):
        pending = super()._pending_warnings(n_clipped, m)
        last = self._schedule.frozen_after()
        if last is not None and self._t + m > last and not self._log.frozen_warned:
            pending.append((
                f"{type(self).__name__}: the release schedule ends at round {last}; the model is frozen at "
                "its last release and later records only update the internal state (see privacy_report()).",
                PrivacyWarning, self._mark_frozen_warned,
            ))
        return pending

    def _mark_frozen_warned(self) -> None:
        self._log.frozen_warned = True

    def _after_block(self, plan, released):
        """Commit the block's releases (called after the kernel; nothing here can raise)."""
        self._log.commit(plan, released, self._shared)

    # -- snapshots ---------------------------------------------------------------------------------
    def _settings(self) -> dict:
        settings = super()._settings()
        settings.update(
            epsilon=self._epsilon, delta=self._delta, mode=self._mode, accounting=self._accounting,
            rho_budget=self._rho_budget, schedule=self._schedule.describe(), warmup=self._warmup_rounds,
        )
        return settings

    def _export_state(self, arrays):
        state = super()._export_state(arrays)
        self._log.export(state, arrays, None if self._dim is None else self._task.param_size(self._dim))
        return state

    def _private_state_keys(self):
        return list(ReleaseLog.STATE_KEYS)

    def _restore_releases(self, state, reader, t, dim):
        def replay(rounds):
            fresh = ReleaseLog(self._rho_budget)  # a fresh accountant: the whole history's ρ must fit
            return self._planner.plan(0, self._step_rule.block(0, rounds), 0.0, fresh.accountant)

        size = None if dim is None else self._task.param_size(dim)
        self._log = ReleaseLog.restore(
            state, reader, self._rho_budget, t, replay,
            model_check=lambda vector: self._task.membership_error(vector, dim, self._radius), size=size)

    # -- what a user may see -----------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """A copy of the last **released** model (the data-independent start before the first release)."""
        self._require_dim()
        return self._as_visible(self._model_flat())

    def _model_flat(self) -> np.ndarray:
        return self._log.visible()

    @property
    def released_models(self) -> np.ndarray:
        """Every model released so far, in release order (shape (k, d), or (k, d, d) for the metric
        task); entry i belongs to
        ``privacy_report()["releases"][i]``. All of them were paid for, so all of them are public:
        a ``learn_many`` block that crosses several release rounds makes each available here."""
        self._require_dim()
        size = self._task.param_size(self._dim)
        shape = self._task.visible_shape(self._dim)
        # A learned threshold (the last entry of each release) is not part of the visible matrix.
        return self._log.released(size)[:, :int(np.prod(shape))].reshape((-1,) + shape)

    @property
    def n_releases(self) -> int:
        """Models released so far."""
        return self._log.n_releases

    @property
    def accountant(self):
        """A read-only view of the learner's own zCDP accountant (``rho_budget``, ``rho_spent``,
        ``rho_remaining``, ``history``, ``events``). The shared one given as ``accountant=`` is
        :attr:`shared_accountant`."""
        return self._log.accountant.view()

    @property
    def shared_accountant(self):
        """The accountant given as ``accountant=`` (shared with other models), or None."""
        return self._shared

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

    def privacy_report(self, passes=1, order="same") -> dict:
        """What has been spent and released so far.

        The keys of every report (:func:`onpair.privacy.reports.build_report`: ``rho_budget``,
        ``rho_spent``, ``rho_remaining``, ``epsilon_spent`` at the learner's δ with its conversion, the cost
        of one **stream position**; ``releases``, one :class:`onpair.privacy.events.GaussianRelease` row
        per release: ``event``, ``what``, ``round``, ``sensitivity``, ``sigma``, ``rho``), and ``frozen``,
        ``schedule``, ``buffer``, ``sensitivity_now``, ``n_clipped``, ``expected_cosine`` and ``noise_dominated``
        (:mod:`onpair.privacy.signal`: the last release's expected cosine to the model it perturbed, from
        its norm and σ; below 1/2 the model is mostly noise; public) and ``record_level``. ``n_clipped`` counts records clipped to the declared bounds: it is computed
        from the private data without noise, so it is for the data curator only and must not be
        published with the model; ``curator_only`` lists it
        (:func:`onpair.privacy.reports.public_report` drops it).

        ``record_level`` is the cost of a **record** learned ``passes`` times (k passes over a data set):
        for these output-perturbed learners the group bound k²ρ whatever ``order``
        (:func:`onpair.privacy.replay.record_level`): ``{"passes", "order", "rho", "epsilon", "delta",
        "bound"}``.
        """
        last = self._schedule.frozen_after()
        frozen = last is not None and self._t >= last
        if frozen:
            status = f"frozen: the schedule's last release was at round {last}; the budget is spent"
        else:
            status = f"learning; next release at round {self._schedule.next_round_after(self._t)}"
        signal = self._signal()
        if signal["noise_dominated"]:
            status += (f"; the released model is dominated by noise (expected cosine {signal['expected_cosine']:.2f} "
                       "to the model it perturbed): more records, a larger ε or one release at the end "
                       "(release_at=[n]) help")
        accountant = self._log.accountant
        return build_report(
            type(self).__name__, accountant.events, epsilon=self._epsilon, delta=self._delta,
            accounting=self._accounting, mode=self._mode, n_seen=self._t, status=status,
            rho_budget=accountant.rho_budget, passes=passes, order=order,
            public={"frozen": frozen, "schedule": self._schedule.describe(), "buffer": self._slots.describe(),
                    "sensitivity_now": self._log.ledger_bound, **signal},
            curator={"n_clipped": self._n_clipped})

    def _signal(self) -> dict:
        """``expected_cosine`` and ``noise_dominated`` of the last release (:mod:`onpair.privacy.signal`: its
        norm against the power σ²·k of its noise; public; None and False before the first release)."""
        if not self._log.models:
            return dict(NOTHING_RELEASED)
        sigma = self._log.releases[-1]["sigma"]
        return signal_fields(self._log.models[-1], sigma**2 * self._task.noise_dimension(self._dim))
