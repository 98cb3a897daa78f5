"""A private AUC learner in river: progressive validation on river's Phishing stream, beside river's own model.

Each model sees river's bundled Phishing stream (1,250 web pages, 9 features encoded in [0, 1] by the
data set's documentation, so the public bounds are the box [0, 1]) once, in its own order, through
``river.evaluate.progressive_val_score`` with ``river.metrics.ROCAUC``: every record is first
predicted, then learned. Side by side:

* ``onpair.river.PrivatePairwiseClassifier`` with its default learner (``OnPairStats``: the class
  statistics released after every record, δ = 1e-5) at ε = 1 and ε = 4, for the whole stream, every
  release included;
* its non-private twin (the same learner on the exact statistics: ``learner_params={"private": False}``);
* river's own ``linear_model.LogisticRegression`` (no privacy).

It prints ROC AUC and records per second (prediction, learning and the metric together), then what the
ε = 1 model spent and released. The private models are seeded so that two runs print the same numbers
(seeds are for experiments: anyone who knows one can remove the noise). Run: ``make demo-river`` or
``.venv/bin/python demos/river_pipeline.py`` (``--quick``: the first 300 records only, as CI runs it).
"""

import sys
import time

from river import datasets, evaluate, linear_model, metrics

from onpair.river import PrivatePairwiseClassifier
from streams import PHISHING_FEATURES  # the data set's documented feature names: public

N = 1250  # the Phishing stream's length: public (the data set's documentation says so)
SEED = 0


def private(epsilon):
    return PrivatePairwiseClassifier(epsilon=epsilon, delta=1e-5, bounds=(0.0, 1.0), features=PHISHING_FEATURES,
                                     seed=SEED)


def main(quick=False):
    n = 300 if quick else N
    models = {
        "PrivatePairwiseClassifier, ε = 1": private(1.0),
        "PrivatePairwiseClassifier, ε = 4": private(4.0),
        "non-private twin": PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES,
                                                      learner_params={"private": False}),
        "river LogisticRegression (no privacy)": linear_model.LogisticRegression(),
    }
    warm_up = private(1.0)  # load the compiled kernels before timing anything
    for x, y in datasets.Phishing().take(5):
        warm_up.learn_one(x, y)
        warm_up.predict_proba_one(x)
    print(f"river's Phishing stream: {n} of {N} records, d = 9; progressive validation (predict, then learn)\n")
    print(f"{'model':40s} {'ROC AUC':>8s} {'records/s':>10s}")
    for name, model in models.items():
        start = time.perf_counter()
        metric = evaluate.progressive_val_score(datasets.Phishing().take(n), model, metrics.ROCAUC())
        rate = n / (time.perf_counter() - start)
        print(f"{name:40s} {metric.get():8.3f} {rate:10,.0f}")

    report = models["PrivatePairwiseClassifier, ε = 1"].privacy_report()
    print(f"\nε = 1 model: {report['releases'][0]['nodes_released']} releases (one per record); spent ρ = "
          f"{report['rho_spent']:.4f} "
          f"of {report['rho_budget']:.4f}, i.e. ε = {report['epsilon_spent']:.3f} at δ = {report['delta']:g}")
    print(f"features (declared, public): {', '.join(report['features'])}")
    print("Predictions use the last released model only; the probabilities are the calibrated posterior of "
          "that release along its score (an increasing map, so ROC AUC reads the model's ranking; shrunk "
          "towards the prior where the release is mostly noise).")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
