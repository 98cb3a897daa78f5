"""A private model at every round of a stream, on the breast-cancer data (WDBC).

The 469 streamed records arrive one at a time (``learn_one``). OnPairStats releases the class
statistics after every record, so a private model exists at every round; the demo scores it every 50
records on a fixed held-out set of 100 records, beside Huai et al.'s OnPairStrC (a noisy iterate
released every 50 records, the budget split over its releases in proportion to their round) and the
non-private twin. ``privacy_report()["noise_dominated"]`` says, from public quantities only, when a
released model is mostly noise. Run: ``python demos/streaming_releases.py``.
"""

import warnings

import numpy as np

from onpair import OnPairStats, OnPairStrC
from onpair.evaluation import roc_auc
from streams import load


def main():
    X, y, spec = load("wdbc")
    order = np.random.default_rng(7).permutation(len(y))
    held, stream = order[:100], order[100:]
    stats = OnPairStats(epsilon=1.0, delta=1e-6, bounds=spec.bounds)
    strc = OnPairStrC(epsilon=1.0, delta=1e-6, bounds=spec.bounds, release_every=50, n=len(stream),
                      budget_split="proportional")
    twin = OnPairStats(private=False, bounds=spec.bounds)
    print("record | OnPairStats (noise-dominated?) | OnPairStrC (noise-dominated?) | non-private")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # in case a record exceeds the documented bounds
        for i in stream:
            for learner in (stats, strc, twin):
                learner.learn_one(X[i], y[i])
            if stats.n_seen % 50 == 0 or stats.n_seen == len(stream):
                cells = []
                for learner in (stats, strc):
                    flag = "noise!" if learner.privacy_report()["noise_dominated"] else "      "
                    cells.append(f"{roc_auc(y[held], learner.decision_function(X[held])):.3f} {flag}")
                print(f"{stats.n_seen:>6} | {cells[0]:>30} | {cells[1]:>29} | "
                      f"{roc_auc(y[held], twin.decision_function(X[held])):.3f}")
    print(f"\nε spent: OnPairStats {stats.privacy_report()['epsilon_spent']:.3f} "
          f"({stats.n_releases} releases), OnPairStrC {strc.privacy_report()['epsilon_spent']:.3f} "
          f"({strc.n_releases} releases)")


if __name__ == "__main__":
    main()
