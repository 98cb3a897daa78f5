"""How much privacy costs: the same stream learned at several ε, beside the non-private twin.

Pima Indians Diabetes from the data directory ($ONPAIR_DATA, else ~/.onpair/data), streamed once per ε
through OnPairStats (online: class statistics released after every record) and released once by
OffPairStats (offline), the default learners, with Huai et al.'s OnPairStrC (online, model releases at 64,
128, …, n) for comparison; averaged over 10 public random splits, seeded (two runs print the same table). Run: ``python demos/epsilon_comparison.py``.
"""

import warnings

import numpy as np

from onpair import OffPairStats, OnPairStats, OnPairStrC
from onpair.evaluation import roc_auc
from streams import load

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def main():
    X, y, spec = load("pima")
    n_train = 614
    rows = {"OnPairStats (online)": [], "OffPairStats (offline)": [], "OnPairStrC (Huai et al.)": []}
    twin = []
    for split in range(10):
        order = np.random.default_rng(split).permutation(len(y))
        train, test = order[:n_train], order[n_train:]
        twin_model = OffPairStats(bounds=spec.bounds, private=False).fit(X[train], y[train])
        twin.append(roc_auc(y[test], twin_model.decision_function(X[test])))
        for name in rows:
            scores = []
            for eps in EPSILONS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if name.startswith("OnPairStats"):
                        model = OnPairStats(epsilon=eps, delta=1e-5, bounds=spec.bounds, seed=split)
                        model.learn_many(X[train], y[train])
                    elif name.startswith("OffPairStats"):
                        model = OffPairStats(epsilon=eps, delta=1e-5, bounds=spec.bounds, random_state=split)
                        model.fit(X[train], y[train])
                    else:
                        model = OnPairStrC(epsilon=eps, delta=1e-5, bounds=spec.bounds, n=n_train, seed=split)
                        model.learn_many(X[train], y[train])
                scores.append(roc_auc(y[test], model.decision_function(X[test])))
            rows[name].append(scores)
    print(f"Pima, n_train = {n_train}, δ = 1e-5, test AUC over 10 splits "
          f"(non-private twin: {np.mean(twin):.3f})\n")
    print(f"{'ε':>24} " + " ".join(f"{e:>6}" for e in EPSILONS))
    for name, values in rows.items():
        print(f"{name:>24} " + " ".join(f"{v:6.3f}" for v in np.mean(values, axis=0)))


if __name__ == "__main__":
    main()
