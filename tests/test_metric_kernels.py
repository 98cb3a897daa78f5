"""The metric-task kernels (onpair.giga._metric_kernels) against their slow twins in tests/naive_metric.py, and
the metric task end to end through the public learners: block contract, symmetry, class labels, the
scale of the released noise and the sensitivity ledger on neighbouring streams."""

import math

import numpy as np
import pytest
import scipy.stats

import naive_metric
import naive_metric_outer
import onpair
from onpair.batch import _metric_kernels as batch_metric_kernels
from onpair.core import _metric_pair_kernels
from onpair.giga import _metric_kernels
from onpair.core.matrix_geometry import CONSTRAINTS
from onpair.core.metric_losses import METRIC_LOSSES, PAPER_TERMS
from onpair.privacy import sensitivity_ledger
from tiers import by_tier

PAPER = PAPER_TERMS.as_array()  # the papers' losses: b = 1, uniform pair weights

SETS = list(naive_metric.CONSTRAINT_NAMES)
LOSSES = ["logistic", "hinge"]


# -- helpers --------------------------------------------------------------------------------------
def _sym(rng, d, scale=1.0):
    """An exactly symmetric Gaussian matrix."""
    Z = rng.standard_normal((d, d)) * scale
    return 0.5 * (Z + Z.T)


def _stream(seed, n=60, d=4, n_classes=3):
    """Records in the box [−1/√d, 1/√d]^d (diameter 2), integer class codes, step sizes (η_1 = 0)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d)) / np.sqrt(d)
    labels = rng.integers(0, n_classes, size=n).astype(np.int64)
    steps = rng.uniform(0.0, 0.8, size=n)
    steps[0] = 0.0
    return rng, X, labels, steps


def _fifo_slots(n, size):
    return (np.arange(n) % size).astype(np.int64)


def _reservoir_slots(rng, n, size):
    """Vitter's Algorithm R: the first ``size`` records fill the slots, record t > size replaces slot
    j ~ U{0, …, t−1} when j < size (−1: not stored)."""
    slots = np.empty(n, dtype=np.int64)
    for i in range(n):
        t = i + 1
        if t <= size:
            slots[i] = t - 1
        else:
            j = int(rng.integers(0, t))
            slots[i] = j if j < size else -1
    return slots


def _slots_for(storage, rng, n, size=7):
    if storage == "full":
        return np.arange(n, dtype=np.int64), n
    if storage == "fifo":
        return _fifo_slots(n, size), size
    slots = _reservoir_slots(rng, n, size)
    assert (slots == -1).any()  # the case "not stored" is exercised
    return slots, size


def _run_kernel(X, labels, w_start, steps, lam, center, radius, constraint, loss, slots, capacity,
                release_slot=None, sigmas=None, noise=None, block_sizes=None):
    """_metric_giga over the stream cut into blocks; returns the whole state."""
    n, d = X.shape
    w = np.array(w_start, dtype=float).reshape(-1).copy()
    rows = np.zeros((capacity, _metric_pair_kernels.augmented_width(d)))
    row_labels = np.zeros(capacity, dtype=np.int64)
    if release_slot is None:
        release_slot = np.full(n, -1, dtype=np.int64)
        sigmas = np.zeros(0)
        noise = np.zeros((0, d * d))
    released = np.zeros((noise.shape[0], d * d))
    iterate_sum = np.zeros(d * d)
    n_rows = 0
    start = 0
    for size in (block_sizes or [n]):
        stop = start + size
        n_rows = _metric_kernels._metric_giga(
            X[start:stop], labels[start:stop], w, rows, row_labels, n_rows, start, steps[start:stop], lam,
            np.asarray(center, dtype=float).reshape(-1), radius, CONSTRAINTS[constraint], METRIC_LOSSES[loss].code,
            PAPER, slots[start:stop], release_slot[start:stop], np.asarray(sigmas, dtype=float), noise, released,
            iterate_sum)
        start = stop
    assert start == n
    return {"w": w, "released": released, "iterate_sum": iterate_sum, "rows": rows, "row_labels": row_labels,
            "n_rows": n_rows}


def _releases(rng, n, d, rounds):
    release_slot = np.full(n, -1, dtype=np.int64)
    release_slot[np.array(rounds) - 1] = np.arange(len(rounds))
    sigmas = rng.uniform(0.0, 0.5, len(rounds))
    noise = np.array([_sym(rng, d).reshape(-1) for _ in rounds])
    return release_slot, sigmas, noise


def _augmented(x):
    d = x.shape[0]
    return np.concatenate([np.outer(x, x)[np.triu_indices(d)], x])


def _measure(M, constraint):
    """The quantity C bounds by R: ‖M‖_F, or Σ|λ_i| for the nuclear sets."""
    if constraint in ("frobenius", "psd"):
        return float(np.linalg.norm(M))
    return float(np.abs(np.linalg.eigvalsh(M)).sum())


def _is_symmetric(flat, d):
    M = flat.reshape(d, d)
    return np.array_equal(M, M.T)


# -- the kernel against the twin ---------------------------------------------------------------------
@pytest.mark.parametrize("storage", ["full", "fifo", "reservoir"])
@pytest.mark.parametrize("constraint", SETS)
@pytest.mark.parametrize("loss", LOSSES)
def test_metric_giga_matches_naive(loss, constraint, storage):
    seed = 10 * SETS.index(constraint) + LOSSES.index(loss) + 100 * ["full", "fifo", "reservoir"].index(storage)
    rng, X, labels, steps = _stream(seed)
    n, d = X.shape
    slots, capacity = _slots_for(storage, rng, n)
    # Half the cases with a radius that binds (W is pushed out of C by the steps), half without.
    radius = 0.6 if seed % 2 == 0 else 40.0
    center = _sym(rng, d, 0.6 if radius < 1 else 0.1)  # outside C when the radius binds
    w_start = naive_metric.project(_sym(rng, d, 0.3), radius, constraint)
    release_slot, sigmas, noise = _releases(rng, n, d, [1, 2, 9, 33, n])
    W, iterates, released, iterate_sum, stored = naive_metric.metric_giga(
        X, labels, w_start, 0, steps, 0.3, center, radius, constraint, loss, slots, release_slot, sigmas, noise,
        full_history=storage == "full")
    # In two blocks, to exercise the continuation of the kernel's state too.
    state = _run_kernel(X, labels, w_start, steps, 0.3, center, radius, constraint, loss, slots, capacity,
                        release_slot, sigmas, noise, block_sizes=[23, n - 23])
    np.testing.assert_allclose(state["w"], W.reshape(-1), rtol=0, atol=1e-10)
    np.testing.assert_allclose(state["iterate_sum"], iterate_sum.reshape(-1), rtol=0, atol=1e-9)
    expected = np.array([released[r].reshape(-1) for r in range(len(sigmas))])
    np.testing.assert_allclose(state["released"], expected, rtol=0, atol=1e-10)
    # The stored records, as augmented rows.
    if storage == "full":
        assert state["n_rows"] == n
        np.testing.assert_array_equal(state["row_labels"], labels)
        np.testing.assert_allclose(state["rows"], np.array([_augmented(x) for x in X]), rtol=0, atol=0)
    else:
        assert state["n_rows"] == len(stored) == capacity
        for slot, (x, label) in stored.items():
            assert state["row_labels"][slot] == label
            np.testing.assert_array_equal(state["rows"][slot], _augmented(x))
    # The iterates lie in C (and are exactly symmetric), and the projection did bind where intended.
    assert _is_symmetric(state["w"], d)
    assert all(_is_symmetric(r, d) for r in state["released"])
    assert naive_metric.in_set(state["w"].reshape(d, d), radius, constraint)
    assert all(naive_metric.in_set(r.reshape(d, d), radius, constraint) for r in state["released"])
    if radius < 1:  # the projection bound on some round: an iterate on the boundary of C
        assert max(_measure(M, constraint) for M in iterates) == pytest.approx(radius, rel=1e-9)


@pytest.mark.parametrize("constraint", SETS)
def test_projection_binds_and_matches(constraint):
    """A large gradient step leaves C; the kernel projects exactly as the twin (one step, checked alone)."""
    rng = np.random.default_rng(7)
    d = 5
    radius = 0.2
    X = rng.uniform(-1.0, 1.0, size=(12, d)) / np.sqrt(d)
    labels = np.arange(12, dtype=np.int64) % 2
    steps = np.full(12, 3.0)
    steps[0] = 0.0
    center = 3.0 * np.eye(d)  # far outside C: the regulariser pushes out every round
    W, iterates, *_ = naive_metric.metric_giga(X, labels, np.zeros((d, d)), 0, steps, 0.5, center, radius,
                                               constraint, "logistic", None)
    state = _run_kernel(X, labels, np.zeros(d * d), steps, 0.5, center, radius, constraint, "logistic",
                        np.arange(12, dtype=np.int64), 12)
    np.testing.assert_allclose(state["w"], W.reshape(-1), rtol=0, atol=1e-10)
    assert _measure(W, constraint) == pytest.approx(radius, rel=1e-9)  # on the boundary: the projection bound


@pytest.mark.parametrize("storage", ["full", "fifo", "reservoir"])
@pytest.mark.parametrize("constraint,loss", [("frobenius", "logistic"), ("psd", "hinge"), ("nuclear", "logistic"),
                                             ("psd_nuclear", "hinge")])
def test_blocks_equal_single_records(constraint, loss, storage):
    """The streaming contract: any cut of the stream into blocks gives the identical state, bit for bit."""
    rng, X, labels, steps = _stream(5, n=50, d=3)
    n, d = X.shape
    slots, capacity = _slots_for(storage, rng, n, size=6)
    release_slot, sigmas, noise = _releases(rng, n, d, [4, 20, 50])
    center = _sym(rng, d, 0.1)
    w_start = naive_metric.project(_sym(rng, d, 0.2), 0.5, constraint)
    args = (X, labels, w_start, steps, 0.4, center, 0.5, constraint, loss, slots, capacity, release_slot, sigmas,
            noise)
    one = _run_kernel(*args, block_sizes=[n])
    single = _run_kernel(*args, block_sizes=[1] * n)
    mixed = _run_kernel(*args, block_sizes=[7, 1, 30, 2, 10])
    for other in (single, mixed):
        for key in ("w", "released", "iterate_sum", "rows", "row_labels"):
            assert np.array_equal(one[key], other[key]), key
        assert one["n_rows"] == other["n_rows"]


@pytest.mark.parametrize("constraint", SETS)
@pytest.mark.parametrize("loss", LOSSES)
def test_pair_outer_kernel_equals_rank_one_kernel(loss, constraint):
    rng, X, labels, steps = _stream(11 + SETS.index(constraint), n=45, d=4)
    n, d = X.shape
    center = _sym(rng, d, 0.1)
    w_start = naive_metric.project(_sym(rng, d, 0.2), 0.7, constraint).reshape(-1)
    state = _run_kernel(X, labels, w_start, steps, 0.3, center, 0.7, constraint, loss, np.arange(n, dtype=np.int64), n)
    w = w_start.copy()
    history = np.zeros((n, d))
    history_labels = np.zeros(n, dtype=np.int64)
    n_rows = 0
    for lo, hi in [(0, 17), (17, n)]:
        n_rows = naive_metric_outer.metric_pair_outer_giga(
            X[lo:hi], labels[lo:hi], w, history, history_labels, n_rows, lo, steps[lo:hi], 0.3, center.reshape(-1),
            0.7, CONSTRAINTS[constraint], METRIC_LOSSES[loss].code, PAPER)
    assert n_rows == n
    np.testing.assert_array_equal(history, X)
    np.testing.assert_array_equal(history_labels, labels)
    np.testing.assert_allclose(w, state["w"], rtol=0, atol=1e-12)
    M = w.reshape(d, d)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-15)  # exact symmetry: see the regression test below


# Regression: the per-pair kernel once accumulated grad[k, l] and grad[l, k] from products that round
# differently, so W drifted off exact symmetry by ulps; it now computes the upper triangle and mirrors it.
def test_pair_outer_kernel_keeps_exact_symmetry():
    rng, X, labels, steps = _stream(11, n=45, d=4)
    n, d = X.shape
    w = (0.05 * np.eye(d)).reshape(-1)
    naive_metric_outer.metric_pair_outer_giga(X, labels, w, np.zeros((n, d)), np.zeros(n, dtype=np.int64), 0, 0,
                                              steps, 0.3, w.copy(), 0.7, CONSTRAINTS["frobenius"],
                                              METRIC_LOSSES["logistic"].code, PAPER)
    assert _is_symmetric(w, d)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 40])
@pytest.mark.parametrize("loss", LOSSES)
def test_full_gradient_and_risk_match_naive(loss, n):
    rng = np.random.default_rng(n)
    d = 4
    Z = rng.uniform(-1.0, 1.0, size=(n, d)) / np.sqrt(d)
    labels = rng.integers(0, 3, size=n).astype(np.int64)
    for W in (_sym(rng, d, 0.5), np.zeros((d, d)), 3.0 * np.eye(d), -3.0 * np.eye(d)):
        grad = batch_metric_kernels._metric_full_gradient(W.reshape(-1).copy(), Z, labels, METRIC_LOSSES[loss].code, PAPER)
        expected = naive_metric.metric_full_gradient(W, Z, labels, loss)
        np.testing.assert_allclose(grad, expected.reshape(-1), rtol=0, atol=1e-10)
        assert _is_symmetric(grad, d)
        risk = _metric_pair_kernels._metric_risk(W.reshape(-1).copy(), Z, labels, METRIC_LOSSES[loss].code, PAPER)
        assert risk == pytest.approx(naive_metric.metric_risk(W, Z, labels, loss), abs=1e-12)
        # The full gradient is the derivative of the pair sum (n(n−1)/2 · risk): a finite difference.
        if n >= 2 and loss == "logistic":
            E = _sym(rng, d)
            eps = 1e-6
            pairs = n * (n - 1) / 2
            up = _metric_pair_kernels._metric_risk((W + eps * E).reshape(-1), Z, labels, METRIC_LOSSES[loss].code, PAPER)
            down = _metric_pair_kernels._metric_risk((W - eps * E).reshape(-1), Z, labels, METRIC_LOSSES[loss].code, PAPER)
            assert pairs * (up - down) / (2 * eps) == pytest.approx(float(grad @ E.reshape(-1)), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("constraint", sorted(CONSTRAINTS))
@pytest.mark.parametrize("loss", LOSSES)
def test_metric_sgd_matches_yang_read_literally(loss, constraint):
    # Yang et al.'s Alg. 1 on the metric task: the kernel groups the sum over earlier draws by record
    # (draw counts); the twin sums over the draws one by one, repeats and self-pairs included.
    rng = np.random.default_rng(7)
    n, d, T = 12, 3, 60
    X = rng.uniform(-1.0, 1.0, size=(n, d)) / np.sqrt(d)
    labels = rng.integers(0, 3, size=n).astype(np.int64)
    indices = rng.integers(0, n, size=T + 1).astype(np.int64)
    for radius in (0.05, 5.0):  # the projection binds, then it does not
        iterate_sum = np.zeros(d * d)
        w = batch_metric_kernels._metric_pairwise_sgd(X, labels, indices, T, 0.5, radius, CONSTRAINTS[constraint],
                                                 METRIC_LOSSES[loss].code, PAPER, np.zeros(d * d), iterate_sum)
        w_twin, sum_twin = naive_metric.metric_pairwise_sgd(X, labels, indices, T, 0.5, radius, constraint, loss)
        np.testing.assert_allclose(w, w_twin, rtol=0, atol=1e-10)
        np.testing.assert_allclose(iterate_sum, sum_twin, rtol=0, atol=1e-9)
        assert _is_symmetric(w, d)


@pytest.mark.parametrize("storage", ["full", "reservoir"])
@pytest.mark.parametrize("loss", LOSSES)
def test_single_class_stream(loss, storage):
    """All τ = +1: pairs of one class still have a gradient (unlike AUC), and the kernel matches the twin."""
    rng, X, _, steps = _stream(21, n=40, d=3)
    n, d = X.shape
    labels = np.full(n, 5, dtype=np.int64)
    slots, capacity = _slots_for(storage, rng, n, size=5)
    center = 0.05 * np.eye(d)
    W, *_ = naive_metric.metric_giga(X, labels, center, 0, steps, 0.5, center, 10.0, "frobenius", loss, slots,
                                     full_history=storage == "full")
    state = _run_kernel(X, labels, center, steps, 0.5, center, 10.0, "frobenius", loss, slots, capacity)
    np.testing.assert_allclose(state["w"], W.reshape(-1), rtol=0, atol=1e-10)
    # The pairs moved W away from the centre (the regulariser alone would keep W = centre).
    assert np.linalg.norm(W - center) > 1e-3
    # Same-class pairs pull the metric down (dℓ/dh > 0 for τ = +1): W is below the centre.
    assert np.trace(W - center) < 0


def test_first_round_and_empty_buffer_only_regularise():
    """Round 1 takes no step; with nothing stored (all slots −1) every round only regularises."""
    rng, X, labels, steps = _stream(31, n=10, d=3)
    n, d = X.shape
    center = _sym(rng, d, 0.2)
    w_start = np.zeros(d * d)
    slots = np.full(n, -1, dtype=np.int64)
    state = _run_kernel(X, labels, w_start, steps, 0.7, center, 100.0, "frobenius", "logistic", slots, 3)
    assert state["n_rows"] == 0
    W = np.zeros((d, d))
    for eta in steps[1:]:
        W = W - eta * 0.7 * (W - center)
    np.testing.assert_allclose(state["w"], W.reshape(-1), rtol=0, atol=1e-14)
    # A first round alone takes no step, whatever its step size.
    one = _run_kernel(X[:1], labels[:1], w_start, np.array([5.0]), 0.7, center, 100.0, "frobenius", "logistic",
                      np.zeros(1, dtype=np.int64), 1)
    assert np.array_equal(one["w"], w_start) and one["n_rows"] == 1


# -- end to end through the public learners ------------------------------------------------------------
def _capped_steps(n, lam, loss_smoothness):
    """The "capped" schedule, written out: η_1 = 0, η_t = min(2(t−1)/((t−2)λt), 2/(L+2λ)) (η_2: the cap)."""
    cap = 2.0 / (loss_smoothness + 2.0 * lam) if math.isfinite(loss_smoothness) else math.inf
    steps = np.zeros(n)
    for t in range(2, n + 1):
        paper = 2.0 * (t - 1) / ((t - 2) * lam * t) if t > 2 else math.inf
        steps[t - 1] = min(paper, cap) if math.isfinite(cap) else (paper if t > 2 else 2.0 / lam)
    return steps


def _identity_center(d, radius, constraint):
    scale = radius / (2 * d) if constraint in ("nuclear", "psd_nuclear") else radius / (2 * math.sqrt(d))
    return scale * np.eye(d)


def _box_map(X):
    """The box map of bounds=(0, 1): each feature to [−1/√d, 1/√d]."""
    d = X.shape[1]
    return (2.0 * X - 1.0) / np.sqrt(d)


@pytest.mark.parametrize("buffer", [None, ("fifo", 6)])
@pytest.mark.parametrize("constraint,loss", [("frobenius", "logistic"), ("psd", "hinge"), ("nuclear", "hinge"),
                                             ("psd_nuclear", "logistic")])
def test_giga_learner_matches_naive(constraint, loss, buffer):
    """PairwiseGIGA(task="metric") = the twin with the independently written schedule, centre and box map;
    learn_many = a learn_one loop, bit for bit."""
    rng = np.random.default_rng(3)
    n, d, lam, radius = 40, 3, 2.0, 0.8
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = rng.integers(0, 3, size=n)
    settings = dict(task="metric", loss=loss, lam=lam, radius=radius, constraint=constraint, bounds=(0, 1),
                    buffer=buffer)
    many = onpair.PairwiseGIGA(**settings).learn_many(X, y)
    one = onpair.PairwiseGIGA(**settings)
    for i in range(n):
        one.learn_one(X[i], y[i])
    assert np.array_equal(many.model, one.model)
    mixed = onpair.PairwiseGIGA(**settings).learn_many(X[:13], y[:13]).learn_one(X[13], y[13])
    mixed.learn_many(X[14:], y[14:])
    assert np.array_equal(many.model, mixed.model)
    assert many.model.shape == (d, d) and np.array_equal(many.model, many.model.T)
    steps = _capped_steps(n, lam, METRIC_LOSSES[loss].smoothness())
    center = _identity_center(d, radius, constraint)
    slots = _fifo_slots(n, buffer[1]) if buffer else np.arange(n)
    W, *_ = naive_metric.metric_giga(_box_map(X), y, center, 0, steps, lam, center, radius, constraint, loss,
                                     slots, full_history=buffer is None)
    np.testing.assert_allclose(many.model, W, rtol=0, atol=1e-10)


@pytest.mark.parametrize("buffer", [None, ("reservoir", 8)])
def test_reservoir_learner_blocks_equal_single_records(buffer):
    rng = np.random.default_rng(4)
    X = rng.uniform(0.0, 1.0, size=(60, 3))
    y = rng.integers(0, 4, size=60)
    settings = dict(task="metric", lam=3.0, radius=0.5, constraint="psd", bounds=(0, 1), buffer=buffer, seed=9)
    many = onpair.PairwiseGIGA(**settings).learn_many(X, y)
    one = onpair.PairwiseGIGA(**settings)
    for i in range(60):
        one.learn_one(X[i], y[i])
    assert np.array_equal(many.model, one.model)


@pytest.mark.parametrize("constraint", SETS)
def test_private_releases_are_symmetric_and_in_the_set(constraint):
    rng = np.random.default_rng(6)
    n, d, radius = 200, 4, 0.3
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = rng.integers(0, 3, size=n)
    learner = onpair.OnPairStrC(task="metric", constraint=constraint, radius=radius, bounds=(0, 1), n_features=d,
                                n=n, seed=1, epsilon=0.5)
    before = learner.model
    assert before.shape == (d, d) and naive_metric.in_set(before, radius, constraint)
    learner.learn_many(X[:100], y[:100])
    for i in range(100, n):
        learner.learn_one(X[i], y[i])
    released = learner.released_models
    report = learner.privacy_report()
    assert released.shape == (len(report["releases"]), d, d) and released.shape[0] >= 2
    for M in released:
        assert np.array_equal(M, M.T)
        assert naive_metric.in_set(M, radius, constraint)
    assert np.array_equal(learner.model, released[-1])
    assert report["rho_spent"] <= report["rho_budget"] * (1 + 1e-12)
    # The noise is large at this ε: the projection binds on some release (else the check above is weak).
    assert max(_measure(M, constraint) for M in released) == pytest.approx(radius, rel=1e-6)
    T = learner.transform(X[:5])
    assert T.shape[0] == 5


def test_class_labels_strings_ints_and_many_classes():
    """Only equality of labels matters: any names, any number of classes, a consistent relabelling gives
    the identical model; 1, 1.0, True and np.int64(1) are one class."""
    rng = np.random.default_rng(8)
    n = 50
    X = rng.uniform(0.0, 1.0, size=(n, 3))
    codes = rng.integers(0, 5, size=n)
    names = np.array(["setosa", "versicolor", "virginica", "x", "y"])
    settings = dict(task="metric", lam=2.0, radius=0.5, bounds=(0, 1))
    by_int = onpair.PairwiseGIGA(**settings).learn_many(X, codes).model
    by_str = onpair.PairwiseGIGA(**settings).learn_many(X, names[codes]).model
    by_list = onpair.PairwiseGIGA(**settings).learn_many(X, [str(c) + "!" for c in codes]).model
    permuted = onpair.PairwiseGIGA(**settings).learn_many(X, (codes * 3 + 7) % 5 + 100).model
    assert np.array_equal(by_int, by_str) and np.array_equal(by_int, by_list) and np.array_equal(by_int, permuted)
    one = onpair.PairwiseGIGA(**settings)
    for i in range(n):
        one.learn_one(X[i], str(names[codes[i]]))
    assert np.array_equal(one.model, by_int)
    # Merging two classes changes the model (the labels are used).
    merged = onpair.PairwiseGIGA(**settings).learn_many(X, np.minimum(codes, 3)).model
    assert not np.array_equal(merged, by_int)
    # Equivalent spellings of one class.
    spellings = [1, 1.0, True, np.int64(1), np.float32(1.0)]
    y_mixed = [spellings[i % len(spellings)] if c == 1 else int(c) for i, c in enumerate(np.minimum(codes, 1))]
    a = onpair.PairwiseGIGA(**settings).learn_many(X, y_mixed).model
    b = onpair.PairwiseGIGA(**settings).learn_many(X, np.minimum(codes, 1)).model
    assert np.array_equal(a, b)
    # The private learner accepts the same labels.
    private = onpair.OnPairStrC(task="metric", radius=0.5, bounds=(0, 1), n=n, seed=0).learn_many(X, names[codes])
    assert private.released_models.shape[1:] == (3, 3)


def test_released_noise_has_the_gaussian_mechanism_scale():
    """Over many seeds with one internal state (same stream, data-independent start): (released − W)/σ is
    exactly symmetric with N(0, 1) on the diagonal and N(0, 1/2) off it (the Frobenius-isotropic symmetric
    noise). The radius is large, so the projection never binds."""
    rng = np.random.default_rng(12)
    n, d, lam, radius = 25, 3, 4.0, 50.0
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = rng.integers(0, 3, size=n)
    settings = dict(task="metric", lam=lam, radius=radius, bounds=(0, 1))
    W = onpair.PairwiseGIGA(**settings).learn_many(X, y).model
    seeds = by_tier(fast=200, full=600)
    samples = np.empty((seeds, d, d))
    sigma = None
    for seed in range(seeds):
        learner = onpair.OnPairStrC(**settings, n=n, release_at=[n], seed=seed).learn_many(X, y)
        (release,) = learner.privacy_report()["releases"]
        assert sigma is None or release["sigma"] == sigma  # data-independent: one σ for every seed
        sigma = release["sigma"]
        M = learner.model
        assert np.linalg.norm(M) < radius * 0.9  # the projection does not bind
        samples[seed] = (M - W) / sigma
    assert np.array_equal(samples, np.transpose(samples, (0, 2, 1)))
    assert sigma == pytest.approx(release["sensitivity"] * (1 + 1e-9) / math.sqrt(2 * release["rho"]), rel=1e-12)
    diagonal = samples[:, np.arange(d), np.arange(d)].reshape(-1)
    iu = np.triu_indices(d, 1)
    off = samples[:, iu[0], iu[1]].reshape(-1)
    alpha = 0.001
    tests = 4  # Bonferroni over the four tests below
    # Variances: Σ x²/v ~ χ²(k) under the claimed variance v (two-sided).
    for values, variance in ((diagonal, 1.0), (off, 0.5)):
        stat = float(np.sum(values**2) / variance)
        k = values.size
        p = 2 * min(scipy.stats.chi2.cdf(stat, k), scipy.stats.chi2.sf(stat, k))
        assert p > alpha / tests, (variance, np.mean(values**2))
        # Means: a z-test.
        z = float(np.mean(values) / math.sqrt(variance / k))
        assert 2 * scipy.stats.norm.sf(abs(z)) > alpha / tests
    # Power: the off-diagonal variance is clearly not 1, the diagonal one clearly not 1/2.
    assert np.mean(off**2) < 0.7 < np.mean(diagonal**2)
    # Entries are uncorrelated (in particular the diagonal and the off-diagonal ones).
    flat = np.concatenate([samples[:, np.arange(d), np.arange(d)], samples[:, iu[0], iu[1]]], axis=1)
    corr = np.corrcoef(flat.T)
    assert np.max(np.abs(corr - np.eye(corr.shape[0]))) < 4.5 / math.sqrt(seeds)


# -- sensitivity: neighbouring streams against the ledger -------------------------------------------------
def _neighbour(rng, X, y, n_classes):
    """Replace one record at a random position: often a corner of the box, often with another label
    (sometimes a class never seen before)."""
    X2, y2 = X.copy(), y.copy()
    j = int(rng.integers(0, X.shape[0]))
    X2[j] = rng.integers(0, 2, size=X.shape[1]).astype(float) if rng.random() < 0.6 else rng.uniform(0, 1, X.shape[1])
    u = rng.random()
    if u < 0.4:
        y2[j] = (y[j] + 1 + rng.integers(0, n_classes - 1)) % n_classes
    elif u < 0.6:
        y2[j] = 99  # a new class
    return X2, y2


@pytest.mark.parametrize("buffer,constraint,lam,radius", [
    (None, "frobenius", 8.0, 0.25), (None, "psd", 8.0, 0.25), (None, "psd_nuclear", 30.0, 0.5),
    (("fifo", 4), "frobenius", 8.0, 0.25), (("reservoir", 5), "nuclear", 8.0, 0.25),
    (("reservoir", 3), "frobenius", 20.0, 0.1)])
def test_neighbouring_streams_stay_within_the_ledger(buffer, constraint, lam, radius):
    """‖W_t − W'_t‖_F ≤ U_t at every round, for many neighbouring pairs of streams (one record replaced,
    labels changed too), with U_t the ledger of OnPairStrC with the same settings."""
    rng = np.random.default_rng([SETS.index(constraint), 0 if buffer is None else buffer[1], int(lam)])
    n, d = 24, 2
    settings = dict(task="metric", lam=lam, radius=radius, bounds=(0, 1), constraint=constraint, buffer=buffer)
    loss = METRIC_LOSSES["logistic"]
    steps = _capped_steps(n, lam, loss.smoothness())
    diameter = (math.sqrt(2) if constraint in ("psd", "psd_nuclear") else 2.0) * radius
    ledger = sensitivity_ledger(steps, lipschitz=loss.lipschitz(radius), smoothness=loss.smoothness() + lam,
                                strong_convexity=lam, diameter=diameter,
                                buffer_size=None if buffer is None else buffer[1],
                                pair_change=loss.pair_change(radius))
    X0 = rng.uniform(0.0, 1.0, size=(n, d))
    private = onpair.OnPairStrC(**settings, n=n, seed=0).learn_many(X0, rng.integers(0, 3, size=n))
    assert private.privacy_report()["sensitivity_now"] == pytest.approx(ledger[-1], rel=1e-12)
    assert ledger[-1] < diameter  # the ledger is informative here (not capped at diam(C))
    worst = 0.0
    for trial in range(120):
        n_classes = 2 + trial % 3
        X = rng.uniform(0.0, 1.0, size=(n, d))
        if trial % 2:
            X = np.round(X)  # records on the corners of the box: the extreme pairs
        y = rng.integers(0, n_classes, size=n)
        X2, y2 = _neighbour(rng, X, y, n_classes)
        seed = int(rng.integers(0, 2**31))  # the same public randomness (reservoir slots) in both runs
        a = onpair.PairwiseGIGA(**settings, seed=seed)
        b = onpair.PairwiseGIGA(**settings, seed=seed)
        for i in range(n):
            a.learn_one(X[i], y[i])
            b.learn_one(X2[i], y2[i])
            distance = float(np.linalg.norm(a.model - b.model))
            assert distance <= ledger[i] * (1 + 1e-9) + 1e-15, (trial, i + 1, distance, ledger[i])
            if ledger[i] > 0:
                worst = max(worst, distance / ledger[i])
    assert worst > 0.05  # the neighbouring streams did differ measurably
