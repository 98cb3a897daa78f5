"""A private model that improves as the stream goes: periodic releases on the breast-cancer data (WDBC).

The 469 streamed records arrive one at a time (``learn_one``); OnPairStrC releases a model every 50
records and at the end. The stream's length is public here, so the budget is split over the known
releases in proportion to their round (later models, which have seen more data, get more of it). Each
release is scored on a fixed held-out set of 100 records. Without ``n`` the learner would use a
convergent split (ρ_k ∝ 1/k²), which leaves little budget for late releases. Run: ``python demos/streaming_releases.py``.
"""

import warnings

import numpy as np

from onpair import OnPairStrC, PairwiseGIGA
from onpair.metrics import roc_auc
from streams import load


def main():
    X, y, spec = load("wdbc")
    order = np.random.default_rng(7).permutation(len(y))
    held, stream = order[:100], order[100:]
    learner = OnPairStrC(epsilon=1.0, delta=1e-6, bounds=spec.bounds, release_every=50, n=len(stream),
                         budget_split="proportional")
    twin = PairwiseGIGA(bounds=spec.bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # in case a record exceeds the documented bounds
        for i in stream:
            learner.learn_one(X[i], y[i])
            twin.learn_one(X[i], y[i])
            report = learner.privacy_report()
            if report["releases"] and report["releases"][-1]["round"] == learner.n_seen:
                r = report["releases"][-1]
                print(f"record {learner.n_seen:>5}: private AUC {roc_auc(y[held], learner.decision_function(X[held])):.3f}"
                      f" | non-private {roc_auc(y[held], twin.decision_function(X[held])):.3f}"
                      f" | ρ this release {r['rho']:.4f}, ε spent {report['epsilon_spent']:.3f}")


if __name__ == "__main__":
    main()
