"""Privacy accounting: the typed release events every model records (:mod:`onpair.privacy.events`), the zCDP
accountant they are recorded in (one per model, or shared by several), the one builder of every privacy
report and its curator-only fields (:mod:`onpair.privacy.reports`), conversions, the Gaussian mechanism, the
sensitivity ledger, release schedules, continual release of prefix sums (buffered linear Toeplitz, binary
tree, banded square-root Toeplitz, doubling epochs of trees) and the record-level cost of replays
(:mod:`onpair.privacy.replay`). Everything here except the mechanisms' state depends on public quantities only."""

from .accountant import ZCDPAccountant
from .continual import (BandedToeplitz, BufferedToeplitz, EpochTrees, PrefixSumMechanism, TreeAggregation,
                        sqrt_toeplitz_coefficients)
from .conversions import eps_from_rho, rho_from_dp
from .events import ApproxDPRelease, Composed, ContinualRelease, GaussianRelease, NonPrivate, ZCDPRelease
from .exceptions import NoiseDominatedWarning, PrivacyBudgetExceeded, PrivacyWarning
from .gaussian import gaussian_rho, gaussian_sigma, sigma_for_rho
from .ledger import sensitivity_ledger
from .replay import group_rho, record_rho, replay_rho
from .reports import public_report
from .schedule import ReleaseSchedule

__all__ = [
    "ZCDPAccountant", "eps_from_rho", "rho_from_dp", "PrivacyBudgetExceeded", "PrivacyWarning",
    "NoiseDominatedWarning",
    "gaussian_rho", "gaussian_sigma", "sigma_for_rho", "sensitivity_ledger", "ReleaseSchedule",
    "PrefixSumMechanism", "TreeAggregation", "BandedToeplitz", "EpochTrees", "sqrt_toeplitz_coefficients",
    "BufferedToeplitz",
    "record_rho", "replay_rho", "group_rho", "public_report",
    "GaussianRelease", "ContinualRelease", "ZCDPRelease", "ApproxDPRelease", "Composed", "NonPrivate",
]
