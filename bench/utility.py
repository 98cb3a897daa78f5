"""Utility of the online learners under privacy: test AUC at ε ∈ {0.5, 1.5, 2.5}, δ = 1/n.

Compared, on the same permutations:
* the non-private twin (Pairwise GIGA, the same kernel without noise);
* the private centroid baseline of docs/algorithms.md#private-centroid: one noisy full-gradient step from θ = 0 (the
  class-mean difference), sensitivity 4/n, analytic Gaussian mechanism;
* OnPairStrC and OnPairC with their defaults (releases at 64, 128, …, n; proportional budget split),
  OnPairStrC releasing only at n, and OnPairStrC as printed in the paper (mode="paper", λ = 10⁻³).

Data: river's bundled Phishing (features in [0, 1] by construction), and Pima Indians Diabetes from
``$ONPAIR_DATA`` when present, with public bounds from clinical ranges (below), never from the data.
Run: ``.venv/bin/python bench/utility.py [--seeds 20]``; ``bench/run.py`` calls it and records the table.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from onpair import FeatureBounds, OnPairC, OnPairStrC, PairwiseGIGA
from onpair.evaluation import roc_auc
from onpair.privacy import gaussian_sigma
from quick import add_quick, apply_quick

EPSILONS = (0.5, 1.5, 2.5)
SECTION = "## Online learners: utility under privacy"

def load_phishing():
    from river import datasets

    records = list(datasets.Phishing())
    names = list(records[0][0])
    X = np.array([[x[k] for k in names] for x, _ in records], dtype=float)
    y = np.array([1 if label else -1 for _, label in records])
    return "Phishing (river)", X, y, (0.0, 1.0), 1000


def load_pima():
    """Pima through the project's loader (sha256 checked) with its public clinical bounds
    (``streams.uci``), or None when ``$ONPAIR_DATA`` does not hold it."""
    from streams import load

    try:
        X, y, spec = load("pima")
    except FileNotFoundError:
        return None
    return "Pima (UCI)", X, y, spec.bounds, 614


def centroid_baseline(Z_train, y_train, Z_test, epsilon, delta, rng):
    """docs/algorithms.md#private-centroid: θ = −η(∇L(0) + b), sensitivity of ∇L(0) is 4/n (|φ'(0)| = 1/2, diameter 2)."""
    n = y_train.size
    pos, neg = Z_train[y_train > 0], Z_train[y_train < 0]
    # ∇L(0) = −(2/(n(n−1))) Σ_{pos, neg} (x⁺ − x⁻) for the logistic AUC loss.
    gradient = -2.0 * (pos.sum(0) * len(neg) - neg.sum(0) * len(pos)) / (n * (n - 1))
    sigma = gaussian_sigma(4.0 / n, epsilon, delta)
    theta = -(gradient + sigma * rng.standard_normal(gradient.shape))
    return Z_test @ theta


def evaluate(dataset, seeds):
    name, X, y, (lower, upper), n_train = dataset
    bounds = FeatureBounds(lower, upper)
    rows = {}
    models = {
        "OnPairStrC (defaults)": lambda e, d, s: OnPairStrC(epsilon=e, delta=d, bounds=(lower, upper), n=n_train, seed=s),
        "OnPairStrC (one release at n)": lambda e, d, s: OnPairStrC(epsilon=e, delta=d, bounds=(lower, upper),
                                                                     release_at=[n_train], seed=s),
        "OnPairC (defaults)": lambda e, d, s: OnPairC(epsilon=e, delta=d, bounds=(lower, upper), n=n_train, seed=s),
        "OnPairStrC paper mode, λ = 1e-3": lambda e, d, s: OnPairStrC(epsilon=e, delta=d, bounds=(lower, upper), n=n_train,
                                                                      lam=1e-3, radius=1.0, mode="paper", seed=s),
    }
    scores = {key: {e: [] for e in EPSILONS} for key in ["Private centroid baseline", *models]}
    twin = []
    for seed in range(seeds):
        order = np.random.default_rng(seed).permutation(len(y))
        train, test = order[:n_train], order[n_train:]
        delta = 1.0 / n_train
        twin_model = PairwiseGIGA(bounds=(lower, upper)).learn_many(X[train], y[train])
        twin.append(roc_auc(y[test], twin_model.decision_function(X[test])))
        Z_train, _ = bounds.transform(X[train])
        Z_test, _ = bounds.transform(X[test])
        for e in EPSILONS:
            rng = np.random.default_rng([seed, int(e * 10)])
            scores["Private centroid baseline"][e].append(
                roc_auc(y[test], centroid_baseline(Z_train, y[train], Z_test, e, delta, rng)))
            for key, make in models.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    learner = make(e, delta, seed).learn_many(X[train], y[train])
                scores[key][e].append(roc_auc(y[test], learner.decision_function(X[test])))
    lines = [f"### {name}: n_train = {n_train}, n_test = {len(y) - n_train}, d = {X.shape[1]}, "
             f"δ = 1/n, {seeds} random splits (mean ± std of test AUC)", "",
             "| model | " + " | ".join(f"ε = {e}" for e in EPSILONS) + " |",
             "|---|" + "---|" * len(EPSILONS)]
    for key, per_eps in scores.items():
        lines.append(f"| {key} | " + " | ".join(f"{np.mean(v):.3f} ± {np.std(v):.3f}" for v in per_eps.values()) + " |")
    lines.append(f"| Pairwise GIGA (non-private twin) | " + " | ".join([f"{np.mean(twin):.3f} ± {np.std(twin):.3f}"] * len(EPSILONS)) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only, leave the results file alone")
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, seeds=1)
    sections = []
    for loader in (load_phishing, load_pima):
        dataset = loader()
        if dataset is None:
            sections.append("(Pima skipped: set ONPAIR_DATA to the folder holding pima-indians-diabetes.csv)")
            continue
        sections.append(evaluate(dataset, args.seeds))
    text = "\n\n".join(sections)
    print(text)
    if not args.no_write:
        import datetime
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from results_file import write_section

        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        write_section(SECTION, [f"- date: {stamp}; command: `make bench` (`bench/utility.py`)", "",
                                __doc__.strip().split("\n\n")[1], "", text])
    return text


if __name__ == "__main__":
    main()
