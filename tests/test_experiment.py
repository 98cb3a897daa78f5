"""`onpair experiment huai`: the protocol runs end to end and writes its table (and plots if possible)."""

import os

import pytest

from onpair import experiment
from onpair.cli import main

HAS_DATA = all(os.path.exists(os.path.join(os.environ.get("ONPAIR_DATA", ""), f))
               for f in ("hepatitis.data", "wdbc.data", "pima-indians-diabetes.csv", "messidor_features.arff"))


@pytest.mark.skipif(not HAS_DATA, reason="needs ONPAIR_DATA with the UCI files (make test sets it)")
def test_one_permutation_of_every_figure_writes_the_table(tmp_path, capsys):
    status = main(["experiment", "huai", "--out", str(tmp_path), "--permutations", "1"])
    assert status == 0
    table = (tmp_path / "huai_results.md").read_text()
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
