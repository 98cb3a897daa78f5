"""Standard normals for the continual-release mechanisms: NumPy's own draws, faster, and a pre-drawn block.

**The same numbers as NumPy.** :func:`fill_standard_normal` fills an array with exactly what
``rng.standard_normal(out=...)`` would write, and leaves ``rng`` in exactly the state it would: it draws the
generator's raw 64-bit words in bulk (``bit_generator.random_raw``) and runs NumPy's ziggurat
(``random_standard_normal`` of numpy/random/src/distributions/distributions.c, its tables, its tail and its
rejection steps, word for word) in a compiled loop, :func:`_ziggurat_fill`. The only change is the
sign, applied by a multiplication by ±1.0 instead of a branch (the same IEEE result: negation is exact;
the branch was mispredicted on half the draws, measured as most of NumPy's time per normal). It consumes
words exactly as NumPy does, so the generator is never ahead: where a batch of words ends inside a
normal (a rejected draw), the next batch completes it. For bit generators whose ``next_double`` is not
``(next_uint64 >> 11)·2⁻⁵³`` or whose raw output is not ``next_uint64`` (MT19937), it calls
``rng.standard_normal`` itself. ``tests/test_normals.py`` checks the identity on millions of draws,
the tail included.

**A pre-drawn block.** A learner draws a record's k normals from a :class:`NormalBlock`: a block of
normals drawn ahead from its generator (by :func:`fill_standard_normal`) and consumed in order. Every
consumer (a single record, a block of records, a compiled per-record kernel) takes the next normals
of the one sequence, so results do not depend on how the stream is cut into calls: a record's noise
is the same normals NumPy's generator would have given it, whatever was drawn ahead. The unconsumed
normals are part of the learner's state: they are saved in its snapshot (they are as secret as the
noise they will become), and dropped when the generator is replaced.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._config import NJIT_OPTIONS
from ._ziggurat import FI_DOUBLE, KI_DOUBLE, WI_DOUBLE, ZIGGURAT_NOR_INV_R, ZIGGURAT_NOR_R  # NumPy's tables

__all__ = ["NormalBlock", "fill_standard_normal", "BLOCK_VALUES"]

#: Normals drawn ahead by a :class:`NormalBlock` (128 KiB): the most a learner's state holds of them.
BLOCK_VALUES = 1 << 14

#: Bit generators whose raw output is ``next_uint64`` and whose ``next_double`` is (next_uint64 >> 11)·2⁻⁵³,
#: as NumPy's ziggurat reads them (numpy/random/src/*/): the ones :func:`_ziggurat_fill` reproduces.
WORD_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)

_KI = np.asarray(KI_DOUBLE, dtype=np.uint64)
_WI = np.asarray(WI_DOUBLE, dtype=np.float64)
_FI = np.asarray(FI_DOUBLE, dtype=np.float64)
_R = float(ZIGGURAT_NOR_R)
_INV_R = float(ZIGGURAT_NOR_INV_R)


@njit(**NJIT_OPTIONS)
def _ziggurat_fill(words, out, start, stop, ki, wi, fi, r_tail, inv_r):
    """Write standard normals into out[start:stop] from the raw words, in order, as NumPy's ziggurat would.

    Parameters
    ----------
    words : uint64 array of shape (n,)
        The generator's raw outputs, in order (read only).
    out : float64 array of shape (N,)
        Written in place from ``start``.
    start, stop : int
        The entries of ``out`` to write.
    ki, wi, fi : arrays of shape (256,)
        NumPy's ziggurat tables (uint64, float64, float64; read only).
    r_tail, inv_r : float
        The ziggurat's r and 1/r.

    Returns
    -------
    (int, int)
        (i, p): out[start:i] was written and words[:p] consumed. It stops at ``stop`` or where the words
        run out; a normal whose words run out is not written and its words are not consumed (p is where it
        began), so that the next call, given words[p:] followed by fresh ones, continues the same sequence.
    """
    n_words = words.shape[0]
    mask8 = np.uint64(0xFF)
    mask52 = np.uint64(0x000FFFFFFFFFFFFF)
    one = np.uint64(1)
    eight = np.uint64(8)
    eleven = np.uint64(11)
    scale = 1.0 / 9007199254740992.0
    p = 0
    i = start
    while i < stop:
        q = p
        done = False
        x = 0.0
        while not done:
            if q >= n_words:
                return i, p
            r = words[q]
            q += 1
            idx = np.int64(r & mask8)
            r = r >> eight
            sign = r & one
            rabs = (r >> one) & mask52
            x = float(np.int64(rabs)) * wi[idx]  # rabs < 2⁵²: exact as a signed integer (one instruction)
            x = x * (1.0 - 2.0 * float(sign))  # NumPy: if (sign & 0x1) x = -x (exact either way)
            if rabs < ki[idx]:
                done = True
            elif idx == 0:
                while True:  # the tail: two doubles per try
                    if q + 2 > n_words:
                        return i, p
                    u1 = float(np.int64(words[q] >> eleven)) * scale
                    u2 = float(np.int64(words[q + 1] >> eleven)) * scale
                    q += 2
                    xx = -inv_r * np.log1p(-u1)
                    yy = -np.log1p(-u2)
                    if yy + yy > xx * xx:
                        x = -(r_tail + xx) if ((rabs >> eight) & one) else r_tail + xx
                        done = True
                        break
            else:
                if q >= n_words:
                    return i, p
                u = float(np.int64(words[q] >> eleven)) * scale
                q += 1
                if (fi[idx - 1] - fi[idx]) * u + fi[idx] < np.exp(-0.5 * x * x):
                    done = True
        out[i] = x
        i += 1
        p = q
    return i, p


def fill_standard_normal(rng, out) -> None:
    """``rng.standard_normal(out=out)`` for a float64 ``out``: the same values, the same generator state after,
    faster for the bit generators of :data:`WORD_GENERATORS` (NumPy's ValueError for an ``out`` that is not
    C-contiguous)."""
    if type(rng.bit_generator) not in WORD_GENERATORS or not out.flags.c_contiguous or out.dtype != np.float64:
        rng.standard_normal(out=out)
        return
    flat = out.reshape(-1)
    n = flat.shape[0]
    raw = rng.bit_generator.random_raw
    i = 0
    pending = np.empty(0, dtype=np.uint64)
    while i < n:
        # at least one word per normal still to draw: never more words than NumPy would consume
        words = raw(n - i)
        if pending.size:
            words = np.concatenate((pending, words))
        i, p = _ziggurat_fill(words, flat, i, n, _KI, _WI, _FI, _R, _INV_R)
        pending = words[p:]
    # i == n: every word drawn was consumed (each normal takes at least one), so the generator is where
    # NumPy's would be


class NormalBlock:
    """Standard normals drawn ahead from a generator and consumed in order (see the module docstring).

    The generator is read in whole blocks of ``block`` normals counted from the first one drawn: however
    the consumers cut their requests, after N normals consumed the generator has drawn ⌈N/block⌉ blocks and
    the normals drawn ahead are the rest of the last one. So the state (the generator's and the normals
    drawn ahead) is a function of N alone, and a stream fed in any blocks leaves the same state, bit for bit.

    Parameters
    ----------
    rng : numpy.random.Generator
        The learner's noise generator: the only source of the normals.
    block : int, optional
        The normals one draw takes from the generator (:data:`BLOCK_VALUES`).

    Attributes
    ----------
    rng : numpy.random.Generator
    values : numpy.ndarray
        float64: values[pos:end] are the normals drawn ahead and not consumed yet, next first.
    pos, end : int

    Examples
    --------
    >>> import numpy as np
    >>> normals = NormalBlock(np.random.default_rng(3), block=8)
    >>> first = normals.standard_normal(5); rest = normals.standard_normal((2, 3))
    >>> np.array_equal(np.concatenate([first, rest.ravel()]), np.random.default_rng(3).standard_normal(11))
    True
    >>> normals.unconsumed().size            # two blocks of 8 drawn, 11 normals consumed
    5
    """

    def __init__(self, rng, block: int = BLOCK_VALUES):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {rng!r}")
        self.rng = rng
        self.block = int(block)
        self.values = np.empty(2 * self.block)
        self.pos = 0
        self.end = 0

    def unconsumed(self) -> np.ndarray:
        """A copy of the normals drawn ahead and not consumed yet (the state a snapshot keeps)."""
        return self.values[self.pos:self.end].copy()

    def restore(self, values) -> None:
        """Install ``values`` (float64 1-D) as the normals drawn ahead and not consumed yet."""
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.shape[0] + self.block > self.values.shape[0]:
            self.values = np.empty(values.shape[0] + self.block)
        self.values[:values.shape[0]] = values
        self.pos, self.end = 0, values.shape[0]

    def ensure(self, k: int) -> None:
        """Make at least ``k`` normals available at ``values[pos:]`` (contiguous): the unconsumed ones moved to
        the front, then whole blocks drawn from the generator after them."""
        left = self.end - self.pos
        if left >= k:
            return
        blocks = -(-(k - left) // self.block)
        need = left + blocks * self.block
        values = self.values if need <= self.values.shape[0] else np.empty(need + self.block)
        values[:left] = self.values[self.pos:self.end]
        fill_standard_normal(self.rng, values[left:need])
        self.values, self.pos, self.end = values, 0, need

    def standard_normal(self, size=None, out=None):
        """The next normals: into ``out`` (float64), or a new array of shape ``size``: the ones drawn ahead
        first, then whole blocks from the generator straight into ``out``, then the start of one more block."""
        if out is None:
            out = np.empty(() if size is None else size)
        flat = out.reshape(-1) if out.flags.c_contiguous else np.empty(out.size)
        n = flat.shape[0]
        take = min(n, self.end - self.pos)
        flat[:take] = self.values[self.pos:self.pos + take]
        self.pos += take
        rest = n - take
        if rest:  # the block is used up: the generator is at a block boundary
            whole = rest - rest % self.block
            if whole:
                fill_standard_normal(self.rng, flat[take:take + whole])
            tail = rest - whole
            if tail:
                self.ensure(tail)
                flat[take + whole:] = self.values[:tail]
                self.pos = tail
        if flat.base is None and not out.flags.c_contiguous:
            out[...] = flat.reshape(out.shape)
        return out if size is not None or out.ndim else float(out)
