"""Records from river's data sets (or any re-iterable of ``(dict, y)`` pairs) as arrays: :class:`RiverSource`,
and :data:`PHISHING_FEATURES`, the public feature names of river's Phishing."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sized

import numpy as np

from .sources import RecordError, RecordTypeError, Source

__all__ = ["RiverSource", "PHISHING_FEATURES"]


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
