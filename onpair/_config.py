"""Compilation flags shared by every numba kernel.

Kept in one place (as stumpy does) so that a reviewer can see at a glance that no kernel uses
``fastmath``: kernels that add privacy noise or compare against NumPy references to 1e-10 must keep
IEEE semantics (NaN/inf propagation, no re-association).
"""

#: Options passed to every ``numba.njit`` in the package. ``cache=True`` writes compiled machine code
#: next to the sources (or to ``NUMBA_CACHE_DIR``) so that the second process start skips compilation.
NJIT_OPTIONS = {"cache": True, "nogil": True}

#: Options for the few kernels that run a ``prange`` loop.
NJIT_PARALLEL_OPTIONS = {"cache": True, "nogil": True, "parallel": True}
