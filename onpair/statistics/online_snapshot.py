"""The snapshots of :class:`onpair.OnPairStats`: what its ``save`` writes beside the stream learner's state, and
how ``load`` reads it back as untrusted input.

:class:`StatisticsSnapshots` is a mixin of the learner: its settings, the release state
(:class:`onpair.statistics.released.ReleasedStatistics`), the range finder's warm-up, the normals the release
noise drew ahead (as secret as the noise), and the refresh rule's view of the release a prediction was read at.
Every value read is checked (a ``reader.error`` names it); the budget is committed again on load.
"""

from __future__ import annotations

import numpy as np

from ..privacy.accountant import ZCDPAccountant
from ..privacy.continual.normals import BLOCK_VALUES
from .released import PLAUSIBLE_DEVIATIONS, ReleasedStatistics
from .released_model import ReleasedModel

#: The snapshot array of the normals drawn ahead and not consumed yet (:meth:`onpair.OnPairStats._noise_source`).
NORMALS_ARRAY = "noise.normals"


class StatisticsSnapshots:
    """Writing and reading the state of a learner on released statistics (a mixin of :class:`onpair.OnPairStats`).

    The host provides ``_stats``, ``_dim``, ``_range``, ``_normal_block``, ``_noise_source``, ``_init_state``,
    ``_horizon_value``, ``_commit_budget``, the settings it checked and the
    :class:`onpair.core.stream.StreamLearner` state.
    """

    def _state_kind(self) -> str:
        return ReleasedStatistics.kind

    def _settings(self) -> dict:
        return {"private": self.private, "task": self._task.name, "classes": None if self._classes is None else
                list(self._classes), "model": self._model_kind, "lam": self._lam, "weights": list(self._weights),
                "mechanism": self.mechanism, "band": self.band, "horizon": self._horizon_value(),
                "epsilon": self._epsilon, "delta": self._delta, "accounting": self.accounting,
                "rho_budget": self._rho_budget, **self._discovery_settings(),
                # only when used: the settings of the snapshots written before final_share existed are unchanged
                **({"final_share": self._final_share} if self._final_share else {}),
                **({} if self._half_life is None else {"half_life": self._half_life}),
                # the classifier's (the earlier tasks' settings, and so their snapshots, are unchanged)
                **({"moments": "pooled" if self._pooled else "per-class", "covariance": self.covariance}
                   if self._task.name == "classify" else {})}

    def _export_own(self, state, arrays):
        state["frozen_warned"] = self._frozen_warned
        if self._dim is not None:
            self._stats.export(state, arrays)
        if self._range is not None:
            self._range.export(state, arrays)
        block = self._normal_block
        if self.private and block is not None and block.rng is self._noise_rng and block.end > block.pos:
            arrays[NORMALS_ARRAY] = block.unconsumed()  # the noise's next normals: as secret as the noise

    def _restore_state(self, state, reader) -> None:
        normals = self._read_normals(reader)
        super()._restore_state(state, reader)
        self._normal_block = None
        if normals is not None:
            self._noise_source().restore(normals)

    def _read_normals(self, reader):
        """The normals drawn ahead that a snapshot holds (``noise.normals``; none in the snapshots of versions
        before issue 22, whose generator then continues where it stopped: the same normals): checked as
        untrusted input. A twin's snapshot holds none."""
        if NORMALS_ARRAY not in reader.arrays:
            return None
        if not self.private:
            raise reader.error(f"array {NORMALS_ARRAY!r} in the snapshot of the non-private twin (it draws no noise)")
        value = reader.arrays[NORMALS_ARRAY]
        limit = max(BLOCK_VALUES, 2 * ReleasedStatistics.width_of(self._dim or 1, self._n_classes))
        if value.dtype != np.float64 or value.ndim != 1 or not 0 < value.shape[0] <= limit:
            raise reader.error(f"array {NORMALS_ARRAY!r} must hold 1 to {limit} float64 values, got shape "
                               f"{value.shape} and dtype {value.dtype}")
        normals = reader.array(NORMALS_ARRAY, value.shape)
        if np.max(np.abs(normals)) > PLAUSIBLE_DEVIATIONS:
            raise reader.error(f"array {NORMALS_ARRAY!r} holds {float(np.max(np.abs(normals))):g}, not a standard "
                               "normal a generator draws")
        return normals

    def _own_state_keys(self, dim):
        return (["frozen_warned"] + (["statistics"] if dim is not None else [])
                + (["range_discovery"] if self._range is not None else []))

    def _restore_own(self, state, reader, t, dim):
        frozen = reader.boolean(state["frozen_warned"], "frozen_warned")
        self._restore_discovery(state, reader, t, dim)
        if dim is not None:
            if self._dim is None:
                self._init_state(dim)
            capacity = self._horizon_value()
            learned = 0 if self._holding else t if capacity is None else min(t, capacity)
            self._stats = ReleasedStatistics.restore(self._stats, learned, state, reader)
        self._frozen_warned = frozen
        self._accountant = ZCDPAccountant(self._rho_budget, owner="OnPairStats") if self.private else None
        self._budget_committed = False
        self._spend_discovery()
        self._commit_budget()

    _VIEW_KEYS = ("index", "variance")

    def _view_from_state(self, scalars, reader, read: int):
        """The view a snapshot's ``predictor`` holds, checked: the release at ``index`` (the count ``read`` of a
        private learner), whose noise variance is the mechanism's at that index, and whose released sum is the
        current one when no release came since, else within what that many records and the noise can reach."""
        stats = self._stats
        index = reader.integer(scalars["index"], "predictor.index", low=0, high=stats.n_seen)
        if self.private and index != read:
            raise reader.error(f"predictor.index = {index}, but the release was read at release {read}")
        estimate = reader.array("predictor.estimate", (stats.width,))
        variance = reader.number(scalars["variance"], "predictor.variance")
        expected = float(stats.mechanism.variance(index)) if self.private else 0.0
        if variance != expected:
            raise reader.error(f"predictor.variance = {variance!r}, but the release {index} has variance {expected!r}")
        if index == stats.release_index and not np.array_equal(estimate, stats.estimate()):
            raise reader.error(f"predictor.estimate is not the release {index}")
        if not float(np.max(np.abs(estimate), initial=0.0)) <= stats.plausible_limit(index):
            raise reader.error("predictor.estimate holds values no release of this learner can reach")
        return ReleasedModel(index, estimate, variance, stats.layout,
                             self._model_kind, self._lam, self.covariance, self._bounds)
