"""Constraint sets of the metric task (:mod:`onpair.core.matrix_geometry`): projections, diameters, noise.

Everything the projections are checked against is computed here, independently of the module:

* membership with numpy's ``eigvalsh`` / ``svd`` (the nuclear norm of a symmetric matrix is the sum of
  its singular values);
* optimality twice: against a numerical solver (``scipy.optimize.minimize`` / SLSQP on smooth
  parametrisations of each set, several starts) and with the variational inequality
  ⟨A − P, Y − P⟩ ≤ 0 for points Y of the set generated here, never with the function under test;
* the ℓ1-ball kernel against a bisection on the soft threshold;
* the PSD part against (W + |W|)/2 with |W| from scipy's polar decomposition (an SVD, not ``eigh``).

Large ratios ‖A‖/R are kept to ≤ 1e3 in the generic property tests of the nuclear sets; the
"membership" section has separate regression tests at ratios up to 1e16 (the soft threshold λ − θ
loses the low digits of λ there, which a final rescale into the set repairs).
"""

import contextlib
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

try:  # SLSQP calls BLAS on tiny matrices; threaded BLAS on a busy machine can slow it down 30-fold
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

from onpair.core.matrix_geometry import (CONSTRAINTS, _project_l1_ball, _project_matrix, constraint_code,
                                         constraint_diameter, metric_factor, project_matrix, psd_part,
                                         random_symmetric_point, symmetric_noise)

SETS = ["frobenius", "psd", "nuclear", "psd_nuclear"]
PSD_SETS = {"psd", "psd_nuclear"}

seeds = st.integers(0, 2**32 - 1)
dims = st.integers(1, 6)
radii = st.floats(1e-2, 1e2)
# ‖A‖_F / R: well inside, on the boundary's scale, and far outside the set.
ratios = st.sampled_from([0.0, 1e-3, 0.1, 0.5, 0.99, 1.0, 1.01, 2.0, 10.0, 1e3])


# -- independent helpers ------------------------------------------------------------------------------
def sym(rng, d):
    """An exactly symmetric standard Gaussian matrix."""
    Z = rng.standard_normal((d, d))
    return 0.5 * (Z + Z.T)


def psd_matrix(rng, d, rank=None):
    """An exactly symmetric PSD matrix B Bᵀ of the given rank (full rank by default)."""
    B = rng.standard_normal((d, d if rank is None else rank))
    Y = B @ B.T
    return 0.5 * (Y + Y.T)


def nuclear_norm(M):
    return float(np.sum(np.linalg.svd(M, compute_uv=False)))


def set_measure(M, name):
    """The quantity that the set bounds by R: ‖·‖_F, ‖·‖_* or the trace."""
    if name in ("frobenius", "psd"):
        return float(np.linalg.norm(M))
    if name == "nuclear":
        return nuclear_norm(M)
    return float(np.trace(M))


def assert_in_set(M, radius, name):
    d = M.shape[0]
    assert M.shape == (d, d)
    assert np.all(np.isfinite(M))
    scale = max(1.0, float(np.max(np.abs(M))))
    assert np.max(np.abs(M - M.T)) <= 1e-12 * scale
    assert set_measure(M, name) <= radius * (1 + 1e-12)
    if name in PSD_SETS:
        assert np.linalg.eigvalsh(M).min() >= -1e-12 * max(1.0, radius)


def point_of_set(rng, d, radius, name, *, strict=False):
    """A point of the set built without the module: a random direction scaled into the set.

    ``strict``: well inside (measure ≤ 0.9 R, and positive definite with a margin for the PSD sets), so
    that rounding in any eigen-decomposition cannot put it outside. Otherwise a third of the points lie
    on the boundary and some are extreme points (rank one).
    """
    u = rng.uniform(0.05, 0.9) if strict else (1.0 if rng.random() < 1 / 3 else rng.random())
    if name in PSD_SETS:
        if strict:
            Y = psd_matrix(rng, d) + 0.5 * np.eye(d)
        else:
            Y = psd_matrix(rng, d, rank=int(rng.integers(1, d + 1)))
    elif not strict and rng.random() < 0.25:
        v = rng.standard_normal(d)
        Y = np.outer(v, v) * (1.0 if rng.random() < 0.5 else -1.0)  # ± an extreme point direction
        Y = 0.5 * (Y + Y.T)
    else:
        Y = sym(rng, d)
    measure = set_measure(Y, name)
    if measure == 0.0:
        return np.zeros((d, d))
    return Y * (radius * u / measure)


def random_matrix(rng, d, radius, ratio):
    """A symmetric matrix of Frobenius norm ratio·R with a random spectrum (mixed signs)."""
    S = sym(rng, d)
    norm = np.linalg.norm(S)
    return S * (ratio * radius / norm) if norm > 0 else S


# -- 1. membership, idempotence, non-expansiveness, identity inside -----------------------------------
@pytest.mark.parametrize("name", SETS)
@settings(max_examples=60, deadline=None)
@given(seed=seeds, d=dims, radius=radii, ratio=ratios)
def test_projection_lands_in_the_set_and_is_idempotent(name, seed, d, radius, ratio):
    rng = np.random.default_rng(seed)
    A = random_matrix(rng, d, radius, ratio)
    P = project_matrix(A, radius, name)
    assert_in_set(P, radius, name)
    again = project_matrix(P, radius, name)
    np.testing.assert_allclose(again, P, rtol=0, atol=1e-12 * max(1.0, radius))
    assert not np.shares_memory(P, A)


@pytest.mark.parametrize("name", ["frobenius", "psd"])
@settings(max_examples=30, deadline=None)
@given(seed=seeds, d=dims, radius=radii, ratio=st.sampled_from([1e6, 1e9, 1e12]))
def test_scaling_projections_land_in_the_set_far_outside(name, seed, d, radius, ratio):
    # The Frobenius and PSD projections end with a rescaling, which keeps full relative accuracy.
    A = random_matrix(np.random.default_rng(seed), d, radius, ratio)
    assert_in_set(project_matrix(A, radius, name), radius, name)


@pytest.mark.parametrize("name", SETS)
@settings(max_examples=60, deadline=None)
@given(seed=seeds, d=dims, radius=radii, ratio_a=ratios, ratio_b=ratios,
       offset=st.sampled_from([None, 1e-8, 1e-3, 1.0]))
def test_projection_is_non_expansive(name, seed, d, radius, ratio_a, ratio_b, offset):
    rng = np.random.default_rng(seed)
    A = random_matrix(rng, d, radius, ratio_a)
    if offset is None:
        B = random_matrix(rng, d, radius, ratio_b)
    else:  # a nearby pair: local Lipschitz constant ≤ 1
        B = A + offset * radius * sym(rng, d)
    distance = np.linalg.norm(project_matrix(A, radius, name) - project_matrix(B, radius, name))
    assert distance <= np.linalg.norm(A - B) + 1e-10


@pytest.mark.parametrize("name", SETS)
@settings(max_examples=40, deadline=None)
@given(seed=seeds, d=dims, radius=radii)
def test_a_point_strictly_inside_is_returned_bit_for_bit(name, seed, d, radius):
    Y = point_of_set(np.random.default_rng(seed), d, radius, name, strict=True)
    P = project_matrix(Y, radius, name)
    assert np.array_equal(P, Y)
    assert P is not Y


@pytest.mark.parametrize("name", SETS)
def test_kernel_projects_in_place_like_the_wrapper(name):
    rng = np.random.default_rng(11)
    for d in (1, 2, 4, 7):
        for ratio in (0.3, 5.0):
            A = random_matrix(rng, d, 1.5, ratio)
            flat = A.reshape(-1).copy()
            result = _project_matrix(flat, d, 1.5, constraint_code(name))
            assert result is None
            assert np.array_equal(flat.reshape(d, d), project_matrix(A, 1.5, name))


def test_projection_does_not_modify_its_input_and_accepts_lists():
    A = np.array([[3.0, 1.0], [1.0, -4.0]])
    before = A.copy()
    for name in SETS:
        project_matrix(A, 1.0, name)
    assert np.array_equal(A, before)
    np.testing.assert_array_equal(project_matrix([[0.5, 0.0], [0.0, 0.25]], 1.0, "psd"),
                                  [[0.5, 0.0], [0.0, 0.25]])


def test_hand_computed_projections():
    # diag(3, -4): Frobenius → /5; PSD → clip to diag(3, 0) then scale to norm 1;
    # nuclear (R = 1): soft-threshold |λ| = (3, 4) at θ = 3 → diag(0, -1); PSD-nuclear: diag(1, 0).
    A = np.diag([3.0, -4.0])
    np.testing.assert_allclose(project_matrix(A, 1.0, "frobenius"), np.diag([0.6, -0.8]), atol=1e-15)
    np.testing.assert_allclose(project_matrix(A, 1.0, "psd"), np.diag([1.0, 0.0]), atol=1e-15)
    np.testing.assert_allclose(project_matrix(A, 1.0, "nuclear"), np.diag([0.0, -1.0]), atol=1e-15)
    np.testing.assert_allclose(project_matrix(A, 1.0, "psd_nuclear"), np.diag([1.0, 0.0]), atol=1e-15)
    # A rotated copy: the projections commute with orthogonal similarity.
    c, s = math.cos(0.3), math.sin(0.3)
    Q = np.array([[c, -s], [s, c]])
    B = Q @ np.diag([3.0, 1.0]) @ Q.T
    B = 0.5 * (B + B.T)
    # nuclear, R = 1: |λ| = (3, 1), θ = 2 → λ = (1, 0)
    np.testing.assert_allclose(project_matrix(B, 1.0, "nuclear"), Q @ np.diag([1.0, 0.0]) @ Q.T, atol=1e-14)
    # nuclear, R = 3: θ = 0.5 → λ = (2.5, 0.5)
    np.testing.assert_allclose(project_matrix(B, 3.0, "nuclear"), Q @ np.diag([2.5, 0.5]) @ Q.T, atol=1e-14)


@pytest.mark.parametrize("name", SETS)
@settings(max_examples=25, deadline=None)
@given(seed=seeds, d=dims, radius=radii)
def test_random_symmetric_point_lies_in_the_set(name, seed, d, radius):
    rng = np.random.default_rng(seed)
    flat = random_symmetric_point(rng, d, radius, constraint_code(name))
    assert flat.shape == (d * d,)
    assert_in_set(flat.reshape(d, d), radius, name)
    again = random_symmetric_point(np.random.default_rng(seed), d, radius, constraint_code(name))
    assert np.array_equal(flat, again)


# Regression: the nuclear-ball projections soft-threshold the eigenvalues as λ − θ with θ ≈ λ − R, an
# absolute error of about ulp(max|λ|), ≈ 1e-16·max|λ|/R relative to R; once R < ulp(max|λ|) the
# threshold loop accepted no candidate and returned the matrix unchanged. Fixed by starting θ at
# max|λ| − R and rescaling the thresholded spectrum into the set.

@pytest.mark.parametrize("name", ["nuclear", "psd_nuclear"])
@pytest.mark.parametrize("diagonal, radius", [
    ([1e16, 5e15], 1.0),          # θ stays 0: returned unchanged (nuclear norm 1.5e16)
    ([1e8, 5e7], 1e-8),           # result has nuclear norm 1.49e-8: 49 % over R
    ([3.7e6, 1.1e6], 0.0123),     # ratio ~3e8: nuclear norm exceeds R by ~5e-9·R
])
def test_nuclear_projection_stays_in_the_set_for_large_ratios(name, diagonal, radius):
    P = project_matrix(np.diag(diagonal), radius, name)
    assert set_measure(P, name) <= radius * (1 + 1e-12)


# -- 2. brute force: a numerical solver on smooth parametrisations of each set -------------------------
def _brute_force_projection(A, radius, name, rng, starts=6):
    """argmin ‖X − A‖_F² over the set, by SLSQP with analytic gradients; the best of several starts.

    frobenius:    X symmetric from its upper triangle u, constraint R² − ‖X‖_F² ≥ 0 (a convex problem).
    psd:          X = B Bᵀ (B d×d), constraint R² − ‖B Bᵀ‖_F² ≥ 0.
    psd_nuclear:  X = B Bᵀ, constraint R − ‖B‖_F² ≥ 0 (trace B Bᵀ = ‖B‖_F²).
    nuclear:      X = B Bᵀ − C Cᵀ, constraint R − ‖B‖_F² − ‖C‖_F² ≥ 0 (‖X‖_* = min tr P + tr N over
                  X = P − N with P, N ⪰ 0, so these X fill exactly the nuclear ball).
    """
    d = A.shape[0]
    options = {"ftol": 1e-15, "maxiter": 500}
    if name == "frobenius":
        iu = np.triu_indices(d)
        weight = np.where(iu[0] == iu[1], 1.0, 2.0)  # ‖X‖_F² = Σ weight·u²
        a = A[iu]

        def to_matrix(u):
            X = np.zeros((d, d))
            X[iu] = u
            return X + np.triu(X, 1).T

        fun = lambda u: (float(np.sum(weight * (u - a) ** 2)), 2 * weight * (u - a))
        cons = [{"type": "ineq", "fun": lambda u: radius**2 - np.sum(weight * u * u),
                 "jac": lambda u: -2 * weight * u}]
        n = iu[0].size
    elif name in ("psd", "psd_nuclear"):
        def to_matrix(b):
            B = b.reshape(d, d)
            return B @ B.T

        def fun(b):
            B = b.reshape(d, d)
            E = B @ B.T - A
            return float(np.sum(E * E)), (4 * E @ B).ravel()

        if name == "psd":
            def g(b):
                X = to_matrix(b)
                return radius**2 - np.sum(X * X)

            def g_jac(b):
                B = b.reshape(d, d)
                return (-4 * (B @ B.T) @ B).ravel()
        else:
            g = lambda b: radius - np.sum(b * b)
            g_jac = lambda b: -2 * b
        cons = [{"type": "ineq", "fun": g, "jac": g_jac}]
        n = d * d
    else:  # nuclear
        def to_matrix(z):
            B, C = z[: d * d].reshape(d, d), z[d * d:].reshape(d, d)
            return B @ B.T - C @ C.T

        def fun(z):
            B, C = z[: d * d].reshape(d, d), z[d * d:].reshape(d, d)
            E = B @ B.T - C @ C.T - A
            return float(np.sum(E * E)), np.concatenate([(4 * E @ B).ravel(), (-4 * E @ C).ravel()])

        cons = [{"type": "ineq", "fun": lambda z: radius - np.sum(z * z), "jac": lambda z: -2 * z}]
        n = 2 * d * d

    best = None
    for _ in range(starts):
        x0 = rng.standard_normal(n)
        x0 *= rng.uniform(0.2, 0.9) * math.sqrt(radius) / np.linalg.norm(x0)  # a feasible start
        if name == "frobenius":
            x0 *= math.sqrt(radius)
        with threadpool_limits(1) if threadpool_limits is not None else contextlib.nullcontext():
            result = scipy.optimize.minimize(fun, x0, jac=True, method="SLSQP", constraints=cons, options=options)
        X = to_matrix(result.x)
        X = 0.5 * (X + X.T)
        if set_measure(X, name) > radius * (1 + 1e-7):  # only (numerically) feasible candidates count
            continue
        value = float(np.sum((X - A) ** 2))
        if best is None or value < best[0]:
            best = (value, X)
    assert best is not None, "the brute-force solver found no feasible point"
    return best


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("d", [2, 3])
def test_projection_matches_a_numerical_solver(name, d):
    rng = np.random.default_rng(1000 + 10 * d + SETS.index(name))
    radius = 1.0
    cases = [random_matrix(rng, d, radius, ratio) for ratio in (0.5, 1.5, 3.0, 6.0)]
    cases.append(-psd_matrix(rng, d) - 0.1 * np.eye(d))       # negative definite
    cases.append(np.diag(np.linspace(2.0, -1.0, d)))           # mixed signs, spectrum known
    for A in cases:
        P = project_matrix(A, radius, name)
        value = float(np.sum((P - A) ** 2))
        bf_value, X = _brute_force_projection(A, radius, name, rng)
        assert value <= bf_value + 1e-6
        np.testing.assert_allclose(P, X, rtol=0, atol=1e-4)


# -- 3. variational inequality: ⟨A − P, Y − P⟩ ≤ 0 for every Y in the set ------------------------------
def max_variational_gap(A, P, points):
    """max over Y of ⟨A − P, Y − P⟩_F, in units of the rounding that any floating-point projection has.

    ⟨A − P, Y − P⟩ ≤ 0 for all Y of a closed convex set characterises P = Π(A). In floating point an
    eigen-decomposition of A is exact only to δ ≈ ε‖A‖_F (backward error), so a computed P is off by up
    to ~δ and the inner product by up to ~δ(‖A − P‖ + ‖Y − P‖). That allowance (times 10) is taken off the
    gap, which is then divided by max(1, ‖A − P‖‖Y − P‖): a cosine for well-separated Y, the absolute
    gap for inputs of order one (where the allowance is ~1e-14).
    """
    residual = A - P
    delta = np.finfo(float).eps * float(np.linalg.norm(A))
    worst = -np.inf
    for Y in points:
        inner = float(np.sum(residual * (Y - P)))
        r, s = float(np.linalg.norm(residual)), float(np.linalg.norm(Y - P))
        worst = max(worst, (inner - 10.0 * delta * (r + s)) / max(1.0, r * s))
    return worst


@pytest.mark.parametrize("name", SETS)
@settings(max_examples=30, deadline=None)
@given(seed=seeds, d=dims, radius=st.floats(0.1, 10.0), ratio=ratios)
def test_variational_inequality_certifies_the_projection(name, seed, d, radius, ratio):
    rng = np.random.default_rng(seed)
    A = random_matrix(rng, d, radius, ratio)
    P = project_matrix(A, radius, name)
    points = [point_of_set(rng, d, radius, name) for _ in range(150)]
    assert max_variational_gap(A, P, points) <= 1e-9


@pytest.mark.parametrize("name", ["psd", "nuclear", "psd_nuclear"])
def test_variational_inequality_has_teeth(name):
    # A point of the set that is not the projection (e.g. plain rescaling into the set): the certificate
    # must reject it (otherwise the test above would prove nothing).
    rng = np.random.default_rng(5)
    A = np.diag([2.0, 0.5, -1.0])
    # The projections are diag(0.970, 0.243, 0) (psd: clip, then scale), diag(1, 0, 0) (nuclear: θ = 1)
    # and diag(1, 0, 0) (psd_nuclear: θ = 1); the wrong answers below are points of the set near them.
    wrong = {"psd": np.diag([1.0, 0.0, 0.0]), "nuclear": A / 3.5, "psd_nuclear": np.diag([0.8, 0.2, 0.0])}[name]
    assert_in_set(wrong, 1.0, name)
    true = {"psd": np.diag([2.0, 0.5, 0.0]) / math.sqrt(4.25), "nuclear": np.diag([1.0, 0.0, 0.0]),
            "psd_nuclear": np.diag([1.0, 0.0, 0.0])}[name]
    # Y = the true projection always exposes a wrong W: ⟨A − W, P − W⟩ ≥ ‖P − W‖² > 0.
    points = [point_of_set(rng, 3, 1.0, name) for _ in range(300)] + [true]
    assert max_variational_gap(A, wrong, points) > 1e-3
    np.testing.assert_allclose(project_matrix(A, 1.0, name), true, atol=1e-15)
    assert max_variational_gap(A, project_matrix(A, 1.0, name), points) <= 1e-9


# -- 4. the ℓ1-ball kernel against a bisection on the soft threshold ----------------------------------
def l1_projection_by_bisection(v, radius, nonnegative):
    magnitude = np.maximum(v, 0.0) if nonnegative else np.abs(v)
    sign = np.ones_like(v) if nonnegative else np.sign(v)
    if magnitude.sum() <= radius:
        return sign * magnitude
    low, high = 0.0, float(magnitude.max())  # l1(θ) = Σ (|v| − θ)₊ falls from > R to 0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if np.maximum(magnitude - mid, 0.0).sum() > radius:
            low = mid
        else:
            high = mid
    return sign * np.maximum(magnitude - 0.5 * (low + high), 0.0)


@pytest.mark.parametrize("nonnegative", [False, True])
@settings(max_examples=150, deadline=None)
@given(v=arrays(np.float64, st.integers(1, 20), elements=st.floats(-1e3, 1e3)),
       radius=st.floats(1e-2, 1e3))
def test_l1_ball_projection_matches_bisection(nonnegative, v, radius):
    expected = l1_projection_by_bisection(v, radius, nonnegative)
    out = v.copy()
    _project_l1_ball(out, radius, nonnegative)
    scale = max(1.0, float(np.max(np.abs(v))))
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-9 * scale)
    assert np.sum(np.abs(out)) <= radius * (1 + 1e-9) + 1e-12 * scale
    if nonnegative:
        assert np.all(out >= 0.0)
    if np.sum(np.maximum(v, 0.0) if nonnegative else np.abs(v)) <= radius:
        # inside: unchanged (apart from the negatives of the non-negative set, which become zero)
        assert np.array_equal(out, np.maximum(v, 0.0) if nonnegative else v)


def test_l1_ball_projection_small_cases_by_hand():
    v = np.array([3.0, -1.0, 0.5])
    _project_l1_ball(v, 2.0, False)  # θ = 1: (2, 0, 0)
    np.testing.assert_allclose(v, [2.0, 0.0, 0.0], atol=1e-15)
    v = np.array([3.0, -2.0, 2.0])
    _project_l1_ball(v, 3.0, False)  # θ = 4/3: (5/3, -2/3, 2/3)
    np.testing.assert_allclose(v, [5 / 3, -2 / 3, 2 / 3], atol=1e-15)
    v = np.array([3.0, -2.0, 2.0])
    _project_l1_ball(v, 3.0, True)   # the negative is dropped; θ = 1: (2, 0, 1)
    np.testing.assert_allclose(v, [2.0, 0.0, 1.0], atol=1e-15)
    v = np.array([-3.0, -2.0])
    _project_l1_ball(v, 1.0, True)   # all negative: 0
    np.testing.assert_array_equal(v, [0.0, 0.0])


# -- 5. diameters ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SETS)
def test_constraint_diameter_is_attained_and_never_exceeded(name):
    radius = 2.5
    code = constraint_code(name)
    diameter = constraint_diameter(code, radius)
    expected = math.sqrt(2.0) * radius if name in PSD_SETS else 2.0 * radius
    assert diameter == pytest.approx(expected, rel=1e-15)

    d = 4
    rng = np.random.default_rng(21)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    u, v = Q[:, 0], Q[:, 1]
    if name in PSD_SETS:  # two orthogonal rank-one PSD matrices of norm (and trace) R
        A, B = radius * np.outer(u, u), radius * np.outer(v, v)
    else:                 # ±R u uᵀ: Frobenius and nuclear norm R
        A, B = radius * np.outer(u, u), -radius * np.outer(u, u)
    A, B = 0.5 * (A + A.T), 0.5 * (B + B.T)
    for M in (A, B):
        assert_in_set(M, radius, name)
    assert np.linalg.norm(A - B) == pytest.approx(diameter, rel=1e-12)

    worst = 0.0
    for _ in range(2000):
        kind = rng.integers(3)
        if kind == 0:
            X, Y = (point_of_set(rng, d, radius, name) for _ in range(2))
        elif kind == 1:
            X, Y = (random_symmetric_point(rng, d, radius, code).reshape(d, d) for _ in range(2))
        else:  # projections of far-away points: on the boundary, often extreme points
            X, Y = (project_matrix(random_matrix(rng, d, radius, 50.0), radius, name) for _ in range(2))
        worst = max(worst, float(np.linalg.norm(X - Y)))
    assert worst <= diameter * (1 + 1e-12)
    assert worst >= 0.8 * diameter  # the random pairs do get near it


def test_constraint_code_and_names():
    assert {name: constraint_code(name) for name in SETS} == CONSTRAINTS
    assert len(set(CONSTRAINTS.values())) == 4
    for bad in ("Frobenius", "l1", "", None, 0, ["psd"]):
        with pytest.raises(ValueError, match="constraint must be one of"):
            constraint_code(bad)


# -- 6. symmetric noise -----------------------------------------------------------------------------------
ALPHA = 0.001


def chi2_two_sided_p(statistic, dof):
    return 2.0 * min(scipy.stats.chi2.cdf(statistic, dof), scipy.stats.chi2.sf(statistic, dof))


def test_symmetric_noise_shape_symmetry_and_determinism():
    N = symmetric_noise(np.random.default_rng(3), 5, 4)
    assert N.shape == (5, 16)
    M = N.reshape(5, 4, 4)
    assert np.array_equal(M, np.transpose(M, (0, 2, 1)))
    assert np.array_equal(N, symmetric_noise(np.random.default_rng(3), 5, 4))
    assert not np.array_equal(N, symmetric_noise(np.random.default_rng(4), 5, 4))
    assert symmetric_noise(np.random.default_rng(3), 0, 4).shape == (0, 16)


def test_symmetric_noise_has_the_right_variances():
    count, d = 20000, 4
    M = symmetric_noise(np.random.default_rng(20240601), count, d).reshape(count, d, d)
    diag = M[:, np.arange(d), np.arange(d)].ravel()
    iu = np.triu_indices(d, 1)
    off = M[:, iu[0], iu[1]].ravel()
    # Σx²/σ² ~ χ²(n) under the claimed variances σ² = 1 (diagonal) and 1/2 (off the diagonal).
    assert chi2_two_sided_p(np.sum(diag**2) / 1.0, diag.size) >= ALPHA
    assert chi2_two_sided_p(np.sum(off**2) / 0.5, off.size) >= ALPHA
    # mean zero (normal approximation)
    assert 2 * scipy.stats.norm.sf(abs(diag.mean()) * math.sqrt(diag.size)) >= ALPHA
    assert 2 * scipy.stats.norm.sf(abs(off.mean()) * math.sqrt(off.size / 0.5)) >= ALPHA
    # distinct free coordinates are uncorrelated: diagonal vs off-diagonal, two off-diagonal entries
    for x, y in ((M[:, 0, 0], M[:, 0, 1]), (M[:, 0, 1], M[:, 2, 3]), (M[:, 0, 1], M[:, 1, 2])):
        r = np.corrcoef(x, y)[0, 1]
        assert 2 * scipy.stats.norm.sf(abs(r) * math.sqrt(count)) >= ALPHA


def test_symmetric_noise_is_standard_gaussian_in_the_frobenius_geometry():
    # ‖N‖_F² = Σ diag² + 2 Σ_{k<l} off² ~ χ²(d(d+1)/2): the isotropic Gaussian over the free coordinates,
    # so σ·N is the Gaussian mechanism for Frobenius (= ℓ2 of the flat vector) sensitivity.
    count, d = 20000, 4
    free = d * (d + 1) // 2
    N = symmetric_noise(np.random.default_rng(777), count, d)
    squared = np.sum(N**2, axis=1)
    assert chi2_two_sided_p(np.sum(squared), count * free) >= ALPHA     # mean d(d+1)/2
    assert abs(squared.mean() - free) <= 4 * math.sqrt(2 * free / count)
    assert scipy.stats.kstest(squared, scipy.stats.chi2(free).cdf).pvalue >= ALPHA
    # The same statistics reject the near miss "N(0, 1) on the upper triangle, mirrored"
    # (mean d² = 16 instead of 10): the tests above can fail.
    rng = np.random.default_rng(777)
    U = np.triu(rng.standard_normal((count, d, d)))
    wrong = (U + np.triu(U, 1).transpose(0, 2, 1)).reshape(count, d * d)
    assert chi2_two_sided_p(np.sum(wrong**2), count * free) < ALPHA


# -- 7. psd_part and metric_factor -----------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(seed=seeds, d=dims, scale=st.sampled_from([1e-3, 1.0, 1e3]), kind=st.sampled_from(["sym", "psd", "lowrank"]))
def test_metric_factor_and_psd_part(seed, d, scale, kind):
    rng = np.random.default_rng(seed)
    if kind == "sym":
        W = sym(rng, d)
    elif kind == "psd":
        W = psd_matrix(rng, d)
    else:
        W = psd_matrix(rng, d, rank=int(rng.integers(1, d + 1))) - psd_matrix(rng, d, rank=1)
        W = 0.5 * (W + W.T)
    W *= scale
    tol = 1e-10 * max(1.0, float(np.linalg.norm(W)))

    Wp = psd_part(W)
    # Independent reference: (W + |W|)/2 with |W| = (WᵀW)^{1/2} from the polar decomposition (an SVD).
    _, absolute = scipy.linalg.polar(W)
    np.testing.assert_allclose(Wp, 0.5 * (W + absolute), rtol=0, atol=tol)
    np.testing.assert_allclose(Wp, Wp.T, rtol=0, atol=tol)
    assert np.linalg.eigvalsh(Wp).min() >= -tol
    # nearest PSD matrix: no PSD matrix built here is closer
    gap = np.linalg.norm(W - Wp)
    for _ in range(20):
        Y = psd_matrix(rng, d, rank=int(rng.integers(1, d + 1))) * (scale * rng.uniform(0, 2))
        assert gap <= np.linalg.norm(W - Y) + tol
    for Y in (0.5 * (Wp + Wp.T) + 1e-3 * scale * np.eye(d), 0.99 * Wp):
        assert gap <= np.linalg.norm(W - Y) + tol

    L = metric_factor(W)
    assert L.ndim == 2 and L.shape[1] == d
    np.testing.assert_allclose(L.T @ L, Wp, rtol=0, atol=tol)
    # rows belong to the positive eigenvalues, largest first: row norms are √λ, non-increasing
    row_norms = np.linalg.norm(L, axis=1)
    assert np.all(np.diff(row_norms) <= 1e-12 * max(1.0, row_norms.max()))
    x, y = rng.standard_normal(d), rng.standard_normal(d)
    np.testing.assert_allclose(np.sum((L @ (x - y)) ** 2), (x - y) @ Wp @ (x - y),
                               rtol=1e-9, atol=tol * np.sum((x - y) ** 2))


def test_psd_part_and_metric_factor_by_hand():
    np.testing.assert_allclose(psd_part(np.diag([2.0, -1.0])), np.diag([2.0, 0.0]), atol=1e-15)
    # [[0, 1], [1, 0]] has eigenvalues ±1 along (1, ±1)/√2: PSD part [[.5, .5], [.5, .5]].
    np.testing.assert_allclose(psd_part([[0.0, 1.0], [1.0, 0.0]]), [[0.5, 0.5], [0.5, 0.5]], atol=1e-15)
    L = metric_factor(np.diag([0.5, 2.0, -3.0]))
    assert L.shape == (2, 3)
    np.testing.assert_allclose(np.abs(L), [[0.0, math.sqrt(2.0), 0.0], [math.sqrt(0.5), 0.0, 0.0]], atol=1e-15)


@pytest.mark.parametrize("d", [1, 3, 5])
def test_metric_factor_of_a_matrix_without_positive_part_is_zero(d):
    rng = np.random.default_rng(d)
    for W in (np.zeros((d, d)), -psd_matrix(rng, d) - 0.1 * np.eye(d), -np.eye(d)):
        L = metric_factor(W)
        assert L.shape == (1, d)
        assert np.all(L == 0.0)
        assert np.all(psd_part(W) == 0.0)


# -- 8. bad input -----------------------------------------------------------------------------------------
def test_project_matrix_rejects_non_square_input():
    for W in (np.zeros((2, 3)), np.zeros(4), np.zeros((2, 2, 2)), np.zeros((0, 0)), 1.0):
        with pytest.raises(ValueError, match="square"):
            project_matrix(W, 1.0, "frobenius")
    with pytest.raises(ValueError, match="square matrix"):
        project_matrix([[1.0, "a"], [0.0, 1.0]], 1.0)
    with pytest.raises(ValueError):
        project_matrix([[1.0, 2.0], [3.0]], 1.0)


def test_project_matrix_names_the_asymmetric_entries():
    W = np.eye(3)
    W[0, 2] = 0.5
    with pytest.raises(ValueError, match=r"symmetric.*\[0, 2\].*\[2, 0\]"):
        project_matrix(W, 1.0, "psd")
    # a mismatch within the tolerance of 1e-10·max(1, max|W|) is accepted and symmetrised
    W = np.eye(3)
    W[0, 2] = 1e-12
    P = project_matrix(W, 10.0, "frobenius")
    assert np.array_equal(P, P.T)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_project_matrix_rejects_non_finite_entries(bad):
    W = np.eye(3)
    W[1, 2] = W[2, 1] = bad
    with pytest.raises(ValueError, match=r"W\[1, 2\].*not finite"):
        project_matrix(W, 1.0, "nuclear")


@pytest.mark.parametrize("radius", [0.0, -1.0, np.nan, np.inf, 1e-9, 1e9, "1", True, None, [1.0]])
def test_project_matrix_rejects_bad_radii(radius):
    with pytest.raises(ValueError, match="radius"):
        project_matrix(np.eye(2), radius, "frobenius")


@pytest.mark.parametrize("constraint", ["l2", "PSD", "", None, 1])
def test_project_matrix_rejects_unknown_constraints(constraint):
    with pytest.raises(ValueError, match="constraint must be one of"):
        project_matrix(np.eye(2), 1.0, constraint)


def test_psd_part_and_metric_factor_reject_bad_matrices():
    for f in (psd_part, metric_factor):
        with pytest.raises(ValueError, match="square"):
            f(np.zeros((2, 3)))
        with pytest.raises(ValueError, match="symmetric"):
            f([[1.0, 2.0], [0.0, 1.0]])
        with pytest.raises(ValueError, match="not finite"):
            f([[np.nan, 0.0], [0.0, 1.0]])
