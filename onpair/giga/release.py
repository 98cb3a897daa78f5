"""Releases of the private online learners: the plan of a block, the planner, and the log of what was released.

Release k at round t_k publishes ``Π_C[w_{t_k} + σ_k·N]`` with σ_k = U_{t_k}/√(2ρ_k): U is the sensitivity
ledger (:mod:`onpair.privacy.ledger`), ρ_k the schedule's share of the budget (:mod:`onpair.privacy.schedule`).
Everything the plan contains depends on public quantities only (the parameters, the round numbers and
the step sizes), so the plan of a block is fixed, and the budget checked, before any record is read
(docs/algorithms.md, "Release schedules and budget splits").

* :class:`ReleasePlan`: what one block will release (frozen);
* :class:`ReleasePlanner`: the public rules that make plans (schedule, ledger constants, mode);
* :class:`ReleaseLog`: what has been released and spent (the accountant, the releases and their
  models, the ledger's current bound), with its part of a snapshot: on load the whole history is
  replayed from the public parameters and must match the file exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.accountant import ZCDPAccountant, charge, refusal
from ..privacy.events import GaussianRelease
from ..privacy.exceptions import PrivacyBudgetExceeded
from ..privacy.gaussian import sigmas_for_shares
from ..privacy.ledger import ledger_block, ledger_round

#: Keys of one entry of ``privacy_report()["releases"]``.
RELEASE_KEYS = ("round", "sensitivity", "sigma", "rho")


@dataclass(frozen=True)
class ReleasePlan:
    """The releases of one block of m rounds.

    Attributes
    ----------
    release_index : ndarray of int64, shape (m,)
        For each round of the block, the index of its release in the block, or −1.
    rounds : ndarray of int64, shape (k,)
        The release rounds t_k.
    shares : ndarray of float64, shape (k,)
        ρ_k of each release.
    sensitivities : ndarray of float64, shape (k,)
        ℓ2 sensitivity U_{t_k} of the released iterate.
    sigmas : ndarray of float64, shape (k,)
        Noise standard deviation σ_k.
    ledger_end : float
        The ledger's bound after the block's last round.

    Examples
    --------
    >>> plan = ReleasePlan.nothing(3)
    >>> plan.n_releases, plan.release_index.tolist()
    (0, [-1, -1, -1])
    """

    release_index: np.ndarray
    rounds: np.ndarray
    shares: np.ndarray
    sensitivities: np.ndarray
    sigmas: np.ndarray
    ledger_end: float

    @classmethod
    def nothing(cls, m: int, ledger_end: float = 0.0) -> "ReleasePlan":
        """A block that releases nothing (the non-private learner's every block)."""
        empty = np.zeros(0)
        return cls(np.full(m, -1, dtype=np.int64), np.zeros(0, dtype=np.int64), empty, empty, empty,
                   float(ledger_end))

    @property
    def n_releases(self) -> int:
        return int(self.rounds.size)

    def entries(self) -> list:
        """One ``{"round", "sensitivity", "sigma", "rho"}`` dict per release (the snapshot's form)."""
        return [{"round": int(r), "sensitivity": float(u), "sigma": float(s), "rho": float(p)}
                for r, u, s, p in zip(self.rounds, self.sensitivities, self.sigmas, self.shares)]

    def events(self) -> list:
        """One :class:`onpair.privacy.events.GaussianRelease` per release, charged its planned ρ share."""
        return [GaussianRelease(sensitivity=e["sensitivity"], sigma=e["sigma"], round=e["round"], rho=e["rho"])
                for e in self.entries()]


class ReleasePlanner:
    """The public rules that plan releases: the schedule, the ledger's constants and the mode.

    Parameters
    ----------
    schedule : ReleaseSchedule
        Release rounds and ρ shares.
    objective : RoundObjective
        Supplies Γ, L, α and diam(C) to the ledger.
    buffer_size : int
        s for a buffer (κ_t = 1/min(t − 1, s)), 0 for the full history.
    paper_lipschitz : float, optional
        Paper mode: sensitivities from Huai et al.'s Lemma 4, 8G/(αt), with the paper's G of the whole
        loss, instead of the ledger.
    """

    def __init__(self, schedule, objective, buffer_size: int, paper_lipschitz=None):
        self.schedule = schedule
        self._paper_lipschitz = paper_lipschitz
        self._alpha = objective.strong_convexity
        self._constants = (objective.pair_change, objective.smoothness, objective.strong_convexity,
                           objective.diameter, int(buffer_size))
        self._quiet_until = 0

    def plan(self, t_start: int, steps: np.ndarray, ledger_bound: float, accountant, shared=None) -> ReleasePlan:
        """The plan of rounds t_start+1 … t_start+m; ``PrivacyBudgetExceeded`` if ``accountant`` (the
        learner's own) or ``shared`` (an accountant shared with other models) cannot pay for it (nothing
        changes then)."""
        m = steps.shape[0]
        ledger = ledger_block(ledger_bound, t_start, steps, *self._constants)
        rounds = self.schedule.rounds_between(t_start, t_start + m)
        shares = self.schedule.rho_shares_between(t_start, t_start + m)
        if self._paper_lipschitz is not None:
            # Lemma 4 (valid after T₁ with the paper's steps), with the paper's G of the whole loss.
            sensitivities = 8.0 * self._paper_lipschitz / (self._alpha * rounds.astype(np.float64))
        else:
            sensitivities = ledger[rounds - t_start - 1]
        sigmas = sigmas_for_shares(sensitivities, shares)
        index = np.full(m, -1, dtype=np.int64)
        index[rounds - t_start - 1] = np.arange(rounds.size)
        plan = ReleasePlan(index, rounds, shares, sensitivities, sigmas, float(ledger[-1]) if m else float(ledger_bound))
        events = plan.events()
        if refusal([accountant], events) is not None:
            raise PrivacyBudgetExceeded(
                f"the schedule asks for ρ = {math.fsum(shares):.6g} in rounds {t_start + 1}…{t_start + m} but "
                f"only {accountant.rho_remaining:.6g} remains"
            )
        exc = refusal([shared], events)
        if exc is not None:
            raise exc
        return plan

    def ledger_round(self, bound: float, t: int, step: float) -> float:
        """The ledger's bound after round t, from the bound before it (the single-record path's form of
        :meth:`plan`'s recursion: the same compiled function, the same bits)."""
        if t < 2:
            return bound  # round 1 takes no step: the bound stays 0
        return ledger_round(bound, t, step, *self._constants)

    def quiet(self, t: int, frozen_warned: bool) -> bool:
        """Whether round t has no release and no freeze warning pending (the fast path may run)."""
        if t <= self._quiet_until:
            return True
        nxt = self.schedule.next_round_after(t - 1)
        if nxt is not None and nxt == t:
            return False
        last = self.schedule.frozen_after()
        if last is not None and t > last and not frozen_warned:
            return False
        # Rounds before the next release (or, past the schedule's end, every round) are quiet.
        self._quiet_until = (nxt - 1) if nxt is not None else 2**62
        return True


class ReleaseLog:
    """What a private learner has released and spent: the accountant, each release and its model.

    Parameters
    ----------
    rho_budget : float
        The learner's zCDP budget ρ.

    Examples
    --------
    >>> log = ReleaseLog(0.5)
    >>> log.n_releases, log.accountant.rho_remaining
    (0, 0.5)
    """

    STATE_KEYS = ("sensitivity", "releases", "accountant", "frozen_warned", "rho_budget")

    def __init__(self, rho_budget: float):
        self.rho_budget = rho_budget
        self.accountant = ZCDPAccountant(rho_budget, owner="learner")
        self.releases = []  # one RELEASE_KEYS dict per release
        self.models = []  # the released (flat) models
        self.initial_model = None  # visible before the first release: the data-independent start
        self.ledger_bound = 0.0  # U_t of the ledger after the last round seen
        self.frozen_warned = False

    @property
    def n_releases(self) -> int:
        return len(self.models)

    def commit(self, plan: ReleasePlan, released: np.ndarray, shared=None) -> None:
        """Record a learned block's releases (after the kernel; nothing here raises: the plan was checked
        against the learner's accountant and ``shared``)."""
        self.ledger_bound = plan.ledger_end
        charge([self.accountant, shared], plan.events())
        for k, entry in enumerate(plan.entries()):
            self.releases.append(entry)
            self.models.append(released[k].copy())

    def visible(self) -> np.ndarray:
        """A copy of the last released model (the initial model before the first release)."""
        return (self.models[-1] if self.models else self.initial_model).copy()

    def released(self, size: int) -> np.ndarray:
        """Every released model, shape (k, size)."""
        if not self.models:
            return np.zeros((0, size))
        return np.array(self.models)

    # -- snapshots ---------------------------------------------------------------------------------
    def export(self, state: dict, arrays: dict, size) -> None:
        state.update(
            sensitivity=self.ledger_bound,
            releases=[dict(r) for r in self.releases],
            accountant=self.accountant.to_dict(),
            frozen_warned=self.frozen_warned,
            rho_budget=self.rho_budget,
        )
        if size is not None:
            arrays["initial_model"] = self.initial_model
            arrays["released_models"] = self.released(size)

    @classmethod
    def restore(cls, state: dict, reader, rho_budget: float, t: int, replay, model_check=None,
                size=None) -> "ReleaseLog":
        """The log of a snapshot, checked against a replay of the public schedule over its t rounds.

        The schedule, the step sizes and the ledger depend only on the public parameters and on t, so
        ``replay(t)`` recomputes the whole release history (rounds, ρ, sensitivities, σ), the ledger's
        bound and the accountant's spends, which must match the file exactly: a snapshot cannot claim
        to have spent less than it did, nor to need less noise. ``model_check(vector)`` returns why a
        released model cannot be a point of C, or None.
        """
        saved_budget = reader.number(state["rho_budget"], "rho_budget")
        if saved_budget != rho_budget:
            raise reader.error(f"rho_budget = {saved_budget!r}, but the parameters give {rho_budget!r}")
        try:
            accountant = ZCDPAccountant.from_dict(state["accountant"])
        except (TypeError, ValueError) as exc:
            raise reader.error(f"invalid accountant ledger ({exc})") from None
        if accountant.rho_budget != rho_budget:
            raise reader.error(f"the accountant's rho_budget {accountant.rho_budget!r} is not the learner's "
                               f"{rho_budget!r}")
        releases = state["releases"]
        if not isinstance(releases, list):
            raise reader.error("releases must be a list")
        for i, entry in enumerate(releases):
            reader.mapping(entry, f"releases[{i}]", RELEASE_KEYS)
        if t > 0:
            try:
                plan = replay(t)
            except ValueError as exc:  # includes PrivacyBudgetExceeded
                raise reader.error(f"the parameters cannot have produced {t} rounds ({exc})") from None
            expected, bound = plan.entries(), plan.ledger_end
        else:
            expected, bound = [], 0.0
        if releases != expected:
            raise reader.error(f"the release history ({len(releases)} releases) is not what the schedule "
                               f"released in {t} rounds ({len(expected)} releases)")
        history = [(f"release at round {r['round']}", r["rho"]) for r in expected]
        if accountant.history != history:
            raise reader.error(f"the accountant's ledger ({len(accountant.history)} spends, "
                               f"ρ = {accountant.rho_spent!r}) does not match the {len(expected)} releases of "
                               f"the first {t} rounds")
        if reader.number(state["sensitivity"], "sensitivity") != bound:
            raise reader.error(f"sensitivity = {state['sensitivity']!r}, but the ledger gives {bound!r} "
                               f"after {t} rounds")
        log = cls(rho_budget)
        if t > 0:
            charge([log.accountant], plan.events())  # the events the file's ledger was checked against
        log.frozen_warned = reader.boolean(state["frozen_warned"], "frozen_warned")
        if size is not None:
            initial = reader.array("initial_model", (size,))
            models = reader.array("released_models", (len(releases), size))
            for name, vector in [("initial_model", initial)] + [
                    (f"released_models[{k}]", models[k]) for k in range(models.shape[0])]:
                problem = model_check(vector)
                if problem:
                    raise reader.error(f"{name} {problem}")
            log.initial_model = initial
            log.models = [row.copy() for row in models]
        elif releases:
            raise reader.error("releases recorded before any record")
        log.releases = expected
        log.ledger_bound = bound
        return log
