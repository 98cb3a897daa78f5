"""Typed reads of an untrusted snapshot, shared by :mod:`onpair.persistence` and the state objects.

A snapshot (:mod:`onpair.persistence`) is a JSON document of scalars plus named NumPy arrays. Each state
object of a learner writes its own part and reads it back through a :class:`SnapshotReader`, which
checks every type, shape, dtype and range and raises a ``ValueError`` naming the file and the field:
a truncated, edited or foreign file never becomes a learner.

Examples
--------
>>> import numpy as np
>>> reader = SnapshotReader("model.onpair", {"w": np.zeros(3)})
>>> reader.array("w", (3,)).tolist(), reader.integer(4, "t", low=0)
([0.0, 0.0, 0.0], 4)
>>> reader.array("w", (2,))
Traceback (most recent call last):
...
ValueError: 'model.onpair': array 'w' has shape (3,) and dtype float64, expected (2,) and float64
"""

from __future__ import annotations

import math
import os

import numpy as np


class SnapshotReader:
    """Checked access to a snapshot's scalars and arrays; remembers which arrays were read.

    Parameters
    ----------
    path : str or os.PathLike
        The file, named in every error.
    arrays : dict of str to ndarray
        The snapshot's arrays (read with ``allow_pickle=False``).
    """

    def __init__(self, path, arrays=None):
        self.path = os.fspath(path)
        self.arrays = {} if arrays is None else arrays
        self.referenced = set()

    def error(self, what) -> ValueError:
        """A ``ValueError`` that names the file."""
        return ValueError(f"{self.path!r}: {what}")

    # -- JSON scalars ------------------------------------------------------------------------------
    def mapping(self, value, name, keys, required=None) -> None:
        """``value`` must be a JSON object with the ``required`` keys (default all of ``keys``) and no
        key outside ``keys`` (``keys=None``: any)."""
        if not isinstance(value, dict):
            raise self.error(f"{name} must be a JSON object, got {type(value).__name__}")
        required = list(keys if required is None else required)
        missing = [k for k in required if k not in value]
        if missing:
            raise self.error(f"{name} is missing {', '.join(map(repr, missing))}")
        if keys is not None:
            unexpected = sorted(set(value) - set(keys))
            if unexpected:
                raise self.error(f"{name} has unexpected keys {', '.join(map(repr, unexpected))}")

    def integer(self, value, name, low=None, high=None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"{name} must be an integer, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.error(f"{name} = {value!r} is out of range")
        return value

    def boolean(self, value, name) -> bool:
        if not isinstance(value, bool):
            raise self.error(f"{name} must be true or false, got {value!r}")
        return value

    def number(self, value, name) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(f"{name} must be a finite number, got {value!r}")
        return float(value)

    # -- arrays ------------------------------------------------------------------------------------
    def array(self, name, shape, dtype=np.float64, finite=True) -> np.ndarray:
        """A C-contiguous copy of array ``name`` with exactly this shape and dtype (finite values unless
        ``finite=False``)."""
        if name not in self.arrays:
            raise self.error(f"missing array {name!r}")
        value = self.arrays[name]
        self.referenced.add(name)
        if value.dtype != dtype or value.shape != tuple(shape):
            raise self.error(f"array {name!r} has shape {value.shape} and dtype {value.dtype}, expected "
                             f"{tuple(shape)} and {np.dtype(dtype)}")
        if finite and not np.all(np.isfinite(value)):
            raise self.error(f"array {name!r} has non-finite values")
        return np.array(value, dtype=dtype, order="C", copy=True)

    def rows_in_domain(self, rows: np.ndarray, name: str) -> None:
        """Stored records must lie in the image of the public bounds map (the unit ball, diameter 2):
        the ledger's constants G, Γ and L assume it."""
        if rows.size and np.max(np.linalg.norm(rows, axis=1)) > 1.0 + 1e-9:
            raise self.error(f"{name} holds records outside the mapped domain (norm > 1)")

    def unreferenced(self) -> list:
        """Names of arrays nobody read (a foreign or edited file)."""
        return sorted(set(self.arrays) - self.referenced)
