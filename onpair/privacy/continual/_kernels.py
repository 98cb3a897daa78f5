"""Compiled, noise-free pieces of the continual-release mechanisms (:mod:`onpair.privacy.continual`).

Arrays and scalars only. The Gaussian noise is drawn by the caller with NumPy from the caller's
``Generator`` and passed in as standard normals; these kernels never touch a random state. Every
kernel processes records strictly in stream order and does the same floating-point operations for a
record whatever block it arrives in, so feeding a block equals feeding its records one at a time, bit
for bit. No ``fastmath``: the kernels add noise, and their results are compared with NumPy twins
(``tests/naive_continual.py``) to 1e-10.

Binary tree (levels h = 0, 1, …; node (h, j) covers records (j−1)·2^h + 1 … j·2^h). Record t completes
the nodes (0, t), (1, t/2), …, (z, t/2^z) with z the number of trailing zero bits of t; the last of
them, (z, t >> z), has an odd index (a left child), the others are right children. Per level the
state holds the noiseless sum and the subtree estimate of the last completed *left* node: that is
all a later right sibling needs to form its parent, and, for every set bit h of t, it is the node
(h, t >> h) of the dyadic decomposition of [1, t]. So the prefix estimate at t is the sum of the
stored estimates over the set bits of t.

Square-root Toeplitz factorisation with band b (R = b − 1 stored noise rows): with standard normals
z_t, Y_t = (z_t − Σ_{j=1}^{R} c_j Y_{t−j}) / c_0 is (C⁻¹z)_t, and the released prefix is
S_t + σ·Σ_{s≤t} Y_s = S_t + σ(A C⁻¹ z)_t.
"""

from __future__ import annotations

from numba import njit

from ..._config import NJIT_OPTIONS

#: What the statistics family's fused record path (a block release's sum) may import.
__all__ = ["add_rows_in_order"]


@njit(**NJIT_OPTIONS)
def _first_row_beyond(V, limit):
    """Index of the first row of ``V`` holding a NaN, ±inf or an entry of magnitude above ``limit``, or −1.

    Parameters
    ----------
    V : float64 (m, k)
        Any layout (strided views are read in place; nothing is allocated).
    limit : float
        The largest magnitude accepted.
    """
    m, k = V.shape
    for i in range(m):
        for q in range(k):
            if not (abs(V[i, q]) <= limit):  # NaN compares false
                return i
    return -1


# Row helpers: loops over one contiguous row, which LLVM vectorises (the 2-D indexing of a whole
# kernel in one body is not). Each is elementwise, so the rounding does not depend on the layout.
@njit(**NJIT_OPTIONS)
def _leaf(v, scale, z, cur_sum, cur_est, node):
    """Level 0: ``cur_sum ← v``, ``cur_est ← v + scale·z`` (and ``node ←`` the same, if non-empty).

    Parameters
    ----------
    v : float64 (k,)
        The record; read only.
    scale : float
        σ of level 0.
    z : float64 (k,)
        Standard normals; read only.
    cur_sum, cur_est : float64 (k,)
        Overwritten: the leaf's noiseless sum and its estimate.
    node : float64 (k,) or (0,)
        Overwritten with the leaf's noisy value when non-empty (tests read the encoder off it).
    """
    for q in range(v.shape[0]):
        cur_sum[q] = v[q]
        cur_est[q] = v[q] + scale * z[q]
    if node.shape[0] > 0:
        _copy_row(cur_est, node)


@njit(**NJIT_OPTIONS)
def _merge(left_sum, left_est, scale, z, a, b, cur_sum, cur_est, node):
    """Parent of a stored left node and the current right one: its noiseless sum, its noisy value
    y = sum + scale·z and its subtree estimate a·y + b·(left_est + cur_est), in place of cur_*
    (and y into ``node``, if non-empty, recomputed by the same expression).

    Parameters
    ----------
    left_sum, left_est : float64 (k,)
        The stored left child's noiseless sum and subtree estimate; read only.
    scale : float
        σ of the parent's level.
    z : float64 (k,)
        Standard normals; read only.
    a, b : float
        The least-squares weights of the parent's own value and of its children's estimates.
    cur_sum, cur_est : float64 (k,)
        In: the right child's sum and estimate; out: the parent's (written in place).
    node : float64 (k,) or (0,)
        Overwritten with the parent's noisy value when non-empty.
    """
    for q in range(cur_sum.shape[0]):
        s = left_sum[q] + cur_sum[q]
        cur_sum[q] = s
        cur_est[q] = a * (s + scale * z[q]) + b * (left_est[q] + cur_est[q])
    if node.shape[0] > 0:
        for q in range(cur_sum.shape[0]):
            node[q] = cur_sum[q] + scale * z[q]


@njit(**NJIT_OPTIONS)
def _copy_row(src, dest):
    """``dest ← src``.

    Parameters
    ----------
    src : float64 (k,)
        Read only.
    dest : float64 (k,)
        Overwritten.
    """
    for q in range(src.shape[0]):
        dest[q] = src[q]


@njit(**NJIT_OPTIONS)
def _add_row(src, dest):
    """``dest += src``.

    Parameters
    ----------
    src : float64 (k,)
        Read only.
    dest : float64 (k,)
        Updated in place.
    """
    for q in range(src.shape[0]):
        dest[q] += src[q]


@njit(**NJIT_OPTIONS)
def add_rows_in_order(rows, dest):
    """``dest += rows[0] + rows[1] + …`` in this order (a block adds exactly what its rows added one at a time
    by :func:`_add_row` would).

    Parameters
    ----------
    rows : float64 (m, k)
        Read only.
    dest : float64 (k,)
        Updated in place.
    """
    for i in range(rows.shape[0]):
        for q in range(rows.shape[1]):
            dest[q] += rows[i, q]


@njit(**NJIT_OPTIONS)
def _tree_prefix(left_est, t, dest):
    """``dest ← Σ_{h: bit h of t set} left_est[h]``, levels in ascending order (zeros when t = 0).

    Parameters
    ----------
    left_est : float64 (L, k)
        Subtree estimate of the last completed left node of each level.
    t : int
        Number of records the estimate covers; t < 2^L.
    dest : float64 (k,)
        Output, overwritten.
    """
    for q in range(dest.shape[0]):
        dest[q] = 0.0
    h = 0
    while t > 0:
        if t & 1:
            _add_row(left_est[h], dest)
        t >>= 1
        h += 1


@njit(**NJIT_OPTIONS)
def _tree_add_block(V, Z, t0, scales, a, b, left_sums, left_est, work, out, nodes):
    """Feed records t0+1 … t0+m to the binary tree.

    Parameters
    ----------
    V : float64 (m, k)
        The records, in stream order.
    Z : float64 (n_nodes, k)
        Standard normals, one row per completed node: records in order, and within a record the
        levels 0, 1, …, z ascending. ``n_nodes = m + (t1 − popcount(t1)) − (t0 − popcount(t0))``
        with t1 = t0 + m.
    t0 : int
        Records fed before this block.
    scales : float64 (L,)
        Noise standard deviation σ_h of each level.
    a, b : float64 (L,)
        Combination weights: a node's subtree estimate is ``a_h·y + b_h·(e_left + e_right)`` with y
        its noisy value and e_left, e_right its children's subtree estimates (least squares:
        a_h = var_h/σ_h², b_h = 1 − a_h; the plain estimate: a = 1, b = 0). Level 0 uses y alone.
    left_sums, left_est : float64 (L, k)
        State, updated in place: per level, the noiseless sum and the subtree estimate of the last
        completed left node.
    work : float64 (2, k)
        Scratch.
    out : float64 (m, k) or (0, k)
        When it has m rows, row i receives the prefix estimate after record t0+i+1.
    nodes : float64 (n_nodes, k) or (0, k)
        When it has n_nodes rows, row r receives the noisy value of the r-th completed node (tests).
    """
    m = V.shape[0]
    keep_out = out.shape[0] == m and m > 0
    keep_nodes = nodes.shape[0] == Z.shape[0] and Z.shape[0] > 0
    no_node = work[0, :0]
    cur_sum = work[0]
    cur_est = work[1]
    r = 0
    for i in range(m):
        t = t0 + i + 1
        _leaf(V[i], scales[0], Z[r], cur_sum, cur_est, nodes[r] if keep_nodes else no_node)
        r += 1
        h = 0
        u = t
        while (u & 1) == 0:  # node (h+1, ·) completes: its left child is stored, its right one is cur
            u >>= 1
            h += 1
            _merge(left_sums[h - 1], left_est[h - 1], scales[h], Z[r], a[h], b[h], cur_sum, cur_est,
                   nodes[r] if keep_nodes else no_node)
            r += 1
        # (h, t >> h) is a left child: keep it for its sibling and for the prefix estimates
        _copy_row(cur_sum, left_sums[h])
        _copy_row(cur_est, left_est[h])
        if keep_out:
            _tree_prefix(left_est, t, out[i])


@njit(**NJIT_OPTIONS)
def _subtract_one(y, c, x):
    """``y −= c·x``.

    Parameters
    ----------
    y : float64 (k,)
        Updated in place.
    c : float
        Coefficient.
    x : float64 (k,)
        Read only.
    """
    for q in range(y.shape[0]):
        y[q] -= c * x[q]


@njit(**NJIT_OPTIONS)
def _subtract_four(y, c1, x1, c2, x2, c3, x3, c4, x4):
    """``y −= (c1·x1 + c2·x2) + (c3·x3 + c4·x4)`` (four terms of the band recursion in a fixed order).

    Parameters
    ----------
    y : float64 (k,)
        Updated in place.
    c1, c2, c3, c4 : float
        Coefficients.
    x1, x2, x3, x4 : float64 (k,)
        Read only.
    """
    for q in range(y.shape[0]):
        y[q] -= (c1 * x1[q] + c2 * x2[q]) + (c3 * x3[q] + c4 * x4[q])


@njit(**NJIT_OPTIONS)
def _toeplitz_add_block(V, Z, t0, c, sigma, ring, prefix_sum, noise_sum, out):
    """Feed records t0+1 … t0+m to the banded square-root Toeplitz mechanism.

    For record t, Y_t = (z_t − Σ_{j=1}^{min(b−1, t−1)} c_j Y_{t−j}) / c_0, the sum taken four
    terms at a time, ``y −= (c_j Y_{t−j} + c_{j+1} Y_{t−j−1}) + (c_{j+2} Y_{t−j−2} + c_{j+3} Y_{t−j−3})``
    for j = 1, 5, 9, …, then the remaining terms one at a time: a fixed order for each t, so the
    result does not depend on the blocks (and agrees with the one-term-at-a-time recursion to a few
    ulps).

    Parameters
    ----------
    V : float64 (m, k)
        The records, in stream order.
    Z : float64 (m, k)
        Standard normals, one row per record; overwritten with Y = C⁻¹z.
    t0 : int
        Records fed before this block.
    c : float64 (b,)
        Band coefficients c_0 … c_{b−1} of C.
    sigma : float
        Noise scale σ.
    ring : float64 (b−1, k)
        State, updated in place: Y_s of the last b−1 records, Y_s in row (s−1) mod (b−1).
    prefix_sum, noise_sum : float64 (k,)
        State, updated in place: S_t = Σ_{s≤t} v_s and W_t = Σ_{s≤t} Y_s.
    out : float64 (m, k) or (0, k)
        When it has m rows, row i receives S_t + σ·W_t after record t = t0+i+1.
    """
    m = V.shape[0]
    keep_out = out.shape[0] == m and m > 0
    for i in range(m):
        _toeplitz_record(V[i], Z[i], t0 + i + 1, c, ring, prefix_sum, noise_sum)
        if keep_out:
            _toeplitz_release(prefix_sum, noise_sum, sigma, out[i])


@njit(**NJIT_OPTIONS)
def _toeplitz_record(v, y, t, c, ring, prefix_sum, noise_sum):
    """Feed record t to the banded square-root Toeplitz mechanism: the body of
    :func:`_toeplitz_add_block` for one record (the block kernel calls it, so a record fed alone and in
    a block go through the same floating-point operations).

    Parameters
    ----------
    v : float64 (k,)
        The record; read only.
    y : float64 (k,)
        Standard normals z_t; overwritten with Y_t = (z_t − Σ_j c_j Y_{t−j}) / c_0.
    t : int
        The record's position in the stream (t ≥ 1).
    c : float64 (b,)
        Band coefficients c_0 … c_{b−1} of C; read only.
    ring : float64 (b−1, k)
        State, updated in place: Y_s of the last b−1 records, Y_s in row (s−1) mod (b−1).
    prefix_sum, noise_sum : float64 (k,)
        State, updated in place: S_t = Σ_{s≤t} v_s and W_t = Σ_{s≤t} Y_s.
    """
    k = y.shape[0]
    R = ring.shape[0]
    c0 = c[0]
    back = min(R, t - 1)
    j = 1
    while j + 3 <= back:
        _subtract_four(y, c[j], ring[(t - 1 - j) % R], c[j + 1], ring[(t - 2 - j) % R],
                       c[j + 2], ring[(t - 3 - j) % R], c[j + 3], ring[(t - 4 - j) % R])
        j += 4
    while j <= back:
        _subtract_one(y, c[j], ring[(t - 1 - j) % R])
        j += 1
    if c0 != 1.0:
        for q in range(k):
            y[q] /= c0
    if R > 0:
        _copy_row(y, ring[(t - 1) % R])
    _add_row(y, noise_sum)
    _add_row(v, prefix_sum)


@njit(**NJIT_OPTIONS)
def _toeplitz_release(prefix_sum, noise_sum, sigma, dest):
    """``dest ← S + σ·W`` (the same expression as the block kernel's per-record output).

    Parameters
    ----------
    prefix_sum, noise_sum : float64 (k,)
    sigma : float
    dest : float64 (k,)
        Output, overwritten.
    """
    for q in range(dest.shape[0]):
        dest[q] = prefix_sum[q] + sigma * noise_sum[q]


#: The variance series is treated as converged once every stored γ is below 2⁻⁶⁰·|β|: β has stopped
#: moving (the γ decay geometrically: below 1e-16·|β| after about 20 bands), and each further term of
#: Σβ² is β² to within ~1e-16 relative.
_CONVERGED = 2.0**-60


@njit(**NJIT_OPTIONS)
def _toeplitz_variance_advance(c, gamma_ring, n_done, n_target, beta, sumsq):
    """Advance the public variance series of the banded factorisation from n_done towards n_target terms.

    γ = coefficients of 1/C(x) (C(x) = Σ_{j<b} c_j x^j), β_n = Σ_{i≤n} γ_i (the entries of a row of
    B = A C⁻¹, read backwards), and var(t)/σ² = Σ_{n<t} β_n². For n < b the band does not matter yet
    and the exact square-root series holds: γ_0 = 1, γ_n = −c_n/(2n − 1), β_n = c_n (so an exact
    factorisation, b ≥ t, costs O(t)); beyond, γ_n = −(Σ_{j=1}^{b−1} c_j γ_{n−j})/c_0, until the
    series has converged (checked after the terms n ≡ 0 mod (b−1), n ≥ b, so at positions that do not
    depend on n_done): the caller then continues with Σ_{n<t} β_n² = sumsq + (t − n_stop)·β².

    Parameters
    ----------
    c : float64 (b,)
        Band coefficients (the square-root series truncated to b terms, c_0 = 1).
    gamma_ring : float64 (b−1,)
        State, updated in place: γ_n in slot n mod (b−1) for the last b−1 terms.
    n_done, n_target : int
        Terms summed so far and wanted (n_target ≥ n_done).
    beta, sumsq : float
        β_{n_done−1} (0 when n_done = 0) and Σ_{n<n_done} β_n².

    Returns
    -------
    (float, float, int, bool)
        β_{n_stop−1}, Σ_{n<n_stop} β_n², n_stop and whether the series converged at n_stop (else
        n_stop = n_target).
    """
    bw = c.shape[0]
    R = bw - 1
    for n in range(n_done, n_target):
        if n == 0:
            g = 1.0
            beta = 1.0
        elif n < bw:
            g = -c[n] / (2.0 * n - 1.0)
            beta = c[n]
        else:
            acc = 0.0
            for j in range(1, R + 1):
                acc += c[j] * gamma_ring[(n - j) % R]
            g = -acc / c[0]
            beta = beta + g
        if R > 0:
            gamma_ring[n % R] = g
        sumsq += beta * beta
        if n >= bw and (R == 0 or n % R == 0):
            biggest = 0.0
            for j in range(R):
                biggest = max(biggest, abs(gamma_ring[j]))
            if biggest <= _CONVERGED * abs(beta):
                return beta, sumsq, n + 1, True
    return beta, sumsq, n_target, False
