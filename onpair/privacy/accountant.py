"""A zero-concentrated DP budget accountant: the one record of what a model (or several) released.

zCDP composes additively (Bun & Steinke 2016, Lemma 2.3), also under adaptive composition, so the
accountant keeps an exact running sum of the ρ of every release and refuses any spend that would take it
past the budget. What it is charged is a typed event (:mod:`onpair.privacy.events`): a Gaussian release,
a continual-release mechanism, a ρ-zCDP bound, or an (ε, δ) release, which is kept beside the ρ sum and
composed with it by the basic rule (:func:`onpair.privacy.events.epsilon_of`). Conversion to (ε, δ)
happens once, at the end, through :func:`onpair.privacy.conversions.eps_from_rho`.

**Shared accountants.** One accountant may be passed to several models (``accountant=`` of every
learner, estimator and scaler; diffprivlib's ``BudgetAccountant`` is the model): a pipeline, a grid
search or an ensemble then holds one budget. Each model still keeps its own record and (online) its own
budget; the shared one is charged every event too, and a spend that either would refuse is refused
before anything changes. ``copy.copy``, ``copy.deepcopy`` and so scikit-learn's and river's ``clone()``
return the accountant itself (sharing is the point); pickling is refused, since a pickled copy (e.g. a
grid search with ``n_jobs > 1``) would split the budget without anyone noticing.

**Seeds under a shared accountant.** Two fits with the same seed draw the same noise, which cancels in the
difference of their releases: on neighbouring data sets that difference is a record, exactly. Charged to
one accountant, they would be counted as independent releases while revealing that record, so no two
models charging one accountant draw the same noise: each takes a **noise key** from it
(:meth:`ZCDPAccountant.noise_seed`, a counter) and draws from its seed's sequence extended by that key.
Seeds stay reproducible: the same script (the same seeds, the same order of models on the accountant)
draws the same noise, and a model without a shared accountant still repeats its seed's noise. An online
learner or river model takes its key when it is built (a river ``clone()`` is a new model: a new key), an
offline estimator or scaler at each fit, once the parameters and the data are checked. A model built or a
fit refused after it took its key leaves that key unused: harmless for privacy (no key is handed out twice,
and an unused one released nothing), and the same script still skips the same keys.
"""

import copy
import math

import numpy as np

from .checks import check_delta, check_epsilon, check_rho
from .conversions import METHODS, eps_from_rho, rho_from_dp
from .events import ApproxDPRelease, Composed, NonPrivate, PrivacyEvent, ZCDPRelease, epsilon_of, leaves
from .exceptions import PrivacyBudgetExceeded
from .reports import accountant_report

__all__ = ["ZCDPAccountant", "AccountantView", "charge", "refusal", "check_accountant"]

#: The spawn-key word that marks a sequence keyed by a shared accountant (:meth:`ZCDPAccountant.noise_seed`),
#: followed by the key: far above any child a fit or learner spawns itself (at most a few), so a keyed root
#: is never one of an unkeyed root's own streams.
NOISE_SPAWN_KEY = 0xACC0_0000
#: The most noise keys one accountant hands out: a spawn-key word of 2**32 or more is split by numpy into 32-bit
#: words, so key 2**32 would give the state of another model's child (independent review of issue 31).
MAX_NOISE_KEYS = 2**32 - 1


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


def _as_event(event, label):
    """A typed event, or a float ρ (the users' form: a :class:`ZCDPRelease` labelled ``label``)."""
    if isinstance(event, PrivacyEvent):
        if label is not None:
            raise TypeError("label is for a float spend; an event carries its own (its what and round)")
        return event
    return ZCDPRelease(check_rho(event), "" if label is None else str(label))


class ZCDPAccountant:
    """Track the privacy events of one or several models against a fixed budget.

    Parameters
    ----------
    rho_budget : float
        Total zCDP budget, finite and > 0.  Typically ``rho_from_dp(epsilon, delta)``;
        :meth:`from_dp` also keeps (ε, δ), which (ε, δ) events need.
    owner : str, optional
        Set by a model for its **own** accountant (its own budget, part of its state): that one is copied
        and pickled with the model, like the rest of its state. Without it the accountant is one to share
        (``accountant=``): copies are the accountant itself, and pickling is refused.

    Notes
    -----
    * The running total is the correctly rounded sum of the whole history
      (equal to ``math.fsum`` of the accepted spends, kept incrementally
      with Shewchuk partials), so long histories do not drift.
    * A zCDP spend is accepted iff ``math.fsum(accepted + [rho]) <= rho_budget``,
      compared exactly, with no tolerance.  Callers plan shares whose
      ``math.fsum`` is <= the budget (e.g. give the last share
      ``rho_remaining``); a plan that overshoots by one ulp is refused.
    * An (ε, δ) event (:class:`onpair.privacy.events.ApproxDPRelease`) needs an (ε, δ) budget
      (:meth:`from_dp`): with it in the history, a spend is also refused when
      :func:`onpair.privacy.events.epsilon_of` of the whole history at the budget's δ would exceed its ε.
      A :class:`onpair.privacy.events.NonPrivate` event is always refused (ε = ∞).
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
    >>> from onpair.privacy.events import GaussianRelease
    >>> acc.spend(GaussianRelease(sensitivity=1.0, sigma=4.0, round=7)).history[-1]
    ('release at round 7', 0.03125)
    """

    def __init__(self, rho_budget, *, owner=None):
        self._budget = check_rho(rho_budget, name="rho_budget", allow_zero=False)
        if owner is not None and not isinstance(owner, str):
            raise TypeError(f"owner must be None or a str, got {owner!r} ({type(owner).__name__})")
        self._owner = owner
        self._target = None  # (epsilon, delta, method) of from_dp
        self._events = []
        self._history = []
        self._approx = []
        self._partials = []
        self._spent = 0.0
        self._noise_keys = 0  # noise keys handed out (noise_seed)

    @classmethod
    def from_dp(cls, epsilon, delta, method="gaussian"):
        """An accountant for an (ε, δ)-DP budget: ρ budget ``rho_from_dp(epsilon, delta, method)``, and
        (ε, δ) kept for (ε, δ) events.

        Examples
        --------
        >>> acc = ZCDPAccountant.from_dp(1.0, 1e-5)
        >>> round(acc.rho_budget, 6), acc.epsilon_budget, acc.delta_budget
        (0.035926, 1.0, 1e-05)
        """
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        acc = cls(rho_from_dp(epsilon, delta, method=method))
        acc._target = (epsilon, delta, method)
        return acc

    # ------------------------------------------------------------------
    # spending
    # ------------------------------------------------------------------

    def _total_with(self, rho):
        return math.fsum(self._partials + [rho])

    def _refusal(self, event):
        """Why ``event`` cannot be charged now (a message), or None; a ValueError for an (ε, δ) event
        without an (ε, δ) budget."""
        parts = list(leaves([event]))
        if any(isinstance(e, NonPrivate) for e in parts):
            return f"{event.label or type(event).__name__!r} is not private (ε = ∞): no budget covers it"
        rho = math.fsum(e.rho for e in parts if e.rho is not None)
        total = self._total_with(rho)
        if total > self._budget:
            return (f"spend {event.label!r} of rho={rho!r} refused: rho_spent={self._spent!r}, "
                    f"rho_remaining={self.rho_remaining!r} of rho_budget={self._budget!r}" + self._advice(rho))
        if self._approx or any(isinstance(e, ApproxDPRelease) for e in parts):
            if self._target is None:
                raise ValueError(f"{event.label!r} is an (ε, δ) release: this accountant has a ρ budget only; "
                                 "build it with ZCDPAccountant.from_dp(epsilon, delta)")
            epsilon, delta, method = self._target
            spent = epsilon_of(self._events + parts, delta, method)
            if spent > epsilon:
                return (f"spend {event.label!r} refused: the history would be ({spent!r}, {delta!r})-DP, more than "
                        f"the budget's epsilon={epsilon!r}")
        return None

    #: The numbers of fits a refusal gives the per-fit share for.
    ADVICE_FITS = (2, 4, 8, 16)

    def _advice(self, rho):
        """What a refusal advises: how many times the budget pays for ``rho``, and the per-fit share of it
        for n fits (ρ divides between fits, ε does not), as the ε to pass at the budget's δ when it has one."""
        times = math.floor(self._budget / rho) if rho > 0 else None
        pays = "" if times is None else ("; it asks more than the whole budget" if times == 0 else
                                         f"; the whole budget pays for it {times} times")
        if self._target is None:
            return (f"{pays}. To share it between n fits, give each rho_budget/n (ρ adds up, ε does not): "
                    "epsilon_per_fit(n, delta) is the ε to pass (docs/guide.md, 'Splitting a budget')")
        remains = self._rounded_down(eps_from_rho(self.rho_remaining, self._target[1], self._target[2]))
        shares = ", ".join(f"{self.epsilon_per_fit(n):g} for n={n}" for n in self.ADVICE_FITS)
        return (f"{pays}, and what remains one release of epsilon <= {remains:g}. To share the budget between n "
                f"fits, give each rho_budget/n (ρ adds up, ε does not): at delta={self._target[1]!r}, "
                f"epsilon={shares} (epsilon_per_fit(n); docs/guide.md, 'Splitting a budget')")

    @staticmethod
    def _rounded_down(epsilon, digits=4):
        """``epsilon`` rounded down to ``digits`` significant digits (0 stays 0)."""
        if epsilon <= 0:
            return 0.0
        scale = 10.0 ** (digits - 1 - math.floor(math.log10(epsilon)))
        return math.floor(epsilon * scale) / scale

    def epsilon_per_fit(self, fits, delta=None, method=None):
        """The ε to give each of ``fits`` models (or fits) charged to this accountant so that all of them fit:
        ``rho_budget / fits`` (zCDP composes by adding ρ: the budget divides in ρ, not in ε) as ε at ``delta``,
        rounded down to 4 significant digits (so that ``fits`` fits at that ε, each charging
        ``rho_from_dp(ε, delta)``, sum to no more than the budget).

        Parameters
        ----------
        fits : int
            How many fits share the whole budget, >= 1 (a ``GridSearchCV``: candidates × folds, plus 1 for
            the refit).
        delta, method : float and str, optional
            The δ and the conversion of the models (the ε ↔ ρ conversion they charge with). Default: the
            budget's (:meth:`from_dp`); an accountant built from a ρ needs ``delta``.

        Returns
        -------
        float

        Examples
        --------
        >>> budget = ZCDPAccountant.from_dp(4.0, 1e-5)
        >>> budget.epsilon_per_fit(16)     # 3 candidates × 5 folds + the refit; not 4/16 = 0.25
        0.8503
        """
        if isinstance(fits, bool) or not isinstance(fits, int):
            raise TypeError(f"fits must be an int, got {fits!r} ({type(fits).__name__})")
        if fits < 1:
            raise ValueError(f"fits must be >= 1, got {fits!r}")
        if delta is None:
            if self._target is None:
                raise ValueError("delta is needed: this accountant has a ρ budget only (ZCDPAccountant.from_dp "
                                 "keeps a δ)")
            delta = self._target[1]
        if method is None:
            method = "gaussian" if self._target is None else self._target[2]
        return self._rounded_down(eps_from_rho(self._budget / fits, check_delta(delta), method))

    def can_spend(self, event):
        """Whether :meth:`spend` would accept ``event`` now (a dry run).

        Parameters
        ----------
        event : PrivacyEvent or float
            A typed event (:mod:`onpair.privacy.events`), or a zCDP cost ρ, finite and >= 0.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            If ``event`` is an invalid ρ (an invalid request is an error, not a "no").

        Examples
        --------
        >>> ZCDPAccountant(1.0).can_spend(1.0)
        True
        """
        return self._refusal(_as_event(event, None)) is None

    def spend(self, event, label=None):
        """Charge a release to the budget.

        Parameters
        ----------
        event : PrivacyEvent or float
            The release (:mod:`onpair.privacy.events`; a :class:`~onpair.privacy.events.Composed` is
            charged whole or not at all), or its zCDP cost ρ, finite and >= 0 (0 records a
            data-independent release): the form for a mechanism the events do not describe, recorded
            as a :class:`~onpair.privacy.events.ZCDPRelease`. The library itself always spends events.
        label : str, optional
            With a float ρ: free text stored in the history and used in error messages.

        Returns
        -------
        ZCDPAccountant
            ``self``, so that spends can be chained.

        Raises
        ------
        ValueError
            If ``event`` is an invalid ρ, or an (ε, δ) event meets an accountant without an (ε, δ)
            budget; nothing changes.
        TypeError
            If a ``label`` is given with an event.
        PrivacyBudgetExceeded
            If the total would exceed the budget; nothing changes.

        Examples
        --------
        >>> acc = ZCDPAccountant(0.5)
        >>> acc.spend(0.5).rho_remaining
        0.0
        """
        event = _as_event(event, label)
        refusal = self._refusal(event)
        if refusal is not None:
            raise PrivacyBudgetExceeded(refusal)
        # Commit only after every check passed.
        for part in leaves([event]):
            if part.rho is not None:
                self._partials = _grow_partials(self._partials, part.rho)
                self._history.append((part.label, part.rho))
                self._spent = math.fsum(self._partials)
            else:
                self._approx.append(part)
            self._events.append(part)
        return self

    def noise_seed(self, sequence):
        """The SeedSequence that a model charging this accountant draws from: ``sequence`` (the one its seed
        gives) keyed by this accountant's next noise key, which is then used up.

        Every learner, estimator, scaler and river model taking ``accountant=`` calls it (once per learner
        or river model, when it is built; once per fit of an estimator or scaler), so no two of them draw the
        same noise, even with the same seed, and the same script reproduces bit for bit (module docstring).

        Parameters
        ----------
        sequence : numpy.random.SeedSequence
            The model's root sequence from its seed (not changed).

        Returns
        -------
        numpy.random.SeedSequence
            ``sequence``'s entropy and pool size, its spawn key extended by
            ``(NOISE_SPAWN_KEY, key)``, no child spawned yet.

        Examples
        --------
        >>> import numpy as np
        >>> acc = ZCDPAccountant(1.0)
        >>> first, second = acc.noise_seed(np.random.SeedSequence(0)), acc.noise_seed(np.random.SeedSequence(0))
        >>> bool(first.generate_state(1)[0] != second.generate_state(1)[0]), acc.noise_keys
        (True, 2)
        """
        if not isinstance(sequence, np.random.SeedSequence):
            raise TypeError(f"sequence must be a numpy SeedSequence, got {sequence!r} ({type(sequence).__name__})")
        key = self._noise_keys
        if key >= MAX_NOISE_KEYS:  # numpy splits a larger spawn-key word into 32-bit words: keys would collide
            raise ValueError(f"this accountant has handed out {MAX_NOISE_KEYS:,} noise keys, the most it can without "
                             "two models sharing noise: use a new accountant")
        self._noise_keys += 1
        return np.random.SeedSequence(sequence.entropy, spawn_key=tuple(sequence.spawn_key) + (NOISE_SPAWN_KEY, key),
                                      pool_size=sequence.pool_size)

    # ------------------------------------------------------------------
    # read-only state
    # ------------------------------------------------------------------

    @property
    def noise_keys(self):
        """int: how many noise keys :meth:`noise_seed` has handed out (the next one's number)."""
        return self._noise_keys

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
        """list of (str, float): the accepted zCDP spends in order, as (label, ρ) (a copy)."""
        return list(self._history)

    @property
    def events(self):
        """tuple: every accepted event in order (compositions flattened)."""
        return tuple(self._events)

    @property
    def epsilon_budget(self):
        """float or None: ε of the (ε, δ) budget of :meth:`from_dp`."""
        return None if self._target is None else self._target[0]

    @property
    def delta_budget(self):
        """float or None: δ of the (ε, δ) budget of :meth:`from_dp`."""
        return None if self._target is None else self._target[1]

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
        if self._approx:
            return epsilon_of(self._events, delta, method)
        return eps_from_rho(self._spent, delta, method)

    def report(self, delta=None, method=None) -> dict:
        """What the models charged to this accountant spent together (:func:`onpair.privacy.reports.build_report`).

        ``delta`` and ``method`` default to the (ε, δ) budget's (:meth:`from_dp`), else 1e-5 and "gaussian".

        Examples
        --------
        >>> from onpair.privacy.events import GaussianRelease
        >>> acc = ZCDPAccountant.from_dp(2.0, 1e-5).spend(GaussianRelease(1.0, 4.0, 10))
        >>> r = acc.report()
        >>> r["rho_spent"], len(r["releases"]), r["epsilon_spent"] < 2.0
        (0.03125, 1, True)
        """
        return accountant_report(self, delta, method)

    # ------------------------------------------------------------------
    # persistence
    # ------------------------------------------------------------------

    def to_dict(self):
        """Plain JSON-able state: ``{"rho_budget": float, "history": [[label, rho], ...]}``, and
        ``"noise_keys"`` once :meth:`noise_seed` has handed one out (an accountant rebuilt by :meth:`from_dict`
        goes on with the next key: a model charged to it never repeats the noise of one charged before).

        Returns
        -------
        dict

        Examples
        --------
        >>> ZCDPAccountant(1.0).spend(0.5, "a").to_dict()
        {'rho_budget': 1.0, 'history': [['a', 0.5]]}
        """
        out = {
            "rho_budget": self._budget,
            "history": [[label, rho] for label, rho in self._history],
        }
        if self._target is not None:
            out["dp_budget"] = list(self._target)
        if self._approx:
            out["approx"] = [[e.label, e.epsilon, e.delta] for e in self._approx]
        if self._noise_keys:
            out["noise_keys"] = self._noise_keys
        return out

    @classmethod
    def from_dict(cls, d):
        """Rebuild an accountant from :meth:`to_dict` output, re-validating it.

        A stored state is untrusted input: a budget file edited by hand (or
        corrupted) must not unlock extra privacy spending.

        Parameters
        ----------
        d : dict
            Mapping with keys ``"rho_budget"`` and ``"history"`` (a sequence
            of ``(label, rho)`` pairs), and optionally ``"dp_budget"`` ([ε, δ,
            method] of :meth:`from_dp`), ``"approx"`` ((label, ε, δ) of
            the (ε, δ) events) and ``"noise_keys"`` (a non-negative int).

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
        if d.get("dp_budget") is not None:
            try:
                epsilon, delta, method = d["dp_budget"]
            except (TypeError, ValueError):
                raise ValueError(f"dp_budget must be [epsilon, delta, method], got {d['dp_budget']!r}") from None
            target = cls.from_dp(epsilon, delta, method)
            if target.rho_budget != acc._budget:
                raise ValueError(f"dp_budget {d['dp_budget']!r} does not give rho_budget={acc._budget!r}")
            acc = target
        for label, rho in entries:  # a stored history has labels and ρ only: bare zCDP events
            acc.spend(ZCDPRelease(rho, label))
        for i, entry in enumerate(d.get("approx", ())):
            try:
                label, epsilon, delta = entry
                event = ApproxDPRelease(epsilon=epsilon, delta=delta, what=label)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"approx[{i}] must be a (label, epsilon, delta) triple ({exc})") from None
            try:
                acc.spend(event)
            except PrivacyBudgetExceeded as exc:
                raise ValueError(f"approx[{i}]: {exc}") from None
        keys = d.get("noise_keys", 0)
        if isinstance(keys, bool) or not isinstance(keys, int) or not 0 <= keys <= MAX_NOISE_KEYS:
            raise ValueError(f"noise_keys must be an int in [0, {MAX_NOISE_KEYS}], got {keys!r}")
        acc._noise_keys = keys
        return acc

    # A shared accountant is one budget: copies (and so clone() in scikit-learn and river) are the accountant
    # itself; a pickled copy would be a second budget for the same records. A model's own accountant is
    # part of the model's state, copied and pickled with it (the model decides whether it may be copied).
    def __copy__(self):
        return self if self._owner is None else self._twin(copy.copy)

    def __deepcopy__(self, memo):
        return self if self._owner is None else self._twin(lambda value: copy.deepcopy(value, memo))

    def _twin(self, copier):
        twin = object.__new__(type(self))
        twin.__dict__.update({name: copier(value) for name, value in self.__dict__.items()})
        return twin

    def __reduce_ex__(self, protocol):
        if self._owner is None:
            raise TypeError(
                "a shared ZCDPAccountant cannot be pickled: a copy in another process (joblib, n_jobs > 1) would "
                "be a second budget for the same records. Share it within one process (n_jobs=1), or save its "
                "to_dict().")
        return super().__reduce_ex__(protocol)

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

    @property
    def events(self):
        return self._accountant.events

    def epsilon_spent(self, delta, method="gaussian"):
        """ε of the ρ spent so far at ``delta`` (see :meth:`ZCDPAccountant.epsilon_spent`)."""
        return self._accountant.epsilon_spent(delta, method)

    def __repr__(self):
        return f"AccountantView({self._accountant!r})"


def check_accountant(accountant, owner):
    """``accountant`` if it is None or a :class:`ZCDPAccountant`, else a TypeError naming ``owner``."""
    if accountant is not None and not isinstance(accountant, ZCDPAccountant):
        raise TypeError(f"{owner}: accountant must be None or a ZCDPAccountant (onpair.privacy), got {accountant!r} "
                        f"({type(accountant).__name__})")
    return accountant


def refusal(accountants, events):
    """The PrivacyBudgetExceeded that charging ``events`` to ``accountants`` (None entries skipped) would
    raise, or None: every accountant is asked about the whole composition."""
    whole = Composed(tuple(events))
    for accountant in accountants:
        if accountant is not None:
            why = accountant._refusal(whole)  # asks only: nothing changes
            if why is not None:
                return PrivacyBudgetExceeded(why)
    return None


def charge(accountants, events):
    """Charge ``events`` (one by one, so each keeps its label) to every accountant of ``accountants`` (None
    entries skipped): all or none. Every accountant is checked for the whole composition first, so a
    refusal (PrivacyBudgetExceeded, ValueError) changes nothing anywhere.

    Examples
    --------
    >>> from onpair.privacy.events import GaussianRelease
    >>> own, shared = ZCDPAccountant(1.0), ZCDPAccountant(0.1)
    >>> charge([own, shared], [GaussianRelease(1.0, 1.0, 1)])
    Traceback (most recent call last):
    ...
    onpair.privacy.exceptions.PrivacyBudgetExceeded: spend 'release at round 1' of rho=0.5 refused: rho_spent=0.0, rho_remaining=0.1 of rho_budget=0.1; it asks more than the whole budget. To share it between n fits, give each rho_budget/n (ρ adds up, ε does not): epsilon_per_fit(n, delta) is the ε to pass (docs/guide.md, 'Splitting a budget')
    >>> own.rho_spent
    0.0
    """
    events = list(events)
    exc = refusal(accountants, events)
    if exc is not None:
        raise exc
    for accountant in accountants:
        if accountant is not None:
            for event in events:
                accountant.spend(event)

