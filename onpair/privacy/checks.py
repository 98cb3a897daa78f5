"""Validation of privacy parameters.

Every public entry point of the privacy layer funnels its numeric arguments
through these helpers, so that a bad value fails loudly and early with a
message naming the argument, instead of propagating NaN into a noise scale
(which would silently release unprotected data or nothing at all).

All failures raise :class:`ValueError` (not :class:`TypeError`): from the
caller's point of view a string or a bool passed as epsilon is just an
invalid privacy parameter.
"""

import math
import numbers

import numpy as np

__all__ = [
    "check_epsilon",
    "check_delta",
    "check_rho",
    "check_sensitivity",
    "check_positive",
]


def _as_real(x, name):
    """Return ``x`` as a Python float, or raise ValueError.

    Bools are rejected on purpose: ``True`` is an ``int`` in Python, and
    ``epsilon=True`` is far more likely a bug than a request for epsilon = 1.
    """
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    if isinstance(x, numbers.Real):
        try:
            return float(x)
        except OverflowError:  # an integer beyond the float range
            raise ValueError(f"{name} must be a real number within the float64 range, got {x!r}") from None
    # Accept 0-d numpy arrays of a real dtype (e.g. the result of np.sum),
    # which are not registered as numbers.Real.
    if (
        isinstance(x, np.ndarray)
        and x.ndim == 0
        and (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer))
    ):
        return float(x)
    raise ValueError(f"{name} must be a real number, got {x!r}")


def check_positive(x, name="value"):
    """Validate a finite number > 0 and return it as a float.

    Parameters
    ----------
    x : real number
        Value to check.
    name : str, optional
        Argument name used in the error message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``x`` is not a real number, is not finite, or is <= 0.

    Examples
    --------
    >>> check_positive(2, name="sigma")
    2.0
    """
    v = _as_real(x, name)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return v


def check_epsilon(epsilon, name="epsilon"):
    """Validate a privacy parameter epsilon (finite, > 0).

    Parameters
    ----------
    epsilon : real number
        Value to check.
    name : str, optional
        Argument name used in the error message.

    Returns
    -------
    float
        ``epsilon`` as a Python float.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite real number > 0 (bools, strings, NaN
        and inf are all rejected).

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    >>> check_epsilon(-1.0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a finite number > 0, got -1.0
    """
    value = check_positive(epsilon, name)
    # Outside this range the root finders of the conversions lose their brackets (ε below ~1e-160
    # underflows, above ~1e30 overflows), and neither end is a meaningful privacy level.
    if not EPSILON_RANGE[0] <= value <= EPSILON_RANGE[1]:
        raise ValueError(f"{name} must lie in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}], got {value!r}")
    return value


#: The ε the library accepts: below 1e-8 no release carries signal, above 10⁴ there is no protection.
EPSILON_RANGE = (1e-8, 1e4)


def check_delta(delta, name="delta"):
    """Validate a privacy parameter delta (0 < delta < 1).

    delta = 0 is rejected because every conversion and mechanism here is an
    approximate-DP one (Gaussian noise never gives pure DP), and delta >= 1
    is no guarantee at all.

    Parameters
    ----------
    delta : real number
        Value to check.
    name : str, optional
        Argument name used in the error message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``delta`` is not a real number in the open interval (0, 1).

    Examples
    --------
    >>> check_delta(1e-5)
    1e-05
    >>> check_delta(1.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be a number with 0 < delta < 1, got 1.0
    """
    v = _as_real(delta, name)
    # NaN fails both comparisons, so it is rejected here too.
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must be a number with 0 < {name} < 1, got {v!r}")
    return v


def check_rho(rho, name="rho", allow_zero=True):
    """Validate a zCDP parameter rho (finite, >= 0, or > 0).

    Parameters
    ----------
    rho : real number
        Value to check.
    name : str, optional
        Argument name used in the error message.
    allow_zero : bool, optional
        Whether rho = 0 (no privacy loss, e.g. a data-independent release)
        is accepted. Default True.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``rho`` is not a finite real number >= 0 (> 0 when
        ``allow_zero`` is False).

    Examples
    --------
    >>> check_rho(0)
    0.0
    >>> check_rho(0, allow_zero=False)
    Traceback (most recent call last):
    ...
    ValueError: rho must be a finite number > 0, got 0.0
    """
    v = _as_real(rho, name)
    if allow_zero:
        if not (math.isfinite(v) and v >= 0.0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    elif not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return v


def check_sensitivity(x, name="sensitivity"):
    """Validate a sensitivity (finite, >= 0).

    Parameters
    ----------
    x : real number
        Value to check.
    name : str, optional
        Argument name used in the error message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``x`` is not a finite real number >= 0.

    Examples
    --------
    >>> check_sensitivity(0.5)
    0.5
    """
    v = _as_real(x, name)
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return v
