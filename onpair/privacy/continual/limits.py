"""The limits every continual-release mechanism enforces, and its argument checks (TypeError for a wrong
type, ValueError for a wrong value, each naming the argument), before anything is allocated or drawn."""

from __future__ import annotations

import numbers

import numpy as np

from ..gaussian import sigmas_for_shares
from .normals import NormalBlock

#: The most records a mechanism accepts (positions stay exact in int64; 63 tree levels).
MAX_RECORDS = 2**62

#: The largest magnitude of a record's entry, and of the noise scale σ, that a mechanism accepts. Sums of
#: up to 2^62 such records (< 5e168) and their noise stay far from overflow, so every release is finite;
#: a record beyond it is refused like a NaN (a record of 1e308 plus another would release inf).
MAX_ENTRY = 1e150

#: The most float64 numbers (8 GiB) a mechanism's state may hold: a ``dim``, ``band`` or ``first_epoch``
#: that needs more is refused with a ValueError naming it, before anything is allocated (it would
#: otherwise exhaust the memory, or kill the process).
MAX_STATE_FLOATS = 2**30


def is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(value, name: str, minimum: int = 1, maximum: int = MAX_RECORDS) -> int:
    """An integer argument: TypeError for a non-integer (bools included), ValueError outside the range."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)


def check_real(value, name: str) -> None:
    if isinstance(value, (bool, np.bool_)) or not (
            isinstance(value, numbers.Real)
            or (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu")):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")


def check_state_size(floats: int, what: str) -> None:
    if floats > MAX_STATE_FLOATS:
        raise ValueError(f"{what} give a state of {floats:,} floats ({floats * 8 / 2**30:,.1f} GiB), more than "
                         f"MAX_STATE_FLOATS = 2**30 (8 GiB): refused before allocating it")


def noise_scales(sensitivities, shares, sensitivity, rho) -> np.ndarray:
    """σ for each share (:func:`sigmas_for_shares`), refused unless every σ lies in [1/MAX_ENTRY, MAX_ENTRY]:
    beyond, the noise or its inverse variance would overflow (an extreme ``sensitivity`` or ``rho``)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sigmas = sigmas_for_shares(sensitivities, shares)
    if not np.all((sigmas >= 1.0 / MAX_ENTRY) & (sigmas <= MAX_ENTRY)):
        raise ValueError(f"sensitivity={sensitivity!r} and rho={rho!r} give a noise scale σ outside "
                         f"[1/MAX_ENTRY, MAX_ENTRY] = [{1 / MAX_ENTRY:g}, {MAX_ENTRY:g}] "
                         f"(σ = {float(np.min(sigmas)):g} to {float(np.max(sigmas)):g})")
    return sigmas


def check_rng(rng) -> None:
    """The source of a mechanism's noise: the caller's Generator, or a learner's NormalBlock of it."""
    if not isinstance(rng, (np.random.Generator, NormalBlock)):
        raise TypeError(
            f"rng must be a numpy.random.Generator (the caller's own, e.g. np.random.default_rng(seed)), "
            f"got {rng!r}")
