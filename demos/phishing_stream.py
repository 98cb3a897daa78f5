"""Replay river's bundled Phishing stream through the default private learner (`make demo`).

The stream (1,250 web pages, 9 features already encoded in [0, 1] by the data set's documentation, so
the public bounds are the box [0, 1]^9) is shuffled with a public seed; the first 1,000 records are
learned in blocks of 50, the last 250 are held out. The default learner, OnPairStats, releases the
class statistics after every record, so a private model exists at every round: the demo scores the
held-out pages with it at rounds 50, 100, 200, 400 and 1,000, beside its non-private twin (the same
model on the exact statistics), then prints the privacy spent. The first few dozen records give a
private model that is mostly noise (a held-out AUC near 0.5): its report says so (``noise_dominated``).
The noise is seeded so that two runs print the same numbers (seeds are for experiments: anyone who
knows one can remove the noise). Run: ``make demo`` or ``.venv/bin/python demos/phishing_stream.py``
(``--quick``: the first 200 training records, as CI runs it).
"""

import sys

import numpy as np
from river import datasets

from onpair import OnPairStats
from onpair.core._progress import ProgressBar
from onpair.evaluation import roc_auc
from streams import PHISHING_FEATURES  # the data set's documented feature names: public

EPSILON, DELTA, SEED = 1.0, 1e-5, 0
CHECKPOINTS = (50, 100, 200, 400, 1000)
QUICK_RECORDS = 200  # --quick: the training records learned


def main(quick=False):
    records = list(datasets.Phishing())
    features = list(PHISHING_FEATURES)
    X = np.array([[x[f] for f in features] for x, _ in records], dtype=float)
    y = np.array([bool(label) for _, label in records])
    order = np.random.default_rng(2020).permutation(len(y))  # public shuffle, not data-dependent
    X, y = X[order], y[order]
    X_train, y_train, X_test, y_test = X[:1000], y[:1000], X[1000:], y[1000:]
    if quick:
        X_train, y_train = X_train[:QUICK_RECORDS], y_train[:QUICK_RECORDS]
    checkpoints = [c for c in CHECKPOINTS if c <= len(y_train)]

    learners = {
        "OnPairStats (default)": OnPairStats(epsilon=EPSILON, delta=DELTA, bounds=(0.0, 1.0), seed=SEED),
        "non-private twin": OnPairStats(private=False, bounds=(0.0, 1.0)),
    }
    print(f"Phishing: {len(y_train)} training records streamed, {len(y_test)} held out, d = {len(features)}")
    print(f"Privacy: ({EPSILON}, {DELTA})-DP for the whole stream, every release included\n")
    rows = {name: [] for name in learners}
    with ProgressBar(len(y_train), label="learning") as bar:
        for lo in range(0, len(y_train), 50):
            hi = lo + 50
            for name, learner in learners.items():
                learner.learn_many(X_train[lo:hi], y_train[lo:hi])
                if hi in checkpoints:
                    rows[name].append(roc_auc(y_test, learner.decision_function(X_test)))
            bar.update(hi - lo)
    print("held-out AUC after " + ", ".join(map(str, checkpoints)) + " records")
    for name, values in rows.items():
        print(f"  {name:26s} " + "  ".join(f"{v:.3f}" for v in values))
    report = learners["OnPairStats (default)"].privacy_report()
    print(f"\nOnPairStats: {report['releases'][0]['nodes_released']} releases (one per record), rho "
          f"{report['rho_spent']:.4f} of {report['rho_budget']:.4f} -> epsilon {report['epsilon_spent']:.3f} at "
          f"delta {report['delta']:g} (accounting '{report['accounting']}'); the model is post-processing of "
          "the latest release.")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
