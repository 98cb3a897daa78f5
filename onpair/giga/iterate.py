"""The internal iterate of an online learner: w_t, the regulariser's centre w₀ and the running sum Σ w_t.

None of it is visible to users of a private learner: only released models are (docs/algorithms.md,
"Pairwise GIGA and the online private learners"). The kernels update the three arrays in place.
"""

from __future__ import annotations

import numpy as np


class Iterate:
    """w (the internal iterate), the centre w₀ and Σ_t w_t (for the offline average output).

    Parameters
    ----------
    start : ndarray of float64, shape (p,)
        w before the first step (data-independent); copied.
    center : ndarray of float64, shape (p,)
        w₀ of ``(λ/2)‖w − w₀‖²`` (data-independent); copied.

    p is d for the AUC task, d² for the metric task (a flat symmetric matrix).

    Examples
    --------
    >>> import numpy as np
    >>> it = Iterate(np.zeros(2), np.zeros(2))
    >>> it.w.tolist(), it.iterate_sum.tolist()
    ([0.0, 0.0], [0.0, 0.0])
    """

    #: Array names in a snapshot.
    ARRAYS = ("w", "center", "iterate_sum")

    def __init__(self, start: np.ndarray, center: np.ndarray):
        self.w = np.array(start, dtype=np.float64, copy=True)
        self.center = np.array(center, dtype=np.float64, copy=True)
        self.iterate_sum = np.zeros_like(self.w)

    def export(self, arrays: dict) -> None:
        """Write the three arrays into a snapshot's ``arrays``."""
        arrays.update(w=self.w, center=self.center, iterate_sum=self.iterate_sum)

    @classmethod
    def restore(cls, reader, size: int, task, dim: int, radius: float) -> "Iterate":
        """Read the three arrays back, checked: shape (size,), finite, w and w₀ inside C."""
        iterate = cls.__new__(cls)
        iterate.w = reader.array("w", (size,))
        iterate.center = reader.array("center", (size,))
        iterate.iterate_sum = reader.array("iterate_sum", (size,))
        for name in ("w", "center"):
            problem = task.membership_error(getattr(iterate, name), dim, radius)
            if problem:
                raise reader.error(f"{name} {problem}")
        return iterate
