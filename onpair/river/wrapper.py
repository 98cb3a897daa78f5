"""What the river models around one online learner share (:class:`LearnerWrapper`): learning dict records
and frames through the record mapper, the report, the lineage of clones, the copy and pickle policy, and
saving (:mod:`onpair.persistence`).

A subclass sets ``_inner`` (the learner), ``_records`` (:class:`onpair.river.records.RecordMapper`) and
``_lineage`` in its constructor, and defines ``_label(y, where)`` (a label of its public domain, checked,
in the form its learner takes; ``where`` None: the next stream position, :meth:`LearnerWrapper._position`),
``_labels_of(labels)`` (a block of them, for ``learn_many``),
``_learner_name()``, ``_persisted_fields(path)`` and ``_save_tag``.
"""

from __future__ import annotations

import copy
import math
import warnings

from ..core._validation import SeedNameHint
from ..persistence import save_learner
from ..privacy.reports import extend_report, warn_stream_delta
from .lineage import Lineage
from .records import as_frame, has_array_bounds, series_values, sorted_keys

__all__ = ["LearnerWrapper", "plain_value", "from_params"]


class LearnerWrapper(SeedNameHint):
    """The shared part of the river models that drive one online learner (module docstring)."""

    # -- learning ----------------------------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one record: ``x`` a dict of features, ``y`` a label of the public domain (``classes``).

        A failed call (bad value, label outside the domain, undeclared key with ``unknown_features="raise"``,
        or an error of the learner) changes nothing and spends no budget.
        """
        label = self._label(y, None)  # None: the record's stream position, formatted only for an error
        records = self._records
        order = records.order
        found = records.fast_vector(x)  # None: the general path decides (and says why)
        if found is None:
            where = f"stream position {self._inner.n_seen + 1}"
            order, feature_set = records.order_for(x, where)
            found = records.vector(x, where, order, feature_set)
            if records.order is None and self._inner.private:
                records.warn_order_from_record(type(self).__name__)
        vector, unknown, missing = found
        if missing:
            records.warn_if_empty(order, missing, unknown)
        self._inner.learn_one(vector, label)
        # Committed only once the learner has accepted the record.
        if unknown or missing or records.order is None:
            records.commit(order, unknown, missing, 1)

    def learn_many(self, X, y):
        """Learn a data frame of records (pandas, or any frame river's ``utils.dataframe`` reads),
        exactly as ``learn_one`` on each row in order would.

        A column that is absent reads as 0; a NaN is an error (fill it first), as in a dict. A frame of
        0 rows is a no-op (nothing learned or spent), as the learners' ``learn_many`` of 0 records."""
        frame = as_frame(X)
        labels = series_values(y)
        if len(labels) != len(frame):
            raise ValueError(f"X has {len(frame)} rows but y has {len(labels)} labels")
        if len(frame) == 0:
            return
        offset = self._inner.n_seen
        learned = self._labels_of([self._label(value, f"row {i}, stream position {offset + i + 1}")
                                   for i, value in enumerate(labels)])
        records = self._records
        order = records.order if records.order is not None else sorted_keys(frame.columns)
        block, unknown, missing = records.block(frame, order, offset)
        if records.order is None and self._inner.private:
            records.warn_order_from_record(type(self).__name__)
        records.warn_if_empty(order, missing, unknown)
        self._inner.learn_many(block, learned)
        records.commit(order, unknown, missing, len(frame))

    def _position(self, where) -> str:
        """``where``, or for None the stream position of the next record (what an error about it names)."""
        return f"stream position {self._inner.n_seen + 1}" if where is None else where

    # -- what may be shown -------------------------------------------------------------------------
    def finish_warmup(self):
        """End the range-discovery warm-up now (a stream shorter than its m records): the box is found on
        the records held so far (:meth:`onpair.OnPairStats.finish_warmup`). Without ``discover_bounds``, or
        once the warm-up is over, nothing happens.

        Returns
        -------
        self
        """
        if hasattr(self._inner, "finish_warmup"):
            self._inner.finish_warmup()
        return self

    @property
    def n_seen(self) -> int:
        """Records learned so far."""
        return self._inner.n_seen

    @property
    def feature_order(self):
        """The feature order (a tuple), or None until it is given or fixed by the first record."""
        return self._records.order

    def privacy_report(self, passes=1, order="same") -> dict:
        """The learner's report (:meth:`onpair.OnPairStats.privacy_report`, or
        :meth:`onpair.OnPairStrC.privacy_report`) and the wrapper's fields (for every model of this kind:
        :class:`onpair.river.PrivatePairwiseClassifier`, :class:`onpair.river.PrivateClassifier`).

        Added keys: ``private``, ``learner``, ``features`` (the order, or None),
        ``n_unknown_feature_records`` and ``unknown_features`` (records that carried undeclared
        keys, and the first 100 such names), ``n_missing_feature_records`` (records in which a
        declared key was missing and read as 0) and ``lineage`` (the model and its clones together:
        ``members``, ``non_private_members``, ``rho_spent``, ``delta``, ``epsilon_spent``).

        ``curator_only`` names the fields computed from the data without noise: ``n_clipped``, the three
        record counts and the names (a one-hot key names a value), and, when the feature order was read
        off the first record (``features=None``), ``features`` and ``schedule`` (which shows the
        dimension). They are for the data curator only (:func:`onpair.privacy.reports.public_report`).

        ``passes`` and ``order`` give ``record_level``, the cost of a record learned ``passes`` times
        (``progressive_val_score(data * k, model)``: k passes in the same order, ``order="same"``; the
        default learner's is then exact, e.g. record-level ε 2.71 for four passes of Phishing at
        ε = 1 (its blocks), 3.03 with ``learner_params={"mechanism": "blt"}``, 2.15 with ``learner_params={"mechanism": "toeplitz"}``; ``order="any"`` or an output-perturbed
        learner: the group bound k²ρ); with ``passes`` > 1 the headline ``epsilon_spent`` and ``rho_spent`` are
        that cost, and ``epsilon_per_position`` and ``rho_per_position`` the cost of one stream position. The ``lineage`` total adds the ρ of the model and its clones,
        each learning a record **once** (one position each): it does not cover a meta-model that learns a
        record several times per member (river's bagging, a Poisson number of times, which has no
        upper bound), nor passes (``record_level`` does, per model; :func:`onpair.river.pipeline_report`
        adds up a pipeline's models).
        """
        report = self._inner.privacy_report(passes, order)
        lineage = self._lineage.report(report["delta"], report["accounting"])
        return extend_report(report, public={"learner": self._learner_name(), **self._records.report(),
                                             "lineage": lineage}, extra_curator=self._records.curator_fields())

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
        if include_attributes and self._inner.private and self._started():
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
            return from_params, (type(self), self._get_params())
        if self._inner.private:
            self._refuse_copy("pickled or copied")
        return super().__reduce_ex__(protocol)

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        if not self._started():
            return self.clone()
        if self._inner.private:
            self._refuse_copy("copied")
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        for name, value in self.__dict__.items():
            setattr(twin, name, value if name == "_lineage" else copy.deepcopy(value, memo))
        self._lineage.add(twin._inner)
        return twin

    # -- persistence -------------------------------------------------------------------------------
    def _adopt(self, learner, extra, where):
        """This model (built from a snapshot's parameters) around the snapshot's ``learner``, with the record
        counters of its wrapper fields ``extra`` (checked: a ValueError naming ``where``), in a new lineage."""
        order = extra["order"]
        dim = learner.dimension
        if order is not None and (not isinstance(order, list) or (dim is not None and len(order) != dim)):
            raise ValueError(f"{where}: the feature order does not match the learner's {dim} features")
        if order is None and learner.n_seen:
            raise ValueError(f"{where}: the learner has seen records but the snapshot has no feature order")
        counts = (extra["n_unknown_records"], extra["n_missing_records"])
        if (not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)
                or not isinstance(extra["unknown_names"], list)):
            raise ValueError(f"{where}: malformed wrapper fields")
        self._inner = learner
        self._records.restore_counts(order, counts[0], extra["unknown_names"], counts[1])
        self._lineage = Lineage()
        self._lineage.add(self._inner)
        return self

    def save(self, path) -> None:
        """Write the model (learner state, feature order, label domain, counters) to ``path`` atomically.

        :meth:`load` (or ``onpair.load``) resumes it exactly; the snapshot resumes once
        (:mod:`onpair.persistence`). Feature names must be strings or numbers.
        """
        save_learner(self._inner, path, extra=self._persisted_fields(path), wrapper=self._save_tag)



def plain_value(value, what, path):
    """``value`` if a snapshot's wrapper fields can hold it (None, a string, a bool, an int, a finite float),
    else a ValueError naming ``what`` and the file."""
    if value is None or isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    raise ValueError(f"cannot save to {str(path)!r}: {what} {value!r} is not a string or a number")


def from_params(cls, params):
    """Unpickle an unfitted model: build it again from its parameters."""
    return cls(**params)


def warn_large_stream_delta(owner: str, delta, learner, stacklevel: int = 3) -> None:
    """The river model's warning for a large δ (the offline estimators warn for δ ≥ 1/n): none for a non-private
    twin or where the ``learner`` knows its stream's public length (``horizon`` or ``n``: it warned for δ ≥ 1/length
    itself), else :func:`onpair.privacy.reports.warn_stream_delta` for a stream of unknown length."""
    if not learner.private:
        return
    if getattr(learner, "horizon", None) is not None or getattr(learner, "n", None) is not None:
        return
    warn_stream_delta(owner, delta, None, stacklevel=stacklevel + 1)


def learner_arguments(owner: str, learner_params, own_arguments, why: str, order, bounds, learner=None,
                      name=None) -> dict:
    """The inner learner's arguments from ``learner_params``, checked: a dict of names, none of the wrapper's
    own ``own_arguments`` (a ValueError naming them: pass them to ``owner``; ``why`` says which come from
    elsewhere), each one an argument of the ``learner`` class (a ValueError naming those it takes: the river
    demo once passed ``n`` to OnPairStats; ``name`` is the wrapper's name for it), and array ``bounds`` only
    with a feature ``order``."""
    kwargs = {}
    if learner_params is not None:
        if not isinstance(learner_params, dict) or not all(isinstance(k, str) for k in learner_params):
            raise ValueError(f"learner_params must be a dict of argument names, got {learner_params!r}")
        own = sorted(set(learner_params) & set(own_arguments))
        if own:
            raise ValueError(f"learner_params sets {', '.join(own)}: pass them to {owner} itself ({why})")
        if learner is not None:
            import inspect

            accepted = [arg for arg in inspect.signature(learner.__init__).parameters
                        if arg != "self" and arg not in own_arguments]
            unknown = sorted(set(learner_params) - set(accepted))
            if unknown:
                label = learner.__name__ + (f" (learner={name!r})" if name is not None else "")
                raise ValueError(f"learner_params: {label} takes no argument {', '.join(map(repr, unknown))}; it "
                                 f"takes {', '.join(accepted)}")
        kwargs.update(learner_params)
    if order is None and has_array_bounds(bounds):
        raise ValueError("array bounds need features=[...] to say which feature each bound belongs to "
                         "(the order of dict keys is not fixed)")
    return kwargs


def restored_wrapper(cls, params: dict, learner, extra: dict, where: str):
    """A saved wrapper of class ``cls`` rebuilt around its ``learner``: its own saved fields ``params`` and those
    every wrapper saves (features, unknown_features, learner_params; bounds and seed are the learner's), built
    with warnings silenced (they were issued when the model was first built), then the learner adopted. A
    ValueError naming ``where`` if the fields do not build one."""
    features = extra["features"]
    if features is not None and extra["features_is_tuple"]:
        features = tuple(features)
    params = dict(params, bounds=learner.bounds, norm_bound=learner.norm_bound, features=features,
                  unknown_features=extra["unknown_features"], seed=learner.seed,
                  learner_params=None if extra["learner_params"] is None else
                  {k: getattr(learner, k) for k in extra["learner_params"]})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(**params)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{where}: the saved wrapper fields do not build a {cls.__name__} ({exc})") from None
    return model._adopt(learner, extra, where)

