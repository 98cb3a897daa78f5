"""river adapter: the private online AUC learners as a river binary classifier.

:class:`PrivatePairwiseClassifier` takes river's dict records (``learn_one(x, y)``,
``predict_proba_one(x)``), maps them onto a fixed feature order, and drives one of the online
learners of :mod:`onpair.learners` (``OnPairStrC``, ``OnPairC``, or the non-private twin
``PairwiseGIGA``). It works with ``river.evaluate.progressive_val_score``, pipelines and metrics,
and passes ``river.checks.check_estimator`` (tests/test_river.py).

This is the only module of onpair that imports river; ``import onpair`` does not import it.

Records
-------
* **Feature order.** Given up front (``features=[...]``), or fixed by the first record learned: its
  keys, sorted, so that the order in which a dict lists its keys never matters. The order never
  changes afterwards.
* **A missing key reads as 0** (river's convention for sparse records), in the raw units of the
  feature, *before* the public bounds map. If 0 lies outside the declared bounds the value is
  clipped like any other out-of-bounds value (and counted in ``n_clipped``).
* **A key never declared is ignored** and the record is counted in
  ``privacy_report()["n_unknown_feature_records"]`` (with the first 100 such names in
  ``"unknown_features"``). ``unknown_features="raise"`` makes it a ``ValueError`` instead, in
  ``learn_*`` and in ``predict_*``. Undeclared values are not read, so they are not validated.
* **Values** must be real numbers (``int``, ``float``, ``bool``, NumPy scalars) and finite. A
  string, ``None`` or another non-number raises a ``TypeError``, and NaN, infinity or a complex
  number a ``ValueError`` (scikit-learn's and NumPy's convention), each naming the feature, the value
  and the record's stream position; the model, its counters and its budget are left exactly as
  they were. A record that is not a dict (a data frame for ``learn_many``) is a ``TypeError``.
* **Labels** are booleans, 0/1 or −1/+1, mixed freely; anything else is a ``ValueError`` with
  nothing changed. ``predict_proba_one`` answers with the labels seen: the first negative label
  learned and the first positive one (``{False: …, True: …}`` until then, which compares equal
  to 0 and 1).
* The caller's dict is never stored: values are copied into a new array at each call.

Predictions
-----------
Only the last **released** model is used (the data-independent start before the first release; a
probability of 0.5 before the feature order is known). With ``s = wᵀφ(x)`` the released score
(φ: the public bounds map into the unit ball), ``predict_proba_one`` returns
``p = (1 + s/‖w‖)/2`` for the positive label: the record's position along the model's direction,
mapped from [−1, 1] onto [0, 1]. It is a monotone transform of the score, so AUC (river's
``ROCAUC`` included) measures the model's ranking; it is not a calibrated probability, and
``predict_one`` (p > 1/2, i.e. s > 0) is not tuned for accuracy. The plain logistic σ(s) would
confine p to [0.475, 0.525] (‖w‖ ≤ R = 0.1 by default), between two of the ten thresholds of
river's ``ROCAUC`` (4/9 and 5/9), which would then read 0.5 for any model.

Copies, clones and the budget
-----------------------------
A fitted private model refuses ``pickle``, ``copy.copy`` and ``copy.deepcopy`` (``TypeError``), as
the learners do: a copy would hold the raw records, reuse the noise, and carry a second budget.
Save it with :meth:`PrivatePairwiseClassifier.save` (the snapshot resumes once). A model that
has not learned anything yet holds nothing private: a copy of it is a clone (below), and a pickle
holds its parameters only (unpickled, it starts a new lineage).

``clone()`` (river's "same parameters, no data") returns a **new, unfitted mechanism with its own
budget**. Nothing private is copied: no record, no iterate, no noise state, no spent budget. It
draws fresh noise, unless a ``seed`` was given: then it repeats the original's noise (seeds are for
experiments, and noise that repeats cancels in a difference).
Calling ``clone()`` is therefore asking for a new budget: a model and its clone trained on the same
records spend ε₁ and ε₂ on them, and the guarantees add up (zCDP: ρ₁ + ρ₂). So that clones made
for you (river's ensembles and model selection, ``check_estimator``) never go unnoticed, a model,
its clones, their clones and their copies share one *lineage*: ``privacy_report()["lineage"]``
gives the ρ spent by all of them together and the ε it amounts to at this model's δ, the guarantee
for a record that all of them saw. A saved and reloaded model starts a new lineage.

Pipelines and meta-models
-------------------------
The guarantee covers what the model receives. A data-dependent step in front of it
(``preprocessing.StandardScaler``, ``MinMaxScaler``, anything that learns statistics from the stream)
is not private: its statistics leak, and each record then moves the features of every later
record, so the per-record analysis no longer holds. Put only fixed, data-independent maps in front,
and declare bounds for *their* output. A meta-model that learns one record several times (river's
bagging draws Poisson weights and calls ``learn_one`` k times) protects that record only as a
group of k records.
"""

from __future__ import annotations

import copy
import math
import numbers
import warnings

import numpy as np
from river import base

from .learners import OnPairC, OnPairStrC, PairwiseGIGA
from .privacy.conversions import eps_from_rho

__all__ = ["PrivatePairwiseClassifier"]

#: Name → learner class. "giga" is the non-private twin (same kernel, no noise): a baseline.
LEARNERS = {"onpairstrc": OnPairStrC, "onpairc": OnPairC, "giga": PairwiseGIGA}
UNKNOWN_FEATURE_POLICIES = ("ignore", "raise")
#: Learner arguments the wrapper sets itself (from its own parameters).
_OWN_ARGUMENTS = ("epsilon", "delta", "bounds", "norm_bound", "buffer", "release_every", "seed", "n_features")
#: At most this many undeclared feature names are kept for the report (bounded memory).
MAX_UNKNOWN_NAMES = 100
#: Exact value types taken by the fast path of the record conversion (others go through the checks).
_FAST_TYPES = frozenset({float, int, bool, np.float64, np.float32, np.int64, np.int32, np.bool_})
#: Version of the wrapper fields written with the learner by :meth:`PrivatePairwiseClassifier.save`.
_SAVE_VERSION = 1


class _Lineage:
    """The budget record shared by a model, its clones and their copies (report only).

    It holds the private members' accountants (ρ numbers, no records), so the ρ of a member that
    was garbage-collected still counts: its releases were public.
    """

    def __init__(self):
        self.accountants = []
        self.n_members = 0
        self.n_non_private = 0

    def add(self, learner) -> None:
        """Count a member by its onpair learner (the wrapper's inner learner)."""
        self.n_members += 1
        if learner._private:
            self.accountants.append(learner._accountant)
        else:
            self.n_non_private += 1

    def report(self, delta=None, accounting=None) -> dict:
        rho = math.fsum(a.rho_spent for a in self.accountants)
        out = {"members": self.n_members, "non_private_members": self.n_non_private, "rho_spent": rho}
        if delta is not None:
            out["delta"] = delta
            out["epsilon_spent"] = float(eps_from_rho(rho, delta, method=accounting)) if rho > 0 else 0.0
        return out


class PrivatePairwiseClassifier(base.MiniBatchClassifier):
    """Differentially private online AUC maximisation as a river binary classifier.

    Wraps :class:`onpair.OnPairStrC` (default), :class:`onpair.OnPairC` or the non-private
    :class:`onpair.PairwiseGIGA`. Records are dicts; the module docstring (:mod:`onpair.river`)
    says how keys that appear, disappear or change order are handled, what the probabilities mean,
    and what ``clone()`` does to the budget.

    Parameters
    ----------
    learner : {"onpairstrc", "onpairc", "giga"}, default "onpairstrc"
        The online learner. "giga" is the non-private twin: it ignores ``epsilon``, ``delta`` and
        ``release_every`` and protects nothing (a baseline).
    epsilon, delta : float, default 1.0 and 1e-5
        The (ε, δ)-DP guarantee for the whole stream, every release included.
    bounds : (lower, upper), optional
        **Public** bounds of the raw features: scalars, or arrays in the order of ``features``
        (arrays need ``features``). Never compute them from the data.
    norm_bound : float, optional
        Public bound on ‖x‖₂ instead of a box. Neither given: records are clipped to the unit ball.
    features : sequence, optional
        The feature names, in order. Default: the sorted keys of the first record learned.
    buffer : ("reservoir", s), ("fifo", s) or None, default ("reservoir", 64)
        The pairwise history: a bounded buffer of s past records keeps memory flat (river checks
        it); None keeps the whole history, whose cost grows with the stream.
    release_every : int, optional
        Release a model every k records. Default: the learner's doubling schedule (64, 128, 256, …).
    unknown_features : {"ignore", "raise"}, default "ignore"
        What to do with a key that is not one of the features.
    seed : int, optional
        For reproducible experiments only; anyone who knows it can remove the noise. Without it the
        noise comes from fresh OS entropy.
    learner_params : dict, optional
        Further arguments of the learner: ``n``, ``horizon``, ``max_releases``, ``budget_split``,
        ``release_at``, ``loss``, ``lam``, ``radius``, ``accounting``, ``mode``, ``c``, ``center``, …
        (everything but the parameters above).

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from onpair.river import PrivatePairwiseClassifier
    >>> model = PrivatePairwiseClassifier(epsilon=2.0, bounds=(0.0, 1.0), seed=0,
    ...                                   learner_params={"n": 500})   # public stream length
    >>> metric = evaluate.progressive_val_score(datasets.Phishing().take(500), model, metrics.ROCAUC())
    >>> bool(metric.get() > 0.6)
    True
    >>> report = model.privacy_report()
    >>> report["epsilon_spent"] <= 2.0, [r["round"] for r in report["releases"]], report["features"][:2]
    (True, [64, 128, 256, 500], ['age_of_domain', 'anchor_from_other_domain'])
    """

    def __init__(self, *, learner="onpairstrc", epsilon=1.0, delta=1e-5, bounds=None, norm_bound=None,
                 features=None, buffer=("reservoir", 64), release_every=None, unknown_features="ignore",
                 seed=None, learner_params=None):
        self.learner = learner
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.features = features
        self.buffer = buffer
        self.release_every = release_every
        self.unknown_features = unknown_features
        self.seed = seed
        self.learner_params = learner_params
        if not isinstance(learner, str) or learner not in LEARNERS:
            raise ValueError(f"learner must be one of {tuple(LEARNERS)}, got {learner!r}")
        if not isinstance(unknown_features, str) or unknown_features not in UNKNOWN_FEATURE_POLICIES:
            raise ValueError(f"unknown_features must be one of {UNKNOWN_FEATURE_POLICIES}, got {unknown_features!r}")
        self._raise_unknown = unknown_features == "raise"
        order = _check_features(features)
        self._inner = self._make_inner(order)
        self._order = order
        self._feature_set = frozenset(order) if order is not None else frozenset()
        self._labels = (False, True)  # (negative, positive): the first of each learned
        self._labels_fixed = [False, False]
        self._n_unknown_records = 0
        self._unknown_names = {}  # insertion-ordered set, at most MAX_UNKNOWN_NAMES names
        self._n_missing_records = 0
        self._cache = None  # (key, visible model, its norm) for predictions: see _released
        self._lineage = _Lineage()
        self._lineage.add(self._inner)

    def _make_inner(self, order):
        kwargs = {}
        if self.learner_params is not None:
            if not isinstance(self.learner_params, dict) or not all(isinstance(k, str) for k in self.learner_params):
                raise ValueError(f"learner_params must be a dict of argument names, got {self.learner_params!r}")
            own = sorted(set(self.learner_params) & set(_OWN_ARGUMENTS))
            if own:
                raise ValueError(f"learner_params sets {', '.join(own)}: pass them to PrivatePairwiseClassifier "
                                 "itself (n_features comes from features)")
            kwargs.update(self.learner_params)
        if order is None and _has_array_bounds(self.bounds):
            raise ValueError("array bounds need features=[...] to say which feature each bound belongs to "
                             "(the order of dict keys is not fixed)")
        kwargs.update(bounds=self.bounds, norm_bound=self.norm_bound, buffer=self.buffer, seed=self.seed,
                      n_features=None if order is None else len(order))
        cls = LEARNERS[self.learner]
        if cls is not PairwiseGIGA:
            kwargs.update(epsilon=self.epsilon, delta=self.delta, release_every=self.release_every)
        return cls(**kwargs)

    # -- river's test hooks ------------------------------------------------------------------------
    @classmethod
    def _unit_test_params(cls):
        # Cheap and meaningful: every configuration releases a model every 10 records, so
        # predictions change along river's 200-record check streams, through the private path
        # (noise, accountant, ledger) with a small buffer; the third is the non-private twin, on
        # which the pickling checks also run.
        yield {"epsilon": 1.0, "bounds": (0.0, 1.0), "buffer": ("reservoir", 16), "release_every": 10}
        yield {"learner": "onpairc", "epsilon": 2.0, "bounds": (0.0, 1.0), "buffer": ("fifo", 8),
               "release_every": 10, "learner_params": {"horizon": 5000}}
        yield {"learner": "giga", "bounds": (0.0, 1.0), "buffer": ("fifo", 16)}

    def _unit_test_skips(self):
        if self.learner == "giga":
            return set()
        return {
            # Pickles the model after learning. A fitted private model refuses to be pickled (a copy
            # would reuse its noise and its budget); pickling an unfitted one is checked by
            # check_pickling_supports_roundtrip, and persistence goes through save()/load().
            "check_pickling",
            # Detects aliasing by comparing pickles of the fitted model, which a private model
            # refuses; tests/test_river.py checks instead that the caller's dict is unreachable
            # from the model and that mutating it changes nothing.
            "check_no_state_aliasing_with_input",
        }

    # -- records -----------------------------------------------------------------------------------
    def _vector(self, x, order, feature_set, where):
        """(values as a float64 array in ``order``, undeclared keys, whether a declared key is missing)."""
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features ({where}), got {type(x).__name__}")
        unknown = x.keys() - feature_set
        if unknown and self._raise_unknown:
            raise ValueError(f"x has the feature {_first(unknown)!r} ({where}), which is not one of the model's "
                             f"{len(order)} features; unknown_features='ignore' ignores and counts such keys")
        get = x.get
        values = [get(f, 0.0) for f in order]
        try:
            fast = set(map(type, values)) <= _FAST_TYPES and math.isfinite(sum(values))
        except (TypeError, OverflowError):
            fast = False
        if not fast:
            _check_values(order, values, where)
        missing = len(x) - len(unknown) < len(order)
        return np.array(values, dtype=np.float64), unknown, missing

    def _label(self, y, where):
        """(±1, the label as a plain Python value), or a ValueError."""
        if type(y) is bool:
            return (1 if y else -1), y
        if isinstance(y, np.bool_):
            return (1 if y else -1), bool(y)
        if isinstance(y, numbers.Real):
            try:
                v = float(y)
            except OverflowError:
                v = math.nan
            if v == 1.0 or v == 0.0 or v == -1.0:
                plain = y.item() if isinstance(y, np.generic) else y
                return (1 if v == 1.0 else -1), plain
        raise ValueError(f"y = {y!r} ({where}): labels must be booleans, 0/1 or -1/+1")

    def _commit_labels(self, sign_label_pairs):
        labels = list(self._labels)
        for sign, label in sign_label_pairs:
            k = 1 if sign > 0 else 0
            if not self._labels_fixed[k]:
                labels[k] = label
                self._labels_fixed[k] = True
            if all(self._labels_fixed):
                break
        self._labels = tuple(labels)

    def _note_unknown(self, names, n_records):
        self._n_unknown_records += n_records
        if len(self._unknown_names) < MAX_UNKNOWN_NAMES:
            for name in _sorted_keys(names):  # sorted: which names are kept must not depend on hashing
                if len(self._unknown_names) >= MAX_UNKNOWN_NAMES:
                    break
                self._unknown_names.setdefault(name, None)

    # -- learning ----------------------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one record: ``x`` a dict of features, ``y`` a boolean, 0/1 or −1/+1.

        A failed call (bad value, bad label, undeclared key with ``unknown_features="raise"``, or an
        error of the learner) changes nothing and spends no budget.
        """
        where = f"stream position {self._inner.n_seen + 1}"
        sign, label = self._label(y, where)
        order, feature_set = self._order, self._feature_set
        if order is None:
            order, feature_set = _order_from_first_record(x, where)
        vector, unknown, missing = self._vector(x, order, feature_set, where)
        self._inner.learn_one(vector, sign)
        # Committed only once the learner has accepted the record.
        if self._order is None:
            self._order, self._feature_set = order, feature_set
        if unknown:
            self._note_unknown(unknown, 1)
        if missing:
            self._n_missing_records += 1
        if not self._labels_fixed[sign > 0]:
            self._commit_labels([(sign, label)])

    def learn_many(self, X, y):
        """Learn a data frame of records (pandas, or any frame river's ``utils.dataframe`` reads),
        exactly as ``learn_one`` on each row in order would.

        A column that is absent reads as 0; a NaN is an error (fill it first), as in a dict. A frame of
        0 rows is a no-op (nothing learned or spent), as the learners' ``learn_many`` of 0 records."""
        frame = _frame(X)
        columns = list(frame.columns)
        labels = _series_values(y)
        if len(labels) != len(frame):
            raise ValueError(f"X has {len(frame)} rows but y has {len(labels)} labels")
        if len(frame) == 0:
            return
        offset = self._inner.n_seen
        signs = np.empty(len(labels), dtype=np.int8)
        plain = []
        for i, value in enumerate(labels):
            signs[i], label = self._label(value, f"row {i}, stream position {offset + i + 1}")
            plain.append(label)
        order = self._order if self._order is not None else _sorted_keys(columns)
        block, unknown, missing = self._block(frame, columns, order, offset)
        self._inner.learn_many(block, signs)
        if self._order is None:
            self._order = order
            self._feature_set = frozenset(order)
        if unknown:
            self._note_unknown(unknown, len(frame))
        if missing:
            self._n_missing_records += len(frame)
        self._commit_labels(zip(signs.tolist(), plain))

    def _block(self, frame, columns, order, offset):
        """(float64 block in ``order``, undeclared columns, whether a declared column is missing)."""
        known = set(order)
        unknown = [c for c in columns if c not in known]
        if unknown and self._raise_unknown:
            raise ValueError(f"X has the column {unknown[0]!r}, which is not one of the model's {len(order)} "
                             "features; unknown_features='ignore' ignores and counts such columns")
        present = set(columns)
        block = np.zeros((len(frame), len(order)))
        for k, name in enumerate(order):
            if name in present:
                block[:, k] = _column(frame, name, offset)
        return block, unknown, any(name not in present for name in order)

    # -- prediction --------------------------------------------------------------------------------
    def _released(self):
        """(w, ‖w‖) of the visible model, read once per release (private learners) or per record."""
        inner = self._inner
        key = (id(inner), len(inner._released_models) if inner._private else inner.n_seen)
        if self._cache is None or self._cache[0] != key:
            model = inner.model
            self._cache = (key, model, float(np.linalg.norm(model)))
        return self._cache[1], self._cache[2]

    def _probabilities(self, block):
        """p = (1 + s/‖w‖)/2 with s = wᵀφ(x) under the last released model w (‖φ(x)‖ ≤ 1)."""
        model, norm = self._released()
        if norm == 0.0:
            return np.full(block.shape[0], 0.5)
        if block.shape[0] == 1:  # predict_proba_one: the row is checked already; map it and score
            scores = _mapped_row(self._inner, block[0])[None, :] @ model
        else:
            scores = self._inner.decision_function(block)
        return (1.0 + np.clip(scores / norm, -1.0, 1.0)) / 2.0

    def predict_proba_one(self, x, **kwargs):
        """``{negative label: 1 − p, positive label: p}`` from the last released model."""
        negative, positive = self._labels
        if self._order is None:
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features (record to predict), got {type(x).__name__}")
            return {negative: 0.5, positive: 0.5}
        vector, _, _ = self._vector(x, self._order, self._feature_set, "record to predict")
        p = float(self._probabilities(vector[None, :])[0])
        return {negative: 1.0 - p, positive: p}

    def _proba_many(self, X):
        frame = _frame(X)
        if self._order is None or len(frame) == 0:
            return frame, np.full(len(frame), 0.5)
        block, _, _ = self._block(frame, list(frame.columns), self._order, None)
        return frame, self._probabilities(block)

    def predict_proba_many(self, X):
        """A frame with one column per label (negative, positive), as ``predict_proba_one`` per row."""
        from river import utils

        frame, p = self._proba_many(X)
        negative, positive = self._labels
        return utils.dataframe.to_native_frame({negative: 1.0 - p, positive: p}, like=frame)

    def predict_many(self, X):
        """The label of each row: the positive one where p > 1 − p, as ``predict_one``."""
        from river import utils

        frame, p = self._proba_many(X)
        negative, positive = self._labels
        chosen = p > 1.0 - p
        if isinstance(negative, bool) and isinstance(positive, bool):
            labels = chosen if positive else ~chosen
        else:
            labels = np.where(chosen, positive, negative)
        return utils.dataframe.to_native_series(labels, name=None, like=frame)

    # -- what may be shown -------------------------------------------------------------------------
    @property
    def n_seen(self) -> int:
        """Records learned so far."""
        return self._inner.n_seen

    @property
    def feature_order(self):
        """The feature order (a tuple), or None until it is given or fixed by the first record."""
        return self._order

    @property
    def model(self) -> np.ndarray:
        """The last released model (weights on the bounds-mapped features, in :attr:`feature_order`)."""
        if self._order is None:
            raise ValueError("no feature order yet: pass features=[...] or learn a record first")
        return self._inner.model

    @property
    def released_models(self) -> np.ndarray:
        """Every model released so far (private learners only), one row per release."""
        if not self._inner._private:
            raise AttributeError("the non-private learner ('giga') releases nothing; use model")
        if self._order is None:
            return np.zeros((0, 0))
        return self._inner.released_models

    def privacy_report(self) -> dict:
        """The learner's report (:meth:`onpair.OnPairStrC.privacy_report`) and the wrapper's fields.

        Added keys: ``private``, ``learner``, ``features`` (the order, or None),
        ``n_unknown_feature_records`` and ``unknown_features`` (records that carried undeclared
        keys, and the first 100 such names), ``n_missing_feature_records`` (records in which a
        declared key was missing and read as 0) and ``lineage`` (the model and its clones together:
        ``members``, ``non_private_members``, ``rho_spent``, ``delta``, ``epsilon_spent``).

        Like ``n_clipped``, the three record counts and the names come from the private data
        without noise (a one-hot key names a value): they are for the data curator only.
        """
        inner = self._inner
        if inner._private:
            report = inner.privacy_report()
            lineage = self._lineage.report(report["delta"], report["accounting"])
        else:
            report = {"algorithm": type(inner).__name__, "n_seen": inner.n_seen, "n_clipped": inner._n_clipped,
                      "buffer": None if inner._buffer_kind is None else
                      {"kind": inner._buffer_kind, "size": inner._buffer_size},
                      "status": "not private: the non-private twin protects nothing"}
            lineage = self._lineage.report()
        report.update(
            private=bool(inner._private),
            learner=self.learner,
            features=None if self._order is None else list(self._order),
            n_unknown_feature_records=self._n_unknown_records,
            unknown_features=list(self._unknown_names),
            n_missing_feature_records=self._n_missing_records,
            lineage=lineage,
        )
        return report

    # -- clones, copies, pickles -------------------------------------------------------------------
    def _started(self) -> bool:
        return self._inner.n_seen > 0

    def _refuse_copy(self, what):
        raise TypeError(
            f"a fitted private {type(self).__name__} cannot be {what}: it holds the raw records, and a copy "
            "would reuse its noise and its budget. Use clone() for a new, unfitted model with its own budget, "
            "save()/load() to resume it, or share model / released_models."
        )

    def clone(self, new_params=None, include_attributes=False):
        """A new, unfitted model with the same parameters (updated by ``new_params``).

        It is a new mechanism with **its own budget**: nothing private is copied, and it joins this
        model's lineage, whose report adds up what all of them spend. ``include_attributes=True`` is
        refused for a fitted private model (it would copy the private state).
        """
        if include_attributes and self._inner._private and self._started():
            self._refuse_copy("cloned with its attributes")
        clone = super().clone(new_params)
        clone._lineage = self._lineage
        self._lineage.add(clone._inner)
        if include_attributes and self._started():
            # Non-private only (refused above otherwise): river's semantics, the state deep-copied.
            for name, value in self.__dict__.items():
                if name not in ("_lineage", *self._get_params()):
                    setattr(clone, name, copy.deepcopy(value))
        return clone

    def __reduce_ex__(self, protocol):
        if not self._started():
            # Nothing learned: the parameters are the whole model (unpickled, a new learner and lineage).
            return _from_params, (type(self), self._get_params())
        if self._inner._private:
            self._refuse_copy("pickled or copied")
        return super().__reduce_ex__(protocol)

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        if not self._started():
            return self.clone()
        if self._inner._private:
            self._refuse_copy("copied")
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        for name, value in self.__dict__.items():
            setattr(twin, name, value if name == "_lineage" else copy.deepcopy(value, memo))
        self._lineage.add(twin._inner)
        return twin

    # -- persistence -------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model (learner state, feature order, labels, counters) to ``path`` atomically.

        :meth:`load` (or ``onpair.load``) resumes it exactly; the snapshot resumes once
        (:mod:`onpair.persistence`). Feature names must be strings or numbers.
        """
        from .persistence import save_learner

        save_learner(self._inner, path, extra=self._persisted_fields(path), wrapper=type(self))

    @classmethod
    def load(cls, path, *, consume=True):
        """Resume a model written by :meth:`save` (``consume=False``: a read-only view, see
        :func:`onpair.persistence.load_learner`). It starts a new lineage."""
        from .persistence import load_learner

        learner, extra = load_learner(path, consume=consume)
        return cls._from_persisted(learner, extra, path)

    def _persisted_fields(self, path) -> dict:
        def plain(value, what):
            if value is None or isinstance(value, (str, bool, int)) or (
                    isinstance(value, float) and math.isfinite(value)):
                return value
            raise ValueError(f"cannot save to {str(path)!r}: {what} {value!r} is not a string or a number")

        order = None if self._order is None else [plain(f, "feature") for f in self._order]
        return {
            "version": _SAVE_VERSION,
            "learner": self.learner,
            "epsilon": plain(self.epsilon, "epsilon"),
            "delta": plain(self.delta, "delta"),
            "release_every": plain(self.release_every, "release_every"),
            "unknown_features": self.unknown_features,
            "features": None if self.features is None else [plain(f, "feature") for f in self.features],
            "features_is_tuple": isinstance(self.features, tuple),
            "learner_params": None if self.learner_params is None else sorted(self.learner_params),
            "order": order,
            "labels": [plain(v, "label") for v in self._labels],
            "labels_fixed": list(self._labels_fixed),
            "n_unknown_records": self._n_unknown_records,
            "unknown_names": [n if isinstance(n, (str, int, float, bool)) else repr(n) for n in self._unknown_names],
            "n_missing_records": self._n_missing_records,
        }

    @classmethod
    def _from_persisted(cls, learner, extra, path=None):
        where = "the snapshot" if path is None else repr(str(path))
        keys = {"version", "learner", "epsilon", "delta", "release_every", "unknown_features", "features",
                "features_is_tuple", "learner_params", "order", "labels", "labels_fixed", "n_unknown_records",
                "unknown_names", "n_missing_records"}
        if not isinstance(extra, dict) or set(extra) != keys or extra["version"] != _SAVE_VERSION:
            raise ValueError(f"{where}: not a {cls.__name__} snapshot (missing or unexpected wrapper fields)")
        if LEARNERS.get(extra["learner"]) is not type(learner):
            raise ValueError(f"{where}: holds a {type(learner).__name__}, not the {extra['learner']!r} learner")
        if learner._private and any(extra[k] != getattr(learner, k) for k in ("epsilon", "delta", "release_every")):
            raise ValueError(f"{where}: the wrapper's epsilon, delta or release_every differ from the learner's")
        features = extra["features"]
        if features is not None and extra["features_is_tuple"]:
            features = tuple(features)
        params = {
            "learner": extra["learner"], "epsilon": extra["epsilon"], "delta": extra["delta"],
            "bounds": learner.bounds, "norm_bound": learner.norm_bound, "features": features,
            "buffer": learner.buffer, "release_every": extra["release_every"],
            "unknown_features": extra["unknown_features"], "seed": learner.seed,
            "learner_params": None if extra["learner_params"] is None else
            {k: getattr(learner, k) for k in extra["learner_params"]},
        }
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # issued when the model was first built
                model = cls(**params)
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{where}: the saved wrapper fields do not build a {cls.__name__} ({exc})") from None
        order = extra["order"]
        dim = learner._dim
        if order is not None and (not isinstance(order, list) or (dim is not None and len(order) != dim)):
            raise ValueError(f"{where}: the feature order does not match the learner's {dim} features")
        if order is None and learner.n_seen:
            raise ValueError(f"{where}: the learner has seen records but the snapshot has no feature order")
        labels, fixed = extra["labels"], extra["labels_fixed"]
        counts = (extra["n_unknown_records"], extra["n_missing_records"])
        if (not isinstance(labels, list) or len(labels) != 2 or not isinstance(fixed, list) or len(fixed) != 2
                or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)
                or not isinstance(extra["unknown_names"], list)):
            raise ValueError(f"{where}: malformed wrapper fields")
        model._inner = learner
        model._order = None if order is None else tuple(order)
        model._feature_set = frozenset(model._order or ())
        model._labels = tuple(labels)
        model._labels_fixed = [bool(f) for f in fixed]
        model._n_unknown_records, model._n_missing_records = counts
        model._unknown_names = dict.fromkeys(extra["unknown_names"][:MAX_UNKNOWN_NAMES])
        model._lineage = _Lineage()
        model._lineage.add(model._inner)
        return model


# -- helpers ---------------------------------------------------------------------------------------
def _from_params(cls, params):
    """Unpickle an unfitted model: build it again from its parameters."""
    return cls(**params)


def _check_features(features):
    if features is None:
        return None
    if isinstance(features, (str, bytes)) or not isinstance(features, (list, tuple)):
        raise ValueError(f"features must be a list or tuple of feature names, got {features!r}")
    if not features:
        raise ValueError("features must name at least one feature")
    try:
        distinct = len(set(features))
    except TypeError:
        raise ValueError(f"feature names must be hashable (dict keys), got {features!r}") from None
    if distinct != len(features):
        seen = set()
        duplicate = next(f for f in features if f in seen or seen.add(f))
        raise ValueError(f"features names {duplicate!r} twice")
    return tuple(features)


def _has_array_bounds(bounds) -> bool:
    if bounds is None:
        return False
    if getattr(bounds, "n_features", None) is not None:  # a FeatureBounds with per-feature arrays
        return True
    try:
        return any(np.ndim(b) > 0 for b in bounds)
    except TypeError:
        return False  # malformed: the learner says why


def _sorted_keys(keys):
    keys = list(keys)
    try:
        return tuple(sorted(keys))
    except TypeError:  # keys of mixed types
        return tuple(sorted(keys, key=lambda k: (type(k).__name__, repr(k))))


def _order_from_first_record(x, where: str):
    """The feature order (sorted keys) and key set that the first record fixes; ValueError if it cannot."""
    if not isinstance(x, dict):
        raise TypeError(f"x must be a dict of features ({where}), got {type(x).__name__}")
    if not x:
        raise ValueError(f"the first record has no features ({where}): pass features=[...] or a "
                         "non-empty record")
    order = _sorted_keys(x)
    return order, frozenset(order)


def _first(names):
    return _sorted_keys(names)[0]


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (str, bytes)):
        return "a string"
    return f"a {type(value).__name__}"


def _check_values(order, values, where, prefix="x"):
    """Raise for the first value that is not a finite real number, naming it: TypeError for a value that
    is not a number (a string, None, an object), ValueError for a complex or non-finite number."""
    for name, value in zip(order, values):
        if isinstance(value, (bool, np.bool_)):
            continue
        if not isinstance(value, numbers.Number) or isinstance(value, (complex, np.complexfloating)):
            error = ValueError if isinstance(value, numbers.Number) else TypeError  # complex: a value error
            raise error(f"{prefix}[{name!r}] = {value!r} ({where}): features must be real numbers, "
                        f"got {_describe(value)}")
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{prefix}[{name!r}] = {value!r} ({where}): not representable as a float") from None
        if not math.isfinite(number):
            raise ValueError(f"{prefix}[{name!r}] = {value!r} ({where}): features must be finite")


def _frame(X):
    from river import utils

    try:
        return utils.dataframe.into_frame(X)
    except TypeError:
        raise TypeError(f"X must be a data frame (pandas, or another backend river reads), got "
                         f"{type(X).__name__}") from None


def _series_values(y) -> list:
    from river import utils

    try:
        return utils.dataframe.into_series(y).to_list()
    except TypeError:
        if isinstance(y, (str, bytes, dict)):
            raise ValueError(f"y must be a series or a sequence of labels, got {type(y).__name__}") from None
        return list(y)


def _frame_column(frame, name) -> np.ndarray:
    return frame[name].to_numpy()


def _column(frame, name, offset) -> np.ndarray:
    """One column as finite float64, or a ValueError naming the column, the row and the value."""
    raw = _frame_column(frame, name)
    try:
        if raw.dtype.kind in "OSU" or raw.dtype.kind == "c":
            raise TypeError
        values = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or not np.all(np.isfinite(values)):
        for i, value in enumerate(raw.tolist()):
            where = f"row {i}" if offset is None else f"row {i}, stream position {offset + i + 1}"
            _check_values([name], [value], where, prefix="X")
        values = np.asarray(raw, dtype=np.float64)  # every value checked: converts
    return values


# ==================================================================================================
# the metric task: a learned metric as a river transformer and as a distance for river's k-NN
# ==================================================================================================
from .bounds import _map_box_row  # noqa: E402
from .learners._base import _box_row_cache  # noqa: E402
from .matrix_geometry import metric_factor  # noqa: E402

def _mapped_row(learner, vector: np.ndarray) -> np.ndarray:
    """φ(x) of one checked record, the learner's public bounds map as ``transform`` and
    ``decision_function`` apply it (a record inside a box goes through the learners' compiled row map:
    the same floating-point operations)."""
    bounds = learner._bounds
    if bounds.kind == "box":
        lower, upper, half_scale = _box_row_cache(learner, bounds)
        out = np.empty(vector.shape[0])
        if not _map_box_row(vector, lower, upper, half_scale, out):
            return out
    return bounds.transform(vector[None, :])[0][0]  # clipped to the box, or the norm bound


#: Output bases of :class:`MetricTransformer`.
METRIC_BASES = ("sqrt", "eigen")


def _metric_learner(learner, name="learner"):
    """``learner`` if it is an onpair online learner with ``task="metric"``, else a ValueError."""
    if not isinstance(learner, tuple(LEARNERS.values())):
        raise ValueError(f"{name} must be an onpair online learner (OnPairStrC, OnPairC or PairwiseGIGA) "
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
        """φ(x), the learner's public bounds map (see :func:`_mapped_row`)."""
        return _mapped_row(self.learner, vector)


class _DictRecords:
    """River dict records → arrays in a fixed feature order, by the rules of
    :class:`PrivatePairwiseClassifier` (its conversion and its count of undeclared keys, shared)."""

    _vector = PrivatePairwiseClassifier._vector
    _note_unknown = PrivatePairwiseClassifier._note_unknown


# Also a ``base.Transformer``: river 0.26's ``compose.Pipeline`` plans a step as a transformer only if it
# is one (a plain SupervisedTransformer would be run as a final step, learning the raw record without
# passing its output on); ``_supervised`` (True, from SupervisedTransformer) still makes the pipeline
# call ``learn_one(x, y)``. Older pipelines read ``_supervised`` alone.
class MetricTransformer(_DictRecords, base.SupervisedTransformer, base.Transformer):
    """A metric learned online (privately or not) as a river supervised transformer.

    Wraps an online learner built with ``task="metric"`` (:class:`onpair.OnPairStrC`,
    :class:`onpair.OnPairC`, or the non-private :class:`onpair.PairwiseGIGA`), which learns a
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
    learner : OnPairStrC, OnPairC or PairwiseGIGA
        A learner built with ``task="metric"``; its ``bounds`` must be **public** (never computed
        from the data). The transformer learns through it (it is not copied).
    features : sequence, optional
        The feature names, in order. Default: the sorted keys of the first record learned. Needed
        with array bounds, and for a learner that has learned already (the order it learned in).
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
        if not isinstance(unknown_features, str) or unknown_features not in UNKNOWN_FEATURE_POLICIES:
            raise ValueError(f"unknown_features must be one of {UNKNOWN_FEATURE_POLICIES}, got {unknown_features!r}")
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {prefix!r}")
        if not isinstance(basis, str) or basis not in METRIC_BASES:
            raise ValueError(f"basis must be one of {METRIC_BASES}, got {basis!r}")
        order = _check_features(features)
        dim = learner._dim
        if order is None and _has_array_bounds(learner.bounds):
            raise ValueError("the learner's array bounds need features=[...] to say which feature each bound "
                             "belongs to (the order of dict keys is not fixed)")
        if order is None and learner.n_seen:
            raise ValueError("the learner has learned already: pass features=[...] in the order it learned in")
        if order is not None and dim is not None and len(order) != dim:
            raise ValueError(f"features names {len(order)} features but the learner has {dim}")
        self._raise_unknown = unknown_features == "raise"
        self._order = order
        self._feature_set = frozenset(order) if order is not None else frozenset()
        self._n_unknown_records = 0
        self._unknown_names = {}
        self._n_missing_records = 0
        self._metric = _ReleasedMetric(learner)
        self._lineage = _Lineage()  # this transformer and its clones (see PrivatePairwiseClassifier)
        self._lineage.add(learner)

    def learn_one(self, x, y):
        """Learn one record: ``x`` a dict of features, ``y`` a class label (int, bool or string).

        A failed call changes nothing and spends no budget.
        """
        learner = self.learner
        where = f"stream position {learner.n_seen + 1}"
        order, feature_set = self._order, self._feature_set
        if order is None:
            order, feature_set = _order_from_first_record(x, where)
        vector, unknown, missing = self._vector(x, order, feature_set, where)
        learner.learn_one(vector, y)
        # Committed only once the learner has accepted the record.
        if self._order is None:
            self._order, self._feature_set = order, feature_set
        if unknown:
            self._note_unknown(unknown, 1)
        if missing:
            self._n_missing_records += 1

    def transform_one(self, x):
        """``{prefix + "0": …, …}``: x mapped under the learner's visible (released) metric."""
        if self._order is None:
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features (record to transform), got {type(x).__name__}")
            return {}
        vector, _, _ = self._vector(x, self._order, self._feature_set, "record to transform")
        if self.learner._dim is None:
            return {}
        if self.basis == "sqrt":
            mapped = self._metric.root() @ self._metric.mapped(vector)
        else:
            # learner.transform's L φ(x), with L computed once per release instead of once per record.
            mapped = (self._metric.mapped(vector)[None, :] @ self._metric.factor().T)[0]
        values = mapped.tolist()
        values += [0.0] * (len(self._order) - len(values))  # "eigen": W₊ has rank < d
        prefix = self.prefix
        return {f"{prefix}{i}": value for i, value in enumerate(values)}

    @property
    def feature_order(self):
        """The feature order (a tuple), or None until it is given or fixed by the first record."""
        return self._order

    @property
    def n_seen(self) -> int:
        """Records the learner has learned."""
        return self.learner.n_seen

    @property
    def model(self) -> np.ndarray:
        """The learner's visible W (d×d; for a private learner, the last released one)."""
        return self.learner.model

    def privacy_report(self) -> dict:
        """The learner's report (private learners) with the record counts of
        :meth:`PrivatePairwiseClassifier.privacy_report` (``features``, ``n_unknown_feature_records``,
        ``unknown_features``, ``n_missing_feature_records``: from the data without noise, for the
        data curator only)."""
        learner = self.learner
        if learner._private:
            report = learner.privacy_report()
        else:
            report = {"algorithm": type(learner).__name__, "n_seen": learner.n_seen, "n_clipped": learner._n_clipped,
                      "status": "not private: the non-private learner protects nothing"}
        lineage = (self._lineage.report(report["delta"], report["accounting"]) if learner._private
                   else self._lineage.report())
        report.update(
            private=bool(learner._private),
            lineage=lineage,
            features=None if self._order is None else list(self._order),
            n_unknown_feature_records=self._n_unknown_records,
            unknown_features=list(self._unknown_names),
            n_missing_feature_records=self._n_missing_records,
        )
        return report

    def clone(self, new_params=None, include_attributes=False):
        """A new transformer around a **new, unfitted learner** with the same parameters.

        As :meth:`PrivatePairwiseClassifier.clone`: nothing private is copied, and a private clone
        is a new mechanism with its own budget (with a ``seed``, it repeats the original's noise);
        ``privacy_report()["lineage"]`` adds up what the transformer and its clones spent.
        ``include_attributes=True`` is refused once the learner has learned (a copy would hold its
        records, and for a private learner reuse its noise and its budget). ``new_params`` may give
        another ``learner``; passing this transformer's own learner still builds a new one.
        """
        from .persistence import _constructor_names

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
            learner = self.learner
            params["learner"] = type(learner)(**{name: copy.deepcopy(getattr(learner, name))
                                                 for name in _constructor_names(type(learner))})
        for name in ("features", "unknown_features", "prefix", "basis"):
            params.setdefault(name, copy.deepcopy(getattr(self, name)))
        clone = type(self)(**params)
        # A new mechanism on the same records: its ρ adds up with this one's in the shared lineage report.
        clone._lineage = self._lineage
        self._lineage.add(clone.learner)
        return clone


class _MetricDistance(_DictRecords):
    """``dist(a, b)`` under a metric learner's visible model (see :func:`metric_distance`)."""

    def __init__(self, learner, features):
        if isinstance(learner, MetricTransformer):
            self._transformer = learner
            self._learner = learner.learner
            self._raise_unknown = learner._raise_unknown
        else:
            self._transformer = None
            self._learner = _metric_learner(learner)
            self._raise_unknown = False
        self._features = _check_features(features)
        dim = self._learner._dim
        if self._features is not None and dim is not None and len(self._features) != dim:
            raise ValueError(f"features names {len(self._features)} features but the learner has {dim}")
        if self._features is None and self._transformer is None and _has_array_bounds(self._learner.bounds):
            raise ValueError("the learner's array bounds need features=[...] to say which feature each bound "
                             "belongs to (the order of dict keys is not fixed)")
        self._feature_set = frozenset(self._features) if self._features is not None else None
        self._metric = _ReleasedMetric(self._learner)

    def _order(self, a, b):
        if self._features is not None:
            return self._features, self._feature_set
        if self._transformer is not None:
            order = self._transformer._order
            if order is None:
                raise ValueError("the transformer has no feature order yet: it fixes it with the first record "
                                 "it learns (or pass features=[...])")
            return order, self._transformer._feature_set
        for record in (a, b):
            if not isinstance(record, dict):
                raise TypeError(f"records must be dicts of features, got {type(record).__name__}")
        order = _sorted_keys(a.keys() | b.keys())
        return order, frozenset(order)

    def __call__(self, a, b) -> float:
        learner = self._learner
        order, feature_set = self._order(a, b)
        if learner._dim is None:
            raise ValueError("the learner has no metric yet: it learns its number of features with its first "
                             "record (or pass n_features= or array bounds to it)")
        if len(order) != learner._dim:
            raise ValueError(f"the records have {len(order)} features but the learner has {learner._dim}: pass "
                             "features=[...]")
        va, _, _ = self._vector(a, order, feature_set, "first record compared")
        vb, _, _ = self._vector(b, order, feature_set, "second record compared")
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


__all__ += ["MetricTransformer", "metric_distance"]
