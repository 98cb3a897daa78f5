"""Fit the buffer decays of the buffered-linear-Toeplitz mechanism (``onpair.privacy.continual.blt``), once, offline.

Every error below is in units of one Gaussian release of the total at the same ρ (variance Δ²/(2ρ)): a
factorisation A = B·C releases prefix t with variance κ²·‖B_{t,:}‖² in these units, κ² the largest column
norm² of C. The reference is the exact square-root factorisation (C = B = the Toeplitz matrix of
r_n = C(2n, n)/4ⁿ): last prefix κ² = Σ_{n<T} r_n² (×4.2 in standard deviation at T = 20,000).

* **Known horizon T = 2^j** (j = 1 … 30): minimise the last prefix's variance κ²(T)·Σ_{n<T} β_n², which is the
  largest over t ≤ T (the *max* loss; the mean over the prefixes is reported beside it). Buffers: the fewest,
  up to ``FIT_MAX_BUFFERS``, whose last-prefix standard deviation is within ``FIT_TOLERANCE`` of the square
  root's. Each fit starts from the previous horizon's (and, for a new buffer, adds one at the slow end) and
  from a geometric grid, and keeps the best.
* **Unbounded**: minimise the worst ratio, over 17 horizons T = 10^3, 10^3.25, …, 10^7, of the last prefix's
  standard deviation (κ² the infinite sum) to the square root's at the same T, by a log-sum-exp smoothing
  of the max whose temperature is raised in three stages; ``--unbounded-buffers`` (6: the scan of
  ``--scan-unbounded`` shows no gain beyond).
* **A horizon between two stored ones**: ``--rules`` measures the three candidate rules at horizons that
  are not powers of two: the next larger stored fit (what the mechanism does), a log-linear interpolation
  of log(1 − θ) between the two neighbouring fits, and a fresh fit at T (with its time).

Parametrisation: the 2m values u = 1 − θ (θ'_1 … interlaced) in increasing order, as logit(u_1) and the
logs of the successive gaps of logit(u): unconstrained, and interlacing by construction. Optimiser:
scipy's L-BFGS-B (finite differences) then Nelder–Mead. The closed forms of ``BLTParameters`` cost O(m²)
whatever T, so a fit takes seconds.

``--workload-decay γ`` fits the decayed workload 1/(1 − γx) instead (reference: the square root
(1 − γx)^{−1/2}, coefficients γⁿ r_n); not used by the library yet (docs/algorithms.md §13).

Run: ``.venv/bin/python bench/generators/blt_optimise.py [--write] [--rules] [--scan-unbounded]``; ``--write``
replaces the block between ``# BEGIN FITS`` and ``# END FITS`` in onpair/privacy/continual/blt_fits.py.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, gammaln, logit

from onpair.privacy.continual import blt_fits
from onpair.privacy.continual.blt import FIT_MAX_BUFFERS, FIT_TOLERANCE, BLTParameters

MODULE = Path(blt_fits.__file__)
HORIZON_EXPONENTS = range(1, 31)
UNBOUNDED_HORIZONS = np.round(10.0 ** np.arange(3.0, 7.0001, 0.25)).astype(np.int64)
RULE_HORIZONS = (100, 1_000, 3_000, 20_000, 100_000, 300_000, 1_000_000, 5_000_000)


# -- the reference: the exact square-root factorisation ------------------------------------------------
_REFERENCE = {}


def sqrt_reference(T, workload_decay=1.0):
    """(last-prefix variance, mean-prefix variance) of the exact square root at T: κ² = Σ_{n<T} r_n²γ^{2n},
    last = κ²·κ², mean = κ²·(1/T)Σ_{n<T}(T − n) r_n²γ^{2n}. Summed in chunks (T up to 2^30) from
    log r_n = lnΓ(n + ½) − lnΓ(n + 1) − ½ln π."""
    key = (int(T), float(workload_decay))
    if key not in _REFERENCE:
        total = weighted = 0.0
        chunk = 1 << 22
        for lo in range(0, int(T), chunk):
            n = np.arange(lo, min(int(T), lo + chunk), dtype=np.float64)
            r2 = np.exp(2.0 * (gammaln(n + 0.5) - gammaln(n + 1.0) - 0.5 * math.log(math.pi)) + 2.0 * n * math.log(workload_decay))
            total += math.fsum(r2)
            weighted += math.fsum((T - n) * r2)
        _REFERENCE[key] = (total * total, total * weighted / T)
    return _REFERENCE[key]


# -- parametrisation ------------------------------------------------------------------------------------
def unpack(z):
    """z → (decays, inverse decays): u = 1 − θ increasing, logit(u_1) = z_0, gaps exp(z_1), …"""
    s = np.concatenate(([z[0]], z[0] + np.cumsum(np.exp(z[1:]))))
    theta = expit(-s)  # 1 − u, accurate for θ near 0; near 1, 1 − u rounded to the float grid
    return theta[0::2], theta[1::2]


def pack(decays, inverse_decays):
    x = np.empty(2 * len(decays))
    x[0::2], x[1::2] = decays, inverse_decays
    s = logit(1.0 - x)
    return np.concatenate(([s[0]], np.log(np.diff(s))))


def geometric_start(m, T):
    """u from ~1/(2T) to 0.8, geometrically spaced (a horizon-T scale for the slowest buffer)."""
    u = np.geomspace(0.5 / T, 0.8, 2 * m)
    return 1.0 - u[0::2], 1.0 - u[1::2]


def _params(z):
    try:
        return BLTParameters(*unpack(z))
    except ValueError:
        return None


def horizon_loss(z, T, workload_decay=1.0):
    """log of κ²(T)·Σ_{n<T} β_n² (the last prefix's variance)."""
    p = _params(z)
    if p is None:
        return 1e6
    value = p.sensitivity_squared(T) * p.error_sum(T, workload_decay)
    return math.log(value) if value > 0 and math.isfinite(value) else 1e6


def horizon_ratios(p, horizons, workload_decay=1.0):
    """Last-prefix standard deviation of an unbounded BLT over the square root's, at each horizon."""
    k2 = p.sensitivity_squared(None)
    reference = np.array([sqrt_reference(T, workload_decay)[0] for T in horizons])
    return np.sqrt(k2 * p.error_sum(np.asarray(horizons, dtype=np.float64), workload_decay) / reference)


def unbounded_loss(z, temperature, workload_decay=1.0):
    p = _params(z)
    if p is None:
        return 1e6
    r = np.log(horizon_ratios(p, UNBOUNDED_HORIZONS, workload_decay))
    if not np.all(np.isfinite(r)):
        return 1e6
    top = r.max()
    return float(top + math.log(np.exp(temperature * (r - top)).sum()) / temperature)


def polish(loss, z0, args=()):
    res = minimize(loss, z0, args=args, method="L-BFGS-B", options={"eps": 1e-7, "maxiter": 500})
    res = minimize(loss, res.x, args=args, method="Nelder-Mead",
                   options={"maxiter": 1000 * len(z0), "xatol": 1e-9, "fatol": 1e-13, "adaptive": True})
    return res


def add_slow_buffer(decays, inverse_decays):
    """One more buffer pair at the slow end (u divided by 4 and 2 from the slowest)."""
    u0 = 1.0 - decays[0]
    return (np.concatenate(([1.0 - u0 / 4], decays)), np.concatenate(([1.0 - u0 / 2], inverse_decays)))


def summary(p, T, workload_decay=1.0):
    """(last-prefix std ratio, mean-prefix rms ratio) of a BLT with horizon T against the square root."""
    k2 = p.sensitivity_squared(T)
    last, mean = sqrt_reference(T, workload_decay)
    return (math.sqrt(k2 * p.error_sum(T, workload_decay) / last),
            math.sqrt(k2 * p.mean_error_sum(T, workload_decay) / mean))


def fit_horizon(T, starts, workload_decay=1.0):
    """The best fit at T from the given starting (decays, inverse_decays)."""
    best = None
    for start in starts:
        res = polish(horizon_loss, pack(*start), (T, workload_decay))
        if best is None or res.fun < best.fun:
            best = res
    return BLTParameters(*unpack(best.x))


def fit_horizons(workload_decay=1.0, exponents=HORIZON_EXPONENTS, log=print):
    fits, previous = {}, {}
    m = 1
    for j in exponents:
        T = 2**j
        start = time.perf_counter()
        while True:
            starts = [geometric_start(m, T)]
            if m in previous:
                starts.append((previous[m].decays, previous[m].inverse_decays))
            if m - 1 in previous and m > 1:
                starts.append(add_slow_buffer(previous[m - 1].decays, previous[m - 1].inverse_decays))
            p = fit_horizon(T, starts, workload_decay)
            previous[m] = p
            last, mean = summary(p, T, workload_decay)
            if last <= 1.0 + FIT_TOLERANCE or m == FIT_MAX_BUFFERS:
                break
            m += 1
        fits[T] = p
        log(f"T = 2^{j:<2} = {T:>13,}: {m} buffers, last prefix ×{last:.5f}, mean ×{mean:.5f} of the square root "
            f"({time.perf_counter() - start:.1f} s)")
    return fits


def fit_unbounded(m, workload_decay=1.0, start=None):
    z = pack(*(start or geometric_start(m, 1e8)))
    for temperature in (50.0, 400.0, 3000.0):
        z = polish(unbounded_loss, z, (temperature, workload_decay)).x
    return BLTParameters(*unpack(z))


# -- horizons between stored fits ------------------------------------------------------------------------
def interpolate(T, fits):
    """log(1 − θ) interpolated linearly in log T between the neighbouring stored fits (None if their numbers
    of buffers differ or T is stored)."""
    stored = sorted(fits)
    hi = next(s for s in stored if s >= T)
    lo = max((s for s in stored if s < T), default=None)
    if lo is None or hi == T or fits[lo].buffers != fits[hi].buffers:
        return None
    w = (math.log(T) - math.log(lo)) / (math.log(hi) - math.log(lo))

    def mix(a, b):
        return 1.0 - np.exp((1 - w) * np.log1p(-a) + w * np.log1p(-b))
    try:
        return BLTParameters(mix(fits[lo].decays, fits[hi].decays), mix(fits[lo].inverse_decays, fits[hi].inverse_decays))
    except ValueError:
        return None


def rules_table(fits, log=print):
    log("")
    log("A horizon T between stored ones: last-prefix standard deviation of each rule over the square root's at T,")
    log("and the time of a fresh fit (warm-started from the next larger stored fit).")
    log("")
    log("| T | next larger stored (the mechanism's rule) | log-linear interpolation | fresh fit at T | fit time (s) |")
    log("|---:|---:|---:|---:|---:|")
    stored = sorted(fits)
    for T in RULE_HORIZONS:
        nxt = fits[next(s for s in stored if s >= T)]
        inter = interpolate(T, fits)
        start = time.perf_counter()
        fresh = fit_horizon(T, [(nxt.decays, nxt.inverse_decays), geometric_start(nxt.buffers, T)])
        seconds = time.perf_counter() - start
        cells = [f"{summary(p, T)[0]:.5f}" if p is not None else "n/a (buffers differ)" for p in (nxt, inter, fresh)]
        log(f"| {T:,} | {cells[0]} | {cells[1]} | {cells[2]} | {seconds:.1f} |")


# -- writing the constants ------------------------------------------------------------------------------
def _tuple(values, indent):
    """A tuple literal of floats (repr: exact), four to a line, continuation lines indented by ``indent``."""
    items = [repr(float(v)) for v in values]
    lines = [", ".join(items[i:i + 4]) for i in range(0, len(items), 4)]
    return "(" + (",\n" + " " * (indent + 1)).join(lines) + ("," if len(items) == 1 else "") + ")"


def constants_block(fits, unbounded):
    lines = ["# BEGIN FITS",
             "#: Known horizon T = 2^j → (decays θ, inverse decays θ'), minimising :data:`FIT_LOSS` at T.",
             "HORIZON_FITS = {"]
    for T, p in sorted(fits.items()):
        indent = len(f"    {T}: (")
        lines.append(f"    {T}: ({_tuple(p.decays, indent)},")
        lines.append(f"{' ' * indent}{_tuple(p.inverse_decays, indent)}),")
    lines += ["}", "",
              "#: (decays θ, inverse decays θ') for an unbounded stream, minimising :data:`UNBOUNDED_LOSS`.",
              f"UNBOUNDED_FIT = ({_tuple(unbounded.decays, 17)},",
              f"{' ' * 17}{_tuple(unbounded.inverse_decays, 17)})",
              "# END FITS"]
    return "\n".join(lines)


def write_constants(block, module=MODULE):
    """Replace the block between ``# BEGIN FITS`` and ``# END FITS`` of ``module`` (decayed_optimise.py too)."""
    text = module.read_text()
    start, end = text.index("# BEGIN FITS"), text.index("# END FITS") + len("# END FITS")
    module.write_text(text[:start] + block + text[end:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the fits in onpair/privacy/continual/blt_fits.py")
    parser.add_argument("--rules", action="store_true", help="measure the rules for horizons between stored ones")
    parser.add_argument("--scan-unbounded", action="store_true", help="unbounded fits for 2 … 8 buffers")
    parser.add_argument("--unbounded-buffers", type=int, default=6)
    parser.add_argument("--max-exponent", type=int, default=HORIZON_EXPONENTS[-1], help="fit horizons up to 2^this")
    parser.add_argument("--workload-decay", type=float, default=1.0, help="γ of the workload 1/(1 − γx)")
    args = parser.parse_args(argv)
    gamma = args.workload_decay
    if args.write and gamma != 1.0:
        parser.error("--write stores prefix-sum fits only (workload decay 1)")

    print(f"Known horizons (max loss, tolerance {FIT_TOLERANCE}, at most {FIT_MAX_BUFFERS} buffers):")
    fits = fit_horizons(gamma, range(1, args.max_exponent + 1))

    print("\nUnbounded:")
    # warm-started chain 2, 3, … buffers (a direct start at many buffers lands in worse local minima)
    candidates = range(2, (FIT_MAX_BUFFERS if args.scan_unbounded else args.unbounded_buffers) + 1)
    unbounded, start = None, None
    for m in candidates:
        t0 = time.perf_counter()
        p = fit_unbounded(m, gamma, start)
        start = add_slow_buffer(p.decays, p.inverse_decays)
        r = horizon_ratios(p, UNBOUNDED_HORIZONS, gamma)
        fine = horizon_ratios(p, np.round(10.0 ** np.arange(3.0, 7.0001, 0.05)).astype(np.int64), gamma)
        outside = horizon_ratios(p, [10, 100, 10**8, 10**9], gamma)
        print(f"{m} buffers: worst ratio {r.max():.4f} on the grid ({fine.max():.4f} on a 20-per-decade grid), at "
              f"10³ {r[0]:.4f}, 10⁷ {r[-1]:.4f}; outside the range: 10 {outside[0]:.3f}, 100 {outside[1]:.3f}, "
              f"10⁸ {outside[2]:.3f}, 10⁹ {outside[3]:.3f} ({time.perf_counter() - t0:.0f} s)")
        if m == args.unbounded_buffers:
            unbounded = p
    if args.rules:
        rules_table(fits)
    block = constants_block(fits, unbounded)
    if args.write:
        write_constants(block)
        print(f"\nwritten to {MODULE}")
    else:
        print("\n" + block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
