"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import math
import time


def best_time(fn, repeats):
    """Best wall time of ``repeats`` calls of ``fn``, and the last result."""
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
