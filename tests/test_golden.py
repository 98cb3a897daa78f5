"""Golden snapshots and release digests: the state refactoring changed nothing a user sees.

``tests/data/golden/`` was written by ``tests/golden_cases.py --write`` with the code as it was before
the learners' state moved into state objects. Each snapshot must still load, continue over the rest of
its stream, and release exactly (SHA-256 of the float64 bytes) what the uninterrupted run released
then; and every case run from scratch today must release exactly what it released then. Exactly, except
for the cases in ``golden_cases.PLATFORM_DEPENDENT``, whose last bits depend on the machine (OpenBLAS's
LAPACK/BLAS kernels, numba's re-associated pair passes): those must release what ``released.npz`` holds to
within ``golden_cases.RTOL``/``ATOL`` (the reasons and the measured differences are in golden_cases.py).
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import onpair
from golden_cases import (ATOL, GOLDEN, N_FIRST, PLATFORM_DEPENDENT, RTOL, all_released, continue_snapshot, digest,
                          feed, learner_cases, release_mismatch, report_fingerprint, run_case, snapshot_key,
                          stored_arrays, stream_for, visible)

with open(os.path.join(GOLDEN, "expected.json")) as _handle:
    EXPECTED = json.load(_handle)

LEARNER_CASES = {name: (cls, kwargs) for name, cls, kwargs in learner_cases()}
STORED = stored_arrays()


def _assert_released(name, array, snapshot=False):
    """``array`` is what case ``name`` releases (from scratch, or from its snapshot): the bits, or within
    tolerance (golden_cases.release_mismatch)."""
    expected = EXPECTED["snapshots"][name]["released"] if snapshot else EXPECTED["digests"][name]
    problem = release_mismatch(name, array, expected, STORED, snapshot=snapshot)
    assert problem is None, problem


def _copy_snapshot(name, tmp_path):
    path = tmp_path / (name + ".onpair")
    shutil.copyfile(os.path.join(GOLDEN, name + ".onpair"), path)
    return path


def test_every_case_has_a_snapshot_and_a_digest():
    assert set(LEARNER_CASES) <= set(EXPECTED["snapshots"])
    assert set(LEARNER_CASES) <= set(EXPECTED["digests"])
    kinds = {name.rsplit("-", 1)[-1] for name in LEARNER_CASES}
    assert {"full", "fifo", "reservoir", "statistics"} <= kinds


@pytest.mark.parametrize("name", sorted(LEARNER_CASES))
def test_golden_snapshot_loads_and_continues(name, tmp_path):
    learner = onpair.load(_copy_snapshot(name, tmp_path))
    assert type(learner) is LEARNER_CASES[name][0]
    assert learner.n_seen == N_FIRST
    X, y = stream_for(name)
    feed(learner, X[N_FIRST:], y[N_FIRST:], singles=False)
    _assert_released(name, visible(learner), snapshot=True)
    assert json.loads(json.dumps(report_fingerprint(learner))) == EXPECTED["snapshots"][name]["report"]


@pytest.mark.parametrize("name", sorted(LEARNER_CASES))
def test_golden_snapshot_saves_again_identically(name, tmp_path):
    """Loaded and saved again with today's code, the snapshot still continues to the same releases."""
    learner = onpair.load(_copy_snapshot(name, tmp_path))
    again = tmp_path / "again.onpair"
    learner.save(again)
    resumed = onpair.load(again)
    X, y = stream_for(name)
    feed(resumed, X[N_FIRST:], y[N_FIRST:], singles=True)
    _assert_released(name, visible(resumed), snapshot=True)


@pytest.mark.parametrize("name", ["river-classifier", "river-classifier-giga", "river-classifier-stats"])
def test_golden_river_snapshot_continues(name, tmp_path):
    _assert_released(name, continue_snapshot(name, _copy_snapshot(name, tmp_path)), snapshot=True)


def test_release_digests_unchanged():
    """Every learner × storage kind × task, the offline estimators and the river wrappers, from scratch."""
    today = all_released()
    assert set(today) == set(EXPECTED["digests"])
    problems = [release_mismatch(name, today[name], EXPECTED["digests"][name], STORED) for name in sorted(today)]
    problems = [problem for problem in problems if problem is not None]
    assert not problems, "; ".join(problems)


def test_stored_arrays_are_the_recorded_releases():
    """released.npz holds one array per case and one per snapshot, and where a case is compared bit for bit its
    arrays have the recorded digests: the file describes the same releases as expected.json."""
    assert set(STORED) == set(EXPECTED["digests"]) | {snapshot_key(name) for name in EXPECTED["snapshots"]}
    assert set(PLATFORM_DEPENDENT) <= set(EXPECTED["digests"]) and all(PLATFORM_DEPENDENT.values())
    assert len(PLATFORM_DEPENDENT) < len(EXPECTED["digests"]) // 2  # the exception, not the rule
    for key, array in STORED.items():
        assert array.dtype == np.float64 and array.size and np.all(np.isfinite(array)), key
    for name in set(EXPECTED["digests"]) - set(PLATFORM_DEPENDENT):
        assert digest(STORED[name]) == EXPECTED["digests"][name], name
        if name in EXPECTED["snapshots"]:
            assert digest(STORED[snapshot_key(name)]) == EXPECTED["snapshots"][name]["released"], name


@pytest.mark.parametrize("name", ["stats-metric-default", "onpairstrc-metric-psd-fifo"])
def test_tolerance_still_catches_a_changed_release(name):
    """The tolerance is not a blank cheque: the same case with another seed (other noise, other random
    choices: what a changed draw or formula would do) is refused, and by far."""
    cls, kwargs = LEARNER_CASES[name]
    other = visible(run_case(name, cls, dict(kwargs, seed=kwargs["seed"] + 1)))
    reference = STORED[name]
    assert release_mismatch(name, other, EXPECTED["digests"][name], STORED) is not None
    assert np.max(np.abs(other - reference)) > 1e3 * (ATOL + RTOL * np.max(np.abs(reference)))


def test_snapshot_files_hold_the_format_they_were_written_in():
    for name in EXPECTED["snapshots"]:
        with open(os.path.join(GOLDEN, name + ".onpair"), "rb") as handle:
            assert handle.readline().startswith(b"onpair-learner 1 sha256=")
    assert np.all([os.path.getsize(os.path.join(GOLDEN, n + ".onpair")) < 200_000 for n in EXPECTED["snapshots"]])
