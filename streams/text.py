"""Records from text files, read one block at a time: :class:`CSVSource` and :class:`ARFFSource` (the fields of a
row parsed by :mod:`streams.columns`), with the interface of :class:`streams.sources.Source`."""

from __future__ import annotations

import csv
import io
import os

import numpy as np

from .columns import Columns, typed_labels
from .sources import RecordError, Source

__all__ = ["CSVSource", "ARFFSource"]


class _TextSource(Source):
    """Shared block assembly for the text formats: ``_rows()`` yields ``(line number, tokens)``."""

    _columns: Columns | None = None

    def _describe(self) -> str:
        return os.fspath(self.path)

    def _make_columns(self, names, n_columns) -> Columns:
        return Columns(names=names, n_columns=n_columns, **self._column_args)

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
                yield X, typed_labels(y)
                X = y = None
                m = 0
        if m:
            yield X[:m], typed_labels(y[:m])


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
