"""Ablation of the continual-release mechanisms (issue 22, Deliver 4, first half): exact error and throughput.

* **Error**: for each mechanism and T ∈ {10³, 10⁴, 10⁵, 10⁶}, the standard deviation of the **last** prefix
  (t = T) and the root mean square over **all** prefixes t = 1 … T, both relative to one Gaussian release of
  the total at the same ρ (per-coordinate variance Δ²/(2ρ)). Exact, from the variance formulas, without T×T
  matrices: the trees by the set bits of t and their least-squares level variances
  (``TreeAggregation.level_variances``), the epochs by summing their trees, the banded and the exact square
  root by their decoder series β (a recursion, ``scipy.signal.lfilter``: O(T·b)), the BLT by its closed forms.
  Each vectorised computation is checked against the mechanism's own ``variance(t)`` at 60 values of t.
* **Throughput**: records per second at k = 110 (Phishing's released statistics) and k = 462 (d = 20), of
  ``add_one`` (the learners' per-record path) and of ``add_block`` in blocks of 256 records (one chunk of
  normals: no helper thread), as a ratio to the banded-64 mechanism's rate in the same process: five rounds
  interleaved across the mechanisms, the median round of each.

The mechanisms: least-squares tree with the horizon T; banded square root b = 64 (the learners' default,
no horizon); doubling epochs of least-squares trees (T₀ = 64, no horizon); the BLT with the horizon T and
unbounded; the exact square-root factorisation (B = C, T·k memory and work per record: the reference, not a
streaming mechanism at large T; no throughput).

Run: ``.venv/bin/python bench/continual_ablation.py [--records N]`` (prints the tables; the lead copies them
into bench/results.md).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.signal import lfilter  # noqa: E402

from onpair.privacy.continual.blt import BufferedToeplitz  # noqa: E402
from onpair.privacy.continual import (  # noqa: E402
    BandedToeplitz,
    EpochTrees,
    TreeAggregation,
    sqrt_toeplitz_coefficients,
)

HORIZONS = (10**3, 10**4, 10**5, 10**6)
DELTA, RHO = 1.0, 0.5  # the unit Δ²/(2ρ) is 1
BAND = 64
SPEED_DIMS = (110, 462)
ROUNDS = 5
BLOCK = 256


# -- per-prefix variances (units Δ²/(2ρ)), vectorised -------------------------------------------------
def tree_variances(tree, t):
    """Σ over the set bits h of t of the level variance var_h."""
    level_var = tree.level_variances()
    out = np.zeros(t.shape)
    for h, v in enumerate(level_var):
        out += ((t >> h) & 1) * v
    return out


def epoch_variances(T, first=64):
    mech = EpochTrees(dim=1, sensitivity=DELTA, rho=RHO, first_epoch=first)
    t = np.arange(1, T + 1, dtype=np.int64)
    out = np.empty(T)
    completed, e, start = 0.0, 0, 0
    while start < T:
        length = first << e
        tree = TreeAggregation(dim=1, sensitivity=DELTA, rho=RHO, horizon=length)
        inside = (t > start) & (t <= start + length)
        out[inside] = completed + tree_variances(tree, t[inside] - start)
        completed += tree.variance(length)
        start += length
        e += 1
    return out, mech


def series_variances(sigma2, c, T):
    """σ²·Σ_{n<t} β_n² for t = 1 … T, β the running sums of the coefficients of 1/c(x) (a recursion)."""
    impulse = np.zeros(T)
    impulse[0] = 1.0
    beta = np.cumsum(lfilter([1.0], c, impulse))
    return sigma2 * np.cumsum(beta * beta)


def error_rows(T):
    """[(label, last-prefix std, rms over prefixes, the mechanism, its variance(t) vectorised or None)]."""
    t = np.arange(1, T + 1, dtype=np.int64)
    rows = []
    tree = TreeAggregation(dim=1, sensitivity=DELTA, rho=RHO, horizon=T)
    rows.append(("tree, least squares (horizon T)", tree, tree_variances(tree, t)))
    unb = TreeAggregation(dim=1, sensitivity=DELTA, rho=RHO)
    rows.append(("tree, least squares (unbounded)", unb, tree_variances(unb, t)))
    band = BandedToeplitz(dim=1, sensitivity=DELTA, rho=RHO, band=BAND)
    c = sqrt_toeplitz_coefficients(BAND)
    rows.append((f"banded square root, b = {BAND} (default)", band, series_variances(band.describe()["sigma"] ** 2, c, T)))
    var, epochs = epoch_variances(T)
    rows.append(("epochs of trees (T₀ = 64)", epochs, var))
    for label, horizon in (("BLT, horizon T", T), ("BLT, unbounded", None)):
        mech = BufferedToeplitz(dim=1, sensitivity=DELTA, rho=RHO, horizon=horizon)
        p, s2 = mech.parameters, mech.describe()["sigma"] ** 2
        last, mean = s2 * p.error_sum(T), s2 * p.mean_error_sum(T)
        d = mech.describe()
        rows.append((f"{label} ({d['buffers']} buffers, fit: {d['fit']})", mech, (last, mean)))
    r = sqrt_toeplitz_coefficients(T)
    kappa2 = math.fsum(r * r)
    sqrt_var = kappa2 * np.cumsum(r * r)  # σ² = κ² in these units (× the 1 + 1e-9 margin, negligible)
    rows.append(("square root, exact (reference)", None, sqrt_var))
    out = []
    for label, mech, var in rows:
        if isinstance(var, tuple):
            last, mean = var
            check = None
        else:
            last, mean = float(var[-1]), float(np.mean(var))
            check = var
        if mech is not None:
            probe = np.unique(np.concatenate(([1, 2, 3, T - 1, T], np.geomspace(1, T, 55).astype(np.int64))))
            probe = probe[(probe >= 1) & (probe <= T)]
            expected = np.array([mech.variance(int(s)) for s in probe])
            got = check[probe - 1] if check is not None else np.array([s2_of(mech) * mech.parameters.error_sum(s)
                                                                       for s in probe])
            np.testing.assert_allclose(got, expected, rtol=1e-8, err_msg=label)
        out.append((label, math.sqrt(last), math.sqrt(mean)))
    return out


def s2_of(mech):
    return mech.describe()["sigma"] ** 2


def error_table():
    lines = [
        "Standard deviation of the released prefix relative to one Gaussian release of the total at the same ρ",
        "(per-coordinate variance Δ²/(2ρ)): **last** = the prefix t = T, **rms** = the root mean square over t = 1 … T.",
        "Exact (variance formulas; the vectorised series checked against each mechanism's `variance(t)`).",
        "",
        "| mechanism | " + " | ".join(f"T = {T:,}: last / rms" for T in HORIZONS) + " |",
        "|---|" + "---:|" * len(HORIZONS),
    ]
    cells = {}
    for T in HORIZONS:
        print(f"errors at T = {T:,} …", file=sys.stderr)
        for label, last, rms in error_rows(T):
            key = label.split(" (")[0] if label.startswith("BLT") else label
            cells.setdefault(key, {})[T] = (last, rms, label)
    for key, by_T in cells.items():
        lines.append(f"| {key} | " + " | ".join(f"×{by_T[T][0]:.2f} / ×{by_T[T][1]:.2f}" for T in HORIZONS) + " |")
    lines += ["", "BLT fits used: " + "; ".join(f"T = {T:,}: {cells[k][T][2].split('(', 1)[1].rstrip(')')}"
                                                 for k in cells if k.startswith("BLT, horizon") for T in HORIZONS),
              "BLT unbounded: " + cells["BLT, unbounded"][HORIZONS[0]][2].split("(", 1)[1].rstrip(")") + ".",
              "",
              "Relative to the exact square root (same T):",
              "",
              "| mechanism | " + " | ".join(f"T = {T:,}: last / rms" for T in HORIZONS) + " |",
              "|---|" + "---:|" * len(HORIZONS)]
    ref = cells["square root, exact (reference)"]
    for key, by_T in cells.items():
        lines.append(f"| {key} | " + " | ".join(f"{by_T[T][0] / ref[T][0]:.3f} / {by_T[T][1] / ref[T][1]:.3f}"
                                                 for T in HORIZONS) + " |")
    return lines


# -- throughput ---------------------------------------------------------------------------------------
def speed_mechanisms(k):
    return [
        (f"banded square root, b = {BAND} (default)", lambda: BandedToeplitz(dim=k, sensitivity=1.0, rho=1.0, band=BAND)),
        ("tree, least squares (horizon 10⁶)", lambda: TreeAggregation(dim=k, sensitivity=1.0, rho=1.0, horizon=10**6)),
        ("tree, least squares (unbounded)", lambda: TreeAggregation(dim=k, sensitivity=1.0, rho=1.0)),
        ("epochs of trees (T₀ = 64)", lambda: EpochTrees(dim=k, sensitivity=1.0, rho=1.0)),
        ("BLT, horizon 10⁶", lambda: BufferedToeplitz(dim=k, sensitivity=1.0, rho=1.0, horizon=10**6)),
        ("BLT, unbounded", lambda: BufferedToeplitz(dim=k, sensitivity=1.0, rho=1.0)),
    ]


def speed_rows(k, n_records):
    V = np.random.default_rng(0).uniform(-1, 1, size=(BLOCK, k)) / math.sqrt(k)
    rng = np.random.default_rng(1)
    configs = speed_mechanisms(k)
    n_single = max(BLOCK, n_records // 4)
    runners = []
    for label, make in configs:
        make().add_block(V[:3], rng)  # compile / warm up on throw-away instances
        make().add_one(V[0], rng)
        block_mech, single_mech = make(), make()

        def blocks(mech=block_mech):
            for _ in range(n_records // BLOCK):
                mech.add_block(V, rng)

        def singles(mech=single_mech):
            add = mech.add_one
            for _ in range(n_single // BLOCK):
                for i in range(BLOCK):
                    add(V[i], rng)
        runners.append((label, blocks, singles))
    times = {(label, kind): [] for label, *_ in runners for kind in ("block", "one")}
    for _ in range(ROUNDS):
        for label, blocks, singles in runners:
            start = time.perf_counter()
            blocks()
            times[(label, "block")].append((n_records // BLOCK * BLOCK) / (time.perf_counter() - start))
            start = time.perf_counter()
            singles()
            times[(label, "one")].append((n_single // BLOCK * BLOCK) / (time.perf_counter() - start))
    rates = {key: statistics.median(v) for key, v in times.items()}
    base = configs[0][0]
    return [(label, rates[(label, "one")] / rates[(base, "one")], rates[(label, "block")] / rates[(base, "block")])
            for label, *_ in runners]


def speed_table(n_records):
    lines = [
        f"Records per second relative to the banded b = {BAND} mechanism in the same process ({platform.machine()},",
        f"{os.cpu_count()} cores, shared): `add_one` per record, and `add_block` in blocks of {BLOCK}; {ROUNDS} rounds",
        f"interleaved across the mechanisms, median round; {n_records:,} records per round for blocks, a quarter for",
        "`add_one`. The exact square root is not a streaming mechanism (T·k work per record).",
        "",
        "| mechanism | " + " | ".join(f"k = {k}: add_one / add_block" for k in SPEED_DIMS) + " |",
        "|---|" + "---:|" * len(SPEED_DIMS),
    ]
    by_k = {}
    for k in SPEED_DIMS:
        print(f"throughput at k = {k} …", file=sys.stderr)
        by_k[k] = {label: (one, block) for label, one, block in speed_rows(k, n_records)}
    for label in by_k[SPEED_DIMS[0]]:
        lines.append(f"| {label} | " + " | ".join(f"×{by_k[k][label][0]:.2f} / ×{by_k[k][label][1]:.2f}"
                                                  for k in SPEED_DIMS) + " |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="records per round (add_block)")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-errors", action="store_true")
    args = parser.parse_args(argv)
    lines = [] if args.skip_errors else error_table()
    if not args.skip_speed:
        lines += ([""] if lines else []) + speed_table(args.records)
    print("## Continual release: ablation of the mechanisms (issue 22)")
    print()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
