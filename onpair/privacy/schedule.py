"""Release schedules: when a private learner releases a model and how much zCDP budget each release gets.

The privacy cost of an online learner is paid per **release**, not per update (docs/algorithms.md#release-schedules).
A schedule is public and data-independent: the rounds at which models are released and the share ρ_k
of the total budget ρ that release k receives, with Σ_k ρ_k ≤ ρ under every possible stream length.

Rounds:

* ``at=[t_1, t_2, …]``: explicit rounds;
* ``every=k``: rounds k, 2k, 3k, …;
* ``doubling=t_0``: rounds t_0, 2t_0, 4t_0, … (the default: a fresh model whenever the stream has
  doubled, so there are only O(log n) releases);

optionally limited by a known stream length ``n`` or a ``horizon`` after which the model is frozen
(a release is added at that round, so the last model has seen every record it will ever see), a first round ``start`` before
which nothing is released, and ``max_releases``.

Budget split (``split``):

* ``"uniform"``: ρ/K each (needs a finite K);
* ``"proportional"``: ρ·t_k/Σ_j t_j, more budget for later releases, which have seen more data and are
  the ones users keep (needs a finite K; the default for the doubling schedule of a known length);
* ``"convergent"``: ρ·6/(π²k²), which sums to less than ρ over infinitely many releases (the only
  choice for streams of unknown length).

Every share is multiplied by ``1 − 1e-12`` so that rounding can never push the sum of the shares above
ρ; the accountant checks the sum exactly.
"""

from __future__ import annotations

import math
import numbers
from typing import Iterable

import numpy as np

SPLITS = ("uniform", "proportional", "convergent")
_SHRINK = 1.0 - 1e-12


#: Rounds beyond this cannot be represented in the int64 arrays of the schedule.
MAX_ROUND = 2**62


def _positive_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < 1 or value > MAX_ROUND:
        raise ValueError(f"{name} must be a positive integer (at most 2**62), got {value!r}")
    return int(value)


class ReleaseSchedule:
    """A public plan of release rounds and per-release zCDP budgets.

    Parameters
    ----------
    rho_budget : float
        Total zCDP budget ρ.
    at : iterable of int, optional
        Explicit release rounds (1-based).
    every : int, optional
        Release every ``every`` rounds.
    doubling : int, optional
        Release at rounds ``doubling·2^j``.
    n : int, optional
        Known stream length: no release after round n, and one at round n.
    horizon : int, optional
        Round after which the model is frozen: no release after it, and one at it.
    start : int, default 0
        No release at or before this round (Huai's warm-up T₁).
    max_releases : int, optional
        At most this many releases.
    split : {"uniform", "proportional", "convergent"}, optional
        Budget split; default "uniform" for finite schedules, "convergent" for unbounded ones.

    Examples
    --------
    >>> s = ReleaseSchedule(1.0, every=100, n=250)
    >>> s.rounds_between(0, 1000).tolist(), s.rho_shares_between(0, 1000).round(4).tolist()
    ([100, 200, 250], [0.3333, 0.3333, 0.3333])
    >>> u = ReleaseSchedule(1.0, doubling=64)
    >>> u.finite, u.rounds_between(0, 600).tolist()
    (False, [64, 128, 256, 512])
    """

    def __init__(self, rho_budget, *, at=None, every=None, doubling=None, n=None, horizon=None, start=0,
                 max_releases=None, split=None):
        if isinstance(rho_budget, (bool, np.bool_)) or not (
                isinstance(rho_budget, numbers.Real) and math.isfinite(rho_budget) and rho_budget > 0):
            raise ValueError(f"rho_budget must be a finite number > 0, got {rho_budget!r}")
        given = [name for name, v in (("at", at), ("every", every), ("doubling", doubling)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of at=, every=, doubling=; got {given or 'none'}")
        self.rho_budget = float(rho_budget)
        self.n = None if n is None else _positive_int(n, "n")
        self.horizon = None if horizon is None else _positive_int(horizon, "horizon")
        if isinstance(start, (bool, np.bool_)) or not isinstance(start, (int, np.integer)) or start < 0:
            raise ValueError(f"start must be an integer >= 0, got {start!r}")
        self.start = int(start)
        self.max_releases = None if max_releases is None else _positive_int(max_releases, "max_releases")
        limits = [v for v in (self.n, self.horizon) if v is not None]
        self.limit = min(limits) if limits else None
        self.kind = given[0]
        if at is not None:
            rounds = sorted({_positive_int(r, "release round (release_at, at=)") for r in _iterable(at, "release_at")})
            if not rounds:
                raise ValueError("release_at must name at least one round")
            self.param = tuple(rounds)
        elif every is not None:
            self.param = _positive_int(every, "release_every")
        else:
            self.param = _positive_int(doubling, "doubling")
        self._finite_rounds = self._enumerate_finite()
        self.finite = self._finite_rounds is not None
        if split is None:
            split = "uniform" if self.finite else "convergent"
        if split not in SPLITS:
            raise ValueError(f"budget_split must be one of {SPLITS}, got {split!r}")
        if split != "convergent" and not self.finite:
            raise ValueError(
                f"budget_split={split!r} needs a finite number of releases: give n, horizon, "
                "max_releases or explicit release rounds, or use budget_split='convergent'"
            )
        self.split = split
        if self.finite:
            self._finite_shares = self._shares(self._finite_rounds)

    # -- rounds ---------------------------------------------------------------------------------
    def _raw_rounds_upto(self, upper: int) -> np.ndarray:
        """Release rounds of the rule (ignoring limit and cap) in (start, upper]."""
        if self.kind == "at":
            r = np.array(self.param, dtype=np.int64)
        elif self.kind == "every":
            r = np.arange(self.param, upper + 1, self.param, dtype=np.int64)
        else:
            count = 0 if upper < self.param else int(math.floor(math.log2(upper / self.param))) + 1
            r = np.array([self.param * 2**k for k in range(count) if self.param * 2**k <= MAX_ROUND],
                         dtype=np.int64)
        return r[(r > self.start) & (r <= upper)]

    def _enumerate_finite(self):
        if self.limit is not None:
            r = self._raw_rounds_upto(self.limit)
            if self.limit > self.start:
                # The last model before the stream ends (n) or the learner freezes (horizon).
                r = np.union1d(r, [self.limit]).astype(np.int64)
        elif self.kind == "at":
            r = self._raw_rounds_upto(max(self.param))
        elif self.max_releases is not None:
            # Unbounded rule, capped count: enumerate just far enough.
            upper = self.start + 1
            r = self._raw_rounds_upto(upper)
            while r.size < self.max_releases and upper < MAX_ROUND:
                upper = min(2 * upper, MAX_ROUND)
                r = self._raw_rounds_upto(upper)
        else:
            return None
        if self.max_releases is not None:
            r = r[: self.max_releases]
        return r

    # -- shares ---------------------------------------------------------------------------------
    def _shares(self, rounds: np.ndarray, first_index: int = 1) -> np.ndarray:
        if self.split == "uniform":
            return np.full(rounds.size, self.rho_budget / max(rounds.size, 1) * _SHRINK)
        if self.split == "proportional":
            weights = rounds.astype(np.float64)
            return self.rho_budget * weights / weights.sum() * _SHRINK
        k = np.arange(first_index, first_index + rounds.size, dtype=np.float64)
        return self.rho_budget * 6.0 / (math.pi**2 * k**2) * _SHRINK

    @property
    def n_releases(self):
        """Number of planned releases, or None for an unbounded schedule."""
        return None if not self.finite else int(self._finite_rounds.size)

    @property
    def last_round(self):
        """The last release round, or None for an unbounded schedule."""
        if not self.finite:
            return None
        return int(self._finite_rounds[-1]) if self._finite_rounds.size else 0

    def _finite_slice(self, t_low: int, t_high: int) -> slice:
        """Positions in the (sorted) planned rounds of the releases in (t_low, t_high]: O(log n)."""
        lo, hi = np.searchsorted(self._finite_rounds, [t_low, t_high], side="right")
        return slice(int(lo), int(hi))

    def _every_rounds_between(self, t_low: int, t_high: int) -> np.ndarray:
        """The unbounded "every p" rule's rounds in (t_low, t_high], without enumerating earlier ones."""
        p = self.param
        first = (max(t_low, self.start) // p + 1) * p
        return np.arange(first, t_high + 1, p, dtype=np.int64)

    def rounds_between(self, t_low: int, t_high: int) -> np.ndarray:
        """Release rounds t with ``t_low < t ≤ t_high``."""
        if self.finite:
            return self._finite_rounds[self._finite_slice(t_low, t_high)]
        if self.kind == "every":
            return self._every_rounds_between(t_low, t_high)
        r = self._raw_rounds_upto(t_high)  # doubling: O(log t) rounds
        return r[(r > t_low) & (r <= t_high)]

    def next_round_after(self, t: int):
        """The first release round after round t, or None if there is none."""
        if self.finite:
            k = int(np.searchsorted(self._finite_rounds, t, side="right"))
            return int(self._finite_rounds[k]) if k < self._finite_rounds.size else None
        after = max(int(t), self.start)
        if self.kind == "every":
            nxt = (after // self.param + 1) * self.param
            return nxt if nxt <= MAX_ROUND else None
        # doubling: the smallest param·2^j strictly after `after`
        r = self.param
        while r <= after:
            r *= 2
        return r if r <= MAX_ROUND else None

    def rho_shares_between(self, t_low: int, t_high: int) -> np.ndarray:
        """The ρ_k of the releases returned by :meth:`rounds_between` (same order)."""
        if self.finite:
            return self._finite_shares[self._finite_slice(t_low, t_high)]
        if self.kind == "every":  # releases in (start, t_low], counted without enumerating them
            p = self.param
            before = t_low // p - self.start // p if t_low > self.start else 0
        else:
            before = self._raw_rounds_upto(t_low).size
        rounds = self.rounds_between(t_low, t_high)
        return self._shares(rounds, first_index=before + 1)

    def frozen_after(self):
        """Round after which no release will ever happen (None if the schedule never ends)."""
        return self.last_round

    def describe(self) -> dict:
        """A JSON-able description for reports."""
        return {
            "kind": self.kind,
            "parameter": list(self.param) if self.kind == "at" else self.param,
            "n": self.n, "horizon": self.horizon, "start": self.start,
            "max_releases": self.max_releases, "split": self.split,
            "n_releases": self.n_releases,
        }


def _iterable(value, name) -> Iterable:
    try:
        return list(value)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of rounds, got {value!r}") from None
