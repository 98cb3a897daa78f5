"""A metric learned online (privately or not) as a river transformer, and as a distance for river's k-NN.

:class:`MetricTransformer` wraps an online learner built with ``task="metric"`` and maps dict records
(:mod:`onpair.river.records`) into the space of its visible (released) metric; :func:`metric_distance`
gives river's ``neighbors.LazySearch`` a ``dist_func`` under that metric. Only the learner's visible
model and public bounds are read.
"""

from __future__ import annotations

import copy
import math

import numpy as np
from river import base

from ..learners import OnPairC, OnPairStats, OnPairStrC, PairwiseGIGA
from ..core.matrix_geometry import metric_factor
from ..privacy.reports import extend_report
from .lineage import Lineage
from .records import RecordMapper, has_array_bounds, sorted_keys

__all__ = ["MetricTransformer", "metric_distance"]

#: Output bases of :class:`MetricTransformer`.
METRIC_BASES = ("sqrt", "eigen")


def _metric_learner(learner, name="learner"):
    """``learner`` if it is an onpair online learner with ``task="metric"``, else a ValueError."""
    if not isinstance(learner, (OnPairStats, OnPairStrC, OnPairC, PairwiseGIGA)):
        raise ValueError(f"{name} must be an onpair online learner (OnPairStats, OnPairStrC, OnPairC or PairwiseGIGA) "
                         f"with task='metric', got {type(learner).__name__}")
    if learner.task != "metric":
        raise ValueError(f"{name} has task={learner.task!r}: a learned metric needs a learner built with "
                         "task='metric' (PrivatePairwiseClassifier is the river model of the AUC task)")
    return learner


def _psd_root(W) -> np.ndarray:
    """W₊^{1/2}: the symmetric PSD square root of the PSD part of W (so that its square is W₊)."""
    M = 0.5 * (W + W.T)
    eigenvalues, eigenvectors = np.linalg.eigh(M)
    return (eigenvectors * np.sqrt(np.maximum(eigenvalues, 0.0))) @ eigenvectors.T


class _ReleasedMetric:
    """What a learner lets anyone see of its metric: its visible ``model`` (for a private learner the
    last released one) and its public bounds map. Nothing else of the learner is read.

    ``root()`` is W₊^{1/2} of the visible model and ``factor()`` the L of ``learner.transform``
    (``metric_factor``); each is computed once per visible model, not once per record.
    """

    def __init__(self, learner):
        self.learner = learner
        self._seen = None  # n_seen when the visible model was last read
        self._model = None  # that visible W
        self._derived = {}  # name -> matrix derived from it

    def _current(self, name, compute) -> np.ndarray:
        learner = self.learner
        if self._seen != learner.n_seen:
            model = learner.model
            if self._model is None or not np.array_equal(model, self._model):
                self._model, self._derived = model, {}
            self._seen = learner.n_seen
        if name not in self._derived:
            self._derived[name] = compute(self._model)
        return self._derived[name]

    def root(self) -> np.ndarray:
        return self._current("root", _psd_root)

    def factor(self) -> np.ndarray:
        return self._current("factor", metric_factor)

    def mapped(self, vector: np.ndarray) -> np.ndarray:
        """φ(x), the learner's public bounds map (as ``transform`` and ``decision_function`` apply it)."""
        return self.learner.feature_bounds.map_one(vector)


# Also a ``base.Transformer``: river 0.26's ``compose.Pipeline`` plans a step as a transformer only if it
# is one (a plain SupervisedTransformer would be run as a final step, learning the raw record without
# passing its output on); ``_supervised`` (True, from SupervisedTransformer) still makes the pipeline
# call ``learn_one(x, y)``. Older pipelines read ``_supervised`` alone.
class MetricTransformer(base.SupervisedTransformer, base.Transformer):
    """A metric learned online (privately or not) as a river supervised transformer.

    Wraps an online learner built with ``task="metric"`` (:class:`onpair.OnPairStats`, whose
    discriminant metric from continually released class statistics is the recommended private choice,
    :class:`onpair.OnPairStrC`, :class:`onpair.OnPairC`, or the non-private
    :class:`onpair.PairwiseGIGA`), which learns a
    symmetric d×d matrix W from labelled records (any class labels: records of one class should be
    close). ``learn_one(x, y)`` feeds the learner; ``transform_one(x)`` maps x so that the Euclidean
    distance between two outputs is the learned metric ``√((φ(a) − φ(b))ᵀ W₊ (φ(a) − φ(b)))``, with
    φ the learner's public bounds map and W₊ the PSD part of the learner's **visible** model (for a
    private learner: the last released one). Only the visible model and the public bounds are read
    (``learner.model``, ``learner.transform``): nothing of the learner's private state (its iterate,
    its records) reaches the output.

    Records follow the rules of :class:`PrivatePairwiseClassifier` (module docstring): a fixed
    feature order (``features``, or the sorted keys of the first record learned), a missing key reads
    as 0 before the bounds map, an undeclared key is ignored and counted (or a ``ValueError`` with
    ``unknown_features="raise"``), values must be finite real numbers. A failed ``learn_one`` (bad
    value, bad label, an error of the learner) changes nothing and spends no budget.

    The output has d keys ``f"{prefix}0"`` … ``f"{prefix}{d-1}"``. Before the feature order is known,
    or while the learner does not know its number of features (nothing learned, and no
    ``n_features`` or array bounds), there is no metric yet and the output is ``{}``.

    **Outputs age.** Each output uses the model visible when it was computed. A model that keeps
    records, such as ``neighbors.KNNClassifier`` after this step in a pipeline, compares records
    mapped by different models (a private learner releases at rounds 64, 128, 256, …). To compare
    every stored record under the current model, give the k-NN the raw records and
    :func:`metric_distance` as its distance instead.

    Parameters
    ----------
    learner : OnPairStats, OnPairStrC, OnPairC or PairwiseGIGA
        A learner built with ``task="metric"``; its ``bounds`` must be **public** (never computed
        from the data). The transformer learns through it (it is not copied).
        **A shared budget** goes on the learner: ``MetricTransformer(OnPairStats(task="metric", ...,
        accountant=budget))`` charges every release to ``budget`` as well (:mod:`onpair.privacy.accountant`),
        and river's ``clone()`` of the transformer clones the learner, which keeps sharing it (the
        transformer has no ``accountant`` of its own: one learner, one place for it).
    features : sequence, optional
        The **public** feature names, in order. Default: the sorted keys of the first record learned
        (a private learner then warns, and the report lists ``features`` and ``schedule`` as
        curator-only: those keys are the record's). Needed with array bounds, and for a learner that has
        learned already (the order it learned in).
    unknown_features : {"ignore", "raise"}, default "ignore"
        What to do with a key that is not one of the features.
    prefix : str, default "metric_"
        Prefix of the output keys.
    basis : {"sqrt", "eigen"}, default "sqrt"
        Which map with ``LᵀL = W₊``. "sqrt": ``W₊^{1/2} φ(x)`` (the symmetric square root), which
        moves continuously with W, so that outputs computed under successive models stay comparable
        (a stored record, or a downstream weight per output key, keeps its meaning). "eigen":
        exactly ``learner.transform(x)``, the coordinates along W₊'s eigenvectors, largest eigenvalue
        first, then zeros for the directions W₊ ignores; its coordinates can swap or flip sign from
        one model to the next when eigenvalues are close (W starts at a multiple of the identity),
        so it suits a fixed model (after learning) rather than a stream.

    Examples
    --------
    >>> import onpair
    >>> from river import evaluate, metrics, neighbors
    >>> from onpair.river import MetricTransformer
    >>> learner = onpair.OnPairStrC(task="metric", epsilon=1.0, bounds=(0.0, 1.0), n=200, seed=0)
    >>> model = MetricTransformer(learner, features=["a", "b"]) | neighbors.KNNClassifier(
    ...     n_neighbors=3, engine=neighbors.LazySearch(window_size=50))
    >>> stream = [({"a": (i % 3) / 3 + 0.05, "b": (i * 7 % 10) / 10}, ["low", "mid", "high"][i % 3])
    ...           for i in range(200)]
    >>> accuracy = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
    >>> bool(accuracy.get() > 0.7)
    True
    >>> sorted(model["MetricTransformer"].transform_one({"a": 0.5, "b": 0.5}))
    ['metric_0', 'metric_1']
    """

    def __init__(self, learner, features=None, unknown_features="ignore", prefix="metric_", basis="sqrt"):
        self.learner = _metric_learner(learner)
        self.features = features
        self.unknown_features = unknown_features
        self.prefix = prefix
        self.basis = basis
        records = RecordMapper(features, unknown_features, type(self).__name__)
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {prefix!r}")
        if not isinstance(basis, str) or basis not in METRIC_BASES:
            raise ValueError(f"basis must be one of {METRIC_BASES}, got {basis!r}")
        order = records.order
        dim = learner.dimension
        if order is None and has_array_bounds(learner.bounds):
            raise ValueError("the learner's array bounds need features=[...] to say which feature each bound "
                             "belongs to (the order of dict keys is not fixed)")
        if order is None and learner.n_seen:
            raise ValueError("the learner has learned already: pass features=[...] in the order it learned in")
        if order is not None and dim is not None and len(order) != dim:
            raise ValueError(f"features names {len(order)} features but the learner has {dim}")
        self._records = records
        self._metric = _ReleasedMetric(learner)
        self._lineage = Lineage()  # this transformer and its clones (see PrivatePairwiseClassifier)
        self._lineage.add(learner)

    def learn_one(self, x, y):
        """Learn one record: ``x`` a dict of features, ``y`` a class label (int, bool or string).

        A failed call changes nothing and spends no budget.
        """
        learner = self.learner
        where = f"stream position {learner.n_seen + 1}"
        records = self._records
        order, feature_set = records.order_for(x, where)
        vector, unknown, missing = records.vector(x, where, order, feature_set)
        if records.order is None and learner.private:
            records.warn_order_from_record(type(self).__name__)
        records.warn_if_empty(order, missing, unknown)
        learner.learn_one(vector, y)
        # Committed only once the learner has accepted the record.
        records.commit(order, unknown, missing, 1)

    def transform_one(self, x):
        """``{prefix + "0": …, …}``: x mapped under the learner's visible (released) metric."""
        if self._records.order is None:
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features (record to transform), got {type(x).__name__}")
            return {}
        vector, _, _ = self._records.vector(x, "record to transform")
        if self.learner.dimension is None:
            return {}
        if self.basis == "sqrt":
            mapped = self._metric.root() @ self._metric.mapped(vector)
        else:
            # learner.transform's L φ(x), with L computed once per release instead of once per record.
            mapped = (self._metric.mapped(vector)[None, :] @ self._metric.factor().T)[0]
        values = mapped.tolist()
        values += [0.0] * (len(self._records.order) - len(values))  # "eigen": W₊ has rank < d
        prefix = self.prefix
        return {f"{prefix}{i}": value for i, value in enumerate(values)}

    @property
    def feature_order(self):
        """The feature order (a tuple), or None until it is given or fixed by the first record."""
        return self._records.order

    @property
    def n_seen(self) -> int:
        """Records the learner has learned."""
        return self.learner.n_seen

    @property
    def model(self) -> np.ndarray:
        """The learner's visible W (d×d; for a private learner, the last released one)."""
        return self.learner.model

    def privacy_report(self, passes=1, order="same") -> dict:
        """The learner's report (``passes`` and ``order`` as there: ``record_level``) with the record counts
        of :meth:`PrivatePairwiseClassifier.privacy_report` (``features``, ``n_unknown_feature_records``,
        ``unknown_features``, ``n_missing_feature_records``: from the data without noise, for the
        data curator only, and listed under ``curator_only`` with ``features`` and ``schedule`` when the
        feature order was read off the first record)."""
        report = self.learner.privacy_report(passes, order)
        lineage = self._lineage.report(report["delta"], report["accounting"])
        return extend_report(report, public={"lineage": lineage, **self._records.report()},
                             extra_curator=self._records.curator_fields())

    def clone(self, new_params=None, include_attributes=False):
        """A new transformer around a **new, unfitted learner** with the same parameters.

        As :meth:`PrivatePairwiseClassifier.clone`: nothing private is copied, and a private clone
        is a new mechanism with its own budget (with a ``seed``, it repeats the original's noise);
        ``privacy_report()["lineage"]`` adds up what the transformer and its clones spent.
        ``include_attributes=True`` is refused once the learner has learned (a copy would hold its
        records, and for a private learner reuse its noise and its budget). ``new_params`` may give
        another ``learner``; passing this transformer's own learner still builds a new one.
        """
        if include_attributes and self.learner.n_seen:
            raise TypeError(f"a fitted {type(self).__name__} cannot be cloned with its attributes: the copy "
                            "would hold the learner's records (and, for a private learner, reuse its noise "
                            "and its budget)")
        params = dict(new_params or {})
        if params.get("learner") is self.learner:
            # river's recursive clone passes a nested estimator's own parameters back: the learner
            # itself, which a clone must not share (it would learn every record twice, on one budget).
            del params["learner"]
        if "learner" not in params:
            params["learner"] = self.learner.clone()
        for name in ("features", "unknown_features", "prefix", "basis"):
            params.setdefault(name, copy.deepcopy(getattr(self, name)))
        clone = type(self)(**params)
        # A new mechanism on the same records: its ρ adds up with this one's in the shared lineage report.
        clone._lineage = self._lineage
        self._lineage.add(clone.learner)
        return clone


class _MetricDistance:
    """``dist(a, b)`` under a metric learner's visible model (see :func:`metric_distance`)."""

    def __init__(self, learner, features):
        if isinstance(learner, MetricTransformer):
            self._transformer = learner
            self._learner = learner.learner
            self._raise_unknown = learner._records.raise_unknown
        else:
            self._transformer = None
            self._learner = _metric_learner(learner)
            self._raise_unknown = False
        self._mapper = RecordMapper(features)
        self._features = self._mapper.order
        dim = self._learner.dimension
        if self._features is not None and dim is not None and len(self._features) != dim:
            raise ValueError(f"features names {len(self._features)} features but the learner has {dim}")
        if self._features is None and self._transformer is None and has_array_bounds(self._learner.bounds):
            raise ValueError("the learner's array bounds need features=[...] to say which feature each bound "
                             "belongs to (the order of dict keys is not fixed)")
        self._feature_set = frozenset(self._features) if self._features is not None else None
        self._metric = _ReleasedMetric(self._learner)

    def _order(self, a, b):
        if self._features is not None:
            return self._features, self._feature_set
        if self._transformer is not None:
            order = self._transformer._records.order
            if order is None:
                raise ValueError("the transformer has no feature order yet: it fixes it with the first record "
                                 "it learns (or pass features=[...])")
            return order, self._transformer._records.feature_set
        for record in (a, b):
            if not isinstance(record, dict):
                raise TypeError(f"records must be dicts of features, got {type(record).__name__}")
        order = sorted_keys(a.keys() | b.keys())
        return order, frozenset(order)

    def __call__(self, a, b) -> float:
        learner = self._learner
        order, feature_set = self._order(a, b)
        if learner.dimension is None:
            raise ValueError("the learner has no metric yet: it learns its number of features with its first "
                             "record (or pass n_features= or array bounds to it)")
        if len(order) != learner.dimension:
            raise ValueError(f"the records have {len(order)} features but the learner has {learner.dimension}: pass "
                             "features=[...]")
        vector = self._mapper.vector
        va, _, _ = vector(a, "first record compared", order, feature_set, self._raise_unknown)
        vb, _, _ = vector(b, "second record compared", order, feature_set, self._raise_unknown)
        metric = self._metric
        diff = metric.root() @ (metric.mapped(va) - metric.mapped(vb))
        return math.sqrt(float(diff @ diff))

    # A distance is a read-only view of its learner: copies (river's k-NN clones its search engine,
    # distance included) share the learner instead of copying it, so they follow its releases.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def metric_distance(learner, features=None):
    """A distance between two river records under a metric learner's visible (released) model.

    Returns a callable ``dist(a: dict, b: dict) -> float`` =
    ``√((φ(a) − φ(b))ᵀ W₊ (φ(a) − φ(b)))`` with φ the learner's public bounds map and W₊ the PSD part
    of the learner's visible model (for a private learner, the last released one), read at each call:
    the distance follows the learner as it learns and releases. It equals the Euclidean distance
    between ``learner.transform`` of the two records. Only the visible model and the public bounds
    are read, nothing of the learner's private state. Records are read as :class:`MetricTransformer`
    reads them (a missing key is 0, an undeclared key is ignored, a value that is not a finite real
    number is a ``ValueError``).

    Use it as the distance of river's ``neighbors.KNNClassifier``, whose window then keeps the raw
    records, all compared under the current model::

        neighbors.KNNClassifier(engine=neighbors.LazySearch(window_size=200,
                                                             dist_func=metric_distance(learner)))

    The k-NN does not train the learner: feed it the same records (``learner.learn_one`` or a
    :class:`MetricTransformer`'s ``learn_one``). Copies of the distance (river's k-NN copies its
    search engine) share the learner.

    Parameters
    ----------
    learner : OnPairStrC, OnPairC, PairwiseGIGA or MetricTransformer
        A learner with ``task="metric"``, or a :class:`MetricTransformer` (its learner, its feature
        order and its ``unknown_features`` policy).
    features : sequence, optional
        The feature order the learner learned in. Default: the transformer's order; for a plain
        learner, the sorted keys of the two records (the default order of :class:`MetricTransformer`
        for records that carry every feature).

    Examples
    --------
    >>> import numpy as np, onpair
    >>> from onpair.river import metric_distance
    >>> learner = onpair.PairwiseGIGA(task="metric", bounds=(0.0, 1.0), n_features=2)
    >>> dist = metric_distance(learner, features=["a", "b"])
    >>> a, b = {"a": 0.1, "b": 0.9}, {"a": 0.6, "b": 0.2}
    >>> expected = np.linalg.norm(np.subtract(*learner.transform([[0.1, 0.9], [0.6, 0.2]])))
    >>> bool(np.isclose(dist(a, b), expected)), dist(a, a)
    (True, 0.0)
    """
    return _MetricDistance(learner, features)

