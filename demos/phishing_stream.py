"""Replay river's bundled Phishing stream through the default private learner (`make demo`).

The stream (1,250 web pages, 9 features already encoded in [0, 1] by the data set's documentation, so
the public bounds are the box [0, 1]^9) is shuffled with a public seed; the first 1,000 records are
learned one block at a time, the last 250 are held out. Each time the learner releases a model, the
demo scores the held-out pages with it and prints the AUC; at the end it prints the privacy spent and
what the non-private twin (Pairwise GIGA, same kernel, no noise) would have reached.
"""

import numpy as np
from river import datasets

from onpair import OnPairStrC, PairwiseGIGA
from onpair._progress import ProgressBar
from onpair.metrics import roc_auc

EPSILON, DELTA = 1.0, 1e-5


def main():
    records = list(datasets.Phishing())
    features = list(records[0][0])
    X = np.array([[x[f] for f in features] for x, _ in records], dtype=float)
    y = np.array([bool(label) for _, label in records])
    order = np.random.default_rng(2020).permutation(len(y))  # public shuffle, not data-dependent
    X, y = X[order], y[order]
    X_train, y_train, X_test, y_test = X[:1000], y[:1000], X[1000:], y[1000:]

    learner = OnPairStrC(epsilon=EPSILON, delta=DELTA, bounds=(0.0, 1.0), n_features=len(features),
                         n=len(y_train), seed=None)
    twin = PairwiseGIGA(bounds=(0.0, 1.0), n_features=len(features))
    print(f"Phishing: {len(y_train)} training records streamed, {len(y_test)} held out, d = {len(features)}")
    print(f"Privacy: ({EPSILON}, {DELTA})-DP for the whole stream; releases at rounds 64, 128, 256, 512, 1000\n")
    seen_releases = 0
    lines = []
    with ProgressBar(len(y_train), label="learning") as bar:
        for lo in range(0, len(y_train), 50):
            hi = lo + 50
            learner.learn_many(X_train[lo:hi], y_train[lo:hi])
            twin.learn_many(X_train[lo:hi], y_train[lo:hi])
            releases = learner.privacy_report()["releases"]
            for release in releases[seen_releases:]:
                lines.append(f"  release at round {release['round']:>4}: test AUC "
                             f"{roc_auc(y_test, learner.decision_function(X_test)):.3f} "
                             f"(sensitivity {release['sensitivity']:.4f}, sigma {release['sigma']:.4f})")
            seen_releases = len(releases)
            bar.update(hi - lo, suffix=f"releases: {seen_releases}")
    print("\n".join(lines))
    report = learner.privacy_report()
    print(f"\nPrivate model (last release): test AUC {roc_auc(y_test, learner.decision_function(X_test)):.3f}")
    print(f"Non-private twin (Pairwise GIGA): test AUC {roc_auc(y_test, twin.decision_function(X_test)):.3f}")
    print(f"Privacy spent: rho {report['rho_spent']:.4f} of {report['rho_budget']:.4f} "
          f"-> epsilon {report['epsilon_spent']:.3f} at delta {report['delta']:g} "
          f"({len(report['releases'])} releases, accounting '{report['accounting']}')")


if __name__ == "__main__":
    main()
