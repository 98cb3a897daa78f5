"""Compiled, noise-free step of the buffered-linear-Toeplitz mechanism (:mod:`onpair.privacy.continual.blt`).

Arrays and scalars only: the Gaussian noise is drawn by the caller with NumPy from the caller's
``Generator`` and passed in as standard normals; these kernels never touch a random state. A record goes
through the same floating-point operations whatever block it arrives in (the block kernel calls the
record kernel), so a block equals its records fed one at a time, bit for bit. No ``fastmath``: the
kernels add noise, and they are compared with a dense NumPy twin (``tests/naive_blt.py``).

The encoder C is lower-triangular Toeplitz with generating function c(x) = 1 + Σ_i ω_i x/(1 − θ_i x):
c_0 = 1 and c_n = Σ_i ω_i θ_i^{n−1}. Its inverse is computed online by m buffers (McKenna 2024,
Algorithm 3 of Dvijotham et al. 2024): with b_i = Σ_{s<t} θ_i^{t−1−s} Y_s (b_i = 0 before the first
record),

    Y_t = z_t − Σ_i ω_i b_i,     then b_i ← θ_i b_i + Y_t,

so that (C·Y)_t = Y_t + Σ_{s<t} c_{t−s} Y_s = z_t, i.e. Y = C⁻¹z. The decoder is B = W·C⁻¹ for the
workload W with generating function 1/(1 − γx) (γ = 1: prefix sums): its rows are the running sums
N_t = γ·N_{t−1} + Y_t, and the data's rows S_t = γ·S_{t−1} + v_t. The release is S_t + σ·N_t.
"""

from __future__ import annotations

from numba import njit

from ..._config import NJIT_OPTIONS

#: The per-record step is the entry point other packages' compiled kernels call (the statistics family's
#: single-record path fuses its row and this step in one call: BufferedToeplitz.add_one_compiled).
__all__ = ["blt_record"]


@njit(**NJIT_OPTIONS)
def blt_record(v, y, omega, theta, decay, buffers, prefix_sum, noise_sum):
    """Feed one record: the body of :func:`_blt_add_block` (which calls it for every record).

    Parameters
    ----------
    v : float64 (k,)
        The record; read only.
    y : float64 (k,)
        Standard normals z_t; overwritten with Y_t = z_t − Σ_i ω_i b_i.
    omega, theta : float64 (m,)
        Output scales ω_i and decays θ_i of C's buffers; read only.
    decay : float
        γ, the workload's decay (1.0 for prefix sums: γ·x is then x exactly).
    buffers : float64 (m, k)
        State, updated in place: b_i ← θ_i·b_i + Y_t.
    prefix_sum, noise_sum : float64 (k,)
        State, updated in place: S ← γ·S + v and N ← γ·N + Y_t.
    """
    m, k = buffers.shape
    for i in range(m):
        w = omega[i]
        row = buffers[i]
        for q in range(k):
            y[q] -= w * row[q]
    for i in range(m):
        d = theta[i]
        row = buffers[i]
        for q in range(k):
            row[q] = d * row[q] + y[q]
    for q in range(k):
        noise_sum[q] = decay * noise_sum[q] + y[q]
        prefix_sum[q] = decay * prefix_sum[q] + v[q]


@njit(**NJIT_OPTIONS)
def _blt_add_block(V, Z, omega, theta, decay, sigma, buffers, prefix_sum, noise_sum, out):
    """Feed records V[0], V[1], … in order (see :func:`blt_record`).

    Parameters
    ----------
    V : float64 (n, k)
        The records; read only.
    Z : float64 (n, k)
        One row of standard normals per record; overwritten with the rows Y_t.
    omega, theta, decay, buffers, prefix_sum, noise_sum
        As :func:`blt_record`.
    sigma : float
        σ, the noise scale of the releases written to ``out``.
    out : float64 (n, k) or (0, k)
        If it has n rows, row r ← S + σ·N after record r (the release); if empty, nothing is written.
    """
    n, k = V.shape
    write = out.shape[0] > 0
    for r in range(n):
        blt_record(V[r], Z[r], omega, theta, decay, buffers, prefix_sum, noise_sum)
        if write:
            for q in range(k):
                out[r, q] = prefix_sum[q] + sigma * noise_sum[q]
