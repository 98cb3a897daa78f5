"""Stream sources: records ``(x, y)`` one at a time, or in NumPy blocks for the compiled kernels.

This module is the interface every source shares (:class:`Source`, :class:`RecordError`); the sources are
beside it: arrays (:mod:`streams.arrays`), CSV and ARFF files (:mod:`streams.text`, their fields parsed by
:mod:`streams.columns`) and river's data sets (:mod:`streams.river_source`). Every source has the same
interface:

* ``for x, y in source`` yields one record at a time: ``x`` a 1-D float64 array, ``y`` a Python scalar;
* ``source.iter_blocks(block_size)`` yields ``(X, y)`` blocks of at most ``block_size`` records, ``X`` a
  C-contiguous float64 array of shape ``(m, d)``: what ``learn_many`` and the kernels take;
* ``source.iter_dicts()`` yields ``({feature name: value}, y)``, as river's ``stream.iter_array`` does;
* ``len(source)`` when the length is known in advance (arrays, river's data sets, verified UCI files),
  otherwise ``TypeError``; ``source.n_records`` is the same number or ``None``;
* ``source.report``: what the last pass read, yielded and skipped, and why.

Reading a file never holds more than one block of parsed records in memory. Malformed input stops the
stream with a :class:`RecordError` (a ``ValueError``) naming the file, the line, the field and the value
(a :class:`RecordTypeError`, also a ``TypeError``, when a record of Python values holds a value that is
not a number; in a text file every field is text, and one that does not parse is a ``RecordError``);
with ``on_error="skip"`` the record is skipped instead and counted in ``report`` (by reason, with the
first messages kept). Nothing is dropped silently: a value that does not parse, a non-finite value, a
missing value without a declared fill, a label outside the label map and a row with the wrong number
of fields are all errors. Blank lines carry no record; they are counted in ``report["blank_lines"]``.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["Source", "RecordError", "RecordTypeError", "DEFAULT_BLOCK_SIZE"]

DEFAULT_BLOCK_SIZE = 1024
MAX_REPORTED_ERRORS = 100  # messages kept in report["errors"]; the counts are always complete


class RecordError(ValueError):
    """A record that cannot be read: names the source, the line (or record), the field and the value.

    Attributes
    ----------
    source : str
        The file (or a description of the source).
    line : int
        1-based line number in the file (1-based record position for sources that are not files).
    field : str or None
        The field, as ``"field k (name)"`` with ``k`` 1-based, when one field is at fault.
    reason : str
        A short category, the key counted in ``report["skipped_reasons"]`` when skipping.
    """

    def __init__(self, message: str, *, source: str, line: int, field: str | None, reason: str):
        super().__init__(message)
        self.source = source
        self.line = line
        self.field = field
        self.reason = reason


class RecordTypeError(RecordError, TypeError):
    """A :class:`RecordError` whose value has the wrong type: a string, ``None`` or another object
    where a number is expected in a record of Python values (:class:`RiverSource`).

    It is a ``TypeError``, as NumPy and scikit-learn raise for a non-numeric feature, and still a
    :class:`RecordError` and a ``ValueError``, so ``except RecordError`` and ``except ValueError``
    catch it as before, and ``on_error="skip"`` skips it like any malformed record.
    """


def _check_block_size(block_size) -> int:
    if isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    return int(block_size)


def _check_on_error(on_error) -> str:
    if on_error not in ("raise", "skip"):
        raise ValueError(f'on_error must be "raise" or "skip", got {on_error!r}')
    return on_error


class Source:
    """Base class of the stream sources (see the module docstring for the contract).

    Subclasses implement ``_blocks(block_size)``, a generator of ``(X, y)`` blocks that records what it
    reads in ``self.report`` through ``_skip``/``_count``.
    """

    feature_names: tuple[str, ...] | None = None
    on_error = "raise"

    def __init__(self, on_error: str = "raise"):
        self.on_error = _check_on_error(on_error)
        self.report = self._new_report()

    # -- the interface -----------------------------------------------------------------------------
    def iter_blocks(self, block_size: int = DEFAULT_BLOCK_SIZE):
        """Yield ``(X, y)`` blocks of at most ``block_size`` records, in stream order.

        ``X`` is a float64 array of shape ``(m, d)``, C-contiguous; ``y`` has shape ``(m,)``. With
        ``on_error="skip"`` a block can hold fewer records than ``block_size`` (skipped records are not
        replaced); an empty block is never yielded. Each call starts a new pass and a new ``report``.

        Examples
        --------
        >>> import numpy as np
        >>> from streams import ArraySource
        >>> src = ArraySource(np.arange(10.0).reshape(5, 2), np.array([1, -1, 1, -1, 1]))
        >>> [X.shape for X, _ in src.iter_blocks(2)]
        [(2, 2), (2, 2), (1, 2)]
        """
        block_size = _check_block_size(block_size)
        return self._pass(block_size)

    def _pass(self, block_size):
        self.report = self._new_report()
        for X, y in self._blocks(block_size):
            if X.shape[0]:
                self.report["rows_yielded"] += X.shape[0]
                yield X, y
        self.report["complete"] = True

    def __iter__(self):
        for X, y in self.iter_blocks(DEFAULT_BLOCK_SIZE):
            for i in range(X.shape[0]):
                yield X[i], y[i].item()

    def iter_dicts(self, block_size: int = DEFAULT_BLOCK_SIZE):
        """Yield ``({feature name: value}, y)`` records, the form river's models take.

        Examples
        --------
        >>> import numpy as np
        >>> from streams import ArraySource
        >>> src = ArraySource([[1.0, 2.0]], [1], feature_names=["a", "b"])
        >>> next(src.iter_dicts())
        ({'a': 1.0, 'b': 2.0}, 1)
        """
        for X, y in self.iter_blocks(block_size):
            names = self.feature_names or tuple(f"x{k}" for k in range(X.shape[1]))
            for i in range(X.shape[0]):
                yield dict(zip(names, X[i].tolist())), y[i].item()

    def take(self, k: int):
        """The first ``k`` records, one at a time (as river's ``Dataset.take``)."""
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        return itertools.islice(iter(self), int(k))

    @property
    def n_records(self) -> int | None:
        """The number of records a complete pass yields, when known in advance, else ``None``."""
        return None

    @property
    def n_features(self) -> int | None:
        """The number of features, when known (for files without a header: after the first row)."""
        return None if self.feature_names is None else len(self.feature_names)

    def __len__(self) -> int:
        n = self.n_records
        if n is None:
            raise TypeError(f"the length of this {type(self).__name__} is not known in advance; "
                            "iterate it and read report['rows_yielded']")
        return n

    def __bool__(self) -> bool:  # a source is truthy even when its length is unknown (len raises)
        return True

    # -- helpers for subclasses --------------------------------------------------------------------
    def _describe(self) -> str:
        return type(self).__name__

    def _new_report(self) -> dict:
        return {"source": self._describe(), "rows_read": 0, "rows_yielded": 0, "rows_skipped": 0,
                "skipped_reasons": {}, "errors": [], "missing_filled": {}, "blank_lines": 0,
                "complete": False}

    def _skip(self, error: RecordError) -> None:
        """Raise ``error``, or (``on_error="skip"``) count the skipped record and keep the message."""
        if self.on_error == "raise":
            raise error
        report = self.report
        report["rows_skipped"] += 1
        report["skipped_reasons"][error.reason] = report["skipped_reasons"].get(error.reason, 0) + 1
        if len(report["errors"]) < MAX_REPORTED_ERRORS:
            report["errors"].append(str(error))
