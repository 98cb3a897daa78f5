"""Continual release of prefix sums: error of each mechanism and band, and throughput at k = 462.

* Error: per-coordinate variance of the released prefix S_t over t = 1 … T, worst and mean, for
  T = 10², 10³, 10⁴, 10⁵ at equal ρ, in units of Δ²/(2ρ) (the variance of one Gaussian release of
  the final sum at the same budget). Formula values come from ``variance(t)`` (tested against the
  brute-force covariance of the noise map); for T ≤ 10⁴ the ratio of the measured mean squared error
  (zero data, 500 independent coordinates, seed 0) to the formula is shown beside them.
* Throughput: ``add_block`` over 10⁶ records of dimension k = 462 (the learner's statistics at d = 20),
  fed in blocks of 10⁴ in five rounds interleaved across the mechanisms (the machine may be shared),
  records per second in the best round and over the whole run; beside them, the rate at which the
  same Generator draws the standard normals alone (one row of k per record for the factorisation, two
  on average for the tree), which bounds every mechanism here from above.
Run: ``.venv/bin/python bench/continual.py [--no-write] [--records N]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from onpair.privacy.continual import DEFAULT_BAND, BandedToeplitz, TreeAggregation  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import write_section  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

SECTION = "## Continual release: prefix-sum mechanisms"
HORIZONS = (10**2, 10**3, 10**4, 10**5)
BANDS = (8, 32, 64, 128, 512)
K_SPEED = 462
REPLICATES = 500
# Δ = 1 and ρ = 1/2 make the unit Δ²/(2ρ) equal to 1.
DELTA, RHO = 1.0, 0.5


def mechanisms(T, dim=1):
    """(label, constructor) for every mechanism compared at horizon T."""
    out = [
        ("tree, plain (horizon T)", lambda: TreeAggregation(dim=dim, sensitivity=DELTA, rho=RHO, horizon=T,
                                                            estimate="plain")),
        ("tree, least squares (horizon T)", lambda: TreeAggregation(dim=dim, sensitivity=DELTA, rho=RHO,
                                                                    horizon=T)),
        ("tree, least squares (unbounded)", lambda: TreeAggregation(dim=dim, sensitivity=DELTA, rho=RHO)),
    ]
    for b in BANDS:
        out.append((f"banded Toeplitz, b = {b}",
                    lambda b=b: BandedToeplitz(dim=dim, sensitivity=DELTA, rho=RHO, band=b)))
    out.append(("square-root Toeplitz, exact (b = T; T·k memory and work per record)",
                lambda: BandedToeplitz(dim=dim, sensitivity=DELTA, rho=RHO, band=T, horizon=T)))
    return out


def variances(mech, T):
    return np.array([mech.variance(t) for t in range(1, T + 1)])


def measured_ratio(make, T, seed=0):
    """Mean over t of the measured squared error divided by the mean formula variance."""
    mech = make()
    rng = np.random.default_rng(seed)
    total, step = 0.0, max(1, 2**20 // REPLICATES)
    for lo in range(0, T, step):
        out = mech.add_block(np.zeros((min(step, T - lo), REPLICATES)), rng, return_estimates=True)
        total += float((out**2).sum())
    return total / (T * REPLICATES)


def error_rows(horizons=HORIZONS):
    """(T, label, worst, mean, measured/formula or None, bounded memory?) for every mechanism."""
    rows = []
    for T in horizons:
        print(f"error at T = {T:,} …", file=sys.stderr)
        for label, make in mechanisms(T):
            var = variances(make(), T)
            ratio = None
            if T <= 10**4:
                ratio = measured_ratio(lambda make=make: _widen(make, T), T) / var.mean()
            rows.append((T, label, var.max(), var.mean(), ratio, "exact" not in label))
    return rows


def _widen(make, T):
    """The same mechanism with REPLICATES coordinates."""
    params = make().get_params()
    params["dim"] = REPLICATES
    return type(make())(**params)


def error_table(rows, horizons=HORIZONS):
    lines = [
        "Per-coordinate variance of the released prefix, in units of Δ²/(2ρ) (a single Gaussian release of",
        "the final sum at the same ρ has variance 1). Worst and mean over t = 1 … T. **Bold**: smallest",
        "among the mechanisms whose memory does not grow with T (the trees, bands up to 512); the exact",
        "square-root factorisation (b = T) is the reference, not a streaming option at large T. The banded",
        "mechanisms run without a horizon (κ² of the full band). *measured/formula*: mean squared error",
        f"over t of {REPLICATES} seeded coordinates of zero data, divided by the formula's mean (T ≤ 10⁴).",
        "",
        "| T | mechanism | worst prefix | mean | measured/formula |",
        "|---:|---|---:|---:|---:|",
    ]
    summary = {}
    for T in horizons:
        bounded = [r for r in rows if r[0] == T and r[5]]
        summary[T] = (min(bounded, key=lambda r: r[2]), min(bounded, key=lambda r: r[3]),
                      next(r for r in rows if r[0] == T and not r[5]))
    for T, label, worst, mean, ratio, bounded in rows:
        best_w, best_m, _ = summary[T]
        w = f"**{worst:,.1f}**" if label == best_w[1] else f"{worst:,.1f}"
        m = f"**{mean:,.1f}**" if label == best_m[1] else f"{mean:,.1f}"
        r = "" if ratio is None else f"{ratio:.3f}"
        lines.append(f"| {T:,} | {label if bounded else '*' + label + '*'} | {w} | {m} | {r} |")
    lines += ["", "| T | smallest worst prefix (bounded memory) | smallest mean (bounded memory) | exact square root |",
              "|---:|---|---|---|"]
    for T, (bw, bm, ex) in summary.items():
        lines.append(f"| {T:,} | {bw[1]}: {bw[2]:,.1f} | {bm[1]}: {bm[3]:,.1f} | {ex[2]:,.1f} / {ex[3]:,.1f} |")
    return lines


ROUNDS = 5


def speed_rows(n_records):
    """Each mechanism takes n_records in ROUNDS rounds, interleaved with the others' (the machine
    may be shared): (label, best round's records/s, overall records/s, state bytes)."""
    block = 10**4
    V = np.random.default_rng(0).uniform(-1, 1, size=(block, K_SPEED)) / math.sqrt(K_SPEED)
    configs = [
        ("tree, least squares (horizon 10⁶)", lambda: TreeAggregation(dim=K_SPEED, sensitivity=1.0, rho=1.0,
                                                                      horizon=10**6)),
        ("tree, plain (horizon 10⁶)", lambda: TreeAggregation(dim=K_SPEED, sensitivity=1.0, rho=1.0,
                                                              horizon=10**6, estimate="plain")),
        ("tree, least squares (unbounded)", lambda: TreeAggregation(dim=K_SPEED, sensitivity=1.0, rho=1.0)),
    ] + [(f"banded Toeplitz, b = {b}", lambda b=b: BandedToeplitz(dim=K_SPEED, sensitivity=1.0, rho=1.0, band=b))
         for b in (1,) + BANDS]
    rng = np.random.default_rng(1)
    buf = np.empty((block, K_SPEED))

    def draw_only(n):
        for _ in range(n // block):
            rng.standard_normal(out=buf)

    runners = [("NumPy `standard_normal` alone, k normals per record", draw_only, None, n_records)]
    mechs = {}
    for label, make in configs:
        make().add_block(V[:10], rng)  # compile / warm up on a throw-away instance
        mech = mechs[label] = make()
        n = n_records if "b = 512" not in label else max(block * ROUNDS, n_records // 10)

        def feed(n, mech=mech):
            for _ in range(n // block):
                mech.add_block(V, rng)
        runners.append((label + ("" if n == n_records else f" ({n:,} records)"), feed, mech, n))
    times = {label: [] for label, *_ in runners}
    for _ in range(ROUNDS):
        for label, run, _, n in runners:
            start = time.perf_counter()
            run(n // ROUNDS)
            times[label].append(time.perf_counter() - start)
    rows = []
    for label, _, mech, n in runners:
        per_round = n // ROUNDS // block * block
        state = None if mech is None else sum(a.nbytes for a in mech.to_state()[1].values())
        rows.append((label, per_round / min(times[label]), per_round * ROUNDS / sum(times[label]), state))
    return rows


def speed_table(rows, n_records):
    lines = [
        f"`add_block` at k = {K_SPEED}: {n_records:,} records per mechanism (b = 512: a tenth) in blocks of 10⁴,",
        f"fed in {ROUNDS} rounds interleaved across the mechanisms; the best round and the whole run.",
        f"{platform.machine()}, {os.cpu_count()} cores; a block's next chunk of noise is drawn in a helper thread",
        "while the kernel runs, so up to two cores are busy. The tree draws two rows of k normals per record",
        "on average (one per completed node), the factorisation one; the band adds b − 1 multiply-adds per",
        "coordinate and record. `standard_normal` alone (one thread, one row per record) bounds them all.",
        "",
        "| mechanism | records/s (best round) | records/s (whole run) | state (bytes) |",
        "|---|---:|---:|---:|",
    ]
    for label, best, overall, state in rows:
        lines.append(f"| {label} | {best:,.0f} | {overall:,.0f} | {'' if state is None else f'{state:,}'} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only; leave the results file alone")
    parser.add_argument("--records", type=int, default=10**6, help="records per throughput run")
    parser.add_argument("--skip-speed", action="store_true", help="the error tables only")
    parser.add_argument("--skip-errors", action="store_true", help="the throughput table only (implies --no-write)")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, records=ROUNDS * 10**4)
    horizons = HORIZONS[:2] if args.quick else HORIZONS
    lines = [] if args.skip_errors else error_table(error_rows(horizons), horizons)
    if not args.skip_speed:
        lines += ([""] if lines else []) + speed_table(speed_rows(args.records), args.records)
    args.no_write = args.no_write or args.skip_errors or args.skip_speed
    lines += ["", f"Default band of `BandedToeplitz`: b = {DEFAULT_BAND}."]
    print(SECTION)
    print()
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
