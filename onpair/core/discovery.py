"""Range discovery for learners given a loose public box: the ``discover_bounds=`` parameter, a stream's
warm-up, and the finder's share of the budget.

Every mechanism calibrates its noise to the public box, so a box much wider than the data drowns the
signal. With ``discover_bounds=`` a learner spends a public share of its one budget on
:func:`onpair.privacy.ranges.find_bounds`, which finds privately, inside the declared box, the box that
holds the bulk of the data, and learns in that box with the rest of the budget. The zCDP costs add:
ρ_range + ρ_model ≤ ρ = ρ(ε, δ), so the (ε, δ) the user asked for covers both.

``discover_bounds`` (a public parameter) takes:

* ``False`` (default): no discovery; the declared box is the box;
* ``True``: a warm-up of m = min(max(records_needed(d, 0.2ρ), 500), 1,000) records (at least the fewest for
  which the finder runs all its levels at d features, :func:`onpair.privacy.ranges.records_needed`, and at
  least 500: on the synthetic streams of bench/ranges.py the fewest lost 0.04–0.05 AUC against 500 at
  d = 5, re-measured on 2026-11-28 after the discovery fix of issue 31), 20 % of ρ;
* an integer m ≥ 1: that warm-up length, 20 % of ρ;
* a dict: ``warmup`` (an integer or ``"auto"``), ``rho_share`` (in (0, 1), default 0.2) and any parameter
  of :func:`onpair.privacy.ranges.find_bounds` (``bins``, ``beta``, ``extend``, ``margin``,
  ``final_margin``, ``coverage``, ``certify``, ``levels``, ``span``).

A stream (:class:`RangeWarmup`, the state object of :class:`onpair.OnPairStats`): the first m records are
**held** inside the learner, unreleased, and nothing is spent on them; at the m-th record the finder runs
on them (its own random stream, spawned from the learner's seed, so the model's noise is the same with
or without discovery), and they and every later record are learned in the discovered box; a record
outside it is clipped to it (part of the mechanism, counted in the curator-only ``n_clipped``). A fit
(:class:`onpair.OffPairStats`) finds the box on its first m records, then releases all n in it.

Privacy. The warm-up length m, the share, the finder's parameters, the number of levels it runs
(:func:`onpair.privacy.ranges.levels_to_run`: a function of m, d and ρ_range) and so the split of the
budget are public. The finder is ρ_range-zCDP (its proof: :mod:`onpair.privacy.ranges`); the model,
calibrated to ρ_model = (ρ − ρ_spent_by_finder)·(1 − 10⁻¹²) (ρ whole when the finder runs no level), is
ρ_model-zCDP given the discovered box, which is a released (public) quantity: adaptive composition,
ρ_range + ρ_model ≤ ρ. The held records are as secret as the stream: a snapshot holds them, and a private
learner refuses copies.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ..privacy.events import GaussianRelease
from ..privacy.exceptions import NoiseDominatedWarning
from ..privacy.ranges import (DiscoveredBounds, find_bounds, finder_settings, levels_to_run, plan_cost,
                              planned_levels, records_needed, result_params)
from .bounds import FeatureBounds

#: The finder's default share of the budget (ρ_range = 0.2·ρ): measured on synthetic streams
#: (bench/ranges.py), where 20 % found boxes 50–3,600× narrower than the declared one at m = 500.
DEFAULT_SHARE = 0.2
#: ``discover_bounds=True`` holds at most this many records (at ε = 1 and 20 % of ρ: three levels up to d = 59,
#: two up to 89, one up to 718, none from 719 on).
MAX_AUTO_WARMUP = 1000
#: It holds at least this many (bench/ranges.py: at d = 5, m = 500 gave progressive AUC 0.814 / 0.806 with
#: the data centred / off-centre in a 1,000× box, the fewest records for three levels, 290, 0.766 / 0.762;
#: 5 seeds, re-measured on 2026-11-28 after the discovery fix of issue 31).
MIN_AUTO_WARMUP = 500
#: The keys a ``discover_bounds`` dict may hold besides the finder's parameters.
OWN_KEYS = ("warmup", "rho_share")
FINDER_KEYS = ("bins", "beta", "extend", "margin", "final_margin", "coverage", "certify", "levels", "span")
#: The model's ρ is (ρ − finder's ρ)·(1 − MODEL_MARGIN): the exact sum of the two spends stays ≤ ρ.
MODEL_MARGIN = 1e-12
#: The spawn key of the finder's random stream under a learner's SeedSequence (after the learner's own
#: streams, :data:`onpair.core.stream.RNG_NAMES`).
RANGE_SPAWN_KEY = 3


@dataclass(frozen=True)
class DiscoverySetting:
    """``discover_bounds`` resolved: the warm-up length (None: from d), the share of ρ, the finder's
    checked parameters. All public."""

    warmup: int | None
    share: float
    finder: dict

    def length(self, n_features: int, rho: float, limit: int | None = None) -> int:
        """m for d features and the budget ρ: the given warm-up, or min(max(records_needed(d, share·ρ), 500),
        1,000); at most ``limit`` (a horizon, or an offline fit's n)."""
        if self.warmup is not None:
            m = self.warmup
        else:
            m = min(max(records_needed(n_features, self.share * rho, self.finder["bins"], self.finder["beta"]),
                        MIN_AUTO_WARMUP), MAX_AUTO_WARMUP)
        return m if limit is None else min(m, limit)

    def levels(self, n_records: int, n_features: int, rho: float) -> int:
        """The number of levels the finder runs on m records (0: none, the declared box at cost 0)."""
        return levels_to_run(n_records, n_features, self.share * rho, self.finder)

    def describe(self) -> dict:
        """JSON-able: for a learner's settings and report."""
        finder = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.finder.items()}
        return {"warmup": "auto" if self.warmup is None else self.warmup, "rho_share": self.share, **finder}


def discovery_setting(value, owner: str = "the learner"):
    """The :class:`DiscoverySetting` of a ``discover_bounds`` parameter, or None for False (TypeError or
    ValueError naming ``discover_bounds`` and the bad entry).

    Examples
    --------
    >>> discovery_setting(False) is None, discovery_setting(True).warmup, discovery_setting(300).warmup
    (True, None, 300)
    >>> discovery_setting({"warmup": 400, "rho_share": 0.1, "bins": (16, 16)}).finder["bins"]
    (16, 16)
    """
    if value is None or (isinstance(value, (bool, np.bool_)) and not value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return DiscoverySetting(None, DEFAULT_SHARE, finder_settings())
    if isinstance(value, (int, np.integer)):
        return DiscoverySetting(_warmup(value), DEFAULT_SHARE, finder_settings())
    if not isinstance(value, dict):
        raise TypeError(f"discover_bounds of {owner} must be False, True, a warm-up length (int) or a dict of "
                        f"{', '.join(OWN_KEYS + FINDER_KEYS)}, got {value!r} ({type(value).__name__})")
    unknown = sorted(str(k) for k in value if k not in OWN_KEYS + FINDER_KEYS)
    if unknown:
        raise ValueError(f"discover_bounds has unknown keys {unknown}; it takes {', '.join(OWN_KEYS + FINDER_KEYS)}")
    warmup = value.get("warmup", "auto")
    if isinstance(warmup, str) and warmup == "auto":
        warmup = None
    else:
        warmup = _warmup(warmup)
    share = value.get("rho_share", DEFAULT_SHARE)
    if isinstance(share, (bool, np.bool_)) or not isinstance(share, numbers.Real):
        raise TypeError(f"discover_bounds['rho_share'] must be a number in (0, 1), got {share!r}")
    if not 0.0 < float(share) < 1.0:
        raise ValueError(f"discover_bounds['rho_share'] must lie in (0, 1), got {share!r}")
    try:
        finder = finder_settings(**{k: v for k, v in value.items() if k in FINDER_KEYS})
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"discover_bounds: {exc}") from None
    return DiscoverySetting(warmup, float(share), finder)


def _warmup(value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"discover_bounds' warm-up length must be a positive integer or 'auto', got {value!r}")
    if value < 1:
        raise ValueError(f"discover_bounds' warm-up length must be a positive integer, got {value!r}")
    return int(value)


def declared_box(bounds: FeatureBounds, owner: str) -> FeatureBounds:
    """The declared bounds if they are a box (the finder searches inside a box), else a ValueError."""
    if bounds.kind != "box":
        raise ValueError(f"discover_bounds needs a declared box bounds=(lower, upper) to search in; {owner} has "
                         f"{bounds!r}")
    return bounds


def model_rho(rho: float, found) -> float:
    """ρ_model: what the model may spend after the finder spent ``found.rho`` of ρ (all of ρ without a
    release)."""
    if found is None or found.rho <= 0.0:
        return rho
    return (rho - found.rho) * (1.0 - MODEL_MARGIN)


def warmup_shortfall(setting: DiscoverySetting, n_records: int, n_features: int, rho: float):
    """``None`` if the finder can run every level it is asked for on m records of d features, else
    ``(wanted, affordable, needed)``: the levels asked for (all of ``bins`` with ``levels="auto"``, or the
    fixed number), the most whose anchor thresholds fit the block (:func:`onpair.privacy.ranges.planned_levels`;
    0: none, the declared box is kept) and the records ``wanted`` levels need
    (:func:`onpair.privacy.ranges.records_needed`). Public: m, d, ρ and the setting are.

    Examples
    --------
    >>> from onpair.privacy import rho_from_dp
    >>> rho = rho_from_dp(1.0, 1e-5, method="gaussian")
    >>> warmup_shortfall(discovery_setting(True), 500, 9, rho) is None, warmup_shortfall(discovery_setting(True), 398, 30, rho)
    (True, (3, 1, 708))
    """
    finder, share_rho = setting.finder, setting.share * rho
    wanted = len(finder["bins"]) if finder["levels"] == "auto" else finder["levels"]
    affordable = planned_levels(n_records, n_features, share_rho, finder["bins"], finder["beta"])
    if affordable >= wanted:
        return None
    return wanted, affordable, records_needed(n_features, share_rho, finder["bins"], finder["beta"], n_levels=wanted)


def warn_short_warmup(setting: DiscoverySetting, n_records: int, n_features: int, rho: float, stacklevel: int = 2):
    """A :class:`~onpair.privacy.exceptions.NoiseDominatedWarning` with the numbers when the warm-up of m
    records cannot afford the finder's levels (:func:`warmup_shortfall`): records needed against records
    held, and the fix. Nothing is spent by it; the finder then runs the levels the public rule allows."""
    shortfall = warmup_shortfall(setting, n_records, n_features, rho)
    if shortfall is None:
        return
    wanted, affordable, needed = shortfall
    one = records_needed(n_features, setting.share * rho, setting.finder["bins"], setting.finder["beta"], n_levels=1)
    fixed = setting.finder["levels"] != "auto"
    if fixed:
        what = (f"its {wanted} fixed level{'s' if wanted > 1 else ''} spend the finder's share but their anchor "
                f"thresholds exceed what the block can hold, so the box found is likely the declared one")
    elif affordable == 0:
        what = ("no level can run: the declared box is kept (the finder's share of ρ is not spent, the model gets "
                "all of it)")
    else:
        what = f"only {affordable} of its {wanted} levels run{'s' if affordable == 1 else ''}: the box found is coarser"
    warnings.warn(
        f"discover_bounds: the range finder's warm-up holds m = {n_records} records of d = {n_features} features "
        f"at ρ_range = {setting.share * rho:.4g}; {what}. {wanted} level{'s' if wanted > 1 else ''} need m ≥ {needed} "
        f"records{f', one level m ≥ {one}' if wanted > 1 else ''}. Fix: a longer warm-up (discover_bounds={needed} or more, on a stream or a data set with that many "
        "records), tighter declared bounds (discover_bounds=False), a larger ε or rho_share.",
        NoiseDominatedWarning, stacklevel=stacklevel + 1)


def discover(setting: DiscoverySetting, X, declared: FeatureBounds, rho: float, rng) -> DiscoveredBounds:
    """The finder on the block ``X`` inside the declared box, with ``setting.share·ρ`` (a fit's step); a
    :class:`~onpair.privacy.exceptions.NoiseDominatedWarning` with the numbers first when the block is too short
    for the finder's levels (:func:`warn_short_warmup`)."""
    d = X.shape[1]
    warn_short_warmup(setting, X.shape[0], d, rho, stacklevel=3)
    lower = np.broadcast_to(declared.lower, (d,))
    upper = np.broadcast_to(declared.upper, (d,))
    return find_bounds(X, lower, upper, setting.share * rho, random_state=rng, **setting.finder)


def found_bounds(found: DiscoveredBounds) -> FeatureBounds:
    """The discovered box as the learners' bounds map."""
    return FeatureBounds(found.lower, found.upper)


def range_seed_sequence(seed_sequence: np.random.SeedSequence) -> np.random.SeedSequence:
    """The finder's stream: a child of the learner's SeedSequence that none of its own streams uses."""
    return np.random.SeedSequence(seed_sequence.entropy, spawn_key=tuple(seed_sequence.spawn_key) + (RANGE_SPAWN_KEY,),
                                  pool_size=seed_sequence.pool_size)


def range_events(found) -> list:
    """The finder's releases as typed events (:mod:`onpair.privacy.events`), one Gaussian release of the d
    histograms per level (sensitivity √(2d)), at the ρ it spent: what the learner's accountant is charged
    and its report lists."""
    if found is None:
        return []
    rows = found.describe()["releases"]
    return [GaussianRelease(sensitivity=r["sensitivity"], sigma=r["sigma"], rho=r["rho"],
                            what=f"range histogram, level {r['level']} ({r['bins']} bins)") for r in rows]


class RangeWarmup:
    """A stream's warm-up: the held records, the finder's random stream, the discovered box.

    Parameters
    ----------
    setting : DiscoverySetting
    declared : FeatureBounds
        The declared (loose, public) box.
    rho : float
        The learner's whole zCDP budget ρ.
    seed_sequence : SeedSequence
        The learner's; the finder's stream is its child :data:`RANGE_SPAWN_KEY`.
    horizon : int or None
        The learner's horizon: the warm-up is at most this long.
    """

    def __init__(self, setting: DiscoverySetting, declared: FeatureBounds, rho: float, seed_sequence, horizon=None):
        self.setting = setting
        self.declared = declared
        self.rho = rho
        self.horizon = horizon
        self.rng = np.random.Generator(np.random.PCG64(range_seed_sequence(seed_sequence)))
        self.records = None  # (m, d) float64 once the first record is held
        self.codes = None  # (m,) int64: the held records' class codes
        self.n_held = 0
        self.found = None  # DiscoveredBounds once discovered (None: no record, the declared box)
        self.done = False

    # -- the plan (public) ---------------------------------------------------------------------------
    def length(self, dim: int) -> int:
        """m, the warm-up length at d features."""
        return self.setting.length(dim, self.rho, self.horizon)

    def planned_model_rho(self, dim) -> float:
        """ρ of the model: after discovery, what the finder left; before, what it will leave at the planned m."""
        if self.done:
            return model_rho(self.rho, self.found)
        if dim is None or self.setting.levels(self.length(dim), dim, self.rho) > 0:
            return self.rho * (1.0 - self.setting.share) * (1.0 - MODEL_MARGIN)
        return self.rho

    def room(self, dim: int) -> int:
        """How many more records the warm-up holds."""
        return self.length(dim) - self.n_held

    # -- holding and discovering ---------------------------------------------------------------------
    def hold(self, X: np.ndarray, codes: np.ndarray) -> None:
        """Keep validated raw records (a copy) with their class codes; the caller checked the room."""
        if self.records is None:
            m = self.length(X.shape[1])
            self.records = np.empty((m, X.shape[1]))
            self.codes = np.empty(m, dtype=np.int64)
        k = X.shape[0]
        self.records[self.n_held:self.n_held + k] = X
        self.codes[self.n_held:self.n_held + k] = codes
        self.n_held += k

    def prepare(self, X: np.ndarray, codes: np.ndarray):
        """The discovery on the held records followed by ``X`` (nothing changes until :meth:`commit`):
        ``(records, codes, found, rng after it)``; ``found`` None when no record is held at all."""
        held = self.records[:self.n_held] if self.records is not None else np.empty((0, X.shape[1]))
        records = np.concatenate([held, X]) if X.shape[0] else held.copy()
        all_codes = np.concatenate([self.codes[:self.n_held] if self.codes is not None else
                                    np.empty(0, dtype=np.int64), codes])
        rng = copy.deepcopy(self.rng)
        found = discover(self.setting, records, self.declared, self.rho, rng) if records.shape[0] else None
        return records, all_codes, found, rng

    def commit(self, found, rng) -> None:
        """The discovery done: the box found, the held records released from the buffer."""
        self.found, self.rng, self.done = found, rng, True
        self.records = self.codes = None
        self.n_held = 0

    def bounds(self) -> FeatureBounds:
        """The box the model learns in: the discovered one (the declared one before, or without records)."""
        return self.declared if self.found is None else found_bounds(self.found)

    def detach(self) -> None:
        """Fresh OS entropy for the finder (a snapshot of an unseeded learner was written)."""
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence()))

    # -- report --------------------------------------------------------------------------------------
    def describe(self, dim) -> dict:
        """The public description of the discovery for a privacy report."""
        m = None if dim is None else self.length(dim)
        out = {"setting": self.setting.describe(), "warmup": m, "done": self.done,
               "rho_range_budget": self.setting.share * self.rho, "rho_spent": 0.0 if self.found is None else
               float(self.found.rho), "lower": None, "upper": None}
        if self.found is not None:
            out.update(lower=self.found.lower.tolist(), upper=self.found.upper.tolist(),
                       levels_run=len(self.found.sigmas), n_records=self.found.n_records,
                       fallback_features=np.flatnonzero(self.found.fallback).tolist())
        return out

    # -- snapshots -----------------------------------------------------------------------------------
    def export(self, state: dict, arrays: dict) -> None:
        found = self.found
        state["range_discovery"] = {
            "done": self.done, "n_held": self.n_held, "rng": self.rng.bit_generator.state,
            "found": None if found is None else {"rho": float(found.rho), "sigmas": [float(s) for s in found.sigmas],
                                                 "n_records": int(found.n_records)}}
        if self.n_held:
            arrays["range_discovery.records"] = self.records[:self.n_held].copy()
            arrays["range_discovery.codes"] = self.codes[:self.n_held].copy()
        if found is not None:
            arrays["range_discovery.lower"] = found.lower.copy()
            arrays["range_discovery.upper"] = found.upper.copy()
            arrays["range_discovery.levels_accepted"] = found.levels_accepted.copy()

    def restore(self, state: dict, reader, t: int, dim, n_classes: int) -> None:
        """Overwrite this fresh warm-up with a snapshot's, every value checked against the public plan."""
        part = state["range_discovery"]
        reader.mapping(part, "range_discovery", ("done", "n_held", "rng", "found"))
        done = reader.boolean(part["done"], "range_discovery.done")
        n_held = reader.integer(part["n_held"], "range_discovery.n_held", low=0)
        if (not done and n_held != t) or (done and n_held):
            raise reader.error(f"range_discovery holds {n_held} records after {t} (warm-up done: {done})")
        if n_held and (dim is None or n_held >= self.length(dim)):
            raise reader.error(f"range_discovery holds {n_held} records, not fewer than its warm-up")
        rng = np.random.Generator(np.random.PCG64())
        try:
            rng.bit_generator.state = part["rng"]
        except (TypeError, ValueError, KeyError) as exc:
            raise reader.error(f"unusable range_discovery.rng ({type(exc).__name__}: {exc})") from None
        records = codes = None
        if n_held:
            records = reader.array("range_discovery.records", (n_held, dim))
            codes = reader.array("range_discovery.codes", (n_held,), dtype=np.int64)
            if codes.min() < 0 or codes.max() >= n_classes:
                raise reader.error("range_discovery.codes holds a class code outside the public domain")
        if not done and part["found"] is not None:
            raise reader.error("range_discovery holds a discovered box, but its warm-up is not done")
        found = None if part["found"] is None else self._restore_found(part["found"], reader, dim)
        self.done, self.rng, self.found = done, rng, found
        self.records = self.codes = None
        self.n_held = 0
        if n_held:
            self.hold(records, codes)

    def _restore_found(self, part, reader, dim) -> DiscoveredBounds:
        reader.mapping(part, "range_discovery.found", ("rho", "sigmas", "n_records"))
        if dim is None:
            raise reader.error("range_discovery has a discovered box but no number of features")
        n_records = reader.integer(part["n_records"], "range_discovery.found.n_records", low=1)
        if not isinstance(part["sigmas"], list):
            raise reader.error("range_discovery.found.sigmas must be a list")
        # The plan is public: the levels and their σ follow from m, d and ρ_range, so they are recomputed.
        n_levels = self.setting.levels(n_records, dim, self.rho)
        sigmas, planned = plan_cost(dim, self.setting.share * self.rho, n_levels)
        if part["sigmas"] != list(sigmas) or n_records > self.length(dim):
            raise reader.error("range_discovery.found: the levels and their noise are not those the public plan "
                               "gives")
        rho = reader.number(part["rho"], "range_discovery.found.rho")
        if rho != planned:
            raise reader.error(f"range_discovery.found.rho = {rho!r}, the plan gives {planned!r}")
        lower = reader.array("range_discovery.lower", (dim,))
        upper = reader.array("range_discovery.upper", (dim,))
        accepted = reader.array("range_discovery.levels_accepted", (dim,), dtype=np.int64)
        lo0 = np.broadcast_to(self.declared.lower, (dim,))
        hi0 = np.broadcast_to(self.declared.upper, (dim,))
        if not (np.all(lo0 <= lower) and np.all(lower < upper) and np.all(upper <= hi0)
                and np.all((accepted >= 0) & (accepted <= n_levels))):
            raise reader.error("range_discovery: the discovered box does not lie inside the declared one")
        found = DiscoveredBounds(lower=lower, upper=upper, declared_lower=lo0.copy(), declared_upper=hi0.copy(),
                                 levels_accepted=accepted, rho=rho, sigmas=sigmas, n_records=n_records,
                                 params=result_params(self.setting.finder, n_levels))
        try:
            found_bounds(found)
        except ValueError as exc:
            raise reader.error(f"range_discovery: unusable discovered box ({exc})") from None
        return found
