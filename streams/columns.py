"""The fields of one row of a text file: which column is the label, which are features, and how each field is
parsed (a value, a missing value and its declared fill, a label of the label map), for :mod:`streams.text`.

Every field that does not parse is a :class:`streams.sources.RecordError` naming the file, the line, the field
and the value; nothing is dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .sources import RecordError, Source


class Columns:
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


def typed_labels(y: np.ndarray) -> np.ndarray:
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
