"""Compilation flags shared by every numba kernel.

Kept in one place (as stumpy does) so that a reviewer can see at a glance which kernels relax IEEE
semantics: only the two pair-sum passes compiled with ``NJIT_REDUCTION_OPTIONS`` (``reassoc`` and
``contract``; no ``nnan``/``ninf``). Kernels that add privacy noise keep IEEE semantics. What is relaxed,
and why it cannot affect privacy: docs/algorithms.md#floating-point.
"""

#: Options passed to every ``numba.njit`` in the package. ``cache=True`` writes compiled machine code
#: next to the sources (numba's default, which the Makefile keeps: ``make`` and a ``python`` started by hand
#: share it; ``NUMBA_CACHE_DIR`` moves it) so that the second process start skips compilation.
NJIT_OPTIONS = {"cache": True, "nogil": True}

#: Options for the few kernels that run a ``prange`` loop.
NJIT_PARALLEL_OPTIONS = {"cache": True, "nogil": True, "parallel": True}

#: The one relaxation of IEEE semantics in the package: re-association (and fused multiply-add) in the
#: pair passes over the stored records (the AUC history margins, and the metric task's fused pass:
#: its dot products, weighted row sums and Σa partial sums), so that LLVM can split the sums into SIMD
#: partial sums. It changes rounding by a few ulps (the kernels still agree with their NumPy twins to
#: 1e-10), keeps NaN/inf semantics (no ``nnan``/``ninf``), and touches no noise: releases are computed
#: in IEEE arithmetic by other functions. Every call computes the same margin for the same inputs, so
#: feeding a block still equals feeding its records one at a time, bit for bit. numba also compiles a callee
#: that sets no ``fastmath`` with these flags when one of these functions triggers its first compilation
#: (``metric_losses._metric_pair_dloss``; bit-identical results, docs/algorithms.md#floating-point).
NJIT_REDUCTION_OPTIONS = {"cache": True, "nogil": True, "fastmath": {"reassoc", "contract"}}
