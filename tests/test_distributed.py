"""onpair.core.distributed: fits on Dask data equal the in-process fits, and the privacy invariants hold.

Two clusters over loopback, both with 2 workers: one in this process (threads; fast) for equality and
failure handling, one of worker processes for what needs a separate process: a trap for random number
generation on the workers, and a worker killed mid-fit. Expected values come from the in-process fit
on NumPy arrays (a different code path: one sum over the whole data set).
"""

import logging
import os
import signal
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="the dask extra (make install installs it)")
distributed = pytest.importorskip("distributed", reason="the dask extra (make install installs it)")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

from onpair import GradientPerturbedGD, OffPairC, OffPairStats, PrivacyWarning  # noqa: E402
from onpair.core import distributed as onpair_distributed  # noqa: E402
from onpair.batch import distributed_gradient  # noqa: E402

#: Row chunks with a single record, an empty one, an uneven spread and a partition holding one class only.
CHUNKS = (1, 299, 0, 400, 100, 400)


def _data(n=1200, d=5, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    score = X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    y[700:800] = 1  # the partition of rows 700..799 holds the positive class only
    return X, y


def _dask(X, y, chunks=CHUNKS):
    return da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=(chunks,))


def _cluster(processes):
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                    dashboard_address=":0", silence_logs=logging.CRITICAL)


@pytest.fixture(scope="module")
def client():
    with _cluster(processes=False) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture(scope="module")
def process_client():
    with _cluster(processes=True) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


def _scheduler_tasks(client, timeout=10.0) -> int:
    """Tasks the scheduler still holds, once the client's releases have reached it (they are batched)."""
    deadline = time.monotonic() + timeout
    while True:
        count = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        if count == 0 or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def _close(a, b, tol=1e-12):
    """Agreement to ``tol`` relative to the released model's scale (the sums are added in another order)."""
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, float(np.max(np.abs(b)))))


def _same_report(distributed_report, local_report):
    assert distributed_report.keys() == local_report.keys()
    for key, value in local_report.items():
        if key in ("ridge", "expected_cosine"):  # computed from the released statistics: the same up to rounding
            assert distributed_report[key] == pytest.approx(value, rel=1e-12, abs=1e-15)
        else:
            assert distributed_report[key] == value, key


# -- equality with the in-process fit ---------------------------------------------------------------
STATISTICS_CASES = [
    dict(),
    dict(model_type="centroid"),
    dict(lam=0.5, weights=(1.0, 1.0, 0.3)),
    dict(private=False),
    dict(task="metric", classes=[0, 1, 2]),
]


@pytest.mark.parametrize("params", STATISTICS_CASES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_statistics_estimator_on_a_cluster_equals_the_in_process_fit(client, params):
    X, y = _data(classes=3 if params.get("task") == "metric" else 2)
    est = OffPairStats(epsilon=1.0, delta=1e-6, bounds=(0, 1), random_state=3, **params)
    local = est.fit(X, y)
    coef, report, classes = local.coef_.copy(), local.privacy_report_, local.classes_
    onpair_distributed.fit(est, *_dask(X, y), client=client)
    _close(est.coef_, coef)
    _same_report(est.privacy_report_, report)
    np.testing.assert_array_equal(est.classes_, classes)
    assert est.n_features_in_ == X.shape[1] and est.n_clipped_ == 0


@pytest.mark.parametrize("cls", [OffPairStats, GradientPerturbedGD])
def test_a_cluster_fit_charges_a_shared_accountant_what_the_in_process_fit_does(client, cls):
    """The Dask fit records the same events (issue 21): a shared accountant is charged them, and one that
    cannot pay refuses the fit before anything is assigned."""
    from onpair.privacy import PrivacyBudgetExceeded, ZCDPAccountant

    X, y = _data()
    local, remote = ZCDPAccountant(1.0), ZCDPAccountant(1.0)
    cls(bounds=(0, 1), random_state=3, accountant=local).fit(X, y)
    est = cls(bounds=(0, 1), random_state=3, accountant=remote)
    onpair_distributed.fit(est, *_dask(X, y), client=client)
    assert remote.events == local.events and remote.rho_spent == est.privacy_report_["rho_spent"]
    poor = cls(bounds=(0, 1), random_state=3, accountant=ZCDPAccountant(local.rho_spent / 2))
    with pytest.raises(PrivacyBudgetExceeded):
        onpair_distributed.fit(poor, *_dask(X, y), client=client)
    assert not hasattr(poor, "coef_") and poor.accountant.events == ()


@pytest.mark.parametrize("loss, radius", [("logistic", 0.1), ("logistic", 5.0), ("hinge", 2.0), ("square", 0.5)])
def test_gradient_descent_on_a_cluster_equals_the_in_process_fit(client, loss, radius):
    X, y = _data()
    est = GradientPerturbedGD(epsilon=2.0, delta=1e-6, T=4, loss=loss, radius=radius, lam=0.01, bounds=(0, 1),
                              random_state=5)
    coef, report = est.fit(X, y).coef_.copy(), est.privacy_report_
    onpair_distributed.fit(est, *_dask(X, y), client=client)
    _close(est.coef_, coef)
    assert est.privacy_report_ == report  # the noise scales depend on n only: the same numbers


def test_the_non_private_gradient_twin_agrees_over_many_steps(client):
    X, y = _data(n=600, d=3, seed=1)
    est = GradientPerturbedGD(T=25, private=False, radius=3.0, bounds=(0, 1))
    coef = est.fit(X, y).coef_.copy()
    onpair_distributed.fit(est, *_dask(X, y, chunks=(200, 150, 250)), client=client)
    _close(est.coef_, coef)


def test_a_dask_dataframe_fits_as_its_numpy_array(client):
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{k}" for k in range(X.shape[1])]).assign(label=np.where(y == 1, "yes", "no"))
    parted = dd.from_pandas(frame, npartitions=3)
    features = [f"f{k}" for k in range(X.shape[1])]
    for est in (OffPairStats(bounds=(0, 1), delta=1e-6, random_state=0),
                GradientPerturbedGD(T=2, bounds=(0, 1), delta=1e-6, random_state=0)):
        coef = est.fit(frame[features], frame["label"]).coef_.copy()
        onpair_distributed.fit(est, parted[features], parted["label"], client=client)
        _close(est.coef_, coef)
        assert est.classes_.tolist() == ["no", "yes"]


def test_fit_on_dask_data_uses_the_current_client_or_the_local_scheduler(client, monkeypatch):
    X, y = _data(n=400, d=3)
    est = OffPairStats(bounds=(0, 1), delta=1e-6, random_state=0)
    coef = est.fit(X, y).coef_.copy()
    Xd, yd = _dask(X, y, chunks=(100, 300))
    used = []
    original = onpair_distributed._resolve_client
    monkeypatch.setattr(onpair_distributed, "_resolve_client", lambda c: used.append(original(c)) or used[-1])
    with client.as_current():
        est.fit(Xd, yd)  # the estimator's own fit, with the client current
    _close(est.coef_, coef)
    est.fit(Xd, yd)  # no current client: Dask's local scheduler
    _close(est.coef_, coef)
    assert used == [client, None]


def test_a_numpy_label_array_beside_dask_records(client):
    X, y = _data(n=300, d=2)
    est = OffPairStats(bounds=(0, 1), delta=1e-6, random_state=0)
    coef = est.fit(X, y).coef_.copy()
    onpair_distributed.fit(est, da.from_array(X, chunks=(100, 1)), y, client=client)  # column chunks merged
    _close(est.coef_, coef)


def test_clipping_and_small_delta_warn_as_in_process(client):
    X, y = _data(n=300, d=2)
    X[5, 0] = 3.0
    est = OffPairStats(bounds=(0, 1), delta=0.01, random_state=0)
    with pytest.warns(PrivacyWarning, match="1/n"), \
            pytest.warns(UserWarning, match="outside the declared feature bounds"):
        onpair_distributed.fit(est, *_dask(X, y, chunks=(100, 200)), client=client)
    assert est.n_clipped_ == 1 and est.privacy_report_["n_clipped"] == 1


# -- failures: nothing released, nothing left on the cluster ------------------------------------------
def _fitted_state(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_")}


def _assert_unchanged(est, state):
    now = _fitted_state(est)
    assert now.keys() == state.keys()
    for key, value in state.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(now[key], value)
        else:
            assert now[key] == value or now[key] is value, key


@pytest.mark.parametrize("bad, message", [
    ("label", r"partition 3: y\[50\] = 7 is not one of classes"),
    ("nan", r"partition 2: .*finite"),
])
def test_an_invalid_partition_fails_the_fit_and_changes_nothing(client, bad, message):
    X, y = _data(n=400, d=3)
    est = OffPairStats(bounds=(0, 1), delta=1e-6, classes=[0, 1], random_state=0).fit(X, y)
    state = _fitted_state(est)
    if bad == "label":
        y = y.copy()
        y[350] = 7
    else:
        X = X.copy()
        X[250, 1] = np.nan
    with pytest.raises(ValueError, match=message):
        onpair_distributed.fit(est, *_dask(X, y, chunks=(100, 100, 100, 100)), client=client)
    _assert_unchanged(est, state)
    assert _scheduler_tasks(client) == 0


def test_bad_parameters_fail_before_any_task_is_submitted(client, monkeypatch):
    def no_cluster(*args, **kwargs):
        raise AssertionError("the cluster was asked for work")

    monkeypatch.setattr(onpair_distributed.DaskPartitions, "__init__", no_cluster)
    X, y = _dask(*_data(n=200, d=2), chunks=(100, 100))
    for est in (OffPairStats(norm_bound=1.0, epsilon=-1.0), OffPairStats(norm_bound=1.0, task="metric"), GradientPerturbedGD(norm_bound=1.0, T=0),
                GradientPerturbedGD(norm_bound=1.0, task="metric")):
        with pytest.raises(ValueError):
            onpair_distributed.fit(est, X, y, client=client)
    with pytest.raises(TypeError, match="no distributed fit"):
        onpair_distributed.fit(OffPairC(norm_bound=1.0), X, y, client=client)


def test_labels_read_off_the_data_must_be_two_for_auc(client):
    X, y = _data(n=200, d=2)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        onpair_distributed.fit(OffPairStats(norm_bound=1.0), *_dask(X, np.where(y == 1, 2, 0) + (np.arange(200) == 0),
                                                      chunks=(100, 100)), client=client)
    with pytest.raises(ValueError, match="at least 2 records"):
        onpair_distributed.fit(OffPairStats(norm_bound=1.0, classes=[0, 1]), *_dask(X[:1], y[:1], chunks=(1,)),
                               client=client)
    assert _scheduler_tasks(client) == 0


@pytest.mark.parametrize("interruption", [RuntimeError("a worker task failed"), KeyboardInterrupt()],
                         ids=["task error", "interrupted on the client"])
def test_a_fit_stopped_mid_descent_releases_nothing_and_frees_the_cluster(client, monkeypatch, interruption):
    X, y = _data(n=400, d=3)
    est = GradientPerturbedGD(T=6, bounds=(0, 1), delta=1e-6, random_state=0).fit(X, y)
    state = _fitted_state(est)
    calls = []
    original = distributed_gradient.pairwise_gradient_sum

    def stopped_at_step_three(partitions, theta, loss_code):
        calls.append(1)
        if len(calls) == 3:
            raise interruption
        return original(partitions, theta, loss_code)

    monkeypatch.setattr(distributed_gradient, "pairwise_gradient_sum", stopped_at_step_three)
    with pytest.raises(type(interruption)):
        onpair_distributed.fit(est, *_dask(X, y, chunks=(100, 300)), client=client)
    assert len(calls) == 3
    _assert_unchanged(est, state)  # two noisy steps were taken on the client, none was released
    assert _scheduler_tasks(client) == 0


def test_a_fit_leaves_nothing_private_on_the_cluster_or_in_the_estimator(client):
    X, y = _data(n=500, d=3)
    Xd, yd = _dask(X, y, chunks=(200, 300))
    for est in (OffPairStats(bounds=(0, 1), delta=1e-6, random_state=0),
                GradientPerturbedGD(T=3, bounds=(0, 1), delta=1e-6, random_state=0)):
        onpair_distributed.fit(est, Xd, yd, client=client)
        assert _scheduler_tasks(client) == 0
        assert not client.futures
        fitted = _fitted_state(est)
        # posterior_: OffPairStats' calibrated posterior, post-processing of the one release
        extra = {"posterior_"} if isinstance(est, OffPairStats) else set()
        assert set(fitted) == {"coef_", "classes_", "n_features_in_", "bounds_", "n_clipped_", "privacy_report_"} | extra
        # Nothing of the size of the data (records, scores, per-record weights) and no Dask object.
        for value in list(vars(est).values()) + list(est.privacy_report_.values()):
            assert not dask.is_dask_collection(value)
            assert not isinstance(value, distributed.Future)
            assert np.size(value) < 100 or isinstance(value, list)


# -- worker processes: no randomness there, and a lost worker changes nothing ------------------------
_RANDOM_ENTRY_POINTS = ("Generator", "default_rng", "PCG64", "SeedSequence", "RandomState", "standard_normal",
                        "normal", "random", "seed")


def _forbid_randomness():
    """In a worker process: every NumPy entry point to random numbers raises (the originals are kept)."""
    import numpy.random as npr

    def refused(*args, **kwargs):
        raise RuntimeError("random numbers drawn on a worker")

    npr._onpair_saved = {name: getattr(npr, name) for name in _RANDOM_ENTRY_POINTS}
    for name in _RANDOM_ENTRY_POINTS:
        setattr(npr, name, refused)


def _allow_randomness():
    import numpy.random as npr

    for name, value in npr.__dict__.pop("_onpair_saved", {}).items():
        setattr(npr, name, value)


def _draw_on_worker():
    import numpy as np

    return float(np.random.default_rng(0).standard_normal())


def test_no_random_number_is_drawn_on_a_worker(process_client):
    X, y = _data(n=600, d=4)
    Xd, yd = _dask(X, y, chunks=(150, 150, 300))
    process_client.run(_forbid_randomness)
    try:
        # The trap works: a task that draws noise on a worker fails.
        with pytest.raises(RuntimeError, match="drawn on a worker"):
            process_client.submit(_draw_on_worker, pure=False).result()
        for est in (OffPairStats(bounds=(0, 1), delta=1e-6, random_state=1),
                    GradientPerturbedGD(T=3, bounds=(0, 1), delta=1e-6, random_state=1)):
            onpair_distributed.fit(est, Xd, yd, client=process_client)
            released = est.coef_.copy()
            _close(released, est.fit(X, y).coef_)  # the noise of the in-process fit, drawn on the client
    finally:
        process_client.run(_allow_randomness)


def test_a_worker_killed_mid_fit_gives_the_same_model(process_client, monkeypatch):
    X, y = _data(n=1000, d=4, seed=2)
    Xd, yd = _dask(X, y, chunks=(250, 250, 250, 250))
    est = GradientPerturbedGD(T=5, radius=2.0, bounds=(0, 1), delta=1e-6, random_state=4)
    undisturbed = onpair_distributed.fit(est, Xd, yd, client=process_client).coef_.copy()
    steps = []
    original = distributed_gradient.pairwise_gradient_sum

    def kill_a_worker_after_step_two(partitions, theta, loss_code):
        steps.append(1)
        if len(steps) == 3:  # the partitions persisted on that worker are lost with it
            pids = process_client.run(os.getpid)
            os.kill(pids[sorted(pids)[0]], signal.SIGKILL)
        return original(partitions, theta, loss_code)

    monkeypatch.setattr(distributed_gradient, "pairwise_gradient_sum", kill_a_worker_after_step_two)
    onpair_distributed.fit(est, Xd, yd, client=process_client)
    np.testing.assert_array_equal(est.coef_, undisturbed)  # deterministic tasks: the same bits
    assert len(steps) == 5
