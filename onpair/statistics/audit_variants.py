"""The audits of the statistics family (presets of :mod:`onpair.audit`): the whole continual release
sequence read by its least-variance contrast for a change of the first record, the one release of
OffPairStats, and the deliberately broken variants (a mechanism built for too small a sensitivity), which
override this family's own hooks. ``build(epsilon, delta, n, d, bounds) -> make(seed_sequence)``."""

from __future__ import annotations

import math

import numpy as np

from ..core.audit_setup import int_seed, offline_release
from ..privacy.statistics_sensitivity import statistics_sensitivity
from .offline import OffPairStats
from .online import OnPairStats
from .released import ReleasedStatistics


#: Noise-only coordinates from which the release sequence's covariance over time is estimated.
CONTRAST_SAMPLES = 20_000


def release_contrast(mechanism, n: int, *, samples: int = CONTRAST_SAMPLES, seed: int = 0) -> np.ndarray:
    """Weights g (n,) with Σ g_t = 1 of the minimum-variance linear estimate, from the releases after
    records 1, …, n of the continual-release ``mechanism``, of a change in the **first** record.

    Replacing record 1 adds a_t·δv to the released sum after record t, with a_t = 1 for prefix sums,
    a_t = γ^{t−1} for the decayed sums of :class:`onpair.privacy.continual.DecayedBLT` (its ``workload_decay``),
    and for :class:`onpair.privacy.continual.BlockRelease` (its ``coefficient``) the sum of the completed blocks'
    public weights: the shift if record 1 were counted in every block, which is the first block's weight alone
    while only that block completes, and which a correct release does not make (any fixed test is valid; this
    one also sees a record leaked into later blocks' releases, a block's sum not reset);
    the releases r_t = S_t + N_t carry noise N that is independent across the k coordinates and has the same
    covariance Σ (n × n) over time in each. So h = Σ_t g_t·r_t with g ∝ Σ⁻¹a, scaled to gᵀa = 1, moves by
    exactly δv, with the least variance 1/(aᵀΣ⁻¹a) per coordinate of any such combination; a test on ⟨h, δv⟩
    is the Neyman–Pearson test of the whole release sequence. Σ is a public function of the mechanism's parameters (not of ε alone: of its
    kind, band, levels and epochs); it is estimated from ``samples`` noise-only coordinates of a twin of the
    mechanism fed zeros (relative error about 1/√samples, which costs power, not validity: any fixed test
    gives a valid bound).

    Examples
    --------
    >>> from onpair.privacy.continual import BandedToeplitz
    >>> g = release_contrast(BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0, band=1), 3)
    >>> bool(np.abs(g - [1.0, 0.0, 0.0]).max() < 0.05)   # band 1: r_t = S_t + Z_1 + … + Z_t: read r_1
    True
    >>> from onpair.privacy.continual import DecayedBLT
    >>> g = release_contrast(DecayedBLT(dim=1, sensitivity=1.0, rho=1.0, half_life=4.0), 5, samples=2000)
    >>> round(float(g @ 2.0 ** (-np.arange(5) / 4.0)), 12)   # unbiased for the decayed shift
    1.0
    """
    params = mechanism.get_params()
    rng = np.random.default_rng(seed)
    chunk = max(1, min(samples, (1 << 22) // max(n, 1)))
    covariance = np.zeros((n, n))
    done = 0
    while done < samples:
        width = min(chunk, samples - done)
        twin = type(mechanism)(**dict(params, dim=width))
        noise = twin.add_block(np.zeros((n, width)), rng, return_estimates=True)
        covariance += noise @ noise.T
        done += width
    if hasattr(mechanism, "coefficient"):
        # Blocks released once (BlockRelease): record 1 moves the release after t by the public weight of the
        # first block (0 until it completes). The test reads it as if record 1 were in **every** completed block
        # (a_t = Σ_{j<B(t)} w_j(t), each block's public weight), so that a release that leaks it into later
        # blocks is seen (``onpairstats-blocks-noreset``); while only the first block completes that is the same
        # a_t. The releases repeat inside a block (a singular Σ): the least-variance combination by the
        # pseudo-inverse over the releases that carry noise.
        shift = np.array([sum(mechanism.coefficient(t, j) for j in range(mechanism.completed(t)))
                          for t in range(1, n + 1)])
        if not np.any(shift):
            raise ValueError(f"no block of the mechanism completes within the audit's {n} records: nothing about "
                             "the first record is released, and no test can be built (audit a longer stream)")
        g = np.linalg.pinv(covariance / samples, rcond=1e-10, hermitian=True) @ shift
        return g / (g @ shift)
    shift = getattr(mechanism, "workload_decay", 1.0) ** np.arange(n, dtype=np.float64)
    g = np.linalg.solve(covariance / samples, shift)
    return g / (g @ shift)


def contrast_release(contrast):
    """The release read by the continual presets: the learner fed one record at a time, its released prefix
    estimate after every record (what it publishes; ``class_statistics()`` decodes it) combined by
    ``contrast`` into one k-vector (:func:`release_contrast`)."""

    def release(learner, X, y):
        total = None
        for i in range(X.shape[0]):
            learner.learn_one(X[i], y[i])
            step = contrast[i] * learner._stats.estimate()
            total = step if total is None else total + step
        return total

    return release


#: Weights of the ``onpairstats-moments`` presets: the second moments carry 99 % of Δ² = 2(a² + b² + m²),
#: so that the ``-m0`` variant's Δ (computed as if m were 0: 2b = 2) is 9.9× too small, as σ × 0.1.
MOMENT_WEIGHTS = (0.8, 1.0, 14.0)


def _never_reset(mechanism):
    """Break a :class:`onpair.privacy.continual.BlockRelease` (fresh share 0) on purpose: when a block is released
    its running sum is **not** reset, so block j releases the sum of every record so far (each record is released
    again in every later block) while the schedule, the weights, σ and the accounting stay those of the correct
    release. Patched on the instance, so that the learner's fused single-record path (which checks the type) runs
    as for the real release."""
    complete = mechanism._complete

    def _complete(z):
        pending = mechanism._current
        complete(z)
        mechanism._current = pending  # BROKEN: the released block's sum keeps counting

    mechanism._complete = _complete
    return mechanism


def onpairstats_class(kind):
    if kind is None:
        return OnPairStats
    if kind == "noreset":
        class _NoResetOnPairStats(OnPairStats):
            """Broken on purpose: ``mechanism="blocks"`` whose block sum is not reset after its release
            (:func:`_never_reset`); the accountant and the report still claim ε."""

            def _new_state(self, dim, rho=None):
                stats = super()._new_state(dim, rho)
                if stats.private:
                    _never_reset(stats.mechanism)
                return stats

        return _NoResetOnPairStats

    class _WrongSensitivityOnPairStats(OnPairStats):
        """Broken on purpose: the continual-release mechanism is built for a sensitivity below the proven
        Δ, 0.1·Δ ("noise0.1": every σ × 0.1), Δ computed as if the moment weight were 0 ("m0"), or Δ/κ
        ("kappa1": σ = Δκ/√(2ρ) becomes Δ/√(2ρ), the noise scale computed as if the factorisation's
        κ² = Σ c_n² were 1, everything else, its decays and the release path, unchanged); the accountant and
        the report still claim ε."""

        def _new_state(self, dim):
            stats = super()._new_state(dim)
            mechanism = stats.mechanism
            if not stats.private:
                return stats
            a, b, _ = self._weights
            if kind == "noise0.1":
                wrong = 0.1 * mechanism.sensitivity
            elif kind == "m0":
                wrong = statistics_sensitivity(a, b, 0.0)
            else:  # "kappa1", for the factorisations that report κ² (BufferedToeplitz, DecayedBLT)
                wrong = mechanism.sensitivity / math.sqrt(mechanism.kappa2)
            wrong_mechanism = type(mechanism)(**dict(mechanism.get_params(), sensitivity=wrong))
            return ReleasedStatistics(dim, self._n_classes, self._weights, wrong_mechanism, stats.pooled)

    return _WrongSensitivityOnPairStats


def onpairstats_setup(kind, mechanism="blt", task="auc", weights=None, half_life=None):
    """OnPairStats on :func:`onpair.audit.statistics_neighbouring_datasets`; the release is the contrast of its whole
    release sequence (:func:`release_contrast`), computed for the mechanism **as claimed** (the real
    learner's), so that the real preset and its broken variants are read by the same test."""

    def build(epsilon, delta, n, d, bounds):
        params = dict(epsilon=epsilon, delta=delta, bounds=bounds, n_features=d, mechanism=mechanism)
        if task in ("metric", "classify"):
            params.update(task=task, classes=[-1, 1])  # the classifier: one pooled second moment (its default)
        if weights is not None:
            params["weights"] = weights
        if half_life is not None:
            params["half_life"] = half_life
        claimed = OnPairStats(seed=0, **params)
        release = contrast_release(release_contrast(claimed._stats.mechanism, n))
        cls = onpairstats_class(kind)

        def make(seed_sequence):
            return cls(seed=int_seed(seed_sequence), **params), release

        return make

    return build


def offpairstats_setup(kind):
    """OffPairStats with ``model_type="centroid"`` on :func:`onpair.audit.neighbouring_datasets`. The release of the
    statistics is the same for every model type; the centroid μ₊ − μ₋ reads the released sums almost
    linearly (the canary's class count is floored at 2σ/a), while the square model saturates
    (w = A⁻¹d/(1 + dᵀA⁻¹d)) and hides part of the change: measured separation 0.96 against 0.85 at ε = 4,
    and 8.2 against 3.2 for σ × 0.1."""

    def build(epsilon, delta, n, d, bounds):
        cls = OffPairStats
        if kind == "noise0.1":
            class _NoiseScaledOffPairStats(OffPairStats):
                """Broken on purpose: σ calibrated to 0.1·Δ, i.e. σ × 0.1 (the report still claims ε)."""

                def _validate_params(self):
                    model, weights, sensitivity = super()._validate_params()
                    return model, weights, 0.1 * sensitivity

            cls = _NoiseScaledOffPairStats

        def make(seed_sequence):
            return cls(epsilon=epsilon, delta=delta, bounds=bounds, model_type="centroid",
                       random_state=seed_sequence), offline_release

        return make

    return build
