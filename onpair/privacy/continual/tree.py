"""The binary-tree mechanism: bounded or unbounded, least-squares or plain prefix estimates."""

from __future__ import annotations

import math

import numpy as np

from ..gaussian import gaussian_rho
from ._kernels import _tree_add_block, _tree_prefix
from .base import PrefixSumMechanism
from .limits import check_state_size, noise_scales

#: Levels of an unbounded tree: record t ≤ 2^62 completes nodes up to level 62.
_UNBOUNDED_LEVELS = 63

ESTIMATES = ("honaker", "plain")


def _popcount(x: int) -> int:
    return bin(x).count("1")


class TreeAggregation(PrefixSumMechanism):
    """Binary-tree aggregation with the least-squares (Honaker) or the plain prefix estimate.

    Node (h, j) releases the sum of records (j−1)·2^h + 1 … j·2^h plus N(0, σ_h² I) as soon as it is
    complete. Each complete subtree is summarised bottom-up by the inverse-variance combination of
    its node's own value and its two children's subtree estimates (var_0 = σ_0²,
    var_h = 1/(1/σ_h² + 1/(2·var_{h−1}))); the prefix estimate at t adds the subtree estimates of the
    nodes of the dyadic decomposition of [1, t], one per set bit of t, so its per-coordinate
    variance is Σ var_h over those bits. ``estimate="plain"`` adds the nodes' own values instead
    (variance Σ σ_h²; popcount(t)·σ² with a horizon). Memory: two (levels, k) arrays.

    Budget. A record lies in exactly one node per level.

    * ``horizon=T``: L = ⌊log₂T⌋ + 1 levels (the bit length of T), σ = Δ·√(L/(2ρ)) on every level,
      κ² = L; after T records the mechanism refuses more (:class:`PrivacyBudgetExceeded`, a
      ValueError, nothing changed): the caller keeps the last release, frozen.
    * ``horizon=None``: level h gets ρ_h = ρ·6/(π²(h+1)²) (Σ_h ρ_h < ρ), σ_h = Δ/√(2ρ_h); any
      number of records (up to 2^62) costs at most ρ.

    Every σ carries the library's planning margin (× (1 + 10⁻⁹),
    :func:`~onpair.privacy.gaussian.sigmas_for_shares`), so the cost of the noise drawn is a hair below ρ.

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0.
    horizon : int or None, optional
        Known stream length T ≥ 1, or None (unbounded).
    estimate : {"honaker", "plain"}, optional
        Prefix estimate (stored as the attribute ``estimate_kind``: ``estimate()`` is the release).

    Examples
    --------
    >>> import numpy as np
    >>> tree = TreeAggregation(dim=2, sensitivity=1.0, rho=0.5, horizon=8)
    >>> est = tree.add_block(np.ones((5, 2)), np.random.default_rng(0), return_estimates=True)
    >>> est.shape, tree.n_seen, tree.describe()["levels"]
    ((5, 2), 5, 4)
    >>> round(tree.variance(), 3) <= tree.describe()["sigma"] ** 2 * 2   # 5 = 101₂: two nodes
    True
    """

    kind = "tree"
    option = "tree"
    _rows_per_record = 2

    def __init__(self, *, dim, sensitivity, rho, horizon=None, estimate="honaker"):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        if not isinstance(estimate, str):
            raise TypeError(f"estimate must be a str, one of {ESTIMATES}, got {estimate!r}")
        if estimate not in ESTIMATES:
            raise ValueError(f"estimate must be one of {ESTIMATES}, got {estimate!r}")
        self._estimate_kind = estimate
        if self.horizon is not None:
            self._levels = self.horizon.bit_length()
            shares = np.full(self._levels, self.rho / self._levels)
        else:
            self._levels = _UNBOUNDED_LEVELS
            h = np.arange(1, self._levels + 1, dtype=np.float64)
            shares = self.rho * 6.0 / (math.pi ** 2 * h * h)
        check_state_size(2 * (self._levels + 1) * self.dim, f"dim={self.dim!r} and {self._levels} levels")
        sigmas = noise_scales(np.full(self._levels, self.sensitivity), shares, self.sensitivity, self.rho)
        self._sigmas = sigmas
        self._scales = sigmas.copy()  # what the kernel adds (tests set it to 0)
        ls_var = np.empty(self._levels)
        ls_var[0] = sigmas[0] ** 2
        for lvl in range(1, self._levels):
            ls_var[lvl] = 1.0 / (1.0 / sigmas[lvl] ** 2 + 1.0 / (2.0 * ls_var[lvl - 1]))
        if estimate == "honaker":
            self._a = ls_var / sigmas ** 2
            self._a[0] = 1.0
            self._b = 1.0 - self._a
            self._level_var = ls_var
        else:
            self._a = np.ones(self._levels)
            self._b = np.zeros(self._levels)
            self._level_var = sigmas ** 2
        self._left_sums = np.zeros((self._levels, self.dim))
        self._left_est = np.zeros((self._levels, self.dim))
        self._work = np.zeros((2, self.dim))

    @property
    def levels(self) -> int:
        """int: tree levels held: ⌊log₂ horizon⌋ + 1, or 63 when unbounded."""
        return self._levels

    @property
    def estimate_kind(self) -> str:
        """str: the constructor's ``estimate`` ("honaker" or "plain")."""
        return self._estimate_kind

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho,
                "horizon": self.horizon, "estimate": self.estimate_kind}

    def _noise_rows(self, t0, m):
        t1 = t0 + m
        # Σ_{t=1}^{n} (trailing zeros of t) = n − popcount(n); one more node (level 0) per record
        return m + (t1 - _popcount(t1)) - (t0 - _popcount(t0))

    def _apply(self, V, Z, out=None, nodes=None):
        empty = np.empty((0, self.dim))
        _tree_add_block(V, Z, self._n_seen, self._scales, self._a, self._b, self._left_sums,
                        self._left_est, self._work, empty if out is None else out,
                        empty if nodes is None else nodes)
        self._n_seen += V.shape[0]

    def estimate(self):
        """The released prefix estimate at ``n_seen``: float64 (k,), zeros before the first record.

        Examples
        --------
        >>> import numpy as np
        >>> TreeAggregation(dim=3, sensitivity=1.0, rho=1.0).estimate().tolist()
        [0.0, 0.0, 0.0]
        """
        dest = np.empty(self.dim)
        _tree_prefix(self._left_est, self._n_seen, dest)
        return dest

    def _variance(self, t):
        return math.fsum(self._level_var[h] for h in range(t.bit_length()) if (t >> h) & 1)

    def level_variances(self) -> np.ndarray:
        """Per-coordinate variance of a complete subtree's estimate at each level (σ_h² when plain)."""
        return self._level_var.copy()

    def _level_rho(self) -> np.ndarray:
        return np.array([gaussian_rho(self.sensitivity, s) for s in self._sigmas])

    def _levels_in_use(self) -> int:
        """Levels shown in the privacy rows: all L with a horizon; those that released a node so far
        when unbounded (at least level 0)."""
        return self._levels if self.horizon is not None else max(1, self._n_seen.bit_length())

    def describe(self):
        """Public summary of the tree.

        Returns
        -------
        dict
            ``kind``, ``estimate``, ``dim``, ``sensitivity``, ``rho`` (the budget), ``rho_spent_bound``
            (Σ_h Δ²/(2σ_h²) over every level that can ever exist: the cost of the whole stream,
            ≤ ``rho``), ``horizon``, ``levels``, ``sigma`` (the common σ with a horizon, None when
            unbounded), ``sigmas`` (per level), ``kappa2`` (L with a horizon: a record is in one node
            per level; None when unbounded, where the levels have different σ_h), ``n_seen``.

        Examples
        --------
        >>> d = TreeAggregation(dim=1, sensitivity=1.0, rho=2.0, horizon=1000).describe()
        >>> d["levels"], d["kappa2"], round(d["sigma"], 6)
        (10, 10, 1.581139)
        """
        out = self._common_description()
        out.update(
            estimate=self.estimate_kind, levels=self._levels,
            sigma=float(self._sigmas[0]) if self.horizon is not None else None,
            sigmas=self._sigmas.tolist(),
            kappa2=self._levels if self.horizon is not None else None,
            rho_spent_bound=math.fsum(self._level_rho()),
        )
        return out

    def privacy_rows(self):
        """One row per tree level: ``what``, ``level``, ``nodes_released`` (so far), ``sigma`` and
        ``rho`` (Δ²/(2σ_h²): the level's share, paid once per record since a record is in one node
        of the level). With a horizon all L levels are listed; unbounded, the levels that have
        released a node so far (the later ones are paid for by the remaining share of ρ).

        Examples
        --------
        >>> rows = TreeAggregation(dim=1, sensitivity=1.0, rho=1.0, horizon=4).privacy_rows()
        >>> [(r["level"], r["nodes_released"]) for r in rows]
        [(0, 0), (1, 0), (2, 0)]
        """
        rho = self._level_rho()
        return [{"what": f"tree level {h}", "level": h, "nodes_released": self._n_seen >> h,
                 "sigma": float(self._sigmas[h]), "rho": float(rho[h])}
                for h in range(self._levels_in_use())]

    # -- state ---------------------------------------------------------------------------------------
    def _array_shapes(self):
        shape = (self._levels, self.dim)
        return {"left_sums": shape, "left_estimates": shape}

    def _live_mask(self, n):
        """Levels whose stored left node is still needed: the set bits of n."""
        return np.array([(n >> h) & 1 == 1 for h in range(self._levels)])

    def _export_arrays(self):
        live = self._live_mask(self._n_seen)[:, None]
        # rows of the cleared bits are stale (never read again): exported as zeros, so that a state
        # is a function of n_seen and the live nodes only, and can be checked against n_seen
        return {"left_sums": np.where(live, self._left_sums, 0.0),
                "left_estimates": np.where(live, self._left_est, 0.0)}

    def _import_arrays(self, n_seen, arrays):
        dead = ~self._live_mask(n_seen)
        for name, value in arrays.items():
            rows = np.flatnonzero(dead & np.any(value != 0.0, axis=1))
            if rows.size:
                raise ValueError(
                    f"arrays[{name!r}] row {int(rows[0])} is not zero, but n_seen={n_seen} has bit "
                    f"{int(rows[0])} clear: no node of that level is pending (inconsistent with n_seen)")
        self._left_sums = arrays["left_sums"]
        self._left_est = arrays["left_estimates"]
