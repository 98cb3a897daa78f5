"""The audit's statistics: Clopper–Pearson bounds, the lower bound on ε, and :func:`audit` itself (the
test chosen on one half of the runs, its error rates counted on the other; :mod:`onpair.audit`)."""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
from scipy.stats import beta as _beta

from ..privacy.exceptions import NoiseDominatedWarning

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
def numba_threads(threads):
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


@contextlib.contextmanager
def noisy_by_design():
    """The audit's data sets are a few records and one canary: most releases are noise by design (that is
    what is measured), so the NoiseDominatedWarning of each of its thousands of fits says nothing here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        yield


def _run_many(make_mechanism, data, seeds) -> np.ndarray:
    X, y = data
    out = []
    with noisy_by_design():
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
    with numba_threads(threads):
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
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("the audit statistic is not finite for some runs (NaN or ±inf): no bound can be computed "
                         "from it (a release that holds nothing about the records, e.g. no completed block)")
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
