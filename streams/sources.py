"""Stream sources: records ``(x, y)`` one at a time, or in NumPy blocks for the compiled kernels.

Every source has the same interface (:class:`Source`):

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

import warnings

import csv
import io
import itertools
import math
import numbers
import os
from collections.abc import Mapping, Sized

import numpy as np

__all__ = ["Source", "ArraySource", "CSVSource", "ARFFSource", "RiverSource", "RecordError",
           "RecordTypeError", "DEFAULT_BLOCK_SIZE", "PHISHING_FEATURES"]

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


class _Columns:
    """Which column is the label, which are features, and how each field is parsed."""

    def __init__(self, *, names, n_columns, target, drop, label_map, missing_values, fill, where):
        self.where = where
        if names is not None:
            names = tuple(str(name) for name in names)
            if len(set(names)) != len(names):
                raise ValueError(f"{where}: column names must be unique, got {names!r}")
            n_columns = len(names)
        self.names = names
        self.n_columns = n_columns
        self.target = self._index(target, "target")
        drop = (drop,) if isinstance(drop, (str, int, np.integer)) else tuple(drop)
        self.drop = {self._index(column, "drop") for column in drop}
        if self.target in self.drop:
            raise ValueError(f"{where}: the target column {target!r} is also in drop")
        self.features = [k for k in range(n_columns) if k != self.target and k not in self.drop]
        if not self.features:
            raise ValueError(f"{where}: no feature columns left (target={target!r}, drop={drop!r})")
        self.feature_names = tuple(self.column_name(k) for k in self.features)
        if label_map is not None and not (isinstance(label_map, Mapping) or callable(label_map)):
            raise ValueError(f"label_map must be a mapping from the label as written to the label, or a "
                             f"callable, got {label_map!r}")
        if label_map is None or isinstance(label_map, Mapping):
            self.label_map = None if label_map is None else {str(key): value for key, value in label_map.items()}
            # A key written as a number matches the label written as the same number in any form ("0" and
            # "0.0", "1" and "1e0"): a file's labels 0.0/1.0 once failed a label map of 0/1.
            self.numeric_keys = {}
            for key in self.label_map or ():
                number = _finite_float(key)
                if number is not None:
                    if number in self.numeric_keys:
                        raise ValueError(f"label_map keys {self.numeric_keys[number]!r} and {key!r} are the same "
                                         "number: give it once")
                    self.numeric_keys[number] = key
        else:
            self.label_map = label_map  # a callable of the label as written
        if isinstance(missing_values, str):
            missing_values = (missing_values,)
        self.missing_values = frozenset(str(v).strip() for v in missing_values)
        d = len(self.features)
        if fill is None:
            self.fill = None
        else:
            try:
                fill = np.broadcast_to(np.asarray(fill, dtype=np.float64), (d,)).copy()
            except (TypeError, ValueError):
                raise ValueError(f"fill must be a number or one number per feature ({d}), got {fill!r}") from None
            if not np.all(np.isfinite(fill)):
                raise ValueError(f"fill must be finite, got {fill!r}")
            self.fill = fill
        # float() parses the common case fast; when a missing marker itself parses as a number
        # ("nan", "-999") every field goes through the checked path.
        self._fast = not any(_parses_as_float(v) for v in self.missing_values)
        if self.label_map is None:
            self.y_dtype = np.float64
        elif isinstance(self.label_map, dict):
            self.y_dtype = np.asarray(list(self.label_map.values())).dtype
        else:
            self.y_dtype = object  # whatever the callable returns

    def _index(self, column, what) -> int:
        if isinstance(column, str):
            if self.names is None or column not in self.names:
                raise ValueError(f"{self.where}: {what} column {column!r} is not a column name "
                                 f"(columns: {self.names!r})")
            return self.names.index(column)
        if isinstance(column, (bool, np.bool_)) or not isinstance(column, (int, np.integer)):
            raise ValueError(f"{self.where}: {what} must be a column index or name, got {column!r}")
        k = int(column)
        if not -self.n_columns <= k < self.n_columns:
            raise ValueError(f"{self.where}: {what} column {column!r} is out of range for "
                             f"{self.n_columns} columns")
        return k % self.n_columns

    def column_name(self, k: int) -> str:
        return self.names[k] if self.names is not None else f"x{k}"

    def field(self, k: int) -> str:
        return f"field {k + 1} ({self.column_name(k)!r})"

    def parse(self, tokens, line, x_out, source: Source):
        """Parse one row into ``x_out``; return the label, or ``None`` when the row was skipped."""
        if len(tokens) != self.n_columns:
            source._skip(RecordError(
                f"{self.where}: line {line}: expected {self.n_columns} fields, found {len(tokens)}: "
                f"{_excerpt(tokens)}", source=self.where, line=line, field=None, reason="wrong number of fields"))
            return None
        features = self.features
        filled = None
        if self._fast:
            try:
                values = [float(tokens[k]) for k in features]
            except ValueError:
                values = None
            if values is not None and all(map(math.isfinite, values)):
                x_out[:] = values
            else:
                values = None
        else:
            values = None
        if values is None:
            filled = []
            for j, k in enumerate(features):
                token = tokens[k].strip()
                if token in self.missing_values:
                    if self.fill is None:
                        source._skip(RecordError(
                            f"{self.where}: line {line}, {self.field(k)}: missing value {token!r} and no "
                            "fill declared for it", source=self.where, line=line, field=self.field(k),
                            reason="missing value"))
                        return None
                    x_out[j] = self.fill[j]
                    filled.append(j)
                    continue
                try:
                    value = float(token)
                except ValueError:
                    source._skip(RecordError(
                        f"{self.where}: line {line}, {self.field(k)}: cannot parse {tokens[k]!r} as a number",
                        source=self.where, line=line, field=self.field(k), reason="unparseable value"))
                    return None
                if not math.isfinite(value):
                    source._skip(RecordError(
                        f"{self.where}: line {line}, {self.field(k)}: {tokens[k]!r} is not a finite number",
                        source=self.where, line=line, field=self.field(k), reason="non-finite value"))
                    return None
                x_out[j] = value
        label = self.parse_label(tokens[self.target], line, source)
        if label is None:
            return None
        if filled:
            counts = source.report["missing_filled"]
            for j in filled:
                name = self.feature_names[j]
                counts[name] = counts.get(name, 0) + 1
        return label

    def parse_label(self, raw, line, source):
        token = raw.strip()
        k = self.target
        if self.label_map is not None and not isinstance(self.label_map, dict):
            try:
                return self.label_map(token)
            except (KeyError, ValueError, TypeError) as exc:
                source._skip(RecordError(
                    f"{self.where}: line {line}, {self.field(k)}: label {raw!r} is refused by label_map ({exc})",
                    source=self.where, line=line, field=self.field(k), reason="unknown label"))
                return None
        if self.label_map is not None:
            if token not in self.label_map:
                number = _finite_float(token)
                if number is not None and number in self.numeric_keys:
                    return self.label_map[self.numeric_keys[number]]
                source._skip(RecordError(
                    f"{self.where}: line {line}, {self.field(k)}: label {raw!r} is not one of "
                    f"{sorted(self.label_map)!r}", source=self.where, line=line, field=self.field(k),
                    reason="unknown label"))
                return None
            return self.label_map[token]
        try:
            value = float(token)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            source._skip(RecordError(
                f"{self.where}: line {line}, {self.field(k)}: label {raw!r} is not a finite number "
                "(pass label_map to read labels written as text)", source=self.where, line=line,
                field=self.field(k), reason="unparseable label"))
            return None
        return value


def _typed(y: np.ndarray) -> np.ndarray:
    """Labels from a callable label map (an object array) as NumPy types them (ints, floats, strings)."""
    return np.array(y.tolist()) if y.dtype == object else y


def _finite_float(token: str):
    """``token`` as a finite float, or None."""
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parses_as_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _excerpt(tokens, limit: int = 80) -> str:
    text = repr(",".join(tokens))
    return text if len(text) <= limit else text[:limit] + "…"


class _TextSource(Source):
    """Shared block assembly for the text formats: ``_rows()`` yields ``(line number, tokens)``."""

    _columns: _Columns | None = None

    def _describe(self) -> str:
        return os.fspath(self.path)

    def _make_columns(self, names, n_columns) -> _Columns:
        return _Columns(names=names, n_columns=n_columns, **self._column_args)

    def _blocks(self, block_size):
        report = self.report
        X = y = None
        m = 0
        for line, tokens in self._rows():
            if self._columns is None:  # no names and no width declared: the first row fixes the width
                self._columns = self._make_columns(None, len(tokens))
                self.feature_names = self._columns.feature_names
            columns = self._columns
            if X is None:
                # Start small and grow: a huge block_size must not allocate memory for rows never read.
                capacity = min(block_size, 4096)
                X = np.empty((capacity, len(columns.features)), dtype=np.float64)
                y = np.empty(capacity, dtype=columns.y_dtype)
            elif m == X.shape[0]:
                capacity = min(2 * X.shape[0], block_size)
                X = np.concatenate([X, np.empty((capacity - X.shape[0], X.shape[1]))])
                y = np.concatenate([y, np.empty(capacity - y.shape[0], dtype=y.dtype)])
            report["rows_read"] += 1
            label = columns.parse(tokens, line, X[m], self)
            if label is None:
                continue
            y[m] = label
            m += 1
            if m == block_size:
                yield X, _typed(y)
                X = y = None
                m = 0
        if m:
            yield X[:m], _typed(y[:m])


class CSVSource(_TextSource):
    """Records from a delimited text file, read one block at a time.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    target : int or str, default -1
        The label column: an index (negative counts from the end) or a column name.
    drop : sequence of int or str, optional
        Columns that are neither features nor label (an ID, say). Every other column is a feature.
    header : bool, default False
        Whether the first non-blank row holds the column names.
    names : sequence of str, optional
        The column names, for a file without a header (mutually exclusive with ``header=True``).
        Without names or a header, columns are called ``x0, x1, ...`` and the first row fixes their number.
    delimiter : str, default ","
    label_map : mapping or callable, optional
        Label as written (a string, stripped of spaces) → label; a label outside the map is an error. A
        callable gets the label as written and returns the label (raising ``KeyError``, ``ValueError``
        or ``TypeError`` makes the row malformed). A key written as a number also matches that number
        written otherwise (``{"0": -1, "1": 1}`` reads ``0.0`` and ``1.0``). Without it, labels must be
        finite numbers.
    missing_values : str or sequence of str, optional
        Tokens that mean "missing" (e.g. ``"?"``). A missing feature is an error unless ``fill`` is given.
    fill : float or array-like of shape (n_features,), optional
        The value that replaces a missing feature. It must not depend on the data (e.g. the midpoint of
        the public bounds); each replacement is counted in ``report["missing_filled"]``.
    comment : str, optional
        Lines starting with this string are skipped (and not counted as records).
    on_error : {"raise", "skip"}
        What a malformed row does: stop the stream with :class:`RecordError`, or get skipped and counted.
    encoding : str, default "utf-8"

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("a,b,label\\n1,2,yes\\n3,4,no\\n5,x,yes\\n")
    >>> src = CSVSource(path, header=True, target="label", label_map={"yes": 1, "no": -1}, on_error="skip")
    >>> [(x.tolist(), y) for x, y in src]
    [([1.0, 2.0], 1), ([3.0, 4.0], -1)]
    >>> src.report["rows_skipped"], src.report["skipped_reasons"]
    (1, {'unparseable value': 1})
    """

    def __init__(self, path, *, target=-1, drop=(), header: bool = False, names=None, delimiter: str = ",",
                 label_map=None, missing_values=(), fill=None, comment: str | None = None,
                 on_error: str = "raise", encoding: str = "utf-8"):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no such file")
        if header and names is not None:
            raise ValueError("give either header=True or names, not both")
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"delimiter must be a single character, got {delimiter!r}")
        self.delimiter = delimiter
        self.comment = comment
        self.encoding = encoding
        self.header = bool(header)
        super().__init__(on_error)
        self._column_args = dict(target=target, drop=drop, label_map=label_map,
                                 missing_values=missing_values, fill=fill, where=self.path)
        self._header_line = 0
        if header:
            with open(self.path, newline="", encoding=encoding) as f:
                for line, tokens in self._tokenised(f, count_blank=False):
                    names = [token.strip() for token in tokens]
                    self._header_line = line
                    break
                else:
                    raise ValueError(f"{self.path}: header=True but the file has no rows")
        if names is not None:
            self._columns = self._make_columns(names, None)
            self.feature_names = self._columns.feature_names
        else:
            # Validate the arguments that do not need the width now, with a stand-in width.
            if isinstance(target, str) or any(isinstance(c, str) for c in
                                               ((drop,) if isinstance(drop, (str, int, np.integer)) else drop)):
                raise ValueError(f"{self.path}: columns named by a string need names or header=True")

    def _decoded_lines(self, f):
        """Lines of a binary file decoded one at a time, so that a byte the encoding cannot read is a
        malformed line (named by the parser with its file and line number), not a crash of the reader."""
        for raw in f:
            try:
                yield raw.decode(self.encoding)
            except UnicodeDecodeError:
                yield f"\x00not valid {self.encoding}\x00\n"

    def _tokenised(self, f, count_blank=True):
        if "b" in getattr(f, "mode", ""):
            f = self._decoded_lines(f)
        reader = csv.reader(f, delimiter=self.delimiter)
        while True:
            try:
                tokens = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                error = RecordError(f"{self.path}: line {reader.line_num}: {exc}", source=self.path,
                                    line=reader.line_num, field=None, reason="malformed line")
                if not count_blank:  # reading the header: always an error
                    raise error from None
                self.report["rows_read"] += 1
                self._skip(error)
                continue
            if not tokens or (len(tokens) == 1 and not tokens[0].strip()):
                if count_blank:
                    self.report["blank_lines"] += 1
                continue
            if self.comment is not None and tokens[0].lstrip().startswith(self.comment):
                continue
            yield reader.line_num, tokens

    def _rows(self):
        with open(self.path, "rb") as f:
            for line, tokens in self._tokenised(f):
                if line <= self._header_line:
                    continue
                yield line, tokens


class ARFFSource(_TextSource):
    """Records from a dense ARFF file (Weka's format), read one block at a time.

    The header (``@relation``, ``@attribute``, ``@data``) is parsed by ``scipy.io.arff``, which gives the
    attribute names, their types and the allowed values of nominal attributes. The data rows are then
    parsed here, one block at a time, with the checks of :class:`CSVSource`: ``scipy.io.arff.loadarff``
    reads the whole file at once and silently ignores extra fields on a row, which a stream must not do.

    Parameters
    ----------
    path : str or os.PathLike
    target : int or str, optional
        The label attribute (default: the last one). A nominal label must be one of its declared values.
    drop, label_map, fill, on_error, encoding
        As for :class:`CSVSource`. ARFF's missing-value marker ``?`` is the only missing token.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write("@relation toy\\n@attribute a numeric\\n@attribute c {0,1}\\n@data\\n1.5,1\\n2.5,0\\n")
    >>> [(x.tolist(), y) for x, y in ARFFSource(path, label_map={"1": 1, "0": -1})]
    [([1.5], 1), ([2.5], -1)]
    """

    def __init__(self, path, *, target=None, drop=(), label_map=None, fill=None, on_error: str = "raise",
                 encoding: str = "utf-8"):
        from scipy.io import arff

        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no such file")
        self.encoding = encoding
        super().__init__(on_error)
        header = []
        self._data_line = None
        with open(self.path, encoding=encoding) as f:
            for line_number, line in enumerate(f, start=1):
                header.append(line)
                if line.strip().lower().startswith("@data"):
                    self._data_line = line_number
                    break
        if self._data_line is None:
            raise ValueError(f"{self.path}: not an ARFF file: no @data line")
        try:
            _, meta = arff.loadarff(io.StringIO("".join(header)))
        except Exception as exc:  # scipy raises several types (ParseArffError, ValueError, ...)
            raise ValueError(f"{self.path}: invalid ARFF header: {exc}") from None
        names = meta.names()
        self.attribute_types = dict(zip(names, meta.types()))
        self._nominal = {name: frozenset(meta[name][1]) for name in names if meta[name][0] == "nominal"}
        if target is None:
            target = names[-1]
        self._column_args = dict(target=target, drop=drop, label_map=label_map, missing_values=("?",),
                                 fill=fill, where=self.path)
        self._columns = self._make_columns(names, None)
        self.feature_names = self._columns.feature_names
        for k in self._columns.features:
            kind = meta[names[k]][0]
            if kind != "numeric":
                raise ValueError(f"{self.path}: attribute {names[k]!r} is {kind}; only numeric attributes "
                                 "can be features (drop it, or make it the target)")
        target_name = names[self._columns.target]
        self._target_values = self._nominal.get(target_name)
        if self._target_values is not None and isinstance(self._columns.label_map, dict):
            unknown = set(self._columns.label_map) - self._target_values
            if unknown:
                raise ValueError(f"{self.path}: label_map keys {sorted(unknown)!r} are not values of the "
                                 f"nominal attribute {target_name!r} {sorted(self._target_values)!r}")

    def _rows(self):
        columns = self._columns
        with open(self.path, encoding=self.encoding) as f:
            for line_number, line in enumerate(f, start=1):
                if line_number <= self._data_line:
                    continue
                text = line.strip()
                if not text:
                    self.report["blank_lines"] += 1
                    continue
                if text.startswith("%"):
                    continue
                if text.startswith("{"):
                    raise RecordError(f"{self.path}: line {line_number}: sparse ARFF rows are not supported",
                                      source=self.path, line=line_number, field=None, reason="sparse row")
                try:
                    tokens = [_unquote(t.strip()) for t in next(csv.reader([text], skipinitialspace=True,
                                                                            quotechar="'"))]
                except csv.Error as exc:
                    self.report["rows_read"] += 1
                    self._skip(RecordError(f"{self.path}: line {line_number}: {exc}", source=self.path,
                                           line=line_number, field=None, reason="malformed line"))
                    continue
                if self._target_values is not None and len(tokens) == columns.n_columns:
                    value = tokens[columns.target].strip()
                    if value not in self._target_values and value != "?":
                        self.report["rows_read"] += 1
                        self._skip(RecordError(
                            f"{self.path}: line {line_number}, {columns.field(columns.target)}: {value!r} is "
                            f"not a declared value {sorted(self._target_values)!r}", source=self.path,
                            line=line_number, field=columns.field(columns.target), reason="unknown label"))
                        continue
                yield line_number, tokens


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


#: The feature names of river's ``datasets.Phishing`` (UCI's Website Phishing data set), in the order river
#: lists them. They are public: documented by the data set, not read off its records. Declare them as a
#: private river model's ``features=`` (with ``bounds=(0.0, 1.0)``, the features' documented range).
PHISHING_FEATURES = ("empty_server_form_handler", "popup_window", "https", "request_from_other_domain",
                     "anchor_from_other_domain", "is_popular", "long_url", "age_of_domain", "ip_in_url")


class RiverSource(Source):
    """Records from one of river's data sets (or any iterable of ``(dict, y)`` pairs) as arrays.

    Parameters
    ----------
    dataset : river ``Dataset``, str, or iterable of (dict, label)
        A data set object (e.g. ``river.datasets.Phishing()``), the name of one of river's bundled data
        sets (``"Phishing"``; river is imported only then), or any re-iterable of ``(x, y)`` pairs with
        ``x`` a dict of numbers.
    features : sequence of str, optional
        The feature order. By default, the keys of the first record, in order; it is then fixed. A record
        that lacks one of these features or has another one is malformed (the array has fixed columns).
    label_map : mapping or callable, optional
        Applied to every label (e.g. ``{True: 1, False: -1}``). By default labels pass through.
    on_error : {"raise", "skip"}
        As for :class:`CSVSource`; record positions are 1-based.

    Examples
    --------
    >>> src = RiverSource([({"a": 1, "b": 0.5}, True), ({"a": 2, "b": 1.5}, False)],
    ...                   label_map={True: 1, False: -1})
    >>> len(src), [(x.tolist(), y) for x, y in src]
    (2, [([1.0, 0.5], 1), ([2.0, 1.5], -1)])
    """

    def __init__(self, dataset, *, features=None, label_map=None, on_error: str = "raise"):
        if isinstance(dataset, str):
            from river import datasets

            factory = getattr(datasets, dataset, None)
            if not isinstance(factory, type):
                raise ValueError(f"dataset {dataset!r} is not one of river's data sets (river.datasets)")
            dataset = factory()
        if not hasattr(dataset, "__iter__"):
            raise ValueError(f"dataset must be a river data set or an iterable of (dict, y), got {dataset!r}")
        if iter(dataset) is dataset:
            raise ValueError("dataset is a one-shot iterator; pass a re-iterable (a list, a river Dataset)")
        if label_map is not None and not (isinstance(label_map, Mapping) or callable(label_map)):
            raise ValueError(f"label_map must be a mapping or a callable, got {label_map!r}")
        self.dataset = dataset
        self.label_map = label_map
        super().__init__(on_error)
        self.feature_names = None if features is None else tuple(features)

    def _describe(self) -> str:
        return type(getattr(self, "dataset", self)).__name__

    @property
    def n_features(self) -> int | None:
        if self.feature_names is not None:
            return len(self.feature_names)
        n = getattr(self.dataset, "n_features", None)  # river's data sets declare it
        return int(n) if isinstance(n, (int, np.integer)) else None

    @property
    def n_records(self) -> int | None:
        if self.on_error == "skip":
            return None
        n = getattr(self.dataset, "n_samples", None)
        if isinstance(n, (int, np.integer)):
            return int(n)
        return len(self.dataset) if isinstance(self.dataset, Sized) else None

    def _label(self, label, position):
        if self.label_map is None:
            return label
        if callable(self.label_map) and not isinstance(self.label_map, Mapping):
            return self.label_map(label)
        try:
            return self.label_map[label]
        except (KeyError, TypeError):
            self._skip(RecordError(f"record {position}: label {label!r} is not in label_map "
                                   f"{list(self.label_map)!r}", source=self._describe(), line=position,
                                   field="label", reason="unknown label"))
            return _SKIPPED

    def _blocks(self, block_size):
        rows, labels = [], []
        where = self._describe()
        for position, record in enumerate(self.dataset, start=1):
            self.report["rows_read"] += 1
            try:
                x, label = record
            except (TypeError, ValueError):
                self._skip(RecordError(f"{where}: record {position} is not an (x, y) pair: {record!r}",
                                       source=where, line=position, field=None, reason="malformed record"))
                continue
            if not isinstance(x, Mapping):
                self._skip(RecordError(f"{where}: record {position}: x must be a dict, got {type(x).__name__}",
                                       source=where, line=position, field=None, reason="malformed record"))
                continue
            if self.feature_names is None:
                self.feature_names = tuple(x)
            row = self._row(x, position, where)
            if row is None:
                continue
            label = self._label(label, position)
            if label is _SKIPPED:
                continue
            rows.append(row)
            labels.append(label)
            if len(rows) == block_size:
                yield np.array(rows, dtype=np.float64), np.asarray(labels)
                rows, labels = [], []
        if rows:
            yield np.array(rows, dtype=np.float64), np.asarray(labels)

    def _row(self, x, position, where):
        names = self.feature_names
        if len(x) != len(names) or any(name not in x for name in names):
            missing = [name for name in names if name not in x]
            extra = [name for name in x if name not in set(names)]
            detail = (f"lacks feature {missing[0]!r}" if missing else f"has feature {extra[0]!r}, which is not "
                      f"among the {len(names)} features fixed by the first record")
            self._skip(RecordError(f"{where}: record {position} {detail}", source=where, line=position,
                                   field=(missing or extra)[0], reason="different features"))
            return None
        row = []
        for name in names:
            value = x[name]
            if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Real, np.bool_)):
                error = RecordError if isinstance(value, numbers.Number) else RecordTypeError  # complex: a value
                self._skip(error(f"{where}: record {position}, feature {name!r}: {value!r} is not a real number",
                                 source=where, line=position, field=name, reason="unparseable value"))
                return None
            try:
                value = float(value)
            except OverflowError:  # an int beyond the float range
                value = math.inf
            if not math.isfinite(value):
                self._skip(RecordError(f"{where}: record {position}, feature {name!r}: {x[name]!r} is not finite",
                                       source=where, line=position, field=name, reason="non-finite value"))
                return None
            row.append(value)
        return row


_SKIPPED = object()
