"""pytest configuration for the whole suite: the test tiers, and the doctests of onpair/ and streams/
(tests/conftest.py covers what is particular to tests/).

Two tiers. The full tier (plain ``pytest``, ``make test-all``, CI) runs every test at full statistical power.
The fast tier (``pytest --fast``, ``make test``) runs:

* no test marked ``slow``;
* of the cross-products marked ``covering(axis, ...)`` (every public class × every check), a covering subset
  per module: each check (a test function with its other parameters) on one value of its axis, each value
  on at least one check, chosen by rotation (:func:`covering_subset`); the full tier runs every product;
* the statistical tests at the smaller sizes that ``tiers.by_tier`` gives them (still able to fail: a
  broken variant fails them too).
"""

import functools
import importlib.util
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tests"))
import tiers  # noqa: E402  (tests/tiers.py: the tier the statistical tests size themselves by)

# onpair.core.distributed needs the optional dask extra (make install installs it); without it, its doctests
# are not collected rather than failing at import.
collect_ignore = [] if importlib.util.find_spec("distributed") else ["onpair/core/distributed.py"]

#: Doctests that read UCI files, and the files they read.
DATA_DOCTESTS = {
    "streams.uci.UCISource": ("wdbc.data",),
    "streams.uci.load": ("pima-indians-diabetes.csv",),
}


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true", default=False,
                     help="the fast tier (make test): no test marked slow, a covering subset of each cross-product "
                          "marked covering(axis), the statistical tests at their fast-tier sizes")


def pytest_configure(config):
    tiers.FAST = bool(config.getoption("fast"))


def _ident(value):
    """A value of an axis as a key: equal for equal strings and numbers, else for equal reprs (a class, an
    estimator with its parameters), so that the values of several tests' axes pool."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _check_ident(value):
    """A parameter of a check as a key: a string or number by value; a ``functools.partial`` (scikit-learn's
    checks, bound to each estimator's name) by its function; anything else by identity (one parametrize
    value shared by every item of the product)."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, functools.partial):
        return f"{value.func.__module__}.{value.func.__qualname__}"
    return id(value)


def _axis(item):
    """The parameter of ``item`` that its ``covering`` mark names (the first it takes), or None."""
    mark, callspec = item.get_closest_marker("covering"), getattr(item, "callspec", None)
    if mark is None or callspec is None:
        return None
    return next((axis for axis in mark.args if axis in callspec.params), None)


def covering_subset(items):
    """The items of a fast tier's cross-product: each check on one value of its axis, each value on a check.

    A *check* is a test function with its parameters other than its axis (:func:`_axis`); the values of the
    axes are pooled (a class named by ``name`` in one test and by ``cls`` in another is one value). Which
    values each check runs on: :func:`tiers.covering`.
    """
    checks, items_of = {}, {}
    for item in items:
        axis = _axis(item)
        value = _ident(item.callspec.params[axis])
        key = (item.originalname, tuple(sorted((k, _check_ident(v)) for k, v in item.callspec.params.items()
                                               if k != axis)))
        checks.setdefault(key, []).append(value)
        items_of[key, value] = item
    return {id(items_of[key, value]) for key, values in tiers.covering(checks).items() for value in values}


def _fast_tier(items):
    """(kept, deselected): the fast tier of the collected ``items`` (a covering subset per module)."""
    modules, kept_ids = {}, set()
    for item in items:
        if item.get_closest_marker("slow"):
            continue
        if _axis(item) is None:
            kept_ids.add(id(item))
        else:
            modules.setdefault(item.path, []).append(item)
    for members in modules.values():
        kept_ids |= covering_subset(members)
    return [i for i in items if id(i) in kept_ids], [i for i in items if id(i) not in kept_ids]


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected: the covering is of what was selected
def pytest_collection_modifyitems(config, items):
    from streams.fetch import resolve_data_dir

    data_dir = resolve_data_dir()
    for item in items:
        files = DATA_DOCTESTS.get(item.name)  # a doctest item is named after its object
        if files and not all(os.path.exists(os.path.join(data_dir, f)) for f in files):
            item.add_marker(pytest.mark.skip(
                reason=f"reads {', '.join(files)} from the data directory ({data_dir}); make test sets "
                       "ONPAIR_DATA to the shared copy, or run onpair fetch"))
    if tiers.FAST:
        kept, dropped = _fast_tier(items)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        config.stash[_FAST_COUNTS] = (len(kept), len(kept) + len(dropped))


_FAST_COUNTS = pytest.StashKey[tuple]()


def pytest_report_header(config):
    if tiers.FAST:
        return "tier: fast (make test); make test-all runs the full tier"
    return "tier: full"


def pytest_terminal_summary(terminalreporter, config):
    if _FAST_COUNTS in config.stash:
        kept, total = config.stash[_FAST_COUNTS]
        terminalreporter.write_line(f"fast tier: {kept} of {total} selected tests ran (the rest are marked slow "
                                    "or lie outside a covering subset); make test-all runs them all")
