"""River's k-NN with a learned metric, private or not: progressive accuracy on river's ImageSegments.

river's bundled ``datasets.ImageSegments`` (UCI Image Segmentation: 2,310 3×3 regions of 7 outdoor
images, 7 classes of 330, 18 numeric features) is read once, in its own order. Each row is
river's ``neighbors.KNNClassifier`` (k = 5, exact search over a FIFO window of the last 200 records)
scored by progressive validation (every record is first predicted, then learned) with
``metrics.Accuracy``, under a distance that is

* plain Euclidean on the public-bounds map φ (each feature put on a unit range by its documented
  bounds, nothing learned);
* a metric learned online by ``onpair.PairwiseGIGA(task="metric")``, the non-private baseline;
* a metric learned online and released privately by ``onpair.OnPairStrC(task="metric")`` at ε = 4
  and ε = 1 (δ = 1e-5, for the whole stream and every release; the stream length 2,310 is public).

Two ways to plug a learned metric into river, one column each:

* ``metric_distance``: the k-NN's window keeps the raw records and compares them under the model
  visible *now* (``LazySearch(dist_func=metric_distance(transformer))``); the transformer learns
  each record after the prediction;
* pipeline: ``MetricTransformer(learner) | KNNClassifier()`` under ``evaluate.progressive_val_score``;
  the window keeps each record as mapped when it arrived, under the model visible then.

Each private cell is its own mechanism, learning the stream once with its own budget (the same seed
in both columns: the same releases). Seeds are for reproducible experiments; deployments draw fresh
noise. The learners use their defaults (radius 0.1, λ = "auto", W pulled towards a multiple of the
identity, full history).

Bounds are public, from the data set's documentation (``BOUNDS`` below), never from the records.
Records outside are clipped to the bounds; the learners warn and count them (``n_clipped``, a
curator-only number, printed at the end). Run: ``make demo-knn`` or ``.venv/bin/python
demos/river_knn.py`` (about 30 s).
"""

import math
import time
import warnings

import numpy as np
from river import compose, datasets, evaluate, metrics, neighbors

import onpair
from onpair.bounds import FeatureBounds
from onpair.river import MetricTransformer, metric_distance

N = 2310  # records in the stream: public (the data set's documentation)
K, WINDOW = 5, 200  # k-NN: neighbours, FIFO window of exact search
DELTA, SEED = 1e-5, 0

# Public bounds per feature (river's names and order), from the UCI documentation of the data set
# (segmentation.names: each record describes a 3×3 region of an RGB image). Assumptions are marked.
BOUNDS = {
    # The column / row of the region's centre pixel in the image. The documentation gives no image
    # size; we take 256-pixel images, coordinates 0..255 (assumption).
    "region-centroid-col": (0.0, 255.0),
    "region-centroid-row": (0.0, 255.0),
    # (region-pixel-count, always 9 for a 3×3 region, is not in river's copy.)
    # Short-line densities (lines of length 5 of low / high contrast through the region): densities,
    # fractions in [0, 1].
    "short-line-density-5": (0.0, 1.0),
    "short-line-density-2": (0.0, 1.0),
    # Mean and standard deviation of the 6 contrasts of horizontally (vedge) / vertically (hedge)
    # adjacent pixels. A contrast of two 8-bit intensities lies in [0, 255] (assumption: 0–255
    # channels); a standard deviation of values in [0, 255] is at most half the range, 127.5.
    "vedge-mean": (0.0, 255.0),
    "vegde-sd": (0.0, 127.5),  # sic: river's (and UCI's) spelling
    "hedge-mean": (0.0, 255.0),
    "hedge-sd": (0.0, 127.5),
    # Region means of (R + G + B)/3 and of R, B, G: intensities in [0, 255].
    "intensity-mean": (0.0, 255.0),
    "rawred-mean": (0.0, 255.0),
    "rawblue-mean": (0.0, 255.0),
    "rawgreen-mean": (0.0, 255.0),
    # Excess red 2R − (G + B), excess blue 2B − (G + R), excess green 2G − (R + B): [−510, 510].
    "exred-mean": (-510.0, 510.0),
    "exblue-mean": (-510.0, 510.0),
    "exgreen-mean": (-510.0, 510.0),
    # Foley & van Dam's HSV transform of RGB: value = max(R, G, B) in [0, 255], saturation
    # = (max − min)/max in [0, 1], hue an angle, which the data set stores in radians: [−π, π].
    "value-mean": (0.0, 255.0),
    "saturation-mean": (0.0, 1.0),
    "hue-mean": (-math.pi, math.pi),
}
FEATURES = list(BOUNDS)
LOWER = np.array([BOUNDS[f][0] for f in FEATURES])
UPPER = np.array([BOUNDS[f][1] for f in FEATURES])


def knn(dist_func=None):
    return neighbors.KNNClassifier(n_neighbors=K, engine=neighbors.LazySearch(window_size=WINDOW, dist_func=dist_func))


def learner(epsilon):
    """A metric learner over the public bounds: the non-private baseline (ε = None) or OnPairStrC."""
    if epsilon is None:
        return onpair.PairwiseGIGA(task="metric", bounds=(LOWER, UPPER))
    return onpair.OnPairStrC(task="metric", epsilon=epsilon, delta=DELTA, bounds=(LOWER, UPPER), n=N, seed=SEED)


def euclidean():
    """Accuracy of the k-NN on φ(x), the public-bounds map (no metric learned)."""
    box = FeatureBounds(LOWER, UPPER)

    def phi(x):
        z, _ = box.transform(np.array([[x.get(f, 0.0) for f in FEATURES]]))
        return dict(zip(FEATURES, z[0].tolist()))

    return evaluate.progressive_val_score(datasets.ImageSegments(), compose.FuncTransformer(phi) | knn(),
                                          metrics.Accuracy()).get()


def with_distance(epsilon):
    """The k-NN keeps raw records and compares them under the metric visible now."""
    transformer = MetricTransformer(learner(epsilon), features=FEATURES)
    model = knn(metric_distance(transformer))
    accuracy = metrics.Accuracy()
    for x, y in datasets.ImageSegments():
        accuracy.update(y, model.predict_one(x))
        model.learn_one(x, y)
        transformer.learn_one(x, y)
    return accuracy.get(), transformer


def with_pipeline(epsilon):
    """``MetricTransformer | KNNClassifier``: stored records keep the metric of their arrival."""
    transformer = MetricTransformer(learner(epsilon), features=FEATURES)
    accuracy = evaluate.progressive_val_score(datasets.ImageSegments(), transformer | knn(), metrics.Accuracy())
    return accuracy.get(), transformer


def main():
    # The learners warn once each about clipped records; the counts are printed below instead.
    warnings.filterwarnings("ignore", message="records lay outside the declared feature bounds")
    print(f"river's ImageSegments: {N} records, d = {len(FEATURES)}, 7 classes; KNNClassifier(k = {K}, "
          f"window {WINDOW}); progressive validation (predict, then learn)\n")
    print(f"{'distance':34s} {'metric_distance':>15s} {'pipeline':>9s} {'seconds':>8s}")
    start = time.perf_counter()
    print(f"{'Euclidean on the public-bounds map':34s} {'':>15s} {euclidean():9.2%} {time.perf_counter() - start:8.1f}")
    reports = {}
    for name, epsilon in [("learned, non-private (GIGA)", None), ("learned, private ε = 4", 4.0),
                          ("learned, private ε = 1", 1.0)]:
        start = time.perf_counter()
        by_distance, transformer = with_distance(epsilon)
        by_pipeline, _ = with_pipeline(epsilon)
        print(f"{name:34s} {by_distance:15.2%} {by_pipeline:9.2%} {time.perf_counter() - start:8.1f}")
        reports[name] = transformer.privacy_report()

    print()
    for name, report in reports.items():
        line = f"{name}: {report['n_clipped']} records clipped to the public bounds (curator-only count)"
        if report["private"]:
            line += (f"; {len(report['releases'])} releases (last at round {report['releases'][-1]['round']}), "
                     f"ε spent {report['epsilon_spent']:.3f} at δ = {report['delta']:g}")
        print(line)
    print("Predictions use the visible (for private learners: last released) metric only.")


if __name__ == "__main__":
    main()
