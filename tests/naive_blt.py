"""Slow, obviously correct NumPy twin of the buffered-linear-Toeplitz mechanism (onpair.privacy.continual.blt).

Everything follows the definition literally, without the library's residues or closed forms: the
coefficients of c(x) = Π(1 − θ'_i x)/Π(1 − θ_i x) come from multiplying out the two polynomials and dividing
the power series term by term, in 50-digit arithmetic (mpmath; in float64 the division loses up to 1e-9
when decays lie near 1); C is the dense T × T lower-triangular
Toeplitz matrix of them, C⁻¹ the Toeplitz matrix of the exact series of 1/c(x) (the inverse of a triangular
Toeplitz matrix; ``matrices`` checks C·C⁻¹ = I), B = W·C⁻¹ with W the dense workload (prefix sums, or
decayed sums Σ γ^{t−s} v_s), and the releases are W·V + σ·B·Z (the noise given as standard normals, one row
per record).
"""

from __future__ import annotations

import mpmath
import numpy as np

_CONTEXT = mpmath.mp.clone()
_CONTEXT.dps = 50


def polynomial(roots_inverse):
    """Coefficients (ascending, 50-digit) of Π_i (1 − r_i x)."""
    poly = [_CONTEXT.mpf(1)]
    for r in roots_inverse:
        r = _CONTEXT.mpf(float(r))
        poly = [(poly[i] if i < len(poly) else 0) - (r * poly[i - 1] if i else 0) for i in range(len(poly) + 1)]
    return poly


def series_ratio(numerator, denominator, n):
    """The first n coefficients (floats) of the power series numerator(x)/denominator(x) (denominator[0] ≠ 0),
    by long division in 50-digit arithmetic: q_j = (p_j − Σ_{i=1}^{j} d_i q_{j−i}) / d_0."""
    numerator = [_CONTEXT.mpf(x) for x in numerator]
    denominator = [_CONTEXT.mpf(x) for x in denominator]
    q = []
    for j in range(n):
        acc = numerator[j] if j < len(numerator) else _CONTEXT.mpf(0)
        for i in range(1, min(j, len(denominator) - 1) + 1):
            acc -= denominator[i] * q[j - i]
        q.append(acc / denominator[0])
    return np.array([float(x) for x in q])


def coefficients(decays, inverse_decays, n):
    """c_0 … c_{n−1} of C: the series of Π(1 − θ'x)/Π(1 − θx)."""
    return series_ratio(polynomial(inverse_decays), polynomial(decays), n)


def inverse_coefficients(decays, inverse_decays, n):
    """The first column of C⁻¹: the series of Π(1 − θx)/Π(1 − θ'x)."""
    return series_ratio(polynomial(decays), polynomial(inverse_decays), n)


def toeplitz(first_column):
    T = len(first_column)
    M = np.zeros((T, T))
    for i in range(T):
        M[i, :i + 1] = first_column[i::-1]
    return M


def workload(T, decay=1.0):
    """W with W[t, s] = γ^{t−s} for s ≤ t (γ = 1: the lower-triangular ones)."""
    t = np.arange(T)
    return np.tril(decay ** np.clip(t[:, None] - t[None, :], 0, None))


def matrices(T, decays, inverse_decays, decay=1.0):
    """(W, C, B = W·C⁻¹), dense."""
    W = workload(T, decay)
    C = toeplitz(coefficients(decays, inverse_decays, T))
    C_inv = toeplitz(inverse_coefficients(decays, inverse_decays, T))
    assert np.allclose(C @ C_inv, np.eye(T), rtol=0, atol=1e-12)
    return W, C, W @ C_inv


def prefixes(V, decays, inverse_decays, sigma, Z, decay=1.0):
    """Released W·V + σ·B·Z (T, k) and the variances σ²‖B_{t,:}‖² (T,)."""
    W, _, B = matrices(V.shape[0], decays, inverse_decays, decay)
    return W @ V + sigma * (B @ Z), sigma**2 * (B**2).sum(axis=1)


def largest_column_norm2(C):
    """max_s ‖C_{:,s}‖², over every column."""
    return float((C**2).sum(axis=0).max())
