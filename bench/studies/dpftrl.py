"""DP-FTRL for private online pairwise (AUC) learning: a benchmark prototype, not a library feature.

The learner releases, after every record, a noisy prefix sum of the round gradients through one of the
library's continual-release mechanisms (:class:`onpair.privacy.TreeAggregation`,
:class:`onpair.privacy.BandedToeplitz`) and plays follow-the-regularised-leader on it (Kairouz et al.
2021). Everything it publishes (the prefix estimates, the iterates, every score) is computed from the
mechanism's noisy outputs. ``bench/studies/dpftrl_study.py`` compares it with ``OnPairStrC`` (output
perturbation of the online iterate) and ``OnPairStats`` (released class statistics);
``docs/dpftrl.md`` has the results.

Algorithm
---------
Records are mapped onto the diameter-2 domain by the public bounds (clipped to them), labels are ±1,
C = {‖w‖ ≤ R}, ℓ is the AUC logistic pair loss (docs/algorithms.md#auc-logistic), G = G(R) its
Lipschitz constant and Γ = G its pair-change constant (docs/algorithms.md#pair-change). At round t:

1. (prediction, for progressive validation) score z_t with the public w_{t−1};
2. round gradient at the public point w_{t−1}:
       g_t = ω_t · Σ_{i ∈ B_t} ∇_w ℓ(w_{t−1}; z_t, z_i),   g_1 = 0,
   where B_t is the public set of stored positions (``history="full"``: {1, …, t−1}; ``history=s``:
   the FIFO buffer {t−s, …, t−1} ∩ [1, t−1]) and ω_t a public weight,
       ``divisor="stored"``: ω_t = 1/|B_t|          (the library's L̂_t: κ_t = 1/(t−1) or 1/|B_t|),
       ``divisor="fixed"``:  ω_t = 1/max(|B_t|, m)  (m = s for a buffer, m = the horizon T for the
                                                    full history: every pair weighs the same 1/m);
   nothing from the regulariser enters g_t;
3. the mechanism takes g_t and releases Ĝ_t ≈ Σ_{u≤t} g_u;
4. w_t = argmin_{w∈C} ⟨Ĝ_t, w⟩ + (λt/2)‖w‖² = Π_C[−Ĝ_t/(λt)]: FTRL on the linearised round losses
   ⟨g_u, w⟩ + (λ/2)‖w‖², u ≤ t, i.e. the same λ-strongly convex objective as ``OnPairStrC`` (default
   λ = G(R)/R, R = 0.1).

*Why the strongly convex form.* C is a ball centred at 0, so Π_C is a radial rescaling: the released
direction is −Ĝ_t/‖Ĝ_t‖ whatever the scale (1/(λt) here, a constant η in the plain quadratic-regulariser
form w_t = Π_C[−ηĜ_t]). The two forms differ only in the norm of the point where the next gradient is
taken, which at R = 0.1 barely changes the logistic weights. The strongly convex form needs no step
size beyond the λ that OnPairStrC already uses, so the comparison isolates the release mechanism; and
its iterate noise ‖Ĝ_t − G_t‖/(λt) vanishes as t grows, where the fixed-η form's does not.

Cost (the theorem this prototype relies on)
--------------------------------------------
*The per-round change.* Fix any w ∈ C and two streams S, S' that differ only at position p. Then,
at every round t, ‖g_t(S; w) − g_t(S'; w)‖ ≤ Γ·Δ^{(p)}_t with

    Δ^{(p)}_t = 0                   for t < p   (B_t ⊂ [1, t−1] does not contain p),
    Δ^{(p)}_p = ω_p·|B_p|           (every term of g_p contains z_p and changes by at most Γ;
                                     ≤ 1; 0 at p = 1, where B_1 = ∅),
    Δ^{(p)}_t = ω_t·1[p ∈ B_t]      for t > p   (only the pair (z_t, z_p) changes, by at most Γ; a
                                     position is in B_t at most once).

Γ is a bound for a pair whose **other** record is replaced, and, the loss being symmetric in its two
records, also for a pair whose round record is replaced (the proof in
``onpair.core.losses.PairLoss.pair_change`` covers both). For a record replayed at several positions P
(passes over a data set), go from S to S' through streams that differ in one position at a time; the
triangle inequality gives ‖g_t(S; w) − g_t(S'; w)‖ ≤ Γ·Δ^{(P)}_t with Δ^{(P)} = Σ_{p∈P} Δ^{(p)}.
For the full history with the stored divisor this is Δ_p = 1 and Δ_t = 1/(t − 1) after it: the record
keeps moving every later gradient, ‖Δ‖₁ = 1 + H_{T−1} − H_{p−1} ≈ 1 + ln(T/p); with a FIFO buffer and
the fixed divisor, ‖Δ‖₁ ≤ 2.

*The mechanisms as encoders.* Both mechanisms release, row by row, o_r = Σ_s E_{rs}·g_s + σ·ξ_r with
ξ_r ~ N(0, I_d) independent of everything else, an entrywise **non-negative** public matrix E, and row
r released at a round τ(r) ≥ every s with E_{rs} ≠ 0; everything else they publish is post-processing
of the rows released so far:

* ``TreeAggregation(horizon=T)``: one row per complete dyadic node (h, i), i·2^h ≤ T, with
  E_{(h,i),s} = 1[(i−1)2^h < s ≤ i·2^h], τ = i·2^h, one σ for all L = ⌊log₂T⌋ + 1 levels (the
  least-squares prefix estimate is post-processing);
* ``BandedToeplitz(band=b, horizon=T)``: rows t = 1 … T with E_{ts} = c_{t−s} for 0 ≤ t − s < min(b, T),
  c_j = C(2j, j)/4^j > 0, τ(t) = t; the release B(E·G + σZ) is post-processing (B = A·E⁻¹ is
  lower-triangular, so the estimates up to t are a function of the rows up to t).

**Theorem.** Let μ = Γ·max_P ‖E·Δ^{(P)}‖₂/σ, the maximum over the position sets of one record
(P = {j} for one pass; P = {j, j + n, …, j + (k−1)n} for k passes over n records). Then the whole
transcript (every row, hence every estimate, iterate and score) is μ-GDP and (μ²/2)-zCDP with respect
to replacing one record, even though each g_t is computed at an iterate that depends on earlier
outputs.

*Proof.* Fix S, S' differing at the positions P of one record. Order the rows by release round (rows
of the same round in any fixed order). By the assumption below, g_s is a deterministic function of
S and of the rows released before round s; since τ(r) ≥ s for every s in row r, those rows precede r.
So, given the earlier rows o_{<r}, row r is N(m_r(S; o_{<r}), σ²I) with
m_r = Σ_s E_{rs}·g_s(S; o_{<r}), and under S' the mean is m_r(S'; o_{<r}) with the **same** history:
both runs evaluate their gradients at the same public points. By the per-round change (at those common
points) and E ≥ 0,

    ‖m_r(S; o_{<r}) − m_r(S'; o_{<r})‖ ≤ Σ_s E_{rs}·Γ·Δ^{(P)}_s = Γ·(E·Δ^{(P)})_r =: σ·μ_r,

a bound that holds for every history. Each row is therefore, conditionally on the past, a Gaussian
mechanism whose trade-off function for this pair is at least G_{μ_r} and whose Rényi divergence of
order α is at most αμ_r²/2. Adaptive composition for one fixed pair of inputs (Dong, Roth & Su 2022,
Thm. 3.2 with Cor. 3.3 for trade-off functions; the chain rule of Rényi divergence, Mironov 2017
Prop. 1 / Bun & Steinke 2016 Lemma 2.3, for zCDP) gives G_{√(Σ_r μ_r²)} and α·Σ_r μ_r²/2, and
Σ_r μ_r² = Γ²‖E·Δ^{(P)}‖²/σ². Take the worst P. Post-processing (estimates, iterates, projections,
scores) costs nothing. ∎

So with ρ the record-level budget (from (ε, δ) by the library's exact Gaussian conversion, valid for
μ-GDP mechanisms), the noise is σ = Γ·M/√(2ρ) with M = max_P ‖E·Δ^{(P)}‖: the usual DP-FTRL
calibration σ = Γ·κ/√(2ρ) (κ the largest column norm of E) with κ replaced by M. :func:`cost_norm`
computes M **exactly**, by brute force over every position j (prefix sums for the tree, an FFT
convolution for the factorisation; both cross-checked against explicit matrices in
:func:`self_check`), and the learner multiplies it by 1 + 10⁻⁶ against rounding. For fixed P, Γ·‖EΔ‖ is
the supremum of ‖E·δ‖ over all change patterns with ‖δ_t‖ ≤ ΓΔ_t (E ≥ 0: attained with parallel
δ_t), so nothing better follows from the per-round bounds alone. The mechanism objects are built with
``sensitivity = Γ·M/κ`` so that their own calibration σ = sensitivity·κ/√(2ρ) is this σ (asserted).

**The assumption relied on (adaptivity).** (A1) g_s is a deterministic function of the records at
positions ≤ s and of the mechanism's outputs released before round s, plus public randomness drawn
independently of the data; in particular no noiseless internal state (an iterate not computed from the
releases, a data-dependent divisor or buffer) is used. (A2) The noise rows are fresh N(0, σ²I),
independent of the data and of each other. (A3) E ≥ 0 and causal (τ(r) ≥ every s in row r). The same
coupling is what Denisov et al. (2022) use for Gaussian matrix mechanisms with adaptively chosen inputs
(lower-triangular encoders); the pairwise twist, that one record moves many inputs, is handled by
bounding each row's conditional shift by (E·Δ)_r, which needs E ≥ 0 (or |E| in the bound).

What is not covered or not used
-------------------------------
* **Reservoir buffers.** Provable for the realised (public) slots, but a record can stay in the buffer
  for the rest of the stream, so ‖Δ‖₁ reaches 1 + (T − p)/s, worse than the full history: not tested.
* **A divisor counting opposite-label records** (a data-dependent weight): a changed label changes
  every later weight, and the per-round bound above fails. Only public divisors are used.
* **Square loss**: Γ = 2G (docs/algorithms.md#auc-square): provable the same way, not tested.
* **Several passes** are protected as a group (P above), not per position.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from onpair import FeatureBounds
from onpair.giga._kernels import _history_gradient, _pair_coefficients, _weighted_rows
from onpair.core.losses import LOGISTIC, get_loss
from onpair.privacy import BandedToeplitz, TreeAggregation
from onpair.privacy.continual import sqrt_toeplitz_coefficients
from onpair.privacy.conversions import rho_from_dp

LOSS = get_loss("logistic")
#: Relative margin on the computed cost norm M (the sums are exact to ~1e-13; FFT rounding included).
COST_MARGIN = 1.0 + 1e-6
MECHANISMS = ("tree", "toeplitz")
DIVISORS = ("stored", "fixed")


# ---------------------------------------------------------------------------------------------------
# the influence of one record on the gradient stream, and its cost through an encoder
# ---------------------------------------------------------------------------------------------------
def stored_counts(T: int, history) -> np.ndarray:
    """|B_t| for t = 1 … T (public)."""
    t = np.arange(1, T + 1)
    before = t - 1
    return before if history == "full" else np.minimum(before, int(history))


def weights(T: int, history, divisor: str) -> np.ndarray:
    """ω_t for t = 1 … T (0 where B_t is empty)."""
    if divisor not in DIVISORS:
        raise ValueError(f"divisor must be one of {DIVISORS}, got {divisor!r}")
    B = stored_counts(T, history)
    floor = 1 if divisor == "stored" else (T if history == "full" else int(history))
    return np.where(B > 0, 1.0 / np.maximum(B, floor), 0.0)


def influence(T: int, history, divisor: str, *, passes: int = 1, period: int | None = None) -> np.ndarray:
    """Δ^{(P)} for every record, in units of Γ: row j − 1 is the record at positions j, j + n, …
    (n = ``period``, ``passes`` positions in all), shape (n, T). One pass: period = T."""
    period = T if period is None else int(period)
    if passes * period != T:
        raise ValueError(f"passes × period must equal the horizon: {passes} × {period} != {T}")
    B = stored_counts(T, history)
    w = weights(T, history, divisor)
    D = np.zeros((period, T))
    rows = np.arange(period)
    for c in range(passes):
        p = rows + c * period + 1  # positions, 1-based
        D[rows, p - 1] += B[p - 1] * w[p - 1]  # round p: every term of g_p holds the record
        if history == "full":
            # every later round t pairs z_t with it once: ω_t, t > p (cumulative trick: a row-wise suffix)
            after = np.arange(T)[None, :] >= p[:, None]
            D += np.where(after, w[None, :], 0.0)
        else:
            s = int(history)
            for lag in range(1, s + 1):  # it is in B_t for t = p + 1 … p + s
                t = p + lag
                ok = t <= T
                D[rows[ok], t[ok] - 1] += w[t[ok] - 1]
    return D


def tree_norms2(D: np.ndarray) -> np.ndarray:
    """‖E·Δ‖² for every row Δ of D, E the node matrix of the binary tree with horizon T = D.shape[1]."""
    n, T = D.shape
    P = np.zeros((n, T + 1))
    np.cumsum(D, axis=1, out=P[:, 1:])
    total = np.zeros(n)
    for h in range(T.bit_length()):
        ends = np.arange(0, (T >> h) + 1) << h  # node (h, i) covers (ends[i−1], ends[i]]
        S = P[:, ends[1:]] - P[:, ends[:-1]]
        total += np.einsum("ij,ij->i", S, S)
    return total


def toeplitz_norms2(D: np.ndarray, band: int) -> np.ndarray:
    """‖E·Δ‖² for every row Δ of D, E the banded square-root Toeplitz encoder with horizon T = D.shape[1]
    (band cut to T, as :class:`BandedToeplitz` does)."""
    n, T = D.shape
    b = min(int(band), T)
    c = sqrt_toeplitz_coefficients(b)
    size = 1 << (T + b).bit_length()
    F = np.fft.irfft(np.fft.rfft(D, size, axis=1) * np.fft.rfft(c, size)[None, :], size, axis=1)[:, :T]
    return np.einsum("ij,ij->i", F, F)


def encoder_kappa2(mechanism: str, T: int, band: int | None = None) -> float:
    """κ², the largest squared column norm of the encoder (the cost of one record that moves one input)."""
    if mechanism == "tree":
        return float(T.bit_length())
    return float(math.fsum(sqrt_toeplitz_coefficients(min(int(band), T)) ** 2))


def cost_norm(T: int, history, divisor: str, mechanism: str, band: int | None = None, *, passes: int = 1,
              period: int | None = None, return_all: bool = False):
    """M = max_P ‖E·Δ^{(P)}‖ in units of Γ (exact, by brute force over every record).

    Returns M, or (M, per-record norms) with ``return_all``."""
    D = influence(T, history, divisor, passes=passes, period=period)
    chunks = []
    step = max(1, (1 << 20) // T)  # keep the FFT scratch bounded
    for lo in range(0, D.shape[0], step):
        part = D[lo:lo + step]
        chunks.append(tree_norms2(part) if mechanism == "tree" else toeplitz_norms2(part, band))
    norms2 = np.concatenate(chunks)
    M = float(math.sqrt(norms2.max()))
    return (M, np.sqrt(norms2)) if return_all else M


@functools.lru_cache(maxsize=None)
def cached_cost_norm(T, history, divisor, mechanism, band, passes, period) -> float:
    """:func:`cost_norm` memoised (the benchmark builds many learners with the same public settings)."""
    return cost_norm(T, history, divisor, mechanism, band, passes=passes, period=period)


def explicit_encoder(mechanism: str, T: int, band: int | None = None) -> np.ndarray:
    """The encoder E as a dense matrix (for checks at small T)."""
    if mechanism == "tree":
        rows = []
        for h in range(T.bit_length()):
            for i in range(1, (T >> h) + 1):
                row = np.zeros(T)
                row[(i - 1) << h:i << h] = 1.0
                rows.append(row)
        return np.array(rows)
    b = min(int(band), T)
    c = sqrt_toeplitz_coefficients(b)
    E = np.zeros((T, T))
    for t in range(T):
        for j in range(b):
            if t - j >= 0:
                E[t, t - j] = c[j]
    return E


def group_factor(mechanism: str, T: int, band: int, passes: int, period: int) -> float:
    """Record-level cost of a plain continual release (one input per position, ‖Δv‖ ≤ Δ) when a record is
    replayed at ``passes`` positions ``period`` apart, relative to its one-position cost κ²:
    max_j ‖E·Σ_c e_{j+c·period}‖²/κ² (used for OnPairStats' group accounting; ≤ passes²)."""
    D = np.zeros((period, T))
    rows = np.arange(period)
    for c in range(passes):
        D[rows, rows + c * period] = 1.0
    n2 = tree_norms2(D) if mechanism == "tree" else toeplitz_norms2(D, band)
    return float(n2.max()) / encoder_kappa2(mechanism, T, band)


# ---------------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------------
class PairwiseDPFTRL:
    """DP-FTRL on the pairwise AUC logistic loss (the module docstring has the algorithm and the proof).

    Parameters
    ----------
    epsilon, delta : float
        The record-level guarantee for the whole stream (every release), with the library's exact
        Gaussian (ε, δ) ↔ ρ conversion (``accounting``).
    horizon : int
        The public stream length T (all passes included): the mechanisms are sized for it.
    passes : int
        How many times each record occurs (period ``horizon // passes``): the cost is the group's.
    mechanism : {"tree", "toeplitz"}
    band : int, optional
        Band of the factorisation (cut to the horizon).
    history : "full" or int
        The full history, or a FIFO buffer of that many records.
    divisor : {"stored", "fixed"}
        ω_t = 1/|B_t| or 1/max(|B_t|, m) (module docstring).
    radius : float
        R of the ball C.
    lam : float or "auto"
        λ of the strongly convex FTRL; "auto" = G(R)/R as the library's learners.
    bounds : (lower, upper)
        Public feature bounds.
    n_features : int, optional
        d (else fixed by the first record).
    accounting : str
        The (ε, δ) → ρ conversion of :mod:`onpair.privacy.conversions`; "gaussian" (default) is exact
        here, the transcript being μ-GDP.
    seed : int, optional
        Seeds the noise (experiments only).
    """

    def __init__(self, *, epsilon, delta, horizon, passes=1, mechanism="tree", band=64, history="full",
                 divisor="stored", radius=0.1, lam="auto", bounds=(0.0, 1.0), n_features=None,
                 accounting="gaussian", seed=None):
        if mechanism not in MECHANISMS:
            raise ValueError(f"mechanism must be one of {MECHANISMS}")
        self.horizon = int(horizon)
        self.passes = int(passes)
        self.mechanism, self.band, self.history, self.divisor = mechanism, band, history, divisor
        self.radius = float(radius)
        self.gamma = LOSS.pair_change(self.radius)
        self.lam = LOSS.lipschitz(self.radius) / self.radius if lam == "auto" else float(lam)
        self.rho = rho_from_dp(epsilon, delta, method=accounting)
        self.M = cached_cost_norm(self.horizon, history, divisor, mechanism, band if mechanism == "toeplitz" else None,
                                  self.passes, self.horizon // self.passes) * COST_MARGIN
        kappa2 = encoder_kappa2(mechanism, self.horizon, band)
        self.kappa2 = kappa2
        sensitivity = self.gamma * self.M / math.sqrt(kappa2)
        if mechanism == "tree":
            self._mech = TreeAggregation(dim=1 if n_features is None else n_features, sensitivity=sensitivity,
                                         rho=self.rho, horizon=self.horizon)
        else:
            self._mech = BandedToeplitz(dim=1 if n_features is None else n_features, sensitivity=sensitivity,
                                        rho=self.rho, band=band, horizon=self.horizon)
        self.sigma = float(self._mech.describe()["sigma"])
        required = self.gamma * self.M / COST_MARGIN / math.sqrt(2.0 * self.rho)
        assert self.sigma >= required, (self.sigma, required)
        self._bounds = FeatureBounds(*bounds)
        self._rng = np.random.default_rng(seed)
        self._t = 0
        self._dim = n_features
        self._ready = False
        if n_features is not None:
            self._allocate(n_features)

    # -- state -----------------------------------------------------------------------------------
    def _allocate(self, d):
        self._dim = d
        if self._mech.dim != d:  # rebuild with the right dimension, same calibration
            params = self._mech.get_params()
            params["dim"] = d
            self._mech = type(self._mech)(**params)
        self.w = np.zeros(d)
        self._grad = np.empty(d)
        cap = self.horizon if self.history == "full" else int(self.history)
        self._coef = np.empty(max(cap, 1))
        if self.history == "full":
            self._pos = np.empty((cap, d))
            self._neg = np.empty((cap, d))
            self._n_pos = self._n_neg = 0
        else:
            self._buf = np.zeros((cap, d))
            self._buf_sign = np.zeros(cap)
        self._floor = 1 if self.divisor == "stored" else (self.horizon if self.history == "full" else int(self.history))
        self._ready = True

    def map(self, X):
        """The public bounds map (records clipped to the bounds): the features the model scores."""
        Z, _ = self._bounds.transform(np.atleast_2d(np.asarray(X, dtype=np.float64)))
        return Z

    # -- one round -------------------------------------------------------------------------------
    def round_gradient(self, z, sign):
        """g_t at the public w_{t−1} for the mapped record z (sign ±1), round t = n_seen + 1."""
        t = self._t + 1
        g = self._grad
        if self.history == "full":
            n_stored = t - 1
            if sign > 0:
                _history_gradient(self.w, z, 1.0, self._neg, self._n_neg, LOGISTIC, self._coef, g)
            else:
                _history_gradient(self.w, z, -1.0, self._pos, self._n_pos, LOGISTIC, self._coef, g)
        else:
            s = int(self.history)
            n_stored = min(t - 1, s)
            if n_stored:
                _pair_coefficients(self.w, z, float(sign), self._buf, n_stored, LOGISTIC, self._coef)
                self._coef[:n_stored][self._buf_sign[:n_stored] == sign] = 0.0  # same label: no gradient
                total = _weighted_rows(self._coef, self._buf, n_stored, g)
                g *= -1.0
                g += total * z
            else:
                g[:] = 0.0
        if n_stored == 0:
            g[:] = 0.0
        else:
            g *= 1.0 / max(n_stored, self._floor)
        return g

    def learn_mapped(self, z, sign):
        """One round on a mapped record: gradient, release, FTRL step; the record joins the history."""
        if not self._ready:
            self._allocate(z.shape[0])
        g = self.round_gradient(z, sign)
        self._mech.add_one(g, self._rng)
        self._t += 1
        G_hat = self._mech.estimate()
        w = -G_hat / (self.lam * self._t)
        norm = float(np.sqrt(w @ w))
        if norm > self.radius:
            w *= self.radius / norm
        self.w = w
        if self.history == "full":
            if sign > 0:
                self._pos[self._n_pos] = z
                self._n_pos += 1
            else:
                self._neg[self._n_neg] = z
                self._n_neg += 1
        else:
            slot = (self._t - 1) % int(self.history)
            self._buf[slot] = z
            self._buf_sign[slot] = sign

    def learn_one(self, x, y):
        sign = 1.0 if y > 0 else -1.0
        self.learn_mapped(self.map(x)[0], sign)
        return self

    @property
    def model(self):
        """The public iterate w_t (computed from the releases only)."""
        return self.w.copy()

    def decision_function(self, X):
        return self.map(X) @ self.w

    def describe(self) -> dict:
        return {"mechanism": self.mechanism, "band": self.band, "history": self.history, "divisor": self.divisor,
                "horizon": self.horizon, "passes": self.passes, "radius": self.radius, "lam": self.lam,
                "gamma": self.gamma, "rho": self.rho, "M": self.M, "kappa2": self.kappa2, "sigma": self.sigma,
                "noise_multiplier_vs_plain": self.M / math.sqrt(self.kappa2)}


# ---------------------------------------------------------------------------------------------------
# self-checks (run by bench/studies/dpftrl_study.py before anything is measured)
# ---------------------------------------------------------------------------------------------------
def _naive_round_gradient(w, Z, signs, t, history, divisor, T):
    """g_t from the definition (NumPy, one pair at a time)."""
    z, s = Z[t - 1], signs[t - 1]
    if history == "full":
        stored = list(range(1, t))
    else:
        stored = list(range(max(1, t - int(history)), t))
    if not stored:
        return np.zeros(Z.shape[1])
    floor = 1 if divisor == "stored" else (T if history == "full" else int(history))
    g = np.zeros(Z.shape[1])
    for i in stored:
        if signs[i - 1] == s:
            continue
        p = (z - Z[i - 1]) if s > 0 else (Z[i - 1] - z)  # x⁺ − x⁻
        u = float(w @ p)
        g += LOSS.derivative(u) * p  # ∇_w ℓ(u) = ℓ'(u)·p
    return g / max(len(stored), floor)


def self_check(seed: int = 0) -> list[str]:
    """Checks the pieces the theorem uses; raises AssertionError on a failure, returns what was checked."""
    rng = np.random.default_rng(seed)
    done = []
    # 1. the fast cost norms equal ‖E·Δ‖ with explicit matrices, and the influence matches its definition
    for T in (1, 2, 7, 37, 64):
        for history in ("full", 1, 5):
            for divisor in DIVISORS:
                D = influence(T, history, divisor)
                for mech, band in (("tree", None), ("toeplitz", 3), ("toeplitz", 64)):
                    E = explicit_encoder(mech, T, band)
                    exact = np.sqrt(((D @ E.T) ** 2).sum(1))
                    fast = np.sqrt(tree_norms2(D) if mech == "tree" else toeplitz_norms2(D, band))
                    assert np.allclose(fast, exact, rtol=1e-12, atol=1e-12), (T, history, divisor, mech)
                    kap = encoder_kappa2(mech, T, band)
                    assert abs(kap - (E ** 2).sum(0).max()) < 1e-12 * max(1.0, kap)
    for passes, n in ((2, 5), (4, 9)):
        T = passes * n
        for history in ("full", 3):
            D = influence(T, history, "stored", passes=passes, period=n)
            single = influence(T, history, "stored")
            for j in range(n):
                assert np.allclose(D[j], sum(single[j + c * n] for c in range(passes)))
    done.append("cost norms: fast routines = ‖E·Δ‖ with explicit tree/Toeplitz matrices (T ≤ 64); group "
                "influence = sum of the copies' influences")
    # 2. the library's encoders: σ·κ/√(2ρ) calibration and κ² as computed here
    for T in (37, 256, 1250):
        tree = TreeAggregation(dim=1, sensitivity=1.0, rho=0.5, horizon=T)
        assert tree.describe()["kappa2"] == encoder_kappa2("tree", T)
        band = BandedToeplitz(dim=1, sensitivity=1.0, rho=0.5, band=64, horizon=T)
        assert abs(band.kappa2 - encoder_kappa2("toeplitz", T, 64)) < 1e-12
    done.append("κ² of TreeAggregation/BandedToeplitz = the encoders' largest squared column norm")
    # 3. the round gradient kernel = the definition, and the per-round change ≤ Γ·Δ_t at common points
    T, d = 40, 4
    bounds = FeatureBounds(0.0, 1.0)
    worst = 0.0
    for history in ("full", 6):
        for divisor in DIVISORS:
            for trial in range(12):
                X = rng.uniform(0, 1, size=(T, d))
                y = np.where(rng.random(T) < 0.5, 1.0, -1.0)
                j = int(rng.integers(1, T + 1))
                X2, y2 = X.copy(), y.copy()
                X2[j - 1] = rng.choice([0.0, 1.0], size=d) if trial % 2 else rng.uniform(0, 1, size=d)
                y2[j - 1] = -y[j - 1] if trial % 3 else y[j - 1]
                Z, _ = bounds.transform(X)
                Z2, _ = bounds.transform(X2)
                learner = PairwiseDPFTRL(epsilon=1.0, delta=1e-5, horizon=T, history=history, divisor=divisor,
                                         radius=0.5, n_features=d, seed=trial)
                twin = PairwiseDPFTRL(epsilon=1.0, delta=1e-5, horizon=T, history=history, divisor=divisor,
                                      radius=0.5, n_features=d, seed=trial)
                Dj = influence(T, history, divisor)[j - 1]
                for t in range(1, T + 1):
                    w = rng.standard_normal(d)
                    w *= 0.5 * rng.random() / np.linalg.norm(w)  # any point of C
                    learner.w = w.copy()
                    twin.w = w.copy()
                    g = learner.round_gradient(Z[t - 1], y[t - 1]).copy()
                    g2 = twin.round_gradient(Z2[t - 1], y2[t - 1]).copy()
                    naive = _naive_round_gradient(w, Z, y, t, history, divisor, T)
                    assert np.allclose(g, naive, rtol=1e-9, atol=1e-12), (history, divisor, t)
                    change = float(np.linalg.norm(g - g2))
                    bound = learner.gamma * Dj[t - 1]
                    assert change <= bound * (1 + 1e-9) + 1e-15, (history, divisor, t, j, change, bound)
                    if bound > 0:
                        worst = max(worst, change / bound)
                    # advance both histories with their own records (same public w)
                    learner.learn_mapped(Z[t - 1], y[t - 1])
                    twin.learn_mapped(Z2[t - 1], y2[t - 1])
    done.append(f"round gradient = its definition (NumPy, pair by pair); sampled per-round change ≤ Γ·Δ_t on "
                f"neighbouring streams at common points (largest ratio seen {worst:.2f})")
    return done
