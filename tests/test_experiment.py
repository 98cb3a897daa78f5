"""`onpair experiment huai`: the protocol runs end to end and writes its table (and plots if possible)."""

import os
import warnings

import pytest

from onpair import experiment
from onpair.cli import main

HAS_DATA = all(os.path.exists(os.path.join(os.environ.get("ONPAIR_DATA", ""), f))
               for f in ("hepatitis.data", "wdbc.data", "pima-indians-diabetes.csv", "messidor_features.arff"))


@pytest.mark.slow  # every figure of the experiment (the module's other tests run one figure in the fast tier)
@pytest.mark.skipif(not HAS_DATA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
def test_one_permutation_of_every_figure_writes_the_table(tmp_path, capsys):
    with warnings.catch_warnings():
        # The protocol's deliberate settings (δ = 1/n, the paper's constants) are reported in the table,
        # not warned about once per run: under warnings-as-errors the experiment still runs.
        warnings.simplefilter("error")
        status = main(["experiment", "huai", "--out", str(tmp_path), "--permutations", "1"])
    assert status == 0
    table = (tmp_path / "huai_results.md").read_text()
    assert table.count("### Settings the library warns about") == 1
    for _, _, note in experiment.PROTOCOL_WARNINGS:
        assert table.count(note) == 1, note
    for figure in (1, 2, 3, 4, 5, 6):
        assert f"### Figure {figure}" in table
    # Every (configuration, ε or baseline) row has one cell per training size.
    # Figures 1-3 and 5: objective and AUC (5: 3-NN accuracy) tables, figures 4 and 6: one table; two
    # data sets each.
    assert table.count("| library: ε = 0.5 |") == 20 and table.count("| paper: NonPrivate |") == 20
    # The metric figures' accuracy tables carry the Euclidean 3-NN row the learned metric must beat.
    assert table.count("| 3-NN, Euclidean |") == 4
    assert "### Figure 6: test 3-NN accuracy of OffPairC, metric learning" in table
    out = capsys.readouterr().out
    assert "huai_results.md" in out


def test_bad_arguments_fail_with_status_1(tmp_path, capsys):
    assert main(["experiment", "huai", "--out", str(tmp_path), "--figures", "9"]) == 1
    assert "figure" in capsys.readouterr().err


def test_only_the_protocols_own_warnings_are_held_back():
    counts = experiment.Counter()
    with pytest.warns(Warning) as caught:
        with experiment._protocol_warnings(counts):
            warnings.warn("delta = 0.02 ≥ 1/n = 0.02: a mechanism that publishes …", experiment.PrivacyWarning)
            warnings.warn("delta = 0.01 ≥ 1/n = 0.01: a mechanism that publishes …", experiment.PrivacyWarning)
            warnings.warn("something else", UserWarning)
            warnings.warn("delta = 0.5 ≥ 1/n = 0.5", RuntimeWarning)  # the right words, another category
    assert [str(w.message) for w in caught] == ["something else", "delta = 0.5 ≥ 1/n = 0.5"]
    assert sum(counts.values()) == 2 and len(counts) == 1
    notes = experiment.protocol_notes(counts)
    assert "δ = 1/n" in notes and "(2 warnings)" in notes
    assert experiment.protocol_notes(experiment.Counter()) == ""


# -- the grid as Dask tasks ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tcp_cluster():
    distributed = pytest.importorskip("distributed", reason="the dask extra (make install installs it)")
    import logging

    # Two worker threads in this process: the tasks' warning capture must not mix their warnings.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster:
        yield cluster


@pytest.mark.skipif(not HAS_DATA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
@pytest.mark.parametrize("figure, permutations", [(3, 2)])
def test_a_figure_on_a_dask_cluster_has_the_in_process_results(tcp_cluster, figure, permutations):
    from distributed import Client

    local_counts, cluster_counts = experiment.Counter(), experiment.Counter()
    ticks = []
    local = experiment.run_figure(figure, permutations, warned=local_counts)
    with Client(tcp_cluster, set_as_default=False) as client:
        on_cluster = experiment.run_figure(figure, permutations, warned=cluster_counts, client=client,
                                           progress=ticks.append)
        assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0
    assert on_cluster == local  # every value of every permutation, bit for bit and in the same order
    assert cluster_counts == local_counts and sum(local_counts.values()) > 0
    assert len(ticks) == permutations * len(experiment.FIGURES[figure][1])


@pytest.mark.skipif(not HAS_DATA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
def test_the_command_runs_the_grid_on_a_scheduler_address(tcp_cluster, tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the protocol's warnings are counted on the workers, not raised
        assert main(["experiment", "huai", "--out", str(tmp_path / "here"), "--permutations", "1",
                     "--figures", "3"]) == 0
        assert main(["experiment", "huai", "--out", str(tmp_path / "there"), "--permutations", "1",
                     "--figures", "3", "--scheduler", tcp_cluster.scheduler_address]) == 0
    assert (tmp_path / "there" / "huai_results.md").read_text() == (tmp_path / "here" / "huai_results.md").read_text()
    assert "huai_results.md" in capsys.readouterr().out


def test_a_bad_scheduler_is_refused(tmp_path):
    with pytest.raises(ValueError, match="scheduler must be"):
        experiment.run(str(tmp_path), 1, (3,), scheduler="")
    assert not os.listdir(tmp_path)


@pytest.mark.skipif(not HAS_DATA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
def test_workers_lost_mid_grid_do_not_fail_it():
    """Under load the grid once failed with ``FutureCancelledError: ... lost dependencies`` (the data sets were
    scattered to the workers, and lost with them). Here every worker that held anything is removed after the
    first task, a fresh one takes over, and the grid still gives the in-process results."""
    distributed = pytest.importorskip("distributed", reason="the dask extra (make install installs it)")
    import logging

    figure, permutations = 3, 2
    local = experiment.run_figure(figure, permutations, warned=experiment.Counter())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        first = set(client.scheduler_info()["workers"])
        lost = []

        async def remove(dask_scheduler, addresses):
            for address in addresses:
                await dask_scheduler.remove_worker(address=address, stimulus_id="test-lost-worker", close=True)

        def progress(_):
            if not lost:
                lost.extend(first)
                cluster.scale(len(cluster.worker_spec) + 1)   # a fresh worker, then the first ones go
                client.wait_for_workers(3)
                client.run_on_scheduler(remove, addresses=sorted(first))

        on_cluster = experiment.run_figure(figure, permutations, warned=experiment.Counter(), client=client,
                                           progress=progress)
        assert lost and not first & set(client.scheduler_info()["workers"])  # the first workers are gone
    assert on_cluster == local
