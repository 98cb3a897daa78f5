"""Golden snapshots and release digests: the state refactoring changed nothing a user sees.

``tests/data/golden/`` was written by ``tests/golden_cases.py --write`` with the code as it was before
the learners' state moved into state objects. Each snapshot must still load, continue over the rest of
its stream, and release exactly (SHA-256 of the float64 bytes) what the uninterrupted run released
then; and every case run from scratch today must release exactly what it released then.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings

import numpy as np
import pytest

import onpair
from golden_cases import (GOLDEN, N_FIRST, all_digests, digest, feed, learner_cases, report_fingerprint,
                          river_classifier_stream, river_outputs, stream_for, visible)

with open(os.path.join(GOLDEN, "expected.json")) as _handle:
    EXPECTED = json.load(_handle)

LEARNER_CASES = {name: (cls, kwargs) for name, cls, kwargs in learner_cases()}


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
    expected = EXPECTED["snapshots"][name]
    assert digest(visible(learner)) == expected["released"]
    assert json.loads(json.dumps(report_fingerprint(learner))) == expected["report"]


@pytest.mark.parametrize("name", sorted(LEARNER_CASES))
def test_golden_snapshot_saves_again_identically(name, tmp_path):
    """Loaded and saved again with today's code, the snapshot still continues to the same releases."""
    learner = onpair.load(_copy_snapshot(name, tmp_path))
    again = tmp_path / "again.onpair"
    learner.save(again)
    resumed = onpair.load(again)
    X, y = stream_for(name)
    feed(resumed, X[N_FIRST:], y[N_FIRST:], singles=True)
    assert digest(visible(resumed)) == EXPECTED["snapshots"][name]["released"]


@pytest.mark.parametrize("name", ["river-classifier", "river-classifier-giga", "river-classifier-stats"])
def test_golden_river_snapshot_continues(name, tmp_path):
    model = onpair.load(_copy_snapshot(name, tmp_path))
    stream = river_classifier_stream()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rest = river_outputs(name, model, stream[N_FIRST:])
    assert digest(rest) == EXPECTED["snapshots"][name]["released"]


def test_release_digests_unchanged():
    """Every learner × storage kind × task, the offline estimators and the river wrappers, from scratch."""
    today = all_digests()
    changed = sorted(name for name in EXPECTED["digests"] if today.get(name) != EXPECTED["digests"][name])
    assert not changed, f"released bits changed for {changed}"
    assert set(today) == set(EXPECTED["digests"])


def test_snapshot_files_hold_the_format_they_were_written_in():
    for name in EXPECTED["snapshots"]:
        with open(os.path.join(GOLDEN, name + ".onpair"), "rb") as handle:
            assert handle.readline().startswith(b"onpair-learner 1 sha256=")
    assert np.all([os.path.getsize(os.path.join(GOLDEN, n + ".onpair")) < 200_000 for n in EXPECTED["snapshots"]])
