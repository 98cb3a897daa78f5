"""Stream sources for onpair: records one at a time or in blocks for the compiled kernels.

The full set of sources (CSV files, UCI loaders, river data sets) is the subject of the replay issue;
this package currently provides the array source the learners and demos use.
"""

from __future__ import annotations

import numpy as np


def iter_blocks(X, y, block_size: int = 1024):
    """Yield ``(X_block, y_block)`` slices of at most ``block_size`` records, in order.

    Examples
    --------
    >>> import numpy as np
    >>> [len(b) for b, _ in iter_blocks(np.zeros((5, 2)), np.zeros(5), block_size=2)]
    [2, 2, 1]
    """
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    X = np.asarray(X)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} records but y has {y.shape[0]} labels")
    for start in range(0, X.shape[0], block_size):
        yield X[start:start + block_size], y[start:start + block_size]
