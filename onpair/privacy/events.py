"""The privacy language: frozen, typed release events (in the spirit of dp-accounting's ``DpEvent``).

Every learner, estimator and scaler of onpair says what it released by recording events into a
:class:`onpair.privacy.accountant.ZCDPAccountant`; one function
(:func:`onpair.privacy.reports.build_report`) turns events into every privacy report. An event holds
public quantities only (sensitivities, noise scales, parameters, stream positions), never data.

========================  ======================================  ====================================
event                     its cost                                 dp-accounting's twin
========================  ======================================  ====================================
:class:`GaussianRelease`  ρ = Δ²/(2σ²) (or the ρ share it was      ``GaussianDpEvent(σ/Δ)``
                          calibrated to: see ``rho``)
:class:`ContinualRelease` ρ = Δ²κ²/(2σ²): a linear Gaussian        ``GaussianDpEvent(σ/(Δκ))``
                          mechanism whose encoder column has
                          norm κ in units of σ
:class:`ZCDPRelease`      a ρ-zCDP bound of any mechanism          ``ZCDpEvent(ρ)``
:class:`ApproxDPRelease`  (ε, δ), proven under ``conditions``;     none (``UnsupportedDpEvent``)
                          no ρ
:class:`Composed`         Σ ρ if every part has one; else the      ``ComposedDpEvent``
                          rule of :func:`epsilon_of`
:class:`NonPrivate`       ε = ∞ (the non-private twin: exact       ``NonPrivateDpEvent``
                          outputs)
========================  ======================================  ====================================

The neighbouring relation is onpair's: one record replaced (the sensitivities Δ are proven for it in each
family's docstrings), so the twins use dp-accounting's add-or-remove accountants with sensitivity 1 and
noise multiplier σ/Δ: the same ratio, the same privacy curve.

As in dp-accounting, an event type is never removed and its meaning never changes: saved accountant
histories store an event's :attr:`~PrivacyEvent.label` (the strings the learners have always written,
e.g. ``"release at round 64"``), and a report's row (:meth:`~PrivacyEvent.row`) has the same keys for
every event of a type.

**The rule for ρ.** ``rho`` is a float for the zCDP events and None for the others;
a report shows ``rho_*`` keys only when every event it is built from has a ρ (never NaN, never None):
:func:`rho_of`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from .checks import check_delta, check_rho, check_sensitivity
from .conversions import eps_from_rho

__all__ = ["PrivacyEvent", "GaussianRelease", "ContinualRelease", "ZCDPRelease", "ApproxDPRelease", "Composed",
           "NonPrivate", "rho_of", "epsilon_of", "leaves", "RHO_ROUNDING"]

#: A ρ given with an event (the share a σ was calibrated to) may lie this far (relatively) below the
#: event's own Δ²κ²/(2σ²): the rounding of two root finders, never more. A larger ρ is always accepted
#: (it overstates the cost).
RHO_ROUNDING = 1e-9


def _plain(value):
    """An event's field as a report shows it: tuples of pairs become dicts, numbers stay numbers."""
    if isinstance(value, tuple) and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return {k: v for k, v in value}
    return value


class PrivacyEvent:
    """What one release (or a group of them) costs. Subclasses are frozen dataclasses."""

    #: The name a report row gives the event type.
    kind = "event"
    #: Every event has ``rho``: its zCDP cost (a float), or None when it has none (a field or a property).

    @property
    def gaussian(self) -> bool:
        """Whether every ρ of the event comes from a Gaussian mechanism (the exact conversion applies)."""
        return False

    @property
    def label(self) -> str:
        """The text an accountant's history stores for the event (saved in snapshots)."""
        return getattr(self, "what", "")

    def row(self):
        """The event's entry of a report's ``releases`` (a dict), or None for an event that releases
        nothing noisy (:class:`NonPrivate`)."""
        out = {"event": self.kind, "what": getattr(self, "what", "")}
        for name in self._ROW_FIELDS:
            value = getattr(self, name)
            if value is not None or name in self._ROW_ALWAYS:
                out[name] = _plain(value)
        return out

    _ROW_FIELDS = ()
    _ROW_ALWAYS = ()

    def to_dp_event(self):  # pragma: no cover - every subclass defines it
        """dp-accounting's event for the same mechanism (imports dp_accounting: tests only)."""
        raise NotImplementedError


def _check_round(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        raise TypeError(f"round must be an integer or None, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < 0:
        raise ValueError(f"round must be >= 0, got {value!r}")
    return value


def _check_what(value):
    if not isinstance(value, str):
        raise TypeError(f"what must be a str, got {value!r} ({type(value).__name__})")
    return value


def _calibrated_rho(event, exact):
    """The event's ρ: the given share (checked against the exact cost) or the exact cost."""
    given = event.rho
    if given is None:
        return exact
    given = check_rho(given, name="rho")
    if given < exact * (1.0 - RHO_ROUNDING):
        raise ValueError(f"rho = {given!r} is below the cost of this release, {exact!r} (sensitivity and sigma give "
                         "it): an event may overstate its cost, never understate it")
    return given


@dataclass(frozen=True)
class GaussianRelease(PrivacyEvent):
    """One release of a quantity of ℓ2 sensitivity Δ plus N(0, σ²) noise per coordinate.

    Parameters
    ----------
    sensitivity : float
        Δ ≥ 0 (for one record replaced).
    sigma : float
        σ > 0 (σ = 0 only with Δ = 0: a data-independent release, ρ = 0).
    round : int, optional
        The stream position (online learners) or the number of records (an offline fit) it was made at.
    what : str
        What was released (public text).
    rho : float, optional
        The ρ share σ was calibrated to (σ = Δ/√(2ρ) up to the root finders' rounding); by default the
        exact Δ²/(2σ²). It may overstate the cost (a σ with a safety margin), never understate it by
        more than :data:`RHO_ROUNDING`.

    Examples
    --------
    >>> GaussianRelease(sensitivity=2.0, sigma=4.0, round=64).rho
    0.125
    >>> GaussianRelease(sensitivity=2.0, sigma=4.0, round=64).label
    'release at round 64'
    """

    sensitivity: float
    sigma: float
    round: int | None = None
    what: str = "model"
    rho: float | None = None

    kind = "gaussian"
    _ROW_FIELDS = ("round", "sensitivity", "sigma", "rho")
    _ROW_ALWAYS = ("round",)

    def __post_init__(self):
        sensitivity = check_sensitivity(self.sensitivity)
        sigma = check_sensitivity(self.sigma, name="sigma")
        if sigma == 0.0 and sensitivity > 0.0:
            raise ValueError(f"sigma must be > 0 for sensitivity {sensitivity!r} (sigma = 0 is no privacy)")
        object.__setattr__(self, "sensitivity", sensitivity)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "round", _check_round(self.round))
        _check_what(self.what)
        exact = 0.0 if sensitivity == 0.0 else 0.5 * (sensitivity / sigma) ** 2
        object.__setattr__(self, "rho", _calibrated_rho(self, exact))

    @property
    def gaussian(self) -> bool:
        return True

    @property
    def label(self) -> str:
        return f"release at round {self.round}" if self.round is not None else self.what

    def to_dp_event(self):
        from dp_accounting import dp_event

        if self.sensitivity == 0.0:
            return dp_event.NoOpDpEvent()
        return dp_event.GaussianDpEvent(noise_multiplier=self.sigma / self.sensitivity)


@dataclass(frozen=True)
class ContinualRelease(PrivacyEvent):
    """A continual-release mechanism over a whole stream (:mod:`onpair.privacy.continual`): every
    prefix sum it will ever release, as one linear Gaussian mechanism.

    Its releases are E·V + noise with V the stream's inputs (‖v_t‖ ≤ Δ) and E the encoder; written in
    units of a reference noise scale σ, a record's column of E has squared norm at most κ² (the tree's
    levels, the factorisation's κ², one epoch's tree for doubling epochs). So it is exactly a Gaussian
    mechanism of noise multiplier σ/(Δκ): ρ = Δ²κ²/(2σ²).

    ``nodes_released`` (noisy outputs so far) and ``round`` (the stream position reached) are progress:
    they change nothing in the cost, committed for the whole stream with the first record.

    Examples
    --------
    >>> event = ContinualRelease(mechanism="banded_toeplitz", sensitivity=2.0, sigma=4.0, kappa2=2.0)
    >>> event.rho, event.label
    (0.25, 'continual release')
    """

    mechanism: str
    sensitivity: float
    sigma: float
    kappa2: float
    what: str = "continual release"
    horizon: int | None = None
    round: int | None = None
    nodes_released: int | None = None
    rho: float | None = None

    kind = "continual"
    _ROW_FIELDS = ("round", "sensitivity", "sigma", "rho", "mechanism", "kappa2", "horizon", "nodes_released")
    _ROW_ALWAYS = ("round", "horizon")

    def __post_init__(self):
        _check_what(self.mechanism)
        _check_what(self.what)
        sensitivity = check_sensitivity(self.sensitivity)
        sigma = check_sensitivity(self.sigma, name="sigma")
        kappa2 = check_sensitivity(self.kappa2, name="kappa2")
        if sigma == 0.0 and sensitivity * kappa2 > 0.0:
            raise ValueError("sigma must be > 0 (sigma = 0 is no privacy)")
        for name, value in (("sensitivity", sensitivity), ("sigma", sigma), ("kappa2", kappa2),
                            ("horizon", _check_round(self.horizon)), ("round", _check_round(self.round)),
                            ("nodes_released", _check_round(self.nodes_released))):
            object.__setattr__(self, name, value)
        exact = 0.0 if sensitivity * kappa2 == 0.0 else 0.5 * (sensitivity / sigma) ** 2 * kappa2
        object.__setattr__(self, "rho", _calibrated_rho(self, exact))

    @classmethod
    def of(cls, mechanism, what="continual release", rho=None, n_seen=None):
        """The event of a :class:`onpair.privacy.continual.PrefixSumMechanism` (from its public
        ``describe()``): κ² and σ as described, or, for a mechanism whose levels have different σ_h (the
        unbounded tree), σ of its first level and κ² = Σ_h (σ_0/σ_h)² (a record is in one node per level);
        with a final release of the total at the horizon (``final_sigma``, the BLT's ``final_share``), κ² plus
        (σ/σ_f)², that release's row.
        ``rho`` (default: the mechanism's ``rho_spent_bound``) is the ρ it is charged."""
        description = mechanism.describe()
        sensitivity = float(description["sensitivity"])
        bound = float(description["rho_spent_bound"])
        sigma, kappa2 = description.get("sigma"), description.get("kappa2")
        if kappa2 is None and description.get("levels") is not None and sigma is not None:
            kappa2 = description["levels"]  # doubling epochs: one epoch's tree, a record in one node per level
        if sigma is None or kappa2 is None:  # levels with their own σ_h: κ² = Σ_h (σ_0/σ_h)²
            sigmas = [float(s) for s in description["sigmas"]]
            sigma = sigmas[0]
            kappa2 = math.fsum((sigma / s) ** 2 for s in sigmas)
        final_sigma = description.get("final_sigma")
        if final_sigma is not None:
            # a factorisation with one release of the total at its horizon (the BLT's final share): that release
            # is one more row of the encoder, (σ/σ_f)·1ᵀ in units of σ, in every record's column
            kappa2 = float(kappa2) + (float(sigma) / float(final_sigma)) ** 2
        n = mechanism.n_seen if n_seen is None else n_seen
        nodes = sum(int(r["nodes_released"]) for r in mechanism.privacy_rows())
        return cls(mechanism=str(description["kind"]), sensitivity=sensitivity, sigma=float(sigma),
                   kappa2=float(kappa2), what=what, horizon=description.get("horizon"), round=n,
                   nodes_released=nodes, rho=bound if rho is None else rho)

    def at(self, round, nodes_released):
        """The same event with its progress fields brought up to date (the cost is unchanged)."""
        return replace(self, round=round, nodes_released=nodes_released, rho=self.rho)

    @property
    def gaussian(self) -> bool:
        return True

    @property
    def label(self) -> str:
        return self.what

    def to_dp_event(self):
        from dp_accounting import dp_event

        if self.sensitivity * self.kappa2 == 0.0:
            return dp_event.NoOpDpEvent()
        return dp_event.GaussianDpEvent(noise_multiplier=self.sigma / (self.sensitivity * math.sqrt(self.kappa2)))


@dataclass(frozen=True)
class ZCDPRelease(PrivacyEvent):
    """A release known only by its ρ-zCDP bound (what ``ZCDPAccountant.spend(rho, label)`` records).

    Examples
    --------
    >>> ZCDPRelease(0.5, "a").rho
    0.5
    """

    rho: float
    what: str = ""

    kind = "zcdp"
    _ROW_FIELDS = ("rho",)

    def __post_init__(self):
        object.__setattr__(self, "rho", check_rho(self.rho))
        _check_what(self.what)

    def to_dp_event(self):
        from dp_accounting import dp_event

        return dp_event.ZCDpEvent(rho=self.rho)


@dataclass(frozen=True)
class ApproxDPRelease(PrivacyEvent):
    """A release proven (ε, δ)-DP by an argument that is not a zCDP one (objective perturbation, a paper's
    high-probability sensitivity), under public ``conditions`` (name → value pairs).

    It has no ρ: reports built with it have no ``rho_*`` keys, and it composes with zCDP events by the
    basic rule of :func:`epsilon_of`.

    Examples
    --------
    >>> event = ApproxDPRelease(epsilon=1.0, delta=1e-6, what="b", conditions=(("lam", 0.5),))
    >>> event.rho is None, event.row()["conditions"]
    (True, {'lam': 0.5})
    """

    epsilon: float
    delta: float
    what: str = "release"
    round: int | None = None
    sensitivity: float | None = None
    sigma: float | None = None
    conditions: tuple = field(default=())

    kind = "approximate_dp"
    _ROW_FIELDS = ("round", "sensitivity", "sigma", "epsilon", "delta", "conditions")
    _ROW_ALWAYS = ("round",)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_sensitivity(self.epsilon, name="epsilon"))
        object.__setattr__(self, "delta", 0.0 if self.delta == 0 and not isinstance(self.delta, bool)
                           else check_delta(self.delta))
        _check_what(self.what)
        object.__setattr__(self, "round", _check_round(self.round))
        for name in ("sensitivity", "sigma"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_sensitivity(getattr(self, name), name=name))
        conditions = self.conditions
        if isinstance(conditions, dict):
            conditions = tuple(conditions.items())
        if not isinstance(conditions, tuple) or not all(
                isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str) for c in conditions):
            raise TypeError(f"conditions must be (name, value) pairs, got {self.conditions!r}")
        object.__setattr__(self, "conditions", conditions)

    @property
    def rho(self):
        return None

    def to_dp_event(self):
        from dp_accounting import dp_event

        return dp_event.UnsupportedDpEvent()


@dataclass(frozen=True)
class Composed(PrivacyEvent):
    """Several events on the same records (sequential, adaptive composition).

    Examples
    --------
    >>> Composed((GaussianRelease(1.0, 2.0, 1), GaussianRelease(1.0, 2.0, 2))).rho
    0.25
    """

    events: tuple
    what: str = "composition"

    kind = "composed"

    def __post_init__(self):
        events = tuple(self.events)
        for event in events:
            if not isinstance(event, PrivacyEvent):
                raise TypeError(f"Composed takes privacy events, got {event!r} ({type(event).__name__})")
        object.__setattr__(self, "events", events)
        _check_what(self.what)

    @property
    def rho(self):
        return rho_of(self.events)

    @property
    def label(self) -> str:
        labels = [e.label for e in leaves(self.events)]
        return ", ".join(labels) if len(labels) <= 3 else f"{labels[0]}, …, {labels[-1]} ({len(labels)} events)"

    @property
    def gaussian(self) -> bool:
        return all(e.gaussian for e in leaves(self.events) if e.rho is not None)

    def row(self):
        raise TypeError("a composition has one row per part: use leaves()")

    def to_dp_event(self):
        from dp_accounting import dp_event

        return dp_event.ComposedDpEvent([e.to_dp_event() for e in self.events])


@dataclass(frozen=True)
class NonPrivate(PrivacyEvent):
    """The non-private twin's outputs: exact, no guarantee (ε = ∞). It releases nothing noisy, so it has
    no report row.

    Examples
    --------
    >>> NonPrivate().rho is None, NonPrivate().row() is None
    (True, True)
    """

    what: str = "exact outputs (not private)"

    kind = "non_private"

    def __post_init__(self):
        _check_what(self.what)

    @property
    def rho(self):
        return None

    def row(self):
        return None

    def to_dp_event(self):
        from dp_accounting import dp_event

        return dp_event.NonPrivateDpEvent()


def leaves(events):
    """The events with every :class:`Composed` flattened, in order."""
    for event in events:
        if isinstance(event, Composed):
            yield from leaves(event.events)
        else:
            yield event


def rho_of(events):
    """Σ ρ of ``events`` (correctly rounded) if every one has a ρ, else None: **the rule for ρ**."""
    values = [e.rho for e in leaves(events)]
    if any(v is None for v in values):
        return None
    return math.fsum(values)


def epsilon_of(events, delta, method="gaussian") -> float:
    """ε of the composition of ``events`` at ``delta``.

    The zCDP events add their ρ (composition); the (ε_i, δ_i) events add by basic composition: ε =
    eps_from_rho(Σρ, δ − Σδ_i, method) + Σε_i, the first term 0 when Σρ = 0 (then Σδ_i ≤ δ is needed). ∞
    with a :class:`NonPrivate` event, or when the approximate events use up δ and some ρ is left.
    ``method="gaussian"`` is exact when every ρ comes from Gaussian mechanisms (:attr:`gaussian`); use
    ``"tight"`` otherwise.

    Examples
    --------
    >>> round(epsilon_of([ZCDPRelease(0.1)], 1e-5, method="tight"), 4)
    1.9142
    >>> epsilon_of([ApproxDPRelease(0.5, 1e-6), ApproxDPRelease(0.25, 1e-6)], 1e-5)
    0.75
    """
    delta = check_delta(delta)
    parts = list(leaves(events))
    if any(isinstance(e, NonPrivate) for e in parts):
        return math.inf
    approx = [e for e in parts if isinstance(e, ApproxDPRelease)]
    rho = math.fsum(e.rho for e in parts if e.rho is not None)
    used = math.fsum(e.delta for e in approx)
    epsilon = math.fsum(e.epsilon for e in approx)
    if rho == 0.0:
        return epsilon if used <= delta else math.inf
    if used >= delta:
        return math.inf
    return float(eps_from_rho(rho, delta - used, method=method)) + epsilon
