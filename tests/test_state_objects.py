"""Conformance of every storage kind to the PairHistory contract, and the other state objects.

One test class runs against every kind the factory can choose (:mod:`onpair.giga.histories`):
a snapshot round trip, a block equal to its records fed singly, bounded memory for buffers, and
out-of-domain contents refused on restore. A new kind joins by adding one line to ``KINDS``.
"""

from __future__ import annotations

import ast
import importlib
import json
import pathlib

import numba
import numpy as np
import pytest

from onpair.giga.histories import HISTORY_KINDS, history_class, make_history
from onpair.giga.iterate import Iterate
from onpair.giga.round_objective import RoundObjective, StepRule
from onpair.giga.path import giga_path
from onpair.giga.release import ReleaseLog, ReleasePlan
from onpair.giga.slots import SlotPolicy
from onpair.core.task import make_task
from onpair.core.snapshot import SnapshotReader

D = 3
#: (id, task, loss, buffer): every storage kind, and each slot policy of the kinds that take one.
KINDS = [
    ("split-history", "auc", "logistic", None),
    ("split-history-hinge", "auc", "hinge", None),
    ("square-statistics", "auc", "square", None),
    ("labelled-buffer-fifo", "auc", "logistic", ("fifo", 7)),
    ("labelled-buffer-reservoir", "auc", "square", ("reservoir", 7)),
    ("augmented-rows", "metric", "logistic", None),
    ("augmented-rows-fifo", "metric", "logistic", ("fifo", 7)),
    ("augmented-rows-reservoir", "metric", "hinge", ("reservoir", 7)),
]


def _setup(task_name, loss_name, buffer):
    task = make_task(task_name)
    loss = task.get_loss(loss_name)
    objective = RoundObjective(task, loss, lam=2.0, radius=0.5)
    slots = SlotPolicy.from_buffer(buffer)
    return task, objective, slots


def _records(task_name, m, seed):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1.0, 1.0, size=(m, D)) / np.sqrt(D)  # inside the unit ball
    if task_name == "metric":
        labels = [["a", "b", 3][k] for k in rng.integers(0, 3, size=m)]
    else:
        labels = np.where(rng.random(m) < 0.5, 1, -1).astype(np.int8)
    return Z, labels


def _fresh(task, objective, slots):
    center = task.default_center(D, objective.radius)
    return make_history(task, objective.loss, slots, D), Iterate(center, center)


def _block(history, iterate, objective, Z, labels, t_start, rng):
    steps = StepRule(objective).block(t_start, Z.shape[0])
    giga_path(Z, history.encode(labels), history=history, iterate=iterate, objective=objective, steps=steps,
              t_start=t_start, rng=rng)


def _singles(history, iterate, objective, Z, labels, t_start, rng):
    rule = StepRule(objective)
    for i in range(Z.shape[0]):
        t = t_start + i + 1
        history.learn_one(Z[i].copy(), labels[i], iterate, objective, t, rule.one(t), rng)


def _exported(history, iterate):
    state, arrays = {}, {}
    history.export(state, arrays)
    iterate.export(arrays)
    return json.loads(json.dumps(state)), {k: np.array(v, copy=True) for k, v in arrays.items()}


def _assert_same_export(a, b):
    assert a[0] == b[0]
    assert a[1].keys() == b[1].keys()
    for key in a[1]:
        assert a[1][key].dtype == b[1][key].dtype and np.array_equal(a[1][key], b[1][key]), key


@pytest.mark.parametrize("kind_id, task_name, loss_name, buffer", KINDS, ids=[k[0] for k in KINDS])
class TestPairHistoryConformance:
    """The contract of :class:`onpair.giga.pair_history.PairHistory`, for one kind."""

    def test_the_factory_chooses_this_kind_and_knows_its_tag(self, kind_id, task_name, loss_name, buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        cls = history_class(task, objective.loss, slots)
        assert HISTORY_KINDS[cls.kind] is cls
        assert type(make_history(task, objective.loss, slots, D)) is cls

    def test_a_block_equals_its_records_fed_singly(self, kind_id, task_name, loss_name, buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        Z, labels = _records(task_name, 40, 1)
        h1, it1 = _fresh(task, objective, slots)
        h2, it2 = _fresh(task, objective, slots)
        rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
        _block(h1, it1, objective, Z[:25], labels[:25], 0, rng1)
        _block(h1, it1, objective, Z[25:], labels[25:], 25, rng1)
        _singles(h2, it2, objective, Z, labels, 0, rng2)
        _assert_same_export(_exported(h1, it1), _exported(h2, it2))
        assert rng1.bit_generator.state == rng2.bit_generator.state  # the same public draws

    def test_snapshot_round_trip_then_continue(self, kind_id, task_name, loss_name, buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        Z, labels = _records(task_name, 30, 2)
        history, iterate = _fresh(task, objective, slots)
        rng = np.random.default_rng(9)
        _block(history, iterate, objective, Z[:20], labels[:20], 0, rng)
        state, arrays = _exported(history, iterate)
        reader = SnapshotReader("test.onpair", dict(arrays))
        restored = type(history).restore(D, slots, 20, state, reader)
        restored_iterate = Iterate.restore(reader, task.param_size(D), task, D, objective.radius)
        assert not reader.unreferenced()
        _assert_same_export(_exported(restored, restored_iterate), (state, arrays))
        rng_copy = np.random.default_rng(9)
        rng_copy.bit_generator.state = rng.bit_generator.state
        _block(history, iterate, objective, Z[20:], labels[20:], 20, rng)
        _block(restored, restored_iterate, objective, Z[20:], labels[20:], 20, rng_copy)
        _assert_same_export(_exported(history, iterate), _exported(restored, restored_iterate))

    def test_memory_is_bounded_for_a_buffer(self, kind_id, task_name, loss_name, buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        history, iterate = _fresh(task, objective, slots)
        rng = np.random.default_rng(3)
        sizes = []
        for k in range(6):
            Z, labels = _records(task_name, 50, 10 + k)
            _block(history, iterate, objective, Z, labels, 50 * k, rng)
            _, arrays = _exported(history, iterate)
            sizes.append(sum(a.nbytes for a in arrays.values()))
        bound = history.memory_bound
        if bound is None:
            assert history.n_stored == 300 and sizes[-1] > sizes[0]  # the whole history grows
        else:
            assert history.n_stored <= bound and sizes[1:] == sizes[:1] * 5  # flat after the first 50

    def test_contents_outside_the_mapped_domain_are_refused_on_restore(self, kind_id, task_name, loss_name,
                                                                       buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        Z, labels = _records(task_name, 20, 4)
        history, iterate = _fresh(task, objective, slots)
        _block(history, iterate, objective, Z, labels, 0, np.random.default_rng(0))
        state, arrays = _exported(history, iterate)
        stored = {"full": "positives", "statistics": "sums", "buffer": "buffer", "metric": "records"}[history.kind]
        arrays[stored] = arrays[stored] * 1e3  # as a crafted file would hold them
        with pytest.raises(ValueError, match="test.onpair.*(mapped domain|exceed)"):
            type(history).restore(D, slots, 20, state, SnapshotReader("test.onpair", arrays))

    def test_a_wrong_count_is_refused_on_restore(self, kind_id, task_name, loss_name, buffer):
        task, objective, slots = _setup(task_name, loss_name, buffer)
        Z, labels = _records(task_name, 20, 6)
        history, iterate = _fresh(task, objective, slots)
        _block(history, iterate, objective, Z, labels, 0, np.random.default_rng(0))
        state, arrays = _exported(history, iterate)
        with pytest.raises(ValueError, match="test.onpair"):
            type(history).restore(D, slots, 3, state, SnapshotReader("test.onpair", arrays))  # 3 records cannot hold these


# -- the other state objects ------------------------------------------------------------------------
def test_slot_policy_block_and_single_draw_the_same_slots():
    for kind in ("fifo", "reservoir"):
        policy = SlotPolicy(kind, 5)
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        block = policy.block(0, 40, rng_a, 0)
        singles = [policy.one(t, rng_b, 0) for t in range(1, 41)]
        assert block.tolist() == singles
        assert rng_a.bit_generator.state == rng_b.bit_generator.state
    assert SlotPolicy("fifo", 3).block(4, 4, None, 3).tolist() == [1, 2, 0, 1]


def test_slot_policy_refuses_bad_buffers():
    for bad in [("lifo", 3), ("fifo", 0), ("fifo", 2.5), "fifo", ("fifo",)]:
        with pytest.raises(ValueError, match="buffer"):
            SlotPolicy.from_buffer(bad)


def test_release_plan_is_frozen_and_typed():
    plan = ReleasePlan.nothing(4, ledger_end=0.5)
    assert plan.n_releases == 0 and plan.ledger_end == 0.5 and plan.entries() == []
    with pytest.raises(AttributeError):
        plan.sigmas = np.ones(1)


def test_release_log_refuses_a_history_the_schedule_did_not_produce():
    log = ReleaseLog(1.0)
    plan = ReleasePlan(np.array([-1, 0]), np.array([2]), np.array([0.25]), np.array([0.1]), np.array([0.2]), 0.1)
    log.initial_model = np.zeros(2)
    log.commit(plan, np.array([[0.05, 0.0]]))
    state, arrays = {}, {}
    log.export(state, arrays, 2)
    state = json.loads(json.dumps(state))
    restored = ReleaseLog.restore(state, SnapshotReader("x", arrays), 1.0, 2, lambda t: plan,
                                  model_check=lambda v: None, size=2)
    assert restored.releases == log.releases and restored.accountant.rho_spent == 0.25
    tampered = dict(state, releases=[dict(state["releases"][0], sigma=1.0)])  # claims more noise
    with pytest.raises(ValueError, match="release history"):
        ReleaseLog.restore(tampered, SnapshotReader("x", arrays), 1.0, 2, lambda t: plan,
                           model_check=lambda v: None, size=2)


# -- architecture ------------------------------------------------------------------------------------
def _underscore_imports():
    """(module file, source module, name) of every ``from X import _name`` in the package whose name is
    not a compiled kernel."""
    root = pathlib.Path(__file__).resolve().parents[1]
    found = []
    for path in sorted((root / "onpair").rglob("*.py")) + sorted((root / "streams").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package[:len(package) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                obj = getattr(importlib.import_module(source), name, None)
                if not isinstance(obj, numba.core.registry.CPUDispatcher):
                    found.append((str(path.relative_to(root)), source, name))
    return found


def test_no_module_imports_another_modules_private_names_except_kernels():
    assert _underscore_imports() == []


def test_the_giga_package_has_one_file_per_kind_of_state():
    root = pathlib.Path(__file__).resolve().parents[1] / "onpair" / "giga"
    files = {p.stem for p in root.glob("*.py")}
    for cls in HISTORY_KINDS.values():
        assert cls.__module__.rsplit(".", 1)[-1] in files
    assert len({cls.__module__ for cls in HISTORY_KINDS.values()}) == len(HISTORY_KINDS)


def test_every_compiled_kernel_documents_its_parameters():
    """Every @njit function says, per argument, its shape, dtype and whether it is written in place."""
    root = pathlib.Path(__file__).resolve().parents[1] / "onpair"
    missing = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list):
                if "Parameters" not in (ast.get_docstring(node) or ""):
                    missing.append(f"{path.name}:{node.name}")
    assert missing == []
