"""River's k-NN with a learned metric, private or not: progressive accuracy where a metric helps and where it cannot.

Two streams, each read once in its own order, each row river's ``neighbors.KNNClassifier`` (k = 5,
exact search over a FIFO window of the last 200 records) scored by progressive validation (every record
is first predicted, then learned) with ``metrics.Accuracy``:

* **noise features** (:mod:`streams.synthetic`, layout "circle": 3 classes carried by 2 features, 10
  pure-noise features, 2,000 records in [−1, 1]^12): Euclidean distance weighs the noise like the
  signal, and a learned metric can do much better;
* **river's ImageSegments** (UCI Image Segmentation: 2,310 regions of 7 outdoor images, 7 classes, 18
  features, bounds from the data set's documentation, :mod:`streams.image_segments`): Euclidean is
  already good, and a metric gains little.

The distances:

* plain Euclidean on the public-bounds map φ (each feature put on a unit range by its public bounds);
* the **discriminant metric** of ``onpair.OnPairStats(task="metric")``, computed from each release of the
  class statistics (by default once per public block of 32, 64, 128, … records; one (ε, δ) for the whole stream), at
  ε = 4 and ε = 1, δ = 1e-5, and its non-private twin (the exact statistics);
* the previous private default, ``onpair.OnPairStrC(task="metric")`` at ε = 1 (Huai's loss, output
  perturbation at rounds 64, 128, …; the stream length is public).

Two ways to plug a learned metric into river, one column each:

* ``metric_distance``: the k-NN's window keeps the raw records and compares them under the model
  visible *now* (``LazySearch(dist_func=metric_distance(transformer))``); the transformer learns
  each record after the prediction;
* pipeline: ``MetricTransformer(learner) | KNNClassifier()`` under ``evaluate.progressive_val_score``;
  the window keeps each record as mapped when it arrived, under the model visible then.

Each private cell is its own mechanism with its own budget (the same seed in both columns: the same
releases). Seeds are for reproducible experiments; deployments draw fresh noise. Bounds and class
domains are public (documentation or the synthetic layout's definition), never read off the records.
Records outside the bounds are clipped; the learners count them (``n_clipped``, curator-only).
Run: ``make demo-knn`` or ``.venv/bin/python demos/river_knn.py``: about 70 s of CPU time (measured
2026-11-28), so a minute or two on an idle machine and up to 9 on a busy one (7 min measured with a load of
15 on 2 cores), most of it in the ``metric_distance`` column (every prediction computes 200 distances in
Python); a terminal shows each cell's progress on stderr. ``--quick`` (``make demo-knn QUICK=1``): the first
400 records of each stream, as CI runs it, about 12 s of CPU time.
"""

import sys
import time

import numpy as np
from river import compose, datasets, evaluate, metrics, neighbors

import onpair
from onpair.core.bounds import FeatureBounds
from onpair.river import MetricTransformer, metric_distance
from streams.image_segments import CLASSES, FEATURES, LOWER, UPPER
from streams.synthetic import BOUNDS as SYNTHETIC_BOUNDS, noise_feature_classes

N = 2310  # records in ImageSegments: public (the data set's documentation)
N_SYNTHETIC = 2000
K, WINDOW = 5, 200  # k-NN: neighbours, FIFO window of exact search
DELTA, SEED = 1e-5, 0
QUICK_RECORDS = 400  # --quick: the first records of each stream only


class Stream:
    """A stream of the demo: its records (dicts), public bounds, feature order and class domain."""

    def __init__(self, name, records, bounds, features, classes):
        self.name, self.records, self.bounds, self.features, self.classes = name, records, bounds, features, classes


def synthetic_stream():
    X, y = noise_feature_classes("circle", N_SYNTHETIC, seed=SEED)
    names = [f"x{i}" for i in range(X.shape[1])]
    records = [(dict(zip(names, row.tolist())), int(label)) for row, label in zip(X, y)]
    return Stream("noise features (synthetic 'circle': 2 informative + 10 noise features, 3 classes)", records,
                  SYNTHETIC_BOUNDS, names, [0, 1, 2])


def image_segments_stream():
    return Stream("river's ImageSegments (18 features, 7 classes)", list(datasets.ImageSegments()), (LOWER, UPPER),
                  list(FEATURES), list(CLASSES))


def knn(dist_func=None):
    return neighbors.KNNClassifier(n_neighbors=K, engine=neighbors.LazySearch(window_size=WINDOW, dist_func=dist_func))


def learner(stream, kind, epsilon):
    """A metric learner over the stream's public bounds and class domain."""
    if kind == "stats":
        return onpair.OnPairStats(task="metric", classes=stream.classes, epsilon=epsilon or 1.0, delta=DELTA,
                                  private=epsilon is not None, bounds=stream.bounds, seed=SEED)
    return onpair.OnPairStrC(task="metric", epsilon=epsilon, delta=DELTA, bounds=stream.bounds,
                             n=len(stream.records), seed=SEED)


def euclidean(stream):
    """Accuracy of the k-NN on φ(x), the public-bounds map (no metric learned)."""
    box = FeatureBounds(*stream.bounds)
    features = stream.features

    def phi(x):
        z, _ = box.transform(np.array([[x.get(f, 0.0) for f in features]]))
        return dict(zip(features, z[0].tolist()))

    return evaluate.progressive_val_score(stream.records, compose.FuncTransformer(phi) | knn(),
                                          metrics.Accuracy()).get()


def progress(records, label):
    """``records``, one by one, with a count on stderr when it is a terminal (cleared at the end)."""
    shown = sys.stderr.isatty()
    for i, record in enumerate(records):
        if shown and i % 50 == 0:
            sys.stderr.write(f"\r  {label}: {i}/{len(records)} records")
            sys.stderr.flush()
        yield record
    if shown:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def with_distance(stream, kind, epsilon):
    """The k-NN keeps raw records and compares them under the metric visible now."""
    transformer = MetricTransformer(learner(stream, kind, epsilon), features=stream.features)
    model = knn(metric_distance(transformer))
    accuracy = metrics.Accuracy()
    for x, y in progress(stream.records, "metric_distance"):
        accuracy.update(y, model.predict_one(x))
        model.learn_one(x, y)
        transformer.learn_one(x, y)
    return accuracy.get(), transformer


def with_pipeline(stream, kind, epsilon):
    """``MetricTransformer | KNNClassifier``: stored records keep the metric of their arrival."""
    transformer = MetricTransformer(learner(stream, kind, epsilon), features=stream.features)
    accuracy = evaluate.progressive_val_score(progress(stream.records, "pipeline"), transformer | knn(),
                                              metrics.Accuracy())
    return accuracy.get(), transformer


ROWS = [("discriminant (OnPairStats), non-private", "stats", None),
        ("discriminant (OnPairStats), ε = 4", "stats", 4.0),
        ("discriminant (OnPairStats), ε = 1", "stats", 1.0),
        ("previous default (OnPairStrC), ε = 1", "strc", 1.0)]


def main(quick=False):
    print(f"KNNClassifier(k = {K}, window {WINDOW}); progressive validation (predict, then learn); δ = {DELTA:g}")
    if not quick:
        print("(about 70 s of CPU time: a minute or two on an idle machine, several on a busy one; --quick: "
              "about 12 s)", flush=True)
    for stream in (synthetic_stream(), image_segments_stream()):
        if quick:
            stream.records = stream.records[:QUICK_RECORDS]
        print(f"\n{stream.name}: {len(stream.records)} records", flush=True)
        print(f"{'distance':40s} {'metric_distance':>15s} {'pipeline':>9s} {'seconds':>8s}")
        start = time.perf_counter()
        print(f"{'Euclidean on the public-bounds map':40s} {'':>15s} {euclidean(stream):9.2%} "
              f"{time.perf_counter() - start:8.1f}", flush=True)
        for name, kind, epsilon in ROWS:
            start = time.perf_counter()
            by_distance, transformer = with_distance(stream, kind, epsilon)
            by_pipeline, _ = with_pipeline(stream, kind, epsilon)
            report = transformer.privacy_report()
            spent = f"  (ε spent {report['epsilon_spent']:.3f})" if report["private"] else ""
            print(f"{name:40s} {by_distance:15.2%} {by_pipeline:9.2%} {time.perf_counter() - start:8.1f}{spent}", flush=True)
    print("\nPredictions use the visible (for private learners: released) metric only; OnPairStats releases "
          "at the end of blocks of 32, 64, 128, … records (its default), OnPairStrC at rounds 64, 128, 256, ….")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
