"""One builder for every privacy report, and which of its fields are outside the guarantee.

Every ``privacy_report()`` (online learners, river models) and ``privacy_report_`` (offline estimators,
scalers, Dask fits) is built by :func:`build_report` from the typed events the model recorded
(:mod:`onpair.privacy.events`), so every report has the same keys, computed the same way:

* always: ``algorithm``, ``private``, ``mode``, ``accounting``, ``epsilon``, ``delta`` (the guarantee
  asked for: the parameters; ∞ and 0 for a learner without them, the non-private ``PairwiseGIGA``),
  ``epsilon_spent`` (at ``delta``: :func:`onpair.privacy.events.epsilon_of` of the events; 0 before the
  first release, ∞ for a non-private model), ``releases`` (one row per release event,
  :meth:`onpair.privacy.events.PrivacyEvent.row`: ``event``, ``what``, ``round``, ``sensitivity``,
  ``sigma``, and ``rho`` or ``epsilon``/``delta``, with the event's own public fields), ``n_seen``,
  ``status`` and ``curator_only``;
* ``rho_budget``, ``rho_spent``, ``rho_remaining``: **the rule for ρ**, present exactly when the model
  accounts in zCDP, i.e. every event it records has a ρ (Gaussian and continual releases): floats, never
  NaN, never None. Absent for the non-private twins and for the (ε, δ) mechanisms (objective and
  approximate minima perturbation, Yang et al.'s SGD);
* ``record_level`` (models that learn a stream: ``privacy_report(passes=k, order=...)``), the cost of a
  record learned k times (:func:`onpair.privacy.replay.record_level`), with ``rho`` by the same rule. The
  headline fields answer the question asked: with k > 1, ``epsilon_spent`` and ``rho_spent`` are that
  cost (``rho_remaining`` the budget less it, at least 0), and ``epsilon_per_position`` and
  ``rho_per_position`` (:data:`PER_POSITION_KEYS`, present in every such report, ρ by the rule) keep the
  cost of a record at one stream position; with k = 1 both are the same figures
  (:func:`record_headline`);
* the class's own public fields (documented on each class), and curator-only ones.

A privacy report mixes two kinds of fields:

* **public** ones: functions of the public inputs (parameters, bounds, the stream length n, the class
  domain) and of what was released (the noisy statistics or models). Showing them costs nothing;
* **curator-only** ones: computed from the private records (or from the noise that was not released)
  without noise. They are for the data curator, and must be removed before a report is published.

Every report lists its curator-only fields by name under the key ``curator_only`` (which is itself public:
it depends on the class and its parameters only, never on the values). :func:`public_report` drops them.
:func:`mark_curator_only` builds that list, from :data:`CURATOR_ONLY_FIELDS` and the fields a report adds
for its own reasons (e.g. ``features`` when the feature order was read off the first record).

The totals over several models (a river lineage, :func:`onpair.river.pipeline_report`, a shared
accountant's :meth:`~onpair.privacy.accountant.ZCDPAccountant.report`) use the same figures
(:func:`spent`). The warning about δ ≥ 1/n is :func:`warn_large_delta`, written once.
"""

from __future__ import annotations

import math
import warnings

from .events import NonPrivate, epsilon_of, leaves, rho_of
from .exceptions import PrivacyWarning
from .replay import record_level

__all__ = ["CURATOR_ONLY_FIELDS", "COMMON_KEYS", "RHO_KEYS", "PER_POSITION_KEYS", "PrivacyReport", "build_report",
           "spent", "record_headline", "extend_report", "mark_curator_only", "public_report", "warn_large_delta",
           "warn_stream_delta", "accountant_report", "STREAM_DELTA"]

#: Fields that are never a function of the releases and the public inputs (name → why).
CURATOR_ONLY_FIELDS = {
    "n_clipped": "records outside the declared bounds, counted without noise",
    "solver_steps": "Newton steps of the objective-perturbation solver: depend on the records",
    "gradient_norm": "‖∇J‖ at the solver's point (for AMP before the output noise): depends on the records",
    "n_unknown_feature_records": "river records that carried undeclared keys, counted without noise",
    "unknown_features": "the undeclared keys themselves (a one-hot key names a record's value)",
    "n_missing_feature_records": "river records in which a declared key was missing, counted without noise",
}

#: Fields that are curator-only when a river model's feature order was fixed by its first record
#: (``features=None``): the order itself, and the release description whose dimension it sets.
ORDER_FIELDS = ("features", "schedule")

#: The keys of every report.
COMMON_KEYS = ("algorithm", "private", "mode", "accounting", "epsilon", "delta", "epsilon_spent", "releases",
               "n_seen", "status", "curator_only")
#: The zCDP keys, present exactly when every event of the report has a ρ.
RHO_KEYS = ("rho_budget", "rho_spent", "rho_remaining")
#: The cost of a record at one stream position, beside the headline of ``privacy_report(passes=k)``
#: (``rho_per_position`` by the rule for ρ).
PER_POSITION_KEYS = ("epsilon_per_position", "rho_per_position")


class PrivacyReport(dict):
    """A privacy report: a plain dict of its fields, with the typed events it was built from (``events``).

    Examples
    --------
    >>> from onpair.privacy.events import GaussianRelease
    >>> report = build_report("Example", [GaussianRelease(1.0, 4.0, 10)], epsilon=1.0, delta=1e-5,
    ...                       accounting="gaussian", mode="example", n_seen=10, status="released",
    ...                       rho_budget=0.05)
    >>> report["rho_spent"], report["releases"][0]["event"], type(report.events[0]).__name__
    (0.03125, 'gaussian', 'GaussianRelease')
    """

    events = ()

    def copy(self):
        """A shallow copy that keeps the events."""
        return _rebuild(dict(self), self.events)

    def __reduce__(self):
        return _rebuild, (dict(self), tuple(self.events))


def _rebuild(fields, events):
    report = PrivacyReport(fields)
    report.events = events
    return report


def spent(events, delta, accounting, private=True) -> dict:
    """The figures every total shows: ``rho_spent`` (by the rule for ρ: present iff every event has a ρ)
    and ``epsilon_spent`` at ``delta`` (0 with no event, ∞ for a non-private model).

    Examples
    --------
    >>> from onpair.privacy.events import ZCDPRelease
    >>> spent([ZCDPRelease(0.25), ZCDPRelease(0.25)], 1e-5, "tight")["rho_spent"]
    0.5
    """
    events = tuple(leaves(events))
    if not private or any(isinstance(e, NonPrivate) for e in events):
        return {"epsilon_spent": math.inf}
    rho = rho_of(events)
    out = {} if rho is None else {"rho_spent": rho}
    out["epsilon_spent"] = float(epsilon_of(events, delta, accounting)) if events else 0.0
    return out


def build_report(algorithm, events, *, epsilon, delta, accounting, mode, n_seen, status, private=True,
                 rho_budget=None, public=None, curator=None, extra_curator=(), passes=None, order="same",
                 mechanism=None) -> PrivacyReport:
    """Build a privacy report from a model's events (the only function that does: see the module).

    Parameters
    ----------
    algorithm : str
        The class's name.
    events : sequence of PrivacyEvent
        What the model recorded, in order (its own accountant's events, or a fit's).
    epsilon, delta, accounting, mode, n_seen, status :
        The common fields (``accounting`` is also the conversion of ``epsilon_spent``).
    private : bool
        False for a non-private twin (``epsilon_spent`` ∞, no ρ keys, no rows).
    rho_budget : float, optional
        The model's ρ budget when it accounts in zCDP (then every event must have a ρ); None otherwise.
    public, curator : dict, optional
        The class's own public fields, and its curator-only ones (listed under ``curator_only``).
    extra_curator : sequence of str
        Further field names to list under ``curator_only`` (e.g. :data:`ORDER_FIELDS`).
    passes, order, mechanism :
        For models that learn a stream: ``record_level`` for a record learned ``passes`` times
        (``mechanism``: the continual-release mechanism, for the exact same-order cost), which the headline
        fields then give (:func:`record_headline`), and :data:`PER_POSITION_KEYS`.
    """
    events = tuple(events)
    flat = tuple(leaves(events))
    figures = spent(flat, delta, accounting, private)
    report = PrivacyReport(algorithm=algorithm, private=bool(private), mode=mode, accounting=accounting,
                           epsilon=float(epsilon), delta=float(delta), epsilon_spent=figures["epsilon_spent"])
    if private and rho_budget is not None:
        if "rho_spent" not in figures:
            raise ValueError(f"{algorithm}: a report with a ρ budget needs a ρ for every event")
        rho_spent = figures["rho_spent"]
        report.update(rho_budget=float(rho_budget), rho_spent=rho_spent,
                      rho_remaining=max(0.0, float(rho_budget) - rho_spent))
    report["releases"] = [row for row in (e.row() for e in flat) if row is not None] if private else []
    report.update(n_seen=int(n_seen), status=status)
    if passes is not None:
        rho = figures.get("rho_spent") if private else None
        report["record_level"] = record_level(rho, delta, accounting, passes, order, mechanism, n_seen)
        report["epsilon_per_position"] = figures["epsilon_spent"]
        if "rho_spent" in report:
            report["rho_per_position"] = report["rho_spent"]
        record_headline(report)
    for fields in (public, curator):
        for key, value in (fields or {}).items():
            if key in report or key == "curator_only":
                raise ValueError(f"{algorithm}: the report field {key!r} is the builder's")
            report[key] = value
    report.events = events
    return mark_curator_only(report, tuple(curator or ()) + tuple(extra_curator))


def record_headline(report):
    """``report`` with its headline fields answering ``privacy_report(passes=k)``: for k > 1, ``epsilon_spent``
    and ``rho_spent`` (by the rule for ρ) are the cost of a record learned k times (``record_level``'s), and
    ``rho_remaining`` the budget less it (at least 0); for k = 1 the report is left as built (one position is
    the record's cost). Called again by a model that adds to ``record_level`` after the builder.

    Examples
    --------
    >>> from onpair.privacy.events import GaussianRelease
    >>> report = build_report("Example", [GaussianRelease(1.0, 4.0, 10)], epsilon=1.0, delta=1e-5,
    ...                       accounting="gaussian", mode="example", n_seen=10, status="released",
    ...                       rho_budget=0.05, passes=2, order="any")
    >>> report["rho_spent"], report["rho_per_position"], report["rho_remaining"]   # the group bound 2²ρ
    (0.125, 0.03125, 0.0)
    """
    level = report.get("record_level")
    if level is None or level["passes"] == 1:
        return report
    report["epsilon_spent"] = level["epsilon"]
    if "rho_spent" in report and "rho" in level:
        report["rho_spent"] = level["rho"]
        report["rho_remaining"] = max(0.0, report["rho_budget"] - level["rho"])
    return report


def extend_report(report, public=None, curator=None, extra_curator=()):
    """``report`` (a :class:`PrivacyReport`, copied) with a wrapper's or a fit's own fields added (the river
    wrappers' record counts, an offline fit's ``n_clipped``), by the builder's rules: no builder key is
    overwritten, and ``curator`` fields and ``extra_curator`` names are listed under ``curator_only``."""
    out = report.copy() if isinstance(report, PrivacyReport) else PrivacyReport(report)
    for fields in (public, curator):
        for key, value in (fields or {}).items():
            if key in COMMON_KEYS or key in RHO_KEYS or key in PER_POSITION_KEYS or key == "record_level":
                raise ValueError(f"{out.get('algorithm')}: the report field {key!r} is the builder's")
            out[key] = value
    return mark_curator_only(out, tuple(curator or ()) + tuple(extra_curator))


def accountant_report(accountant, delta=None, method=None) -> PrivacyReport:
    """The report of a (shared) accountant: what every model charged to it spent together."""
    events = accountant.events
    if delta is None:
        delta = accountant.delta_budget if accountant.delta_budget is not None else 1e-5
    if method is None:
        method = "gaussian" if all(e.gaussian for e in events if e.rho is not None) else "tight"
    epsilon = accountant.epsilon_budget
    return build_report(type(accountant).__name__, events, epsilon=math.inf if epsilon is None else epsilon,
                        delta=delta, accounting=method, mode="shared budget", n_seen=0,
                        status=f"{len(events)} events charged",
                        rho_budget=accountant.rho_budget if rho_of(events) is not None else None)


def warn_large_delta(owner, delta, n, what="n", stacklevel=3) -> None:
    """The PrivacyWarning for δ ≥ 1/n (``what``: "n", or "horizon" for a stream's length), written once.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_large_delta("Example", 0.01, 100)
    >>> str(caught[0].message)
    'delta = 0.01 ≥ 1/n = 0.01: a mechanism that publishes one random record in the clear satisfies such a δ. Prefer δ ≪ 1/n (Example).'
    """
    if n is not None and n > 0 and delta >= 1.0 / n:
        warnings.warn(f"delta = {delta:g} ≥ 1/{what} = {1.0 / n:g}: a mechanism that publishes one random record in "
                      f"the clear satisfies such a δ. Prefer δ ≪ 1/n ({owner}).", PrivacyWarning,
                      stacklevel=stacklevel + 1)


#: The largest δ a stream of unknown length is built with in silence: δ ≥ 1/n as soon as the stream holds
#: n ≥ 1/δ records, and river's own data sets hold 1,000 and more.
STREAM_DELTA = 1e-3


def warn_stream_delta(owner, delta, length, stacklevel=3) -> None:
    """The PrivacyWarning for a large δ on a stream: δ ≥ 1/``length`` when its public length (horizon, n) is
    known, else δ ≥ :data:`STREAM_DELTA` (any stream of 1/δ records or more has δ ≥ 1/n).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_stream_delta("Example", 0.01, None)
    >>> str(caught[0].message).split(":")[0]
    'delta = 0.01 ≥ 0.001 on a stream of unknown length'
    """
    if length is not None:
        warn_large_delta(owner, delta, length, what="horizon", stacklevel=stacklevel + 1)
    elif delta >= STREAM_DELTA:
        warnings.warn(f"delta = {delta:g} ≥ {STREAM_DELTA:g} on a stream of unknown length: δ ≥ 1/n once the stream "
                      f"holds n ≥ 1/δ = {1.0 / delta:,.0f} records, and a mechanism that publishes one random record "
                      "in the clear satisfies such a δ. Prefer δ ≪ 1/n for the longest stream expected (the default "
                      f"is 1e-5), or give the learner its public horizon ({owner}).", PrivacyWarning,
                      stacklevel=stacklevel + 1)


def mark_curator_only(report: dict, extra=()) -> dict:
    """Set ``report["curator_only"]``: the sorted names of its curator-only fields, and return the report.

    A field is listed if it is one of :data:`CURATOR_ONLY_FIELDS`, one of ``extra`` (the report's own
    reasons), or already listed (a report built on another one keeps that one's list). Only fields present
    in the report are listed, whatever their values.

    Examples
    --------
    >>> mark_curator_only({"epsilon_spent": 1.0, "n_clipped": 3})["curator_only"]
    ['n_clipped']
    """
    names = set(report.get("curator_only", ())) | set(CURATOR_ONLY_FIELDS) | set(extra)
    report["curator_only"] = sorted(name for name in names if name in report and name != "curator_only")
    return report


def public_report(report: dict) -> dict:
    """A copy of ``report`` without its curator-only fields (the part that may be published).

    Examples
    --------
    >>> public_report({"epsilon_spent": 1.0, "n_clipped": 3, "curator_only": ["n_clipped"]})
    {'epsilon_spent': 1.0, 'curator_only': ['n_clipped']}
    """
    hidden = set(report.get("curator_only", ()))
    return {key: value for key, value in report.items() if key not in hidden}
