"""learner.save / onpair.load: exact resumption, the ledger survives, damaged files are errors, and a
snapshot resumes once (a second load would fork the noise and the budget)."""

import contextlib
import glob
import hashlib
import io
import json
import os
import pathlib
import pickle
import threading
import warnings

import numpy as np
import pytest

import onpair
from onpair import OnPairC, OnPairStrC, PairwiseGIGA
from onpair.core import persistence
from onpair.core.snapshot import saved_learner_classes
from onpair.persistence import load_learner, save_learner
from learner_state import assert_same_state, state_of
from public_api import ONLINE, ONLINE_CASES, make_online, online_class

# Every public learner × every persistence check: the fast tier (make test) runs each check
# once, on values in rotation, and each value at least once (conftest.py); the full tier every pair.
pytestmark = pytest.mark.covering("name", "case")

N = 200


def _data(seed=0, n=N, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.05, 1.05, size=(n, d))  # a few records outside the box: clipping is state too
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5, 1, -1)
    return X, y


HISTORIES = {
    "full": dict(loss="logistic"),
    "square": dict(loss="square"),
    "reservoir": dict(buffer=("reservoir", 16)),
    "fifo": dict(buffer=("fifo", 16)),
}

# (class, history, mode): every learner × every history × ledger, paper mode where it exists.
CASES = (
    [(PairwiseGIGA, h, None) for h in HISTORIES]
    + [(cls, h, "ledger") for cls in (OnPairStrC, OnPairC) for h in HISTORIES]
    + [(cls, h, "paper") for cls in (OnPairStrC, OnPairC) for h in ("full", "square")]
    + [(OnPairStrC, "full", "unbounded"), (OnPairC, "reservoir", "unbounded")]
)


def _factory(cls, history, mode, seed=7):
    kwargs = dict(HISTORIES[history], bounds=(0.0, 1.0), seed=seed)
    if cls is PairwiseGIGA:
        return lambda: PairwiseGIGA(**kwargs)
    if cls is OnPairC:
        kwargs["center"] = "random"  # the random centre comes from the init generator
    if mode == "ledger":
        kwargs.update(n=N, release_every=25)
    elif mode == "paper":
        kwargs.update(n=N, mode="paper")
        if cls is OnPairStrC:
            kwargs["lam"] = 20.0  # T₁ = 24 (logistic) or 32 (square) < n: releases every round after
    else:  # no n: doubling schedule with the convergent split
        if cls is OnPairC:
            kwargs["lam"] = 2.0  # α given directly (c·n^(−1/4) needs n)
    return lambda: cls(**kwargs)


def _id(case):
    cls, history, mode = case
    return f"{cls.__name__}-{history}-{mode}"


def _internal(learner):
    """Every piece of state a continuation reads, through the learner's state objects."""
    iterate, history = learner._iterate, learner._history
    out = {
        "t": learner.n_seen, "dim": learner.dimension, "w": iterate.w, "center": iterate.center,
        "iterate_sum": iterate.iterate_sum, "n_clipped": learner.privacy_report()["n_clipped"],
        "warned": learner._warned_clipping, "kind": history.kind,
        "rng": [getattr(learner, f"_{k}_rng").bit_generator.state for k in ("init", "noise", "buffer")],
    }
    if history.kind == "buffer":
        n = history.n_buffered
        out.update(buffer=history.buffer[:n], signs=history.buffer_signs, n_buffered=n)
    elif history.kind == "statistics":
        out.update(counts=history.counts, sums=history.sums, second=history.second_moments)
    else:
        out.update(pos=history.positives[:history.n_positives], neg=history.negatives[:history.n_negatives])
    if learner.private:
        log = learner._log
        out.update(sensitivity=log.ledger_bound, initial=log.initial_model, frozen_warned=log.frozen_warned,
                   ledger=log.accountant.to_dict())
    return out


def _assert_identical(a, b):
    ia, ib = _internal(a), _internal(b)
    assert ia.keys() == ib.keys()
    for key in ia:
        if isinstance(ia[key], np.ndarray):
            assert ia[key].dtype == ib[key].dtype and np.array_equal(ia[key], ib[key]), key
        else:
            assert ia[key] == ib[key], key
    assert np.array_equal(a.model, b.model)
    if a.private:
        assert np.array_equal(a.released_models, b.released_models)
        assert a.privacy_report() == b.privacy_report()


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# -- every public online learner (discovered from onpair.__all__: covered the day it is exported) ---------
def test_the_learners_a_snapshot_may_name_are_the_public_online_learners():
    """Each public learner registers itself (``saved=True``); nothing else may be named by a file."""
    assert saved_learner_classes() == ONLINE


@pytest.mark.parametrize("name", ONLINE_CASES)
def test_every_public_learner_resumes_from_a_snapshot_as_one_run(name, tmp_path):
    X, y = _data()
    with _quiet():
        whole = make_online(name).learn_many(X, y)
        first = make_online(name).learn_many(X[:90], y[:90])
    path = tmp_path / "learner.onpair"
    first.save(path)
    with _quiet():
        resumed = onpair.load(path)
        assert type(resumed) is online_class(name)
        assert_same_state(state_of(first), state_of(resumed))
        resumed.learn_many(X[90:], y[90:])
    assert_same_state(state_of(whole), state_of(resumed))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_stop_half_way_reload_finish_equals_one_run(case, tmp_path):
    make = _factory(*case)
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = make().learn_many(X, y)
        first = make().learn_many(X[:90], y[:90])
    path = tmp_path / "learner.onpair"
    first.save(path)
    del first
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the clipping warning was issued before the save: not again
        resumed = onpair.load(path)
        assert type(resumed) is case[0]
        resumed.learn_many(X[90:], y[90:])
    _assert_identical(resumed, whole)
    if resumed.private:
        assert len(resumed.privacy_report()["releases"]) >= 2


@pytest.mark.parametrize("case", [(OnPairStrC, "full", "ledger"), (OnPairC, "full", "paper"),
                                  (PairwiseGIGA, "reservoir", None), (OnPairStrC, "square", "unbounded")], ids=_id)
@pytest.mark.parametrize("stops", [(0,), (1,), (25,), (64, 65), (17, 100, 150, 199), (N,)])
def test_any_stopping_points_and_repeated_checkpoints(case, stops, tmp_path):
    """Save at round 0 (features not yet known), on and next to release rounds, several times, at the end."""
    make = _factory(*case)
    X, y = _data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = make().learn_many(X, y)
        learner, start = make(), 0
        for stop in stops + (N,):
            learner.learn_many(X[start:stop], y[start:stop])
            learner.save(tmp_path / "ckpt")  # one checkpoint path, overwritten
            learner = onpair.load(tmp_path / "ckpt")
            start = stop
    _assert_identical(learner, whole)


def test_record_by_record_resume(tmp_path):
    X, y = _data(2, n=80)
    make = lambda: OnPairStrC(bounds=(0, 1), n=80, release_every=10, buffer=("reservoir", 8), seed=3)  # noqa: E731
    with _quiet():
        whole = make().learn_many(X, y)
        learner = make()
        for i in range(80):
            learner.learn_one(X[i], y[i])
            if i % 13 == 5:
                learner.save(tmp_path / "s")
                learner = onpair.load(tmp_path / "s")
    _assert_identical(learner, whole)


# -- the ledger survives ----------------------------------------------------------------------------
def test_budget_survives_and_is_never_exceeded(tmp_path):
    X, y = _data(3)
    with _quiet():
        learner = OnPairStrC(bounds=(0, 1), n=N, release_every=40, seed=1).learn_many(X[:150], y[:150])
    spent = learner.privacy_report()["rho_spent"]
    history = learner._log.accountant.history
    learner.save(tmp_path / "s")
    resumed = onpair.load(tmp_path / "s")
    report = resumed.privacy_report()
    assert report["rho_spent"] == spent and resumed._log.accountant.history == history
    assert report["rho_budget"] == learner.privacy_report()["rho_budget"]
    with _quiet():
        resumed.learn_many(X[150:], y[150:]).learn_many(X, y)  # past n: frozen, nothing more spent
    report = resumed.privacy_report()
    assert report["frozen"] and report["rho_spent"] <= report["rho_budget"]
    assert len(report["releases"]) == 5 and resumed._log.accountant.history[:len(history)] == history


def test_frozen_warning_is_issued_once_across_a_restart(tmp_path):
    X, y = _data(11)
    with _quiet():
        learner = OnPairStrC(bounds=(0, 1), n=100, seed=1).learn_many(X[:150], y[:150])
    assert learner.privacy_report()["frozen"] and learner._log.frozen_warned
    learner.save(tmp_path / "s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = onpair.load(tmp_path / "s").learn_many(X[150:], y[150:])
    assert resumed.privacy_report()["rho_spent"] == learner.privacy_report()["rho_spent"]


def test_unbounded_stream_keeps_counting_from_the_saved_release(tmp_path):
    """Convergent split: release k gets ρ·6/(π²k²); after a reload k continues, it does not restart at 1."""
    X, y = _data(4, n=600)
    with _quiet():
        learner = OnPairStrC(bounds=(0, 1), seed=2).learn_many(X[:300], y[:300])  # releases at 64, 128, 256
        learner.save(tmp_path / "s")
        resumed = onpair.load(tmp_path / "s").learn_many(X[300:], y[300:])  # release 4 at 512
    rhos = [r["rho"] for r in resumed.privacy_report()["releases"]]
    assert len(rhos) == 4 and rhos[3] == pytest.approx(rhos[0] / 16)
    assert resumed.privacy_report()["rho_spent"] < resumed.privacy_report()["rho_budget"]


# -- damaged files ---------------------------------------------------------------------------------
@pytest.fixture
def snapshot(tmp_path):
    X, y = _data(5)
    with _quiet():
        learner = OnPairStrC(bounds=(0, 1), n=N, release_every=25, seed=4).learn_many(X[:120], y[:120])
    path = tmp_path / "snap.onpair"
    learner.save(path)
    return path


def _split(path):
    data = pathlib.Path(path).read_bytes()
    end = data.index(b"\n")
    return data[:end + 1], data[end + 1:]


def _rewrite(path, edit_document=None, edit_arrays=None, keep_digest=False):
    """Rewrite a snapshot's payload; with a fresh, valid digest unless keep_digest."""
    header, payload = _split(path)
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    document = json.loads(arrays.pop("state_json").tobytes())
    if edit_document:
        edit_document(document)
    if edit_arrays:
        edit_arrays(arrays)
    arrays["state_json"] = np.frombuffer(json.dumps(document).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    new = buf.getvalue()
    if keep_digest:
        digest = header.split(b" ")[2]
        header = b"onpair-learner 1 %s bytes=%d\n" % (digest, len(new))
    else:
        header = b"onpair-learner 1 sha256=%s bytes=%d\n" % (hashlib.sha256(new).hexdigest().encode(), len(new))
    pathlib.Path(path).write_bytes(header + new)


def _rejected(path, match):
    """A damaged snapshot raises ValueError naming the file, and a consuming load puts it back."""
    with pytest.raises(ValueError, match=match) as info:
        onpair.load(path)
    assert str(path) in str(info.value)
    assert os.path.exists(path) and not glob.glob(f"{path}.loaded-*")
    with pytest.raises(ValueError, match=match):
        onpair.load(path, consume=False)


def test_a_sound_snapshot_loads(snapshot):
    assert onpair.load(snapshot).n_seen == 120


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.3, 0.5, 0.9, 0.999])
def test_one_changed_byte_is_rejected(snapshot, fraction):
    data = bytearray(snapshot.read_bytes())
    header_end = data.index(b"\n") + 1
    k = header_end + int(fraction * (len(data) - header_end - 1))
    data[k] ^= 0x01
    snapshot.write_bytes(bytes(data))
    _rejected(snapshot, "modified or corrupted")


@pytest.mark.parametrize("keep", [0, 1, 14, 20, "header", "header+1", 0.5, -1])
def test_truncated_files_are_rejected(snapshot, keep):
    data = snapshot.read_bytes()
    header_end = data.index(b"\n") + 1
    cut = {"header": header_end, "header+1": header_end + 1}.get(keep, keep)
    if isinstance(cut, float):
        cut = int(len(data) * cut)
    snapshot.write_bytes(data[:cut])
    _rejected(snapshot, "truncated|empty|incomplete|not an onpair")


def test_trailing_bytes_are_rejected(snapshot):
    snapshot.write_bytes(snapshot.read_bytes() + b"\0")
    _rejected(snapshot, "trailing bytes")


def test_other_format_versions_are_rejected_by_name(snapshot):
    data = snapshot.read_bytes()
    snapshot.write_bytes(data.replace(b"onpair-learner 1 ", b"onpair-learner 2 ", 1))
    _rejected(snapshot, "format version 2")


def test_not_a_snapshot(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, w=np.zeros(3))
    _rejected(path, "not an onpair learner snapshot")


def _drop_last_spend(doc):
    doc["state"]["accountant"]["history"].pop()


def _halve_a_spend(doc):
    doc["state"]["accountant"]["history"][0][1] /= 2


@pytest.mark.parametrize("edit", [_drop_last_spend, _halve_a_spend])
def test_edited_ledger_with_the_old_digest_is_rejected(snapshot, edit):
    _rewrite(snapshot, edit, keep_digest=True)
    _rejected(snapshot, "modified or corrupted")


def _forget_releases(doc):
    doc["state"]["releases"] = doc["state"]["releases"][:-1]
    doc["state"]["accountant"]["history"].pop()


def _forget_released_model(arrays):
    arrays["released_models"] = arrays["released_models"][:-1]


def _cut_sigma(doc):
    doc["state"]["releases"][-1]["sigma"] /= 10


def _cut_sensitivity(doc):
    doc["state"]["sensitivity"] /= 2


def _overspend(doc):
    doc["state"]["accountant"]["history"].append(["release at round 999", 1e9])


@pytest.mark.parametrize("edit, match", [
    (_drop_last_spend, "accountant's ledger"),
    (_halve_a_spend, "accountant's ledger"),
    (_forget_releases, "release history"),
    (_cut_sigma, "release history"),
    (_cut_sensitivity, "sensitivity"),
    (_overspend, "invalid accountant ledger"),
    (lambda d: d["state"].update(t=d["state"]["t"] - 1), "n_positives \\+ n_negatives"),
    (lambda d: d["state"].update(rho_budget=2 * d["state"]["rho_budget"]), "rho_budget"),
    (lambda d: d["params"].update(epsilon=10.0), "no longer resolve"),
    (lambda d: d.update({"class": "OffPairStrC"}), "unknown learner class 'OffPairStrC'"),
    (lambda d: d["state"].pop("rng"), "missing 'rng'"),
    (lambda d: d["state"].update(surprise=1), "unexpected keys 'surprise'"),
    (lambda d: d.update(wrapper="os:system"), "wrapper 'os:system' is not"),
    (lambda d: d["state"]["rng"]["noise"].update(bit_generator="MT19937"), "random generator"),
])
def test_consistently_edited_state_with_a_fresh_digest_is_rejected(snapshot, edit, match):
    """Even with a recomputed digest, the privacy state must be what the public schedule gives."""
    _rewrite(snapshot, edit)
    _rejected(snapshot, match)


def test_a_file_with_only_the_released_model_removed_is_rejected(snapshot):
    _rewrite(snapshot, edit_arrays=_forget_released_model)
    _rejected(snapshot, "released_models")


@pytest.mark.parametrize("edit, match", [
    (lambda a: a.pop("w"), "missing array 'w'"),
    (lambda a: a.update(w=np.zeros(4)), "'w' has shape \\(4,\\)"),
    (lambda a: a.update(w=np.zeros(3, dtype=np.float32)), "'w' has shape"),
    (lambda a: a.update(negatives=a["negatives"][:-1]), "'negatives' has shape"),
    (lambda a: a.update(w=np.full(3, np.nan)), "non-finite"),
    (lambda a: a.update(w=np.ones(3)), "outside the ball"),
    (lambda a: a.update(extra=np.zeros(1)), "unexpected arrays in the payload: extra"),
])
def test_missing_or_misshapen_arrays_are_rejected(snapshot, edit, match):
    _rewrite(snapshot, edit_arrays=edit)
    _rejected(snapshot, match)


def test_the_payload_is_never_unpickled(snapshot):
    def add_object_array(arrays):
        arrays["w"] = np.array([object()] * 3, dtype=object)

    _rewrite(snapshot, edit_arrays=add_object_array)  # np.savez pickles object arrays
    _rejected(snapshot, "unreadable payload|'w'")


# -- forks: a snapshot resumes once ---------------------------------------------------------------
def test_load_consumes_the_snapshot(snapshot):
    learner = onpair.load(snapshot)
    assert not snapshot.exists()
    (consumed,) = glob.glob(f"{snapshot}.loaded-*")
    with pytest.raises(FileNotFoundError, match="already loaded.*reuse the same noise"):
        onpair.load(snapshot)
    # The consumed file can still be inspected, read-only.
    view = onpair.load(consumed, consume=False)
    assert view.privacy_report() == learner.privacy_report() and os.path.exists(consumed)


def test_missing_file_is_a_plain_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no onpair learner snapshot"):
        onpair.load(tmp_path / "nothing")


def test_inspection_copy_cannot_learn_or_be_saved(snapshot, tmp_path):
    view = onpair.load(snapshot, consume=False)
    assert snapshot.exists()
    report = view.privacy_report()
    assert view.model.shape == (3,) and view.decision_function(np.ones((2, 3))).shape == (2,)
    X, y = _data(6, n=5)
    for call in (lambda: view.learn_one(X[0], y[0]), lambda: view.learn_many(X, y),
                 lambda: view.learn_many(X[:0], y[:0]), lambda: view._learn_mapped(X, y.astype(np.int8), 0)):
        with pytest.raises(RuntimeError, match="consume=False"):
            call()
    with pytest.raises(RuntimeError, match="consume=False"):
        view.save(tmp_path / "fork")
    assert not (tmp_path / "fork").exists() and view.privacy_report() == report
    with pytest.raises(TypeError):
        pickle.dumps(view)
    assert onpair.load(snapshot).learn_many(X, y).n_seen == 125  # the real resume still works


def test_non_private_learner_is_usable_without_consuming(tmp_path):
    X, y = _data(7, n=50)
    with _quiet():
        PairwiseGIGA(bounds=(0, 1)).learn_many(X, y).save(tmp_path / "g")
        copy = onpair.load(tmp_path / "g", consume=False).learn_many(X, y)
    assert copy.n_seen == 100 and (tmp_path / "g").exists()


def test_concurrent_loads_one_wins(snapshot):
    outcomes = []

    def attempt():
        try:
            outcomes.append(onpair.load(snapshot).n_seen)
        except FileNotFoundError:
            outcomes.append("refused")

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcomes, key=str) == [120, "refused", "refused", "refused"]


# -- saving ----------------------------------------------------------------------------------------
def test_save_is_atomic(snapshot, monkeypatch):
    before = snapshot.read_bytes()

    def broken(fd):
        raise OSError("disk full")

    monkeypatch.setattr(persistence.os, "fsync", broken)
    with pytest.raises(OSError, match="disk full"):
        OnPairStrC(norm_bound=1.0, n_features=3, n=10, seed=0).save(snapshot)
    assert snapshot.read_bytes() == before
    assert os.listdir(snapshot.parent) == [snapshot.name]


def test_save_refuses_what_it_cannot_resume(tmp_path):
    learner = OnPairStrC(norm_bound=1.0, n_features=2, n=100, seed=0)
    learner.epsilon = 5.0  # the analysis uses the ε fixed at construction
    with pytest.raises(ValueError, match="changed after construction"):
        learner.save(tmp_path / "a")

    class Mine(PairwiseGIGA):
        pass

    with pytest.raises(ValueError, match="only PairwiseGIGA, OnPairStrC, OnPairC"):
        Mine(norm_bound=1.0, n_features=2).save(tmp_path / "b")
    with pytest.raises(ValueError, match="release_at = range.*cannot be stored"):
        OnPairStrC(norm_bound=1.0, n_features=2, release_at=range(10, 50, 10)).save(tmp_path / "c")
    with pytest.raises(ValueError, match="extra is not JSON-able"):
        save_learner(PairwiseGIGA(norm_bound=1.0, n_features=2), tmp_path / "d", extra={"f": object()})
    with pytest.raises(ValueError, match="wrapper"):
        save_learner(PairwiseGIGA(norm_bound=1.0, n_features=2), tmp_path / "e", wrapper="os:system")
    assert os.listdir(tmp_path) == []


def test_parameters_come_back_verbatim(tmp_path):
    steps = np.linspace(0.2, 0.01, 60)
    learner = PairwiseGIGA(bounds=(np.zeros(3), np.array([1.0, 2.0, 3.0])), step_sizes=steps, lam=0.5,
                           buffer=("fifo", 5), seed=np.int64(9))
    X, y = _data(8, n=60)
    with _quiet():
        learner.learn_many(X[:30], y[:30]).save(tmp_path / "p")
    resumed = onpair.load(str(tmp_path / "p"))
    assert resumed.buffer == ("fifo", 5) and resumed.seed == 9 and isinstance(resumed.bounds, tuple)
    assert np.array_equal(resumed.step_sizes, steps) and np.array_equal(resumed.bounds[1], [1.0, 2.0, 3.0])
    with _quiet():
        whole = PairwiseGIGA(bounds=(np.zeros(3), np.array([1.0, 2.0, 3.0])), step_sizes=steps, lam=0.5,
                             buffer=("fifo", 5), seed=9).learn_many(X, y)
    _assert_identical(resumed.learn_many(X[30:], y[30:]), whole)
    with pytest.raises(ValueError, match="step_sizes has 60 entries"):
        resumed.learn_one(X[0], y[0])


def test_feature_bounds_object_and_unseeded_learner(tmp_path):
    bounds = onpair.FeatureBounds(norm=2.0)
    with _quiet():
        learner = OnPairC(bounds=bounds, lam=1.0, n_features=3, n=50).learn_many(*_data(9, n=20))
    saved_noise_state = learner._noise_rng.bit_generator.state
    learner.save(tmp_path / "f")
    resumed = onpair.load(tmp_path / "f")
    assert isinstance(resumed.bounds, onpair.FeatureBounds) and resumed.bounds.norm == 2.0
    # Without a seed the continuation still follows the saved generators, not fresh entropy ...
    assert resumed._noise_rng.bit_generator.state == saved_noise_state
    assert resumed._seed_sequence.entropy == learner._seed_sequence.entropy
    # ... while the live learner that was saved draws fresh noise from then on: the two never share it.
    assert learner._noise_rng.bit_generator.state != saved_noise_state


def test_a_saved_learner_that_keeps_learning_never_shares_noise_with_its_snapshot(tmp_path):
    X, y = _data(10, n=40)
    with _quiet():
        original = OnPairStrC(bounds=(0, 1), release_every=20, n=40).learn_many(X[:10], y[:10])
        original.save(tmp_path / "s")
        resumed = onpair.load(tmp_path / "s")
        original.learn_many(X[10:20], y[10:20])
        resumed.learn_many(X[10:20], y[10:20])  # the same records: same iterate, so only noise differs
    assert np.array_equal(original._iterate.w, resumed._iterate.w)
    assert not np.allclose(original.released_models[-1], resumed.released_models[-1])


def test_stored_records_outside_the_mapped_domain_are_refused(tmp_path):
    with _quiet():
        learner = OnPairStrC(bounds=(0, 1), n_features=3, n=50, seed=0).learn_many(*_data(11, n=20))
    learner._history.positives[: learner._history.n_positives] *= 1e6  # as a crafted file would hold them
    learner.save(tmp_path / "bad")
    with pytest.raises(ValueError, match="mapped domain"):
        onpair.load(tmp_path / "bad")


def test_construction_warnings_are_not_repeated_on_load(tmp_path):
    with pytest.warns(onpair.PrivacyWarning, match="1/n"):
        learner = OnPairStrC(norm_bound=1.0, n_features=2, n=10, delta=0.5)
    learner.save(tmp_path / "w")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert onpair.load(tmp_path / "w").n_seen == 0


# -- wrappers (the river adapters) -----------------------------------------------------------------
class Wrapper:
    def __init__(self, learner, order):
        self.learner, self.order = learner, order

    def save(self, path):
        save_learner(self.learner, path, extra={"order": self.order, "labels": {"yes": 1}}, wrapper=type(self))

    @classmethod
    def from_persisted(cls, learner, extra):
        return cls(learner, extra["order"])


def test_wrapper_state_travels_in_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(persistence, "TRUSTED_WRAPPER_MODULES", ("onpair", __name__))
    with _quiet():
        wrapped = Wrapper(OnPairStrC(bounds=(0, 1), n=N, seed=1).learn_many(*_data(10, n=70)), ["b", "a", "c"])
    wrapped.save(tmp_path / "r")
    learner, extra = load_learner(tmp_path / "r", consume=False)
    assert extra == {"order": ["b", "a", "c"], "labels": {"yes": 1}} and learner.n_seen == 70
    back = onpair.load(tmp_path / "r")
    assert isinstance(back, Wrapper) and back.order == ["b", "a", "c"]
    assert back.learner.privacy_report() == wrapped.learner.privacy_report()


def test_untrusted_wrapper_modules_are_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a 'module:QualName' in onpair"):
        Wrapper(PairwiseGIGA(norm_bound=1.0, n_features=2), []).save(tmp_path / "u")
