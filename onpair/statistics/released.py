"""Per-class pairwise statistics released continually: the state of the learners on released statistics.

Each record contributes v(z) = [a·e_y, b·x⊗e_y, m·vech(xxᵀ)⊗e_y] (counts, sums and second moments of its
class, :mod:`onpair.statistics._kernels`) to sums that a release mechanism (:mod:`onpair.privacy.continual`)
publishes once per public block (the default of a stationary stream) or after every record, with the proven sensitivity of
:func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`. Every model is post-processing of the
current release (:mod:`onpair.statistics.model`), so it may be recomputed at any round for
free. The non-private twin keeps the exact prefix sum instead.

Memory: O(buffers·k) for the BLT, O(levels·k) for the tree, O(band·k) for the banded factorisation, O(k)
for the exact sum, with
k = C·(1 + d + d(d+1)/2): never O(t·k).
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.continual import MAX_STATE_FLOATS, BlockRelease, BufferedToeplitz, DecayedBLT, PrefixSumMechanism
from ..privacy.continual.decayed import decay_of
from ..privacy.statistics_sensitivity import statistics_sensitivity
from ._kernels import (NEED_NORMALS, _add_decayed_rows, _add_rows, _box_blt_record, _box_sum_record,
                       box_blt_constants, layout_width, statistics_rows)
from .model import class_statistics

#: The continual-release mechanisms users choose by name (``OnPairStats(mechanism=...)``), the default
#: first: the options of :class:`onpair.privacy.continual.PrefixSumMechanism` (a test checks they agree).
MECHANISMS = ("blt", "toeplitz", "epochs", "tree", "blocks")

#: Standard deviations of the noise beyond which a stored value is not one a mechanism drew (a Gaussian
#: deviation beyond 40σ has probability below 10⁻³⁴⁷): a snapshot holding one is refused.
PLAUSIBLE_DEVIATIONS = 40.0

#: Records whose rows :meth:`ReleasedStatistics.add` builds and hands to the mechanism at once: a block of rows
#: that stays in cache (256 × 462 doubles at d = 20, two classes: 0.9 MB); measured faster than 4,096 records
#: (learn_many at d = 20: 216 k against 189 k records/s of CPU time, interleaved in one process). The bits do not
#: depend on it (a mechanism's blocks add up to its records one at a time).
ROWS_PER_BLOCK = 256


class ExactSums:
    """The null mechanism of the non-private twin: the exact prefix sum, no noise, nothing spent.

    It answers what :class:`ReleasedStatistics` asks of a continual-release mechanism
    (:class:`onpair.privacy.continual.PrefixSumMechanism`): ``add_block``, ``estimate``,
    ``variance`` (0), ``n_seen``, ``horizon`` (None) and ``to_state``.

    Examples
    --------
    >>> import numpy as np
    >>> sums = ExactSums(2)
    >>> sums.add_block(np.array([[1.0, 2.0], [3.0, 4.0]]), None)
    >>> sums.estimate().tolist(), sums.n_seen, sums.variance()
    ([4.0, 6.0], 2, 0.0)
    """

    kind = "exact"
    horizon = None

    def __init__(self, width: int):
        self.total = np.zeros(width)
        self.n_seen = 0

    def add_block(self, rows: np.ndarray, rng) -> None:
        """Add the rows (no noise: ``rng`` is not used)."""
        _add_rows(rows, self.total)
        self.n_seen += rows.shape[0]

    def estimate(self) -> np.ndarray:
        """The exact prefix sum (a copy)."""
        return self.total.copy()

    def variance(self) -> float:
        """0: no noise."""
        return 0.0

    def to_state(self):
        """``({"kind": "exact", "n_seen": n}, {"exact": sums})`` (the arrays are not copies)."""
        return {"kind": self.kind, "n_seen": self.n_seen}, {"exact": self.total}


class ReleasedStatistics:
    """The released (or, for the non-private twin, exact) prefix sum of the per-class statistics.

    Parameters
    ----------
    dim : int
        Number of features d.
    n_classes : int
        C, the size of the public class domain.
    weights : (float, float, float)
        Public weights (a, b, m) of counts, sums and second moments.
    mechanism : PrefixSumMechanism or None
        The continual-release mechanism (None: :class:`ExactSums`, the exact sums, no privacy).
    pooled : bool, default False
        Release one second moment for all classes (the pooled layout of :mod:`onpair.statistics._kernels`,
        the classifier's) instead of one per class; the same sensitivity.

    Examples
    --------
    >>> import numpy as np
    >>> stats = ReleasedStatistics.build(dim=2, n_classes=2, weights=(0.8, 1.0, 0.6), rho=None)
    >>> stats.add(np.array([[0.1, 0.2], [0.3, 0.0]]), np.array([0, 1]), None)
    >>> stats.class_statistics().counts.round(6).tolist()
    [1.0, 1.0]
    """

    #: Tag of this kind of state in snapshots.
    kind = "released-statistics"

    def __init__(self, dim: int, n_classes: int, weights, mechanism=None, pooled: bool = False):
        self.dim = int(dim)
        self.n_classes = int(n_classes)
        self.weights = tuple(float(w) for w in weights)
        self.pooled = bool(pooled)
        self.width = _checked_width(self.dim, self.n_classes, self.pooled)
        self.mechanism = ExactSums(self.width) if mechanism is None else mechanism
        self.weight_array = np.array(self.weights)
        #: Whether a record may take the one fused call (:meth:`add_record`): a BLT release, or a block
        #: release without fresh share (its record adds to the block's sum; no noise until the block ends).
        self._sums = type(self.mechanism) is BlockRelease and self.mechanism.fresh_share == 0.0
        self.fused = self._sums or type(self.mechanism) in (BufferedToeplitz, DecayedBLT)
        self._box = (None, None)  # (the box rows given, their constants for the fused call)

    @classmethod
    def build(cls, *, dim, n_classes, weights, rho, mechanism="blt", band=None, horizon=None, final_share=0.0,
              pooled=False, half_life=None):
        """A fresh state: with ``rho`` None the exact (non-private) sums, else the chosen mechanism with
        the statistics' sensitivity (the same for both layouts) and budget ρ; with a ``half_life`` (records;
        mechanism "blt" or "blocks", checked by the learner) the decayed sums Σ_s γ^{t−s} v_s instead of the prefix
        sums (:class:`onpair.privacy.continual.DecayedBLT`; for "blocks" the blocks capped and weighed by the decay,
        :class:`onpair.privacy.continual.BlockRelease`; without ρ the exact decayed sums)."""
        if rho is None:
            if half_life is None:
                return cls(dim, n_classes, weights, pooled=pooled)
            return cls(dim, n_classes, weights, DecayedExactSums(_checked_width(dim, n_classes, pooled), half_life),
                       pooled)
        width = _checked_width(dim, n_classes, pooled)
        if half_life is not None and mechanism == "blocks":
            mech = BlockRelease(dim=width, sensitivity=statistics_sensitivity(*weights), rho=rho, half_life=half_life,
                                horizon=horizon)
            return cls(dim, n_classes, weights, mech, pooled)
        if half_life is not None:
            mech = DecayedBLT(dim=width, sensitivity=statistics_sensitivity(*weights), rho=rho,
                              half_life=half_life, horizon=horizon)
            return cls(dim, n_classes, weights, mech, pooled)
        options = {} if band is None else {"band": band}  # a band is for the factorisation (checked by the learner)
        if final_share:
            options["final_share"] = final_share  # the BLT's, with a horizon (checked by the learner)
        mech = PrefixSumMechanism.for_option(mechanism)(dim=width, sensitivity=statistics_sensitivity(*weights),
                                                        rho=rho, horizon=horizon, **options)
        return cls(dim, n_classes, weights, mech, pooled)

    @staticmethod
    def width_of(dim: int, n_classes: int) -> int:
        """k = C·(1 + d + d(d+1)/2), the length of a row (a ValueError when it would not fit in memory)."""
        return _checked_width(dim, n_classes)

    @property
    def layout(self) -> tuple:
        """(n_classes, dim, weights as a float64 array, pooled): what decodes a release of this state
        (:class:`onpair.statistics.released_model.ReleasedModel`'s ``layout``)."""
        return self.n_classes, self.dim, self.weight_array, self.pooled

    @property
    def private(self) -> bool:
        """Whether the sums are released through a private mechanism (False: :class:`ExactSums`)."""
        return not isinstance(self.mechanism, ExactSums)

    # -- learning ----------------------------------------------------------------------------------
    @property
    def n_seen(self) -> int:
        return self.mechanism.n_seen

    @property
    def released_per_block(self) -> bool:
        """Whether the statistics are released once per public block (a block release without fresh share), not
        after every record. Public."""
        return self._sums

    @property
    def n_releases(self) -> int:
        """The releases made: one per record (a continual release), one per completed block (a block release
        without fresh share). Public."""
        return self.mechanism.completed() if self._sums else self.mechanism.n_seen

    @property
    def release_index(self) -> int:
        """The records the current release describes, which only changes when the release does: ``n_seen`` for
        a continual release (a new release after every record), N (the records of the completed blocks) for
        a block release without fresh share (a new release at the end of each block). Public."""
        return self.mechanism.n_released if self._sums else self.mechanism.n_seen

    @property
    def capacity(self):
        """The most records it accepts in all (a horizon), or None."""
        return self.mechanism.horizon

    def add(self, Z: np.ndarray, codes: np.ndarray, rng) -> None:
        """Add mapped records (rows of ``Z``, inside the unit ball) with their class codes: their rows v(z)
        (:func:`onpair.statistics._kernels.statistics_rows`, in blocks of :data:`ROWS_PER_BLOCK` records)
        through the mechanism's ``add_block`` (a record is a block of one); the mechanism draws its noise from
        ``rng`` (the learner's own generator). Checked by the caller."""
        for start in range(0, Z.shape[0], ROWS_PER_BLOCK):
            stop = start + ROWS_PER_BLOCK
            self.mechanism.add_block(statistics_rows(Z[start:stop], codes[start:stop], self.n_classes,
                                                     self.weight_array, self.pooled), rng)

    def add_record(self, x: np.ndarray, box, code: int, rng, clip: bool = False) -> int:
        """One raw record and the public box ``box`` = (lower, upper, half-scale) rows
        (:meth:`onpair.core.bounds.FeatureBounds.box_rows`) in the one fused call
        :func:`onpair.statistics._kernels._box_blt_record` (the box map, the row, the BLT's compiled step), or
        for a block release :func:`onpair.statistics._kernels._box_sum_record` (the box map, the row, added to
        the block's sum; the block released by :meth:`~onpair.privacy.continual.BlockRelease.count_step` when
        the record ends it): exactly :meth:`add` of its mapped row (clipped to the box, as
        :meth:`onpair.core.bounds.FeatureBounds.transform` maps it), bit for bit. Only where :attr:`fused`
        and ``rng`` is the learner's :class:`~onpair.privacy.continual.normals.NormalBlock`.

        Returns 0 for a record inside the box (added), 1 for one outside it (added, clipped, only when
        ``clip`` is true) and −1 for one holding NaN or ±inf; a record outside the box without ``clip``, or
        not finite, changes nothing and draws no noise (the caller's block path then clips, counts, warns or
        refuses). A PrivacyBudgetExceeded at the horizon (nothing changed)."""
        mechanism = self.mechanism
        if mechanism.n_seen >= mechanism.capacity:
            mechanism.add_block(np.zeros((1, self.width)), rng)  # raises, naming the horizon
        if self._sums:
            if self._box[0] is not box:
                self._box = (box, box_blt_constants(box, self.weight_array, (), (), 0.0))
            status = _box_sum_record(x, self._box[1], code, clip, self.n_classes, self.pooled, mechanism.sum_step())
            if status >= 0:
                mechanism.count_step(rng)
            return 1 if status == -2 else status
        if self._box[0] is not box:
            omega, theta, decay, _ = mechanism.step_arrays()
            self._box = (box, box_blt_constants(box, self.weight_array, omega, theta, decay))
        state = mechanism.step_arrays()[3]
        args = (x, self._box[1], code, clip, self.n_classes, self.pooled)
        status = _box_blt_record(*args, rng.values, rng.pos, rng.end, state)
        if status == NEED_NORMALS:  # a record to add, fewer than k normals left: refill (nothing else changed)
            rng.ensure(self.width)
            status = _box_blt_record(*args, rng.values, rng.pos, rng.end, state)
        if status >= 0:
            rng.pos += self.width
            mechanism.count_step(rng)
        return 1 if status == -2 else status

    # -- releases ----------------------------------------------------------------------------------
    def estimate(self) -> np.ndarray:
        """The released prefix sum (k,) (the exact one for the non-private twin)."""
        return self.mechanism.estimate()

    def noise_variance(self) -> float:
        """Per-coordinate variance of the release's noise now (public; 0 for the exact sums)."""
        return float(self.mechanism.variance())

    def class_statistics(self, count_floor: float = 1.0):
        """Counts, means and covariances decoded from the current release (no cache: the learner's
        :class:`onpair.statistics.released_model.ReleasedModel` is the one that keeps it)."""
        return class_statistics(self.estimate(), self.n_classes, self.dim, self.weights, self.noise_variance(),
                                count_floor, self.pooled)

    @property
    def memory_bound(self) -> int:
        """Floats held: O(buffers·k), O(levels·k), O(band·k) or O(k), independent of the stream length."""
        _, arrays = self.mechanism.to_state()
        return int(sum(a.size for a in arrays.values()))

    # -- snapshots ---------------------------------------------------------------------------------
    def export(self, state: dict, arrays: dict) -> None:
        scalars, mech_arrays = self.mechanism.to_state()
        state["statistics"] = dict(scalars)
        arrays.update({f"statistics.{name}": value for name, value in mech_arrays.items()})

    @classmethod
    def restore(cls, fresh: "ReleasedStatistics", t_learned: int, state: dict, reader) -> "ReleasedStatistics":
        """The state of a snapshot, rebuilt on ``fresh`` (built from the public parameters), checked."""
        scalars = state["statistics"]
        reader.mapping(scalars, "statistics", ("kind", "n_seen", "params") if fresh.private else ("kind", "n_seen"))
        n_seen = reader.integer(scalars["n_seen"], "statistics.n_seen", low=0)
        if n_seen != t_learned:
            raise reader.error(f"statistics.n_seen = {n_seen}, but the learner learned {t_learned} records")
        if not fresh.private:
            expected = fresh.mechanism.kind
            if scalars["kind"] != expected:
                raise reader.error(f"statistics.kind = {scalars['kind']!r}: expected the exact sums ({expected!r})")
            out = cls(fresh.dim, fresh.n_classes, fresh.weights,
                      DecayedExactSums(fresh.width, fresh.mechanism.half_life)
                      if isinstance(fresh.mechanism, DecayedExactSums) else None, fresh.pooled)
            out.mechanism.total = reader.array("statistics.exact", (fresh.width,))
            out.mechanism.n_seen = n_seen
            out._check_exact(reader)
            return out
        names = [key for key in reader.arrays if key.startswith("statistics.")]
        mech_arrays = {}
        for key in names:
            value = reader.arrays[key]
            reader.referenced.add(key)
            mech_arrays[key[len("statistics."):]] = value
        try:
            mechanism = type(fresh.mechanism).from_state(fresh.mechanism.get_params(), dict(scalars), mech_arrays)
        except ValueError as exc:
            raise reader.error(f"invalid released statistics ({exc})") from None
        out = cls(fresh.dim, fresh.n_classes, fresh.weights, mechanism, fresh.pooled)
        out._check_plausible(reader, mech_arrays)
        return out

    def _record_bound(self) -> float:
        """The largest entry of a row v(z) of a record in the unit ball: max(a, b, m) (|x_k|, |x_k x_l|·√2 ≤ 1)."""
        return max(self.weights)

    def plausible_limit(self, n: int) -> float:
        """The largest entry a release of ``n`` records of the unit ball can hold: n·max(a, b, m) plus 40 standard
        deviations of the noise (probability below 10⁻³⁴⁷) with a margin of (n + 1)² for the noise's sums."""
        if not self.private:
            return n * self._record_bound() * (1 + 1e-9)
        description = self.mechanism.describe()
        sigma = max(description.get("sigmas") or [description["sigma"]])
        return n * self._record_bound() + PLAUSIBLE_DEVIATIONS * max(sigma, 1.0) * (n + 1.0) ** 2

    def _check_plausible(self, reader, arrays: dict) -> None:
        """Every stored array and the release must be what n records of the unit ball and the mechanism's
        noise can produce: at most n·max(a, b, m) for the sums, plus 40 standard deviations of the noise
        (probability below 10⁻³⁴⁷) with a margin of (n + 1)² for the noise's sums. An edited value beyond
        it (a snapshot's digest is no signature) would otherwise give a non-finite model."""
        n = self.n_seen
        description = self.mechanism.describe()
        sigma = max(description.get("sigmas") or [description["sigma"]])
        limit = n * self._record_bound() + PLAUSIBLE_DEVIATIONS * max(sigma, 1.0) * (n + 1.0) ** 2
        for name, value in [*sorted(arrays.items()), ("the release", self.estimate())]:
            worst = float(np.max(np.abs(value))) if value.size else 0.0
            if not worst <= limit:
                where = name if name == "the release" else f"statistics.{name}"
                raise reader.error(f"{where} holds {worst:g}, beyond the {limit:g} that {n} records of the unit "
                                   f"ball and the release's noise can reach: not a state this learner wrote")

    def _check_exact(self, reader) -> None:
        """Exact sums must be what records of the unit ball can produce: counts that add up to n_seen (decayed:
        (1 − γⁿ)/(1 − γ)),
        ‖Σx‖ ≤ count·b, every entry at most n_seen·max(a, b, m)."""
        total, n_seen = self.mechanism.total, self.mechanism.n_seen
        worst = float(np.max(np.abs(total))) if total.size else 0.0
        if not worst <= n_seen * self._record_bound() * (1 + 1e-9):
            raise reader.error(f"the exact sums hold {worst:g}, beyond what {n_seen} records of the unit "
                               "ball can produce")
        a, b, m = self.weights
        stride = 1 + self.dim if self.pooled else layout_width(self.dim, 1)
        blocks = total[:self.n_classes * stride].reshape(self.n_classes, stride)
        counts = blocks[:, 0] / a if a > 0 else None
        decay = getattr(self.mechanism, "decay", 1.0)  # decayed sums count Σ_{s<n} γ^s = (1 − γⁿ)/(1 − γ) records
        counted = float(n_seen) if decay == 1.0 else -math.expm1(n_seen * math.log(decay)) / -math.expm1(math.log(decay))
        if counts is not None and (np.any(counts < -1e-9) or not math.isclose(counts.sum(), counted,
                                                                                 rel_tol=1e-9, abs_tol=1e-9)):
            raise reader.error(f"the exact counts {counts.tolist()} do not count {n_seen} records")
        limit = counts if counts is not None else np.full(self.n_classes, float(n_seen))
        for c in range(self.n_classes):
            if np.linalg.norm(blocks[c, 1:1 + self.dim]) > b * limit[c] * (1 + 1e-9) + 1e-12:
                raise reader.error("the exact sums exceed what records of the mapped domain (norm ≤ 1) can produce")


class DecayedExactSums(ExactSums):
    """The null mechanism of the non-private twin with a half-life: the exact decayed sums Σ_s γ^{t−s} v_s,
    γ = 2^(−1/H), no noise, nothing spent.

    Examples
    --------
    >>> import numpy as np
    >>> sums = DecayedExactSums(1, half_life=1.0)    # γ = 1/2
    >>> sums.add_block(np.array([[4.0], [2.0]]), None); sums.add_block(np.array([[1.0]]), None)
    >>> sums.estimate().tolist(), sums.n_seen
    ([3.0], 3)
    """

    kind = "exact-decayed"

    def __init__(self, width: int, half_life: float):
        super().__init__(width)
        self.half_life = float(half_life)
        self.decay = decay_of(half_life)

    def add_block(self, rows: np.ndarray, rng) -> None:
        _add_decayed_rows(rows, self.decay, self.total)
        self.n_seen += rows.shape[0]



def _checked_width(dim: int, n_classes: int, pooled: bool = False) -> int:
    """k = C·(1 + d + d(d+1)/2) (pooled: C·(1 + d) + d(d+1)/2), or a ValueError when one row of it would not
    fit in memory."""
    width = layout_width(dim, n_classes, pooled)
    if width > MAX_STATE_FLOATS:
        raise ValueError(f"{dim} features in {n_classes} classes make {width:,} statistics per record, more than "
                         f"MAX_STATE_FLOATS = 2**30 (the second moments grow like d²)")
    return width
