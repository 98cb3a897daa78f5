"""The warm-up of :class:`onpair.OnPairStats` with ``discover_bounds=``: hold, discover, then learn.

:class:`WarmupLearning` is the part of the online statistics learner that range discovery adds
(:mod:`onpair.core.discovery` has the parameter, the held records and the budget's split). While the
warm-up lasts, records are validated and **held** (a failed call holds nothing), the clipping warning speaks
of the declared box, nothing is released or spent, and the model is the one of an empty release: the
data-independent prior (a zero vector for the AUC task: every score 0, river's probability 0.5). The record
that fills the warm-up (the m-th; or :meth:`WarmupLearning.finish_warmup` on a shorter stream) runs the
finder on the held records, spends its cost, replaces the bounds map by the discovered box, and learns the
held records in it as one block, then the rest of its own block: exactly what one ``learn_many`` or m
``learn_one`` calls give, bit for bit. Later records outside the discovered box are clipped to it without a
warning (the box holds the bulk of the data, not all of it: clipping is part of the mechanism) and counted
in the curator-only ``n_clipped``.
"""

from __future__ import annotations


import numpy as np

from ..core.discovery import RangeWarmup, declared_box, discovery_setting, found_bounds, model_rho, range_events
from ..privacy.accountant import charge, refusal
from ..privacy.conversions import eps_from_rho
from ..privacy.reports import record_headline


class WarmupLearning:
    """Range discovery for a learner on released statistics (a mixin of :class:`onpair.OnPairStats`).

    The host provides ``_codes``, ``_new_state``, ``_commit_budget``, ``_release_event``, ``_accountant``,
    ``_shared`` (a shared accountant or None), ``_rho_budget``, ``_stats``, ``_frozen_warning`` and the
    :class:`onpair.core.stream.StreamLearner` state.
    """

    def _setup_discovery(self, discover_bounds, horizon) -> None:
        """Check ``discover_bounds`` and build the warm-up (before the release state, whose ρ it sets)."""
        setting = discovery_setting(discover_bounds, type(self).__name__)
        self._range = None
        self._holding = False  # records are being held (the warm-up is not over)
        self._silent_clip = False  # records are learned in a discovered box: clipping is the mechanism's
        if setting is None:
            return
        if not self.private:
            raise ValueError("discover_bounds is for a private learner: the non-private twin (private=False) has no "
                             "budget to share; give it the bounds to compare with")
        declared_box(self._bounds, type(self).__name__)
        if setting.warmup is not None and horizon is not None and setting.warmup > horizon:
            raise ValueError(f"discover_bounds' warm-up of {setting.warmup} records exceeds horizon={horizon}")
        self._range = RangeWarmup(setting, self._bounds, self._rho_budget, self._seed_sequence, horizon)
        self._holding = True

    def _model_rho(self, dim) -> float:
        """The ρ of the release of the statistics: all of ρ, or what the finder leaves of it."""
        return self._rho_budget if self._range is None else self._range.planned_model_rho(dim)

    # -- learning ----------------------------------------------------------------------------------
    def _learn_block(self, X, labels):
        if not self._holding or X.shape[0] == 0:
            return super()._learn_block(X, labels)
        if self._read_only:
            raise RuntimeError(self._read_only)
        codes = self._codes(labels)  # a label outside the domain: a ValueError, nothing held
        warm = self._range
        room = warm.room(X.shape[1])
        k = min(room, X.shape[0])
        outside = int(np.count_nonzero(warm.declared.transform(X[:k])[1]))
        if k < room:
            pending = super()._pending_warnings(outside, k)
            fresh = self._new_state(X.shape[1]) if self._stats is None else None  # may fail: nothing changed yet
            self._issue(pending)
            if fresh is not None:
                self._stats, self._dim = fresh, X.shape[1]
            warm.hold(X, codes)
            self._t += k
            return self
        self._end_warmup(X[:k], codes[:k], outside, X.shape[0] - k)
        if k < X.shape[0]:
            super()._learn_block(X[k:], labels[k:])
        return self

    def finish_warmup(self):
        """End the warm-up now: the finder runs on the records held so far (fewer than the warm-up's m: a
        short stream), and they are learned in the box it finds. The number of records held is public (it
        is ``n_seen``). With no record held the declared box is kept and nothing is spent; too few records
        for any level of the finder (:func:`onpair.privacy.ranges.planned_levels`) also keep it, at cost 0,
        and the model then gets the whole budget. A learner without ``discover_bounds``, or whose warm-up is
        over, is left as it is.

        Returns
        -------
        self
        """
        if not self._holding:
            return self
        if self._read_only:
            raise RuntimeError(self._read_only)
        if self._dim is None:  # nothing held and no number of features: the declared box, nothing spent
            self._range.commit(None, self._range.rng)
            self._holding = False
            return self
        self._end_warmup(np.empty((0, self._dim)), np.empty(0, dtype=np.int64), 0, 0)
        return self

    def _end_warmup(self, X, codes, outside: int, n_after: int) -> None:
        """Discover on the held records and ``X``, then learn them in the box found (every check and warning
        first: a failure, warnings as errors included, changes nothing)."""
        warm = self._range
        records, all_codes, found, rng = warm.prepare(X, codes)
        dim = records.shape[1]
        bounds = warm.declared if found is None else found_bounds(found)
        fresh = self._new_state(dim, model_rho(self._rho_budget, found))
        events = range_events(found)
        if records.shape[0]:  # a shared accountant is asked for the finder and the release before anything changes
            exc = refusal([self._shared], events + [self._release_event(fresh.mechanism)])
            if exc is not None:
                raise exc
        Z, clipped = bounds.transform(records)
        pending = super()._pending_warnings(outside, X.shape[0])
        capacity = self._horizon_value()
        if capacity is not None and records.shape[0] + n_after > capacity and not self._frozen_warned:
            pending.append(self._frozen_warning(capacity))
        self._issue(pending)
        warm.commit(found, rng)
        self._holding = False
        self._silent_clip = found is not None
        self._bounds = bounds
        self._stats, self._dim = fresh, dim
        self._box = bounds.box_rows(dim) if bounds.kind == "box" else None  # the fast path's map: the box found
        charge([self._accountant, self._shared], events)
        self._stats.add(Z, all_codes, self._noise_source())
        self._t += X.shape[0]
        self._n_clipped += int(np.count_nonzero(clipped))
        self._commit_budget()

    def _pending_warnings(self, n_clipped: int, m: int) -> list:
        if self._silent_clip:  # the discovered box holds the bulk of the data: clipping to it is the mechanism
            return []
        return super()._pending_warnings(n_clipped, m)

    # -- snapshots and reports -------------------------------------------------------------------------
    def _discovery_settings(self) -> dict:
        """The settings' entries of discovery: the declared bounds, and the resolved ``discover_bounds``."""
        if self._range is None:
            return {"bounds": self._bounds.to_dict()}
        return {"bounds": self._range.declared.to_dict(), "discover_bounds": self._range.setting.describe()}

    def _restore_discovery(self, state, reader, t: int, dim) -> None:
        """The warm-up of a snapshot (before the release state, whose ρ it sets)."""
        if self._range is None:
            return
        self._range.restore(state, reader, t, dim, self._n_classes)
        self._holding = not self._range.done
        self._silent_clip = self._range.found is not None
        self._bounds = self._range.bounds()
        if self._dim is not None:
            self._stats = self._new_state(self._dim)  # the ρ the restored discovery leaves
            self._box = self._bounds.box_rows(self._dim) if self._bounds.kind == "box" else None

    def _spend_discovery(self) -> None:
        """Charge the finder's releases again to a fresh own accountant (a snapshot's restore)."""
        if self._range is not None:
            charge([self._accountant], range_events(self._range.found))

    def _snapshot_written(self) -> None:
        super()._snapshot_written()
        if self._range is not None and self.private and self.seed is None:
            self._range.detach()

    def _discovery_fields(self) -> dict:
        """The report's ``range_discovery`` (the setting, m, the box found, its cost; public), if any."""
        return {} if self._range is None else {"range_discovery": self._range.describe(self._dim)}

    def _warmup_status(self):
        """The report's status during a warm-up (None after it, or without discovery)."""
        if not self._holding:
            return None
        if self._dim is None:
            return "warm-up: no record yet"
        return (f"warm-up: {self._range.n_held} of {self._range.length(self._dim)} records held (nothing released "
                "yet; predictions are the data-independent prior)")

    def _discovery_record_level(self, report):
        """``report`` with the finder's cost in ``record_level`` for same-order passes: the exact cost there
        comes from the continual mechanism's encoder alone, and the finder's block may hold several copies of a
        record (one position, and the group bound k²ρ of any other order, already count it)."""
        found = None if self._range is None else self._range.found
        level = report.get("record_level")
        if found is None or found.rho <= 0.0 or level is None or level["passes"] == 1 or level["order"] != "same" \
                or not level["bound"].startswith("exact"):
            return report
        copies = self._finder_copies(level["passes"])
        level["rho"] = level["rho"] + copies ** 2 * float(found.rho)
        level["epsilon"] = float(eps_from_rho(level["rho"], level["delta"], method=self.accounting))
        level["bound"] += (f"; plus the range finder's cost for {copies} cop{'y' if copies == 1 else 'ies'} of the "
                           "record in its block")
        return record_headline(report)

    def _finder_copies(self, passes: int) -> int:
        """How many copies of one record the finder's block of m records may hold over ``passes`` same-order
        passes of n records: ⌈m/n⌉, at most k."""
        n = self._t // passes
        return min(passes, -(-self._range.found.n_records // max(n, 1)))
