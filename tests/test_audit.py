"""The empirical privacy audit (onpair.audit): its statistics against hand-computed values and scipy, its
validity on mechanisms whose ε is known exactly, and the audit of every private algorithm (ε_lower stays
below the claim at 95 % confidence) and of deliberately broken variants (caught: ε_lower above the claim).

Expected values come from closed forms (Beta quantiles that invert by hand, the randomized-response
trade-off), never from the code under test. Every audit uses fixed seeds, so the suite is deterministic.
"""

import json
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from tiers import by_tier

from onpair.audit import (MOMENT_WEIGHTS, PRESETS, AuditResult, audit, audit_algorithm, clopper_pearson,
                          epsilon_lower_bound, main, metric_neighbouring_datasets, neighbouring_datasets,
                          release_contrast, statistics_neighbouring_datasets)

#: Runs per data set in the full tier: 500 choose the test, 500 evaluate it.
RUNS_FULL = 1000
#: The continual-release presets feed n records one at a time and read n releases per run (about 3 ms, ten
#: times a one-release run): 600 runs, 300 to evaluate, whose ceiling log(300/3.69 − 1) = 4.39 still lies
#: above the claim, so a broken variant without a single error is caught.
RUNS_CONTINUAL = 600
#: The fast tier's runs (every preset it audits, FAST_AUDITS): 250 to evaluate, whose ceiling
#: log(250/3.69 − 1) = 4.20 still lies above the claim of 4, so a broken variant that the audit separates without
#: an error is still caught (test_the_fast_tier_can_still_catch_a_broken_variant); a preset's own runs stay.
RUNS_FAST = 500


#: The presets the fast tier audits: every private public class once, and a broken variant of each kind of
#: mechanism (noise on the output, the internal iterate released, continual and offline statistics, objective
#: perturbation, the metric task). The full tier audits every preset.
FAST_AUDITS = {"onpairstrc", "onpairc", "offpairstrc", "offpairc", "gradient", "sgd", "onpairstats", "offpairstats",
               "objpert", "amp", "onpairstrc-metric",
               "onpairstrc-noise0.1", "onpairstrc-internal", "offpairstrc-noise0.1", "onpairstats-noise0.1",
               "offpairstats-noise0.1", "objpert-noise0.05", "onpairstrc-metric-noise0.1",
               "onpairstats-blocks-decayed-noreset"}  # a record leaked into later releases (128 records, about 2 s)


def tiered(names, fast=FAST_AUDITS):
    """``names`` as parameters, those not in ``fast`` marked slow (the full tier's only)."""
    return [name if name in fast else pytest.param(name, marks=pytest.mark.slow) for name in names]


def runs_for(name):
    """A preset's own runs (a broken variant whose bug is small for its claim), else the suite's."""
    return PRESETS[name].runs or by_tier(fast=RUNS_FAST,
                                         full=RUNS_CONTINUAL if PRESETS[name].datasets is not None else RUNS_FULL)


CLAIM = 4.0
DELTA = 1e-5


# -- Clopper–Pearson --------------------------------------------------------------------------------
def test_clopper_pearson_hand_computed():
    # k = 0: the upper end solves (1 − p)^n = α/2; k = n: the lower end solves p^n = α/2.
    lo, hi = clopper_pearson(0, 10, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** 0.1, rel=1e-12)
    lo, hi = clopper_pearson(10, 10, 0.95)
    assert lo == pytest.approx(0.025 ** 0.1, rel=1e-12) and hi == 1.0
    # k = 1, n = 2: Beta(1, 2) has CDF 1 − (1 − x)², Beta(2, 1) has CDF x².
    lo, hi = clopper_pearson(1, 2, 0.95)
    assert lo == pytest.approx(1 - math.sqrt(0.975), rel=1e-10)
    assert hi == pytest.approx(math.sqrt(0.975), rel=1e-12)
    # One-sided: all of α in one tail.
    assert clopper_pearson(0, 20, 0.95, "less") == pytest.approx((0.0, 1 - 0.05 ** (1 / 20)), rel=1e-12)
    assert clopper_pearson(20, 20, 0.9, "greater") == pytest.approx((0.1 ** (1 / 20), 1.0), rel=1e-12)


@pytest.mark.parametrize("k,n", [(0, 1), (0, 7), (3, 7), (7, 7), (1, 500), (250, 500), (499, 500), (12, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_clopper_pearson_matches_scipy_binomtest(k, n, confidence, alternative):
    ci = binomtest(k, n, alternative=alternative).proportion_ci(confidence_level=confidence, method="exact")
    lo, hi = clopper_pearson(k, n, confidence, alternative)
    assert lo == pytest.approx(ci.low, abs=1e-12) and hi == pytest.approx(ci.high, abs=1e-12)


@pytest.mark.parametrize("args", [(-1, 5), (6, 5), (0, 0), (1.5, 5), (True, 5)])
def test_clopper_pearson_rejects_bad_counts(args):
    with pytest.raises(ValueError):
        clopper_pearson(*args)


def test_clopper_pearson_rejects_bad_confidence_and_alternative():
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 5, 1.0)
    with pytest.raises(ValueError, match="alternative"):
        clopper_pearson(1, 5, 0.95, "both")


# -- the ε_lower formula ----------------------------------------------------------------------------
def test_epsilon_lower_bound_hand_made_example():
    # FPR⁺ = 0.01, FNR⁺ = 0.5: log(0.5/0.01) beats log(0.99/0.5), with δ = 0 and with δ = 0.1.
    assert epsilon_lower_bound(0.01, 0.5, 0.0) == pytest.approx(math.log(50.0), rel=1e-12)
    assert epsilon_lower_bound(0.01, 0.5, 0.1) == pytest.approx(math.log(40.0), rel=1e-12)
    # Symmetric in the two error types.
    assert epsilon_lower_bound(0.5, 0.01, 0.1) == pytest.approx(math.log(40.0), rel=1e-12)
    # Equal errors: log((1 − δ − p)/p).
    assert epsilon_lower_bound(0.2, 0.2, 1e-5) == pytest.approx(math.log((0.8 - 1e-5) / 0.2), rel=1e-12)
    # A test no better than chance proves nothing; a useless one (1 − δ − FNR⁺ ≤ 0) neither.
    assert epsilon_lower_bound(0.5, 0.5, 0.0) == 0.0
    assert epsilon_lower_bound(0.7, 0.6, 0.0) == 0.0
    assert epsilon_lower_bound(1.0, 1.0, 0.0) == 0.0


def test_epsilon_lower_bound_is_consistent_with_dp_inequalities():
    # For the exact trade-off of randomized response at ε (FPR = FNR = 1/(1 + e^ε), δ = 0), the bound
    # recovers ε: the DP inequality FPR + e^ε·FNR ≥ 1 is tight there.
    for eps in (0.1, 1.0, 3.0):
        p = 1.0 / (1.0 + math.exp(eps))
        assert epsilon_lower_bound(p, p, 0.0) == pytest.approx(eps, rel=1e-10)


# -- the audit on mechanisms with a known ε ---------------------------------------------------------
D_TOY = (np.zeros((1, 1)), np.array([-1]))
D_TOY_PRIME = (np.ones((1, 1)), np.array([1]))


def _randomized_response(eps):
    """ε-DP (δ = 0) and tight: the bit x[0] is kept with probability e^ε/(1 + e^ε)."""
    keep = math.exp(eps) / (1.0 + math.exp(eps))

    def make(seed_sequence):
        rng = np.random.default_rng(seed_sequence)
        return None, lambda _, X, y: np.array([X[0, 0] if rng.uniform() < keep else 1.0 - X[0, 0]])

    return make


def _clopper_pearson_zero_upper(n, confidence=0.95):
    return 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / n)


def test_audit_of_deterministic_mechanism_reaches_its_ceiling():
    # Releasing the data itself: no errors at all, so ε_lower = log((1 − δ − u)/u) with u the
    # Clopper–Pearson upper end of 0 errors out of the evaluation runs.
    runs = 400
    result = audit(lambda ss: (None, lambda _, X, y: X[0].copy()), D_TOY, D_TOY_PRIME, runs=runs,
                   statistic=np.ones(1), delta=DELTA, claimed_epsilon=1.0, seed=3)
    u = _clopper_pearson_zero_upper(runs // 2)
    assert result.false_positives == result.false_negatives == 0
    assert result.evaluation_runs == runs // 2
    assert result.epsilon_lower == pytest.approx(math.log((1.0 - DELTA - u) / u), rel=1e-9)
    assert result.caught and 0.0 < result.threshold < 1.0 and result.rule == ">"


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_audit_of_randomized_response_is_valid_and_close(eps):
    result = audit(_randomized_response(eps), D_TOY, D_TOY_PRIME, runs=4000, statistic=lambda m: m[0],
                   delta=0.0, claimed_epsilon=eps, seed=11)
    assert result.epsilon_lower <= eps  # valid (at 95 % confidence; fixed seed)
    assert result.epsilon_lower >= 0.6 * eps  # and an exactly tight mechanism is audited closely
    # FPR and FNR are counted on the evaluation half only and are near 1/(1 + e^ε).
    assert result.fpr == result.false_positives / result.evaluation_runs
    assert result.fpr == pytest.approx(1 / (1 + math.exp(eps)), abs=0.04)
    assert result.fnr == pytest.approx(1 / (1 + math.exp(eps)), abs=0.04)
    assert result.fpr_upper == pytest.approx(
        binomtest(result.false_positives, result.evaluation_runs).proportion_ci(0.95, "exact").high, abs=1e-12)


def test_audit_of_data_independent_mechanism_finds_nothing():
    def make(seed_sequence):
        rng = np.random.default_rng(seed_sequence)
        return None, lambda _, X, y: rng.standard_normal(3)

    result = audit(make, D_TOY, D_TOY_PRIME, runs=600, delta=DELTA, claimed_epsilon=0.1, seed=0)
    assert result.epsilon_lower <= 0.1  # statistic=None: a direction learnt on the selection half


def test_audit_gives_every_run_its_own_seed_and_is_reproducible():
    seen = []

    def make(seed_sequence):
        seen.append((tuple(seed_sequence.spawn_key), seed_sequence.entropy))
        rng = np.random.default_rng(seed_sequence)
        return None, lambda _, X, y: X[0] + rng.standard_normal(1)

    first = audit(make, D_TOY, D_TOY_PRIME, runs=50, statistic=np.ones(1), delta=DELTA, claimed_epsilon=1.0)
    assert len(seen) == 100 and len(set(seen)) == 100
    assert len({entropy for _, entropy in seen}) == 1  # children of one SeedSequence
    second = audit(make, D_TOY, D_TOY_PRIME, runs=50, statistic=np.ones(1), delta=DELTA, claimed_epsilon=1.0)
    assert first == second


@pytest.mark.parametrize("kwargs", [dict(runs=1), dict(runs=2.5), dict(confidence=1.0), dict(delta=1.0),
                                    dict(seed=-1), dict(selection_fraction=0.0)])
def test_audit_rejects_bad_arguments(kwargs):
    params = dict(runs=10, delta=DELTA, claimed_epsilon=1.0, statistic=np.ones(1))
    params.update(kwargs)
    with pytest.raises(ValueError):
        audit(lambda ss: (None, lambda _, X, y: X[0]), D_TOY, D_TOY_PRIME, **params)


# -- neighbouring data sets -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["adversarial", "random"])
def test_neighbouring_datasets_differ_in_the_last_record_only(kind):
    (X, y), (X2, y2), bounds, u = neighbouring_datasets(40, 3, kind=kind)
    assert X.shape == X2.shape == (40, 3)
    assert np.array_equal(X[:-1], X2[:-1]) and np.array_equal(y[:-1], y2[:-1])
    assert np.array_equal(X2[-1], np.ones(3)) and y2[-1] == 1  # the canary: the box corner, label +1
    assert np.count_nonzero(y2 == 1) < np.count_nonzero(y2 == -1)  # +1 is the rarer label
    assert np.linalg.norm(u) == pytest.approx(1.0) and bounds == (0.0, 1.0)
    assert set(np.unique(y)) == {-1, 1}  # both data sets have two classes (the estimators need them)


# -- the presets: real algorithms stay below their claim, broken ones are caught ---------------------
REAL = [name for name, preset in PRESETS.items() if not preset.broken]
BROKEN = [name for name, preset in PRESETS.items() if preset.broken]


def test_presets_cover_every_private_algorithm():
    assert {"onpairstrc", "onpairc", "offpairstrc", "offpairc", "gradient", "sgd"} <= set(REAL)
    assert {"onpairstrc-noise0.1", "onpairstrc-internal", "offpairstrc-noise0.1"} <= set(BROKEN)
    assert {"objpert", "objpert-pairwise", "amp", "amp-pairwise"} <= set(REAL)
    assert {"objpert-noise0.05", "objpert-pairwise-noise0.05"} <= set(BROKEN)


@pytest.mark.parametrize("name", ["objpert", "objpert-pairwise"])
def test_objective_presets_read_the_privacy_loss_whose_means_are_the_two_divergences(name):
    # The release is log p_D(θ) − log p_D′(θ) of the mechanism as claimed: its mean is KL(D‖D′) ≥ 0 under D
    # and −KL(D′‖D) ≤ 0 under D′, each well inside the claim's ε (a sign or scale error breaks this). Over
    # 300 seeds (100 in the fast tier).
    D, D_prime, bounds, _ = neighbouring_datasets(20, 2)
    make = PRESETS[name].build(CLAIM, DELTA, 20, 2, bounds, neighbours=(D, D_prime))
    means = []
    for data in (D, D_prime):
        values = [release(mechanism, *data)[0] for mechanism, release in
                  (make(np.random.SeedSequence([s, 3])) for s in range(by_tier(fast=100, full=300)))]
        means.append(np.mean(values))
    assert means[0] > 0.005 and means[1] < -0.005
    assert means[0] < CLAIM and -means[1] < CLAIM


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("name", tiered(REAL))
def test_private_algorithm_audit_stays_below_the_claim(name):
    claim, delta = PRESETS[name].claim  # (4, 1e-5) but for a preset audited at its own claim
    result = audit_algorithm(name, runs=runs_for(name), epsilon=claim, delta=delta, seed=0)
    assert isinstance(result, AuditResult) and result.runs == runs_for(name)
    assert result.claimed_epsilon == claim and result.delta == delta
    assert result.epsilon_lower <= claim and not result.caught
    if name != "sgd" and "epsilon_spent" in result.details:
        # The implementation's own accounting claims at most ε for what was released.
        assert result.details["epsilon_spent"] <= claim * (1 + 1e-9)


# The power checks need the full tier's runs (ε_lower > 0.3 is not reached at 500); the fast tier runs one each.
@pytest.mark.parametrize("name", tiered(["onpairstrc", "offpairstrc", "gradient", "offpairstats"], fast={"gradient"}))
def test_audit_has_power_on_real_algorithms(name):
    # The canary must actually move the released model: a strong audit sees a clear shift along u (the
    # claim at ε = 4 is μ ≈ 0.92 in Gaussian-DP units) and a positive ε_lower.
    result = audit_algorithm(name, runs=RUNS_FULL, epsilon=CLAIM, delta=DELTA, seed=1)
    assert result.details["separation"] > 0.6
    assert result.epsilon_lower > 0.3


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("name", tiered(BROKEN))
def test_broken_variant_is_caught(name):
    claim, delta = PRESETS[name].claim
    result = audit_algorithm(name, runs=runs_for(name), epsilon=claim, delta=delta, seed=0)
    assert result.epsilon_lower > claim and result.caught


@pytest.mark.parametrize("runs", sorted({RUNS_FAST, RUNS_CONTINUAL, RUNS_FULL}))
def test_the_fast_tier_can_still_catch_a_broken_variant(runs):
    # A broken variant is caught when ε_lower exceeds the claim; with no error among the evaluation runs,
    # ε_lower is log((1 − δ − u)/u), u the Clopper–Pearson upper end of 0 errors (the audit's ceiling). Every
    # size the suite audits at, the fast tier's included, must have its ceiling above the claim.
    u = _clopper_pearson_zero_upper(runs // 2)
    assert math.log((1.0 - DELTA - u) / u) > CLAIM
    assert epsilon_lower_bound(u, u, DELTA) > CLAIM


def test_presets_claim_4_at_1e5_unless_they_say_why():
    # Every preset is audited at (ε, δ) = (4, 1e-5) but the long-half-life decayed pair, whose bug (σ × 0.54)
    # no affordable audit sees at that claim; a preset's own runs are for a broken variant only.
    own = {name for name, preset in PRESETS.items() if preset.claim != (CLAIM, DELTA)}
    assert own == {"onpairstats-decayed-h4096", "onpairstats-decayed-h4096-kappa1", "onpairstats-blocks-noreset",
                   "onpairstats-blocks-decayed-noreset"}
    assert PRESETS["onpairstats-decayed-h4096"].claim == (2.0, 0.1)
    assert all(PRESETS[name].broken for name, preset in PRESETS.items() if preset.runs is not None)


def test_audit_algorithm_defaults_to_the_preset_claim_and_runs(monkeypatch):
    import dataclasses

    from onpair.audit import presets

    monkeypatch.setitem(presets.PRESETS, "reference",
                        dataclasses.replace(PRESETS["reference"], claim=(1.5, 1e-3), runs=30))
    result = audit_algorithm("reference")
    assert (result.claimed_epsilon, result.delta, result.runs) == (1.5, 1e-3, 30)
    result = audit_algorithm("reference", runs=20, epsilon=3.0, delta=1e-6)  # given values win
    assert (result.claimed_epsilon, result.delta, result.runs) == (3.0, 1e-6, 20)


def test_audit_algorithm_rejects_unknown_names_and_bad_parameters():
    with pytest.raises(ValueError, match="unknown algorithm"):
        audit_algorithm("nope")
    with pytest.raises(ValueError, match="epsilon"):
        audit_algorithm("onpairstrc", epsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        audit_algorithm("onpairstrc", delta=1.5)


# -- command line -----------------------------------------------------------------------------------
def test_cli_json_catches_the_internal_iterate(capsys):
    assert main(["onpairstrc-internal", "--runs", "100", "--epsilon", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 50 evaluation runs, no error: ε_lower = log((1 − δ − u)/u), u = 1 − 0.025^(1/50).
    u = _clopper_pearson_zero_upper(50)
    assert out["epsilon_lower"] == pytest.approx(math.log((1 - 1e-5 - u) / u), rel=1e-9)
    assert out["caught"] is True and out["claimed_epsilon"] == 1.0 and out["runs"] == 100


def test_cli_text_and_errors(capsys):
    assert main(["reference", "--runs", "200", "--epsilon", "2", "--delta", "1e-6", "--seed", "5"]) == 0
    text = capsys.readouterr().out
    assert "epsilon_lower" in text and "consistent with the claim" in text
    assert main(["onpairstrc", "--runs", "1"]) == 1
    assert "runs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["no-such-algorithm"])


# -- the metric task ---------------------------------------------------------------------------------
METRIC = [name for name, preset in PRESETS.items() if preset.task == "metric"]


def _sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def test_presets_cover_the_metric_task():
    assert {"onpairstrc-metric", "onpairc-metric", "offpairstrc-metric", "offpairc-metric", "gradient-metric",
            "sgd-metric"} <= set(METRIC) & set(REAL)
    assert {"onpairstrc-metric-noise0.1", "onpairstrc-metric-internal", "offpairstrc-metric-noise0.1"} \
        <= set(METRIC) & set(BROKEN)
    assert all(PRESETS[name].task == "auc" for name in ("onpairstrc", "gradient", "reference", "onpairstrc-noise0.1"))


@pytest.mark.parametrize("kind", ["adversarial", "random"])
def test_metric_neighbouring_datasets_differ_in_the_last_record_only(kind):
    (X, y), (X2, y2), bounds, U = metric_neighbouring_datasets(40, 3, kind=kind)
    assert X.shape == X2.shape == (40, 3) and bounds == (0.0, 1.0)
    assert np.array_equal(X[:-1], X2[:-1]) and np.array_equal(y[:-1], y2[:-1])
    assert np.array_equal(X2[-1], np.ones(3)) and y2[-1] == 1  # the canary: the box corner, label +1
    assert not (np.array_equal(X[-1], X2[-1]) and y[-1] == y2[-1])
    # U = u uᵀ with u = (1, 1, 1)/√3: symmetric, unit Frobenius norm.
    assert np.allclose(U, np.full((3, 3), 1.0 / 3.0), rtol=1e-15) and np.linalg.norm(U) == pytest.approx(1.0)


def test_metric_adversarial_data_only_the_label_of_the_last_record_changes():
    (X, y), (X2, y2), _, _ = metric_neighbouring_datasets(6, 2)
    # Every other record is one point (no gradient among them); the last one keeps its corner and flips
    # from the others' class to a new one.
    assert np.array_equal(X, X2) and np.all(X[:-1] == 0.0) and np.all(X[-1] == 1.0)
    assert y.tolist() == [-1] * 6 and y2.tolist() == [-1] * 5 + [1]


def test_metric_canary_moves_w_by_the_hand_computed_amount_within_the_sensitivity():
    # The internal (noise-free) iterate of OnPairStrC: W stays at the centre until round n, where the last
    # record's n − 1 pair gradients change by (σ(h − 1) + σ(1 − h))·4 u uᵀ = 4 u uᵀ. So W′ − W = 4η_n u uᵀ,
    # η_n = 2(n − 1)/((n − 2)λn), λ = G(R)/R, G(R) = 4σ(1 + 4R).
    n, R = 50, 0.01
    D, D_prime, bounds, U = metric_neighbouring_datasets(n, 2)
    make = PRESETS["onpairstrc-metric-internal"].build(CLAIM, DELTA, n, 2, bounds)
    released = []
    for data in (D, D_prime):
        learner, release = make(np.random.SeedSequence(0))
        released.append(np.asarray(release(learner, *data)).reshape(2, 2))
    lam = 4.0 * _sigmoid(1.0 + 4.0 * R) / R
    step = 2.0 * (n - 1) / ((n - 2) * lam * n)
    assert released[1] - released[0] == pytest.approx(4.0 * step * U, rel=1e-9, abs=1e-15)
    # The sensitivity the learner charges covers the change, and the canary nearly reaches it.
    sensitivity = learner.privacy_report()["releases"][-1]["sensitivity"]
    change = np.linalg.norm(released[1] - released[0])
    assert change <= sensitivity <= 1.1 * change


def test_metric_gradient_canary_matches_the_hand_computed_gradient_change():
    # One full-batch step from the public W₀: the last record's n − 1 pairs (of n(n − 1)/2, averaged)
    # change the gradient by (2/(n(n − 1)))·(n − 1)·4 u uᵀ = (8/n) u uᵀ, against Δ = 2Γ/n.
    from onpair.estimators import GradientPerturbedGD

    n, R = 50, 0.01
    D, D_prime, bounds, U = metric_neighbouring_datasets(n, 2)
    params = dict(epsilon=CLAIM, delta=DELTA, bounds=bounds, radius=R, T=1, task="metric", threshold=1.0,
                  pair_weights=None)
    W = GradientPerturbedGD(private=False, **params).fit(*D).coef_
    W_prime = GradientPerturbedGD(private=False, **params).fit(*D_prime).coef_
    step = R / (4.0 * _sigmoid(1.0 + 4.0 * R))  # R/(G(R) + λR), λ = 0
    assert W_prime - W == pytest.approx(step * 8.0 / n * U, rel=1e-9, abs=1e-15)
    sensitivity = GradientPerturbedGD(random_state=0, **params).fit(*D_prime).privacy_report_["releases"][0][
        "sensitivity"]
    assert 8.0 / n <= sensitivity <= 1.1 * 8.0 / n


@pytest.mark.parametrize("name", [name for name in METRIC if PRESETS[name].datasets is None])
def test_metric_presets_release_symmetric_matrices(name):
    D, D_prime, bounds, _ = metric_neighbouring_datasets(10, 3)
    mechanism, release = PRESETS[name].build(CLAIM, DELTA, 10, 3, bounds)(np.random.SeedSequence(1))
    W = np.asarray(release(mechanism, *D_prime)).reshape(3, 3)
    assert np.all(np.isfinite(W)) and np.array_equal(W, W.T)


@pytest.mark.parametrize("name", tiered(["onpairstrc-metric", "offpairstrc-metric", "gradient-metric"],
                                        fast={"gradient-metric"}))
def test_audit_has_power_on_metric_algorithms(name):
    # As for the AUC task: the canary shifts ⟨W, u uᵀ⟩_F by about 0.96 of the charged sensitivity
    # (μ ≈ 0.89 of the claim's 0.92 at ε = 4), and ε_lower is clearly positive.
    result = audit_algorithm(name, runs=RUNS_FULL, epsilon=CLAIM, delta=DELTA, seed=1)
    assert result.details["separation"] > 0.6
    assert result.epsilon_lower > 0.3


def test_cli_audits_metric_presets(capsys):
    assert main(["onpairstrc-metric-internal", "--runs", "100", "--epsilon", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    u = _clopper_pearson_zero_upper(50)
    assert out["epsilon_lower"] == pytest.approx(math.log((1 - 1e-5 - u) / u), rel=1e-9)
    assert out["caught"] is True and out["algorithm"] == "onpairstrc-metric-internal"
    assert main(["gradient-metric", "--runs", "100", "--d", "3"]) == 0
    text = capsys.readouterr().out
    assert "task='metric'" in text and "consistent with the claim" in text


# -- the learners on released class statistics -------------------------------------------------------------
CONTINUAL = [name for name, preset in PRESETS.items() if preset.datasets is not None]


def test_presets_cover_the_learners_on_released_statistics():
    assert {"onpairstats", "onpairstats-toeplitz", "onpairstats-epochs", "onpairstats-moments", "onpairstats-metric",
            "offpairstats"} <= set(REAL)
    assert {"onpairstats-noise0.1", "onpairstats-toeplitz-noise0.1", "onpairstats-epochs-noise0.1",
            "onpairstats-moments-m0", "offpairstats-noise0.1"} <= set(BROKEN)
    assert {"onpairstats-decayed", "onpairstats-decayed-h4096"} <= set(REAL)
    assert {"onpairstats-decayed-noise0.1", "onpairstats-decayed-h4096-kappa1"} <= set(BROKEN)
    assert "onpairstats-blocks-decayed" in REAL and "onpairstats-blocks-decayed-noise0.1" in BROKEN
    assert set(CONTINUAL) == {name for name in PRESETS if name.startswith("onpairstats")}
    assert PRESETS["onpairstats-metric"].task == "metric"


@pytest.mark.parametrize("kind", ["adversarial", "random"])
def test_statistics_neighbouring_datasets_differ_in_the_first_record_only(kind):
    (X, y), (X2, y2), bounds, u = statistics_neighbouring_datasets(40, 3, kind=kind)
    assert X.shape == X2.shape == (40, 3) and bounds == (0.0, 1.0)
    assert np.array_equal(X[1:], X2[1:]) and np.array_equal(y[1:], y2[1:])
    assert np.array_equal(X2[0], np.ones(3)) and y2[0] == 1  # the canary: the box corner, label +1
    assert not (np.array_equal(X[0], X2[0]) and y[0] == y2[0])
    assert set(np.unique(y[1:])) == {-1, 1} and np.linalg.norm(u) == pytest.approx(1.0)
    if kind == "adversarial":  # only the canary's label differs
        assert np.array_equal(X, X2) and y[0] == -1


@pytest.mark.parametrize("weights", [(0.8, 1.0, 0.6), MOMENT_WEIGHTS])
def test_statistics_canary_moves_the_released_statistics_by_the_full_sensitivity(weights):
    # The exact sums (the non-private twin) on D and D′ differ by the canary's contribution moving from the
    # negative block to the positive one: [a, b·u, m·vech(uuᵀ)] with u = (1, 1)/√2, vech(uuᵀ) = (½, √2·½, ½)
    # (off-diagonal × √2). Its norm² is 2(a² + b² + m²), the different-label supremum: Δ itself.
    from onpair import OnPairStats
    from onpair.privacy.statistics_sensitivity import statistics_sensitivity

    D, D_prime, bounds, _ = statistics_neighbouring_datasets(50, 2)
    sums = [OnPairStats(private=False, bounds=bounds, weights=weights).learn_many(*data)._stats.estimate()
            for data in (D, D_prime)]
    a, b, m = weights
    r = 1.0 / math.sqrt(2.0)
    block = np.array([a, b * r, b * r, 0.5 * m, math.sqrt(2.0) * 0.5 * m, 0.5 * m])
    change = sums[1] - sums[0]
    assert change == pytest.approx(np.concatenate([-block, block]), abs=1e-12)
    assert np.linalg.norm(change) == pytest.approx(statistics_sensitivity(*weights), rel=1e-12)
    assert statistics_sensitivity(*weights) == pytest.approx(math.sqrt(2 * (a * a + b * b + m * m)), rel=1e-12)


def test_the_moment_variant_computes_a_sensitivity_ten_times_too_small():
    # What the broken onpairstats-moments-m0 charges: Δ with m = 0 is max(√(2a² + 2b²), 2b) = 2, against
    # √(2(0.64 + 1 + 196)) = 19.88 for the weights it runs with; at the default weights Δ = 2b either way,
    # so the same bug costs nothing there (and no audit could see it).
    from onpair.privacy.statistics_sensitivity import statistics_sensitivity

    a, b, m = MOMENT_WEIGHTS
    assert statistics_sensitivity(a, b, 0.0) == pytest.approx(2.0)
    assert statistics_sensitivity(a, b, m) / statistics_sensitivity(a, b, 0.0) == pytest.approx(9.94, abs=0.01)
    assert statistics_sensitivity(0.8, 1.0, 0.0) == statistics_sensitivity(0.8, 1.0, 0.6) == 2.0


def test_release_contrast_matches_the_closed_form_and_sees_the_claimed_mu():
    # BandedToeplitz releases S + A·C⁻¹·σZ (A: the prefix-sum matrix, C: lower-triangular Toeplitz with
    # c_j = C(2j, j)/4^j for j < band), so the release noise has covariance Σ = σ²·(AC⁻¹)(AC⁻¹)ᵀ over time.
    # The contrast g ∝ Σ⁻¹𝟙 estimates a change of the first record with variance 1/(𝟙ᵀΣ⁻¹𝟙) = σ²/‖Ce₁‖², and
    # ‖Ce₁‖² = κ² once the band fits in the stream: the test sees μ = Δκ/σ = √(2ρ), the claim's own μ.
    from onpair.privacy import rho_from_dp
    from onpair.privacy.continual import BandedToeplitz

    n, band, sensitivity = 40, 16, 2.0
    rho = rho_from_dp(CLAIM, DELTA, method="gaussian")
    mechanism = BandedToeplitz(dim=1, sensitivity=sensitivity, rho=rho, band=band)
    sigma = mechanism.describe()["sigma"]
    c = np.array([math.comb(2 * j, j) / 4.0 ** j for j in range(band)] + [0.0] * (n - band))
    C = np.array([[c[i - j] if i >= j else 0.0 for j in range(n)] for i in range(n)])
    M = np.tril(np.ones((n, n))) @ np.linalg.inv(C)
    covariance = sigma ** 2 * M @ M.T
    exact = np.linalg.solve(covariance, np.ones(n))
    exact /= exact.sum()
    g = release_contrast(mechanism, n)
    # Estimated from 20,000 noise-only coordinates: each weight within a few % of the largest.
    assert g.sum() == pytest.approx(1.0) and np.abs(g - exact).max() < 0.1 * np.abs(exact).max()
    best = sensitivity / math.sqrt(exact @ covariance @ exact)
    assert best == pytest.approx(math.sqrt(2 * rho), rel=1e-6)
    assert sensitivity / math.sqrt(g @ covariance @ g) >= 0.99 * best  # the estimated contrast loses < 1 %
    # Against reading the last release alone (what the model is computed from): less than half the μ.
    assert sensitivity / math.sqrt(covariance[-1, -1]) < 0.5 * best


def _decayed_kappa2(half_life, n):
    """Σ_{j<n} c_j² (n = None: to 10⁶ terms, past the slowest decay's tail) of the stored fit for ``half_life``,
    the coefficients of c(x) = Π(1 − θ'_i x)/Π(1 − θ_i x) from scipy's recursive filter (not the library's
    closed form)."""
    from scipy.signal import lfilter

    from onpair.privacy.continual.decayed_fits import DECAYED_FITS

    decays, inverse_decays = DECAYED_FITS[math.log2(half_life)]
    impulse = np.zeros(10**6 if n is None else n)
    impulse[0] = 1.0
    c = lfilter(np.poly(inverse_decays), np.poly(decays), impulse)
    return math.fsum(c**2)


#: κ² of the decayed factorisation at the long audit half-life (stored fit 2^12) and its part that a stream of
#: n = 50 records reaches (the first record's column of C).
KAPPA2_H4096 = _decayed_kappa2(4096.0, None)
KAPPA2_H4096_50 = _decayed_kappa2(4096.0, 50)


def test_the_long_half_life_factorisation_has_the_kappa2_its_presets_state():
    # The numbers the onpairstats-decayed-h4096 presets are chosen by (onpair.audit.presets.AUDIT_LONG_HALF_LIFE):
    # κ² = 3.42 for the whole stream, 2.31 of it reached in n = 50 records, 2.29–2.32 for every stored fit
    # from 2^10 up (a longer half-life would not make the audit stronger), and 1.50 at the short preset's H = 8.
    from onpair.privacy.continual.decayed import DecayedBLT
    from onpair.privacy.continual.decayed_fits import DECAYED_FITS

    assert KAPPA2_H4096 == pytest.approx(3.42, abs=0.005) and KAPPA2_H4096_50 == pytest.approx(2.31, abs=0.005)
    # (float64 recursion against the library's closed form: within 1e-8, as tests/naive_blt.py says)
    assert DecayedBLT(dim=1, sensitivity=1.0, rho=1.0, half_life=4096.0).kappa2 == pytest.approx(KAPPA2_H4096,
                                                                                                   rel=1e-7)
    reached = [_decayed_kappa2(2.0 ** e, 50) for e in DECAYED_FITS if e >= 10]
    assert 2.285 <= min(reached) and max(reached) <= 2.325
    assert _decayed_kappa2(8.0, None) == pytest.approx(1.50, abs=0.005)


def test_release_contrast_sees_the_forgotten_kappa_of_the_decayed_mechanism():
    # DecayedBLT releases W_γ·V + σ·B·Z with B = W_γ·C⁻¹ (tests/naive_blt.py), so a change of the first record
    # (shift a = W_γ e₁) is seen by the best linear test with μ = Δ·√(aᵀ(BBᵀ)⁻¹a)/σ = Δ·‖C e₁‖/σ, where
    # ‖C e₁‖² = Σ_{j<n} c_j². With σ = Δκ/√(2ρ) that is √(2ρ)·√(2.31/3.42) < √(2ρ), the claim's own μ; with σ
    # computed as if κ² were 1 it is √(2ρ)·√2.31, 1.52 times the claim's. The contrast the presets estimate
    # (for the mechanism as claimed) reaches both within 1 %.
    from onpair.privacy import rho_from_dp
    from onpair.privacy.continual.decayed import DecayedBLT, decay_of
    from naive_blt import matrices

    n, sensitivity, (epsilon, delta) = 50, 2.0, PRESETS["onpairstats-decayed-h4096"].claim
    rho = rho_from_dp(epsilon, delta, method="gaussian")
    mechanism = DecayedBLT(dim=1, sensitivity=sensitivity, rho=rho, half_life=4096.0)
    p = mechanism.parameters
    W, C, B = matrices(n, p.decays, p.inverse_decays, decay_of(4096.0))
    assert float(C[:, 0] @ C[:, 0]) == pytest.approx(KAPPA2_H4096_50, rel=1e-9)
    g = release_contrast(mechanism, n)
    for sigma, mu in ((sensitivity * math.sqrt(KAPPA2_H4096 / (2 * rho)), math.sqrt(2 * rho * KAPPA2_H4096_50
                                                                                      / KAPPA2_H4096)),
                      (sensitivity / math.sqrt(2 * rho), math.sqrt(2 * rho * KAPPA2_H4096_50))):
        covariance = sigma ** 2 * B @ B.T
        shift = W[:, 0]
        best = sensitivity * math.sqrt(shift @ np.linalg.solve(covariance, shift))
        assert best == pytest.approx(mu, rel=1e-6)
        assert g @ shift == pytest.approx(1.0) and sensitivity / math.sqrt(g @ covariance @ g) >= 0.99 * best
    assert mechanism.describe()["sigma"] == pytest.approx(sensitivity * math.sqrt(KAPPA2_H4096 / (2 * rho)),
                                                          rel=1e-6)
    assert math.sqrt(KAPPA2_H4096_50) == pytest.approx(1.52, abs=0.005)


@pytest.mark.parametrize("name, scale", [("onpairstats-noise0.1", 0.1), ("onpairstats-toeplitz-noise0.1", 0.1),
                                         ("onpairstats-epochs-noise0.1", 0.1), ("onpairstats-moments-m0", 2.0 / 19.88),
                                         ("offpairstats-noise0.1", 0.1),
                                         ("onpairstats-decayed-h4096-kappa1", KAPPA2_H4096 ** -0.5)])
def test_broken_statistics_variants_draw_less_noise_and_still_claim_the_budget(name, scale):
    real = name.rsplit("-", 1)[0]
    D, D_prime, bounds, _ = (PRESETS[name].datasets or neighbouring_datasets)(20, 2)
    sigmas, spent = [], []
    for preset in (real, name):
        mechanism, release = PRESETS[preset].build(CLAIM, DELTA, 20, 2, bounds)(np.random.SeedSequence(0))
        assert np.all(np.isfinite(release(mechanism, *D_prime)))
        report = mechanism.privacy_report_ if hasattr(mechanism, "privacy_report_") else mechanism.privacy_report()
        sigmas.append(report["releases"][-1]["sigma"])
        spent.append(report["epsilon_spent"])
    assert sigmas[1] / sigmas[0] == pytest.approx(scale, rel=1e-3)
    assert spent[1] == pytest.approx(spent[0], rel=1e-9) and spent[1] <= CLAIM * (1 + 1e-9)


def test_the_blocks_contrast_reads_every_completed_block():
    # Blocks of 4, 8 and 16 records (28 in all), released once each as r_j = S_j + σz_j, weighting "equal" (the
    # estimate after t records is Σ_{j<B(t)} r_j). The test reads a change of the first record as if it were in
    # every completed block: a_t = B(t). Its least-variance unbiased combination of r_0, r_1, r_2 (independent,
    # variance σ² each) is their mean: variance σ²/3 per coordinate, and the correct release, which moves r_0
    # alone, moves it by 1/3 of the change.
    from onpair.privacy.continual import BlockRelease

    n, sigma = 28, 1.0
    mechanism = BlockRelease(dim=1, sensitivity=1.0, rho=0.5, first_block=4, weighting="equal")
    sigma = mechanism.describe()["sigma"]
    blocks = np.array([0] * 3 + [1] * 8 + [2] * 16 + [3])  # B(t) for t = 1, …, 28: ends at 4, 12, 28
    E = np.array([[1.0 if j < b else 0.0 for j in range(3)] for b in blocks])  # r_j in the estimate after t
    covariance = sigma ** 2 * E @ E.T
    g = release_contrast(mechanism, n)
    assert g @ blocks == pytest.approx(1.0)
    assert g @ covariance @ g == pytest.approx(sigma ** 2 / 3, rel=0.05)
    assert g @ (blocks > 0) == pytest.approx(1 / 3, rel=0.05)  # what the correct release's change moves
    # While only the first block completes (the presets' 50 records with blocks of 32) the shift is the first
    # block's weight: the contrast reads the one release there is.
    first = release_contrast(BlockRelease(dim=1, sensitivity=1.0, rho=0.5), 50)
    assert first[:31] @ first[:31] == pytest.approx(0.0, abs=1e-20) and first.sum() == pytest.approx(1.0)


def test_the_noreset_variant_releases_the_first_record_again_in_every_later_block():
    # Blocks of 2, 4 and 8 (14 records), weighting "equal", ρ large (σ ≈ 7e-4): the record 1 = (1), every other
    # record 0. The correct release holds it in r_0 only (estimate ≈ 1 after 3 blocks); the broken one, whose
    # block sum is never reset, in r_0, r_1 and r_2 (≈ 3). Schedule, σ and accounting are unchanged.
    from onpair.privacy.continual import BlockRelease
    from onpair.statistics.audit_variants import _never_reset

    V = np.zeros((14, 1))
    V[0] = 1.0
    out = []
    for broken in (False, True):
        mechanism = BlockRelease(dim=1, sensitivity=1.0, rho=1e6, first_block=2, weighting="equal")
        if broken:
            _never_reset(mechanism)
        estimates = mechanism.add_block(V, np.random.default_rng(0), return_estimates=True)
        out.append((estimates[[1, 5, 13], 0], mechanism.describe()))
    assert out[0][0] == pytest.approx([1.0, 1.0, 1.0], abs=0.01)
    assert out[1][0] == pytest.approx([1.0, 2.0, 3.0], abs=0.01)
    assert out[0][1] == out[1][1]
    # The learner's fused single-record path calls the same patched step: the preset's variant leaks too.
    D, D_prime, bounds, _ = statistics_neighbouring_datasets(100, 2)
    reports = []
    for name in ("onpairstats-blocks", "onpairstats-blocks-noreset"):
        learner, release = PRESETS[name].build(CLAIM, DELTA, 100, 2, bounds)(np.random.SeedSequence(0))
        assert np.all(np.isfinite(release(learner, *D_prime)))
        reports.append((learner._stats.mechanism.completed(), learner.privacy_report()["epsilon_spent"]))
    assert reports[0] == reports[1] and reports[0][0] == 2 and reports[0][1] <= CLAIM * (1 + 1e-9)


@pytest.mark.parametrize("name", tiered(["onpairstats-blocks-noreset", "onpairstats-blocks-decayed-noreset"]))
def test_the_correct_blocks_release_passes_where_its_noreset_variant_is_caught(name):
    # The same stream, claim, runs and test as the broken variant (which test_broken_variant_is_caught audits).
    real, broken = PRESETS[name.replace("-noreset", "")], PRESETS[name]
    claim, delta = broken.claim
    result = audit_algorithm(real.name, runs=runs_for(name), epsilon=claim, delta=delta, n=broken.n, seed=0)
    assert result.epsilon_lower <= claim and not result.caught and result.details["n"] == broken.n


def test_cli_audits_the_statistics_presets(capsys):
    assert main(["onpairstats-epochs", "--runs", "40", "--n", "12"]) == 0
    text = capsys.readouterr().out
    assert "OnPairStats, mechanism='epochs'" in text and "consistent with the claim" in text
    assert main(["onpairstats-metric", "--runs", "40", "--n", "12", "--data", "random", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 40 and out["details"]["n"] == 12 and out["details"]["data"] == "random"
    # A preset with its own claim is audited at it unless told otherwise.
    assert main(["onpairstats-decayed-h4096", "--runs", "40", "--n", "12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["claimed_epsilon"], out["delta"]) == (2.0, 0.1) and out["details"]["description"].endswith("(2, 0.1)")
    assert main(["onpairstats-decayed-h4096", "--runs", "40", "--n", "12", "--epsilon", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["claimed_epsilon"], out["delta"]) == (4.0, 0.1)
