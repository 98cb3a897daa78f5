"""Stream sources for onpair: records ``(x, y)`` one at a time, or in NumPy blocks for the compiled kernels.

* :class:`ArraySource`, :class:`CSVSource`, :class:`ARFFSource`, :class:`RiverSource`: arrays, text
  files (read one block at a time) and river's data sets (:mod:`streams.arrays`, :mod:`streams.text`,
  :mod:`streams.river_source`), with one interface (:class:`Source`, :mod:`streams.sources`):
  iteration, ``iter_blocks(block_size)``, ``iter_dicts()``, ``len`` when known, and a ``report`` of what
  was read and skipped; :data:`PHISHING_FEATURES`, the public feature names of river's Phishing;
* :mod:`streams.uci`: Hepatitis, Pima, Diabetic Retinopathy Debrecen and WDBC, each with a spec that
  carries public feature bounds (``bounds=(spec.lower, spec.upper)``), labels in {−1, +1};
* :mod:`streams.fetch`: the data directory (``$ONPAIR_DATA``, else ``~/.onpair/data``) and verified
  downloads (``onpair fetch NAME``).

Note: ``streams.fetch`` is the function (the module is ``sys.modules["streams.fetch"]``, or
``from streams.fetch import ...``).

Examples
--------
>>> import numpy as np
>>> [len(b) for b, _ in iter_blocks(np.zeros((5, 2)), np.zeros(5), block_size=2)]
[2, 2, 1]
"""

from __future__ import annotations

import numpy as np

from .arrays import ArraySource
from .fetch import ChecksumError, DownloadError, fetch, resolve_data_dir
from .river_source import PHISHING_FEATURES, RiverSource
from .sources import DEFAULT_BLOCK_SIZE, RecordError, RecordTypeError, Source
from .text import ARFFSource, CSVSource
from .uci import SPECS, UCISource, UCISpec, get_spec, load

__all__ = ["iter_blocks", "Source", "ArraySource", "CSVSource", "ARFFSource", "RiverSource", "RecordError",
           "RecordTypeError", "UCISource", "UCISpec", "SPECS", "get_spec", "load", "fetch", "resolve_data_dir",
           "ChecksumError", "DownloadError", "DEFAULT_BLOCK_SIZE", "PHISHING_FEATURES"]


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
