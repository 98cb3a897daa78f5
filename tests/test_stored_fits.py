"""The stored fits are what their generators give: a sample of them re-derived, in seconds.

``onpair/privacy/continual/blt_fits.py`` and ``decayed_fits.py`` hold public constants fitted once, offline, by
``bench/generators/blt_optimise.py`` and ``bench/generators/decayed_optimise.py``. Here each generator runs its
own chain of fits for its smallest cases (one and two buffers: the BLT at T = 2, 4, 8, the decayed sums at the
half-lives 4 and 2^2.5), and each stored fit must use as many buffers and reach the fresh fit's loss (the log of
the variance the generator minimises) within ``LOSS_TOLERANCE``. A stored fit nudged off its optimum fails the
same check (the last test), so the check can tell.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from onpair.privacy.continual import blt_fits, decayed_fits
from onpair.privacy.continual.blt import BLTParameters
from onpair.privacy.continual.decayed import decay_of

GENERATORS = pathlib.Path(__file__).resolve().parents[1] / "bench" / "generators"
#: Absolute tolerance on the log of the minimised variance (a relative 1e-8 on the variance). The generators
#: converge far below it: re-derived and stored losses agreed to 1e-15 when this test was written.
LOSS_TOLERANCE = 1e-8
BLT_EXPONENTS = (1, 2, 3)      # T = 2, 4, 8: one buffer, then two
DECAYED_EXPONENTS = (2.0, 2.5)  # half-lives 4 and 5.7: one buffer, then two


def _load(name: str):
    """A generator script as a module (``decayed_optimise`` imports ``blt_optimise`` by its bare name)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, GENERATORS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def blt():
    return _load("blt_optimise")


@pytest.fixture(scope="module")
def decayed(blt):
    return _load("decayed_optimise")


@pytest.fixture(scope="module")
def fresh_blt_fits(blt):
    return blt.fit_horizons(exponents=BLT_EXPONENTS, log=lambda *_: None)


@pytest.fixture(scope="module")
def fresh_decayed_fits(decayed):
    return decayed.fit_all(exponents=list(DECAYED_EXPONENTS), log=lambda *_: None)


def _blt_loss(blt, p: BLTParameters, T: int) -> float:
    return blt.horizon_loss(blt.pack(p.decays, p.inverse_decays), T)


def _decayed_loss(blt, decayed, p: BLTParameters, exponent: float) -> float:
    return decayed.stationary_loss(blt.pack(p.decays, p.inverse_decays), decay_of(2.0 ** exponent))


def _reproduces(stored: BLTParameters, fresh: BLTParameters, stored_loss: float, fresh_loss: float) -> bool:
    return stored.buffers == fresh.buffers and abs(stored_loss - fresh_loss) <= LOSS_TOLERANCE


@pytest.mark.parametrize("exponent", BLT_EXPONENTS)
def test_a_stored_blt_fit_is_what_its_generator_fits(blt, fresh_blt_fits, exponent):
    T = 2 ** exponent
    stored, fresh = BLTParameters(*blt_fits.HORIZON_FITS[T]), fresh_blt_fits[T]
    assert _reproduces(stored, fresh, _blt_loss(blt, stored, T), _blt_loss(blt, fresh, T)), (
        f"T = {T}: stored {stored.buffers} buffers, loss {_blt_loss(blt, stored, T)!r}; "
        f"refit {fresh.buffers} buffers, loss {_blt_loss(blt, fresh, T)!r}")


@pytest.mark.parametrize("exponent", DECAYED_EXPONENTS)
def test_a_stored_decayed_fit_is_what_its_generator_fits(blt, decayed, fresh_decayed_fits, exponent):
    stored, fresh = BLTParameters(*decayed_fits.DECAYED_FITS[exponent]), fresh_decayed_fits[exponent]
    stored_loss = _decayed_loss(blt, decayed, stored, exponent)
    fresh_loss = _decayed_loss(blt, decayed, fresh, exponent)
    assert _reproduces(stored, fresh, stored_loss, fresh_loss), (
        f"half-life 2^{exponent}: stored {stored.buffers} buffers, loss {stored_loss!r}; "
        f"refit {fresh.buffers} buffers, loss {fresh_loss!r}")


def test_a_stored_fit_nudged_off_its_optimum_fails_the_check(blt, decayed, fresh_blt_fits, fresh_decayed_fits):
    """The slowest decay of the two-buffer fits moved by a relative 1e-3 (the fit stays a valid BLT)."""
    def nudged(p):
        decays = np.array(p.decays)
        decays[0] *= 1.0 - 1e-3
        return BLTParameters(decays, p.inverse_decays)

    stored = nudged(BLTParameters(*blt_fits.HORIZON_FITS[8]))
    fresh = fresh_blt_fits[8]
    assert not _reproduces(stored, fresh, _blt_loss(blt, stored, 8), _blt_loss(blt, fresh, 8))
    stored = nudged(BLTParameters(*decayed_fits.DECAYED_FITS[2.5]))
    fresh = fresh_decayed_fits[2.5]
    assert not _reproduces(stored, fresh, _decayed_loss(blt, decayed, stored, 2.5),
                           _decayed_loss(blt, decayed, fresh, 2.5))
