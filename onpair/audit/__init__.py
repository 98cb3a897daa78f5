"""Empirical privacy audit: a statistically valid **lower bound** on the ε an implementation has.

The accounting in :mod:`onpair.privacy` gives an *upper* bound on ε (what is proven). An audit runs the
released mechanism many times on two neighbouring data sets D and D′ and measures how well a simple
test tells them apart. (ε, δ)-DP implies, for **every** test that says "D′" or "D",

    FPR + e^ε·FNR ≥ 1 − δ   and   FNR + e^ε·FPR ≥ 1 − δ,

with FPR = P(test says D′ | D) and FNR = P(test says D | D′) (Kairouz, Oh and Viswanath 2015). So

    ε ≥ ε_lower = max(0, log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺))

whenever FPR ≤ FPR⁺ and FNR ≤ FNR⁺ (Jagielski, Ullman and Oprea 2020; Nasr et al. 2021). Here FPR⁺ and
FNR⁺ are the upper ends of two-sided Clopper–Pearson intervals at the audit's ``confidence`` (each is a
one-sided bound at level 1 − (1 − confidence)/2, so by a union bound both hold together with
probability ≥ ``confidence``). An implementation that really is (ε, δ)-DP therefore shows
ε_lower > ε with probability at most 1 − ``confidence``; an ε_lower above the claim is evidence of a bug
(too little noise, an unpaid release, a sensitivity too small).

**How the test is chosen (statistical validity).** Each run reduces the released model to a scalar
statistic (by default ⟨model, u⟩ with u the canary's direction). The runs on each data set are split in
two halves: the threshold and the side of it that means "D′" are chosen on the first half (the candidate
with the largest ε estimate computed the same way), and FPR, FNR and their bounds are counted on the
second half only, with the test fixed. The Clopper–Pearson bounds are therefore exact for a test chosen
in advance; no multiple-comparison correction is needed, at the price of using half the runs.

**Neighbouring data (the canary).** :func:`neighbouring_datasets`: records in the public box [0, 1]^d
(mapped by :class:`onpair.bounds.FeatureBounds` onto [−1/√d, 1/√d]^d), D′ = D with its **last** record
replaced by the canary, the box corner (1, …, 1) (the mapped point u = (1, …, 1)/√d on the unit sphere)
with the rarer label (+1). The default ``data="adversarial"`` D puts every other record at the opposite
corner −u with label −1 and the replaced record at −u with label +1: in D every opposite-label pair has
x⁺ − x⁻ = 0 (no gradient, the model stays at its data-independent start), while in D′ the canary pairs
with all n − 1 other records at the domain's full diameter 2, so the change of the released model is as
large as the sensitivity analysis allows (up to the loss's 2/G(R), see below) and points along u.
``data="random"`` draws D uniformly in the box with about 30 % positives instead (a weaker, more typical
audit). For the online learners the canary is the last record, whose whole influence is one fresh step (the
ledger charges Γη_n for it); the offline estimators stream the data in their own random (public) order, so the canary's
position varies from run to run.

**Presets** (:data:`PRESETS`, ``onpair audit ALGO``): ``onpairstrc``, ``onpairc`` (one release at n),
``offpairstrc``, ``offpairc`` (last iterate), ``gradient`` (Kang et al., T = 1), ``sgd`` (Yang et al.,
T = n), the ``reference`` Gaussian mechanism calibrated exactly to (ε, δ) on a sensitivity-1 query (what
this many runs typically show for a mechanism whose analysis is exactly tight), and three deliberately broken
variants: ``onpairstrc-noise0.1`` (every σ multiplied by 0.1 after planning), ``onpairstrc-internal``
(publishes the internal iterate ``_w``), ``offpairstrc-noise0.1`` (the non-private twin plus 0.1·σ).
Their parameters are chosen for a strong audit: R = 0.01 with λ (or α) = G(R)/R for the Huai et al.
learners, so that G(R) = 4/(1 + e^(−0.04)) ≈ 2.04 is close to the largest per-pair gradient change the
canary can cause (2 at w = 0) and the regulariser dominates the loss's curvature (the ledger's
contraction factor is then exact); a single release (all of ρ on one Gaussian); n = 50, d = 2.

**The metric task** (``task="metric"``: a symmetric d×d matrix W, released with symmetric Gaussian noise
isotropic in the Frobenius norm). Presets ``onpairstrc-metric``, ``onpairc-metric``, ``offpairstrc-metric``,
``offpairc-metric``, ``gradient-metric`` (R = 0.01 there too), ``sgd-metric`` (Yang et al.'s hinge loss on
the PSD trace ball), and the broken ``onpairstrc-metric-noise0.1``, ``onpairstrc-metric-internal`` and
``offpairstrc-metric-noise0.1`` (built as their AUC twins). They run on
:func:`metric_neighbouring_datasets`: every record but the last at the corner (0, …, 0) with label −1,
so that their pairs have x − x' = 0 and no gradient (∇_W ℓ = ℓ'(h)·v vᵀ), and the last at the corner
(1, …, 1), with label −1 in D and +1 in D′. The n − 1 pairs of the last record flip from same-class to
different-class, which changes each pair gradient by exactly 4·u uᵀ (Frobenius norm 4, against the
loss's Γ ≈ 4.16 at R = 0.01), so the released W moves along u uᵀ by about 0.96 of the sensitivity the
implementation charges. The statistic is ⟨W, u uᵀ⟩_F, the released squared length of the canary's
direction u; the symmetric noise has variance σ² along the unit matrix u uᵀ, so the audit sees a Gaussian
shift of μ ≈ 0.96·Δ/σ, as for the AUC presets.

**The learners on released class statistics** (:class:`onpair.OnPairStats`, :class:`onpair.OffPairStats`).
Their release is the per-class counts, sums and second moments, v(z) = [a, b·x, m·vech(xxᵀ)] in the block
of the record's class; the models are post-processing. They run on :func:`statistics_neighbouring_datasets`,
whose canary is a label flip of the **first** record at the corner u: its contribution leaves the negative
class's block for the positive one's, ‖v(z′) − v(z)‖² = 2(a² + b² + m²) = Δ² (the different-label
supremum of :func:`onpair.privacy.statistics.statistics_sensitivity`: every block at full weight). A
continual release publishes a noisy prefix sum r_t after **every** record, so the presets read all of them,
not the model: each run feeds the records one at a time and combines the n releases by
:func:`release_contrast` (weights g ∝ Σ⁻¹𝟙, Σ the public covariance of the release noise over time) into
the least-variance estimate of the first record's change, a k-vector; its projection on the change (learnt
on the selection half, ``audit(statistic=None)``: the noise is isotropic across coordinates) is the
Neyman–Pearson test of the whole release sequence. The first record is the one the mechanisms charge most:
its encoder column is the longest (c₀, …, c_{n−1} of the banded factorisation, a node on every tree
level). At n = 50, d = 2 and ε = 4 this test can see μ = 0.91 for the banded Toeplitz factorisation (the
first record's column holds 50 of the band's 64 coefficients) and 0.77 for ``mechanism="epochs"`` (the
prefix estimates do not reveal every tree node), against the claim's √(2ρ) = 0.92; the last release alone, which the model is computed from, shows
only 0.39 and 0.27. Presets ``onpairstats`` (the default banded Toeplitz), ``onpairstats-epochs``,
``onpairstats-moments`` (weights :data:`MOMENT_WEIGHTS`, where the second moments carry 99 % of Δ²),
``onpairstats-metric`` (``task="metric"``, classes [−1, 1]: the same statistics of two classes),
``offpairstats`` (one release, read through ``model_type="centroid"``, almost linear in the released
sums, where the square model saturates), and the broken ``onpairstats-noise0.1``,
``onpairstats-epochs-noise0.1`` (the mechanism built for 0.1·Δ: every σ × 0.1),
``onpairstats-moments-m0`` (Δ computed as if the moment weight were 0: 2 instead of 19.88, σ × 0.10) and
``offpairstats-noise0.1`` (σ calibrated to 0.1·Δ); every broken variant's report still claims ε. The
contrast is computed for the mechanism as claimed, so a real preset and its broken variants are read by
the same test.

What these canaries cannot catch: a bug that moves σ by less than about a factor 3 at ε = 4. At the
default weights (0.8, 1, 0.6), Δ = 2b whatever m, so "Δ as if m = 0" is harmless there (hence the
``-moments`` presets). One tree level missing from the accounting (κ² = L − 1: σ × 0.93, real ε 4.37)
measured ε_lower 0.86, and the factorisation charged as if κ = 1 (σ × 0.65, real ε 6.66) 2.52, both with
5,000 runs: a Gaussian mechanism's privacy loss reaches ε only in tails that a few thousand runs do not
sample (the ``reference`` preset shows about 1.4 of an exact 4). A kernel that draws no noise for one tree
level leaves most releases noisy, and the contrast, designed for the claimed noise, gains little from it
(measured separation 0.76 with 1,000 runs, against μ = 0.77 for the correct mechanism); a test on the first
release alone would see it, but a preset fixes its test before the runs and keeps the one that is optimal
for the mechanism as claimed.

What limits the audit's strength: with N evaluation runs per data set and no error at all, FPR⁺ = FNR⁺ =
1 − (α/2)^(1/N) ≈ log(2/α)/N, so ε_lower ≤ log(N/log(2/α)) (≈ 4.9 for N = 500, 6.5 for N = 2,500); and
a Gaussian mechanism's privacy loss reaches ε only in far tails that N runs do not sample, so even an
exactly tight mechanism (the ``reference`` preset) shows only a fraction of its ε (about 1 to 1.5 of
ε = 4 at δ = 1e-5 with 1,000 to 5,000 runs per data set; almost nothing at ε = 1). Yang et al.'s σ is
calibrated to a high-probability sensitivity over 100 times the actual influence of one record, so
that audit finds nothing.

Examples
--------
>>> lo, hi = clopper_pearson(0, 10)
>>> lo, round(hi, 4)                     # 1 − 0.025^(1/10)
(0.0, 0.3085)
>>> round(epsilon_lower_bound(0.01, 0.5, delta=0.0), 4)   # log(0.5/0.01)
3.912
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import zlib
import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
from scipy.stats import beta as _beta

__all__ = [
    "AuditResult", "audit", "audit_algorithm", "clopper_pearson", "epsilon_lower_bound",
    "neighbouring_datasets", "metric_neighbouring_datasets", "statistics_neighbouring_datasets",
    "release_contrast", "PRESETS", "main", "add_arguments", "run_from_args",
]

DEFAULT_EPSILON = 4.0
DEFAULT_DELTA = 1e-5
DEFAULT_N = 50
DEFAULT_D = 2
DATA_KINDS = ("adversarial", "random")


# -- statistics ------------------------------------------------------------------------------------
def clopper_pearson(k, n, confidence=0.95, alternative="two-sided"):
    """Clopper–Pearson (exact binomial) confidence interval ``(lower, upper)`` for a proportion k/n.

    ``alternative`` follows :func:`scipy.stats.binomtest`: ``"two-sided"`` puts (1 − confidence)/2 in
    each tail, ``"less"`` gives the one-sided ``(0, upper)`` and ``"greater"`` the one-sided
    ``(lower, 1)`` at level ``confidence``. Lower = Beta⁻¹(a; k, n − k + 1) (0 when k = 0), upper =
    Beta⁻¹(1 − a; k + 1, n − k) (1 when k = n).

    Examples
    --------
    >>> round(clopper_pearson(0, 20, 0.95, "less")[1], 4)   # 1 − 0.05^(1/20)
    0.1391
    """
    k, n = _check_count(k, n)
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    alpha = 1.0 - float(confidence)
    if alternative == "two-sided":
        low_tail = high_tail = alpha / 2.0
    elif alternative == "less":
        low_tail, high_tail = None, alpha
    elif alternative == "greater":
        low_tail, high_tail = alpha, None
    else:
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    lower = 0.0 if (low_tail is None or k == 0) else float(_beta.ppf(low_tail, k, n - k + 1))
    upper = 1.0 if (high_tail is None or k == n) else float(_beta.ppf(1.0 - high_tail, k + 1, n - k))
    return lower, upper


def _check_count(k, n):
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k = {k}, n = {n}")
    return int(k), int(n)


def _cp_upper(k, n, level):
    """Vectorised one-sided Clopper–Pearson upper bound at ``level`` (k may be an array; 1 where k = n)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        upper = _beta.ppf(level, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, upper)


def _epsilon_raw(fpr_upper, fnr_upper, delta):
    """max(log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺)), −inf where no term is defined."""
    fpr_upper = np.asarray(fpr_upper, dtype=np.float64)
    fnr_upper = np.asarray(fnr_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        num1 = 1.0 - delta - fnr_upper
        num2 = 1.0 - delta - fpr_upper
        e1 = np.where((num1 > 0) & (fpr_upper > 0), np.log(np.maximum(num1, 1e-300) / fpr_upper), -np.inf)
        e2 = np.where((num2 > 0) & (fnr_upper > 0), np.log(np.maximum(num2, 1e-300) / fnr_upper), -np.inf)
    return np.maximum(e1, e2)


def epsilon_lower_bound(fpr_upper, fnr_upper, delta):
    """The ε an (ε, δ)-DP mechanism must have if some test reaches FPR ≤ ``fpr_upper`` and FNR ≤
    ``fnr_upper``: max(0, log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺)).

    Examples
    --------
    >>> round(epsilon_lower_bound(0.2, 0.2, delta=0.0), 4)   # log(0.8/0.2) = log 4
    1.3863
    """
    for name, value in (("fpr_upper", fpr_upper), ("fnr_upper", fnr_upper), ("delta", delta)):
        if not (isinstance(value, (int, float, np.floating, np.integer)) and 0.0 <= float(value) <= 1.0):
            raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    raw = float(_epsilon_raw(float(fpr_upper), float(fnr_upper), float(delta)))
    return max(0.0, raw)


# -- the audit -------------------------------------------------------------------------------------
@dataclass
class AuditResult:
    """Outcome of :func:`audit`.

    ``epsilon_lower`` holds with probability ≥ ``confidence`` over the runs: an implementation that is
    (ε, δ)-DP shows ``epsilon_lower > ε`` with probability at most 1 − ``confidence``. The test says
    "D′" when ``statistic > threshold`` (``rule == ">"``) or ``statistic < threshold`` (``rule == "<"``);
    ``fpr``/``fnr`` are its error rates on the evaluation half (``evaluation_runs`` runs per data set),
    ``fpr_upper``/``fnr_upper`` the upper ends of their two-sided Clopper–Pearson intervals.
    ``runs`` counts the mechanism runs on **each** data set (2·runs in all).
    """

    epsilon_lower: float
    claimed_epsilon: float
    delta: float
    threshold: float
    rule: str
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    false_positives: int
    false_negatives: int
    runs: int
    evaluation_runs: int
    confidence: float
    method: str = "split"
    algorithm: str | None = None
    details: dict = field(default_factory=dict)

    @property
    def caught(self) -> bool:
        """True when the audit proves (at ``confidence``) that the claim is wrong: ε_lower > claim."""
        return self.epsilon_lower > self.claimed_epsilon

    def to_dict(self) -> dict:
        out = asdict(self)
        out["caught"] = self.caught
        return _json_safe(out)


def _json_safe(value):
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _as_seed_sequence(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None or isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or a SeedSequence, got {seed!r} (an audit "
                         "must be reproducible)")
    return np.random.SeedSequence(int(seed))


@contextlib.contextmanager
def _numba_threads(threads):
    """Run with ``threads`` numba threads (restored afterwards); None leaves the setting alone."""
    if threads is None:
        yield
        return
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _run_many(make_mechanism, data, seeds) -> np.ndarray:
    X, y = data
    out = []
    for child in seeds:
        mechanism, release = make_mechanism(child)
        model = np.asarray(release(mechanism, X, y), dtype=np.float64).ravel()
        out.append(model)
    return np.vstack(out)


def _select_test(a, b, delta, confidence):
    """(sign, τ) maximising the ε estimate on the selection half; the test says D′ when sign·s > τ."""
    level = 1.0 - (1.0 - confidence) / 2.0
    best = (-np.inf, 1.0, 0.0)
    for sign in (1.0, -1.0):
        sa, sb = np.sort(sign * a), np.sort(sign * b)
        values = np.unique(np.concatenate([sa, sb]))
        candidates = (values[:-1] + values[1:]) / 2.0 if values.size > 1 else values
        fp = sa.size - np.searchsorted(sa, candidates, side="right")   # D runs with sign·s > τ
        fn = np.searchsorted(sb, candidates, side="right")              # D′ runs with sign·s ≤ τ
        eps = _epsilon_raw(_cp_upper(fp, sa.size, level), _cp_upper(fn, sb.size, level), delta)
        i = int(np.argmax(eps))
        if eps[i] > best[0]:
            best = (float(eps[i]), sign, float(candidates[i]))
    return best[1], best[2]


def audit(make_mechanism: Callable, D, D_prime, *, runs: int = 1000, statistic=None, delta: float,
          claimed_epsilon: float, confidence: float = 0.95, seed=0, selection_fraction: float = 0.5,
          algorithm: str | None = None, threads: int | None = 1) -> AuditResult:
    """Audit a mechanism on the neighbouring data sets ``D`` and ``D_prime`` (each a pair ``(X, y)``).

    Parameters
    ----------
    make_mechanism : callable
        ``make_mechanism(seed_sequence) -> (mechanism, release)``: a fresh, configured learner or
        estimator whose randomness comes from ``seed_sequence``, and ``release(mechanism, X, y)`` that
        runs it on a data set and returns the released model vector (for an online learner its last
        release, ``learner.learn_many(X, y).model``; for an estimator ``est.fit(X, y).coef_``). Every run
        gets its own child of one :class:`numpy.random.SeedSequence` built from ``seed``.
    D, D_prime : (X, y)
        Neighbouring data sets (one record replaced).
    runs : int, default 1000
        Runs on **each** data set; ``selection_fraction`` of them choose the test, the rest evaluate it.
    statistic : callable, array-like or None
        ``statistic(model) -> float``; an array u means ⟨model, u⟩; None projects onto the difference of
        the mean released models on D′ and D, estimated on the selection half only (so still valid).
    delta, claimed_epsilon : float
        The mechanism's δ (used in the bound) and the ε it claims (reported beside the bound).
    confidence : float, default 0.95
        Probability with which ``epsilon_lower`` is a valid lower bound.
    seed : int or SeedSequence, default 0
        Root of every run's randomness.
    selection_fraction : float, default 0.5
        Share of each data set's runs that choose the test (the rest evaluate it).
    algorithm : str, optional
        A name recorded in the result.
    threads : int or None, default 1
        numba threads while the runs execute (restored afterwards). An audit is thousands of small
        fits, for which a parallel kernel's thread start-up costs more than it saves (and stalls when
        other processes hold the cores); None leaves the setting alone.

    Returns
    -------
    AuditResult
    """
    if isinstance(runs, (bool, np.bool_)) or not isinstance(runs, (int, np.integer)) or runs < 2:
        raise ValueError(f"runs must be an integer >= 2, got {runs!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    if not 0.0 < float(selection_fraction) < 1.0:
        raise ValueError(f"selection_fraction must lie in (0, 1), got {selection_fraction!r}")
    runs, delta, confidence = int(runs), float(delta), float(confidence)
    n_select = min(max(1, int(round(runs * selection_fraction))), runs - 1)
    seeds_D, seeds_D_prime = _as_seed_sequence(seed).spawn(2)
    with _numba_threads(threads):
        models_a = _run_many(make_mechanism, D, seeds_D.spawn(runs))
        models_b = _run_many(make_mechanism, D_prime, seeds_D_prime.spawn(runs))
    if statistic is None:
        direction = models_b[:n_select].mean(axis=0) - models_a[:n_select].mean(axis=0)
        a, b = models_a @ direction, models_b @ direction
    elif callable(statistic):
        a = np.array([float(statistic(m)) for m in models_a])
        b = np.array([float(statistic(m)) for m in models_b])
    else:
        direction = np.asarray(statistic, dtype=np.float64).ravel()
        a, b = models_a @ direction, models_b @ direction
    sign, tau = _select_test(a[:n_select], b[:n_select], delta, confidence)
    ea, eb = sign * a[n_select:], sign * b[n_select:]
    n_eval = ea.size
    fp = int(np.count_nonzero(ea > tau))
    fn = int(np.count_nonzero(eb <= tau))
    fpr_upper = clopper_pearson(fp, n_eval, confidence)[1]
    fnr_upper = clopper_pearson(fn, n_eval, confidence)[1]
    raw = float(_epsilon_raw(fpr_upper, fnr_upper, delta))
    spread = np.sqrt(0.5 * (a[n_select:].var() + b[n_select:].var()))
    shift = b[n_select:].mean() - a[n_select:].mean()
    details = {
        "mean_D": float(a[n_select:].mean()), "mean_D_prime": float(b[n_select:].mean()),
        "std_D": float(a[n_select:].std()), "std_D_prime": float(b[n_select:].std()),
        # (mean_D′ − mean_D)/pooled std: the μ of the Gaussian shift the audit sees (μ-GDP scale).
        # Deterministic releases (no noise) give a spread of rounding errors only: infinite separation.
        "separation": float(shift / spread) if spread > 1e-9 * abs(shift) else math.copysign(math.inf, shift)
        if shift != 0 else 0.0,
        "selection_runs": n_select,
    }
    return AuditResult(
        epsilon_lower=max(0.0, raw), claimed_epsilon=float(claimed_epsilon), delta=delta,
        threshold=float(sign * tau), rule=">" if sign > 0 else "<", fpr=fp / n_eval, fnr=fn / n_eval,
        fpr_upper=fpr_upper, fnr_upper=fnr_upper, false_positives=fp, false_negatives=fn, runs=runs,
        evaluation_runs=n_eval, confidence=confidence, method="split", algorithm=algorithm, details=details,
    )


# -- neighbouring data sets ------------------------------------------------------------------------
def neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial", seed: int = 0):
    """``(D, D_prime, bounds, u)``: two data sets in the public box [0, 1]^d that differ in the last record.

    D′'s last record is the canary: the corner (1, …, 1), label +1 (the rarer label). ``u`` is its
    direction in the mapped domain where the models live, (1, …, 1)/√d. ``kind="adversarial"``: every
    other record is the corner (0, …, 0) with label −1 and D's last record is (0, …, 0) with label +1, so
    D produces no gradient at all and D′ the largest one (see the module docstring). ``kind="random"``:
    uniform records, labels +1 with probability 0.3 (at least one of each among the first n − 1), D's
    last record drawn the same way.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, u = neighbouring_datasets(5, 2)
    >>> int((X != X2).any(axis=1).sum()), y2.tolist(), bounds
    (1, [-1, -1, -1, -1, 1], (0.0, 1.0))
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"n must be an integer >= 3, got {n!r}")
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if kind not in DATA_KINDS:
        raise ValueError(f"kind must be one of {DATA_KINDS}, got {kind!r}")
    n, d = int(n), int(d)
    if kind == "adversarial":
        X = np.zeros((n, d))
        y = -np.ones(n, dtype=np.int64)
        y[-1] = 1
    else:
        rng = np.random.default_rng(seed)
        X = rng.uniform(0.0, 1.0, size=(n, d))
        y = np.where(rng.uniform(size=n) < 0.3, 1, -1).astype(np.int64)
        y[0], y[1] = 1, -1
    X_prime, y_prime = X.copy(), y.copy()
    X_prime[-1] = 1.0
    y_prime[-1] = 1
    u = np.full(d, 1.0 / math.sqrt(d))
    return (X, y), (X_prime, y_prime), (0.0, 1.0), u


def metric_neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial", seed: int = 0):
    """``(D, D_prime, bounds, U)`` for the metric task: two data sets in the public box [0, 1]^d that
    differ in the last record, and ``U = u uᵀ`` (a (d, d) matrix), the statistic's direction.

    D′'s last record is the canary, the corner (1, …, 1) with label +1. ``kind="adversarial"``: every other
    record is the opposite corner (0, …, 0) with label −1, and D's last record is the canary's corner with
    the others' label −1. Pairs of two records at the same point have v = x − x' = 0 and so no gradient
    (∇_W ℓ = ℓ'(h)·v vᵀ); the only gradient comes from the n − 1 pairs of the last record, each with
    v vᵀ = 4 u uᵀ (u = (1, …, 1)/√d the canary's mapped direction, the full diameter 2). Replacing the
    label flips every one of them from a same-class pair (τ = +1, ℓ'(h) = σ(h − 1) > 0, pulling the two
    corners together) to a different-class pair (τ = −1, ℓ'(h) = −σ(1 − h), pushing them apart): the
    pair gradients change by (σ(h − 1) + σ(1 − h))·4 u uᵀ = 4 u uᵀ exactly, whatever h, against the
    logistic loss's Γ(R) → 4√2·σ(1) ≈ 4.14 as R → 0 (the bound covers orthogonal v, v′, which no two
    records of the box reach). Keeping the canary's corner in D is stronger than replacing it by a
    record without gradient (a change of only σ(1 − h)·4 ≈ 2.9). ``kind="random"``: uniform records,
    labels +1 with probability 0.3 (at least one of each among the first n − 1), D's last record drawn
    the same way; D′'s last is the canary.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, U = metric_neighbouring_datasets(4, 2)
    >>> X.tolist() == X2.tolist(), y.tolist(), y2.tolist(), U.tolist()
    (True, [-1, -1, -1, -1], [-1, -1, -1, 1], [[0.5, 0.5], [0.5, 0.5]])
    """
    (X, y), (X_prime, y_prime), bounds, _ = neighbouring_datasets(n, d, kind=kind, seed=seed)
    if kind == "adversarial":
        X[-1] = 1.0
        y[-1] = -1
    return (X, y), (X_prime, y_prime), bounds, np.full((d, d), 1.0 / d)  # u uᵀ, u = (1, …, 1)/√d


def statistics_neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial",
                                     seed: int = 0):
    """``(D, D_prime, bounds, u)`` for the learners on released class statistics: two data sets in the public
    box [0, 1]^d that differ in the **first** record.

    D′'s first record is the canary, the corner (1, …, 1) (mapped: u = (1, …, 1)/√d, on the unit sphere) with
    label +1. ``kind="adversarial"``: D's first record is the same corner with label −1, so only the label
    flips and the record's contribution v(z) = [a, b·x, m·vech(xxᵀ)] moves from the negative class's block
    to the positive one's: ‖v(z′) − v(z)‖² = 2(a² + b² + m²), the different-label supremum of
    :func:`onpair.privacy.statistics.statistics_sensitivity`, which is Δ² itself whenever that case sets
    Δ: at the default weights (0.8, 1, 0.6), where both cases give 4b², and at :data:`MOMENT_WEIGHTS`.
    Every other record sits at the opposite corner
    with labels −1, +1, −1, … (a release of sums is linear in the stream: they do not change what the test
    sees). ``kind="random"``: uniform records, labels +1 with probability 0.3 (at least one of each among
    the last n − 1), D's first record drawn the same way; D′'s first is the canary.

    The canary is the first record because a continual release charges the first record for its longest
    encoder column: the banded factorisation's column holds c₀, …, c_{b−1} for a record followed by b − 1
    others (only c₀ for the last record), and the tree's first record completes a node on every level.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, u = statistics_neighbouring_datasets(5, 2)
    >>> X.tolist() == X2.tolist(), y.tolist(), y2.tolist()
    (True, [-1, 1, -1, 1, -1], [1, 1, -1, 1, -1])
    """
    (X, y), (X_prime, y_prime), bounds, u = neighbouring_datasets(n, d, kind=kind, seed=seed)
    if kind == "random":  # the same draws, in reverse order: the replaced record comes first
        return (X[::-1].copy(), y[::-1].copy()), (X_prime[::-1].copy(), y_prime[::-1].copy()), bounds, u
    X = np.zeros((n, d))
    X[0] = 1.0
    y = np.where(np.arange(n) % 2 == 0, -1, 1).astype(np.int64)
    y_prime = y.copy()
    y_prime[0] = 1
    return (X, y), (X.copy(), y_prime), bounds, u


# -- presets -----------------------------------------------------------------------------------------
def _int_seed(seed_sequence: np.random.SeedSequence) -> int:
    """A 128-bit integer seed from a SeedSequence (the online learners take an int ``seed``)."""
    return int.from_bytes(seed_sequence.generate_state(4, np.uint32).tobytes(), "little")


def _online_release(learner, X, y):
    return learner.learn_many(X, y).model


def _offline_release(estimator, X, y):
    return estimator.fit(X, y).coef_


def _logistic_g(radius):
    from ..core.losses import get_loss

    return get_loss("logistic").lipschitz(radius)


def _metric_logistic_g(radius):
    from ..core.metric_losses import get_metric_loss

    return get_metric_loss("logistic").lipschitz(radius)


AUDIT_RADIUS = 0.01  # Huai et al. learners: G(R) ≈ 2.04 close to the canary's actual change 2


def _onpairstrc_class(kind):
    from ..learners import OnPairStrC

    if kind == "noise0.1":
        class _NoiseScaledOnPairStrC(OnPairStrC):
            """Broken on purpose: the planned σ of every release multiplied by 0.1 (the report still
            claims ε)."""

            def _plan(self, t_start, steps):
                plan = super()._plan(t_start, steps)
                return dataclasses.replace(plan, sigmas=plan.sigmas * 0.1)

        return _NoiseScaledOnPairStrC
    if kind == "internal":
        class _InternalIterateOnPairStrC(OnPairStrC):
            """Broken on purpose: ``model`` is the internal (noise-free) iterate."""

            @property
            def model(self):
                return self._iterate.w.copy()

        return _InternalIterateOnPairStrC
    return OnPairStrC


#: The metric presets with a learned threshold: b in [0, 4R], pair weights those of 3 balanced classes.
LEARNED_TERMS = {"threshold": "learned", "pair_weights": (1.5, 0.75)}


def _online_setup(kind, cls_name, task="auc", extra=None):
    def build(epsilon, delta, n, d, bounds):
        if cls_name == "onpairc":
            from ..learners import OnPairC

            # α = c·n^(−1/4) = G(R)/R: the regulariser dominates the loss's curvature.
            g = _metric_logistic_g(AUDIT_RADIUS) if task == "metric" else _logistic_g(AUDIT_RADIUS)
            c = g / AUDIT_RADIUS * n ** 0.25
            params = dict(c=c)
            cls = OnPairC
        else:
            params = {}
            cls = _onpairstrc_class(kind)
        if task == "metric":
            params["task"] = "metric"
        params.update(extra or {})

        def make(seed_sequence):
            learner = cls(epsilon=epsilon, delta=delta, bounds=bounds, n=n, release_at=(n,),
                          radius=AUDIT_RADIUS, seed=_int_seed(seed_sequence), **params)
            return learner, _online_release

        return make

    return build


def _offline_setup(cls_name, task="auc", extra=None):
    def build(epsilon, delta, n, d, bounds):
        from .. import estimators

        metric = task == "metric"
        if cls_name == "offpairstrc":
            cls, params = estimators.OffPairStrC, dict(radius=AUDIT_RADIUS, output="last")
        elif cls_name == "offpairc":
            # α = c/√n = G(R)/R.
            g = _metric_logistic_g(AUDIT_RADIUS) if metric else _logistic_g(AUDIT_RADIUS)
            c = g / AUDIT_RADIUS * math.sqrt(n)
            cls, params = estimators.OffPairC, dict(radius=AUDIT_RADIUS, output="last", c=c)
        elif cls_name == "gradient":
            # Metric task: R = 0.01 as for the Huai et al. learners, so that Γ at the public start
            # (‖W₀‖_F = R/2) is close to the canary's change 4 (4.16 against 4.35 at the default R = 0.1).
            # The papers' loss (threshold 1, uniform pairs), whose canary is computed by hand in the tests.
            cls, params = estimators.GradientPerturbedGD, (
                dict(T=1, radius=AUDIT_RADIUS, threshold=1.0, pair_weights=None) if metric else dict(T=1))
        else:  # Yang et al.: T = n, the smallest T for which their bound is stated
            cls, params = estimators.OutputPerturbedSGD, dict(T=n, loss="hinge")
        if metric:
            params["task"] = "metric"
        params.update(extra or {})

        def make(seed_sequence):
            return cls(epsilon=epsilon, delta=delta, bounds=bounds, random_state=seed_sequence, **params), \
                _offline_release

        return make

    return build


def _offpairstrc_noise_setup(epsilon, delta, n, d, bounds, task="auc"):
    """Broken on purpose: OffPairStrC's non-private twin (same order, same kernel) plus 0.1·σ noise, with
    σ the estimator's own (a public quantity: it depends on n and the parameters only). For the metric
    task the noise is symmetric and isotropic in the Frobenius norm, as the estimator draws it."""
    from ..estimators import OffPairStrC
    from ..core.geometry import project_l2_ball
    from ..core.matrix_geometry import project_matrix, symmetric_noise

    params = dict(epsilon=epsilon, delta=delta, bounds=bounds, radius=AUDIT_RADIUS, output="last", task=task)
    probe_X = np.zeros((n, d))
    probe_y = np.where(np.arange(n) == 0, 1, -1)
    sigma = OffPairStrC(random_state=0, **params).fit(probe_X, probe_y).privacy_report_["releases"][0]["sigma"]

    def make(seed_sequence):
        fit_seq, noise_seq = seed_sequence.spawn(2)
        twin = OffPairStrC(private=False, random_state=fit_seq, **params)

        def release(estimator, X, y):
            w = estimator.fit(X, y).coef_
            rng = np.random.Generator(np.random.PCG64(noise_seq))
            if task == "metric":
                noise = symmetric_noise(rng, 1, d)[0].reshape(d, d)
                return project_matrix(w + 0.1 * sigma * noise, AUDIT_RADIUS)
            return project_l2_ball(w + 0.1 * sigma * rng.standard_normal(w.shape[0]), AUDIT_RADIUS)

        return twin, release

    return make


def _offpairstrc_metric_noise_setup(epsilon, delta, n, d, bounds):
    """The metric task's broken OffPairStrC (see :func:`_offpairstrc_noise_setup`)."""
    return _offpairstrc_noise_setup(epsilon, delta, n, d, bounds, task="metric")


def _reference_setup(epsilon, delta, n, d, bounds):
    """The Gaussian mechanism calibrated exactly (analytic, Balle & Wang 2018) to (ε, δ) on the query
    q(D) = ½ Σ_{y_i = +1} ⟨φ(x_i), u⟩ of sensitivity 1 (one replaced record moves it by at most 1)."""
    from ..core.bounds import FeatureBounds
    from ..privacy import gaussian_sigma

    sigma = gaussian_sigma(1.0, epsilon, delta, method="analytic")
    feature_map = FeatureBounds(*bounds)
    u = np.full(d, 1.0 / math.sqrt(d))

    def make(seed_sequence):
        rng = np.random.Generator(np.random.PCG64(seed_sequence))

        def release(_, X, y):
            Z, _ = feature_map.transform(np.asarray(X, dtype=np.float64))
            q = 0.5 * float(np.sum((Z @ u)[np.asarray(y) > 0]))
            return np.array([q + sigma * rng.standard_normal()])

        return None, release

    return make


# -- objective perturbation and AMP -----------------------------------------------------------------------
def _objective_setup(kind, cls_name, objective="pointwise"):
    """ObjectivePerturbedLogistic (``cls_name="objpert"``) or ApproxMinimaPerturbedLogistic (``"amp"``) with its
    defaults, read through the privacy loss of objective perturbation as claimed (:func:`_objective_loss`).

    ``kind="noise0.05"``: broken, the σ of b is 5 % of the calibrated one; ``kind="lam0.01"``: broken, Λ is a
    hundredth of the condition's smallest value with the noise of a valid run. Both reports still claim ε.
    """

    def build(epsilon, delta, n, d, bounds, neighbours):
        from .. import estimators

        base = estimators.ObjectivePerturbedLogistic if cls_name == "objpert" else \
            estimators.ApproxMinimaPerturbedLogistic
        cls = base
        if kind == "noise0.05":
            class TooLittleNoise(base):
                def _noise_sigma(self, *args):
                    return 0.05 * super()._noise_sigma(*args)

            cls = TooLittleNoise
        elif kind == "lam0.01":
            class RegulariserBelowTheCondition(base):
                def _regulariser(self, smallest, requested, scale):
                    return 0.01 * super()._regulariser(smallest, requested, scale)

            cls = RegulariserBelowTheCondition
        params = dict(epsilon=epsilon, delta=delta, bounds=bounds, objective=objective)
        # The test is designed for the mechanism as claimed: Λ and σ of a correct run (public: they depend
        # on n, d, ε and δ only), whatever the variant does.
        claimed = base(random_state=0, **params).fit(*neighbours[1]).privacy_report_
        loss = _objective_loss(claimed, objective, bounds, *neighbours)

        def make(seed_sequence):
            return cls(random_state=seed_sequence, **params), loss

        return make

    return build


def _objective_loss(report, objective, bounds, D, D_prime):
    """The release read as the privacy loss log p_D(θ) − log p_D′(θ) of objective perturbation as claimed.

    The released θ (with the intercept, pointwise) has density ν(b_X(θ))·det(∇²F_X(θ) + ΛI) under data X,
    b_X(θ) = −∇F_X(θ) − Λθ (:mod:`onpair.perturbed_objective`), so the log-ratio of the two densities is the
    Neyman–Pearson test of D against D′ for objective perturbation, and a valid (if not optimal) test for AMP,
    whose output noise it ignores. σ and Λ are those of ``report``."""
    from ..core.bounds import FeatureBounds
    from ..objective.functions import PairwiseLogistic, PointwiseLogistic

    regulariser = report["regulariser_sum_units"]
    sigma = report["releases"][0]["sigma"]
    feature_map = FeatureBounds(*bounds)
    intercept = report["fit_intercept"]
    objectives = []
    for X, y in (D, D_prime):
        Z, _ = feature_map.transform(np.asarray(X, dtype=np.float64))
        objectives.append(PointwiseLogistic(Z, y, intercept) if objective == "pointwise" else PairwiseLogistic(Z, y))

    def log_density(f, theta):
        _, gradient, hessian = f.terms(theta)
        b = -gradient - regulariser * theta
        return -float(b @ b) / (2.0 * sigma ** 2) + np.linalg.slogdet(hessian + regulariser * np.eye(theta.size))[1]

    def release(estimator, X, y):
        fitted = estimator.fit(X, y)
        theta = np.append(fitted.coef_, fitted.intercept_) if intercept else fitted.coef_
        return np.array([log_density(objectives[0], theta) - log_density(objectives[1], theta)])

    return release


# -- the learners on released class statistics -----------------------------------------------------
#: Noise-only coordinates from which the release sequence's covariance over time is estimated.
CONTRAST_SAMPLES = 20_000


def release_contrast(mechanism, n: int, *, samples: int = CONTRAST_SAMPLES, seed: int = 0) -> np.ndarray:
    """Weights g (n,) with Σ g_t = 1 of the minimum-variance linear estimate, from the releases after
    records 1, …, n of the continual-release ``mechanism``, of a change in the **first** record.

    Replacing record 1 adds the same vector δv to every prefix sum S_1, …, S_n; the releases r_t = S_t + N_t
    carry noise N that is independent across the k coordinates and has the same covariance Σ (n × n) over
    time in each. So h = Σ_t g_t·r_t with g ∝ Σ⁻¹𝟙 moves by exactly δv, with the least variance
    1/(𝟙ᵀΣ⁻¹𝟙) per coordinate of any such combination; a test on ⟨h, δv⟩ is the Neyman–Pearson test of the
    whole release sequence. Σ is a public function of the mechanism's parameters (not of ε alone: of its
    kind, band, levels and epochs); it is estimated from ``samples`` noise-only coordinates of a twin of the
    mechanism fed zeros (relative error about 1/√samples, which costs power, not validity: any fixed test
    gives a valid bound).

    Examples
    --------
    >>> from onpair.privacy.continual import BandedToeplitz
    >>> g = release_contrast(BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0, band=1), 3)
    >>> bool(np.abs(g - [1.0, 0.0, 0.0]).max() < 0.05)   # band 1: r_t = S_t + Z_1 + … + Z_t: read r_1
    True
    """
    params = mechanism.get_params()
    rng = np.random.default_rng(seed)
    chunk = max(1, min(samples, (1 << 22) // max(n, 1)))
    covariance = np.zeros((n, n))
    done = 0
    while done < samples:
        width = min(chunk, samples - done)
        twin = type(mechanism)(**dict(params, dim=width))
        noise = twin.add_block(np.zeros((n, width)), rng, return_estimates=True)
        covariance += noise @ noise.T
        done += width
    g = np.linalg.solve(covariance / samples, np.ones(n))
    return g / g.sum()


def _contrast_release(contrast):
    """The release read by the continual presets: the learner fed one record at a time, its released prefix
    estimate after every record (what it publishes; ``class_statistics()`` decodes it) combined by
    ``contrast`` into one k-vector (:func:`release_contrast`)."""

    def release(learner, X, y):
        total = None
        for i in range(X.shape[0]):
            learner.learn_one(X[i], y[i])
            step = contrast[i] * learner._stats.estimate()
            total = step if total is None else total + step
        return total

    return release


#: Weights of the ``onpairstats-moments`` presets: the second moments carry 99 % of Δ² = 2(a² + b² + m²),
#: so that the ``-m0`` variant's Δ (computed as if m were 0: 2b = 2) is 9.9× too small, as σ × 0.1.
MOMENT_WEIGHTS = (0.8, 1.0, 14.0)


def _onpairstats_class(kind):
    from ..learners import OnPairStats

    if kind is None:
        return OnPairStats
    from ..statistics.released import ReleasedStatistics
    from ..privacy.statistics_sensitivity import statistics_sensitivity

    class _WrongSensitivityOnPairStats(OnPairStats):
        """Broken on purpose: the continual-release mechanism is built for a sensitivity below the proven
        Δ, 0.1·Δ ("noise0.1": every σ × 0.1) or Δ computed as if the moment weight were 0 ("m0"); the
        accountant and the report still claim ε."""

        def _new_state(self, dim):
            stats = super()._new_state(dim)
            mechanism = stats.mechanism
            if mechanism is None:
                return stats
            a, b, _ = self._weights
            wrong = 0.1 * mechanism.sensitivity if kind == "noise0.1" else statistics_sensitivity(a, b, 0.0)
            wrong_mechanism = type(mechanism)(**dict(mechanism.get_params(), sensitivity=wrong))
            return ReleasedStatistics(dim, self._n_classes, self._weights, wrong_mechanism)

    return _WrongSensitivityOnPairStats


def _onpairstats_setup(kind, mechanism="toeplitz", task="auc", weights=None):
    """OnPairStats on :func:`statistics_neighbouring_datasets`; the release is the contrast of its whole
    release sequence (:func:`release_contrast`), computed for the mechanism **as claimed** (the real
    learner's), so that the real preset and its broken variants are read by the same test."""

    def build(epsilon, delta, n, d, bounds):
        from ..learners import OnPairStats

        params = dict(epsilon=epsilon, delta=delta, bounds=bounds, n_features=d, mechanism=mechanism)
        if task == "metric":
            params.update(task="metric", classes=[-1, 1])
        if weights is not None:
            params["weights"] = weights
        claimed = OnPairStats(seed=0, **params)
        release = _contrast_release(release_contrast(claimed._stats.mechanism, n))
        cls = _onpairstats_class(kind)

        def make(seed_sequence):
            return cls(seed=_int_seed(seed_sequence), **params), release

        return make

    return build


def _offpairstats_setup(kind):
    """OffPairStats with ``model_type="centroid"`` on :func:`neighbouring_datasets`. The release of the
    statistics is the same for every model type; the centroid μ₊ − μ₋ reads the released sums almost
    linearly (the canary's class count is floored at 2σ/a), while the square model saturates
    (w = A⁻¹d/(1 + dᵀA⁻¹d)) and hides part of the change: measured separation 0.96 against 0.85 at ε = 4,
    and 8.2 against 3.2 for σ × 0.1."""

    def build(epsilon, delta, n, d, bounds):
        from ..estimators import OffPairStats

        cls = OffPairStats
        if kind == "noise0.1":
            class _NoiseScaledOffPairStats(OffPairStats):
                """Broken on purpose: σ calibrated to 0.1·Δ, i.e. σ × 0.1 (the report still claims ε)."""

                def _validate_params(self):
                    model, weights, sensitivity = super()._validate_params()
                    return model, weights, 0.1 * sensitivity

            cls = _NoiseScaledOffPairStats

        def make(seed_sequence):
            return cls(epsilon=epsilon, delta=delta, bounds=bounds, model_type="centroid",
                       random_state=seed_sequence), _offline_release

        return make

    return build


@dataclass(frozen=True)
class Preset:
    """A ready-made audit: ``build(epsilon, delta, n, d, bounds) -> make_mechanism``."""

    name: str
    description: str
    build: Callable
    broken: bool = False
    scalar_release: bool = False  # the release is the statistic itself (reference mechanism)
    task: str = "auc"  # "metric": audited on metric_neighbouring_datasets with the statistic ⟨W, u uᵀ⟩_F
    #: Builds its own neighbouring data sets (``datasets(n, d, kind=, seed=)``) instead of the task's; the
    #: statistic is then the release projected on the direction learnt on the selection half
    #: (``audit(statistic=None)``): the continual presets, whose release is a k-vector of statistics.
    datasets: Callable | None = None
    #: ``build`` also takes ``neighbours=(D, D_prime)``, for a release read through a test designed for them.
    needs_neighbours: bool = False


PRESETS = {p.name: p for p in (
    Preset("onpairstrc", "OnPairStrC, one release at n, R = 0.01, λ = G(R)/R", _online_setup(None, "onpairstrc")),
    Preset("onpairc", "OnPairC, one release at n, R = 0.01, α = c·n^(−1/4) = G(R)/R", _online_setup(None, "onpairc")),
    Preset("offpairstrc", "OffPairStrC, last iterate, R = 0.01, λ = G(R)/R", _offline_setup("offpairstrc")),
    Preset("offpairc", "OffPairC, last iterate, R = 0.01, α = c/√n = G(R)/R", _offline_setup("offpairc")),
    Preset("gradient", "GradientPerturbedGD (Kang et al.), T = 1, R = 0.1", _offline_setup("gradient")),
    Preset("sgd", "OutputPerturbedSGD (Yang et al.), hinge, T = n, R = 1, eq. (5) noise", _offline_setup("sgd")),
    Preset("reference", "Gaussian mechanism exactly at (ε, δ), sensitivity 1 (the audit's ceiling)",
           _reference_setup, scalar_release=True),
    Preset("onpairstrc-noise0.1", "BROKEN: OnPairStrC with every σ × 0.1", _online_setup("noise0.1", "onpairstrc"),
           broken=True),
    Preset("onpairstrc-internal", "BROKEN: OnPairStrC releasing its internal iterate",
           _online_setup("internal", "onpairstrc"), broken=True),
    Preset("offpairstrc-noise0.1", "BROKEN: OffPairStrC with σ × 0.1", _offpairstrc_noise_setup, broken=True),
    # The metric task (symmetric d×d W, Frobenius geometry, statistic ⟨W, u uᵀ⟩_F).
    Preset("onpairstrc-metric", "OnPairStrC, task='metric', one release at n, R = 0.01, λ = G(R)/R",
           _online_setup(None, "onpairstrc", "metric"), task="metric"),
    Preset("onpairc-metric", "OnPairC, task='metric', one release at n, R = 0.01, α = c·n^(−1/4) = G(R)/R",
           _online_setup(None, "onpairc", "metric"), task="metric"),
    Preset("offpairstrc-metric", "OffPairStrC, task='metric', last iterate, R = 0.01, λ = G(R)/R",
           _offline_setup("offpairstrc", "metric"), task="metric"),
    Preset("offpairc-metric", "OffPairC, task='metric', last iterate, R = 0.01, α = c/√n = G(R)/R",
           _offline_setup("offpairc", "metric"), task="metric"),
    Preset("gradient-metric", "GradientPerturbedGD (Kang et al.), task='metric', T = 1, R = 0.01",
           _offline_setup("gradient", "metric"), task="metric"),
    Preset("sgd-metric", "OutputPerturbedSGD (Yang et al.), task='metric', hinge, T = n, R = 1, PSD trace ball",
           _offline_setup("sgd", "metric"), task="metric"),
    # The learned threshold b and pair weights (1.5, 0.75) (those of 3 balanced classes): θ = (W, b).
    Preset("onpairstrc-metric-learned", "OnPairStrC, task='metric', learned threshold, pair weights (1.5, 0.75), "
           "one release at n, R = 0.01", _online_setup(None, "onpairstrc", "metric", LEARNED_TERMS), task="metric"),
    Preset("gradient-metric-learned", "GradientPerturbedGD, task='metric', learned threshold, pair weights "
           "(1.5, 0.75), T = 1, R = 0.01", _offline_setup("gradient", "metric", LEARNED_TERMS), task="metric"),
    Preset("onpairstrc-metric-learned-noise0.1", "BROKEN: OnPairStrC, task='metric', learned threshold, pair "
           "weights (1.5, 0.75), with every σ × 0.1",
           _online_setup("noise0.1", "onpairstrc", "metric", LEARNED_TERMS), broken=True, task="metric"),
    Preset("onpairstrc-metric-noise0.1", "BROKEN: OnPairStrC, task='metric', with every σ × 0.1",
           _online_setup("noise0.1", "onpairstrc", "metric"), broken=True, task="metric"),
    Preset("onpairstrc-metric-internal", "BROKEN: OnPairStrC, task='metric', releasing its internal iterate",
           _online_setup("internal", "onpairstrc", "metric"), broken=True, task="metric"),
    Preset("offpairstrc-metric-noise0.1", "BROKEN: OffPairStrC, task='metric', with σ × 0.1",
           _offpairstrc_metric_noise_setup, broken=True, task="metric"),
    # The learners on released class statistics (release: the whole release sequence's contrast for a change
    # of the first record; canary: a label flip; statistics_neighbouring_datasets).
    Preset("onpairstats", "OnPairStats, continual release (banded Toeplitz, band 64), the whole release sequence",
           _onpairstats_setup(None), datasets=statistics_neighbouring_datasets),
    Preset("onpairstats-epochs", "OnPairStats, mechanism='epochs' (doubling least-squares trees), the whole "
           "release sequence", _onpairstats_setup(None, "epochs"), datasets=statistics_neighbouring_datasets),
    Preset("onpairstats-moments", f"OnPairStats, weights {MOMENT_WEIGHTS} (the second moments dominate Δ), the "
           "whole release sequence", _onpairstats_setup(None, weights=MOMENT_WEIGHTS),
           datasets=statistics_neighbouring_datasets),
    Preset("onpairstats-metric", "OnPairStats, task='metric', classes [-1, 1], the whole release sequence",
           _onpairstats_setup(None, task="metric"), task="metric", datasets=statistics_neighbouring_datasets),
    Preset("offpairstats", "OffPairStats, one release, model_type='centroid'", _offpairstats_setup(None)),
    Preset("onpairstats-noise0.1", "BROKEN: OnPairStats with σ × 0.1", _onpairstats_setup("noise0.1"),
           broken=True, datasets=statistics_neighbouring_datasets),
    Preset("onpairstats-epochs-noise0.1", "BROKEN: OnPairStats, mechanism='epochs', with every σ × 0.1",
           _onpairstats_setup("noise0.1", "epochs"), broken=True, datasets=statistics_neighbouring_datasets),
    Preset("onpairstats-moments-m0", f"BROKEN: OnPairStats, weights {MOMENT_WEIGHTS}, Δ computed as if the "
           "moment weight were 0", _onpairstats_setup("m0", weights=MOMENT_WEIGHTS), broken=True,
           datasets=statistics_neighbouring_datasets),
    Preset("offpairstats-noise0.1", "BROKEN: OffPairStats with σ × 0.1", _offpairstats_setup("noise0.1"),
           broken=True),
    # Objective perturbation and AMP (seed 004), read through the claimed mechanism's privacy loss.
    *(Preset(name, description, _objective_setup(kind, cls_name, objective), broken=kind is not None,
             scalar_release=True, needs_neighbours=True)
      for name, description, kind, cls_name, objective in (
          ("objpert", "ObjectivePerturbedLogistic, pointwise logistic regression with intercept", None, "objpert",
           "pointwise"),
          ("objpert-pairwise", "ObjectivePerturbedLogistic, objective='pairwise' (AUC logistic loss)", None,
           "objpert", "pairwise"),
          ("amp", "ApproxMinimaPerturbedLogistic, pointwise, γ = 1e-6", None, "amp", "pointwise"),
          ("amp-pairwise", "ApproxMinimaPerturbedLogistic, objective='pairwise', γ = 1e-6", None, "amp", "pairwise"),
          ("objpert-noise0.05", "BROKEN: ObjectivePerturbedLogistic with σ of b × 0.05", "noise0.05", "objpert",
           "pointwise"),
          ("objpert-pairwise-noise0.05", "BROKEN: ObjectivePerturbedLogistic, pairwise, with σ of b × 0.05",
           "noise0.05", "objpert", "pairwise"),
      )),
)}


def audit_algorithm(algorithm: str, *, runs: int = 1000, epsilon: float = DEFAULT_EPSILON,
                    delta: float = DEFAULT_DELTA, seed=0, n: int = DEFAULT_N, d: int = DEFAULT_D,
                    data: str = "adversarial", confidence: float = 0.95) -> AuditResult:
    """Audit a preset of :data:`PRESETS` by name on :func:`neighbouring_datasets` (statistic ⟨model, u⟩),
    or for a metric-task preset (``preset.task == "metric"``) on :func:`metric_neighbouring_datasets`
    (statistic ⟨W, u uᵀ⟩_F), or for a preset with its own data sets (``preset.datasets``: the
    ``onpairstats`` presets, on :func:`statistics_neighbouring_datasets`) on those, with the release
    projected on the change learnt on the selection half.

    The claim audited is the (``epsilon``, ``delta``) the mechanism is configured with. The runs' root
    seed is ``SeedSequence([seed, crc32(algorithm)])``: reproducible, and independent between presets.
    ``details`` of the
    result add the preset's description, whether it is a deliberately broken variant, and the
    ``epsilon_spent``, ``sigma`` and ``sensitivity`` the implementation reports for one run on D′.
    """
    if algorithm not in PRESETS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(PRESETS)}")
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    preset = PRESETS[algorithm]
    root = np.random.SeedSequence([int(seed), zlib.crc32(algorithm.encode())])
    datasets = preset.datasets or (metric_neighbouring_datasets if preset.task == "metric" else neighbouring_datasets)
    D, D_prime, bounds, u = datasets(n, d, kind=data, seed=0)
    extra = {"neighbours": (D, D_prime)} if preset.needs_neighbours else {}
    make_mechanism = preset.build(float(epsilon), float(delta), int(n), int(d), bounds, **extra)
    if preset.scalar_release:
        statistic = np.ones(1)
    elif preset.datasets is not None:
        statistic = None  # the direction of the change, learnt on the selection half
    else:
        statistic = u  # metric task: u is the matrix u uᵀ
    result = audit(make_mechanism, D, D_prime, runs=runs, statistic=statistic, delta=delta,
                   claimed_epsilon=epsilon, confidence=confidence, seed=root, algorithm=algorithm)
    result.details.update({"description": preset.description, "broken": preset.broken, "n": n, "d": d,
                           "data": data})
    with _numba_threads(1):
        result.details.update(_reported(make_mechanism, D_prime))
    return result


def _reported(make_mechanism, D_prime) -> dict:
    """What the implementation itself reports for one run on D′ (ε spent, σ and sensitivity)."""
    mechanism, release = make_mechanism(np.random.SeedSequence(0))
    release(mechanism, *D_prime)
    report = getattr(mechanism, "privacy_report_", None)
    if report is None and hasattr(mechanism, "privacy_report"):
        report = mechanism.privacy_report()
    if not report or not report.get("releases"):
        return {}
    last = report["releases"][-1]
    return {"epsilon_spent": report.get("epsilon_spent"), "sigma": last.get("sigma"),
            "sensitivity": last.get("sensitivity")}


# -- command line ----------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``onpair audit`` arguments, for hooking into a sub-command parser."""
    parser.add_argument("algo", metavar="ALGO", choices=list(PRESETS),
                        help="one of: " + ", ".join(PRESETS))
    parser.add_argument("--runs", type=int, default=1000, help="runs on each data set (default 1000)")
    parser.add_argument("--epsilon", type=float, default=DEFAULT_EPSILON,
                        help=f"the ε the mechanism is configured with and claims (default {DEFAULT_EPSILON})")
    parser.add_argument("--delta", type=float, default=DEFAULT_DELTA, help=f"δ (default {DEFAULT_DELTA:g})")
    parser.add_argument("--seed", type=int, default=0, help="root seed of every run (default 0)")
    parser.add_argument("--n", type=int, default=DEFAULT_N, help=f"records per data set (default {DEFAULT_N})")
    parser.add_argument("--d", type=int, default=DEFAULT_D, help=f"features (default {DEFAULT_D})")
    parser.add_argument("--data", choices=DATA_KINDS, default="adversarial",
                        help="neighbouring data sets (default adversarial: the strongest canary)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run_from_args(args) -> int:
    """Run the audit described by parsed ``args``; print it; exit status 0 (1 on a bad argument)."""
    try:
        result = audit_algorithm(args.algo, runs=args.runs, epsilon=args.epsilon, delta=args.delta,
                                 seed=args.seed, n=args.n, d=args.d, data=args.data,
                                 confidence=args.confidence)
    except ValueError as exc:
        print(f"onpair audit: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    r = result
    verdict = "CAUGHT: the claim is violated" if r.caught else "consistent with the claim"
    print(f"{r.algorithm}: {r.details.get('description', '')}")
    print(f"  claimed      epsilon {r.claimed_epsilon:g} at delta {r.delta:g}")
    print(f"  audit        epsilon_lower {r.epsilon_lower:.3f} ({r.confidence:.0%} confidence), {verdict}")
    print(f"  test         statistic {r.rule} {r.threshold:.6g}: FPR {r.fpr:.4f} (<= {r.fpr_upper:.4f}), "
          f"FNR {r.fnr:.4f} (<= {r.fnr_upper:.4f})")
    print(f"  runs         {r.runs} per data set ({r.details['selection_runs']} choose the test, "
          f"{r.evaluation_runs} evaluate it), separation {r.details['separation']:.3f}")
    return 0


def main(argv=None) -> int:
    """``onpair audit ALGO [--runs N] [--epsilon E] [--delta D] [--seed S] [--json]``; ``argv`` is what
    follows ``onpair audit``."""
    parser = argparse.ArgumentParser(
        prog="onpair audit",
        description="Empirical privacy audit: a lower bound on the epsilon an implementation has, from "
                    "many runs on two neighbouring data sets (Clopper-Pearson bounds).")
    add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    return run_from_args(args)


if __name__ == "__main__":
    sys.exit(main())
