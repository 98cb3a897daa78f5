"""How a mechanism draws its standard normals (:func:`draw_normals`: from a generator, NumPy's own values by
:func:`onpair.privacy.continual.normals.fill_standard_normal`, or from a learner's
:class:`~onpair.privacy.continual.normals.NormalBlock`), and the helper thread that draws the next chunk's
normals while a compiled kernel consumes the current chunk
(:meth:`onpair.privacy.continual.base.PrefixSumMechanism.add_block`): the same draws in the same order from
the caller's generator, so results do not depend on it."""

from __future__ import annotations

import concurrent.futures
import os

from .normals import NormalBlock, fill_standard_normal

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


def draw_normals(source, dest) -> None:
    """Fill ``dest`` (float64, C-contiguous) with the next standard normals of ``source``: a Generator, or
    a NormalBlock (its normals drawn ahead first)."""
    if type(source) is NormalBlock:
        source.standard_normal(out=dest)
    else:
        fill_standard_normal(source, dest)
