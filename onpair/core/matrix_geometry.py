"""Constraint sets for the metric task: symmetric d×d matrices W, with exact Euclidean projections.

The metric learners keep W as a flat row-major vector of d² entries, so the Frobenius norm of W is the
ℓ2 norm of that vector and every sensitivity of the ledger is a Frobenius-norm bound. Four sets, all
convex (so the projections are non-expansive, which the ledger needs), all of radius R:

==================  ===============================================  ==============
name                set                                              diameter (‖·‖_F)
==================  ===============================================  ==============
``"frobenius"``     symmetric, ‖W‖_F ≤ R (Huai et al., Example 1)     2R
``"psd"``           positive semi-definite, ‖W‖_F ≤ R                 √2·R
``"nuclear"``       symmetric, ‖W‖_* = Σ|λ_i| ≤ R (Yang et al. (11))   2R
``"psd_nuclear"``   positive semi-definite, trace W ≤ R               √2·R
==================  ===============================================  ==============

The PSD sets have the smaller diameter because two PSD matrices have ⟨A, B⟩ = tr(AB) ≥ 0, so
‖A − B‖²_F ≤ ‖A‖²_F + ‖B‖²_F ≤ 2R² (attained by two orthogonal rank-one matrices). Every set lies in the
Frobenius ball (‖W‖_F ≤ ‖W‖_*), so on all of them |h_W(x, x')| ≤ R‖x − x'‖² ≤ 4R, which the loss
constants of :mod:`onpair.core.metric_losses` use.

Projections (exact; ``tests/test_matrix_geometry.py`` checks them against a numerical solver):

* Frobenius ball: scale W down to norm R;
* PSD ∩ ball: clip the negative eigenvalues, then scale (for a closed convex cone K and a ball
  centred at the origin, Π_{K∩B} = Π_B ∘ Π_K);
* nuclear ball: project the eigenvalue vector onto the ℓ1 ball (Duchi et al. 2008), keep the
  eigenvectors (the nuclear norm and the Frobenius distance are unitarily invariant, so the problem
  separates over the spectrum, von Neumann's trace inequality);
* PSD ∩ nuclear ball: the same with the eigenvalues projected onto {λ ≥ 0, Σλ ≤ R}.

A matrix already in the set is returned unchanged, bit for bit, when the check confirms it: always for
the Frobenius ball; for the spectral sets when the computed spectrum is inside (a rank-deficient PSD
matrix can show eigenvalues of −1e−17 and then goes through the rebuild, which moves it by rounding
error only).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ._validation import check_radius

FROBENIUS = 0
PSD = 1
NUCLEAR = 2
PSD_NUCLEAR = 3

CONSTRAINTS = {"frobenius": FROBENIUS, "psd": PSD, "nuclear": NUCLEAR, "psd_nuclear": PSD_NUCLEAR}


def constraint_code(name) -> int:
    """Integer code of a constraint set name; a clear ``ValueError`` for an unknown one."""
    try:
        return CONSTRAINTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"constraint must be one of {sorted(CONSTRAINTS)}, got {name!r}") from None


def constraint_diameter(code: int, radius: float) -> float:
    """diam(C) in the Frobenius norm (see the table above)."""
    if code in (PSD, PSD_NUCLEAR):
        return math.sqrt(2.0) * float(radius)
    return 2.0 * float(radius)


@njit(**NJIT_OPTIONS)
def _project_l1_ball(values, radius, nonnegative):
    """Euclidean projection of a vector onto {v : Σ|v_i| ≤ radius} (or {v ≥ 0, Σ v_i ≤ radius}), in place.

    Sort-based (Duchi et al. 2008): the projection soft-thresholds |v| at the θ ≥ 0 that makes the
    ℓ1 norm equal to ``radius``; signs are kept (or negatives zeroed for the non-negative set).

    Parameters
    ----------
    values : float64 array of shape (n,)
        The vector (an eigenvalue vector in :func:`_project_matrix`), **overwritten** with its
        projection; unchanged (apart from zeroed negatives in the non-negative case) when already inside.
    radius : float
        R > 0.
    nonnegative : bool
        True projects onto {v ≥ 0, Σ v_i ≤ R}, False onto the ℓ1 ball {Σ|v_i| ≤ R}.

    Returns
    -------
    None
    """
    n = values.shape[0]
    magnitude = np.empty(n)
    for i in range(n):
        v = values[i]
        if nonnegative:
            magnitude[i] = v if v > 0.0 else 0.0
        else:
            magnitude[i] = abs(v)
    total = 0.0
    for i in range(n):
        total += magnitude[i]
    if total <= radius:
        for i in range(n):
            if nonnegative and values[i] < 0.0:
                values[i] = 0.0
        return
    ordered = np.sort(magnitude)[::-1]
    cumulative = 0.0
    # Mathematically index 0 always qualifies (θ = |v|_max − R); in floating point R can be below the
    # rounding unit of |v|_max, so start from that value rather than from 0.
    theta = max(ordered[0] - radius, 0.0)
    for i in range(n):
        cumulative += ordered[i]
        candidate = (cumulative - radius) / (i + 1)
        if ordered[i] > candidate:
            theta = candidate
    total = 0.0
    for i in range(n):
        shrunk = magnitude[i] - theta
        if shrunk < 0.0:
            shrunk = 0.0
        magnitude[i] = shrunk
        total += shrunk
    # |v| − θ loses the low digits of |v| when |v|_max ≫ R: a final rescale keeps the result in the
    # set (the sensitivity analysis needs membership; the rescale moves it by rounding error only).
    scale = radius / total if total > radius else 1.0
    for i in range(n):
        shrunk = magnitude[i] * scale
        values[i] = shrunk if (nonnegative or values[i] >= 0.0) else -shrunk


@njit(**NJIT_OPTIONS)
def _symmetrise(w, d):
    """Copy the upper triangle of the flat d×d matrix ``w`` onto its lower triangle (exact symmetry).

    Parameters
    ----------
    w : float64 array of shape (d·d,)
        A flat row-major d×d matrix; its strictly lower triangle is overwritten in place.
    d : int
        The side d.

    Returns
    -------
    None
    """
    for k in range(d):
        for l in range(k + 1, d):
            w[l * d + k] = w[k * d + l]


@njit(**NJIT_OPTIONS)
def _rebuild_from_spectrum(w, d, eigenvalues, eigenvectors):
    """w ← V diag(λ) Vᵀ as a flat row-major vector, upper triangle computed and mirrored.

    Parameters
    ----------
    w : float64 array of shape (d·d,)
        Overwritten with the flat row-major matrix V diag(λ) Vᵀ (exactly symmetric).
    d : int
        The side d.
    eigenvalues : float64 array of shape (d,)
        λ (read only).
    eigenvectors : float64 array of shape (d, d)
        V, column i the eigenvector of ``eigenvalues[i]`` (``np.linalg.eigh``'s layout; read only).

    Returns
    -------
    None
    """
    for k in range(d):
        for l in range(k, d):
            acc = 0.0
            for i in range(d):
                acc += eigenvectors[k, i] * eigenvalues[i] * eigenvectors[l, i]
            w[k * d + l] = acc
    _symmetrise(w, d)


@njit(**NJIT_OPTIONS)
def _frobenius_norm(w):
    """‖w‖₂, scaled by the largest entry so that entries beyond 1e154 do not overflow the squares.

    Parameters
    ----------
    w : float64 array of shape (p,)
        A flat matrix or vector (read only).

    Returns
    -------
    float
        ‖w‖₂ as a float64; NaN if an entry is NaN, otherwise inf if an entry is infinite.
    """
    largest = 0.0
    for k in range(w.shape[0]):
        a = abs(w[k])
        if a > largest or a != a:
            largest = a
    if largest == 0.0 or not math.isfinite(largest):
        return largest
    total = 0.0
    for k in range(w.shape[0]):
        r = w[k] / largest
        total += r * r
    return largest * math.sqrt(total)


@njit(**NJIT_OPTIONS)
def _clamp_norm(w, radius):
    """Scale ``w`` in place onto the ball of ``radius`` when its norm exceeds it (the Frobenius-ball
    projection).

    Parameters
    ----------
    w : float64 array of shape (p,)
        A flat matrix; updated in place (unchanged when ‖w‖ ≤ radius or its norm is NaN).
    radius : float
        R > 0.

    Returns
    -------
    None
    """
    norm = _frobenius_norm(w)
    if norm > radius:
        scale = radius / norm
        for k in range(w.shape[0]):
            w[k] *= scale


@njit(**NJIT_OPTIONS)
def _project_matrix(w, d, radius, constraint):
    """Project the flat symmetric d×d matrix ``w`` onto the constraint set, in place.

    The four sets and their projections are in docs/algorithms.md#projections; a matrix already in the
    set is left unchanged.

    Parameters
    ----------
    w : float64 array of shape (d·d,), C-contiguous
        A flat row-major symmetric matrix, **overwritten** in place with its projection.
    d : int
        The side d.
    radius : float
        R > 0 of the set.
    constraint : int
        :data:`FROBENIUS`, :data:`PSD`, :data:`NUCLEAR` or :data:`PSD_NUCLEAR` (any other code is treated
        as :data:`NUCLEAR`).

    Returns
    -------
    None
    """
    if constraint == FROBENIUS:
        _clamp_norm(w, radius)
        return
    eigenvalues, eigenvectors = np.linalg.eigh(w.reshape((d, d)).copy())
    if constraint == PSD:
        if eigenvalues[0] >= 0.0 and _frobenius_norm(w) <= radius:
            return  # already in the set: unchanged
        total = 0.0
        for i in range(d):
            if eigenvalues[i] < 0.0:
                eigenvalues[i] = 0.0
            total += eigenvalues[i] * eigenvalues[i]
        norm = math.sqrt(total)
        if norm > radius:
            for i in range(d):
                eigenvalues[i] *= radius / norm
        _rebuild_from_spectrum(w, d, eigenvalues, eigenvectors)
        _clamp_norm(w, radius)  # the rebuild can exceed R by an ulp or two
        return
    nonnegative = constraint == PSD_NUCLEAR
    inside = True
    total = 0.0
    for i in range(d):
        if nonnegative and eigenvalues[i] < 0.0:
            inside = False
        total += abs(eigenvalues[i])
    if inside and total <= radius:
        return
    _project_l1_ball(eigenvalues, radius, nonnegative)
    _rebuild_from_spectrum(w, d, eigenvalues, eigenvectors)


def as_square_symmetric(W, name: str = "W") -> np.ndarray:
    """A float64 copy of a square, symmetric, finite matrix; ``ValueError`` naming what is wrong."""
    try:
        M = np.array(W, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a square matrix of floats, got {type(W).__name__}") from None
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        k, l = map(int, np.argwhere(~np.isfinite(M))[0])
        raise ValueError(f"{name}[{k}, {l}] = {float(M[k, l])!r} is not finite")
    asymmetry = np.abs(M - M.T)
    scale = max(1.0, float(np.max(np.abs(M))))
    if float(asymmetry.max()) > 1e-10 * scale:
        k, l = map(int, np.unravel_index(int(np.argmax(asymmetry)), M.shape))
        raise ValueError(f"{name} must be symmetric: {name}[{k}, {l}] = {float(M[k, l])!r} but {name}[{l}, {k}] = "
                         f"{float(M[l, k])!r}")
    return 0.5 * M + 0.5 * M.T


def project_matrix(W, radius: float, constraint: str = "frobenius") -> np.ndarray:
    """Euclidean (Frobenius) projection of a symmetric matrix onto a constraint set of the metric task.

    Parameters
    ----------
    W : array-like of shape (d, d)
        A symmetric matrix.
    radius : float
        R of the set.
    constraint : {"frobenius", "psd", "nuclear", "psd_nuclear"}
        See the module docstring.

    Returns
    -------
    ndarray of shape (d, d)
        The nearest point of the set, a new array.

    Examples
    --------
    >>> import numpy as np
    >>> project_matrix(np.diag([3.0, -4.0]), 1.0, "frobenius")
    array([[ 0.6,  0. ],
           [ 0. , -0.8]])
    >>> project_matrix(np.diag([3.0, -4.0]), 1.0, "psd")
    array([[1., 0.],
           [0., 0.]])
    >>> project_matrix(np.diag([3.0, -1.0]), 1.0, "nuclear")
    array([[1., 0.],
           [0., 0.]])
    """
    M = as_square_symmetric(W)
    d = M.shape[0]
    return project_matrix_flat(M.reshape(-1), d, check_radius(radius), constraint_code(constraint)).reshape(d, d)


def project_matrix_flat(flat, d: int, radius: float, constraint: int) -> np.ndarray:
    """Π_C of a flat row-major symmetric matrix (d² entries) onto the set with code ``constraint``,
    as a new array (the learners keep W flat).

    Examples
    --------
    >>> project_matrix_flat([3.0, 0.0, 0.0, -4.0], 2, 1.0, PSD)
    array([1., 0., 0., 0.])
    """
    out = np.array(flat, dtype=np.float64, copy=True).reshape(-1)
    _project_matrix(out, int(d), float(radius), int(constraint))
    return out


def psd_part(W) -> np.ndarray:
    """The nearest positive semi-definite matrix (negative eigenvalues set to zero).

    A metric learned over symmetric matrices may be indefinite; ``(x − x')ᵀ W₊ (x − x')`` with this
    ``W₊`` is always a (pseudo-)distance, which is what nearest-neighbour search needs.

    Examples
    --------
    >>> import numpy as np
    >>> psd_part(np.diag([2.0, -1.0]))
    array([[2., 0.],
           [0., 0.]])
    """
    M = as_square_symmetric(W)
    eigenvalues, eigenvectors = np.linalg.eigh(M)
    return (eigenvectors * np.maximum(eigenvalues, 0.0)) @ eigenvectors.T


def metric_factor(W) -> np.ndarray:
    """A matrix L with ``LᵀL = W₊`` (the PSD part of ``W``), so ``‖L(x − x')‖₂² = (x − x')ᵀW₊(x − x')``.

    Rows belong to the non-zero eigenvalues of ``W₊`` (largest first): L maps records into a space of
    dimension rank(W₊), where the plain Euclidean distance is the learned metric.

    Examples
    --------
    >>> import numpy as np
    >>> L = metric_factor(np.array([[2.0, 0.0], [0.0, 0.5]]))
    >>> np.allclose(L.T @ L, [[2.0, 0.0], [0.0, 0.5]])
    True
    """
    M = as_square_symmetric(W)
    eigenvalues, eigenvectors = np.linalg.eigh(M)
    keep = eigenvalues > 0.0
    if not keep.any():
        return np.zeros((1, M.shape[0]))  # W₊ = 0: every record maps to the origin
    order = np.argsort(eigenvalues[keep])[::-1]
    roots = np.sqrt(eigenvalues[keep][order])
    return roots[:, None] * eigenvectors[:, keep][:, order].T


def identity_center(d: int, radius: float, constraint: int) -> np.ndarray:
    """``s·I`` at half the largest multiple of the identity in the set, as a flat vector of d² entries.

    s = R/(2√d) for the Frobenius-norm sets (‖s·I‖_F = s√d), s = R/(2d) for the nuclear-norm sets
    (‖s·I‖_* = s·d). The metric learners pull W towards it (center="identity"): a data-independent
    prior under which the learned metric is a correction of the Euclidean metric on the public box.

    Examples
    --------
    >>> identity_center(2, 1.0, NUCLEAR).reshape(2, 2)
    array([[0.25, 0.  ],
           [0.  , 0.25]])
    """
    scale = radius / (2.0 * d) if constraint in (NUCLEAR, PSD_NUCLEAR) else radius / (2.0 * math.sqrt(d))
    return (scale * np.eye(d)).reshape(-1)


def random_symmetric_point(rng: np.random.Generator, d: int, radius: float, constraint: int) -> np.ndarray:
    """A data-independent random point of the constraint set, as a flat vector of d² entries.

    A symmetric Gaussian direction scaled to a uniform radius in the Frobenius ball, then projected
    onto the set (Huai Alg. 1/2's "random point of C" needs any data-independent point; uniformity on
    C is not part of the privacy argument).
    """
    Z = rng.standard_normal((d, d))
    S = 0.5 * (Z + Z.T)
    norm = np.linalg.norm(S)
    if norm == 0.0:
        return np.zeros(d * d)
    S *= radius * rng.random() ** (1.0 / (d * (d + 1) / 2)) / norm
    flat = S.reshape(-1).copy()
    _project_matrix(flat, d, float(radius), int(constraint))
    return flat


def symmetric_noise(rng: np.random.Generator, count: int, d: int) -> np.ndarray:
    """``count`` standard Gaussian symmetric matrices as flat rows, isotropic in the Frobenius norm.

    Each is ``(Z + Zᵀ)/2`` with Z standard normal: diagonal entries N(0, 1), off-diagonal entries
    N(0, 1/2), mirrored. In the orthonormal coordinates of the symmetric matrices (the diagonal and
    √2 times the upper triangle) that is exactly N(0, I) over d(d+1)/2 coordinates, and those
    coordinates preserve the Frobenius norm. So σ times this noise is the Gaussian mechanism with
    ℓ2 sensitivity = the Frobenius sensitivity: release ρ = Δ_F²/(2σ²). (Drawing N(0, σ²) independently
    for every entry of the upper triangle and mirroring would also be private, with twice the needed
    variance off the diagonal.)

    Examples
    --------
    >>> import numpy as np
    >>> N = symmetric_noise(np.random.default_rng(0), 2, 3)
    >>> N.shape, bool(np.allclose(N[0].reshape(3, 3), N[0].reshape(3, 3).T))
    ((2, 9), True)
    """
    Z = rng.standard_normal((count, d, d))
    return (0.5 * (Z + np.transpose(Z, (0, 2, 1)))).reshape(count, d * d)
