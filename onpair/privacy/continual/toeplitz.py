"""The banded square-root factorisation of the prefix-sum matrix (a Gaussian matrix mechanism)."""

from __future__ import annotations

import math

import numpy as np

from ..gaussian import gaussian_rho
from ._kernels import _toeplitz_add_block, _toeplitz_release, _toeplitz_variance_advance
from .base import PrefixSumMechanism
from .limits import check_int, check_state_size, noise_scales

#: Default band of :class:`BandedToeplitz`, chosen from ``bench/continual.py`` (docs/continual_release.md):
#: the largest band whose arithmetic still hides behind drawing the noise at k = 462 (about 120,000
#: records/s on the development VM, as fast as b = 1); it beats the least-squares tree up to horizons
#: of about 2,000 records (at 10³: worst prefix variance 34 against 53, in units Δ²/(2ρ)). A longer
#: known horizon is better served by a band of about T/30 or by the tree (see the table).
DEFAULT_BAND = 64


def sqrt_toeplitz_coefficients(n):
    """The first n coefficients c_j = C(2j, j)/4^j of the square root of the prefix-sum matrix.

    They are the Taylor coefficients of (1 − x)^{−1/2}; the lower-triangular Toeplitz matrix C with
    first column c satisfies C·C = A (the lower-triangular matrix of ones).

    Parameters
    ----------
    n : int
        Number of coefficients, ≥ 1.

    Returns
    -------
    numpy.ndarray
        float64 (n,), by the recursion c_j = c_{j−1}·(2j − 1)/(2j) (relative error below j ulps).

    Examples
    --------
    >>> sqrt_toeplitz_coefficients(4).tolist()
    [1.0, 0.5, 0.375, 0.3125]
    """
    n = check_int(n, "n")
    j = np.arange(1, n, dtype=np.float64)
    return np.concatenate(([1.0], np.cumprod((2.0 * j - 1.0) / (2.0 * j))))


class BandedToeplitz(PrefixSumMechanism):
    """The square-root factorisation of the prefix-sum matrix, banded (a Gaussian matrix mechanism).

    With A the lower-triangular matrix of ones, A = B·C where C is lower-triangular Toeplitz with the
    square-root coefficients c_j = C(2j, j)/4^j (:func:`sqrt_toeplitz_coefficients`) truncated to the
    band b, and B = A·C⁻¹. The mechanism releases B(CV + Z) = S + B·Z, Z ~ N(0, σ²I), computed
    online in O(b·k) memory: Y = C⁻¹Z by Y_t = (Z_t − Σ_{j=1}^{b−1} c_j Y_{t−j})/c_0, then
    (BZ)_t = Σ_{s≤t} Y_s. With b ≥ T it is the exact square-root factorisation (B = C).

    Budget. κ² = max column norm² of C = Σ_{j<b'} c_j² with b' = min(b, horizon) (b when
    unbounded), independent of the stream length; σ = Δ·κ/√(2ρ) (× (1 + 10⁻⁹)), so any number of
    records costs at most ρ. With a horizon, more records are refused as in
    :class:`TreeAggregation`.

    Error. The estimate at t is S_t plus noise of per-coordinate variance σ²‖B_{t,:}‖² =
    σ²·Σ_{n<t} β_n², β the prefix sums of γ, the coefficients of 1/C(x). For t ≤ b it grows like
    σ²·ln(t)/π; beyond the band, β tends to 1/Σ_{j<b} c_j ≈ √(π/(4b)) and the variance grows
    linearly in t: the band should be of the order of the horizon (see docs/continual_release.md).

    Parameters
    ----------
    dim : int
        k ≥ 1.
    sensitivity : float
        Δ > 0 (ℓ2, replacement of one record).
    rho : float
        zCDP budget ρ > 0.
    band : int, optional
        b ≥ 1 (b = 1 releases S_t + Σ_{s≤t} Z_s: input perturbation). Default :data:`DEFAULT_BAND`.
    horizon : int or None, optional
        Known stream length T; bands beyond T are cut to T (the same releases for less noise).

    Examples
    --------
    >>> import numpy as np
    >>> mech = BandedToeplitz(dim=2, sensitivity=1.0, rho=0.5, band=4)
    >>> mech.add_block(np.ones((3, 2)), np.random.default_rng(0)) is None
    True
    >>> mech.estimate().shape, mech.describe()["kappa2"]
    ((2,), 1.48828125)
    >>> round(mech.variance(1), 4)   # σ² = Δ²κ²/(2ρ) at t = 1 (B's first row is (1))
    1.4883
    """

    kind = "banded_toeplitz"
    option = "toeplitz"

    def __init__(self, *, dim, sensitivity, rho, band=DEFAULT_BAND, horizon=None):
        super().__init__(dim=dim, sensitivity=sensitivity, rho=rho, horizon=horizon)
        self._band_given = check_int(band, "band", maximum=2**31)
        self._band = self._band_given if self.horizon is None else min(self._band_given, self.horizon)
        # the coefficients, the noise rows and the variance series' ring, the two running sums
        check_state_size(self._band * (self.dim + 2) + 2 * self.dim, f"dim={self.dim!r} and band={self._band!r}")
        self._c = sqrt_toeplitz_coefficients(self._band)
        self._kappa2 = math.fsum(self._c * self._c)
        self._sigma_nominal = float(noise_scales(np.array([self.sensitivity * math.sqrt(self.kappa2)]),
                                                  np.array([self.rho]), self.sensitivity, self.rho)[0])
        self._sigma = self._sigma_nominal  # what the kernel adds (tests set it to 0)
        self._ring = np.zeros((self._band - 1, self.dim))
        self._prefix_sum = np.zeros(self.dim)
        self._noise_sum = np.zeros(self.dim)
        self._reset_tracker()

    @property
    def band(self) -> int:
        """int: the band as given (``describe()['band_used']`` is min(band, horizon))."""
        return self._band_given

    @property
    def kappa2(self) -> float:
        """float: κ² = Σ_{j<band_used} c_j², the largest column norm² of C."""
        return self._kappa2

    def get_params(self) -> dict:
        return {"dim": self.dim, "sensitivity": self.sensitivity, "rho": self.rho, "band": self.band,
                "horizon": self.horizon}

    def _noise_rows(self, t0, m):
        return m

    def _apply(self, V, Z, out=None, nodes=None):
        _toeplitz_add_block(V, Z, self._n_seen, self._c, self._sigma, self._ring, self._prefix_sum,
                            self._noise_sum, np.empty((0, self.dim)) if out is None else out)
        self._n_seen += V.shape[0]

    def estimate(self):
        """The released prefix estimate S_t + σ(BZ)_t at t = ``n_seen``: float64 (k,).

        Examples
        --------
        >>> BandedToeplitz(dim=2, sensitivity=1.0, rho=1.0).estimate().tolist()
        [0.0, 0.0]
        """
        dest = np.empty(self.dim)
        _toeplitz_release(self._prefix_sum, self._noise_sum, self._sigma, dest)
        return dest

    # -- variance: a public series, advanced lazily --------------------------------------------------
    def _reset_tracker(self):
        # n_done, γ ring, β_{n_done−1}, Σ_{n<n_done} β², converged (then β is final and n_done is where)
        self._tracker = (0, np.zeros(max(self._band - 1, 0)), 0.0, 0.0, False)

    def _series_sum(self, t):
        """Σ_{n<t} β_n², a function of t alone: the stored series is continued when t is ahead of it
        and recomputed from the start when t is behind it; past convergence it is closed-form."""
        n_done, ring, beta, sumsq, converged = self._tracker
        if t < n_done:
            ring = np.zeros_like(ring)
            beta, sumsq, n_stop, converged = _toeplitz_variance_advance(self._c, ring, 0, t, 0.0, 0.0)
            return sumsq + (t - n_stop) * beta * beta if converged else sumsq
        if not converged:
            beta, sumsq, n_stop, converged = _toeplitz_variance_advance(self._c, ring, n_done, t, beta, sumsq)
            self._tracker = (n_stop, ring, beta, sumsq, converged)
            n_done = n_stop
        return sumsq + (t - n_done) * beta * beta if converged else sumsq

    def _variance(self, t):
        return self._sigma_nominal ** 2 * self._series_sum(t)

    def describe(self):
        """Public summary of the factorisation.

        Returns
        -------
        dict
            ``kind``, ``dim``, ``sensitivity``, ``rho`` (budget), ``rho_spent_bound`` (Δ²κ²/(2σ²) ≤ ρ,
            for any number of records), ``horizon``, ``band`` (as given), ``band_used``
            (min(band, horizon)), ``kappa2`` (Σ_{j<band_used} c_j²), ``sigma``, ``n_seen``.

        Examples
        --------
        >>> d = BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0, band=2).describe()
        >>> d["band_used"], d["kappa2"]
        (2, 1.25)
        """
        out = self._common_description()
        out.update(band=self.band, band_used=self._band, kappa2=self.kappa2, sigma=self._sigma_nominal,
                   rho_spent_bound=self._rho_spent())
        return out

    def _rho_spent(self):
        return gaussian_rho(self.sensitivity * math.sqrt(self.kappa2), self._sigma_nominal)

    def privacy_rows(self):
        """One row for the factorisation: ``what``, ``level`` (None), ``nodes_released`` (noisy
        outputs so far, one per record), ``sigma``, ``kappa2`` and ``rho`` (Δ²κ²/(2σ²), the whole
        stream's cost).

        Examples
        --------
        >>> [r["nodes_released"] for r in BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0).privacy_rows()]
        [0]
        """
        return [{"what": f"banded square-root Toeplitz factorisation (band {self._band})", "level": None,
                 "nodes_released": self._n_seen, "sigma": self._sigma_nominal, "kappa2": self.kappa2,
                 "rho": self._rho_spent()}]

    # -- state ---------------------------------------------------------------------------------------
    def _array_shapes(self):
        return {"prefix_sum": (self.dim,), "noise_sum": (self.dim,), "noise_history": (self._band - 1, self.dim)}

    def _export_arrays(self):
        R = self._band - 1
        history = np.zeros((R, self.dim))
        # history[j−1] = Y_{n+1−j} for j = 1 … R, newest first (zero where n + 1 − j < 1): the rows
        # record n + 1 needs, in a canonical order that does not depend on the ring's position
        for j in range(1, min(R, self._n_seen) + 1):
            history[j - 1] = self._ring[(self._n_seen - j) % R]
        return {"prefix_sum": self._prefix_sum.copy(), "noise_sum": self._noise_sum.copy(),
                "noise_history": history}

    def _import_arrays(self, n_seen, arrays):
        R = self._band - 1
        history = arrays["noise_history"]
        filled = min(R, n_seen)
        rows = np.flatnonzero(np.any(history[filled:] != 0.0, axis=1))
        if rows.size:
            raise ValueError(f"arrays['noise_history'] row {filled + int(rows[0])} is not zero, but only "
                             f"{n_seen} records were seen (inconsistent with n_seen)")
        if n_seen == 0:
            for name in ("prefix_sum", "noise_sum"):
                if np.any(arrays[name] != 0.0):
                    raise ValueError(f"arrays[{name!r}] is not zero, but n_seen=0 (inconsistent with n_seen)")
        ring = np.zeros((R, self.dim))
        for j in range(1, filled + 1):
            ring[(n_seen - j) % R] = history[j - 1]
        self._ring = ring
        self._prefix_sum = arrays["prefix_sum"]
        self._noise_sum = arrays["noise_sum"]
