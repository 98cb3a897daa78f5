"""What :class:`onpair.OnPairStats` has spent and released: its privacy report and its accountants.

:class:`StatisticsReport` is a mixin of the learner: ``privacy_report`` (the continual release of the whole
stream as one event, the mechanism's public description, the signal of the latest release, the record-level
cost of repeated passes) and the read-only views of its own and its shared accountant. Everything here is
public or marked curator-only.
"""

from __future__ import annotations

import math

from ..privacy.accountant import ZCDPAccountant
from ..privacy.events import ContinualRelease
from ..privacy.reports import build_report, extend_report
from ..privacy.signal import NOTHING_RELEASED
from .model import released_signal


class StatisticsReport:
    """The privacy report and accountants of a learner on released statistics (a mixin of :class:`onpair.OnPairStats`).

    The host provides ``_accountant``, ``_shared``, ``_rho_budget``, ``_stats``, ``_learned``, ``class_statistics``,
    the warm-up's report fields (:class:`onpair.statistics.warmup.WarmupLearning`) and the
    :class:`onpair.core.stream.StreamLearner` state.
    """

    @property
    def accountant(self):
        """A read-only view of the learner's own zCDP accountant (the release's cost, spent with the first
        record; an empty one for the non-private twin). The shared one given as ``accountant=`` is
        :attr:`shared_accountant`."""
        return (self._accountant or ZCDPAccountant(self._rho_budget, owner="OnPairStats")).view()

    @property
    def shared_accountant(self):
        """The accountant given as ``accountant=`` (shared with other models), or None."""
        return self._shared

    def privacy_report(self, passes=1, order="same") -> dict:
        """What has been spent and released so far.

        The keys of every report (:func:`onpair.privacy.reports.build_report`; ``rho_spent`` is the whole
        stream's cost for a record at one position, committed with the first record), ``releases`` (one
        row: the :class:`onpair.privacy.events.ContinualRelease` of the whole stream, with its
        ``mechanism``, ``kappa2``, ``horizon`` and ``nodes_released`` so far), and ``frozen``, ``schedule``
        (the mechanism's public description, one entry per tree level or factorisation), ``buffer``
        (None), ``sensitivity_now`` (Δ of one record's statistics), ``n_clipped`` (curator-only),
        ``noise_sd`` (the per-coordinate noise of the current release), ``expected_cosine`` and
        ``noise_dominated`` (:func:`onpair.statistics.model.released_signal`: the released class means'
        direction against its noiseless one, below 1/2 the model is mostly noise; public) and
        ``record_level``.

        ``record_level`` is the cost of a **record** learned ``passes`` times. With ``order="same"`` (a data
        set of n records replayed k times in the same order: ``n_seen`` = k·n) it is exact, computed from
        the continual-release mechanism's encoder (:func:`onpair.privacy.replay.replay_rho`). Four passes of
        river's Phishing (n = 1,250) at ε = 1: record-level ε 2.71 with the default's blocks (6ρ: two copies in
        one block cost it 4ρ), 3.03 with ``"blt"`` (7.3ρ: its encoder's columns never end, so the copies
        overlap), 2.15 with ``mechanism="toeplitz"`` (exactly 4ρ: copies
        farther apart than its band of 64 do not overlap), 2.20 with ``"epochs"``; the group bound gives 4.75.
        Shuffled passes, bagging or any other schedule: ``order="any"``, the group bound
        k²ρ. Example: ``learner.privacy_report(passes=4)["record_level"]["epsilon"]``.
        """
        if not self.private:
            return extend_report(super().privacy_report(passes, order), public={"sensitivity_now": self._sensitivity})
        mechanism = None if self._stats is None else self._stats.mechanism
        events = [ContinualRelease.of(mechanism, e.what, rho=e.rho) if isinstance(e, ContinualRelease) else e
                  for e in self._accountant.events]  # the continual release brought up to date; the finder's as spent
        horizon = self._horizon_value()
        frozen = horizon is not None and self._t >= horizon
        signal = self._signal()
        noise_dominated = signal["noise_dominated"]
        status = (f"frozen: the horizon of {horizon} records is reached" if frozen else
                  self._warmup_status() or ("learning; a release at the end of each public block"
                                                    if self._mechanism == "blocks" else "learning; a release after every record"))
        if noise_dominated:
            status += (f"; the released statistics are dominated by noise (expected cosine "
                       f"{signal['expected_cosine']:.2f} between their direction and the noiseless one): more records "
                       "or a larger ε help")
        return self._discovery_record_level(build_report(
            type(self).__name__, events, epsilon=self._epsilon, delta=self._delta, accounting=self.accounting,
            mode="continual", n_seen=self._t, status=status, rho_budget=self._rho_budget, passes=passes,
            order=order, mechanism=mechanism,
            public={"frozen": frozen, "schedule": None if mechanism is None else mechanism.describe(),
                    "buffer": None, "sensitivity_now": self._sensitivity,
                    "noise_sd": 0.0 if self._stats is None else math.sqrt(self._stats.noise_variance()),
                    **signal, **self._discovery_fields()},
            curator={"n_clipped": self._n_clipped}))

    def _signal(self) -> dict:
        """``expected_cosine`` and ``noise_dominated`` of the latest release
        (:func:`onpair.statistics.model.released_signal`; before any record: None and False)."""
        if self._stats is None or self._learned() == 0:
            return dict(NOTHING_RELEASED)
        return released_signal(self.class_statistics())
