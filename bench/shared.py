"""Streams, scores and models shared by the benchmarks and the studies (bench/studies/): one definition each.

* :func:`river_stream`, :func:`gaussian_classes`: the classifier benchmarks' streams (``classifier.py``,
  ``classifier_limits.py``, ``studies/classifier_prototype.py``);
* :func:`two_gaussian_classes`: the two-class synthetic generator the defaults were chosen on
  (``studies/statistics_defaults.py``), reused by ``ranges.py`` and ``studies/ranges_prototype.py``;
* :func:`scores`: accuracy, exact AUC, river's ROCAUC and log-loss of predicted probabilities;
* :func:`one_vs_rest_models`, :func:`ovr_auc`: one-vs-rest square models from released class statistics.
"""

from __future__ import annotations

import numpy as np

from onpair.evaluation import roc_auc
from onpair.statistics.model import ClassStatistics, auto_ridge, pairwise_square_model


def river_stream(name: str, n: int, seed: int):
    """``(X, y, bounds, classes)`` of a river stream: the records as a float array in a fixed feature order,
    labels, the public bounds (from the generator's definition) and the public class domain."""
    from river import datasets
    from river.datasets import synth

    if name == "phishing":
        data, bounds = datasets.Phishing(), (0.0, 1.0)  # every feature is documented in [0, 1]
    elif name == "hyperplane":
        data, bounds = synth.Hyperplane(seed=seed, n_features=10, noise_percentage=0.05), (0.0, 1.0)  # U[0, 1]
    elif name == "sea":
        data, bounds = synth.SEA(variant=0, noise=0.1, seed=seed), (0.0, 10.0)  # U[0, 10]
    else:
        raise ValueError(name)
    rows, labels = [], []
    for x, y in data.take(n):
        rows.append([float(x[k]) for k in sorted(x)])
        labels.append(int(y))
    return np.array(rows), np.array(labels), bounds, (0, 1)


def gaussian_classes(seed, n, d, C, separation=1.0, correlation=0.5, spread=3.0):
    """C Gaussian classes (shared covariance A·Aᵀ, A = I + correlation·N(0, 1)), class centres N(0, separation²)
    per coordinate, uniform priors; the public box at ``spread`` standard deviations beyond the centres."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d)) * correlation + np.eye(d)
    centres = rng.standard_normal((C, d)) * separation
    y = rng.integers(0, C, n)
    X = rng.standard_normal((n, d)) @ A.T + centres[y]
    half = spread * float(np.sqrt((A ** 2).sum(axis=1)).max()) + float(np.abs(centres).max())
    return X, y, (-half, half), tuple(range(C))


def two_gaussian_classes(seed, d, n, correlation, spread, separation=1.5, positive=0.35):
    """Two Gaussian classes mapped into [0, 1]^d (public box) at ``spread`` standard deviations."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < positive
    mixing = rng.standard_normal((d, d)) * correlation + np.eye(d)
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    Z = rng.standard_normal((n, d)) @ mixing.T + np.outer(np.where(y, 0.5, -0.5) * separation, direction)
    scale = spread * np.sqrt(np.sum(mixing * mixing, axis=1)) + separation / 2
    return np.clip(0.5 + Z / (2 * scale), 0.0, 1.0), np.where(y, 1, -1)


def scores(P, codes):
    """Accuracy, exact AUC of P(class 1) (binary), river's ROCAUC (10 thresholds) on the same probabilities,
    log-loss."""
    from river import metrics

    accuracy = float(np.mean(P.argmax(axis=1) == codes))
    logloss = float(-np.mean(np.log(np.clip(P[np.arange(len(codes)), codes], 1e-15, 1.0))))
    if P.shape[1] != 2:
        return {"accuracy": accuracy, "logloss": logloss}
    rocauc = metrics.ROCAUC()
    for p, c in zip(P[:, 1].tolist(), codes.tolist()):
        rocauc.update(bool(c), {False: 1.0 - p, True: p})
    return {"accuracy": accuracy, "auc": roc_auc(codes, P[:, 1]), "rocauc": rocauc.get(), "logloss": logloss}


def one_vs_rest_models(stats):
    """The square model of each class against the pooled others, from released class statistics
    (post-processing)."""
    counts, means, covs = stats.counts, stats.means, stats.covariances
    models = []
    for c in range(counts.size):
        rest = np.arange(counts.size) != c
        n_rest = counts[rest].sum()
        mean_rest = (counts[rest, None] * means[rest]).sum(axis=0) / n_rest
        second = np.einsum("c,cij->ij", counts[rest], covs[rest] + np.einsum("ci,cj->cij", means[rest], means[rest]))
        cov_rest = second / n_rest - np.outer(mean_rest, mean_rest)
        pair = ClassStatistics(np.array([n_rest, counts[c]]), np.stack([mean_rest, means[c]]),
                               np.stack([cov_rest, covs[c]]), stats.count_sd, stats.sum_sd, stats.moment_sd,
                               stats.count_floor)
        models.append(pairwise_square_model(pair, auto_ridge(pair)))
    return np.array(models)


def ovr_auc(scores, codes, n_classes):
    return float(np.mean([roc_auc(np.where(codes == c, 1, -1), scores[:, c]) for c in range(n_classes)]))
