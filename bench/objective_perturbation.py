"""Objective perturbation and AMP (seed 004) beside the library's private learners: final-model test AUC.

Is pairwise learning worth it under privacy, and which mechanism to use at which ε and n? On the same
20 random splits (80 % train, 20 % test) of Pima and WDBC (the project's loaders, public bounds from their
documentation) and river's Phishing (features in [0, 1] by construction, ``bounds=(0, 1)``), at
ε ∈ {0.5, 1.5, 2.5} and δ = 1/n_train, every estimator with its defaults:

* :class:`onpair.ObjectivePerturbedLogistic` and :class:`onpair.ApproxMinimaPerturbedLogistic`, pointwise
  (logistic regression with intercept: what a user tries first) and pairwise (the AUC logistic loss);
* the private centroid baseline (``GradientPerturbedGD``, T = 1: one noisy full-gradient step from 0),
  :class:`onpair.OffPairStrC` (Huai et al., output perturbation) and :class:`onpair.OffPairStats` (one
  release of the class statistics);
* the non-private twins (the same regularised objectives without noise, at the λ of each ε) and
  scikit-learn's ``LogisticRegression`` (C = 1) on the same mapped features.

diffprivlib's ``LogisticRegression`` (objective perturbation, Chaudhuri et al.) is not in the table:
diffprivlib 0.6.6, the registry's latest, fails to import with the scikit-learn this project tests against
(1.9: ``sklearn.tree._tree.DOUBLE`` no longer exists), and pinning an older scikit-learn for a benchmark
would change the test environment.

Defaults are the estimators' own (chosen without these data). Run:
``.venv/bin/python bench/objective_perturbation.py [--splits 20] [--no-write]``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from onpair import (ApproxMinimaPerturbedLogistic, GradientPerturbedGD, ObjectivePerturbedLogistic,  # noqa: E402
                    OffPairStats, OffPairStrC)
from onpair.core.bounds import FeatureBounds  # noqa: E402
from onpair.evaluation import roc_auc  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

SECTION = "## Objective perturbation and AMP: final-model AUC"
EPSILONS = (0.5, 1.5, 2.5)

PRIVATE = {
    "ObjectivePerturbedLogistic, pointwise": lambda e, d, b, s: ObjectivePerturbedLogistic(
        epsilon=e, delta=d, bounds=b, random_state=s),
    "ApproxMinimaPerturbedLogistic, pointwise": lambda e, d, b, s: ApproxMinimaPerturbedLogistic(
        epsilon=e, delta=d, bounds=b, random_state=s),
    "ObjectivePerturbedLogistic, pairwise": lambda e, d, b, s: ObjectivePerturbedLogistic(
        epsilon=e, delta=d, bounds=b, objective="pairwise", random_state=s),
    "ApproxMinimaPerturbedLogistic, pairwise": lambda e, d, b, s: ApproxMinimaPerturbedLogistic(
        epsilon=e, delta=d, bounds=b, objective="pairwise", random_state=s),
    "private centroid baseline (GradientPerturbedGD, T = 1)": lambda e, d, b, s: GradientPerturbedGD(
        epsilon=e, delta=d, bounds=b, random_state=s),
    "OffPairStrC": lambda e, d, b, s: OffPairStrC(epsilon=e, delta=d, bounds=b, random_state=s),
    "OffPairStats": lambda e, d, b, s: OffPairStats(epsilon=e, delta=d, bounds=b, random_state=s),
}
TWINS = {
    "non-private twin, pointwise (same λ)": lambda e, d, b: ObjectivePerturbedLogistic(
        epsilon=e, delta=d, bounds=b, private=False),
    "non-private twin, pairwise (same λ)": lambda e, d, b: ObjectivePerturbedLogistic(
        epsilon=e, delta=d, bounds=b, objective="pairwise", private=False),
}


def load(name):
    """(X, y, bounds) or None when the data are not available."""
    if name == "phishing":
        from river import datasets

        records = list(datasets.Phishing())
        keys = list(records[0][0])
        X = np.array([[x[k] for k in keys] for x, _ in records], dtype=float)
        y = np.array([1 if label else 0 for _, label in records])
        return X, y, (0.0, 1.0)
    from streams import load as load_uci

    try:
        X, y, spec = load_uci(name)
    except FileNotFoundError:
        return None
    return X, y, spec.bounds


def evaluate(name: str, splits: int) -> list[str]:
    data = load(name)
    if data is None:
        return [f"({name} skipped: set ONPAIR_DATA to the folder holding the UCI files)"]
    X, y, bounds = data
    n_train = int(0.8 * len(y))
    delta = 1.0 / n_train
    scores: dict = {}
    seconds: dict = {}
    feature_map = FeatureBounds(*bounds)
    for split in range(splits):
        order = np.random.default_rng(split).permutation(len(y))
        train, test = order[:n_train], order[n_train:]
        positive = y[test] == np.max(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # δ = 1/n is the protocol here (PrivacyWarning), as elsewhere
            from sklearn.linear_model import LogisticRegression

            Z_train, _ = feature_map.transform(X[train])
            Z_test, _ = feature_map.transform(X[test])
            reference = LogisticRegression(C=1.0).fit(Z_train, y[train])
            scores.setdefault(("scikit-learn LogisticRegression (non-private)", None), []).append(
                roc_auc(positive, reference.decision_function(Z_test)))
            for e in EPSILONS:
                for key, make in PRIVATE.items():
                    start = time.perf_counter()
                    model = make(e, delta, bounds, split).fit(X[train], y[train])
                    if split > 0:  # the first split compiles the kernels
                        seconds.setdefault(key, []).append(time.perf_counter() - start)
                    scores.setdefault((key, e), []).append(roc_auc(positive, model.decision_function(X[test])))
                for key, make in TWINS.items():
                    model = make(e, delta, bounds).fit(X[train], y[train])
                    scores.setdefault((key, e), []).append(roc_auc(positive, model.decision_function(X[test])))
    lines = [f"### {name}: n_train = {n_train}, n_test = {len(y) - n_train}, d = {X.shape[1]}, δ = 1/n_train, "
             f"{splits} splits (mean ± standard error of test AUC; fit: mean time of one fit, 2 shared cores)", "",
             "| model | " + " | ".join(f"ε = {e}" for e in EPSILONS) + " | fit |",
             "|---|" + "---|" * len(EPSILONS) + "---|"]
    for key in list(PRIVATE) + list(TWINS):
        cells = [scores[(key, e)] for e in EPSILONS]
        fit = f"{1000 * np.mean(seconds[key]):.1f} ms" if key in seconds else ""
        lines.append(f"| {key} | " + " | ".join(f"{np.mean(v):.3f} ± {np.std(v) / np.sqrt(len(v)):.3f}"
                                                for v in cells) + f" | {fit} |")
    ref = scores[("scikit-learn LogisticRegression (non-private)", None)]
    lines.append("| scikit-learn LogisticRegression (non-private, C = 1) | "
                 + " | ".join([f"{np.mean(ref):.3f}"] * len(EPSILONS)) + " | |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, splits=1)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"- date: {stamp}; command: `make bench` (`bench/objective_perturbation.py`)", "",
            " ".join(__doc__.strip().split("\n\n")[1].split()), "",
            " ".join(__doc__.strip().split("\n\n")[3].split()), ""]
    for name in ("pima", "wdbc", "phishing"):
        table = evaluate(name, args.splits)
        print("\n".join(table), flush=True)
        body += table + [""]
    if not args.no_write:
        from results_file import write_section

        write_section(SECTION, body)


if __name__ == "__main__":
    main()
