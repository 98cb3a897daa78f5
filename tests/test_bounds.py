"""Tests of the public feature bounds (docs/algorithms.md#public-bounds: every record must land in a domain of diameter 2).

The box map is checked against its definition ``z_k = 2(clip(x_k) − lo_k)/((hi_k − lo_k)·√d)`` and the
norm map against ``x·min(1, B/‖x‖)/B``; the geometric claims (diameter 2, corners at distance exactly
2, norms ≤ 1) are checked directly on the mapped records.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from onpair import FeatureBounds
from onpair.core.bounds import _clip_box_row

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=150)
TOL = 1e-12


# -- strategies --------------------------------------------------------------------------------------
@st.composite
def boxes(draw):
    d = draw(st.integers(1, 10))
    lower = np.array(draw(st.lists(st.floats(-1e6, 1e6), min_size=d, max_size=d)))
    # widths from 1e-3 to 1e6: several orders of magnitude, also within one box
    log_width = np.array(draw(st.lists(st.floats(-3, 6), min_size=d, max_size=d)))
    upper = lower + 10.0**log_width
    assert np.all(upper > lower)
    return lower, upper


def unit_points(d, n, low=0.0, high=1.0):
    return hnp.arrays(np.float64, (n, d), elements=st.floats(low, high))


def inside(lower, upper, u):
    """Records lower + u·(upper − lower) for u ∈ [0, 1], kept inside the box despite rounding."""
    return np.minimum(np.maximum(lower + u * (upper - lower), lower), upper)


def box_map_by_definition(x, lower, upper):
    d = x.shape[-1]
    # Centre of the box to the origin, each feature on a unit range, diagonal 2.
    return (2.0 * np.clip(x, lower, upper) - lower - upper) / ((upper - lower) * math.sqrt(d))


def pairwise_distances(Z):
    return np.linalg.norm(Z[:, None, :] - Z[None, :, :], axis=-1)


# -- box bounds --------------------------------------------------------------------------------------
def test_docstring_example_by_hand():
    b = FeatureBounds(lower=0.0, upper=1.0)
    Z, clipped = b.transform(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]]))
    s = 1.0 / math.sqrt(2.0)  # centred, unit range, then diagonal 2 in d = 2: corners at ±1/√2
    np.testing.assert_allclose(Z, [[-s, -s], [s, s], [s, 0.0]], rtol=1e-15, atol=1e-16)
    assert clipped.tolist() == [False, False, True]


def test_each_feature_on_its_own_unit_range():
    # Pima-like: a wide feature must not swamp a narrow one.
    b = FeatureBounds(lower=[0.0, 0.0], upper=[1.0, 900.0])
    Z, clipped = b.transform(np.array([[0.5, 450.0], [1.0, 0.0]]))
    s = 1.0 / math.sqrt(2.0)
    np.testing.assert_allclose(Z, [[0.0, 0.0], [s, -s]], rtol=1e-15, atol=1e-16)
    assert not clipped.any()
    assert b.n_features == 2


def test_scalar_bounds_apply_to_every_feature():
    b = FeatureBounds(lower=-1.0, upper=3.0)
    assert b.n_features is None
    X = np.array([[-1.0, 1.0, 3.0, 2.0]])
    Z, clipped = b.transform(X)
    np.testing.assert_allclose(Z, [[-0.5, 0.0, 0.5, 0.25]], rtol=1e-15, atol=0)  # (2x − 2)/(4·√4)
    assert clipped.tolist() == [False]


@SETTINGS
@given(boxes(), st.data())
def test_box_records_inside_have_diameter_at_most_two(box, data):
    lower, upper = box
    d = lower.size
    b = FeatureBounds(lower=lower, upper=upper)
    u = data.draw(unit_points(d, 6))
    X = inside(lower, upper, u)
    Z, clipped = b.transform(X)
    assert Z.shape == X.shape
    assert not clipped.any()  # records inside are never flagged
    assert pairwise_distances(Z).max() <= 2.0 + TOL
    np.testing.assert_allclose(Z, box_map_by_definition(X, lower, upper), rtol=1e-9, atol=1e-9)

    corners, corner_flags = b.transform(np.stack([lower, upper]))
    assert not corner_flags.any()
    assert np.linalg.norm(corners[1] - corners[0]) == pytest.approx(2.0, rel=TOL, abs=0)
    # the corners map to ∓1/√d in every coordinate: the box's centre is the origin
    np.testing.assert_allclose(corners[0], -1.0 / math.sqrt(d), rtol=TOL)
    np.testing.assert_allclose(corners[1], 1.0 / math.sqrt(d), rtol=TOL)


@SETTINGS
@given(boxes(), st.data())
def test_box_records_outside_are_clipped_and_stay_in_the_domain(box, data):
    lower, upper = box
    d = lower.size
    b = FeatureBounds(lower=lower, upper=upper)
    u = data.draw(unit_points(d, 6, low=-3.0, high=4.0))
    X = lower + u * (upper - lower)
    # push one coordinate of record 0 clearly outside
    k = data.draw(st.integers(0, d - 1))
    X[0, k] = upper[k] + (upper[k] - lower[k]) * data.draw(st.floats(0.5, 10.0))
    Z, clipped = b.transform(X)
    expected_flags = np.any((X < lower) | (X > upper), axis=1)
    assert clipped.tolist() == expected_flags.tolist()
    assert clipped[0]
    # a clipped record maps like its clipped version
    Zc, flags_c = b.transform(np.clip(X, lower, upper))
    assert not flags_c.any()
    np.testing.assert_allclose(Z, Zc, rtol=0, atol=1e-15)
    # every mapped record (clipped or not), with the corners, within diameter 2
    corners, _ = b.transform(np.stack([lower, upper]))
    allz = np.vstack([Z, corners])
    assert pairwise_distances(allz).max() <= 2.0 + TOL
    assert np.all(np.abs(Z) <= 1.0 / math.sqrt(d) * (1 + TOL))
    assert np.all(np.linalg.norm(Z, axis=1) <= 1.0 + TOL)  # inside the unit ball


def test_boundary_records_not_flagged():
    b = FeatureBounds(lower=[0.0, -5.0], upper=[1.0, 5.0])
    _, clipped = b.transform(np.array([[0.0, -5.0], [1.0, 5.0], [1.0, -5.0],
                                       [np.nextafter(1.0, 2.0), 0.0], [0.5, np.nextafter(-5.0, -6.0)]]))
    assert clipped.tolist() == [False, False, False, True, True]


# -- norm bound --------------------------------------------------------------------------------------
@st.composite
def records_and_norm(draw):
    d = draw(st.integers(1, 10))
    B = draw(st.floats(1e-3, 1e4))
    n = draw(st.integers(1, 8))
    rows, factors = [], []
    for _ in range(n):
        direction = np.array(draw(st.lists(st.floats(-1, 1), min_size=d, max_size=d)))
        if np.linalg.norm(direction) < 1e-3:
            direction = np.eye(d)[0]
        direction = direction / np.linalg.norm(direction)
        # stay clearly away from ‖x‖ = B so the expected flag is unambiguous
        r = draw(st.one_of(st.floats(0.0, 1.0 - 1e-9), st.floats(1.0 + 1e-9, 100.0)))
        rows.append(direction * r * B)
        factors.append(r)
    return np.array(rows), B, np.array(factors)


@SETTINGS
@given(records_and_norm())
def test_norm_bound(sample):
    X, B, r = sample
    b = FeatureBounds(norm=B)
    Z, clipped = b.transform(X)
    outside = r > 1.0
    assert clipped.tolist() == outside.tolist()
    norms = np.linalg.norm(Z, axis=1)
    assert np.all(norms <= 1.0 + TOL)
    # inside: scaled by 1/B and nothing else
    np.testing.assert_allclose(Z[~outside], X[~outside] / B, rtol=1e-15, atol=0)
    # outside: on the unit sphere, same direction
    np.testing.assert_allclose(norms[outside], 1.0, rtol=TOL)
    np.testing.assert_allclose(Z[outside], X[outside] / np.linalg.norm(X[outside], axis=1)[:, None],
                               rtol=1e-13, atol=1e-15)
    assert pairwise_distances(Z).max() <= 2.0 + TOL


@pytest.mark.parametrize("B", [1.0, 0.25, 8.0])
def test_norm_bound_power_of_two_is_exact(B):
    X = np.array([[0.3, -0.1, 0.2], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])  # inside or on the sphere (×B)
    Z, clipped = FeatureBounds(norm=B).transform(X * B)
    assert np.array_equal(Z, X)
    assert clipped.tolist() == [False, False, False]


def test_norm_bound_by_hand():
    Z, clipped = FeatureBounds(norm=5.0).transform(np.array([[3.0, 4.0], [6.0, 8.0], [0.0, 1.0]]))
    np.testing.assert_allclose(Z, [[0.6, 0.8], [0.6, 0.8], [0.0, 0.2]], rtol=1e-15, atol=0)
    assert clipped.tolist() == [False, True, False]


def test_unit_normalised_records_are_not_counted_as_clipped_but_stay_in_the_ball():
    """x/‖x‖ in floating point has a norm of 1 within a few ulps: under norm_bound=1 it is inside by intent. Such
    records are not counted (nor warned about), yet every mapped record keeps ‖z‖ ≤ 1 (to the rounding of a
    record scaled onto the sphere), and a record a little farther out (1 + 1e-12) is still counted."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((4000, 7)) * rng.lognormal(0.0, 2.0, (4000, 1))
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    norms = np.array([math.sqrt(math.fsum(v * v for v in row)) for row in X])
    assert np.any(norms > 1.0)  # the situation of the issue: some rows exceed 1 by rounding
    Z, clipped = FeatureBounds(norm=1.0).transform(X)
    assert not clipped.any()
    assert np.linalg.norm(Z, axis=1).max() <= 1.0 + 2 * np.finfo(float).eps
    beyond = X[:5] * (1.0 + 1e-12)
    assert FeatureBounds(norm=1.0).transform(beyond)[1].all()
    assert FeatureBounds(norm=3.0).transform(3.0 * X)[1].sum() == 0  # any B: the tolerance is relative
    from onpair import NoiseDominatedWarning, OffPairStats
    y = np.arange(4000) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no clipping warning
        warnings.filterwarnings("ignore", category=NoiseDominatedWarning)
        est = OffPairStats(norm_bound=1.0, epsilon=1.0, random_state=0).fit(X, y)
    assert est.n_clipped_ == 0


# -- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lower, upper, feature", [
    ([0.0, 0.0, 0.0], [1.0, 1.0, 0.0], 2),
    ([0.0, 3.0, 0.0], [1.0, 2.0, 1.0], 1),
    ([5.0], [5.0], 0),
    (1.0, 0.0, 0),
])
def test_upper_must_exceed_lower(lower, upper, feature):
    with pytest.raises(ValueError, match=rf"feature {feature}\b"):
        FeatureBounds(lower=lower, upper=upper)


@pytest.mark.parametrize("lower, upper", [
    ([0.0, np.nan], [1.0, 1.0]),
    ([0.0, 0.0], [1.0, np.inf]),
    (-np.inf, 1.0),
    (0.0, np.nan),
])
def test_non_finite_bounds(lower, upper):
    with pytest.raises(ValueError, match="finite"):
        FeatureBounds(lower=lower, upper=upper)


@pytest.mark.parametrize("kwargs", [
    dict(lower=0.0, upper=1.0, norm=1.0),
    dict(lower=0.0, norm=1.0),
    dict(upper=1.0, norm=1.0),
])
def test_box_and_norm_are_exclusive(kwargs):
    with pytest.raises(ValueError, match="not both"):
        FeatureBounds(**kwargs)


@pytest.mark.parametrize("norm", [0.0, -1.0, 0, float("nan"), float("inf"), True, "1", [1.0]])
def test_bad_norm(norm):
    with pytest.raises(ValueError, match="norm_bound"):
        FeatureBounds(norm=norm)


@pytest.mark.parametrize("kwargs", [
    {}, dict(lower=0.0), dict(upper=1.0),
    dict(lower="a", upper=1.0),
    dict(lower=[[0.0, 0.0]], upper=[[1.0, 1.0]]),
    dict(lower=[0.0, 0.0], upper=[1.0, 1.0, 1.0]),
])
def test_bad_box(kwargs):
    with pytest.raises(ValueError):
        FeatureBounds(**kwargs)


# -- overflow ----------------------------------------------------------------------------------------
def test_norm_bound_huge_finite_record_keeps_its_direction():
    with np.errstate(all="ignore"):
        Z, clipped = FeatureBounds(norm=1.0).transform(np.array([[1e200, 0.0], [0.0, -1e300]]))
    assert clipped.tolist() == [True, True]
    np.testing.assert_allclose(Z, [[1.0, 0.0], [0.0, -1.0]], rtol=1e-15)


def test_box_whose_width_overflows():
    try:
        b = FeatureBounds(lower=[-1e308, 0.0], upper=[1e308, 1.0])
    except ValueError:
        return  # rejecting an unrepresentable box is fine
    with np.errstate(all="ignore"):
        Z, clipped = b.transform(np.array([[-1e308, 0.0], [1e308, 1.0], [0.0, 0.5]]))
    assert np.all(np.isfinite(Z))
    assert not clipped.any()
    assert np.linalg.norm(Z[1] - Z[0]) == pytest.approx(2.0, rel=1e-12)


def test_norm_bound_tiny_and_huge_records_raise_no_floating_point_warning():
    # norm/peak overflows for a subnormal peak, X/norm for a huge record under a small bound: both are
    # handled (inf reads "inside"; the huge row is clipped and recomputed), so neither may warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z, clipped = FeatureBounds(norm=1.0).transform(np.array([[5e-324, 0.0], [0.0, 1e-310]]))
        assert clipped.tolist() == [False, False] and np.all(np.isfinite(Z))
        Z, clipped = FeatureBounds(norm=1e-8).transform(np.array([[1e305, 0.0]]))
        assert clipped.tolist() == [True] and Z.tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize("d", [1, 3, 8])
def test_clip_box_row_matches_the_numpy_twin_and_transform(d):
    """The compiled single-record map with clipping: the documented formula in NumPy, and transform's row
    bit for bit (so the single-record paths that use it release what the block path releases); 0 inside,
    1 clipped, −1 for NaN or ±inf."""
    rng = np.random.default_rng(70 + d)
    lower, upper = rng.uniform(-3.0, 0.0, size=d), rng.uniform(0.1, 2.0, size=d)
    bounds = FeatureBounds(lower=lower, upper=upper)
    box = bounds.box_rows(d)
    for i in range(200):
        x = rng.uniform(lower - 1.0, upper + 1.0) if i % 2 else rng.uniform(lower, upper)
        out = np.empty(d)
        status = _clip_box_row(x, *box, out)
        outside = bool(np.any((x < lower) | (x > upper)))
        assert status == int(outside)
        twin = (2.0 * np.minimum(np.maximum(x, lower), upper) - lower - upper) / ((upper - lower) * math.sqrt(d))
        np.testing.assert_allclose(out, twin, rtol=1e-13, atol=1e-15)
        Z, clipped = bounds.transform(x[None, :])
        assert out.tobytes() == Z[0].tobytes() and clipped[0] == outside
        for bad in (np.nan, np.inf, -np.inf):
            broken = x.copy()
            broken[i % d] = bad
            assert _clip_box_row(broken, *box, out) == -1


# -- one convention: no bounds, no model --------------------------------------------------------------------
def _without_bounds():
    """(name, a call that builds or fits it without bounds) for every public class, discovered."""
    from public_api import OFFLINE, ONLINE, QUICK, river_classes

    from onpair.preprocessing import PrivateStandardScaler

    X, y = np.array([[0.2, 0.3], [0.6, 0.1], [0.4, 0.9], [0.8, 0.5]]), np.array([0, 1, 0, 1])
    calls = {name: (lambda cls=cls, name=name: cls(seed=0, **QUICK.get(name, {}))) for name, cls in ONLINE.items()}
    calls.update({name: (lambda cls=cls, name=name: cls(random_state=0, **QUICK.get(name, {})).fit(X, y))
                  for name, cls in OFFLINE.items()})
    calls["PrivateStandardScaler"] = lambda: PrivateStandardScaler(random_state=0).fit(X)
    rivers = river_classes()
    calls["river.PrivatePairwiseClassifier"] = lambda: rivers["PrivatePairwiseClassifier"]()
    calls["river.PrivateStandardScaler"] = lambda: rivers["PrivateStandardScaler"]()
    calls["river.MetricTransformer"] = lambda: rivers["MetricTransformer"](ONLINE["OnPairStats"](
        task="metric", classes=[0, 1], seed=0))
    return sorted(calls.items())


@pytest.mark.parametrize("name, call", _without_bounds(), ids=[name for name, _ in _without_bounds()])
def test_every_model_refuses_to_run_without_public_bounds(name, call):
    """Every learner, estimator, scaler and river adapter refuses without bounds, with the same advice (the
    offline estimators and array learners once clipped to the unit ball in silence; river refused)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning instead of the refusal, and none before it
        with pytest.raises(ValueError, match=r"needs the public bounds of the features: pass bounds=\(lower, "
                                             r"upper\).*never from the data"):
            call()


def test_norm_bound_is_the_explicit_unit_ball():
    from onpair.core.bounds import make_bounds

    assert make_bounds(None, 1.0).to_dict() == {"norm": 1.0}
    with pytest.raises(ValueError, match="OffPairStats needs the public bounds"):
        make_bounds(None, None, "OffPairStats")


@pytest.mark.parametrize("d", [1, 3, 9, 20])
def test_the_compiled_box_map_of_a_block_is_the_numpy_expression_bit_for_bit(d):
    """FeatureBounds.transform maps a block of box-bounded records in one compiled pass (row by row, the single-
    record map's operations): the documented NumPy expression's bits, clipped flags included, for records inside
    the box, outside it on either side, on its faces, a strided view, and per-feature bounds; a block holding NaN
    takes the NumPy path (the same result as before)."""
    rng = np.random.default_rng(d)
    for lower, upper in ((0.0, 1.0), (rng.uniform(-3, 0, d), rng.uniform(1, 4, d))):
        bounds = FeatureBounds(lower=lower, upper=upper)
        lo, hi = np.broadcast_to(lower, (d,)), np.broadcast_to(upper, (d,))
        X = rng.uniform(-4.0, 5.0, (60, d))
        X[::7] = lo  # on the faces
        X[1::7] = hi
        for block in (X, X[::3], X[:1], np.asfortranarray(X)):
            Z, clipped = bounds.transform(block)
            twin = (2.0 * np.clip(block, lo, hi) - lo - hi) * (0.5 * (2.0 / ((hi - lo) * np.sqrt(d))))
            assert Z.tobytes() == np.ascontiguousarray(twin).tobytes()
            assert np.array_equal(clipped, np.any((block < lo) | (block > hi), axis=1))
        assert clipped.dtype == np.bool_ and 0 < clipped.sum() < len(clipped)
        broken = X.copy()
        broken[5, 0] = np.nan
        Z, clipped = bounds.transform(broken)
        assert np.isnan(Z[5, 0]) and np.array_equal(Z[6:], bounds.transform(X[6:])[0])
