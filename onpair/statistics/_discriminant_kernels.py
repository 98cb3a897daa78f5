"""Compiled posterior of the linear discriminant classifier (:mod:`onpair.statistics.discriminant`).

One record's log-posterior log P(c | z) = s_c − logsumexp_k s_k, s_c = zᵀcoef_c + intercept_c, in a fixed order
of operations, so that a block of records gives, row by row, exactly what the records scored one at a time
give. Measured (bench/studies/classifier_prototype.py ``timing``): one record's posterior through NumPy costs about
1.4 ``OnPairStats.learn_one`` at d = 10 (0.28 at d = 50), compiled 0.16 (0.03): the per-record path of a river
``predict_proba_one`` at small d.
"""

from __future__ import annotations

import math

from numba import njit

from .._config import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def _log_posterior_row(z, coef, intercept, out):
    """Write log P(c | z) for every class into ``out``.

    Parameters
    ----------
    z : ndarray of float64, shape (d,)
        The box-mapped record; read only.
    coef : ndarray of float64, shape (C, d)
        Read only.
    intercept : ndarray of float64, shape (C,)
        Read only.
    out : ndarray of float64, shape (C,)
        Overwritten with the log-posteriors (a log-softmax of the scores).
    """
    n_classes, d = coef.shape
    top = -math.inf
    for c in range(n_classes):
        score = intercept[c]
        for k in range(d):
            score += coef[c, k] * z[k]
        out[c] = score
        if score > top:
            top = score
    total = 0.0
    for c in range(n_classes):
        total += math.exp(out[c] - top)
    shift = top + math.log(total)
    for c in range(n_classes):
        out[c] -= shift


@njit(**NJIT_OPTIONS)
def _log_posterior_rows(Z, coef, intercept, out):
    """:func:`_log_posterior_row` for every row of ``Z`` (m, d) into ``out`` (m, C): the same arithmetic.

    Parameters
    ----------
    Z : ndarray of float64, shape (m, d)
        Records mapped by the public bounds; read only.
    coef : ndarray of float64, shape (C, d)
        The posterior's slopes; read only.
    intercept : ndarray of float64, shape (C,)
        Its intercepts; read only.
    out : ndarray of float64, shape (m, C)
        Written in place: log P(c | z) per row.
    """
    for i in range(Z.shape[0]):
        _log_posterior_row(Z[i], coef, intercept, out[i])
