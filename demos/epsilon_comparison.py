"""How much privacy costs: the same stream learned at several ε, beside the non-private twin.

Pima Indians Diabetes from the data directory ($ONPAIR_DATA, else ~/.onpair/data), streamed once per ε
through OnPairStrC (online, releases at 64, 128, …, n) and released once by OffPairStrC (offline),
averaged over 10 public random splits. Run: ``python demos/epsilon_comparison.py``.
"""

import warnings

import numpy as np

from onpair import OffPairStrC, OnPairStrC, PairwiseGIGA
from onpair.metrics import roc_auc
from streams import load

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def main():
    X, y, spec = load("pima")
    n_train = 614
    rows = {"OnPairStrC (online)": [], "OffPairStrC (offline)": []}
    twin = []
    for split in range(10):
        order = np.random.default_rng(split).permutation(len(y))
        train, test = order[:n_train], order[n_train:]
        twin_model = PairwiseGIGA(bounds=spec.bounds).learn_many(X[train], y[train])
        twin.append(roc_auc(y[test], twin_model.decision_function(X[test])))
        for name in rows:
            scores = []
            for eps in EPSILONS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if name.startswith("On"):
                        model = OnPairStrC(epsilon=eps, delta=1e-5, bounds=spec.bounds, n=n_train, seed=split)
                        model.learn_many(X[train], y[train])
                    else:
                        model = OffPairStrC(epsilon=eps, delta=1e-5, bounds=spec.bounds, random_state=split)
                        model.fit(X[train], y[train])
                scores.append(roc_auc(y[test], model.decision_function(X[test])))
            rows[name].append(scores)
    print(f"Pima, n_train = {n_train}, δ = 1e-5, test AUC over 10 splits "
          f"(non-private twin: {np.mean(twin):.3f})\n")
    print(f"{'ε':>24} " + " ".join(f"{e:>6}" for e in EPSILONS))
    for name, values in rows.items():
        print(f"{name:>24} " + " ".join(f"{v:6.3f}" for v in np.mean(values, axis=0)))


if __name__ == "__main__":
    main()
