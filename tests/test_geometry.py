"""Projection onto the ℓ2 ball and random points of C (hypothesis properties)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import naive
from onpair.core.geometry import project_l2_ball, random_point_in_ball

vectors = arrays(np.float64, st.integers(1, 8), elements=st.floats(-1e6, 1e6))
radii = st.floats(1e-3, 1e3)


@given(v=vectors, radius=radii)
def test_projection_lands_in_the_ball_and_matches_the_definition(v, radius):
    p = project_l2_ball(v, radius)
    assert np.linalg.norm(p) <= radius * (1 + 1e-12)
    np.testing.assert_allclose(p, naive.project_l2_ball(v, radius), rtol=1e-12, atol=1e-300)


@given(v=vectors, radius=radii)
def test_projection_is_idempotent_and_the_identity_inside(v, radius):
    p = project_l2_ball(v, radius)
    np.testing.assert_allclose(project_l2_ball(p, radius), p, rtol=1e-12, atol=0)
    if np.linalg.norm(v) <= radius:
        assert np.array_equal(p, v)


@given(data=st.data(), radius=radii)
def test_projection_is_non_expansive(data, radius):
    dim = data.draw(st.integers(1, 6))
    a = data.draw(arrays(np.float64, dim, elements=st.floats(-1e3, 1e3)))
    b = data.draw(arrays(np.float64, dim, elements=st.floats(-1e3, 1e3)))
    distance = np.linalg.norm(project_l2_ball(a, radius) - project_l2_ball(b, radius))
    assert distance <= np.linalg.norm(a - b) * (1 + 1e-12) + 1e-12


def test_projection_does_not_modify_its_input():
    v = np.array([3.0, 4.0])
    project_l2_ball(v, 1.0)
    assert np.array_equal(v, [3.0, 4.0])


def test_random_points_are_uniform_in_the_ball():
    """Uniform in the d-ball: P(‖w‖ ≤ r·R) = r^d. Checked at r = 0.5 with a binomial test (α = 0.001)."""
    from scipy.stats import binomtest

    rng = np.random.default_rng(0)
    d, radius, count = 3, 2.0, 4000
    norms = np.array([np.linalg.norm(random_point_in_ball(rng, d, radius)) for _ in range(count)])
    assert np.all(norms <= radius)
    inside = int(np.sum(norms <= 0.5 * radius))
    assert binomtest(inside, count, 0.5**d).pvalue > 0.001
