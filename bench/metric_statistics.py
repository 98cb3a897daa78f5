"""Metrics from released class statistics (the discriminant metric): does a private metric beat Euclidean?

Three tables, written to bench/results/metric_statistics.md:

1. **Synthetic noise-feature layouts** (:mod:`streams.synthetic`: a few informative features, many
   pure-noise ones; 400 training and 1,000 test records, 10 seeds, δ = 1/n_train): test 3-NN accuracy
   with plain Euclidean distance on the public-bounds map, scikit-learn's NCA (non-private reference),
   the discriminant metric of OffPairStats (non-private twin, ε = 1, ε = 2.5), the previous metric model
   of the statistics learners (``"whitening"``, the inverse pooled within-class covariance), OnPairStats
   (the metric released after the last record of the stream: with the default release, since issue 34 the block
   release, whose last release describes the records of the last completed block; and with ``mechanism="blt"``) and the gradient-based default
   (PairwiseGIGA, non-private). Targets: non-private ≥ Euclidean + 0.30 and private ε = 2.5 ≥
   Euclidean + 0.20.
2. **Defaults** (chosen here, on the synthetic layouts only): the complement weight κ and diagonal
   against full within-class scaling, at ε = 1, 2.5 and without noise.
3. **UCI** (Pima, Retinopathy, WDBC from ``$ONPAIR_DATA`` with their public bounds; river's
   ImageSegments with the bounds of its documentation, :mod:`streams.image_segments`): 20 random 80/20
   splits, δ = 1/n_train, 3-NN accuracy of the private discriminant metric at ε = 0.5 / 1.5 / 2.5 beside
   Euclidean, NCA and the non-private twin, ± the standard error over splits.

Run: ``.venv/bin/python bench/metric_statistics.py [--seeds 10] [--splits 20] [--no-write]``.
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from onpair import OffPairStats, OnPairStats, PairwiseGIGA  # noqa: E402
from onpair.core.bounds import FeatureBounds  # noqa: E402
from onpair.statistics.model import between_noise_level, class_statistics, discriminant_metric, psd_projection  # noqa: E402,E501
from onpair.core.matrix_geometry import metric_factor  # noqa: E402
from onpair.evaluation import knn_accuracy  # noqa: E402
from onpair.privacy.gaussian import gaussian_sigma  # noqa: E402
from onpair.statistics._kernels import statistics_rows  # noqa: E402
from onpair.statistics.online import DEFAULT_WEIGHTS, check_weights  # noqa: E402
from streams.synthetic import BOUNDS, LAYOUTS, noise_feature_classes  # noqa: E402
from quick import add_quick, apply_quick  # noqa: E402

try:  # a non-private reference row only; scikit-learn is a test extra
    from sklearn.neighbors import NeighborhoodComponentsAnalysis
except ImportError:  # pragma: no cover
    NeighborhoodComponentsAnalysis = None

SYNTHETIC_SECTION = "## Discriminant metric from released statistics: synthetic noise features"
DEFAULTS_SECTION = "## Discriminant metric: defaults chosen on the synthetic layouts"
UCI_SECTION = "## Discriminant metric from released statistics: UCI 3-NN accuracy"
N_TRAIN, N_TEST, K = 400, 1000, 3
UCI_EPSILONS = (0.5, 1.5, 2.5)


def mean_se(values) -> str:
    v = np.asarray(values, dtype=float)
    se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0
    return f"{v.mean():.3f} ± {se:.3f}"


def accuracy_under(W, Z_train, y_train, Z_test, y_test) -> float:
    L = metric_factor(W)
    return knn_accuracy(Z_train @ L.T, y_train, Z_test @ L.T, y_test, k=K)


def nca_accuracy(Z_train, y_train, Z_test, y_test, seed) -> float:
    nca = NeighborhoodComponentsAnalysis(random_state=seed, max_iter=100).fit(Z_train, y_train)
    return knn_accuracy(nca.transform(Z_train), y_train, nca.transform(Z_test), y_test, k=K)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        # Clipping to the public bounds is counted by the learners, not an error here; δ = 1/n is the
        # convention of the papers' tables (the library warns that δ ≪ 1/n is preferable).
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def synthetic(seeds: int):
    rows: dict[tuple, list] = {}
    for layout in LAYOUTS:
        n_classes = LAYOUTS[layout][0]
        classes = list(range(n_classes))
        for seed in range(seeds):
            X, y = noise_feature_classes(layout, N_TRAIN + N_TEST, seed=[11, seed])
            Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
            box = FeatureBounds(*BOUNDS)
            Ztr, _ = box.transform(Xtr)
            Zte, _ = box.transform(Xte)

            def add(label, value):
                rows.setdefault((layout, label), []).append(value)

            add("Euclidean (public-bounds map)", knn_accuracy(Ztr, ytr, Zte, yte, k=K))
            informative = LAYOUTS[layout][1]
            add("oracle: Euclidean on the informative features only (the ceiling)",
                knn_accuracy(Ztr[:, :informative], ytr, Zte[:, :informative], yte, k=K))
            if NeighborhoodComponentsAnalysis is not None:
                add("NCA (scikit-learn, non-private)", nca_accuracy(Ztr, ytr, Zte, yte, seed))
            twin = OffPairStats(task="metric", classes=classes, bounds=BOUNDS, private=False).fit(Xtr, ytr)
            add("discriminant, non-private twin", knn_accuracy(twin.transform(Xtr), ytr, twin.transform(Xte), yte, k=K))
            giga = quiet(PairwiseGIGA(task="metric", bounds=BOUNDS).learn_many, Xtr, ytr)
            add("PairwiseGIGA (gradient default, non-private)",
                knn_accuracy(giga.transform(Xtr), ytr, giga.transform(Xte), yte, k=K))
            for eps in (1.0, 2.5):
                delta = 1.0 / N_TRAIN
                for kind in ("discriminant", "whitening"):
                    est = quiet(OffPairStats(task="metric", classes=classes, model_type=kind, epsilon=eps, delta=delta,
                                             bounds=BOUNDS, random_state=1000 + seed).fit, Xtr, ytr)
                    add(f"OffPairStats {kind}, ε = {eps:g}",
                        knn_accuracy(est.transform(Xtr), ytr, est.transform(Xte), yte, k=K))
                # the default release (issue 34: blocks, the last completed block's release) and the BLT
                for mechanism, what in (("auto", "the default: blocks"), ("blt", "the BLT")):
                    online = quiet(OnPairStats(task="metric", classes=classes, epsilon=eps, delta=delta, bounds=BOUNDS,
                                               seed=seed, mechanism=mechanism).learn_many, Xtr, ytr)
                    add(f"OnPairStats discriminant (after the stream; {what}), ε = {eps:g}",
                        knn_accuracy(online.transform(Xtr), ytr, online.transform(Xte), yte, k=K))
    return rows


def defaults(seeds: int):
    """κ and diagonal/full scaling on the synthetic layouts, from one release per (layout, seed, ε)."""
    (a, b, m), sensitivity = check_weights(DEFAULT_WEIGHTS)
    results: dict[tuple, list] = {}
    for layout in LAYOUTS:
        n_classes = LAYOUTS[layout][0]
        for seed in range(seeds):
            X, y = noise_feature_classes(layout, N_TRAIN + N_TEST, seed=[12, seed])  # not the table's seeds
            box = FeatureBounds(*BOUNDS)
            Z, _ = box.transform(X)
            Ztr, ytr, Zte, yte = Z[:N_TRAIN], y[:N_TRAIN], Z[N_TRAIN:], y[N_TRAIN:]
            total = statistics_rows(Ztr, ytr, n_classes, (a, b, m)).sum(axis=0)
            noise = np.random.default_rng([seed, 2]).standard_normal(total.size)
            for eps in (None, 0.5, 1.0, 2.5):
                sigma = 0.0 if eps is None else gaussian_sigma(sensitivity, eps, 1.0 / N_TRAIN, method="analytic")
                stats = class_statistics(total + sigma * noise, n_classes, Z.shape[1], (a, b, m), sigma ** 2)
                for kappa in (0.02, 0.05, 0.2, 1.0):
                    W = discriminant_metric(stats, complement=kappa)
                    results.setdefault((eps, "diagonal", kappa), []).append(accuracy_under(W, Ztr, ytr, Zte, yte))
                for floor in (0.0, 1.0):
                    W = discriminant_metric(stats, noise_floor=floor)
                    results.setdefault((eps, f"diagonal, noise floor {floor:g}", 0.05), []).append(
                        accuracy_under(W, Ztr, ytr, Zte, yte))
                full = _full_scaling_metric(stats, 0.05)
                results.setdefault((eps, "full", 0.05), []).append(accuracy_under(full, Ztr, ytr, Zte, yte))
    return results


def _full_scaling_metric(stats, kappa):
    """The alternative of step 1: the full within-class covariance (PSD part + its noise ridge), not its
    diagonal."""
    d = stats.means.shape[1]
    weights = stats.counts / stats.counts.sum()
    pooled = psd_projection(np.tensordot(weights, stats.covariances, axes=1))
    sd = stats.moment_sd * np.sqrt(stats.counts.size) / stats.counts.sum() if np.isfinite(stats.moment_sd) else 0.0
    values, vectors = np.linalg.eigh(pooled + (1e-3 + 2.0 * np.sqrt(d) * sd) * np.eye(d))
    root_inv = (vectors / np.sqrt(values)) @ vectors.T
    centre = weights @ stats.means
    spread = (stats.means - centre) @ root_inv
    between = (spread.T * weights) @ spread
    bv, bvec = np.linalg.eigh(between)
    r = stats.counts.size - 1
    kept, basis = np.maximum(bv[-r:], 0.0), bvec[:, -r:]
    floor = 3.0 * between_noise_level(stats) * float(np.mean(1.0 / values))
    inner = (basis * kept) @ basis.T + max(kappa * kept.mean(), floor) * np.eye(d)
    return root_inv @ inner @ root_inv


def uci(splits: int):
    from streams import load
    from streams.image_segments import CLASSES, load_image_segments

    tables = {}
    for name in ("pima", "retinopathy", "wdbc", "imagesegments"):
        if name == "imagesegments":
            X, y, bounds = load_image_segments()
            classes = list(CLASSES)  # the documented class domain (7 named region types)
        else:
            X, y, spec = load(name)
            bounds, classes = spec.bounds, [-1, 1]
        box = FeatureBounds(*bounds)
        n_total = len(y)
        n_train = int(round(0.8 * n_total))
        delta = 1.0 / n_train
        rows: dict[str, list] = {}
        for split in range(splits):
            order = np.random.default_rng([5, split]).permutation(n_total)
            tr, te = order[:n_train], order[n_train:]
            Ztr, _ = box.transform(X[tr])
            Zte, _ = box.transform(X[te])

            def add(label, value):
                rows.setdefault(label, []).append(value)

            add("Euclidean (public-bounds map)", knn_accuracy(Ztr, y[tr], Zte, y[te], k=K))
            if NeighborhoodComponentsAnalysis is not None:
                add("NCA (non-private)", nca_accuracy(Ztr, y[tr], Zte, y[te], split))
            twin = quiet(OffPairStats(task="metric", classes=classes, bounds=bounds, private=False).fit, X[tr], y[tr])
            add("discriminant, non-private twin",
                knn_accuracy(twin.transform(X[tr]), y[tr], twin.transform(X[te]), y[te], k=K))
            for eps in UCI_EPSILONS:
                est = quiet(OffPairStats(task="metric", classes=classes, epsilon=eps, delta=delta, bounds=bounds,
                                         random_state=3000 + split).fit, X[tr], y[tr])
                add(f"discriminant, ε = {eps:g}",
                    knn_accuracy(est.transform(X[tr]), y[tr], est.transform(X[te]), y[te], k=K))
        tables[name] = (n_train, rows)
    return tables


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--only", choices=("synthetic", "defaults", "uci"), default=None)
    add_quick(parser)
    args = parser.parse_args(argv)
    apply_quick(args, seeds=2, splits=2)  # two: the standard errors need two
    stamp = datetime.date.today().isoformat()

    if args.only in (None, "synthetic"):
        start = time.perf_counter()
        rows = synthetic(args.seeds)
        body = [f"{args.seeds} seeds per layout, {N_TRAIN} training and {N_TEST} test records, δ = 1/{N_TRAIN}, "
                f"3-NN test accuracy (mean ± standard error). Run {stamp}, {time.perf_counter() - start:.0f} s.", ""]
        labels = list(dict.fromkeys(label for _, label in rows))
        body.append("| model | " + " | ".join(LAYOUTS) + " |")
        body.append("|---|" + "---|" * len(LAYOUTS))
        for label in labels:
            body.append(f"| {label} | " + " | ".join(mean_se(rows[(lay, label)]) for lay in LAYOUTS) + " |")
        body.append("")
        for layout in LAYOUTS:
            euclid = np.mean(rows[(layout, "Euclidean (public-bounds map)")])
            twin = np.mean(rows[(layout, "discriminant, non-private twin")])
            private = np.mean(rows[(layout, "OffPairStats discriminant, ε = 2.5")])
            one = np.mean(rows[(layout, "OffPairStats discriminant, ε = 1")])
            body.append(f"- {layout}: non-private − Euclidean = {twin - euclid:+.3f} (target +0.30: "
                        f"{'met' if twin - euclid >= 0.30 else 'missed'}); private ε = 2.5 − Euclidean = "
                        f"{private - euclid:+.3f} (target +0.20: {'met' if private - euclid >= 0.20 else 'missed'}); "
                        f"ε = 1: {one - euclid:+.3f}")
        print("\n".join(body))
        if not args.no_write:
            from results_file import write_section
            write_section(SYNTHETIC_SECTION, body)

    if args.only in (None, "defaults"):
        results = defaults(args.seeds)
        body = ["Mean 3-NN accuracy over the three layouts and "
                f"{args.seeds} seeds (other seeds than the table above), one release per cell. Default: "
                "diagonal scaling, κ = 0.05, noise floor 3 (the floor is the identity part's lower bound in noise levels "
                "of the between-class scatter).", "",
                "| scaling, κ | no noise | ε = 0.5 | ε = 1 | ε = 2.5 |", "|---|---|---|---|---|"]
        cells = [("diagonal", k) for k in (0.02, 0.05, 0.2, 1.0)] + [
            ("diagonal, noise floor 0", 0.05), ("diagonal, noise floor 1", 0.05), ("full", 0.05)]
        for scaling, kappa in cells:
            body.append(f"| {scaling}, {kappa:g} | " + " | ".join(
                f"{np.mean(results[(eps, scaling, kappa)]):.3f}" for eps in (None, 0.5, 1.0, 2.5)) + " |")
        print("\n".join(body))
        if not args.no_write:
            from results_file import write_section
            write_section(DEFAULTS_SECTION, body)

    if args.only in (None, "uci"):
        start = time.perf_counter()
        tables = uci(args.splits)
        body = [f"{args.splits} random 80/20 splits, δ = 1/n_train, 3-NN test accuracy (mean ± standard error), "
                f"OffPairStats(task='metric') with its defaults. Run {stamp}, {time.perf_counter() - start:.0f} s.", ""]
        names = list(tables)
        body.append("| model | " + " | ".join(f"{n} (n_train {tables[n][0]})" for n in names) + " |")
        body.append("|---|" + "---|" * len(names))
        labels = list(dict.fromkeys(label for n in names for label in tables[n][1]))
        for label in labels:
            body.append(f"| {label} | " + " | ".join(mean_se(tables[n][1][label]) for n in names) + " |")
        print("\n".join(body))
        if not args.no_write:
            from results_file import write_section
            write_section(UCI_SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
