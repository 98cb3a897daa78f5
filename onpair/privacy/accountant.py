"""A zero-concentrated DP budget accountant.

zCDP composes additively (Bun & Steinke 2016, Lemma 2.3), also under
adaptive composition, so the accountant only has to keep an exact running
sum of the rho of every release and refuse any spend that would take it
past the budget.  Conversion to (epsilon, delta) happens once, at the end,
through :func:`onpair.privacy.conversions.eps_from_rho`.
"""

import math

from .checks import check_delta, check_rho
from .conversions import eps_from_rho
from .exceptions import PrivacyBudgetExceeded

__all__ = ["ZCDPAccountant"]


def _grow_partials(partials, x):
    """Add ``x`` to a list of non-overlapping partial sums, exactly.

    Shewchuk's algorithm (the one ``math.fsum`` uses internally): the
    partials represent the exact real sum of everything added so far, so
    ``math.fsum(partials)`` is the correctly rounded total of the whole
    history at O(len(partials)) cost per spend, which stays small, instead
    of re-summing a history that may hold one entry per release.
    """
    out = []
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            out.append(lo)
        x = hi
    out.append(x)
    return out


class ZCDPAccountant:
    """Track rho-zCDP spends against a fixed budget.

    Parameters
    ----------
    rho_budget : float
        Total zCDP budget, finite and > 0.  Typically
        ``rho_from_dp(epsilon, delta)``.

    Notes
    -----
    * The running total is the correctly rounded sum of the whole history
      (equal to ``math.fsum`` of the accepted spends, kept incrementally
      with Shewchuk partials), so long histories do not drift.
    * A spend is accepted iff ``math.fsum(accepted + [rho]) <= rho_budget``,
      compared exactly, with no tolerance.  Callers plan shares whose
      ``math.fsum`` is <= the budget (e.g. give the last share
      ``rho_remaining``); a plan that overshoots by one ulp is refused.
    * A refused spend raises and changes nothing.

    Examples
    --------
    >>> acc = ZCDPAccountant(1.0)
    >>> acc.spend(0.25, label="release 1").spend(0.5, label="release 2")
    ZCDPAccountant(rho_budget=1.0, rho_spent=0.75)
    >>> acc.rho_remaining
    0.25
    >>> acc.can_spend(0.5)
    False
    >>> acc.history
    [('release 1', 0.25), ('release 2', 0.5)]
    """

    def __init__(self, rho_budget):
        self._budget = check_rho(rho_budget, name="rho_budget", allow_zero=False)
        self._history = []
        self._partials = []
        self._spent = 0.0

    # ------------------------------------------------------------------
    # spending
    # ------------------------------------------------------------------

    def _total_with(self, rho):
        return math.fsum(self._partials + [rho])

    def can_spend(self, rho):
        """Whether :meth:`spend` would accept ``rho`` now (a dry run).

        Parameters
        ----------
        rho : float
            Requested zCDP spend, finite and >= 0.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            If ``rho`` is not a finite number >= 0 (an invalid request is an
            error, not a "no").

        Examples
        --------
        >>> ZCDPAccountant(1.0).can_spend(1.0)
        True
        """
        rho = check_rho(rho)
        return self._total_with(rho) <= self._budget

    def spend(self, rho, label=""):
        """Charge ``rho`` to the budget.

        Parameters
        ----------
        rho : float
            zCDP cost of one release, finite and >= 0 (0 records a
            data-independent release).
        label : str, optional
            Free text stored in the history and used in error messages.

        Returns
        -------
        ZCDPAccountant
            ``self``, so that spends can be chained.

        Raises
        ------
        ValueError
            If ``rho`` is invalid; nothing changes.
        PrivacyBudgetExceeded
            If the total would exceed the budget; nothing changes.

        Examples
        --------
        >>> acc = ZCDPAccountant(0.5)
        >>> acc.spend(0.5).rho_remaining
        0.0
        """
        rho = check_rho(rho)
        label = str(label)
        new_total = self._total_with(rho)
        if new_total > self._budget:
            raise PrivacyBudgetExceeded(
                f"spend {label!r} of rho={rho!r} refused: rho_spent={self._spent!r}, "
                f"rho_remaining={self.rho_remaining!r} of rho_budget={self._budget!r}"
            )
        # Commit only after every check passed.
        self._partials = _grow_partials(self._partials, rho)
        self._history.append((label, rho))
        self._spent = new_total
        return self

    # ------------------------------------------------------------------
    # read-only state
    # ------------------------------------------------------------------

    @property
    def rho_budget(self):
        """float: the total zCDP budget."""
        return self._budget

    @property
    def rho_spent(self):
        """float: correctly rounded sum of all accepted spends."""
        return self._spent

    @property
    def rho_remaining(self):
        """float: ``max(0, rho_budget - rho_spent)``."""
        return max(0.0, self._budget - self._spent)

    @property
    def history(self):
        """list of (str, float): accepted spends in order (a copy)."""
        return list(self._history)

    def epsilon_spent(self, delta, method="gaussian"):
        """Epsilon of (epsilon, delta)-DP implied by the spends so far.

        Parameters
        ----------
        delta : float
            Target delta, 0 < delta < 1.
        method : {"gaussian", "tight", "lemma3"}, optional
            Conversion; see :func:`onpair.privacy.conversions.eps_from_rho`
            (the same default). ``"gaussian"`` is only valid if every spend
            was a Gaussian release; ``"tight"`` holds for any zCDP spend.

        Returns
        -------
        float

        Examples
        --------
        >>> acc = ZCDPAccountant(1.0).spend(0.1)
        >>> round(acc.epsilon_spent(1e-5, method="lemma3"), 4)
        2.246
        """
        check_delta(delta)
        return eps_from_rho(self._spent, delta, method)

    # ------------------------------------------------------------------
    # persistence
    # ------------------------------------------------------------------

    def to_dict(self):
        """Plain JSON-able state: ``{"rho_budget": float, "history": [[label, rho], ...]}``.

        Returns
        -------
        dict

        Examples
        --------
        >>> ZCDPAccountant(1.0).spend(0.5, "a").to_dict()
        {'rho_budget': 1.0, 'history': [['a', 0.5]]}
        """
        return {
            "rho_budget": self._budget,
            "history": [[label, rho] for label, rho in self._history],
        }

    @classmethod
    def from_dict(cls, d):
        """Rebuild an accountant from :meth:`to_dict` output, re-validating it.

        A stored state is untrusted input: a budget file edited by hand (or
        corrupted) must not unlock extra privacy spending.

        Parameters
        ----------
        d : dict
            Mapping with keys ``"rho_budget"`` and ``"history"`` (a sequence
            of ``(label, rho)`` pairs).

        Returns
        -------
        ZCDPAccountant

        Raises
        ------
        ValueError
            If the budget or any entry is invalid (not finite, negative,
            malformed) or the history sums to more than the budget.

        Examples
        --------
        >>> acc = ZCDPAccountant(1.0).spend(0.5, "a")
        >>> ZCDPAccountant.from_dict(acc.to_dict()).rho_spent
        0.5
        """
        if not isinstance(d, dict) or "rho_budget" not in d or "history" not in d:
            raise ValueError("state must be a dict with keys 'rho_budget' and 'history'")
        acc = cls(d["rho_budget"])
        history = d["history"]
        if isinstance(history, (str, bytes)):
            raise ValueError("history must be a sequence of (label, rho) pairs")
        entries = []
        for i, entry in enumerate(history):
            try:
                label, rho = entry
            except (TypeError, ValueError):
                raise ValueError(
                    f"history[{i}] must be a (label, rho) pair, got {entry!r}"
                ) from None
            if not isinstance(label, str):
                raise ValueError(f"history[{i}] label must be a str, got {label!r}")
            entries.append((label, check_rho(rho, name=f"history[{i}] rho")))
        total = math.fsum(rho for _, rho in entries)
        if total > acc._budget:
            raise ValueError(
                f"history sums to rho={total!r}, more than rho_budget={acc._budget!r}"
            )
        for label, rho in entries:
            acc.spend(rho, label)
        return acc

    def view(self):
        """A read-only view of this accountant: its figures follow it, but it cannot spend.

        Examples
        --------
        >>> acc = ZCDPAccountant(1.0)
        >>> view = acc.view()
        >>> acc.spend(0.25, "release")
        ZCDPAccountant(rho_budget=1.0, rho_spent=0.25)
        >>> view.rho_spent, view.rho_remaining
        (0.25, 0.75)
        """
        return AccountantView(self)

    def __repr__(self):
        return f"{type(self).__name__}(rho_budget={self._budget!r}, rho_spent={self._spent!r})"


class AccountantView:
    """Read-only figures of a :class:`ZCDPAccountant` (what a learner shows of its budget).

    It holds numbers only (no records), so keeping it (a lineage report of clones does) keeps nothing
    private alive.
    """

    __slots__ = ("_accountant",)

    def __init__(self, accountant):
        self._accountant = accountant

    @property
    def rho_budget(self):
        return self._accountant.rho_budget

    @property
    def rho_spent(self):
        return self._accountant.rho_spent

    @property
    def rho_remaining(self):
        return self._accountant.rho_remaining

    @property
    def history(self):
        return self._accountant.history

    def epsilon_spent(self, delta, method="gaussian"):
        """ε of the ρ spent so far at ``delta`` (see :meth:`ZCDPAccountant.epsilon_spent`)."""
        return self._accountant.epsilon_spent(delta, method)

    def __repr__(self):
        return f"AccountantView({self._accountant!r})"
