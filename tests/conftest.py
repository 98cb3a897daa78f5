"""Shared test configuration: deterministic hypothesis runs, the slow references importable as `naive`."""

import os
import sys

from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))

# CI must be reproducible: hypothesis derives its examples from the test, not from a random seed,
# and keeps no example database between runs.
settings.register_profile("onpair", derandomize=True, database=None, deadline=None)
settings.load_profile("onpair")
