"""Atomic file writes: a temporary file in the destination folder, then ``os.replace``.

Readers see the old file or the new one, never half of one; a failure leaves no temporary behind.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path, suffix: str = ""):
    """Yield a temporary path beside ``path``; on success it replaces ``path`` with the usual
    permissions (0666 minus the umask, not mkstemp's 0600)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".onpair-", suffix=suffix)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path, suffix=".tmp") as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
