"""The learned threshold and public pair weights of the metric losses on a synthetic noise-feature layout.

3 classes whose means differ in 2 informative features, plus 10 pure-noise features (all N(0, 1) noise,
class means on a triangle of side 1 in the informative plane, spread 0.15), 400 training records and
1,000 test records, mapped onto the diameter-2 domain by the **public** box [−4, 4]^12 of the generator.
3-NN test accuracy of: Euclidean distance; :class:`onpair.GradientPerturbedGD` (task="metric", full
batch) with the papers' loss (threshold 1, uniform pairs) and with the learned threshold and balanced
pairs, non-private and private at ε = 1 and 2.5, δ = 1/n. Mean ± standard error over the seeds.
Everything here is synthetic (docs/algorithms.md#metric-threshold).

Run: ``python bench/metric_threshold.py [--seeds K]`` (``make bench``); writes its section of
bench/results.md.
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
from onpair import GradientPerturbedGD  # noqa: E402

SECTION = "## Metric learning: learned threshold and balanced pairs (synthetic noise features)"
N_TRAIN, N_TEST, N_NOISE = 400, 1000, 10
BOUNDS = (-4.0, 4.0)  # public: the generator's range (beyond ±4σ a record is clipped)
#: The offline settings measured (chosen on this synthetic layout only).
BASE = dict(task="metric", constraint="psd", radius=1.0, lam=0.0, bounds=BOUNDS)
CONFIGS = [
    ("papers' loss (b = 1, uniform), non-private, T = 100, η = 10",
     dict(threshold=1.0, pair_weights=None, private=False, T=100, step_sizes=10.0)),
    ("learned b, balanced pairs, non-private, T = 100, η = 10", dict(private=False, T=100, step_sizes=10.0)),
    ("learned b, balanced pairs, ε = 1, T = 10, η = 10", dict(epsilon=1.0, T=10, step_sizes=10.0)),
    ("learned b, balanced pairs, ε = 2.5, T = 10, η = 10", dict(epsilon=2.5, T=10, step_sizes=10.0)),
    ("learned b, balanced pairs, ε = 2.5, T = 30, η = 10", dict(epsilon=2.5, T=30, step_sizes=10.0)),
]


def layout(rng, n):
    y = rng.integers(0, 3, n)
    means = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(0.75)]])
    informative = means[y] + 0.15 * rng.standard_normal((n, 2))
    return np.hstack([informative, rng.standard_normal((n, N_NOISE))]), y


def knn_accuracy(train, y_train, test, y_test, k=3):
    d2 = ((test[:, None, :] - train[None, :, :]) ** 2).sum(-1)
    nearest = np.argsort(d2, axis=1)[:, :k]
    votes = y_train[nearest]
    predicted = np.array([np.bincount(row, minlength=3).argmax() for row in votes])
    return float(np.mean(predicted == y_test))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    results = {"Euclidean 3-NN": []}
    results.update({name: [] for name, _ in CONFIGS})
    start = time.perf_counter()
    for seed in range(args.seeds):
        rng = np.random.default_rng(1000 + seed)
        X, y = layout(rng, N_TRAIN + N_TEST)
        Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
        scale = 2.0 / np.linalg.norm(np.full(X.shape[1], BOUNDS[1] - BOUNDS[0]))  # the diameter-2 box map
        results["Euclidean 3-NN"].append(knn_accuracy((Xtr - BOUNDS[0]) * scale, ytr, (Xte - BOUNDS[0]) * scale, yte))
        for name, config in CONFIGS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # δ = 1/n (the protocol) warns; clipping beyond ±4 is rare
                est = GradientPerturbedGD(**BASE, **config, delta=1.0 / N_TRAIN, classes=[0, 1, 2],
                                          random_state=seed).fit(Xtr, ytr)
            results[name].append(knn_accuracy(est.transform(Xtr), ytr, est.transform(Xte), yte))
    euclid = np.mean(results["Euclidean 3-NN"])
    lines = [f"_{datetime.date.today().isoformat()}, {args.seeds} seeds, {time.perf_counter() - start:.0f} s._", "",
             "| metric | 3-NN accuracy | − Euclidean |", "|---|---|---|"]
    for name, values in results.items():
        values = np.array(values)
        sem = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
        lines.append(f"| {name} | {values.mean():.3f} ± {sem:.3f} | {values.mean() - euclid:+.3f} |")
        print(lines[-1], flush=True)
    from results_file import write_section
    write_section(SECTION, lines)


if __name__ == "__main__":
    main()
