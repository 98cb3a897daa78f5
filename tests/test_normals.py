"""The standard normals of the continual-release mechanisms (onpair.privacy.continual.normals).

``fill_standard_normal`` must give NumPy's own ``standard_normal`` values, bit for bit, and leave the
generator exactly where NumPy leaves it: its ziggurat is a port, and NumPy is the reference (no expected
value comes from the code under test). The rare paths are exercised on purpose: the tail (|z| beyond
r ≈ 3.654, about 1 normal in 3,700), the rejections, and batches of raw words that end inside a normal.
The ``NormalBlock`` must give the generator's sequence whatever the cuts, and a state that depends on the
number of normals consumed only.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from onpair.privacy.continual import normals as N
from onpair.privacy.continual.normals import BLOCK_VALUES, NormalBlock, fill_standard_normal

TAIL = 3.6541528853610088  # NumPy's ziggurat_nor_r: the tail starts here

GENERATORS = [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64, np.random.MT19937]


def state(rng):
    return repr(rng.bit_generator.state)


@pytest.mark.parametrize("bit_generator", GENERATORS, ids=lambda g: g.__name__)
def test_fill_gives_numpys_normals_and_state(bit_generator):
    ours, numpys = np.random.Generator(bit_generator(11)), np.random.Generator(bit_generator(11))
    out = np.empty(2_000_000)
    fill_standard_normal(ours, out)
    reference = numpys.standard_normal(2_000_000)
    assert np.array_equal(out, reference)
    assert state(ours) == state(numpys)
    assert np.sum(np.abs(reference) > TAIL) > 300  # the tail was drawn, many times
    assert np.array_equal(ours.standard_normal(5), numpys.standard_normal(5))  # and both go on alike


def test_fill_of_arrays_of_any_shape_and_non_contiguous_ones_refused_as_numpy_does():
    for shape in [(0,), (1,), (7, 3), (2, 5, 4)]:
        a, b = np.random.default_rng(2), np.random.default_rng(2)
        out = np.empty(shape)
        fill_standard_normal(a, out)
        assert np.array_equal(out, b.standard_normal(shape)) and state(a) == state(b)
    a = np.random.default_rng(2)
    before = state(a)
    with pytest.raises(ValueError, match="contiguous"):
        fill_standard_normal(a, np.empty((6, 4))[:, ::2])
    assert state(a) == before


def test_batches_that_end_inside_a_normal_are_completed_by_the_next():
    """The kernel stops where the words run out, leaving an incomplete normal's words unconsumed: fed word by
    word, in batches of 1, 2 and 3 words, the sequence is NumPy's."""
    words = np.random.default_rng(5).bit_generator.random_raw(300_000)
    reference = np.empty(290_000)
    i, p = N._ziggurat_fill(words, reference, 0, reference.size, N._KI, N._WI, N._FI, N._R, N._INV_R)
    assert i == reference.size
    assert np.array_equal(reference[:1000], np.random.default_rng(5).standard_normal(1000))
    for batch in (1, 2, 3):
        out = np.empty(40_000)
        i, pending, at = 0, np.empty(0, dtype=np.uint64), 0
        while i < out.size:
            chunk = np.concatenate((pending, words[at:at + batch]))
            at += batch
            i, p = N._ziggurat_fill(chunk, out, i, out.size, N._KI, N._WI, N._FI, N._R, N._INV_R)
            pending = chunk[p:]
        assert np.array_equal(out, reference[:out.size])


def test_the_normals_are_standard_normal():
    """A fixed-seed check that the port samples N(0, 1) (Kolmogorov–Smirnov, α = 0.001), tails included."""
    out = np.empty(400_000)
    fill_standard_normal(np.random.default_rng(123), out)
    assert stats.kstest(out, "norm").pvalue > 0.001
    tail = np.abs(out) > TAIL
    expected = 2 * stats.norm.sf(TAIL) * out.size
    assert abs(tail.sum() - expected) < 5 * np.sqrt(expected)


@settings(derandomize=True, deadline=None, database=None, max_examples=60)
@given(cuts=st.lists(st.integers(0, 70), max_size=12), block=st.sampled_from([1, 7, 16, 64]), seed=st.integers(0, 99))
def test_a_block_gives_the_generators_sequence_whatever_the_cuts(cuts, block, seed):
    normals = NormalBlock(np.random.default_rng(seed), block=block)
    got = [normals.standard_normal(c) for c in cuts]
    total = sum(cuts)
    reference = np.random.default_rng(seed)
    assert np.array_equal(np.concatenate(got) if got else np.empty(0), reference.standard_normal(total))
    # the state depends on the count alone: ⌈total/block⌉ blocks drawn, the rest of the last one ahead
    drawn = -(-total // block) * block
    assert normals.unconsumed().size == drawn - total
    twin = np.random.default_rng(seed)
    twin.standard_normal(drawn)
    assert state(normals.rng) == state(twin)


def test_ensure_draws_whole_blocks_and_keeps_the_order():
    normals = NormalBlock(np.random.default_rng(4), block=8)
    first = normals.standard_normal(3)
    normals.ensure(20)  # 5 left; two more blocks
    assert normals.end - normals.pos == 21
    ahead = normals.values[normals.pos:normals.end].copy()
    reference = np.random.default_rng(4).standard_normal(24)
    assert np.array_equal(first, reference[:3]) and np.array_equal(ahead, reference[3:])
    normals.ensure(5)  # enough already: nothing drawn
    assert normals.end - normals.pos == 21


def test_restore_and_the_block_of_a_snapshot():
    normals = NormalBlock(np.random.default_rng(8), block=16)
    normals.standard_normal(5)
    kept = normals.unconsumed()
    resumed = NormalBlock(np.random.Generator(np.random.PCG64()), block=16)
    resumed.rng.bit_generator.state = normals.rng.bit_generator.state
    resumed.restore(kept)
    assert np.array_equal(resumed.standard_normal(40), normals.standard_normal(40))
    big = NormalBlock(np.random.default_rng(0), block=4)
    big.restore(np.arange(50.0))  # more than the block: the block grows
    assert np.array_equal(big.standard_normal(50), np.arange(50.0))


def test_a_block_refuses_what_is_not_a_generator():
    with pytest.raises(TypeError, match="Generator"):
        NormalBlock(np.random.RandomState(0))
    assert BLOCK_VALUES >= 4096


def test_the_copied_ziggurat_tables_are_numpys():
    """onpair/privacy/continual/_ziggurat.py holds NumPy's ziggurat tables (once read from numba's private
    numba.np.random._constants). Their defining relations hold (x_i = 2^52·w_i the layers' edges, r the last;
    f_i = exp(−x_i²/2); k_i = 2^52·x_{i−1}/x_i), and where numba still ships its copy, it is this one; the draws
    are checked against NumPy's own above."""
    from onpair.privacy.continual import _ziggurat as Z

    ki, wi, fi = np.asarray(Z.KI_DOUBLE, dtype=np.uint64), np.asarray(Z.WI_DOUBLE), np.asarray(Z.FI_DOUBLE)
    assert ki.shape == wi.shape == fi.shape == (256,)
    x = wi * 2.0 ** 52
    assert x[255] == pytest.approx(Z.ZIGGURAT_NOR_R, rel=1e-15)
    assert Z.ZIGGURAT_NOR_R == pytest.approx(3.6541528853610088)
    assert Z.ZIGGURAT_NOR_INV_R == pytest.approx(1.0 / Z.ZIGGURAT_NOR_R, rel=1e-15)
    np.testing.assert_allclose(fi[1:], np.exp(-0.5 * x[1:] ** 2), rtol=1e-15)
    np.testing.assert_allclose(ki[2:] / 2.0 ** 52, x[1:-1] / x[2:], rtol=0, atol=2e-16)
    numba_tables = pytest.importorskip("numba.np.random._constants",
                                       reason="numba no longer ships NumPy's tables there (a private module): the "
                                              "copy is checked by its relations above and by the draws")
    assert tuple(int(v) for v in numba_tables.ki_double) == Z.KI_DOUBLE
    assert tuple(float(v) for v in numba_tables.wi_double) == Z.WI_DOUBLE
    assert tuple(float(v) for v in numba_tables.fi_double) == Z.FI_DOUBLE
    assert (numba_tables.ziggurat_nor_r, numba_tables.ziggurat_nor_inv_r) == (Z.ZIGGURAT_NOR_R, Z.ZIGGURAT_NOR_INV_R)
