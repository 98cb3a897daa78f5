"""Streaming at scale: the buffered kernels' throughput and a 10⁶-record stream's memory.

* ``learn_many`` with a reservoir of s = 256 (and FIFO), d = 20, logistic loss: records per second of
  the public API, beside a plain NumPy implementation of the same buffered step (per record,
  vectorised over the buffer) timed in the same run on a prefix of the same data; target ≥ 300,000
  records/s.
* Resident memory (VmRSS) while a 10⁶-record stream with s = 256 is learned in blocks of 10,000
  generated on the fly: it stays flat.
Run: ``.venv/bin/python bench/streaming.py [--no-write]``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from onpair import OnPairStrC  # noqa: E402
from onpair.core.geometry import project_l2_ball  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import write_section  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

SECTION = "## Streaming at scale: buffered variants"
D, S = 20, 256


def stream_block(rng, size):
    X = rng.uniform(-1, 1, size=(size, D)) / math.sqrt(D)
    y = np.where(X[:, 0] + 0.1 * rng.standard_normal(size) > 0, 1, -1)
    return X, y


def numpy_buffered(Z, signs, steps, lam, radius, slots):
    """The buffered Pairwise GIGA step in plain NumPy (per record, vectorised over the buffer)."""
    w = np.zeros(D)
    buffer = np.zeros((S, D))
    labels = np.zeros(S, dtype=np.int8)
    filled = 0
    for i in range(Z.shape[0]):
        x, s = Z[i], signs[i]
        if i >= 1:
            if filled:
                rows = buffer[:filled]
                u = s * (x @ w - rows @ w)
                a = s * (-2.0 / (1.0 + np.exp(2.0 * u))) * (labels[:filled] != s)
                grad = (a.sum() * x - a @ rows) / filled
            else:
                grad = np.zeros(D)
            w = project_l2_ball(w - steps[i] * (grad + lam * w), radius)
        if slots[i] >= 0:
            buffer[slots[i]], labels[slots[i]] = x, s
            filled = max(filled, slots[i] + 1)
    return w


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args)
    size, prefix, blocks = (20_000, 1_000, 2) if args.quick else (200_000, 5_000, 100)
    rng = np.random.default_rng(0)
    X, y = stream_block(rng, size)
    rows = []
    for kind in ("reservoir", "fifo"):
        best = math.inf
        for _ in range(3):
            learner = OnPairStrC(n_features=D, norm_bound=1.0, buffer=(kind, S), release_every=100_000, seed=0)
            learner.learn_many(X[:1000], y[:1000])  # compile outside the timing
            start = time.perf_counter()
            learner.learn_many(X, y)
            best = min(best, time.perf_counter() - start)
        rate = len(y) / best
        # NumPy on a prefix, same slots, same steps (the first 5,000 rounds).
        twin = OnPairStrC(n_features=D, norm_bound=1.0, buffer=(kind, S), release_every=100_000, seed=0)
        slots = twin._slots.block(0, prefix, twin._buffer_rng, 0)
        steps = twin._step_rule.block(0, prefix)
        start = time.perf_counter()
        w_numpy = numpy_buffered(X[:prefix], y[:prefix], steps, twin._lam, twin._radius, slots)
        numpy_rate = prefix / (time.perf_counter() - start)
        check = OnPairStrC(n_features=D, norm_bound=1.0, buffer=(kind, S), seed=0, horizon=10**9)
        check.learn_many(X[:prefix], y[:prefix])
        assert np.allclose(check._iterate.w, w_numpy, atol=1e-8), "the NumPy twin must compute the same iterate"
        rows.append((kind, rate, numpy_rate))
    # Memory over a 10⁶-record stream, blocks generated on the fly.
    learner = OnPairStrC(n_features=D, norm_bound=1.0, buffer=("reservoir", S), release_every=100_000, seed=1)
    block_rng = np.random.default_rng(1)
    checkpoints = []
    start = time.perf_counter()
    for block in range(blocks):
        Xb, yb = stream_block(block_rng, 10_000)
        learner.learn_many(Xb, yb)
        if (block + 1) % 20 == 0:
            checkpoints.append((learner.n_seen, rss_mib()))
    million_rate = learner.n_seen / (time.perf_counter() - start)
    lines = [f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; command: `make bench` "
             "(`bench/streaming.py`); one core", "",
             "| path | s | d | records/s | NumPy records/s (same run, 5,000-record prefix) | ratio | target |",
             "|---|---|---|---|---|---|---|"]
    for kind, rate, numpy_rate in rows:
        met = "✓" if rate >= 300_000 else "✗"
        lines.append(f"| `OnPairStrC.learn_many`, {kind} | {S} | {D} | {rate:,.0f} | {numpy_rate:,.0f} | "
                     f"{rate / numpy_rate:.0f}× | ≥ 300,000 {met} |")
    lines += ["", f"10⁶-record stream (reservoir s = {S}, d = {D}, blocks of 10,000 generated on the fly, "
              f"{million_rate:,.0f} records/s including generation): resident memory "
              + ", ".join(f"{rss:.0f} MiB after {n:,}" for n, rss in checkpoints) + " records."]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(SECTION, lines)


if __name__ == "__main__":
    main()
