"""The helper thread that draws the next chunk's standard normals while a compiled kernel consumes the
current chunk (:meth:`onpair.privacy.continual.base.PrefixSumMechanism.add_block`): the same draws in the
same order from the caller's generator, so results do not depend on it."""

from __future__ import annotations

import concurrent.futures
import os

#: Standard normals drawn per chunk of a block (2 MiB): bounds the scratch memory of a long block
#: (two chunks) and sets the granularity at which drawing the noise overlaps the kernels.
CHUNK_VALUES = 1 << 18

_EXECUTOR = (None, None)  # (executor, pid of the process that created it)


def noise_executor():
    """The one helper thread that draws the next chunk's normals while a kernel runs (created on
    first use, and again in a forked child, which inherits the executor but not its thread; used only
    by blocks of two chunks or more)."""
    global _EXECUTOR
    executor, pid = _EXECUTOR
    if executor is None or pid != os.getpid():
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="onpair-noise")
        _EXECUTOR = (executor, os.getpid())
    return executor


def fill_normals(rng, dest):
    rng.standard_normal(out=dest)
