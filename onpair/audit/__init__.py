"""Empirical privacy audit: a statistically valid **lower bound** on the ε an implementation has.

The accounting in :mod:`onpair.privacy` gives an *upper* bound on ε (what is proven). An audit runs the
released mechanism many times on two neighbouring data sets D and D′ and measures how well a simple
test tells them apart. (ε, δ)-DP implies, for **every** test that says "D′" or "D",

    FPR + e^ε·FNR ≥ 1 − δ   and   FNR + e^ε·FPR ≥ 1 − δ,

with FPR = P(test says D′ | D) and FNR = P(test says D | D′) (Kairouz, Oh and Viswanath 2015). So

    ε ≥ ε_lower = max(0, log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺))

whenever FPR ≤ FPR⁺ and FNR ≤ FNR⁺ (Jagielski, Ullman and Oprea 2020; Nasr et al. 2021). Here FPR⁺ and
FNR⁺ are the upper ends of two-sided Clopper–Pearson intervals at the audit's ``confidence`` (each is a
one-sided bound at level 1 − (1 − confidence)/2, so by a union bound both hold together with
probability ≥ ``confidence``). An implementation that really is (ε, δ)-DP therefore shows
ε_lower > ε with probability at most 1 − ``confidence``; an ε_lower above the claim is evidence of a bug
(too little noise, an unpaid release, a sensitivity too small).

**How the test is chosen (statistical validity).** Each run reduces the released model to a scalar
statistic (by default ⟨model, u⟩ with u the canary's direction). The runs on each data set are split in
two halves: the threshold and the side of it that means "D′" are chosen on the first half (the candidate
with the largest ε estimate computed the same way), and FPR, FNR and their bounds are counted on the
second half only, with the test fixed. The Clopper–Pearson bounds are therefore exact for a test chosen
in advance; no multiple-comparison correction is needed, at the price of using half the runs.

**Neighbouring data (the canary).** :func:`neighbouring_datasets`: records in the public box [0, 1]^d
(mapped by :class:`onpair.core.bounds.FeatureBounds` onto [−1/√d, 1/√d]^d), D′ = D with its **last** record
replaced by the canary, the box corner (1, …, 1) (the mapped point u = (1, …, 1)/√d on the unit sphere)
with the rarer label (+1). The default ``data="adversarial"`` D puts every other record at the opposite
corner −u with label −1 and the replaced record at −u with label +1: in D every opposite-label pair has
x⁺ − x⁻ = 0 (no gradient, the model stays at its data-independent start), while in D′ the canary pairs
with all n − 1 other records at the domain's full diameter 2, so the change of the released model is as
large as the sensitivity analysis allows (up to the loss's 2/G(R), see below) and points along u.
``data="random"`` draws D uniformly in the box with about 30 % positives instead (a weaker, more typical
audit). For the online learners the canary is the last record, whose whole influence is one fresh step (the
ledger charges Γη_n for it); the offline estimators stream the data in their own random (public) order, so the canary's
position varies from run to run.

**Layout.** :mod:`onpair.audit.bound` (the Clopper–Pearson bounds, ε_lower and :func:`audit`),
:mod:`onpair.audit.datasets` (the canaries), :mod:`onpair.audit.presets` (the table of presets and
:func:`audit_algorithm`; each family sets up its own mechanisms and broken variants in
``<family>/audit_variants.py``) and :mod:`onpair.audit.command` (``onpair audit``).

**Presets** (:data:`PRESETS`, ``onpair audit ALGO``): ``onpairstrc``, ``onpairc`` (one release at n),
``offpairstrc``, ``offpairc`` (last iterate), ``gradient`` (Kang et al., T = 1), ``sgd`` (Yang et al.,
T = n), the ``reference`` Gaussian mechanism calibrated exactly to (ε, δ) on a sensitivity-1 query (what
this many runs typically show for a mechanism whose analysis is exactly tight), and three deliberately broken
variants: ``onpairstrc-noise0.1`` (every σ multiplied by 0.1 after planning), ``onpairstrc-internal``
(publishes the internal iterate, ``Iterate.w``), ``offpairstrc-noise0.1`` (the non-private twin plus 0.1·σ).
Their parameters are chosen for a strong audit: R = 0.01 with λ (or α) = G(R)/R for the Huai et al.
learners, so that G(R) = 4/(1 + e^(−0.04)) ≈ 2.04 is close to the largest per-pair gradient change the
canary can cause (2 at w = 0) and the regulariser dominates the loss's curvature (the ledger's
contraction factor is then exact); a single release (all of ρ on one Gaussian); n = 50, d = 2.

**The metric task** (``task="metric"``: a symmetric d×d matrix W, released with symmetric Gaussian noise
isotropic in the Frobenius norm). Presets ``onpairstrc-metric``, ``onpairc-metric``, ``offpairstrc-metric``,
``offpairc-metric``, ``gradient-metric`` (R = 0.01 there too), ``sgd-metric`` (Yang et al.'s hinge loss on
the PSD trace ball), and the broken ``onpairstrc-metric-noise0.1``, ``onpairstrc-metric-internal`` and
``offpairstrc-metric-noise0.1`` (built as their AUC twins). They run on
:func:`metric_neighbouring_datasets`: every record but the last at the corner (0, …, 0) with label −1,
so that their pairs have x − x' = 0 and no gradient (∇_W ℓ = ℓ'(h)·v vᵀ), and the last at the corner
(1, …, 1), with label −1 in D and +1 in D′. The n − 1 pairs of the last record flip from same-class to
different-class, which changes each pair gradient by exactly 4·u uᵀ (Frobenius norm 4, against the
loss's Γ ≈ 4.16 at R = 0.01), so the released W moves along u uᵀ by about 0.96 of the sensitivity the
implementation charges. The statistic is ⟨W, u uᵀ⟩_F, the released squared length of the canary's
direction u; the symmetric noise has variance σ² along the unit matrix u uᵀ, so the audit sees a Gaussian
shift of μ ≈ 0.96·Δ/σ, as for the AUC presets.

**The learners on released class statistics** (:class:`onpair.OnPairStats`, :class:`onpair.OffPairStats`).
Their release is the per-class counts, sums and second moments, v(z) = [a, b·x, m·vech(xxᵀ)] in the block
of the record's class; the models are post-processing. They run on :func:`statistics_neighbouring_datasets`,
whose canary is a label flip of the **first** record at the corner u: its contribution leaves the negative
class's block for the positive one's, ‖v(z′) − v(z)‖² = 2(a² + b² + m²) = Δ² (the different-label
supremum of :func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`: every block at full weight). A
continual release publishes a noisy prefix sum r_t after **every** record, so the presets read all of them,
not the model: each run feeds the records one at a time and combines the n releases by
:func:`release_contrast` (weights g ∝ Σ⁻¹𝟙, Σ the public covariance of the release noise over time) into
the least-variance estimate of the first record's change, a k-vector; its projection on the change (learnt
on the selection half, ``audit(statistic=None)``: the noise is isotropic across coordinates) is the
Neyman–Pearson test of the whole release sequence. The first record is the one the mechanisms charge most:
its encoder column is the longest (c₀, …, c_{n−1} of the banded factorisation, a node on every tree
level). At n = 50, d = 2 and ε = 4 this test can see μ = 0.91 for the banded Toeplitz factorisation (the
first record's column holds 50 of the band's 64 coefficients) and 0.77 for ``mechanism="epochs"`` (the
prefix estimates do not reveal every tree node), against the claim's √(2ρ) = 0.92; the last release alone, which the model is computed from, shows
only 0.39 and 0.27. Presets ``onpairstats`` (the default banded Toeplitz), ``onpairstats-epochs``,
``onpairstats-moments`` (weights :data:`MOMENT_WEIGHTS`, where the second moments carry 99 % of Δ²),
``onpairstats-metric`` (``task="metric"``, classes [−1, 1]: the same statistics of two classes),
``offpairstats`` (one release, read through ``model_type="centroid"``, almost linear in the released
sums, where the square model saturates), and the broken ``onpairstats-noise0.1``,
``onpairstats-epochs-noise0.1`` (the mechanism built for 0.1·Δ: every σ × 0.1),
``onpairstats-moments-m0`` (Δ computed as if the moment weight were 0: 2 instead of 19.88, σ × 0.10) and
``offpairstats-noise0.1`` (σ calibrated to 0.1·Δ); every broken variant's report still claims ε. The
contrast is computed for the mechanism as claimed, so a real preset and its broken variants are read by
the same test. The decayed sums (``half_life``): ``onpairstats-decayed`` (H = 8, κ² = 1.50) with the broken
``onpairstats-decayed-noise0.1``, and ``onpairstats-decayed-h4096`` (H = 4,096, κ² = Σ c_n² = 3.42) with the
broken ``onpairstats-decayed-h4096-kappa1`` (σ computed as if κ² were 1: σ × 0.54). This pair is audited at
its own claim (``Preset.claim``, what :func:`audit_algorithm` and ``onpair audit`` use unless told otherwise),
ε = 2, δ = 0.1, and the broken twin with its own 1,500 runs (``Preset.runs``): the 50 records reach
Σ_{n<50} c_n² = 2.31 of κ², so the bug shows 1.52 times the claim's μ, which at ε = 4, δ = 1e-5 no
affordable audit sees (ε_lower 2.62 with 5,000 runs); at (2, 0.1) it is caught (3.15, against 1.02 for the
correct mechanism and 1.45 for the exactly tight ``reference``). The block release's broken
``onpairstats-blocks-noreset`` and ``onpairstats-blocks-decayed-noreset`` (a block's sum not reset after its
release: each record released again in every later block) stream their own ``Preset.n`` (480 and 128
records: 4 blocks) at (2, 0.1); the contrast of a block release reads every completed block.

What these canaries cannot catch: a bug that moves σ by less than about a factor 3 at ε = 4. At the
default weights (0.8, 1, 0.6), Δ = 2b whatever m, so "Δ as if m = 0" is harmless there (hence the
``-moments`` presets). One tree level missing from the accounting (κ² = L − 1: σ × 0.93, real ε 4.37)
measured ε_lower 0.86, and the factorisation charged as if κ = 1 (σ × 0.65, real ε 6.66) 2.52, both with
5,000 runs: a Gaussian mechanism's privacy loss reaches ε only in tails that a few thousand runs do not
sample (the ``reference`` preset shows about 1.4 of an exact 4). A kernel that draws no noise for one tree
level leaves most releases noisy, and the contrast, designed for the claimed noise, gains little from it
(measured separation 0.76 with 1,000 runs, against μ = 0.77 for the correct mechanism); a test on the first
release alone would see it, but a preset fixes its test before the runs and keeps the one that is optimal
for the mechanism as claimed.

What limits the audit's strength: with N evaluation runs per data set and no error at all, FPR⁺ = FNR⁺ =
1 − (α/2)^(1/N) ≈ log(2/α)/N, so ε_lower ≤ log(N/log(2/α)) (≈ 4.9 for N = 500, 6.5 for N = 2,500); and
a Gaussian mechanism's privacy loss reaches ε only in far tails that N runs do not sample, so even an
exactly tight mechanism (the ``reference`` preset) shows only a fraction of its ε (about 1 to 1.5 of
ε = 4 at δ = 1e-5 with 1,000 to 5,000 runs per data set; almost nothing at ε = 1). Yang et al.'s σ is
calibrated to a high-probability sensitivity over 100 times the actual influence of one record, so
that audit finds nothing.

Examples
--------
>>> lo, hi = clopper_pearson(0, 10)
>>> lo, round(hi, 4)                     # 1 − 0.025^(1/10)
(0.0, 0.3085)
>>> round(epsilon_lower_bound(0.01, 0.5, delta=0.0), 4)   # log(0.5/0.01)
3.912
"""

from .bound import (DATA_KINDS, DEFAULT_D, DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_N, AuditResult, audit,
                    clopper_pearson, epsilon_lower_bound)
from .command import add_arguments, main, run_from_args
from .datasets import (classifier_neighbouring_datasets, metric_neighbouring_datasets, neighbouring_datasets,
                       statistics_neighbouring_datasets)
from .presets import PRESETS, Preset, audit_algorithm
from ..statistics.audit_variants import CONTRAST_SAMPLES, MOMENT_WEIGHTS, release_contrast

__all__ = [
    "AuditResult", "audit", "audit_algorithm", "clopper_pearson", "epsilon_lower_bound",
    "neighbouring_datasets", "metric_neighbouring_datasets", "statistics_neighbouring_datasets",
    "classifier_neighbouring_datasets",
    "release_contrast", "PRESETS", "main", "add_arguments", "run_from_args",
]
