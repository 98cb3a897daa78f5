"""Private standardisation: feature means and variances released with differential privacy.

A ``StandardScaler`` in front of a private model leaks: its means and variances are computed from the
records without noise, and each record then moves every other record's features, so the model's
per-record guarantee no longer holds. :class:`PrivateStandardScaler` (scikit-learn API) releases the
per-feature sums and sums of squares once with the Gaussian mechanism and standardises with them; its
river twin, :class:`onpair.river.PrivateStandardScaler`, releases them after every record through a
continual-release mechanism. Both need **public** bounds of the raw features (records are clipped to
them), and both output features clipped to the public box [−clip, clip]: pass ``bounds=(−clip, clip)``
(the scaler's ``output_bounds_``) to the model after them.

The guarantee of the pipeline is the scaler's and the model's together: zCDP budgets add (ρ = ρ_scaler +
ρ_model; given the scaler's release, the model sees each record through a public map, so the model's
own analysis holds for it). ``privacy_report_["rho_spent"]`` is the scaler's share.

Measured, a scaler in front of the model loses to the model alone in every setting (docs/guide.md, "Private
standardisation": Pima, Phishing, and a box 1,000× wider than the data); for loose bounds, give the model
``discover_bounds=`` instead. The variance floor below stays: removing it changed nothing measurable.

Sensitivity. Each feature is first put on the unit range, u = (2x − lower − upper)/(upper − lower) ∈
[−1, 1]; a record contributes (u_j, u_j²) for every feature j. Replacing it changes feature j's pair by
(u − v, u² − v²) with u, v ∈ [−1, 1], whose squared norm is (u − v)²(1 + (u + v)²) = t²(1 + s²) with
s = u + v, |t| ≤ 2 − |s|: at most max_{0≤s≤2} (2 − s)²(1 + s²) = 4, at s = 0 (the function decreases on
all of [0, 2]: its derivative is 2(2 − s)(−2s² + 2s − 1) < 0). Over d features Δ = 2√d, attained at u = 1,
v = −1 for every j.
"""

from __future__ import annotations

import math

import numpy as np

from .core._validation import SeedNameHint
from .core.bounds import FeatureBounds, missing_bounds_message
from .core.fitting import (complex_dtype, fit_seeds, fitted_feature_block, not_fitted_error, recording_feature_names,
                           sklearn_feature_block)
from .privacy.checks import check_delta, check_epsilon
from .privacy.conversions import rho_from_dp
from .privacy.gaussian import gaussian_rho, gaussian_sigma
from .privacy.accountant import charge, check_accountant
from .privacy.events import GaussianRelease
from .privacy.reports import build_report

#: Standardised values are clipped to [−CLIP, CLIP] by default: the public output bounds.
DEFAULT_CLIP = 3.0
#: Released variances (on the unit range) are floored here: a feature that the noise makes look
#: constant is not blown up. The floor caps the rescaling at 1/√(1e-3) ≈ 32× the unit range, which is
#: not what limits the scaler: where the data fill a small part of the box the released variances are
#: mostly noise, and removing the floor changed nothing measurable (bench/results/ranges.md, "Range discovery
#: (issue 24)", the scaler's table: 0.657 either way on Phishing, re-measured on 2026-11-28 after the
#: discovery fix of issue 31). Loose bounds call for the learners'
#: ``discover_bounds=``, not a scaler.
VARIANCE_FLOOR = 1e-3


def scaler_sensitivity(n_features: int) -> float:
    """Δ = 2√d of the per-feature (sum of u, sum of u²) under replacement of one record (module docstring).

    Examples
    --------
    >>> scaler_sensitivity(4)
    4.0
    """
    return 2.0 * math.sqrt(n_features)


def unit_range(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Records clipped to the public box and put on [−1, 1] per feature."""
    return (2.0 * np.clip(X, lower, upper) - lower - upper) / (upper - lower)


def standardise(U: np.ndarray, mean: np.ndarray, scale: np.ndarray, clip: float) -> np.ndarray:
    """(u − mean)/scale, clipped to [−clip, clip]."""
    return np.clip((U - mean) / scale, -clip, clip)


def moments_from_sums(n: float, sums: np.ndarray, squares: np.ndarray):
    """(mean, standard deviation) per feature on the unit range from released sums (post-processing)."""
    n = max(float(n), 1.0)
    mean = np.clip(sums / n, -1.0, 1.0)
    variance = np.maximum(squares / n - mean * mean, VARIANCE_FLOOR)
    return mean, np.sqrt(variance)


def _box(bounds, n_features):
    if bounds is None:
        raise ValueError(missing_bounds_message("PrivateStandardScaler", norm=False))
    fb = bounds if isinstance(bounds, FeatureBounds) else FeatureBounds(*bounds)
    if fb.kind != "box":
        raise ValueError("PrivateStandardScaler needs box bounds (lower, upper), not a norm bound")
    lower = np.broadcast_to(fb.lower, (n_features,)).astype(np.float64)
    upper = np.broadcast_to(fb.upper, (n_features,)).astype(np.float64)
    return lower, upper


class PrivateStandardScaler(SeedNameHint):
    """Standardise features with privately released means and variances (scikit-learn transformer).

    ``fit`` clips records to the public ``bounds``, releases the per-feature sums and sums of squares
    once (Gaussian mechanism, sensitivity 2√d, analytic calibration), and keeps only the released means
    and scales; ``transform`` maps a record to (u − mean)/scale clipped to [−clip, clip], with u the
    record on the unit range of the public box.

    Parameters
    ----------
    epsilon, delta : float, default 0.5 and 1e-5
        The scaler's own (ε, δ); the model after it spends its own, and the budgets add up.
    bounds : (lower, upper)
        **Public** box bounds of the raw features (scalars or per-feature arrays).
    clip : float, default 3.0
        Standardised values are clipped to [−clip, clip]: ``output_bounds_`` = (−clip, clip) are the
        public bounds to give the model.
    random_state : int, SeedSequence, Generator or None
        The noise (as the estimators' ``random_state``: a SeedSequence gives each fit a fresh child, a
        Generator is drawn from); None: fresh OS entropy.
    accountant : ZCDPAccountant, optional
        A budget shared with the model after the scaler (or any other): the release is charged to it too,
        and a fit it cannot pay for is refused (``PrivacyBudgetExceeded``, the scaler unchanged).
        scikit-learn's ``clone`` shares it. Each fit charged to it draws noise of its own, even with the
        same ``random_state`` (:meth:`onpair.privacy.ZCDPAccountant.noise_seed`).

    ``privacy_report_`` has the keys of every report (:func:`onpair.privacy.reports.build_report`: one
    :class:`onpair.privacy.events.GaussianRelease` row), the release's ``sensitivity`` and ``sigma``, and
    ``n_clipped``, the number of records outside the bounds: computed from the data without noise, it is
    for the data curator only (listed under ``curator_only``).

    Examples
    --------
    >>> import numpy as np
    >>> from onpair.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(50.0, 10.0, size=(2000, 2))
    >>> scaler = PrivateStandardScaler(epsilon=1.0, bounds=(0.0, 100.0), random_state=0).fit(X)
    >>> Z = scaler.transform(X)
    >>> bool(abs(Z.mean()) < 0.1 and abs(Z.std() - 1.0) < 0.1), scaler.output_bounds_
    (True, (-3.0, 3.0))
    """

    def __init__(self, *, epsilon=0.5, delta=1e-5, bounds=None, clip=DEFAULT_CLIP, random_state=None,
                 accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.clip = clip
        self.random_state = random_state
        self.accountant = accountant

    def __repr__(self):
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if v != {"epsilon": 0.5, "delta": 1e-5, "bounds": None, "clip": DEFAULT_CLIP, "random_state": None,
                            "accountant": None}[k]]
        return f"PrivateStandardScaler({', '.join(changed)})"

    def __sklearn_tags__(self):
        # Only scikit-learn calls this, so scikit-learn is importable whenever it runs.
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float64"]),
                    input_tags=InputTags(two_d_array=True, allow_nan=False),
                    non_deterministic=self.random_state is None)

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "delta": self.delta, "bounds": self.bounds, "clip": self.clip,
                "random_state": self.random_state, "accountant": self.accountant}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self.get_params():
                raise ValueError(f"invalid parameter {name!r} for PrivateStandardScaler")
            setattr(self, name, value)
        return self

    def fit(self, X, y=None):
        """Release the per-feature sums and sums of squares of ``X`` once; keep the means and scales."""
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        accountant = check_accountant(self.accountant, "PrivateStandardScaler")
        if isinstance(self.clip, bool) or not isinstance(self.clip, (int, float)) or not self.clip > 0 \
                or not math.isfinite(self.clip):
            raise ValueError(f"clip must be a finite number > 0, got {self.clip!r}")
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        if complex_dtype(X):
            raise ValueError("Complex data not supported")
        X = sklearn_feature_block(X, None, purpose="fit")
        n, d = X.shape
        lower, upper = _box(self.bounds, d)
        U = unit_range(X, lower, upper)
        sums = np.concatenate([U.sum(axis=0), (U * U).sum(axis=0)])
        sensitivity = scaler_sensitivity(d)
        sigma = gaussian_sigma(sensitivity, self.epsilon, self.delta, method="analytic")
        rho_budget = rho_from_dp(self.epsilon, self.delta, method="gaussian")
        event = GaussianRelease(sensitivity=sensitivity, sigma=sigma, round=n, rho=min(gaussian_rho(sensitivity, sigma),
                                rho_budget), what="per-feature sums and sums of squares")
        charge([accountant], [event])  # refused before the noise is drawn: nothing changes
        rng = np.random.Generator(np.random.PCG64(fit_seeds(self)))  # keyed by a shared accountant
        released = sums + sigma * rng.standard_normal(sums.size)
        mean, scale = moments_from_sums(n, released[:d], released[d:])
        # Fitted attributes only now: a failed fit leaves the scaler as it was.
        self.lower_, self.upper_ = lower, upper
        self.mean_, self.scale_ = mean, scale
        self.n_features_in_ = d
        self.output_bounds_ = (-float(self.clip), float(self.clip))
        self.privacy_report_ = build_report(
            "PrivateStandardScaler", [event], epsilon=self.epsilon, delta=self.delta, accounting="gaussian",
            mode="one release", n_seen=n, status=f"released once: one fit of {n} records", rho_budget=rho_budget,
            public={"sensitivity": sensitivity, "sigma": sigma},
            curator={"n_clipped": int(np.count_nonzero(np.any((X < lower) | (X > upper), axis=1)))})
        return self

    fit = recording_feature_names(fit)

    def transform(self, X):
        """Standardised records, clipped to ``output_bounds_``."""
        if not hasattr(self, "mean_"):
            raise not_fitted_error("this PrivateStandardScaler is not fitted yet: call fit(X) first")
        if hasattr(X, "tocsr") or hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported: pass a dense array (X.toarray())")
        X = fitted_feature_block(self, X, purpose="transform")
        return standardise(unit_range(X, self.lower_, self.upper_), self.mean_, self.scale_, float(self.clip))

    def fit_transform(self, X, y=None):
        return self.fit(X, y).transform(X)
