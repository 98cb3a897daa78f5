"""Utility of the offline private estimators on scikit-learn's breast-cancer data (Wisconsin diagnostic).

Test AUC at ε ∈ {0.5, 1.5, 2.5}, δ = 1/n_train, over random 80/20 train/test splits (mean ± std),
each private estimator beside its non-private twin (``private=False``: same algorithm, no noise) and
beside the private centroid baseline of docs/algorithms.md#private-centroid (``GradientPerturbedGD(T=1)`` from θ = 0).

Public bounds: [0, upper] per feature, with ``upper`` the maxima printed in the data set's
documentation (``load_breast_cancer().DESCR``), rounded outward. They are documented constants, not
computed here; in a deployment they would be the clinician's ranges.
Run: ``.venv/bin/python bench/offline_utility.py [--seeds 20] [--no-write]``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from onpair import OffPairC, OffPairStrC
from onpair.batch.gradient_perturbation import GradientPerturbedGD
from onpair.batch.output_perturbation import OutputPerturbedSGD
from streams import get_spec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_file import write_section  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

EPSILONS = (0.5, 1.5, 2.5)
SECTION = "## Offline estimators: utility under privacy"
# The public WDBC bounds of streams.uci (the same 30 features, in the order scikit-learn's copy uses).
BOUNDS = get_spec("wdbc").bounds


def models(epsilon, delta, seed, n_train, private=True):
    common = dict(epsilon=epsilon, delta=delta, bounds=BOUNDS, random_state=seed, private=private)
    return {
        "Private centroid baseline (GradientPerturbedGD, T = 1)": GradientPerturbedGD(T=1, **common),
        "OffPairStrC (last iterate, default)": OffPairStrC(**common),
        "OffPairStrC (average, the paper's w̃)": OffPairStrC(output="average", **common),
        "OffPairC (default)": OffPairC(**common),
        "GradientPerturbedGD (T = 10)": GradientPerturbedGD(T=10, **common),
        "OutputPerturbedSGD (hinge, T = 10n)": OutputPerturbedSGD(T=10 * n_train, **common),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, seeds=1)
    from sklearn.datasets import load_breast_cancer  # test/bench dependency only

    data = load_breast_cancer()
    X, y = data.data, data.target  # target 1 = benign
    n = len(y)
    n_train = int(0.8 * n)
    delta = 1.0 / n_train
    private = {}
    twin = {}
    seconds = {}
    for seed in range(args.seeds):
        order = np.random.default_rng(seed).permutation(n)
        train, test = order[:n_train], order[n_train:]
        for eps in EPSILONS:
            for name, est in models(eps, delta, seed, n_train).items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X[train], y[train])
                seconds.setdefault(name, []).append(time.perf_counter() - start)
                private.setdefault(name, {}).setdefault(eps, []).append(est.score(X[test], y[test]))
        for name, est in models(1.0, delta, seed, n_train, private=False).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X[train], y[train])
            twin.setdefault(name, []).append(est.score(X[test], y[test]))
    lines = [f"Breast cancer (scikit-learn), n_train = {n_train}, n_test = {n - n_train}, d = 30, "
             f"δ = 1/n_train, {args.seeds} random splits; test AUC, mean ± std.", "",
             "| estimator | " + " | ".join(f"ε = {e}" for e in EPSILONS) + " | non-private twin | s per fit |",
             "|---|" + "---|" * (len(EPSILONS) + 2)]
    for name, per_eps in private.items():
        cells = [f"{np.mean(v):.3f} ± {np.std(v):.3f}" for v in per_eps.values()]
        lines.append(f"| {name} | " + " | ".join(cells) +
                     f" | {np.mean(twin[name]):.3f} ± {np.std(twin[name]):.3f} | {np.mean(seconds[name]):.3f} |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_section(SECTION, [f"- date: {stamp}; command: `make bench` (`bench/offline_utility.py`)", "",
                                __doc__.strip().split("\n\n")[1], "", text])


if __name__ == "__main__":
    main()
