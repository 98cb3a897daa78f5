"""Utility of private metric learning: test 3-NN accuracy with the released metric, δ = 1/n.

For Pima (Diabetes) and Diabetic Retinopathy from ``$ONPAIR_DATA`` (public bounds of
:mod:`streams.uci`), over random 80/20 splits, ε ∈ {0.5, 1.5, 2.5}:

* 3-NN with plain Euclidean distance, on the raw features and on the public-bounds map (the latter is
  the identity metric W = I of the learners' space: what a learned metric has to beat);
* the non-private twin (PairwiseGIGA, task="metric"), with the library's defaults (λ = "auto"), with
  a 30× weaker regulariser (λ = auto/30, so the learned correction of the identity is larger), and
  with the paper's centre (zero); scikit-learn's NCA as a non-private reference when installed;
* OnPairStrC (online, releases 64, 128, …, n), OffPairStrC (one release) and GradientPerturbedGD with
  T = 1 (one noisy gradient step from the public scaled identity) with their metric defaults, and
  OnPairStrC with the weaker λ.

Run: ``.venv/bin/python bench/metric_utility.py [--seeds 20]``; ``make bench`` records the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from onpair import OnPairStrC, PairwiseGIGA  # noqa: E402
from onpair.core.bounds import FeatureBounds  # noqa: E402
from onpair.estimators import GradientPerturbedGD, OffPairStrC  # noqa: E402
from onpair.core.metric_losses import get_metric_loss  # noqa: E402
from onpair.evaluation import knn_accuracy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quick import add_quick, apply_quick  # noqa: E402

try:  # only for a reference row; scikit-learn is a test extra, not a dependency
    from sklearn.neighbors import NeighborhoodComponentsAnalysis as NCA
except ImportError:  # pragma: no cover
    NCA = None

EPSILONS = (0.5, 1.5, 2.5)
SECTION = "## Metric learning: 3-NN accuracy under privacy"
RADIUS = 0.1
WEAK = get_metric_loss("logistic").lipschitz(RADIUS) / RADIUS / 30.0  # auto/30


def _accuracy(model, X_train, y_train, X_test, y_test):
    """3-NN accuracy with the released metric (transform maps raw records through the bounds and L)."""
    return knn_accuracy(model.transform(X_train), y_train, model.transform(X_test), y_test, k=3)


def run(name: str, seeds: int) -> dict:
    from streams import load

    X, y, spec = load(name)
    bounds = FeatureBounds(*spec.bounds)
    n_total = len(y)
    n_train = int(round(0.8 * n_total))
    delta = 1.0 / n_train
    rows: dict[str, list] = {}

    def add(label, value):
        rows.setdefault(label, []).append(value)

    for seed in range(seeds):
        order = np.random.default_rng([5, seed]).permutation(n_total)
        train, test = order[:n_train], order[n_train:]
        Z_train, _ = bounds.transform(X[train])
        Z_test, _ = bounds.transform(X[test])
        add("3-NN, Euclidean on the raw features", knn_accuracy(X[train], y[train], X[test], y[test], k=3))
        add("3-NN, Euclidean on the public-bounds map (W = I)", knn_accuracy(Z_train, y[train], Z_test, y[test], k=3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # clipping to the public bounds is counted, not an error here
            twin = PairwiseGIGA(task="metric", bounds=spec.bounds).learn_many(X[train], y[train])
            add("non-private twin, λ = auto", _accuracy(twin, X[train], y[train], X[test], y[test]))
            weak = PairwiseGIGA(task="metric", lam=WEAK, bounds=spec.bounds).learn_many(X[train], y[train])
            add("non-private twin, λ = auto/30", _accuracy(weak, X[train], y[train], X[test], y[test]))
            zero = PairwiseGIGA(task="metric", center="zero", bounds=spec.bounds).learn_many(X[train], y[train])
            add("non-private twin, centre zero (the paper's (λ/2)‖W‖²)",
                _accuracy(zero, X[train], y[train], X[test], y[test]))
            if NCA is not None:  # a dedicated non-private k-NN metric learner, for reference only
                nca = NCA(random_state=seed).fit(Z_train, y[train])
                add("scikit-learn NCA (non-private reference)",
                    knn_accuracy(nca.transform(Z_train), y[train], nca.transform(Z_test), y[test], k=3))
            for epsilon in EPSILONS:
                common = dict(epsilon=epsilon, delta=delta, bounds=spec.bounds, task="metric")
                online = OnPairStrC(n=n_train, seed=seed, **common).learn_many(X[train], y[train])
                add(f"OnPairStrC, ε = {epsilon}", _accuracy(online, X[train], y[train], X[test], y[test]))
                online_weak = OnPairStrC(n=n_train, seed=seed, lam=WEAK, **common).learn_many(X[train], y[train])
                add(f"OnPairStrC λ = auto/30, ε = {epsilon}",
                    _accuracy(online_weak, X[train], y[train], X[test], y[test]))
                offline = OffPairStrC(random_state=seed, **common).fit(X[train], y[train])
                add(f"OffPairStrC, ε = {epsilon}", _accuracy(offline, X[train], y[train], X[test], y[test]))
                gd = GradientPerturbedGD(random_state=seed, **common).fit(X[train], y[train])
                add(f"GradientPerturbedGD T = 1, ε = {epsilon}", _accuracy(gd, X[train], y[train], X[test], y[test]))
    return {"name": name, "n_train": n_train, "d": X.shape[1], "rows": rows}


def table(results: list, seeds: int) -> list[str]:
    lines = [f"Test 3-NN accuracy (mean ± standard error over {seeds} random 80/20 splits, δ = 1/n_train; "
             "`bench/metric_utility.py`). Every learner uses its metric defaults (R = 0.1, constraint "
             "\"frobenius\", λ = \"auto\", centre = the scaled identity); distances use the PSD part of W.", ""]
    header = "| configuration | " + " | ".join(f"{r['name']} (n = {r['n_train']}, d = {r['d']})" for r in results) + " |"
    lines += [header, "|---|" + "---|" * len(results)]
    for label in results[0]["rows"]:
        cells = []
        for r in results:
            v = np.asarray(r["rows"][label])
            cells.append(f"{v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(v.size):.3f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    # Paired difference of the twin against the identity metric: the question "does learning help?".
    lines.append("")
    for r in results:
        base = np.asarray(r["rows"]["3-NN, Euclidean on the public-bounds map (W = I)"])
        for label in ("non-private twin, λ = auto", "non-private twin, λ = auto/30", "OnPairStrC, ε = 2.5"):
            diff = np.asarray(r["rows"][label]) - base
            lines.append(f"- {r['name']}: {label} − Euclidean = {diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(diff.size):.4f} "
                         f"(paired, {np.mean(diff > 0):.0%} of splits better, {np.mean(diff < 0):.0%} worse)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only; leave the results file alone")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, seeds=1)
    try:
        results = [run("pima", args.seeds), run("retinopathy", args.seeds)]
    except FileNotFoundError as exc:
        print(f"skipped: {exc}")
        return 0
    lines = table(results, args.seeds)
    print(SECTION)
    print("\n".join(lines))
    if not args.no_write:
        from results_file import write_section

        write_section(SECTION, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
