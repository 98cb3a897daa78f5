"""Privacy accounting: conversions, the Gaussian mechanism, the zCDP accountant, the sensitivity
ledger, release schedules, continual release of prefix sums (buffered linear Toeplitz, binary tree,
banded square-root Toeplitz, doubling epochs of trees), the record-level cost of replays
(:mod:`onpair.privacy.replay`) and the curator-only fields of reports (:mod:`onpair.privacy.reports`). Everything here except the
mechanisms' state depends on public quantities only."""

from .accountant import ZCDPAccountant
from .continual import (BandedToeplitz, BufferedToeplitz, EpochTrees, PrefixSumMechanism, TreeAggregation,
                        sqrt_toeplitz_coefficients)
from .conversions import eps_from_rho, rho_from_dp
from .exceptions import PrivacyBudgetExceeded, PrivacyWarning
from .gaussian import gaussian_rho, gaussian_sigma, sigma_for_rho
from .ledger import sensitivity_ledger
from .replay import group_rho, record_rho, replay_rho
from .reports import public_report
from .schedule import ReleaseSchedule

__all__ = [
    "ZCDPAccountant", "eps_from_rho", "rho_from_dp", "PrivacyBudgetExceeded", "PrivacyWarning",
    "gaussian_rho", "gaussian_sigma", "sigma_for_rho", "sensitivity_ledger", "ReleaseSchedule",
    "PrefixSumMechanism", "TreeAggregation", "BandedToeplitz", "EpochTrees", "sqrt_toeplitz_coefficients",
    "BufferedToeplitz",
    "record_rho", "replay_rho", "group_rho", "public_report",
]


def __getattr__(name):
    from .._moved import submodule

    return submodule(__name__, name)
