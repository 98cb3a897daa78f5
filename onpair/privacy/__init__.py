"""Privacy accounting: conversions, the Gaussian mechanism, the zCDP accountant, the sensitivity
ledger and release schedules. Everything here depends on public quantities only."""

from .accountant import ZCDPAccountant
from .conversions import eps_from_rho, rho_from_dp
from .exceptions import PrivacyBudgetExceeded, PrivacyWarning
from .gaussian import gaussian_rho, gaussian_sigma, sigma_for_rho
from .ledger import sensitivity_ledger
from .schedule import ReleaseSchedule

__all__ = [
    "ZCDPAccountant", "eps_from_rho", "rho_from_dp", "PrivacyBudgetExceeded", "PrivacyWarning",
    "gaussian_rho", "gaussian_sigma", "sigma_for_rho", "sensitivity_ledger", "ReleaseSchedule",
]
