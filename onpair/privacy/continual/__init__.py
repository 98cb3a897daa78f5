"""Continual release of prefix sums (split into one module per mechanism in the next commit)."""

from .base import (DEFAULT_BAND, ESTIMATES, MAX_ENTRY, MAX_RECORDS, MAX_STATE_FLOATS, BandedToeplitz, EpochTrees,
                   PrefixSumMechanism, TreeAggregation, sqrt_toeplitz_coefficients)
