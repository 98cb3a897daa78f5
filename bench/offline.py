"""Full-batch pairwise gradient (Kang et al. Alg. 1's inner loop): the numba kernel against plain NumPy.

One gradient of the pairwise empirical risk at n = 4,000 records (balanced: 2,000 positives and 2,000
negatives), d = 20, logistic loss, at a fixed w with ‖w‖ = 0.1 (the default radius), records in the unit
ball. A gradient visits n⁺·n⁻ = 4,000,000 opposite-label pairs (each is two of the n(n−1) ordered pairs
of the definition; same-label pairs carry no gradient), and *pairs/s* counts those.

Timed in the same run, on the same data, each checked against the kernel (``assert_allclose``, rtol
1e-10):

1. ``onpair.batch._kernels.pairwise_gradient_sum`` — the library's kernel (A/B algebra, logistic ℓ' in
   factorised form, ``prange`` over chunks of positives) on 2 threads, and on 1 thread for the scaling.
2. NumPy as specified: per block of positives, the margins matrix by broadcasting
   (``np.subtract.outer(2s, 2t)``), ℓ'(u) = −2/(1 + e^{2u}) vectorised in place (``exp``, ``+ 1``,
   ``divide``), then the same A/B algebra: row sums A, column sums B, ``A @ X⁺ − B @ X⁻`` (BLAS). The
   block size is the fastest of a few, chosen in the run. NumPy's element-wise work is single-threaded;
   its BLAS may use both cores.
3. NumPy with the kernel's factorisation ``e^{2u_ij} = e^{2s_i}·e^{−2t_j}`` (no exp per pair): the same
   mathematical shortcut given to NumPy, to show how much of the ratio is the algebra and how much is
   compilation.
4. The literal algebra in numba: Σ_{i,j} a_ij (x_i − x_j) accumulated as d-vectors, O(n⁺·n⁻·d), with the
   same factorised coefficients and the same chunked ``prange`` (2 threads): which algebra is faster.
5. The estimator end to end: ``GradientPerturbedGD(T=10).fit`` (validation, feature map, accounting,
   noise, 10 gradients).

Results: printed as a Markdown table and written into the section
``## Offline: full-batch pairwise gradient (Kang et al.)`` of ``bench/results/offline.md``.
Usage: ``.venv/bin/python bench/offline.py [--no-write]`` (about 15 s, most of it compilation).
"""

from __future__ import annotations

import os

# Two cores for everything (set before NumPy and numba load their thread pools).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from onpair.batch._kernels import pairwise_gradient_sum  # noqa: E402
from onpair.batch.gradient_perturbation import GradientPerturbedGD  # noqa: E402
from onpair.core.losses import LOGISTIC  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_time  # noqa: E402
from results_file import results_path, write_section  # noqa: E402
from run import cpu_model, fmt_rate  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

RESULTS = results_path(__file__)
SECTION = "## Offline: full-batch pairwise gradient (Kang et al.)"
N, D, THREADS, SEED = 4000, 20, 2, 20240601
RADIUS = 0.1
TARGET_RATIO = 20.0
NUMPY_BLOCKS = (128, 256, 512, 1024)
#: Interleaved timing rounds (see main).
ROUNDS = 12


def data(n=N, d=D, seed=SEED):
    """Balanced labels, positives shifted along the first coordinates, every record in the unit ball."""
    rng = np.random.default_rng(seed)
    raw = rng.uniform(-1.0, 1.0, size=(n, d))
    raw[: n // 2, : max(1, d // 4)] += 0.3
    X = np.clip(raw, -1.0, 1.0) / np.sqrt(d)
    positives, negatives = np.ascontiguousarray(X[: n // 2]), np.ascontiguousarray(X[n // 2:])
    w = rng.standard_normal(d)
    return positives, negatives, w * (RADIUS / np.linalg.norm(w))


# -- plain NumPy -------------------------------------------------------------------------------------
def numpy_margins(positives, negatives, w, block):
    """Margins matrix per block of positives, vectorised ℓ', A/B algebra (see the module docstring)."""
    s2, t2 = 2.0 * (positives @ w), 2.0 * (negatives @ w)
    A, B = np.empty(len(s2)), np.zeros(len(t2))
    buffer = np.empty((block, len(t2)))
    with np.errstate(over="ignore"):  # e^{2u} = inf gives the right limit ℓ' = −0
        for i0 in range(0, len(s2), block):
            U = buffer[: len(s2[i0:i0 + block])]
            np.subtract.outer(s2[i0:i0 + block], t2, out=U)  # 2u_ij
            np.exp(U, out=U)
            U += 1.0
            np.divide(-2.0, U, out=U)  # ℓ'(u_ij) = −2/(1 + e^{2u_ij})
            A[i0:i0 + block] = U.sum(axis=1)
            B += U.sum(axis=0)
    return A @ positives - B @ negatives


def numpy_factorised(positives, negatives, w, block):
    """As :func:`numpy_margins` with e^{2u_ij} = e^{2(s_i−c)}·e^{−2(t_j−c)}: an outer product, no exp per pair."""
    s, t = positives @ w, negatives @ w
    centre = 0.5 * (min(s.min(), t.min()) + max(s.max(), t.max()))
    E, F = np.exp(2.0 * (s - centre)), np.exp(-2.0 * (t - centre))
    A, B = np.empty(len(s)), np.zeros(len(t))
    buffer = np.empty((block, len(t)))
    for i0 in range(0, len(s), block):
        U = buffer[: len(E[i0:i0 + block])]
        np.multiply.outer(E[i0:i0 + block], F, out=U)
        U += 1.0
        np.divide(-2.0, U, out=U)
        A[i0:i0 + block] = U.sum(axis=1)
        B += U.sum(axis=0)
    return A @ positives - B @ negatives


# -- the literal O(n⁺·n⁻·d) algebra in numba (same coefficients, same chunks) ---------------------------
@njit(parallel=True, nogil=True)
def direct_algebra(positives, negatives, w):
    """The literal O(n⁺·n⁻·d) algebra Σ_{i,j} a_ij·(x_i − x_j), with the kernel's factorised logistic
    coefficients and its chunks of 64 positives: what the A/B algebra of :mod:`onpair.batch._kernels`
    is measured against.

    Parameters
    ----------
    positives : float64 array of shape (n⁺, d)
        Positive records (read only).
    negatives : float64 array of shape (n⁻, d)
        Negative records (read only).
    w : float64 array of shape (d,)
        The point (read only).

    Returns
    -------
    float64 array of shape (d,)
        A new array, the pairwise gradient sum for the logistic loss.
    """
    n_pos, d = positives.shape
    n_neg = negatives.shape[0]
    s = np.zeros(n_pos)
    t = np.zeros(n_neg)
    for i in range(n_pos):
        for k in range(d):
            s[i] += positives[i, k] * w[k]
    for j in range(n_neg):
        for k in range(d):
            t[j] += negatives[j, k] * w[k]
    centre = 0.5 * (min(s.min(), t.min()) + max(s.max(), t.max()))
    e = np.exp(2.0 * (s - centre))
    f = np.exp(-2.0 * (t - centre))
    n_chunks = (n_pos + 63) // 64
    partial = np.zeros((n_chunks, d))
    for c in prange(n_chunks):
        acc = partial[c]
        for i in range(c * 64, min(c * 64 + 64, n_pos)):
            xi = positives[i]
            for j in range(n_neg):
                a = np.divide(-2.0, 1.0 + e[i] * f[j])
                xj = negatives[j]
                for k in range(d):
                    acc[k] += a * (xi[k] - xj[k])
    out = np.zeros(d)
    for c in range(n_chunks):
        out += partial[c]
    return out


# -- timing ------------------------------------------------------------------------------------------
def machine_lines(command):
    return [
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- command: `{command}`",
        f"- machine: {platform.platform()}; CPU: {cpu_model()}; {os.cpu_count()} logical cores; numba and BLAS "
        f"threads: {THREADS} (NumPy's element-wise work is single-threaded)",
        f"- Python {platform.python_version()}, NumPy {np.__version__}, numba {numba.__version__}",
        f"- load average when the run started: {os.getloadavg()[0]:.2f} (a 2-thread kernel on a 2-core machine "
        "is slowed most by anything else running)",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only, leave the results file alone")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args)
    n, rounds = (400, 1) if args.quick else (N, ROUNDS)
    numba.set_num_threads(min(THREADS, numba.config.NUMBA_NUM_THREADS))
    threads = numba.get_num_threads()

    positives, negatives, w = data(n)
    pairs = positives.shape[0] * negatives.shape[0]
    print(f"n = {n} ({len(positives)} positives, {len(negatives)} negatives), d = {D}: {pairs:,} opposite-label "
          f"pairs per gradient; numba threads: {threads}")

    # Compile (or load from the cache) everything first.
    small_p, small_n, _ = data(64, D, 1)
    pairwise_gradient_sum(small_p, small_n, w, LOGISTIC)
    direct_algebra(small_p, small_n, w)

    def kernel():
        return pairwise_gradient_sum(positives, negatives, w, LOGISTIC)

    reference = kernel()
    np_blocks = {}
    for name, fn in (("margins", numpy_margins), ("factorised", numpy_factorised)):
        # The block size NumPy likes best on this machine, then checked against the kernel.
        timings = {block: best_time(lambda: fn(positives, negatives, w, block), 2)[0] for block in NUMPY_BLOCKS}
        np_blocks[name] = min(timings, key=timings.get)
        result = fn(positives, negatives, w, np_blocks[name])
        np.testing.assert_allclose(result, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())
    direct_result = direct_algebra(positives, negatives, w)
    np.testing.assert_allclose(direct_result, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())

    # Interleaved rounds, best time of each: on a shared machine a busy moment then hits every
    # implementation alike instead of one of them.
    best = {key: math.inf for key in ("kernel", "kernel1", "margins", "factorised", "direct")}
    for round_ in range(rounds):
        best["kernel"] = min(best["kernel"], best_time(kernel, 10)[0])
        numba.set_num_threads(1)
        seconds, one_thread = best_time(kernel, 5)
        best["kernel1"] = min(best["kernel1"], seconds)
        numba.set_num_threads(threads)
        np.testing.assert_array_equal(one_thread, reference)  # fixed chunks: the same bits on any thread count
        best["margins"] = min(best["margins"], best_time(
            lambda: numpy_margins(positives, negatives, w, np_blocks["margins"]), 1)[0])
        best["factorised"] = min(best["factorised"], best_time(
            lambda: numpy_factorised(positives, negatives, w, np_blocks["factorised"]), 1)[0])
        if round_ % 4 == 0:
            best["direct"] = min(best["direct"], best_time(lambda: direct_algebra(positives, negatives, w), 1)[0])
    k_time, k1_time, direct_time = best["kernel"], best["kernel1"], best["direct"]
    np_results = {name: (best[name], np_blocks[name]) for name in ("margins", "factorised")}

    X = np.concatenate([positives, negatives])
    y = np.repeat([1, 0], [len(positives), len(negatives)])
    estimator = GradientPerturbedGD(epsilon=1.0, delta=1e-6, T=10, norm_bound=1.0, random_state=0)
    estimator.fit(X[::50], y[::50])  # warm-up (both labels)
    fit_time, _ = best_time(lambda: estimator.fit(X, y), 5)

    base = np_results["margins"][0]
    ratio = base / k_time
    rows = [
        ("`pairwise_gradient_sum` (numba, A/B algebra)", threads, k_time, f"**{ratio:.1f}×**"),
        ("same kernel", 1, k1_time, f"{base / k1_time:.1f}×"),
        (f"NumPy: margins matrix + vectorised ℓ', A/B algebra (block {np_results['margins'][1]})", 1, base, "1×"),
        (f"NumPy with the kernel's factorised exp, A/B algebra (block {np_results['factorised'][1]})", 1,
         np_results["factorised"][0], f"{base / np_results['factorised'][0]:.1f}×"),
        ("numba, literal algebra Σ a_ij (x_i − x_j), O(n⁺n⁻d)", threads, direct_time, f"{base / direct_time:.1f}×"),
        ("`GradientPerturbedGD(T=10).fit`, per step (end to end / 10)", threads, fit_time / 10,
         f"{base / (fit_time / 10):.1f}×"),
    ]
    header = ["implementation", "threads", "ms per gradient", "pairs/s", "vs NumPy (margins)"]
    table = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for label, n_threads, seconds, versus in rows:
        table.append(f"| {label} | {n_threads} | {seconds * 1e3:.2f} | {fmt_rate(pairs / seconds)} | {versus} |")
    met = "met" if ratio >= TARGET_RATIO else "**not met**"
    notes = [
        "",
        f"Synthetic data: n = {n:,} records (balanced), d = {D}, records in the unit ball, seed {SEED}; logistic "
        f"loss at a fixed w with ‖w‖ = {RADIUS}. pairs/s = n⁺·n⁻ = {pairs:,} opposite-label pairs per gradient ÷ "
        f"time; the best time over {rounds} interleaved rounds (kernel: 10 calls per round, literal algebra: "
        f"{(rounds + 3) // 4} calls in all). Every row's gradient equals the kernel's to rtol 1e-10 (asserted); the "
        "kernel on 1 and on 2 threads gives the same bits (asserted).",
        "",
        f"- Target: ≥ {TARGET_RATIO:.0f}× the NumPy implementation on 2 cores: {met} ({ratio:.1f}×). Against a NumPy "
        f"given the kernel's factorised exp (no exp per pair) the kernel is "
        f"{np_results['factorised'][0] / k_time:.1f}× faster, and on one thread "
        f"{np_results['margins'][0] / k1_time:.1f}× / {np_results['factorised'][0] / k1_time:.1f}× faster than the "
        "two NumPy versions: the factorisation, one fused pass without temporaries, and the second core each "
        "contribute.",
        f"- Algebra: the A/B form (Σ_i A_i x_i − Σ_j B_j x_j, O(n⁺n⁻) scalar work + O(nd)) is "
        f"{direct_time / k_time:.0f}× faster than the literal sum of difference vectors (O(n⁺n⁻d)) with the same "
        "coefficients, threads and chunks.",
        f"- Kernel per pair: {1e9 * k_time / pairs:.3f} ns on {threads} threads ({1e9 * k1_time / pairs:.3f} ns "
        f"on one): two multiplies, two adds and half a division per pair, vectorised; NumPy: "
        f"{1e9 * base / pairs:.2f} ns per pair over six passes of the margins matrix.",
        f"- The estimator's step costs {1e3 * fit_time / 10:.2f} ms against {1e3 * k_time:.2f} ms for the bare "
        "gradient (the difference: validation, feature map, the ρ ↔ ε root finding, noise, spread over 10 steps).",
    ]
    if ratio < TARGET_RATIO:
        notes.append(
            f"- Why not {TARGET_RATIO:.0f}×: that is {1e3 * base / TARGET_RATIO:.2f} ms per gradient, "
            f"{1e9 * base / TARGET_RATIO / pairs:.3f} ns per pair on {threads} cores. The kernel's pair loop is "
            "bound by the vector divider (half a division per pair: the loop with nothing but its divisions "
            "takes about 0.16 ns per pair on one core of this machine, measured in isolation) and by the "
            "load/store of the partial-B row; variants with one division per four pairs or two positives "
            "per pass measured within 10 % of it. NumPy's margins version is itself vectorised compiled code "
            "(an AVX-512 exp), so the ratio measures six passes over memory against one, not interpretation.")
    body = machine_lines("python bench/offline.py") + [""] + table + notes
    print()
    print("\n".join(table))
    print("\n".join(notes))
    if not args.no_write:
        write_section(SECTION, body)
        print(f"\nwritten to {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
