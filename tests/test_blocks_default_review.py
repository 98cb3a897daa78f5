"""Independent privacy review of the default block release (issue 34, commit ea54b58): nothing public moves with
the records of the current, unreleased block; a refused record changes nothing and draws no noise, even at a
block's end; the fused single-record path is the block path bit for bit under learn_one / learn_many mixing,
clipping, special values and strided views; the release equals an independent reconstruction (the twin's
exact block sums plus σ times the learner's generator's normals, k per completed block, in order); the exact
same-order replay cost equals a brute force over positions; snapshots resume bit for bit inside a block and at
its end, and a predictor read inside the unreleased block is refused."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
from test_statistics_hostile import _rewrite

import onpair
from onpair.privacy.continual import BlockRelease
from onpair.privacy.replay import replay_rho

D = 3
BOX = (np.full(D, -1.0), np.full(D, 1.0))


def learner(**kwargs):
    return onpair.OnPairStats(epsilon=1.0, bounds=BOX, seed=kwargs.pop("seed", 3), **kwargs)


def mechanism_state(model):
    """Everything of the release's secret state and noise source (the normals drawn ahead included)."""
    mech, block = model._stats.mechanism, model._normal_block
    return (mech.n_seen, mech._current.tobytes(), mech._weighted.tobytes(), model._t, model._n_clipped,
            b"" if block is None else block.unconsumed().tobytes(), str(model._noise_rng.bit_generator.state))


def public_outputs(model, Xq):
    report = model.privacy_report()
    report.pop("n_clipped")  # curator-only
    return (model.model.tobytes(), model.predict_proba(Xq).tobytes(), model.decision_function(Xq).tobytes(),
            model.n_releases, model.refresh_count, json.dumps(report, sort_keys=True, default=str),
            model.ridge(), model.predictor().estimate.tobytes())


@pytest.mark.parametrize("task, labels", [("auc", [-1, 1]), ("classify", ["a", "b", "c"])])
@pytest.mark.parametrize("common, tail", [(0, 31), (32, 40), (96, 127)])
def test_public_outputs_do_not_move_with_the_unreleased_block(task, labels, common, tail):
    """Two streams equal up to the last completed block, then different (other records, other labels) for
    ``tail`` records that do not complete the next block: every public output is identical."""
    kwargs = {} if task == "auc" else {"task": task, "classes": labels}
    rng = np.random.default_rng(5)
    X0, y0 = rng.uniform(-1, 1, (common, D)), rng.choice(labels, common)
    Xq = rng.uniform(-2, 2, (6, D))
    outputs = []
    for variant in range(2):
        model = learner(**kwargs)
        if common:
            model.learn_many(X0, y0)
        X = np.random.default_rng(100 + variant).uniform(-1, 1, (tail, D)) * (1.0 if variant == 0 else 0.1)
        label = labels[0] if variant == 0 else labels[-1]
        for i in range(tail):
            model.learn_one(X[i], label)
        assert model.refresh_count == common and model.n_seen == common + tail
        outputs.append(public_outputs(model, Xq))
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("done", [31, 95])  # the refused record would have ended a block
@pytest.mark.parametrize("case", ["nan", "inf", "label", "shape", "clip-as-error"])
def test_a_refused_record_at_a_block_end_changes_nothing_and_draws_no_noise(done, case):
    x, label = {"nan": (np.array([0.1, np.nan, 0.2]), 1), "inf": (np.array([np.inf, 0.0, 0.0]), 1),
                "label": (np.array([0.1, 0.2, 0.3]), 3), "shape": (np.zeros(D + 1), 1),
                "clip-as-error": (np.array([3.0, 0.0, 0.0]), 1)}[case]
    model = learner()
    X = np.random.default_rng(1).uniform(-1, 1, (done, D))
    for row in X:
        model.learn_one(row, 1)
    before = mechanism_state(model), model.n_releases, model.refresh_count
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the first clipped record's warning raised: a refused call
        with pytest.raises((ValueError, UserWarning)):
            model.learn_one(x, label)
    assert (mechanism_state(model), model.n_releases, model.refresh_count) == before


def test_the_fused_path_is_the_block_path_under_adversarial_mixing():
    """learn_one (fused) and learn_many interleaved, out-of-box and special values, strided views: a learner
    whose release takes only the block path (``fused`` off) has the same state, bit for bit, after every call."""
    specials = [1e308, -1e308, 5e-324, -0.0, 1.0, -1.0, 1.0000000000000002, 2.5, -7.0, 0.3]
    rng = np.random.default_rng(9)
    pool = rng.choice(specials, (800, 2 * D))
    calls = []
    for i in range(260):
        calls.append(("one", pool[2 * i, ::2], int(rng.choice([-1, 1]))))
        if i % 23 == 0:
            m = int(rng.integers(1, 60))
            calls.append(("many", pool[i:i + m, 1:D + 1], rng.choice([-1, 1], m)))
    models = [learner(horizon=300), learner(horizon=300)]
    models[1]._stats.fused = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind, a, b in calls:
            states = []
            for model in models:
                (model.learn_one if kind == "one" else model.learn_many)(a, b)
                states.append((mechanism_state(model), model.n_releases, model.refresh_count))
            assert states[0] == states[1]
    assert models[0]._stats.mechanism.completed() == 4  # 32, 64, 128 and the horizon's 76


@pytest.mark.parametrize("n, horizon", [(500, None), (150, 150), (96, None)])
def test_the_release_is_the_exact_block_sums_plus_the_generators_normals(n, horizon):
    """An independent reconstruction: block sums from the non-private twin, normals from a copy of the
    learner's noise generator (k per completed block, in block order), combined by the public size weights."""
    model = learner(horizon=horizon, seed=11)
    generator = copy.deepcopy(model._noise_rng)
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1.3, 1.3, (n, D)), rng.choice([-1, 1], n)
    i = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while i < n:
            m = min(n - i, int(rng.integers(2, 40)) if rng.random() < 0.3 else 1)
            if m == 1:
                model.learn_one(X[i], int(y[i]))
            else:
                model.learn_many(X[i:i + m], y[i:i + m])
            i += m
        mech = model._stats.mechanism
        sizes, sums, start = [], [], 0
        for end in (32, 96, 224, 480, 992):
            end = min(end, horizon or end)
            if end > n or end <= start:
                break
            twin = onpair.OnPairStats(private=False, bounds=BOX).learn_many(X[start:end], y[start:end])
            sums.append(twin._stats.estimate())
            sizes.append(end - start)
            start = end
    sizes = np.array(sizes, dtype=float)
    released = np.array(sums) + mech.describe()["sigma"] * generator.standard_normal((len(sizes), mech.dim))
    expected = start / np.sum(sizes ** 2) * (sizes[:, None] * released).sum(axis=0)
    assert model.n_releases == len(sizes) and model.refresh_count == start
    np.testing.assert_allclose(model._stats.estimate(), expected, rtol=1e-12, atol=1e-9)


def test_same_order_replay_cost_equals_a_brute_force_over_positions():
    """Σ_j c_j² (c_j: the copies of record i in block j) maximised over i, on the schedule 32, 64, … cut at the
    horizon, against replay_rho; and the README's four passes of 1,250 records: 6ρ."""
    for n in (1, 31, 33, 100, 1250):
        for passes in (2, 3, 4):
            for horizon in (None, 200, 4096):
                mech = BlockRelease(dim=1, sensitivity=1.0, rho=0.5, horizon=horizon)
                ends, end, size = [], 0, 32
                while end < min(mech.capacity, 10 ** 6):
                    end = min(end + size, mech.capacity)
                    ends.append(end)
                    size *= 2
                worst = 0
                for i in range(1, n + 1):
                    positions = [i + p * n for p in range(passes) if i + p * n <= mech.capacity]
                    _, counts = np.unique(np.searchsorted(ends, positions), return_counts=True)
                    worst = max(worst, int(np.sum(counts ** 2)))
                assert replay_rho(mech, n, passes) == pytest.approx(worst / (2 * mech.describe()["sigma"] ** 2), rel=1e-12)
                if (n, passes, horizon) == (1250, 4, None):
                    assert worst == 6


@pytest.mark.parametrize("cut", [31, 32, 33, 96])
def test_snapshots_inside_a_block_and_at_its_end_resume_bit_for_bit(cut, tmp_path):
    rng = np.random.default_rng(0)
    X, y, Xq = rng.uniform(-1, 1, (230, D)), rng.choice([-1, 1], 230), rng.uniform(-1, 1, (4, D))
    whole, saved = learner(seed=4), learner(seed=4)
    for i in range(cut):
        whole.learn_one(X[i], int(y[i]))
        saved.learn_one(X[i], int(y[i]))
    whole.predict(Xq)
    saved.predict(Xq)
    saved.save(tmp_path / "s.onpair")
    resumed = onpair.load(tmp_path / "s.onpair")
    for i in range(cut, 230):
        for model in (whole, resumed):
            if i % 3:
                model.learn_one(X[i], int(y[i]))
            else:
                model.learn_many(X[i:i + 1], y[i:i + 1])
        assert np.array_equal(whole.predict_proba(Xq), resumed.predict_proba(Xq))
    assert mechanism_state(whole) == mechanism_state(resumed)


def test_a_snapshot_whose_predictor_reads_the_unreleased_block_is_refused(tmp_path):
    """Inside the second block (50 records, 32 released): a predictor read at count 50 whose view holds the
    current block's noiseless sum, or one at the release 32 with that sum as its estimate, is refused."""
    model = learner()
    for row in np.random.default_rng(2).uniform(-1, 1, (50, D)):
        model.learn_one(row, 1)
    model.predictor()
    edits = {
        "read-at-n_seen": lambda doc, arrays: (doc["state"]["predictor"].update(read=50, index=50, start=50, stop=51),
                                               arrays.__setitem__("predictor.estimate",
                                                                  arrays["statistics.current"].copy())),
        "estimate-is-current": lambda doc, arrays: arrays.__setitem__("predictor.estimate",
                                                                      arrays["statistics.current"].copy()),
    }
    for name, edit in edits.items():
        path = tmp_path / f"{name}.onpair"
        model.save(path)
        _rewrite(path, edit)
        with pytest.raises(ValueError, match="predictor"):
            onpair.load(path)
