"""The tier the suite runs in (set by the root conftest.py from ``--fast``), and the sizes it gives.

The full tier (``make test-all``, CI) runs each statistical test at its full power; the fast tier
(``make test``) at a smaller size that must still be able to fail (the audit's broken variants still fail
it: tests/test_audit.py). A test sizes itself with :func:`by_tier` rather than testing the tier.
"""

from collections import Counter

#: True in the fast tier (``pytest --fast``); the root conftest.py sets it before the test modules load.
FAST = False


def by_tier(*, fast, full):
    """``fast`` in the fast tier, else ``full`` (a number of trials, seeds, runs, or a list of cases)."""
    return fast if FAST else full


def covering(checks):
    """A covering subset of a product: ``{check: [values]}`` → ``{check: [the values it runs on]}``.

    Each check runs on at least one of its values and each value on at least one check. Checks are taken in
    order, each on its value with the fewest checks so far (the first such in order of appearance: a
    rotation); a value that no check took then goes to the check that can take it with the fewest values.
    """
    order = {}
    for values in checks.values():
        for value in values:
            order.setdefault(value, len(order))
    taken, chosen = Counter(), {key: [] for key in checks}
    for key, values in checks.items():
        if values:
            value = min(values, key=lambda v: (taken[v], order[v]))
            taken[value] += 1
            chosen[key].append(value)
    for value in order:
        if not taken[value]:
            key = min((k for k in checks if value in checks[k]), key=lambda k: len(chosen[k]))
            taken[value] += 1
            chosen[key].append(value)
    return chosen
