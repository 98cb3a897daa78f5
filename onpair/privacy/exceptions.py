"""Exceptions and warnings raised by the privacy layer.

Both derive from standard built-ins so that callers who do not know about
``onpair`` still catch them with ``except ValueError`` / warning filters on
``UserWarning``.
"""

__all__ = ["NoiseDominatedWarning", "PrivacyBudgetExceeded", "PrivacyWarning"]


class PrivacyBudgetExceeded(ValueError):
    """A privacy spend would take the total past the budget.

    Raised by :class:`onpair.privacy.accountant.ZCDPAccountant` *before* any
    state changes: the accountant is left exactly as it was, so a caller may
    catch the exception and carry on with a smaller request (or stop
    releasing).

    It subclasses :class:`ValueError` because an overspend is an invalid
    argument for the current state, and code that validates with
    ``except ValueError`` should not let it through silently.

    Examples
    --------
    >>> from onpair.privacy.accountant import ZCDPAccountant
    >>> acc = ZCDPAccountant(1.0)
    >>> try:
    ...     acc.spend(2.0, label="release 1")
    ... except PrivacyBudgetExceeded as err:
    ...     print(type(err).__name__)
    PrivacyBudgetExceeded
    >>> acc.rho_spent
    0.0
    """


class PrivacyWarning(UserWarning):
    """A requested computation is not backed by a proof.

    Used for settings in which a formula is known *not* to be proven, e.g.
    the classic Gaussian mechanism bound sigma = sqrt(2 ln(1.25/delta)) *
    Delta / epsilon, whose proof needs epsilon < 1.  The result is still
    returned (for comparisons with papers that use it), but it must not be
    relied upon as a privacy guarantee.

    Examples
    --------
    >>> import warnings
    >>> from onpair.privacy.gaussian import gaussian_sigma
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = gaussian_sigma(1.0, 2.0, 1e-5, method="classic")
    >>> caught[0].category.__name__
    'PrivacyWarning'
    """


class NoiseDominatedWarning(UserWarning):
    """A released model is mostly noise: its report's ``noise_dominated`` is True.

    The released direction's expected cosine to the noiseless model's (``expected_cosine``,
    :mod:`onpair.privacy.signal`) is below 1/2. The guarantee holds; the model is of little use (more
    records, a larger ε, or fewer releases help). Issued once per fit by the offline estimators; the online
    learners say it in their report's ``status``, since their first releases always are.
    """
