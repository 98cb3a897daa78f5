"""Speed of the metric-learning step: records per second at d = 19 (Diabetic Retinopathy's width).

Three implementations of the same Pairwise GIGA step on the metric task (logistic loss, Frobenius
ball), each over the same records, timed in the same process on one core:

* the compiled kernel ``onpair.giga._metric_kernels._metric_giga`` (rank-one structure: one augmented row
  per stored record, about d² multiply-adds per pair);
* the compiled per-pair variant ``metric_pair_outer_giga`` (tests/naive_metric_outer.py) that forms ``v vᵀ`` for every pair (the
  alternative the issue asked to measure against);
* plain NumPy, vectorised over the stored records per round: ``V = x − H``, ``h = rowsum((V W) ∘ V)``,
  coefficients, ``G = (a ∘ V)ᵀ V`` (two BLAS matrix products per record).

Settings: full history over n = 2,000 records (round t pairs with t − 1 records) and a FIFO buffer of
s = 256 over 4,000 records. Run: ``.venv/bin/python bench/metric_speed.py [--no-write]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from onpair.core import _metric_pair_kernels as mpk  # noqa: E402
from onpair.giga import _metric_kernels as mk  # noqa: E402
from onpair.core.matrix_geometry import FROBENIUS  # noqa: E402
from onpair.core.metric_losses import METRIC_LOGISTIC, PAPER_TERMS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import naive_metric_outer  # noqa: E402  (the per-pair formulation the fused pass replaced)
from results_file import write_section  # noqa: E402
from timing import best_time  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

SECTION = "## Metric learning: speed of the metric step"
D = 19
N_FULL = 2000
S, N_BUFFER = 256, 4000
LAM, RADIUS, STEP = 0.5, 1.0, 0.2


def records(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, D)) / np.sqrt(D)
    labels = rng.integers(0, 3, size=n).astype(np.int64)
    return X, labels


def compiled(X, labels, slots, capacity):
    n = X.shape[0]
    w = np.zeros(D * D)
    rows = np.empty((capacity, mpk.augmented_width(D)))
    row_labels = np.zeros(capacity, dtype=np.int64)
    steps = np.full(n, STEP)
    mk._metric_giga(X, labels, w, rows, row_labels, 0, 0, steps, LAM, np.zeros(D * D), RADIUS, FROBENIUS,
                    METRIC_LOGISTIC, PAPER_TERMS.as_array(), slots, np.full(n, -1, dtype=np.int64), np.zeros(0), np.zeros((0, D * D)),
                    np.zeros((0, D * D)), np.zeros(D * D))
    return w


def compiled_outer(X, labels):
    n = X.shape[0]
    w = np.zeros(D * D)
    naive_metric_outer.metric_pair_outer_giga(X, labels, w, np.empty((n, D)), np.zeros(n, dtype=np.int64), 0, 0,
                                              np.full(n, STEP), LAM, np.zeros(D * D), RADIUS, FROBENIUS,
                                              METRIC_LOGISTIC, PAPER_TERMS.as_array())
    return w


def numpy_step(X, labels, slots, capacity):
    """The same rounds in plain NumPy, vectorised over the stored records."""
    n = X.shape[0]
    W = np.zeros((D, D))
    stored = np.empty((capacity, D))
    stored_labels = np.zeros(capacity, dtype=np.int64)
    filled = 0
    for i in range(n):
        x = X[i]
        if i >= 1 and filled:
            V = x - stored[:filled]
            h = np.einsum("ij,ij->i", V @ W, V)
            tau = np.where(stored_labels[:filled] == labels[i], 1.0, -1.0)
            a = tau / (1.0 + np.exp(tau * (1.0 - h)))
            G = (V * a[:, None]).T @ V / filled
            W = W - STEP * (G + LAM * W)
            norm = np.linalg.norm(W)
            if norm > RADIUS:
                W *= RADIUS / norm
        if slots[i] >= 0:
            stored[slots[i]] = x
            stored_labels[slots[i]] = labels[i]
            filled = max(filled, slots[i] + 1)
    return W.reshape(-1)


def measure(quick=False) -> list[dict]:
    rows = []
    n_full, n_buffer = (200, 400) if quick else (N_FULL, N_BUFFER)
    X, labels = records(n_full)
    full_slots = np.arange(n_full, dtype=np.int64)
    compiled(X[:10], labels[:10], full_slots[:10], 10)  # compile
    compiled_outer(X[:10], labels[:10])
    t_kernel, w_kernel = best_time(lambda: compiled(X, labels, full_slots, n_full), 3)
    t_outer, w_outer = best_time(lambda: compiled_outer(X, labels), 2)
    t_numpy, w_numpy = best_time(lambda: numpy_step(X, labels, full_slots, n_full), 2)
    assert np.allclose(w_kernel, w_numpy, atol=1e-9) and np.allclose(w_kernel, w_outer, atol=1e-9)
    pairs = n_full * (n_full - 1) / 2
    rows.append({"setting": f"full history, n = {n_full:,}", "n": n_full, "pairs": pairs,
                 "kernel": t_kernel, "outer": t_outer, "numpy": t_numpy})
    X, labels = records(n_buffer, seed=1)
    fifo = (np.arange(n_buffer) % S).astype(np.int64)
    t_kernel, w_kernel = best_time(lambda: compiled(X, labels, fifo, S), 3)
    t_numpy, w_numpy = best_time(lambda: numpy_step(X, labels, fifo, S), 2)
    assert np.allclose(w_kernel, w_numpy, atol=1e-9)
    pairs = sum(min(t, S) for t in range(n_buffer))
    rows.append({"setting": f"FIFO buffer s = {S}, {n_buffer:,} records", "n": n_buffer, "pairs": pairs,
                 "kernel": t_kernel, "outer": None, "numpy": t_numpy})
    return rows


def table(rows) -> list[str]:
    lines = [f"Measured {datetime.date.today().isoformat()} by `bench/metric_speed.py` (d = {D}, logistic metric "
             "loss, Frobenius ball, one core; best of 2–3 runs). The three implementations agree to 1e-9.", "",
             "| setting | rank-one kernel | per-pair v vᵀ kernel | NumPy (BLAS per record) | kernel vs NumPy | "
             "kernel pairs/s |", "|---|---|---|---|---|---|"]
    for r in rows:
        outer = f"{r['n'] / r['outer']:,.0f} records/s" if r["outer"] else "—"
        lines.append(f"| {r['setting']} | {r['n'] / r['kernel']:,.0f} records/s | {outer} | "
                     f"{r['n'] / r['numpy']:,.0f} records/s | {r['numpy'] / r['kernel']:.1f}× | "
                     f"{r['pairs'] / r['kernel'] / 1e6:.1f} M |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-write", action="store_true")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args)
    lines = table(measure(args.quick))
    print(SECTION)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
