"""Everything a learner holds, read through its state objects (the form a snapshot writes).

``state_of(learner)`` is the learner's whole state as its snapshot export sees it: the counters, the
random generators, the iterate, the stored past of its kind, and for a private learner the release
log (accountant, releases, released models, ledger bound). Tests that check "a failed call changes
nothing" compare two of these.
"""

from __future__ import annotations

import copy
import json

import numpy as np


def state_of(learner) -> dict:
    arrays = {}
    scalars = learner._export_state(arrays)
    out = {"scalars": json.loads(json.dumps(scalars)), "n_seen": learner.n_seen}
    out.update({f"array:{name}": np.array(value, copy=True) for name, value in arrays.items()})
    if learner.dimension is not None:
        out["model"] = np.array(learner.model, copy=True)
    if learner.private:
        out["report"] = copy.deepcopy(learner.privacy_report())
    return out


def assert_same_state(before: dict, after: dict) -> None:
    assert before.keys() == after.keys(), sorted(set(before) ^ set(after))
    for key in before:
        a, b = before[key], after[key]
        if isinstance(a, np.ndarray):
            assert a.shape == b.shape and np.array_equal(a, b), key
        else:
            assert a == b, key
