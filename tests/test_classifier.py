"""The classifier of the statistics family (issue 23) and scikit-learn's label conventions (issue 26, item 3).

* the pooled layout (one second moment for all classes): kernels against NumPy twins, its sensitivity against
  sampled and adversarially optimised pairs;
* one budget: the multi-class cost equals the binary one for the same weights (Δ is per record), online,
  offline and through river, and the offline ε against dp-accounting;
* the posterior of real releases (online and offline, both layouts; the AUC task's posterior along its
  model) against the independent twin of tests/naive_discriminant.py, decoded by the NumPy twins of
  tests/naive_statistics.py; the AUC task's posterior ranks exactly as its model;
* learn_one = learn_many bit for bit, snapshots, a label outside the domain changes nothing, the parameters'
  errors;
* calibration through the learners (non-private: reliable; private: shrunk, never inverted on average);
* scikit-learn: ``classes_`` sorted, and ``score``, ``roc_auc_score(y, decision_function)`` and
  ``cross_val_score(scoring="roc_auc")`` agree for every offline estimator whatever order ``classes`` has;
* river: :class:`onpair.river.PrivateClassifier` (keys, priors before a release, labels, saving) and the
  calibrated probabilities of :class:`onpair.river.PrivatePairwiseClassifier`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize

import naive_statistics as naive
import onpair
import onpair.evaluation
from learner_state import assert_same_state, state_of
from naive_discriminant import naive_log_posterior
from onpair import OffPairStats, OnPairStats
from onpair.core.bounds import FeatureBounds
from onpair.privacy.statistics_sensitivity import statistics_sensitivity
from onpair.statistics._kernels import _box_layout_row, layout_width, statistics_rows
from onpair.statistics.model import class_statistics
from public_api import OFFLINE, make_offline
from test_discriminant_classifier import _assert_reliable, _recalibration_slope

WEIGHTS = (0.8, 1.0, 0.6)


ball = naive.ball


def classes_stream(n, C=3, d=4, seed=0, separation=0.25):
    """C Gaussian classes inside the box [0, 1]^d (clipped at its faces), labels 0..C−1."""
    rng = np.random.default_rng(seed)
    centres = 0.5 + separation * rng.standard_normal((C, d)) / math.sqrt(d)
    y = rng.integers(0, C, n)
    X = np.clip(centres[y] + 0.12 * rng.standard_normal((n, d)), 0.0, 1.0)
    return X, y


def twin(stats, Z, **kwargs):
    return naive_log_posterior(stats.counts, stats.means, stats.covariances, stats.count_sd, stats.sum_sd,
                               stats.moment_sd, Z, pooled_moment=stats.pooled, **kwargs)["log_proba"]


# -- the pooled layout -------------------------------------------------------------------------------------
@pytest.mark.parametrize("d, C", [(1, 2), (3, 2), (5, 4)])
def test_pooled_rows_and_decoding_match_the_numpy_twin(d, C):
    rng = np.random.default_rng(10 + d)
    Z = ball(rng, 60, d)
    codes = rng.integers(0, C, size=60)
    rows = statistics_rows(Z, codes, C, WEIGHTS, pooled=True)
    assert rows.shape == (60, layout_width(d, C, pooled=True)) == (60, C * (1 + d) + d * (d + 1) // 2)
    expected = np.array([naive.pooled_contribution(z, c, C, WEIGHTS) for z, c in zip(Z, codes)])
    np.testing.assert_allclose(rows, expected, rtol=1e-14, atol=1e-15)
    estimate = rows.sum(axis=0) + rng.standard_normal(rows.shape[1])
    stats = class_statistics(estimate, C, d, WEIGHTS, 1.0, count_floor=3.0, pooled=True)
    counts, means, pooled = naive.pooled_decode(estimate, C, d, WEIGHTS, max(3.0, 2.0 / WEIGHTS[0]))
    np.testing.assert_allclose(stats.counts, counts, rtol=1e-12)
    np.testing.assert_allclose(stats.means, means, rtol=1e-10, atol=1e-14)
    for c in range(C):
        np.testing.assert_allclose(stats.covariances[c], pooled, rtol=1e-9, atol=1e-13)
    assert stats.pooled and stats.moment_sd == 1.0 / WEIGHTS[2]


@pytest.mark.parametrize("pooled", [False, True])
def test_the_fused_single_record_row_equals_the_block_row_bit_for_bit(pooled):
    rng = np.random.default_rng(4)
    d, C = 3, 4
    bounds = FeatureBounds(lower=np.zeros(d), upper=np.ones(d))
    box = bounds.box_rows(d)
    for i in range(40):
        x = rng.uniform(-0.2, 1.2, d)
        code = int(rng.integers(0, C))
        z, row = np.empty(d), np.full(layout_width(d, C, pooled), np.nan)
        status = _box_layout_row(x, *box, code, C, np.array(WEIGHTS), pooled, z, row)
        mapped, clipped = bounds.transform(x[None, :])
        assert status == int(clipped[0])
        block = statistics_rows(mapped, np.array([code]), C, WEIGHTS, pooled=pooled)[0]
        assert row.tobytes() == block.tobytes()


@pytest.mark.parametrize("weights", [(0.8, 1.0, 0.6), (1.0, 1.0, 1.0), (0.3, 1.0, 2.0), (0.8, 1.0, 14.0),
                                     (1.0, 0.2, 1.0)])
def test_pooled_sensitivity_bounds_sampled_pairs_and_is_attained(weights):
    """The pooled layout's Δ is the per-class layout's: no sampled pair exceeds it, and it is attained (by
    orthogonal unit records of different labels, or at the same-label supremum's argument)."""
    delta = statistics_sensitivity(*weights)
    d, C = 4, 5
    assert naive.worst_sampled_difference(naive.pooled_contribution, weights, d, C, np.random.default_rng(5)) \
        <= delta * (1 + 1e-12)
    assert math.isclose(naive.attained_difference(naive.pooled_contribution, weights, d, C), delta, rel_tol=1e-9)


@pytest.mark.parametrize("weights", [(0.8, 1.0, 0.6), (0.8, 1.0, 14.0), (0.3, 1.0, 2.0)])
def test_pooled_different_label_supremum_against_an_optimiser(weights):
    """The adversary: maximise ‖v(z) − v(z')‖² over records of the unit ball with different labels in the
    pooled layout, from many starts; it never exceeds 2a² + 2b² + 2m² (≤ Δ²) and reaches it."""
    rng = np.random.default_rng(6)
    a, b, m = weights
    d = 3

    def negative(p):
        x, y = p[:d], p[d:]
        x = x / max(1.0, np.linalg.norm(x))
        y = y / max(1.0, np.linalg.norm(y))
        diff = naive.pooled_contribution(x, 0, 2, weights) - naive.pooled_contribution(y, 1, 2, weights)
        return -float(diff @ diff)

    best = 0.0
    for _ in range(40):
        result = optimize.minimize(negative, rng.uniform(-1, 1, size=2 * d), method="Nelder-Mead",
                                   options={"maxiter": 4000, "xatol": 1e-10, "fatol": 1e-12})
        best = max(best, -result.fun)
    bound = 2 * (a * a + b * b + m * m)
    assert best <= bound * (1 + 1e-9) and bound <= statistics_sensitivity(*weights) ** 2 * (1 + 1e-12)
    assert best >= bound * (1 - 1e-6)


# -- one budget ------------------------------------------------------------------------------------------
def _cost(report):
    return (report["rho_spent"], report["epsilon_spent"], report["sensitivity_now"],
            [(r["sigma"], r["rho"]) for r in report["releases"]])


@pytest.mark.parametrize("mechanism", ["toeplitz", "epochs", "tree"])
def test_the_multi_class_cost_equals_the_binary_cost(mechanism):
    """Seven classes, either layout, cost what two classes of the AUC task cost with the same weights: the same
    Δ, σ per level and ρ (a record changes at most two classes' statistics, whatever their number)."""
    X, y = classes_stream(200, C=7)
    reports = []
    for kwargs, labels in ((dict(), y > 3), (dict(task="classify", classes=list(range(7))), y),
                           (dict(task="classify", classes=list(range(7)), moments="per-class"), y),
                           (dict(task="classify", classes=[0, 1]), (y > 3).astype(int))):
        learner = OnPairStats(epsilon=1.0, bounds=(0, 1), mechanism=mechanism, seed=0, **kwargs)
        reports.append(_cost(learner.learn_many(X, labels).privacy_report()))
    assert all(r == reports[0] for r in reports[1:])
    offline = [OffPairStats(epsilon=1.0, bounds=(0, 1), random_state=0, **kwargs).fit(X, labels).privacy_report_
               for kwargs, labels in ((dict(), y > 3), (dict(task="classify", classes=list(range(7))), y))]
    assert [r["releases"] for r in offline[:1]] == [r["releases"] for r in offline[1:]]
    assert offline[0]["epsilon_spent"] == offline[1]["epsilon_spent"]


def test_the_offline_classifier_epsilon_against_dp_accounting():
    """One Gaussian release of Δ-sensitive statistics at σ: dp-accounting's PLD accountant gives at most the
    reported ε at δ (and nearly it: the analytic Gaussian mechanism is exact)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    X, y = classes_stream(300, C=5)
    est = OffPairStats(task="classify", classes=list(range(5)), epsilon=1.0, delta=1e-5, bounds=(0, 1),
                       random_state=0).fit(X, y)
    release = est.privacy_report_["releases"][0]
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.GaussianDpEvent(release["sigma"] / release["sensitivity"]))
    epsilon = accountant.get_epsilon(1e-5)
    assert epsilon <= 1.0 + 2e-3 and epsilon >= 0.99


def test_the_river_classifiers_cost_the_same():
    from river import datasets

    from onpair.river import PrivateClassifier, PrivatePairwiseClassifier

    stream = list(datasets.Phishing().take(120))
    multi = PrivateClassifier(classes=[False, True, "other"], bounds=(0.0, 1.0), features=sorted(stream[0][0]), seed=0)
    binary = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=sorted(stream[0][0]), seed=0)
    for x, y in stream:
        multi.learn_one(x, y)
        binary.learn_one(x, y)
    assert _cost(multi.privacy_report()) == _cost(binary.privacy_report())


# -- the posterior of real releases against the twin --------------------------------------------------------
@pytest.mark.parametrize("moments", ["pooled", "per-class"])
@pytest.mark.parametrize("private", [True, False])
def test_online_posterior_equals_the_twin(moments, private):
    X, y = classes_stream(500, C=3)
    learner = OnPairStats(task="classify", classes=[0, 1, 2], epsilon=2.0, bounds=(0, 1), moments=moments,
                          private=private, seed=1).learn_many(X, y)
    Z, _ = learner.feature_bounds.transform(X[:40])
    stats = learner.class_statistics()
    # the release decoded by the NumPy twins, then the posterior's twin
    estimate = learner._stats.estimate()
    floor = stats.count_floor
    if moments == "pooled":
        counts, means, pooled = naive.pooled_decode(estimate, 3, 4, WEIGHTS, floor)
        covariances = np.stack([pooled] * 3)
    else:
        counts, means, covariances = naive.decode(estimate, 3, 4, WEIGHTS, floor)
    scale = 1.0 if private else naive.twin_scale(counts, covariances)  # the twin's ridge follows its data's scale
    expected = naive_log_posterior(counts, means, covariances, stats.count_sd, stats.sum_sd, stats.moment_sd, Z,
                                   pooled_moment=moments == "pooled", scale=scale)["log_proba"]
    np.testing.assert_allclose(np.log(learner.predict_proba(X[:40])), expected, rtol=1e-7, atol=1e-8)
    np.testing.assert_array_equal(learner.predict(X[:40]), np.argmax(expected, axis=1))


@pytest.mark.parametrize("covariance", ["auto", "diagonal", 0.5])
def test_offline_posterior_equals_the_twin(covariance):
    X, y = classes_stream(400, C=4)
    labels = np.array(["d", "c", "b", "a"])[y]  # classes_ sorted: a, b, c, d
    est = OffPairStats(task="classify", classes=["d", "c", "b", "a"], covariance=covariance, bounds=(0, 1),
                       random_state=2).fit(X, labels)
    assert est.classes_.tolist() == ["a", "b", "c", "d"]
    Z, _ = est.bounds_.transform(X[:30])
    expected = twin(_offline_stats(est, X, labels), Z, covariance=covariance)
    np.testing.assert_allclose(est.predict_log_proba(X[:30]), expected, rtol=1e-7, atol=1e-8)
    assert est.predict(X[:30]).tolist() == est.classes_[np.argmax(expected, axis=1)].tolist()


def _offline_stats(est, X, labels):
    """The offline release recomputed from the same seed (the estimator keeps no statistics)."""
    from onpair.privacy.gaussian import gaussian_sigma
    from onpair.statistics._kernels import statistics_total

    Z, _ = est.bounds_.transform(X)
    codes = np.searchsorted(est.classes_, labels)
    total = statistics_total(Z, codes, len(est.classes_), WEIGHTS, pooled=True)
    sigma = gaussian_sigma(statistics_sensitivity(*WEIGHTS), est.epsilon, est.delta, method="analytic")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(est.random_state)))
    return class_statistics(total + sigma * rng.standard_normal(total.size), len(est.classes_), X.shape[1],
                            WEIGHTS, sigma ** 2, pooled=True)


@pytest.mark.parametrize("model_type", ["square", "centroid"])
def test_the_auc_posterior_is_the_twin_along_the_released_model_and_ranks_as_it(model_type):
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (600, 4))
    y = X[:, 0] + 0.3 * X[:, 1] + 0.2 * rng.standard_normal(600) > 0.7
    learner = OnPairStats(epsilon=2.0, bounds=(0, 1), model_type=model_type, seed=2).learn_many(X, y)
    stats = learner.class_statistics()
    Z, _ = learner.feature_bounds.transform(X)
    if model_type == "square":  # W = ((Ĉ₀ + Ĉ₁)/2 + (λ/4)I)⁻¹, the square model's own matrix
        inverse = np.linalg.inv(0.5 * (stats.covariances[0] + stats.covariances[1]) + learner.ridge() / 4 * np.eye(4))
    else:  # W = (τI)⁻¹, τ the within-class variance along d̂ plus the ridge (the twin's Σ̃ and λ)
        reference = naive_log_posterior(stats.counts, stats.means, stats.covariances, stats.count_sd, stats.sum_sd,
                                        stats.moment_sd, Z[:1])
        sigma_twin = _twin_sigma(stats)
        diff = stats.means[1] - stats.means[0]
        inverse = np.eye(4) / (diff @ sigma_twin @ diff / (diff @ diff) + reference["ridge"])
    expected = twin(stats, Z, inverse=inverse)
    log_p = np.log(learner.predict_proba(X))
    np.testing.assert_allclose(log_p, expected, rtol=1e-6, atol=1e-8)
    # it ranks exactly as the released model: the log-odds are an increasing function of the model's scores
    order = np.argsort(learner.decision_function(X), kind="stable")
    odds = log_p[:, 1] - log_p[:, 0]
    assert np.all(np.diff(odds[order]) >= -1e-12)
    assert onpair.evaluation.roc_auc(y, odds) == pytest.approx(onpair.evaluation.roc_auc(y, learner.decision_function(X)),
                                                            abs=1e-12)


def _twin_sigma(stats):
    """Σ̃ of the twin's defaults: the count-pooled covariance, debiased, off-diagonal shrunk by α, PSD."""
    weights = stats.counts / stats.counts.sum()
    pooled = np.tensordot(weights, stats.covariances, axes=1)
    pooled = 0.5 * (pooled + pooled.T) + np.sum(weights * (stats.sum_sd / stats.counts) ** 2) * np.eye(pooled.shape[0])
    alpha = naive_log_posterior(stats.counts, stats.means, stats.covariances, stats.count_sd, stats.sum_sd,
                                stats.moment_sd, stats.means[:1])["alpha"]
    target = (1 - alpha) * pooled + alpha * np.diag(np.diag(pooled))
    values, vectors = np.linalg.eigh(target)
    return vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T


def test_before_any_record_every_posterior_is_uniform():
    for kwargs in (dict(task="classify", classes=["a", "b", "c"]), dict()):
        learner = OnPairStats(bounds=(0, 1), n_features=2, seed=0, **kwargs)
        P = learner.predict_proba(np.array([[0.3, 0.9], [0.5, 0.5]]))
        np.testing.assert_allclose(P, 1.0 / P.shape[1])


# -- learning, snapshots, labels, parameters ---------------------------------------------------------------
CLASSIFY = [dict(), dict(moments="per-class"), dict(mechanism="epochs"), dict(private=False)]


@pytest.mark.parametrize("kwargs", CLASSIFY)
def test_classifier_learn_one_equals_learn_many_bit_for_bit(kwargs):
    X, y = classes_stream(250, C=3)
    X[::17] *= 1.5  # some records outside the box: the general path
    labels = np.array(["x", "y", "z"])[y]
    many = OnPairStats(task="classify", classes=["x", "y", "z"], bounds=(0, 1), seed=3, **kwargs)
    ones = OnPairStats(task="classify", classes=["x", "y", "z"], bounds=(0, 1), seed=3, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the clipping warning
        many.learn_many(X[:90], labels[:90]).learn_many(X[90:], labels[90:])
        for x, label in zip(X, labels):
            ones.learn_one(x, str(label))
    assert_same_state(state_of(many), state_of(ones))
    assert many.predict_proba(X[:5]).tobytes() == ones.predict_proba(X[:5]).tobytes()


@pytest.mark.parametrize("kwargs", [dict(), dict(moments="per-class", covariance="diagonal")])
def test_classifier_snapshot_resumes_exactly(kwargs, tmp_path):
    X, y = classes_stream(200, C=3)
    whole = OnPairStats(task="classify", classes=[0, 1, 2], bounds=(0, 1), seed=5, **kwargs).learn_many(X, y)
    first = OnPairStats(task="classify", classes=[0, 1, 2], bounds=(0, 1), seed=5, **kwargs).learn_many(X[:77], y[:77])
    first.save(tmp_path / "c.onpair")
    resumed = onpair.load(tmp_path / "c.onpair").learn_many(X[77:], y[77:])
    assert_same_state(state_of(whole), state_of(resumed))
    assert whole.predict_proba(X[:9]).tobytes() == resumed.predict_proba(X[:9]).tobytes()


@pytest.mark.parametrize("label", [3, "a", -1, 2.5, None])
def test_a_label_outside_the_domain_changes_nothing(label):
    X, y = classes_stream(50, C=3)
    learner = OnPairStats(task="classify", classes=[0, 1, 2], bounds=(0, 1), seed=0).learn_many(X[:20], y[:20])
    before = state_of(learner)
    with pytest.raises(ValueError, match="classes|label"):
        learner.learn_one(X[20], label)
    with pytest.raises(ValueError, match="classes|label"):
        learner.learn_many(X[20:23], [0, label, 1])
    assert_same_state(before, state_of(learner))
    est = OffPairStats(task="classify", classes=[0, 1, 2], bounds=(0, 1), random_state=0)
    with pytest.raises(ValueError, match="classes|label"):
        est.fit(X[:10], [0, 1, 2, 0, 1, 2, 0, 1, label, 0])
    assert not hasattr(est, "coef_") and not hasattr(est, "posterior_")


def test_the_classifier_parameters_are_checked():
    with pytest.raises(ValueError, match="public class domain"):
        OnPairStats(task="classify", bounds=(0, 1))
    with pytest.raises(ValueError, match="at least 2 labels"):
        OnPairStats(task="classify", classes=["only"], bounds=(0, 1))
    with pytest.raises(ValueError, match="each once"):
        OnPairStats(task="classify", classes=[1, 1.0], bounds=(0, 1))
    with pytest.raises(ValueError, match="moments='pooled' is for task='classify'"):
        OnPairStats(moments="pooled", bounds=(0, 1))
    with pytest.raises(ValueError, match="moments"):
        OnPairStats(task="classify", classes=[0, 1], moments="shared", bounds=(0, 1))
    with pytest.raises(ValueError, match="covariance is for task='classify'"):
        OnPairStats(covariance="diagonal", bounds=(0, 1))
    with pytest.raises(ValueError, match="covariance"):
        OnPairStats(task="classify", classes=[0, 1], covariance="spherical", bounds=(0, 1))
    with pytest.raises(ValueError, match="model_type"):
        OnPairStats(task="classify", classes=[0, 1], model_type="square", bounds=(0, 1))
    with pytest.raises(ValueError, match="task"):
        OnPairStats(task="classification", bounds=(0, 1))
    learner = OnPairStats(task="metric", classes=[0, 1], bounds=(0, 1), n_features=2)
    with pytest.raises(ValueError, match="posterior"):
        learner.posterior()
    X, y = classes_stream(20, C=3)
    with pytest.raises(ValueError, match="public class domain"):
        OffPairStats(task="classify", bounds=(0, 1)).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        OffPairStats(task="classify", classes="observed", bounds=(0, 1)).fit(X, np.zeros(20))


def test_a_domain_read_off_y_is_curator_only():
    """classes="observed" (and the AUC task without classes=) read the labels off y: the labels present and,
    for the coded tasks, their number are listed under curator_only, so public_report drops them; a declared
    domain's number of classes stays public."""
    from onpair.privacy.reports import public_report

    X, y = classes_stream(60, C=3)
    observed = OffPairStats(task="classify", classes="observed", bounds=(0, 1), random_state=0).fit(X, y)
    report = observed.privacy_report_
    assert {"observed_classes", "n_classes"} <= set(report["curator_only"])
    assert report["observed_classes"] == [0, 1, 2] and report["n_classes"] == 3
    assert not {"observed_classes", "n_classes"} & set(public_report(report))
    declared = OffPairStats(task="classify", classes=[0, 1, 2, 3], bounds=(0, 1), random_state=0).fit(X, y)
    assert declared.privacy_report_["n_classes"] == 4 and "n_classes" in public_report(declared.privacy_report_)
    assert "observed_classes" not in declared.privacy_report_
    binary = OffPairStats(bounds=(0, 1), random_state=0).fit(X, y % 2)
    assert binary.privacy_report_["observed_classes"] == [0, 1]
    assert "observed_classes" in binary.privacy_report_["curator_only"]
    assert binary.privacy_report_["n_classes"] == 2  # two classes, whatever y holds: the AUC task's public count



def test_a_refit_whose_observed_classes_change_warns_before_anything_changes():
    """classes="observed": a refit on labels that add a class (or lose one) changes the released model's
    classes_ and shape with the records, so it warns (a PrivacyWarning that names no label); under -W error
    (this suite's setting for PrivacyWarning) the refit fails whole, the first fit kept. The same labels again,
    a first fit and a declared domain do not warn."""
    from onpair.privacy import PrivacyWarning, ZCDPAccountant

    X, y = classes_stream(60, C=3)
    shared = ZCDPAccountant(100.0)
    est = OffPairStats(task="classify", classes="observed", bounds=(0, 1), random_state=0, accountant=shared)
    est.fit(X[y < 2], y[y < 2])  # first fit: nothing to compare with, no warning
    coef, events = est.coef_.copy(), len(shared.events)
    est.fit(X[y < 2][::-1], y[y < 2][::-1])  # the same labels: no warning
    assert est.classes_.tolist() == [0, 1]
    coef, events = est.coef_.copy(), len(shared.events)
    with pytest.raises(PrivacyWarning, match="a class appeared or went missing") as raised:
        est.fit(X, y)  # label 2 appears
    assert "2" not in str(raised.value)
    assert est.classes_.tolist() == [0, 1] and np.array_equal(est.coef_, coef) and len(shared.events) == events
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert [w.category for w in caught if issubclass(w.category, PrivacyWarning)] == [PrivacyWarning]
    assert est.classes_.tolist() == [0, 1, 2] and est.coef_.shape != coef.shape
    with pytest.raises(PrivacyWarning):
        est.fit(X[y > 0], y[y > 0])  # label 0 goes missing
    declared = OffPairStats(task="classify", classes=[0, 1, 2], bounds=(0, 1), random_state=0)
    declared.fit(X[y < 2], y[y < 2]).fit(X, y)  # a public domain: nothing read off y, no warning

# -- calibration through the learners ----------------------------------------------------------------------
def test_non_private_offline_probabilities_are_reliable():
    """Two and four Gaussian classes (shared covariance) well inside the box: the non-private twin's predicted
    probabilities match the observed frequencies within sampling error (tests/test_discriminant_classifier.py's
    reliability check, on 20,000 held-out records)."""
    for C, seed in ((2, 0), (4, 1)):
        X, y = classes_stream(40_000, C=C, seed=seed, separation=0.15)
        est = OffPairStats(task="classify", classes=list(range(C)), private=False, bounds=(0, 1)).fit(X[:20_000],
                                                                                                  y[:20_000])
        P = est.predict_proba(X[20_000:])
        top = P.argmax(axis=1)
        _assert_reliable(P[np.arange(P.shape[0]), top], top == y[20_000:])


def test_private_probabilities_shrink_and_never_invert_on_average():
    """40 releases at ε = 0.3 of 1,000 records: the pooled predictions' recalibration slope is not below 1
    beyond 4 standard errors (no more extreme than calibrated) and positive beyond 4 (never inverted)."""
    X, y = classes_stream(5_000, C=2, seed=2, separation=0.15)
    log_odds, outcomes = [], []
    for draw in range(40):
        est = OffPairStats(task="classify", classes=[0, 1], epsilon=0.3, bounds=(0, 1), random_state=draw)
        est.fit(X[:1000], y[:1000])
        log_odds.append(est.decision_function(X[1000:]))
        outcomes.append(y[1000:])
    slope, se = _recalibration_slope(np.concatenate(log_odds), np.concatenate(outcomes).astype(float))
    assert slope + 4 * se >= 1.0 and slope - 4 * se > 0.0, (slope, se)


# -- scikit-learn: classes_ sorted, one positive class for every AUC ---------------------------------------
@pytest.mark.filterwarnings("ignore:records lay outside")
# public_api's fast OutputPerturbedSGD (T = 20 < n) warns that the paper's claim needs T >= n: expected here
@pytest.mark.filterwarnings(r"ignore:T = \d+ < n = \d+:onpair.privacy.exceptions.PrivacyWarning")
@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_score_roc_auc_score_and_cross_val_score_agree_whatever_the_order_of_classes(name):
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (240, 3))
    y = (X[:, 0] + 0.3 * rng.standard_normal(240) > 0.5).astype(int)
    with pytest.warns(UserWarning, match="classes_ is sorted"):
        est = make_offline(name, classes=(1, 0)).fit(X, y)
    assert est.classes_.tolist() == [0, 1]
    assert est.score(X, y) == pytest.approx(roc_auc_score(y, est.decision_function(X)), abs=1e-12)
    if name == "OffPairStats":  # label 0 positive or not, the ranking is learnt, not inverted
        assert est.score(X, y) > 0.75
    folds = StratifiedKFold(3)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "classes=", UserWarning)  # a sorted domain: no warning about it
        scored = cross_val_score(make_offline(name, classes=(0, 1)), X, y, scoring="roc_auc", cv=folds)
    by_hand = [make_offline(name, classes=(0, 1)).fit(X[train], y[train]).score(X[test], y[test])
               for train, test in folds.split(X, y)]
    np.testing.assert_allclose(scored, by_hand, atol=1e-12)


def test_the_offline_auc_posterior_is_scikit_learns_binary_classifier():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (400, 3))
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(400) > 0.5, "yes", "no")
    est = OffPairStats(classes=["no", "yes"], bounds=(0, 1), random_state=0).fit(X, y)
    P = est.predict_proba(X)
    odds = est.decision_function(X)
    np.testing.assert_allclose(odds, np.log(P[:, 1]) - np.log(P[:, 0]), rtol=1e-9, atol=1e-9)
    assert est.predict(X).tolist() == np.where(odds > 0, "yes", "no").tolist()
    Z, _ = est.bounds_.transform(X)
    assert onpair.evaluation.roc_auc(y == "yes", odds) == pytest.approx(onpair.evaluation.roc_auc(y == "yes", Z @ est.coef_),
                                                                    abs=1e-12)


# -- river ------------------------------------------------------------------------------------------------
def _river_records(X, y, labels):
    return [({f"f{k}": float(v) for k, v in enumerate(x)}, labels[c]) for x, c in zip(X, y)]


def test_private_classifier_keys_priors_and_labels():
    from onpair.river import PrivateClassifier

    labels = ["cat", "dog", 7]
    X, y = classes_stream(300, C=3)
    stream = _river_records(X, y, labels)
    model = PrivateClassifier(classes=labels, epsilon=8.0, bounds=(0.0, 1.0), features=[f"f{k}" for k in range(4)],
                              seed=0)
    assert model.predict_proba_one(stream[0][0]) == {"cat": 1 / 3, "dog": 1 / 3, 7: 1 / 3}
    for x, label in stream[:200]:
        model.learn_one(x, label)
    before = state_of(model._inner)
    for bad in ("bird", 8, None, float("nan"), [7]):
        with pytest.raises(ValueError):
            model.learn_one(stream[200][0], bad)
    assert_same_state(before, state_of(model._inner))
    p = model.predict_proba_one(stream[201][0])
    assert list(p) == labels and math.isclose(sum(p.values()), 1.0)
    assert model.predict_one(stream[201][0]) == max(p, key=p.get)
    correct = sum(model.predict_one(x) == label for x, label in stream[200:])
    assert correct > 100 / 3 * 1.5  # better than chance


def test_private_classifier_save_and_load_resume_exactly(tmp_path):
    from onpair.river import PrivateClassifier

    X, y = classes_stream(150, C=3)
    stream = _river_records(X, y, ("a", "b", "c"))
    whole = PrivateClassifier(classes=("a", "b", "c"), bounds=(0.0, 1.0), seed=4)
    first = PrivateClassifier(classes=("a", "b", "c"), bounds=(0.0, 1.0), seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # features=None: the order read off the first record (warned)
        for x, label in stream:
            whole.learn_one(x, label)
        for x, label in stream[:60]:
            first.learn_one(x, label)
    first.save(tmp_path / "m.onpair")
    resumed = onpair.load(tmp_path / "m.onpair")
    assert type(resumed) is PrivateClassifier and resumed.classes == ("a", "b", "c")
    for x, label in stream[60:]:
        resumed.learn_one(x, label)
    assert resumed.predict_proba_one(stream[0][0]) == whole.predict_proba_one(stream[0][0])


def test_the_pairwise_wrapper_probabilities_are_calibrated_and_rank_as_its_model():
    """The default learner's predict_proba_one is σ(a·s + b) of the released score s: the same order as s (the
    ranking, and so the AUC, unchanged), and predict_one is p > 1/2."""
    from river import datasets

    from onpair.river import PrivatePairwiseClassifier

    stream = list(datasets.Phishing().take(400))
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=sorted(stream[0][0]), seed=0)
    for x, y in stream[:300]:
        model.learn_one(x, y)
    p = np.array([model.predict_proba_one(x)[True] for x, _ in stream[300:]])
    Z, _ = model._inner.feature_bounds.transform(np.array([[x[k] for k in model.feature_order] for x, _ in
                                                            stream[300:]]))
    scores = Z @ model.model
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(p[order]) >= 0.0)
    assert 0.0 < p.min() and p.max() < 1.0
    # probabilities, not the previous positions along the direction (1 + s/‖w‖)/2
    assert np.max(np.abs(p - (1.0 + scores / np.linalg.norm(model.model)) / 2.0)) > 0.05
    assert [model.predict_one(x) for x, _ in stream[300:]] == (p > 0.5).tolist()
