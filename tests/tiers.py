"""The tier the suite runs in (set by the root conftest.py from ``--fast``), and the sizes it gives.

The full tier (``make test-all``, CI) runs each statistical test at its full power; the fast tier
(``make test``) at a smaller size that must still be able to fail (the audit's broken variants still fail
it: tests/test_audit.py). A test sizes itself with :func:`by_tier` rather than testing the tier.
"""

#: True in the fast tier (``pytest --fast``); the root conftest.py sets it before the test modules load.
FAST = False


def by_tier(*, fast, full):
    """``fast`` in the fast tier, else ``full`` (a number of trials, seeds, runs, or a list of cases)."""
    return fast if FAST else full
