"""pytest configuration for the doctests of onpair/ and streams/ (tests/conftest.py covers tests/)."""

import importlib.util
import os

import pytest

# onpair.core.distributed needs the optional dask extra (make install installs it); without it, its doctests
# are not collected rather than failing at import.
collect_ignore = [] if importlib.util.find_spec("distributed") else ["onpair/core/distributed.py"]

#: Doctests that read UCI files, and the files they read.
DATA_DOCTESTS = {
    "streams.uci.UCISource": ("wdbc.data",),
    "streams.uci.load": ("pima-indians-diabetes.csv",),
}


def pytest_collection_modifyitems(config, items):
    from streams.fetch import resolve_data_dir

    data_dir = resolve_data_dir()
    for item in items:
        files = DATA_DOCTESTS.get(item.name)  # a doctest item is named after its object
        if files and not all(os.path.exists(os.path.join(data_dir, f)) for f in files):
            item.add_marker(pytest.mark.skip(
                reason=f"reads {', '.join(files)} from the data directory ({data_dir}); make test sets "
                       "ONPAIR_DATA to the shared copy, or run onpair fetch"))
