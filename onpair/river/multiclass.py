"""PrivateClassifier: a private multi-class river classifier from class statistics released along the stream.

It drives :class:`onpair.OnPairStats` with ``task="classify"``: every record adds its counts, sums and second
moments to one set of class statistics, released at the end of public blocks of 32, 64, … records (a
stationary stream's default) or after every record (``half_life``, ``learner_params={"mechanism": "blt"}``) by a
mechanism whose cost is fixed once for the whole stream, **whatever the number of classes** (one record changes the
statistics of at most two classes, and the sensitivity Δ is per record: one budget for the stream, not one
per one-vs-rest member). Its predictions are post-processing of the latest release: the calibrated
linear-discriminant posterior over every declared class (docs/algorithms.md#classifier).

Labels
------
The class domain is **public** and required (``classes=[...]``, at least two labels, from the data's
documentation, never from the stream). ``predict_proba_one`` has exactly these keys, in this order, before
anything is learned too (the uniform distribution 1/C, the posterior's priors before any release); a label
is accepted when it equals one of them (``1`` equals ``True``); a label outside the domain is a ValueError
that changes nothing and spends nothing.

Records, copies, clones and saving are handled as by :class:`onpair.river.PrivatePairwiseClassifier`
(:mod:`onpair.river.classifier`, :mod:`onpair.river.wrapper`).
"""

from __future__ import annotations

import math

import numpy as np
from river import base, utils

from ..core.bounds import BOUNDS_ADVICE
from ..persistence import load_learner
from ..statistics import OnPairStats
from .labels import check_domain, label_code
from .lineage import Lineage
from .records import RecordMapper, as_frame
from ..core.predictor import decayed_refresh_cap
from .wrapper import LearnerWrapper, learner_arguments, plain_value, restored_wrapper, warn_large_stream_delta

__all__ = ["PrivateClassifier"]

#: The wrapper tag its snapshots carry (``onpair.load`` imports the wrapper by this name).
SAVE_TAG = "onpair.river.multiclass:PrivateClassifier"
#: Version of the wrapper fields written with the learner by :meth:`PrivateClassifier.save`.
_SAVE_VERSION = 1
#: Learner arguments the wrapper sets itself.
_OWN_ARGUMENTS = ("epsilon", "delta", "bounds", "norm_bound", "seed", "n_features", "task", "classes", "accountant",
                  "discover_bounds", "half_life")


class PrivateClassifier(LearnerWrapper, base.MiniBatchClassifier):
    """Differentially private multi-class classification of a river stream, one budget for the whole stream.

    A calibrated linear-discriminant classifier over the public classes, computed from each release of
    the class statistics :class:`onpair.OnPairStats` (``task="classify"``) releases: class priors from the
    noisy counts, class means, one pooled within-class covariance (released as **one** second moment for all
    classes), a ridge and a calibration set from the public noise level, so that where the release is mostly
    noise the probabilities shrink towards the priors instead of flipping. Two classes work too (the
    posterior of linear discriminant analysis, with its own direction: for the ranking direction of the
    pairwise square loss use :class:`onpair.river.PrivatePairwiseClassifier`).

    Parameters
    ----------
    classes : list or tuple of labels
        The **public** class domain (required; at least two distinct labels, from the data's documentation).
        ``predict_proba_one`` returns one probability per label, in this order.
    epsilon, delta : float, default 1.0 and 1e-5
        The (ε, δ)-DP guarantee for the whole stream, every release included, whatever the number of classes.
    bounds : (lower, upper), optional
        **Public** bounds of the raw features: scalars, or arrays in the order of ``features`` (arrays need
        ``features``). One of ``bounds`` and ``norm_bound`` is required.
    norm_bound : float, optional
        Public bound on ‖x‖₂ instead of a box.
    features : sequence, optional
        The **public** feature names, in order. Default: the sorted keys of the first record learned (a
        ``PrivacyWarning``; the report then lists ``features`` and ``schedule`` as curator-only).
    unknown_features : {"ignore", "raise"}, default "ignore"
        What to do with a key that is not one of the features.
    seed : int or SeedSequence, optional
        For reproducible experiments only (a numpy ``SeedSequence`` acts as an int); anyone who knows it can
        remove the noise.
    half_life : float, optional
        Forgetting under concept drift: a public half-life in records; the class statistics decay with it
        (:class:`onpair.OnPairStats`'s ``half_life``: the same ρ for a stream of any length), and predictions
        use a model at most H/64 releases old (:func:`onpair.core.predictor.decayed_refresh_cap`). None
        (default): no forgetting (docs/forgetting.md).
    learner_params : dict, optional
        Further arguments of :class:`onpair.OnPairStats`: ``mechanism``, ``covariance``, ``moments``, ``lam``,
        ``weights``, ``horizon``, ``band``, ``accounting``, ``private`` (False: the non-private twin).
    accountant : ZCDPAccountant, optional
        A budget shared with other models (:mod:`onpair.privacy.accountant`), as for
        :class:`onpair.river.PrivatePairwiseClassifier`: the release is also charged to it, and a record it
        cannot pay for is refused before anything changes; ``clone()`` shares it. A model with one refuses ``save``.
        A model charging it (a clone too) draws noise of its own (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).
    discover_bounds : bool, int or dict, default False
        Find the box privately inside the loose declared ``bounds`` from the first m records, with a share of the
        one budget (:class:`onpair.OnPairStats`, ``discover_bounds``; True: m = min(max(records_needed(d, 0.2ρ),
        500), 1,000), 20 % of ρ). Those records are held unreleased, and until the m-th ``predict_proba_one``
        gives the data-independent prior (exactly ``1.0 / C`` for every class); later records outside the box
        found are clipped to it. :meth:`finish_warmup` ends the warm-up of a stream shorter than m. Recommended
        whenever the documentation gives no tight range (README, "Which bounds do I declare").

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from onpair.river import PrivateClassifier
    >>> from streams.image_segments import CLASSES, FEATURES, LOWER, UPPER   # public, from the documentation
    >>> model = PrivateClassifier(classes=CLASSES, epsilon=4.0, bounds=(LOWER, UPPER), features=FEATURES, seed=0)
    >>> model.predict_proba_one({"region-centroid-col": 100.0})["cement"] == 1 / 7   # before any release: 1/C
    True
    >>> accuracy = evaluate.progressive_val_score(datasets.ImageSegments(), model, metrics.Accuracy())
    >>> bool(accuracy.get() > 1 / 7), model.privacy_report()["epsilon_spent"] <= 4.0
    (True, True)
    """

    _multiclass = True

    def __init__(self, *, classes, epsilon=1.0, delta=1e-5, bounds=None, norm_bound=None, features=None,
                 unknown_features="ignore", seed=None, half_life=None, learner_params=None, accountant=None,
                 discover_bounds=False):
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.norm_bound = norm_bound
        self.features = features
        self.unknown_features = unknown_features
        self.seed = seed
        self.half_life = half_life
        self.learner_params = learner_params
        self.accountant = accountant
        self.discover_bounds = discover_bounds
        self._domain = check_domain(classes)  # public, never from the stream
        self._codes = {}
        for code, label in enumerate(self._domain):
            try:
                self._codes.setdefault(label, code)
            except TypeError:  # an unhashable label: label_code compares it one by one
                pass
        self._records = RecordMapper(features, unknown_features)
        self._inner = self._make_inner(self._records.order)
        if bounds is None and norm_bound is None:
            raise ValueError(
                "PrivateClassifier needs the public bounds of the features: pass bounds=(lower, upper) (scalars or "
                f"per-feature arrays with features=[...]), or norm_bound=B if every record has ‖x‖₂ ≤ B. {BOUNDS_ADVICE}")
        warn_large_stream_delta(type(self).__name__, delta, self._inner, stacklevel=2)
        self._lineage = Lineage()
        self._lineage.add(self._inner)

    def _make_inner(self, order):
        kwargs = learner_arguments("PrivateClassifier", self.learner_params, _OWN_ARGUMENTS,
                                   "n_features comes from features, task is 'classify'", order, self.bounds)
        # The learner's classes are the domain's positions: the wrapper maps labels of any hashable type.
        return OnPairStats(task="classify", classes=list(range(len(self._domain))), epsilon=self.epsilon,
                           delta=self.delta, bounds=self.bounds, norm_bound=self.norm_bound, seed=self.seed,
                           n_features=None if order is None else len(order), accountant=self.accountant,
                           discover_bounds=self.discover_bounds, half_life=self.half_life, **kwargs)

    # -- river's test hooks ------------------------------------------------------------------------
    @classmethod
    def _unit_test_params(cls):
        # river's checks feed the same configuration Phishing (booleans, features in [0, 1]) and ImageSegments
        # (seven strings, features in [−50, 1387]): one public domain and one box hold both; the default's block
        # release and a release after every record. The last is the non-private twin, on which the pickling
        # checks run.
        classes = [False, True, "brickface", "cement", "foliage", "grass", "path", "sky", "window"]
        yield {"classes": classes, "epsilon": 1.0, "bounds": (-100.0, 1400.0)}
        yield {"classes": classes, "epsilon": 1.0, "bounds": (-100.0, 1400.0), "learner_params": {"mechanism": "blt"}}
        yield {"classes": classes, "epsilon": 1.0, "bounds": (-1000.0, 14000.0), "discover_bounds": 40}
        yield {"classes": classes, "bounds": (-100.0, 1400.0), "learner_params": {"private": False}}

    def _unit_test_skips(self):
        if not self._inner.private:
            return set()
        # A fitted private model refuses to be pickled (PrivatePairwiseClassifier._unit_test_skips says why).
        return {"check_pickling", "check_no_state_aliasing_with_input"}

    # -- records -----------------------------------------------------------------------------------
    _save_tag = SAVE_TAG

    def _label(self, y, where) -> int:
        """The position of a label in the public domain, or a ValueError naming it (nothing is kept of it)."""
        return label_code(y, self._codes, self._domain, self._position(where))

    @staticmethod
    def _labels_of(codes) -> list:
        return list(codes)

    def _learner_name(self) -> str:
        return "stats"

    # -- prediction --------------------------------------------------------------------------------
    def _view(self):
        """The view of the released model predictions read now (:meth:`onpair.core.stream.StreamLearner.predictor`:
        the learner keeps it, on the refresh rule of :func:`onpair.core.predictor.release_window`; with a half-life,
        ``half_life=H``, a model at most H/64 releases old: :func:`onpair.core.predictor.decayed_refresh_cap`)."""
        inner = self._inner
        return inner.predictor(cap=decayed_refresh_cap(getattr(inner, "half_life", None)))

    def _uniform(self) -> dict:
        return {label: 1.0 / len(self._domain) for label in self._domain}

    def _prior_only(self) -> bool:
        """Whether the model predicts the data-independent prior: no record yet, or nothing released yet (a
        private learner's ``discover_bounds`` warm-up holds its records unreleased)."""
        inner = self._inner
        return self._records.order is None or inner.n_seen == 0 or (inner.private and inner.n_releases == 0)

    def predict_proba_one(self, x, **kwargs):
        """``{label: P(label | x)}`` for every declared class, from the latest release read; before the first
        record and during a ``discover_bounds`` warm-up (nothing released) exactly ``1.0 / C`` each (the float
        nearest 1/C: their sum is 1 up to rounding)."""
        if self._prior_only():
            if not isinstance(x, dict):
                raise TypeError(f"x must be a dict of features (record to predict), got {type(x).__name__}")
            return self._uniform()  # nothing released yet: the priors, exactly 1/C
        found = self._records.fast_vector(x, remember=True)  # for a learn_one of the same dict
        vector = (found or self._records.vector(x, "record to predict"))[0]
        log_p = self._view().log_proba_one(vector)
        return {label: math.exp(v) for label, v in zip(self._domain, log_p.tolist())}

    def _proba_many(self, X):
        frame = as_frame(X)
        if self._prior_only() or len(frame) == 0:
            return frame, np.full((len(frame), len(self._domain)), 1.0 / len(self._domain))
        block, _, _ = self._records.block(frame, self._records.order, None)
        view = self._view()
        return frame, np.exp(view.log_proba(block))

    def predict_proba_many(self, X):
        """A frame with one column per declared class, as ``predict_proba_one`` per row."""
        frame, P = self._proba_many(X)
        return utils.dataframe.to_native_frame({label: P[:, c] for c, label in enumerate(self._domain)}, like=frame)

    def predict_many(self, X):
        """The most probable declared class of each row, as ``predict_one``."""
        frame, P = self._proba_many(X)
        best = np.argmax(P, axis=1).tolist()
        return utils.dataframe.to_native_series([self._domain[c] for c in best], name=None, like=frame)

    # -- what may be shown -------------------------------------------------------------------------
    @property
    def model(self) -> np.ndarray:
        """The coefficients of the latest release's posterior, one row per declared class (C, d), on the
        bounds-mapped features in :attr:`feature_order` (:meth:`posterior` has the intercepts)."""
        if self._records.order is None:
            raise ValueError("no feature order yet: pass features=[...] or learn a record first")
        return self._inner.model

    def posterior(self):
        """The latest release's posterior (:class:`onpair.statistics.discriminant.LinearDiscriminant`, rows in the
        order of ``classes``)."""
        if self._records.order is None:
            raise ValueError("no feature order yet: pass features=[...] or learn a record first")
        return self._inner.posterior()

    # -- persistence -------------------------------------------------------------------------------
    @classmethod
    def load(cls, path, *, consume=True):
        """Resume a model written by :meth:`save` (``consume=False``: a read-only view, see
        :func:`onpair.persistence.load_learner`). It starts a new lineage."""
        return load_learner(path, consume=consume, finish=lambda learner, extra: cls.from_persisted(learner, extra, path))

    def _persisted_fields(self, path) -> dict:
        records = self._records
        return {
            "version": _SAVE_VERSION,
            "classes": [plain_value(v, "class", path) for v in self._domain],
            "classes_is_tuple": isinstance(self.classes, tuple),
            "epsilon": plain_value(self.epsilon, "epsilon", path),
            "delta": plain_value(self.delta, "delta", path),
            "unknown_features": self.unknown_features,
            "features": None if self.features is None else [plain_value(f, "feature", path) for f in self.features],
            "features_is_tuple": isinstance(self.features, tuple),
            "learner_params": None if self.learner_params is None else sorted(self.learner_params),
            "order": None if records.order is None else [plain_value(f, "feature", path) for f in records.order],
            "n_unknown_records": records.n_unknown_records,
            "unknown_names": [n if isinstance(n, (str, int, float, bool)) else repr(n) for n in records.unknown_names],
            "n_missing_records": records.n_missing_records,
        }

    @classmethod
    def from_persisted(cls, learner, extra, path=None):
        """The model around a ``learner`` that :func:`onpair.persistence.load` read with the ``extra`` fields
        :meth:`save` wrote (the wrapper protocol of :mod:`onpair.persistence`); a ValueError otherwise."""
        where = "the snapshot" if path is None else repr(str(path))
        keys = {"version", "classes", "classes_is_tuple", "epsilon", "delta", "unknown_features", "features",
                "features_is_tuple", "learner_params", "order", "n_unknown_records", "unknown_names",
                "n_missing_records"}
        if not isinstance(extra, dict) or set(extra) != keys or extra["version"] != _SAVE_VERSION:
            raise ValueError(f"{where}: not a {cls.__name__} snapshot (missing or unexpected wrapper fields)")
        classes = extra["classes"]
        if not isinstance(learner, OnPairStats) or learner.task != "classify" or not isinstance(classes, list) \
                or learner.classes != list(range(len(classes))):
            raise ValueError(f"{where}: does not hold the classifier of {cls.__name__} over {classes!r}")
        if learner.private and (extra["epsilon"] != learner.epsilon or extra["delta"] != learner.delta):
            raise ValueError(f"{where}: the wrapper's epsilon or delta differ from the learner's")
        names = extra["learner_params"]
        if isinstance(names, list) and "half_life" in names:
            # Saved when half_life went through learner_params: it is the wrapper's own parameter now.
            extra = dict(extra, learner_params=[name for name in names if name != "half_life"] or None)
        return restored_wrapper(cls, {"classes": tuple(classes) if extra["classes_is_tuple"] else classes,
                                      "epsilon": extra["epsilon"], "delta": extra["delta"],
                                      "discover_bounds": getattr(learner, "discover_bounds", False),
                                      "half_life": getattr(learner, "half_life", None)},
                                learner, extra, where)
