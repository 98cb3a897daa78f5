"""The record-level cost of replays (onpair.privacy.replay, issue 20 item 5), against brute force.

A record learned at the stream positions P changes the input at every one of them. Each continual-release
mechanism is read off as an explicit linear map for small T, through its own kernel (``_apply`` with unit
streams and chosen standard normals), and the cost computed from that map alone:

* the factorisation releases Y = A·V + M·Z (Z standard normal): a Gaussian with covariance MMᵀ, so a
  record at P (input change Δ at each position) costs exactly ½·dᵀ(MMᵀ)⁻¹d with d = Δ·A·1_P, the
  divergence of two Gaussians with the same covariance;
* a tree releases its nodes E·V + diag(σ_h)·Z: ½·Σ_r (Δ·(E·1_P)_r/σ_{h(r)})². Its released prefix estimates
  are post-processing of the nodes (their covariance cost is checked to be at most that);
* doubling epochs: the epoch trees, each read off the same way, their costs added;
* the buffered-linear-Toeplitz factorisation: as the banded one (its columns never end: with a horizon the
  map of all T releases is the whole mechanism; without one, decays that die out within T records make
  the releases after T negligible).

``record_rho`` and ``replay_rho`` must give these numbers, and the learners' reports must use them.
"""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant

import naive_continual as naive
from onpair import OnPairC, OnPairStats, OnPairStrC, PairwiseGIGA
from onpair.privacy.continual import BandedToeplitz, BufferedToeplitz, EpochTrees, TreeAggregation
from onpair.privacy.conversions import eps_from_rho, rho_from_dp
from onpair.privacy.replay import group_rho, record_level, record_rho, replay_rho

SENSITIVITY, RHO = 1.7, 0.3


# -- brute force -------------------------------------------------------------------------------------
def toeplitz_release_maps(T, band, horizon):
    """(A, M): the data map and the noise map of the factorisation's first T releases, read off ``_apply``."""
    kwargs = dict(sensitivity=SENSITIVITY, rho=RHO, band=band, horizon=horizon)
    data = BandedToeplitz(dim=T, **kwargs)
    A = np.empty((T, T))
    data._apply(np.eye(T), np.zeros((T, T)), A)  # column q: the releases of the stream e_q, no noise
    noise = BandedToeplitz(dim=T, **kwargs)
    M = np.empty((T, T))
    noise._apply(np.zeros((T, T)), np.eye(T), M)  # column r: the releases with the r-th normal set to 1
    return A, M


def blt_release_maps(T, **kwargs):
    """(A, M) of the BLT's first T releases, read off its kernel as for the banded factorisation."""
    data = BufferedToeplitz(dim=T, sensitivity=SENSITIVITY, rho=RHO, **kwargs)
    A = np.empty((T, T))
    data._apply(np.eye(T), np.zeros((T, T)), A)
    noise = BufferedToeplitz(dim=T, sensitivity=SENSITIVITY, rho=RHO, **kwargs)
    M = np.empty((T, T))
    noise._apply(np.zeros((T, T)), np.eye(T), M)
    return A, M


def covariance_rho(A, M, positions):
    """½·dᵀ(MMᵀ)⁻¹d, d = Δ·A·1_P: the exact zCDP cost of the release Y = AV + MZ for the record at P."""
    d = SENSITIVITY * A[:, np.asarray(positions) - 1].sum(axis=1)
    return 0.5 * float(d @ np.linalg.solve(M @ M.T, d))


def tree_node_map(T, **kwargs):
    """(E, σ per node row, mechanism): the node values of the unit streams with zero noise (the encoder),
    read off ``_apply``, and each node's σ (its level's)."""
    mech = TreeAggregation(dim=T, sensitivity=SENSITIVITY, rho=RHO, horizon=T, **kwargs)
    rows = mech._noise_rows(0, T)
    nodes = np.empty((rows, T))
    mech._apply(np.eye(T), np.zeros((rows, T)), np.empty((T, T)), nodes)
    sigmas = np.array(mech.describe()["sigmas"])
    levels = [h for h, _ in naive.tree_node_order(T)]
    return nodes, sigmas[levels], mech


def node_rho(E, node_sigmas, positions):
    shift = SENSITIVITY * E[:, np.asarray(positions) - 1].sum(axis=1)
    return 0.5 * float(np.sum((shift / node_sigmas) ** 2))


def position_sets(T, rng, count=12):
    """Random sets of 1–5 positions in [1, T], and the adversarial ones: consecutive, first and last,
    a band apart."""
    sets = [[1], [T], list(range(1, min(T, 4) + 1)), sorted({1, T}), list(range(max(1, T - 3), T + 1))]
    for _ in range(count):
        size = int(rng.integers(1, min(5, T) + 1))
        sets.append(sorted(rng.choice(np.arange(1, T + 1), size=size, replace=False).tolist()))
    return [list(dict.fromkeys(s)) for s in sets]


# -- one mechanism, any positions ---------------------------------------------------------------------
@pytest.mark.parametrize("T, band", [(1, 1), (5, 1), (7, 3), (16, 4), (37, 8), (40, 64), (64, 64)])
def test_toeplitz_with_a_horizon_matches_the_covariance_of_its_releases(T, band):
    A, M = toeplitz_release_maps(T, band, T)
    mech = BandedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, band=band, horizon=T)
    for positions in position_sets(T, np.random.default_rng(T * 100 + band)):
        assert record_rho(mech, positions) == pytest.approx(covariance_rho(A, M, positions), rel=1e-9), positions


@pytest.mark.parametrize("band", [1, 2, 5, 16])
def test_unbounded_toeplitz_matches_the_covariance_of_its_releases(band):
    """Without a horizon every column has its whole band: read the releases over T ≥ max(P) + band − 1
    records, after which the record's columns are zero."""
    rng = np.random.default_rng(band)
    mech = BandedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, band=band)
    for positions in position_sets(30, rng):
        T = max(positions) + band - 1
        A, M = toeplitz_release_maps(T, band, None)
        assert record_rho(mech, positions) == pytest.approx(covariance_rho(A, M, positions), rel=1e-9), positions


def test_toeplitz_definition_and_the_default_band():
    """From the definition (C with the coefficients c_j): copies a band apart cost exactly k times one, copies
    within it more (positive cross terms), never more than the group bound."""
    mech = BandedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO)  # band 64
    one = record_rho(mech, [1])
    assert one == pytest.approx(mech.describe()["rho_spent_bound"], rel=1e-12)
    _, C, _ = naive.toeplitz_matrices(400, 64)
    scale = SENSITIVITY ** 2 / (2 * mech.describe()["sigma"] ** 2)
    for positions in ([1, 65, 129, 193], [5, 6], [1, 30, 60, 90], [100, 164]):
        expected = scale * float(np.sum(C[:, np.array(positions) - 1].sum(axis=1) ** 2))
        assert record_rho(mech, positions) == pytest.approx(expected, rel=1e-9)
        assert record_rho(mech, positions) <= group_rho(one, len(positions)) * (1 + 1e-12)
    assert record_rho(mech, [1, 65, 129, 193]) == pytest.approx(4 * one, rel=1e-12)
    assert record_rho(mech, [1, 64]) > 2 * one  # 63 apart: inside the band


FAST = dict(decays=[0.6, 0.2], inverse_decays=[0.4, 0.05])  # every buffer dies out within ~80 records


@pytest.mark.parametrize("T, kwargs", [(1, {}), (6, {}), (40, {}), (40, FAST), (25, dict(decays=[0.97],
                                                                                          inverse_decays=[0.5]))])
def test_blt_with_a_horizon_matches_the_covariance_of_its_releases(T, kwargs):
    A, M = blt_release_maps(T, horizon=T, **kwargs)
    mech = BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=T, **kwargs)
    for positions in position_sets(T, np.random.default_rng(T)):
        assert record_rho(mech, positions) == pytest.approx(covariance_rho(A, M, positions), rel=1e-9), positions
    assert record_rho(mech, [1]) == pytest.approx(mech.describe()["rho_spent_bound"], rel=1e-12)


def test_unbounded_blt_matches_the_covariance_of_its_releases():
    """Without a horizon: decays that die out (θ₁^300 < 10⁻⁶⁶) make every release after T = 300 records add
    nothing measurable, so the map of 300 releases gives the cost of the whole stream."""
    A, M = blt_release_maps(300, **FAST)
    mech = BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, **FAST)
    for positions in position_sets(40, np.random.default_rng(3)):
        assert record_rho(mech, positions) == pytest.approx(covariance_rho(A, M, positions), rel=1e-9), positions


def test_blt_copies_always_overlap_and_the_stored_fits_pay_for_it():
    """The BLT's columns never end (c_n > 0 for every n): k copies cost more than kρ however far apart, less
    than the group bound; against the dense definition (naive_blt) for the stored unbounded fit."""
    import naive_blt

    mech = BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=3000)
    one = record_rho(mech, [1])
    c = naive_blt.coefficients(mech.parameters.decays, mech.parameters.inverse_decays, 3000)
    scale = SENSITIVITY ** 2 / (2 * mech.describe()["sigma"] ** 2)
    for positions in ([1, 1001, 2001], [5, 6], [1, 3000], [700, 1400, 2100, 2800]):
        column = np.zeros(3000)
        for q in positions:
            column[q - 1:] += c[:3000 - q + 1]
        assert record_rho(mech, positions) == pytest.approx(scale * float(column @ column), rel=1e-9)
        assert record_rho(mech, positions) <= group_rho(one, len(positions)) * (1 + 1e-12)
    unbounded = BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO)  # whole columns: more than kρ
    one = record_rho(unbounded, [1])
    for positions in ([1, 1001, 2001], [1, 10 ** 6], [5, 6]):
        assert len(positions) * one < record_rho(unbounded, positions) <= group_rho(one, len(positions)) * (1 + 1e-12)


@pytest.mark.parametrize("T, estimate", [(1, "honaker"), (6, "honaker"), (16, "honaker"), (45, "honaker"),
                                         (45, "plain"), (64, "honaker")])
def test_tree_with_a_horizon_matches_its_node_map(T, estimate):
    E, node_sigmas, _ = tree_node_map(T, estimate=estimate)
    mech = TreeAggregation(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=T, estimate=estimate)
    for positions in position_sets(T, np.random.default_rng(T)):
        expected = node_rho(E, node_sigmas, positions)
        assert record_rho(mech, positions) == pytest.approx(expected, rel=1e-12), positions
    # the released prefix estimates are post-processing of the nodes: their own cost is no larger
    if T > 1:
        data = TreeAggregation(dim=T, sensitivity=SENSITIVITY, rho=RHO, horizon=T, estimate=estimate)
        A = np.empty((T, T))
        data._apply(np.eye(T), np.zeros((data._noise_rows(0, T), T)), A)
        rows = data._noise_rows(0, T)
        noise = TreeAggregation(dim=rows, sensitivity=SENSITIVITY, rho=RHO, horizon=T, estimate=estimate)
        M = np.empty((T, rows))
        noise._apply(np.zeros((T, rows)), np.eye(rows), M)
        for positions in position_sets(T, np.random.default_rng(T + 1), count=4):
            assert covariance_rho(A, M, positions) <= record_rho(mech, positions) * (1 + 1e-9)


def test_unbounded_tree_adds_the_levels_above_the_stream():
    """Unbounded: levels 0 … K from the node map of T = 2^K records; every level h > K holds [1, 2^h] ⊇ P in
    one node, which the record enters |P| times."""
    K = 5
    T = 2 ** K
    mech = TreeAggregation(dim=1, sensitivity=SENSITIVITY, rho=RHO)
    sigmas = np.array(mech.describe()["sigmas"])
    probe = TreeAggregation(dim=T, sensitivity=SENSITIVITY, rho=RHO)
    rows = probe._noise_rows(0, T)
    E = np.empty((rows, T))
    probe._apply(np.eye(T), np.zeros((rows, T)), np.empty((T, T)), E)
    node_sigmas = sigmas[[h for h, _ in naive.tree_node_order(T)]]
    for positions in position_sets(T, np.random.default_rng(7)):
        above = len(positions) ** 2 * math.fsum(SENSITIVITY ** 2 / (2 * sigmas[h] ** 2) for h in range(K + 1, 63))
        expected = node_rho(E, node_sigmas, positions) + above
        assert record_rho(mech, positions) == pytest.approx(expected, rel=1e-12), positions
    assert record_rho(mech, [1]) == pytest.approx(mech.describe()["rho_spent_bound"], rel=1e-12)


@pytest.mark.parametrize("first, horizon", [(1, None), (4, None), (4, 37), (8, 8)])
def test_epoch_trees_add_the_cost_of_each_epoch_they_touch(first, horizon):
    """Each epoch e is a tree over its L_e records with the whole ρ (by definition): read each off its node
    map; a record's cost is the sum over the epochs that hold one of its positions."""
    mech = EpochTrees(dim=1, sensitivity=SENSITIVITY, rho=RHO, first_epoch=first, horizon=horizon)
    T = 40 if horizon is None else horizon
    epochs, start, e = [], 0, 0
    while start < T:
        length = first * 2 ** e if horizon is None else min(first * 2 ** e, horizon - start)
        tree = TreeAggregation(dim=length, sensitivity=SENSITIVITY, rho=RHO, horizon=length)
        rows = tree._noise_rows(0, length)
        E = np.empty((rows, length))
        tree._apply(np.eye(length), np.zeros((rows, length)), np.empty((length, length)), E)
        sigma = tree.describe()["sigma"]
        epochs.append((start, length, E, sigma))
        start, e = start + length, e + 1
    for positions in position_sets(T, np.random.default_rng(first)):
        expected = 0.0
        for start, length, E, sigma in epochs:
            inside = [p - start for p in positions if start < p <= start + length]
            if inside:
                expected += node_rho(E, np.full(E.shape[0], sigma), inside)
        assert record_rho(mech, positions) == pytest.approx(expected, rel=1e-12), positions
    assert record_rho(mech, [1]) <= RHO


# -- same-order passes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: BandedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, band=6),
    lambda: BandedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, band=6, horizon=50),
    lambda: TreeAggregation(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=64),
    lambda: TreeAggregation(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=50),
    lambda: TreeAggregation(dim=1, sensitivity=SENSITIVITY, rho=RHO),
    lambda: EpochTrees(dim=1, sensitivity=SENSITIVITY, rho=RHO, first_epoch=4),
    lambda: EpochTrees(dim=1, sensitivity=SENSITIVITY, rho=RHO, first_epoch=2, horizon=45),
    lambda: BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO),
    lambda: BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, horizon=50),
    lambda: BufferedToeplitz(dim=1, sensitivity=SENSITIVITY, rho=RHO, **FAST),
], ids=["toeplitz", "toeplitz-horizon", "tree-64", "tree-50", "tree-unbounded", "epochs", "epochs-horizon", "blt",
        "blt-horizon", "blt-fast"])
@pytest.mark.parametrize("n, passes", [(1, 3), (5, 2), (7, 4), (16, 3), (13, 5)])
def test_replay_is_the_worst_record_of_the_schedule(make, n, passes):
    mech = make()
    expected = max(record_rho(mech, [i + j * n for j in range(passes) if i + j * n <= mech.capacity])
                   for i in range(1, n + 1))
    assert replay_rho(mech, n, passes) == pytest.approx(expected, rel=1e-12)
    assert replay_rho(mech, n, passes) <= group_rho(record_rho(mech, [1]), passes) * (1 + 1e-12)


def test_replay_rejects_bad_arguments():
    mech = BandedToeplitz(dim=1, sensitivity=1.0, rho=1.0, horizon=10)
    with pytest.raises(ValueError, match="position"):
        record_rho(mech, [11])
    with pytest.raises(ValueError, match="distinct"):
        record_rho(mech, [2, 2])
    with pytest.raises(TypeError, match="position"):
        record_rho(mech, [1.0])
    with pytest.raises(TypeError, match="mechanism"):
        record_rho(OnPairStats(norm_bound=1.0, n_features=2), [1])
    with pytest.raises(ValueError, match="passes"):
        replay_rho(mech, 5, 0)
    with pytest.raises(TypeError, match="passes"):
        group_rho(0.1, 2.5)
    with pytest.raises(ValueError, match="order"):
        record_level(0.1, 1e-5, "gaussian", 2, order="shuffled")
    with pytest.raises(ValueError, match="multiple"):
        record_level(0.1, 1e-5, "gaussian", 2, "same", mech, 9)
    assert record_rho(mech, []) == 0.0


# -- the learners' reports -----------------------------------------------------------------------------
def stream(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n) > 0.5


@pytest.mark.parametrize("mechanism, n", [("blt", 200), ("blt", 30), ("toeplitz", 200), ("toeplitz", 30), ("tree", 40),
                                          ("epochs", 50)])
def test_onpairstats_reports_the_exact_cost_of_same_order_passes(mechanism, n):
    X, y = stream(n)
    passes = 3
    kwargs = {"horizon": n * passes} if mechanism == "tree" else {}
    learner = OnPairStats(bounds=(0.0, 1.0), mechanism=mechanism, seed=0, **kwargs)
    for _ in range(passes):
        learner.learn_many(X, y)
    report = learner.privacy_report(passes=passes)
    level = report["record_level"]
    mech = learner._stats.mechanism
    expected = max(record_rho(mech, [i + j * n for j in range(passes)]) for i in range(1, n + 1))
    assert level["rho"] == pytest.approx(expected, rel=1e-12)
    assert level["passes"] == passes and level["order"] == "same" and level["bound"].startswith("exact")
    assert level["epsilon"] == eps_from_rho(level["rho"], learner.delta, "gaussian")
    one = report["rho_per_position"]
    assert level["rho"] <= passes ** 2 * one * (1 + 1e-9)
    # the headline answers the question asked: k passes; the one-position figures sit beside it
    assert report["rho_spent"] == level["rho"] and report["epsilon_spent"] == level["epsilon"]
    assert report["rho_remaining"] == max(0.0, report["rho_budget"] - level["rho"])
    assert report["epsilon_per_position"] == learner.privacy_report()["epsilon_spent"] < report["epsilon_spent"]
    if mechanism == "toeplitz" and n >= 64:
        assert level["rho"] == pytest.approx(passes * one, rel=1e-9)  # disjoint columns: exactly k·ρ
    anyorder = learner.privacy_report(passes=passes, order="any")["record_level"]
    assert anyorder["rho"] == pytest.approx(passes ** 2 * one) and anyorder["bound"].startswith("group")
    single = learner.privacy_report()
    assert single["record_level"]["rho"] == one == single["rho_spent"] == single["rho_per_position"]
    with pytest.raises(ValueError, match="multiple"):
        learner.privacy_report(passes=7)


def test_output_perturbed_and_non_private_learners():
    X, y = stream(120)
    strc = OnPairStrC(bounds=(0.0, 1.0), n=240, seed=0)
    strc.learn_many(X, y).learn_many(X, y)
    level = strc.privacy_report(passes=2)["record_level"]
    assert level["rho"] == pytest.approx(4 * strc.privacy_report()["rho_spent"]) and level["bound"].startswith("group")
    onpairc = OnPairC(bounds=(0.0, 1.0), n=240, seed=0).learn_many(X, y)
    assert onpairc.privacy_report(passes=3, order="any")["record_level"]["rho"] == pytest.approx(
        9 * onpairc.privacy_report()["rho_spent"])
    giga = PairwiseGIGA(bounds=(0.0, 1.0)).learn_many(X, y)
    assert giga.privacy_report(passes=2)["record_level"]["epsilon"] == math.inf
    with pytest.raises(ValueError, match="passes"):
        giga.privacy_report(passes=0)


@pytest.mark.parametrize("mechanism, multiple, epsilon", [("auto", 6.0, 2.71), ("blt", 7.318563, 3.03),
                                                     ("toeplitz", 4.0, 2.15)])
def test_four_passes_of_phishing_at_epsilon_one(mechanism, multiple, epsilon):
    """The README's row: four same-order passes of river's Phishing (1,250 records) through the river model at
    ε = 1, δ = 1e-5. With the banded factorisation each record's four copies are 1,250 positions apart,
    beyond the band 64, so ρ_record = 4ρ exactly; the BLT's columns never end, and its copies cost
    7.32ρ (the sum of the columns' inner products, against the dense definition in
    test_blt_copies_always_overlap_and_the_stored_fits_pay_for_it). The default's blocks (ends 32, 96, 224,
    480, 992, 2016, 4064, 8160): the copies of a record at s, s + 1250, s + 2500, s + 3750 fall c_j to a block,
    which then releases c_j·Δ of sensitivity: Σ_j c_j²ρ, at most 6ρ (two copies in the block 2017–4064, e.g.
    s = 1000: positions 1000, 2250, 3500, 4750 in blocks 4064 ×2, 2016, 8160: 4 + 1 + 1). Checked against
    dp-accounting's PLD accountant for a Gaussian mechanism of that ρ (μ = √(2ρ)) and against the group bound 16ρ."""
    from river import datasets, evaluate, metrics

    from onpair.river import PrivatePairwiseClassifier
    from streams import PHISHING_FEATURES

    params = None if mechanism == "auto" else {"mechanism": mechanism}
    model = PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0,
                                      learner_params=params)
    evaluate.progressive_val_score(list(datasets.Phishing()) * 4, model, metrics.ROCAUC())
    report = model.privacy_report(passes=4)
    level = report["record_level"]
    rho = rho_from_dp(1.0, 1e-5, "gaussian")
    assert report["n_seen"] == 5000 and report["epsilon_per_position"] <= 1.0
    assert report["epsilon_spent"] == level["epsilon"] and report["rho_spent"] == level["rho"]  # what was asked
    assert level["rho"] == pytest.approx(multiple * rho, rel=1e-6)
    assert round(level["epsilon"], 2) == epsilon
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1.0 / math.sqrt(2.0 * level["rho"])))
    assert accountant.get_epsilon(1e-5) == pytest.approx(level["epsilon"], abs=2e-3)
    group = model.privacy_report(passes=4, order="any")["record_level"]
    assert group["rho"] == pytest.approx(16 * rho, rel=1e-8) and round(group["epsilon"], 2) == 4.75
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strc = PrivatePairwiseClassifier(learner="onpairstrc", epsilon=1.0, bounds=(0.0, 1.0),
                                         features=PHISHING_FEATURES, seed=0)
    assert strc.privacy_report(passes=4)["record_level"]["bound"].startswith("group")
