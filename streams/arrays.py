"""Records from arrays: :class:`ArraySource`, ``X`` (n × d) and ``y`` (n,) in order, with the interface of
:class:`streams.sources.Source`."""

from __future__ import annotations

import warnings

import numpy as np

from .sources import RecordError, Source

__all__ = ["ArraySource"]


class ArraySource(Source):
    """Records from arrays ``X`` (n × d) and ``y`` (n,), in order.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features; converted to float64 once (no copy when it already is).
    y : array-like of shape (n,)
        Labels, passed through unchanged.
    feature_names : sequence of str, optional
        Names for :meth:`iter_dicts` (default ``x0, x1, ...``).
    on_error : {"raise", "skip"}
        A record with a non-finite feature raises ``ValueError`` when the source is built (before
        anything is yielded), or is skipped and counted in ``report``.

    Blocks are read-only views of ``X``: no copy, and no way to change the source through them.

    Examples
    --------
    >>> import numpy as np
    >>> src = ArraySource(np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]), np.array([1, -1, 1]))
    >>> len(src), [(x.tolist(), y) for x, y in src][:2]
    (3, [([0.0, 1.0], 1), ([2.0, 3.0], -1)])
    """

    def __init__(self, X, y, *, feature_names=None, on_error: str = "raise"):
        if isinstance(X, (str, bytes)):
            raise TypeError(f"X must be a numeric array, got a string {X!r}")
        if getattr(getattr(X, "dtype", None), "kind", None) == "c":
            raise ValueError("X has complex values: features must be real numbers")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", np.exceptions.ComplexWarning)
                X = np.asarray(X, dtype=np.float64)
        except np.exceptions.ComplexWarning:
            raise ValueError("X has complex values: features must be real numbers") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise _conversion_error(X, exc)(f"X must be a numeric array; could not convert it to float64 "
                                            f"({exc})") from None
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (records × features), got shape {X.shape}")
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} records but y has {y.shape[0]} labels")
        if feature_names is not None:
            feature_names = tuple(str(name) for name in feature_names)
            if len(feature_names) != X.shape[1]:
                raise ValueError(f"feature_names has {len(feature_names)} names but X has {X.shape[1]} features")
        super().__init__(on_error)
        self.feature_names = feature_names or tuple(f"x{k}" for k in range(X.shape[1]))
        self._X = np.ascontiguousarray(X)
        self._y = y
        if self.on_error == "raise":
            bad = ~np.isfinite(self._X)
            if bad.any():
                i, k = (int(v) for v in np.argwhere(bad)[0])
                raise ValueError(f"X[{i}, {k}] = {float(self._X[i, k])!r} (record {i + 1}, feature "
                                 f"{self.feature_names[k]!r}): features must be finite")

    @property
    def n_records(self) -> int | None:
        if self.on_error == "skip" and not np.isfinite(self._X).all():
            return None  # how many survive is known only by reading them
        return int(self._X.shape[0])

    def _blocks(self, block_size):
        for start in range(0, self._X.shape[0], block_size):
            X = self._X[start:start + block_size]
            y = self._y[start:start + block_size]
            self.report["rows_read"] += X.shape[0]
            finite = np.isfinite(X).all(axis=1)
            if not finite.all():
                for i in np.flatnonzero(~finite):
                    k = int(np.flatnonzero(~np.isfinite(X[i]))[0])
                    self._skip(RecordError(
                        f"X[{start + i}, {k}] = {float(X[i, k])!r} (record {start + i + 1}, feature "
                        f"{self.feature_names[k]!r}): features must be finite",
                        source="arrays", line=start + int(i) + 1, field=self.feature_names[k],
                        reason="non-finite value"))
                X, y = X[finite], y[finite]
            X = X.view()
            X.flags.writeable = False
            yield X, y


def _conversion_error(X, exc) -> type:
    """The exception class for an array NumPy could not convert to float64: TypeError when a value is
    not a number (a string, an object), ValueError for a value out of range or a ragged shape."""
    if isinstance(exc, OverflowError):
        return ValueError
    if isinstance(exc, TypeError):
        return TypeError
    try:
        rectangular = np.asarray(X, dtype=object).ndim == 2
    except ValueError:
        rectangular = False
    return TypeError if rectangular else ValueError  # a rectangular block failed on a value: a string
