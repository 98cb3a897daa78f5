"""Fit the buffer decays of the decayed-sum mechanism (``onpair.privacy.continual.decayed``), once, offline.

The workload is A_γ, the lower-triangular Toeplitz matrix of γ^{t−s} (decayed sums S_t = Σ_{s≤t} γ^{t−s} v_s,
γ = 2^{−1/H} for a half-life of H records), factorised A_γ = B·C with C a buffered-linear-Toeplitz (BLT)
matrix (``onpair.privacy.continual.blt.BLTParameters``) and B = A_γ·C⁻¹. In units of one Gaussian release at
the same ρ, release t has variance κ²·Σ_{n<t} β_n², κ² = Σ_{n≥0} c_n² (every column of C, for any stream
length) and β the coefficients of B. Every β_n² is positive, so the variance grows with t towards its
**stationary** value κ²·Σ_{n≥0} β_n², finite for γ < 1: the largest over every release of an unbounded
stream. That is the loss minimised here.

The reference is the exact square root C = B = (1 − γx)^{−1/2} (coefficients γⁿ·r_n, r_n = C(2n, n)/4ⁿ),
whose stationary loss is (Σ_n γ^{2n} r_n²)² = ((2/π)·K(γ²))² (K the complete elliptic integral of the first
kind, parameter m = γ²: K(m) = (π/2)·Σ_n r_n² mⁿ). It is the best any causal Toeplitz factorisation of the
infinite workload can do: with a(x) = 1/(1 − γx) = b(x)c(x) on the unit circle, Parseval and Cauchy–Schwarz give
‖b‖₂‖c‖₂ ≥ (1/2π)∫|b(e^{iω})c(e^{iω})|dω = (1/2π)∫|a(e^{iω})|dω, with equality when |b| = |c| = |a|^{1/2}: the
square root (docs/forgetting.md).

Fits: half-lives H = 2^{j/2} (j = 4 … 48: 4 to 16,777,216 records), the fewest buffers, up to
``FIT_MAX_BUFFERS``, whose stationary standard deviation is within ``FIT_TOLERANCE`` of the square root's;
each starts from a geometric grid of decays and from the previous half-life's fit, and keeps the best.
``--rules`` measures the rule the mechanism uses for a half-life between two stored ones (the fit of the
nearest stored half-life in log scale, with the exact γ) against a fresh fit at that half-life.

Run: ``.venv/bin/python bench/generators/decayed_optimise.py [--write] [--rules]``; ``--write`` replaces the block
between ``# BEGIN FITS`` and ``# END FITS`` in onpair/privacy/continual/decayed_fits.py.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from scipy.special import ellipk

from blt_optimise import _params, _tuple, add_slow_buffer, geometric_start, pack, polish, unpack, write_constants
from onpair.privacy.continual import decayed_fits
from onpair.privacy.continual.blt import BLTParameters
from onpair.privacy.continual.decayed import decay_of, fitted_decayed_parameters

MODULE = Path(decayed_fits.__file__)
EXPONENTS = [j / 2 for j in range(4, 49)]
RULE_EXPONENTS = [e + 0.25 for e in (3.0, 6.0, 9.0, 10.0, 13.0, 16.0, 20.0)]


def sqrt_stationary(gamma):
    """Σ_n γ^{2n} r_n² = (2/π)·K(γ²): the square root's κ² (and its stationary error sum)."""
    return 2.0 / math.pi * float(ellipk(gamma * gamma))


def stationary_ratio(p, gamma):
    """Stationary standard deviation of the BLT p over the exact square root's, at γ."""
    return math.sqrt(p.sensitivity_squared(None) * p.error_sum(math.inf, gamma)) / sqrt_stationary(gamma)


def stationary_loss(z, gamma):
    p = _params(z)
    if p is None:
        return 1e6
    try:
        value = p.sensitivity_squared(None) * p.error_sum(math.inf, gamma)
    except ValueError:  # γ equal to an inverse decay (a double pole)
        return 1e6
    return math.log(value) if value > 0 and math.isfinite(value) else 1e6


def fit(gamma, starts):
    best = None
    for start in starts:
        res = polish(stationary_loss, pack(*start), (gamma,))
        if best is None or res.fun < best.fun:
            best = res
    return BLTParameters(*unpack(best.x))


def fit_all(exponents=EXPONENTS, log=print):
    fits, previous = {}, {}
    m = 1
    for e in exponents:
        H = 2.0 ** e
        gamma = decay_of(H)
        start = time.perf_counter()
        while True:
            starts = [geometric_start(m, H)]
            if m in previous:
                starts.append((previous[m].decays, previous[m].inverse_decays))
            if m > 1 and m - 1 in previous:
                starts.append(add_slow_buffer(previous[m - 1].decays, previous[m - 1].inverse_decays))
            p = fit(gamma, starts)
            previous[m] = p
            ratio = stationary_ratio(p, gamma)
            if ratio <= 1.0 + decayed_fits.FIT_TOLERANCE or m == decayed_fits.FIT_MAX_BUFFERS:
                break
            m += 1
        fits[e] = p
        log(f"H = 2^{e:<4} = {H:>14,.1f}: {m} buffers, stationary sd ×{ratio:.5f} of the square root "
            f"(κ² {p.sensitivity_squared(None):.4f}, square root {sqrt_stationary(gamma):.4f}; "
            f"{time.perf_counter() - start:.1f} s)")
    return fits


def rules_table(log=print):
    """The stored rule (nearest stored half-life, exact γ) against a fresh fit, between stored half-lives."""
    log("")
    log("| half-life | stored rule: fit of | stationary sd / square root's | fresh fit | fit time (s) |")
    log("|---:|---:|---:|---:|---:|")
    for e in RULE_EXPONENTS:
        H = 2.0 ** e
        gamma = decay_of(H)
        p, label = fitted_decayed_parameters(H)
        start = time.perf_counter()
        fresh = fit(gamma, [(p.decays, p.inverse_decays), geometric_start(p.buffers, H)])
        seconds = time.perf_counter() - start
        log(f"| {H:,.1f} | {label} | {stationary_ratio(p, gamma):.5f} | {stationary_ratio(fresh, gamma):.5f} | "
            f"{seconds:.1f} |")


def constants_block(fits):
    lines = ["# BEGIN FITS",
             "#: log₂ of the half-life H (a multiple of 1/2) → (decays θ, inverse decays θ'), minimising",
             "#: :data:`FIT_LOSS` at γ = 2^(−1/H).",
             "DECAYED_FITS = {"]
    for e, p in sorted(fits.items()):
        indent = len(f"    {e!r}: (")
        lines.append(f"    {e!r}: ({_tuple(p.decays, indent)},")
        lines.append(f"{' ' * indent}{_tuple(p.inverse_decays, indent)}),")
    lines += ["}", "# END FITS"]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the fits in onpair/privacy/continual/decayed_fits.py")
    parser.add_argument("--rules", action="store_true", help="measure the rule for half-lives between stored ones")
    args = parser.parse_args(argv)
    if args.rules:
        rules_table()
        return 0
    print(f"Decayed workload, stationary loss (tolerance {decayed_fits.FIT_TOLERANCE}, at most "
          f"{decayed_fits.FIT_MAX_BUFFERS} buffers):")
    block = constants_block(fit_all())
    if args.write:
        write_constants(block, MODULE)
        print(f"\nwritten to {MODULE}")
    else:
        print("\n" + block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
