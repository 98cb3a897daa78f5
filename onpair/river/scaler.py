"""PrivateStandardScaler for river: feature means and variances released after every record.

The river twin of :class:`onpair.preprocessing.PrivateStandardScaler`: ``learn_one(x)`` adds the record's
per-feature (u_j, u_j²) (u: the record on the unit range of the public box) to a continual-release
mechanism (by default :class:`onpair.privacy.continual.BufferedToeplitz`, sensitivity 2√d, one fixed cost for
the whole stream); ``transform_one(x)`` standardises with the means and scales computed from the latest release
and clips to [−clip, clip], the public bounds to give the model after it:

    PrivateStandardScaler(bounds=(lower, upper), epsilon=0.5) | PrivatePairwiseClassifier(bounds=(-3, 3), epsilon=1)

is (0.5 + 1)-ish DP in total: the zCDP budgets add (``privacy_report()["rho_spent"]`` is the scaler's;
:func:`onpair.river.pipeline_report` adds them up for a whole pipeline).
Before its first record the scaler maps the public box's centre to 0 and its edges to ±1.

It is the private replacement for a ``StandardScaler`` habit, not a gain: measured, the pipeline loses to
the model alone in every setting (river's Phishing at ε = 1 in all: 0.66 against 0.86 progressive ROCAUC;
a box 1,000× wider than the data: 0.49 either way, where the model's own ``discover_bounds=True`` gives
0.67; bench/results/ranges.md, "Range discovery (issue 24)", re-measured on 2026-11-28 after the discovery fix of
issue 31). For loose bounds use ``discover_bounds=``.
"""

from __future__ import annotations

import math

import numpy as np
from river import base

from ..preprocessing import DEFAULT_CLIP, moments_from_sums, scaler_sensitivity, standardise, unit_range
from ..core._validation import SeedNameHint, root_sequence
from ..core.bounds import missing_bounds_message
from ..privacy.checks import check_delta, check_epsilon
from ..privacy.continual import PrefixSumMechanism
from ..privacy.accountant import ZCDPAccountant, charge, check_accountant, refusal
from ..privacy.conversions import rho_from_dp
from ..privacy.events import ContinualRelease
from ..privacy.reports import build_report
from .records import RecordMapper, has_array_bounds

__all__ = ["PrivateStandardScaler"]


class PrivateStandardScaler(SeedNameHint, base.Transformer):
    """Standardise river records with privately released, continually updated means and variances.

    Parameters
    ----------
    bounds : (lower, upper)
        **Public** bounds of the raw features (scalars, or arrays in the order of ``features``).
    epsilon, delta : float, default 0.5 and 1e-5
        The scaler's own guarantee for the whole stream.
    features : sequence, optional
        The **public** feature names, in order; default the sorted keys of the first record (the scaler
        then warns: those keys are the record's, and they fix the output's keys and the sensitivity).
    clip : float, default 3.0
        Outputs are clipped to [−clip, clip].
    seed : int or SeedSequence, optional
        For reproducible experiments only (a numpy ``SeedSequence`` acts as an int: the same sequence, the
        same noise; the caller's sequence is not advanced).
    mechanism : {"blt", "toeplitz", "epochs", "tree"}, default "blt"
        The continual-release mechanism of the sums (as :class:`onpair.OnPairStats`'s ``mechanism``, without
        a horizon); "toeplitz" was the default before issue 22.
    accountant : ZCDPAccountant, optional
        A budget shared with other models (the classifier after the scaler, say): the stream's cost is
        charged to it with the first record, which is refused (nothing changes) when it cannot pay.
        river's ``clone()`` shares it. A scaler charging it draws noise of its own, even with a ``seed`` another
        model charging it has (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`; a clone too).

    Examples
    --------
    >>> from river import datasets
    >>> from onpair.river import PrivateStandardScaler
    >>> from streams import PHISHING_FEATURES   # public: the data set's documented names
    >>> scaler = PrivateStandardScaler(bounds=(0.0, 1.0), epsilon=1.0, features=PHISHING_FEATURES, seed=0)
    >>> for x, _ in datasets.Phishing().take(300):
    ...     scaler.learn_one(x)
    >>> out = scaler.transform_one(x)
    >>> all(-3.0 <= v <= 3.0 for v in out.values()), scaler.privacy_report()["epsilon_spent"] <= 1.0
    (True, True)
    """

    def __init__(self, bounds=None, epsilon=0.5, delta=1e-5, features=None, clip=DEFAULT_CLIP, seed=None,
                 mechanism="blt", accountant=None):
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.features = features
        self.clip = clip
        self.seed = seed
        self.mechanism = mechanism
        self._mechanism_class = PrefixSumMechanism.for_option(mechanism)  # a ValueError names the choices
        if mechanism == "blocks":  # its estimate covers the completed blocks' records only, not n_seen (review)
            raise ValueError("mechanism='blocks' releases only at the ends of its blocks and is for OnPairStats; the "
                             "scaler's moments need a release after every record: use 'blt', 'toeplitz', 'epochs' or 'tree'")
        self.accountant = check_accountant(accountant, "PrivateStandardScaler")
        check_epsilon(epsilon)
        check_delta(delta)
        if bounds is None:
            raise ValueError(missing_bounds_message("PrivateStandardScaler", norm=False,
                                                    example="arrays with features=[...]"))
        if isinstance(clip, bool) or not isinstance(clip, (int, float)) or not clip > 0 or not math.isfinite(clip):
            raise ValueError(f"clip must be a finite number > 0, got {clip!r}")
        self._records = RecordMapper(features, owner=type(self).__name__)
        if self._records.order is None and has_array_bounds(bounds):
            raise ValueError("array bounds need features=[...] to say which feature each bound belongs to")
        try:
            lower, upper = bounds
            self._lower = np.asarray(lower, dtype=np.float64)
            self._upper = np.asarray(upper, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be a pair (lower, upper) of numbers or arrays, got {bounds!r}") from None
        if not (np.all(np.isfinite(self._lower)) and np.all(np.isfinite(self._upper))
                and np.all(self._upper > self._lower)):
            raise ValueError(f"bounds must be finite with upper > lower for every feature, got {bounds!r}")
        self._rho = rho_from_dp(epsilon, delta, method="gaussian")
        # The scaler's own record: the stream's cost, charged with the first record.
        self._own = ZCDPAccountant(self._rho, owner="PrivateStandardScaler")
        root = root_sequence(seed)
        if self.accountant is not None:  # no two models charging one accountant draw the same noise
            root = self.accountant.noise_seed(root)
        self._rng = np.random.Generator(np.random.PCG64(root))
        self._mechanism = None
        self._box = None
        self._cache = None  # (n_seen, mean, scale)

    def _setup(self, d, mechanism=None):
        self._box = (np.broadcast_to(self._lower, (d,)).copy(), np.broadcast_to(self._upper, (d,)).copy())
        self._mechanism = mechanism or self._new_mechanism(d)

    def _new_mechanism(self, d):
        return self._mechanism_class(dim=2 * d, sensitivity=scaler_sensitivity(d), rho=self._rho)

    def _release_event(self, mechanism):
        """The continual release of the whole stream, charged its cost capped at the budget it was calibrated
        to (the rounding of the root finders)."""
        cost = min(float(mechanism.describe()["rho_spent_bound"]), self._rho)
        return ContinualRelease.of(mechanism, what="continual release of the per-feature sums", rho=cost)

    def learn_one(self, x):
        """Add one record's per-feature (u, u²) to the released sums (a failed call changes nothing)."""
        where = f"stream position {self.n_seen + 1}"
        order, feature_set = self._records.order_for(x, where)
        vector, unknown, missing = self._records.vector(x, where, order, feature_set)
        mechanism = self._mechanism or self._new_mechanism(len(order))
        first = not self._own.events
        if first:  # the whole stream's cost, charged with the first record: asked before anything changes
            event = self._release_event(mechanism)
            exc = refusal([self._own, self.accountant], [event])
            if exc is not None:
                raise exc
        self._records.warn_order_from_record(type(self).__name__)
        self._records.warn_if_empty(order, missing, unknown)
        if self._mechanism is None:
            self._setup(len(order), mechanism)
        u = unit_range(vector[None, :], *self._box)[0]
        self._mechanism.add_block(np.concatenate([u, u * u])[None, :], self._rng)  # one record: a block of one
        if first:
            charge([self._own, self.accountant], [event])
        self._records.commit(order, unknown, missing, 1)

    def _moments(self):
        n = self.n_seen
        if self._cache is None or self._cache[0] != n:
            d = len(self._records.order)
            released = self._mechanism.estimate()
            self._cache = (n, *moments_from_sums(n, released[:d], released[d:]))
        return self._cache[1], self._cache[2]

    def transform_one(self, x):
        """The record standardised with the latest release, clipped to [−clip, clip]."""
        if self._records.order is None:
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features (record to transform), got {type(x).__name__}")
            return {}
        vector, _, _ = self._records.vector(x, "record to transform")
        if self._mechanism is None:
            self._setup(len(self._records.order))
        u = unit_range(vector[None, :], *self._box)[0]
        if self.n_seen == 0:
            out = np.clip(u, -self.clip, self.clip)
        else:
            mean, scale = self._moments()
            out = standardise(u, mean, scale, float(self.clip))
        return dict(zip(self._records.order, out.tolist()))

    @property
    def n_seen(self) -> int:
        return 0 if self._mechanism is None else self._mechanism.n_seen

    @property
    def output_bounds(self) -> tuple:
        """(−clip, clip): the public bounds of the outputs, for the model after the scaler."""
        return (-float(self.clip), float(self.clip))

    def privacy_report(self, passes=1, order="same") -> dict:
        """The scaler's own spend: the keys of every report (:func:`onpair.privacy.reports.build_report`;
        ``rho_spent`` is committed with the first record, the cost of one stream position; one
        :class:`onpair.privacy.events.ContinualRelease` row), ``schedule`` (the mechanism's description),
        ``record_level`` (a record learned ``passes`` times, as :meth:`onpair.OnPairStats.privacy_report`:
        exact for same-order passes), and the record mapper's counts (``features``,
        ``n_unknown_feature_records``, ``unknown_features``, ``n_missing_feature_records``). The counts are
        computed from the data without noise: they are for the data curator only, and listed under
        ``curator_only``. The feature key set itself must be public: give ``features=`` (without it the first
        record's keys fix the output's keys and the sensitivity 2√d, the scaler warns, and ``features`` and
        ``schedule`` are curator-only)."""
        mechanism = self._mechanism
        events = [ContinualRelease.of(mechanism, e.what, rho=e.rho) for e in self._own.events]
        return build_report(
            "PrivateStandardScaler", events, epsilon=self.epsilon, delta=self.delta, accounting="gaussian",
            mode="continual", n_seen=self.n_seen, status="learning; a release after every record",
            rho_budget=self._rho, passes=passes, order=order, mechanism=mechanism,
            public={"schedule": None if mechanism is None else mechanism.describe(), **self._records.report()},
            extra_curator=self._records.curator_fields())

    # -- copies and pickles (independent review, issue 31): an unfitted scaler's generator state is the whole of its
    # noise to come, so a copy of it would draw the same noise as the original on another stream (their difference
    # reveals a record). A copy or an unpickled scaler is a new one built from the parameters (its own noise: fresh
    # entropy, or the next noise key of a shared accountant); a fitted scaler refuses both.
    def __reduce_ex__(self, protocol):
        if self.n_seen:
            self._refuse_copy("pickled or copied")
        return _from_params, (type(self), self._get_params())

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        if self.n_seen:
            self._refuse_copy("copied")
        return self.clone()

    def _refuse_copy(self, what):
        raise TypeError(f"a fitted {type(self).__name__} cannot be {what}: it holds noiseless sums and its noise, and a "
                        "copy would reuse both. Use clone() for a new, unfitted scaler with its own noise.")

    @classmethod
    def _unit_test_params(cls):
        yield {"bounds": (0.0, 1.0), "epsilon": 1.0, "seed": 0}

    def _unit_test_skips(self):
        # A fitted scaler holds noiseless sums and its noise (the mechanism refuses copies and pickles):
        # the pickling checks of a fitted transformer cannot run.
        return {"check_pickling", "check_no_state_aliasing_with_input"}


def _from_params(cls, params):
    """Unpickle an unfitted scaler: build it again from its parameters (its own noise)."""
    return cls(**params)
