"""The fixed cases behind the golden snapshots and the release digests (tests/test_golden.py).

Each case is a learner built from public parameters and a fixed stream. ``tests/data/golden/`` holds,
for each case, a snapshot saved after the first part of its stream (written once by
``python tests/golden_cases.py --write``, before the learners' state moved into state objects) and
``expected.json``: the SHA-256 of what the learner releases after the rest of the stream, recorded
then. The tests load the old snapshots with today's code, continue them, and compare; they also
re-run every case from scratch and compare the digests, so a refactoring that changes one released
bit fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "data", "golden")
N_FIRST = 120
N_TOTAL = 260
DIM = 4


def auc_stream(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(N_TOTAL, DIM))
    X[::17] *= 1.6  # some records outside the box [0, 1]: the clipping path
    y = (X @ np.array([1.0, -0.5, 0.25, 0.0]) + 0.2 * rng.standard_normal(N_TOTAL) > 0.4).astype(int)
    return X, y


def metric_stream(seed: int):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=N_TOTAL)
    X = rng.uniform(0.0, 1.0, size=(N_TOTAL, DIM))
    X[:, 0] = np.clip(0.3 * labels + 0.1 * rng.standard_normal(N_TOTAL) + 0.2, 0.0, 1.0)
    X[::19] *= 1.5
    names = np.array(["low", "mid", "high"], dtype=object)[labels]
    return X, list(names)


def _learner_cases():
    """(name, constructor, kwargs, task) for every storage kind × learner × task."""
    from onpair import OnPairC, OnPairStrC, PairwiseGIGA

    private = dict(epsilon=1.0, delta=1e-5, n=N_TOTAL, release_every=40)
    cases = []
    for task in ("auc", "metric"):
        histories = {"full": None, "fifo": ("fifo", 16), "reservoir": ("reservoir", 16)}
        for kind, buffer in histories.items():
            common = dict(bounds=(0.0, 1.0), buffer=buffer, task=task, seed=11)
            cases.append((f"giga-{task}-{kind}", PairwiseGIGA, common))
            cases.append((f"onpairstrc-{task}-{kind}", OnPairStrC, dict(common, **private)))
            cases.append((f"onpairc-{task}-{kind}", OnPairC, dict(common, **private, c=2.0)))
        if task == "auc":
            common = dict(bounds=(0.0, 1.0), loss="square", seed=11)
            cases.append(("giga-auc-statistics", PairwiseGIGA, common))
            cases.append(("onpairstrc-auc-statistics", OnPairStrC, dict(common, **private)))
            cases.append(("onpairc-auc-statistics", OnPairC, dict(common, **private, c=2.0)))
    # Variants that take other paths: the default doubling schedule and a random centre, paper mode,
    # the norm-bound map, a metric constraint set.
    cases.append(("onpairstrc-auc-doubling-norm", OnPairStrC,
                  dict(norm_bound=1.5, seed=5)))
    cases.append(("onpairc-auc-random-center", OnPairC,
                  dict(bounds=(0.0, 1.0), n=N_TOTAL, c=2.0, center="random", seed=5)))
    cases.append(("onpairstrc-auc-paper", OnPairStrC,
                  dict(bounds=(0.0, 1.0), n=N_TOTAL, mode="paper", lam=5.0, seed=5)))
    cases.append(("onpairstrc-metric-psd-fifo", OnPairStrC,
                  dict(bounds=(0.0, 1.0), n=N_TOTAL, task="metric", constraint="psd", buffer=("fifo", 8),
                       release_every=50, seed=5)))
    # The default learner in its default configuration (added with issue 22, whose snapshots were written
    # while the default mechanism was the banded factorisation: they carry it, and resume with it), and
    # each continual-release mechanism by name.
    from onpair import OnPairStats

    stats = dict(bounds=(0.0, 1.0), seed=11)
    cases.append(("stats-auc-default", OnPairStats, stats))
    cases.append(("stats-metric-default", OnPairStats, dict(stats, task="metric", classes=["low", "mid", "high"])))
    for mechanism in ("toeplitz", "epochs", "tree"):
        cases.append((f"stats-auc-{mechanism}", OnPairStats, dict(stats, mechanism=mechanism)))
    # Decayed statistics (issue 25).
    cases.append(("stats-auc-decayed", OnPairStats, dict(stats, half_life=64)))
    return cases


def learner_cases():
    return [(name, cls, kwargs) for name, cls, kwargs in _learner_cases()]


def stream_for(name):
    return metric_stream(3) if "-metric-" in name else auc_stream(3)


def build(cls, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**kwargs)


def feed(learner, X, y, singles):
    """Feed records: singly (learn_one) over the first half, as one block otherwise (both paths run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if singles:
            for x, label in zip(X, y):
                learner.learn_one(x, label)
        else:
            learner.learn_many(X, y)
    return learner


def visible(learner) -> np.ndarray:
    """What the learner releases: every released model (private) or the iterate (non-private)."""
    if hasattr(learner, "released_models") and type(learner).__name__ != "PairwiseGIGA":
        return np.ascontiguousarray(learner.released_models, dtype=np.float64)
    return np.ascontiguousarray(learner.model, dtype=np.float64)


def digest(array: np.ndarray) -> str:
    array = np.ascontiguousarray(array, dtype=np.float64)
    return hashlib.sha256(repr(array.shape).encode() + array.tobytes()).hexdigest()


def run_case(name, cls, kwargs):
    """The whole stream from scratch: learn_one over the first N_FIRST records, learn_many after."""
    X, y = stream_for(name)
    learner = build(cls, kwargs)
    feed(learner, X[:N_FIRST], y[:N_FIRST], singles=True)
    feed(learner, X[N_FIRST:], y[N_FIRST:], singles=False)
    return learner


def report_fingerprint(learner) -> dict:
    if type(learner).__name__ == "PairwiseGIGA":
        return {"n_seen": learner.n_seen}
    report = learner.privacy_report()
    out = {key: report[key] for key in ("rho_spent", "epsilon_spent", "n_seen", "n_clipped", "sensitivity_now")}
    # The rows gained ``event`` and ``what`` (one shape for every event, issue 21): the numbers recorded
    # before are compared as they were.
    out["releases"] = [{key: row[key] for key in ("round", "sensitivity", "sigma", "rho")} for row in report["releases"]]
    return out


# -- offline estimators and river wrappers ---------------------------------------------------------
def estimator_cases():
    from onpair import GradientPerturbedGD, OffPairC, OffPairStrC, OutputPerturbedSGD

    common = dict(bounds=(0.0, 1.0), random_state=7)
    return [
        ("offpairstrc-auc-last", OffPairStrC, dict(common)),
        ("offpairstrc-auc-average", OffPairStrC, dict(common, output="average")),
        ("offpairstrc-auc-paper", OffPairStrC, dict(common, mode="paper", lam=5.0, output="average")),
        ("offpairstrc-auc-nonprivate", OffPairStrC, dict(common, private=False)),
        ("offpairc-auc-random", OffPairC, dict(common, center="random")),
        ("offpairc-auc-square", OffPairC, dict(common, loss="square")),
        ("offpairstrc-metric", OffPairStrC, dict(common, task="metric")),
        ("offpairc-metric-psd", OffPairC, dict(common, task="metric", constraint="psd")),
        ("gradient-auc", GradientPerturbedGD, dict(common, T=3)),
        # The papers' loss (threshold 1, uniform pair weights): the digest recorded before the threshold
        # existed, unchanged; the default (learned threshold, balanced pairs) has its own, recorded with it.
        ("gradient-metric", GradientPerturbedGD, dict(common, task="metric", T=2, threshold=1.0, pair_weights=None)),
        ("gradient-metric-learned", GradientPerturbedGD, dict(common, task="metric", T=2)),
        ("sgd-auc", OutputPerturbedSGD, dict(common, T=400)),
    ]


def run_estimator(name, cls, kwargs):
    X, y = metric_stream(4) if "-metric" in name else auc_stream(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**kwargs).fit(X, y)
    return est.coef_


def river_classifier_stream():
    X, y = auc_stream(6)
    names = [f"f{k}" for k in range(DIM)]
    return [(dict(zip(names, row.tolist())), bool(label)) for row, label in zip(X, y)]


def river_metric_stream():
    X, y = metric_stream(6)
    names = [f"f{k}" for k in range(DIM)]
    return [(dict(zip(names, row.tolist())), label) for row, label in zip(X, y)]


def river_cases():
    from onpair import OnPairStrC
    from onpair.river import MetricTransformer, PrivatePairwiseClassifier

    return [
        ("river-classifier", lambda: PrivatePairwiseClassifier(learner="onpairstrc", epsilon=1.0, bounds=(0.0, 1.0),
                                                                seed=13, release_every=30)),
        ("river-classifier-giga", lambda: PrivatePairwiseClassifier(learner="giga", bounds=(0.0, 1.0), seed=13)),
        ("river-classifier-stats", lambda: PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), seed=13,
                                                                      features=[f"f{k}" for k in range(DIM)])),
        ("river-metric", lambda: MetricTransformer(OnPairStrC(task="metric", bounds=(0.0, 1.0), n=N_TOTAL,
                                                              release_every=40, buffer=("fifo", 32), seed=13))),
    ]


def river_outputs(name, model, stream):
    """Predictions (classifier) or transformed records (metric) made along the stream, then learned."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in stream:
            if name.startswith("river-metric"):
                out.extend(model.transform_one(x).values())
            else:
                out.append(model.predict_proba_one(x).get(True, 0.5))
            model.learn_one(x, y)
    return np.array(out, dtype=np.float64)


def all_digests() -> dict:
    """Every case run from scratch: {name: sha256 of what it releases}."""
    digests = {}
    for name, cls, kwargs in learner_cases():
        digests[name] = digest(visible(run_case(name, cls, kwargs)))
    for name, cls, kwargs in estimator_cases():
        digests[name] = digest(run_estimator(name, cls, kwargs))
    for name, make in river_cases():
        stream = river_metric_stream() if name.startswith("river-metric") else river_classifier_stream()
        digests[name] = digest(river_outputs(name, make(), stream))
    return digests


def write_golden(only=None) -> None:
    """Write the snapshots and expected.json (run once, before a refactoring; never by the tests). ``only``:
    the names of the cases to write (added to the existing file, every other case left as it was)."""
    import onpair

    if only is None:
        expected = {"digests": all_digests(), "snapshots": {}}
    else:
        with open(os.path.join(GOLDEN, "expected.json")) as handle:
            expected = json.load(handle)
        today = all_digests()
        unknown = set(only) - set(today)
        if unknown:
            sys.exit(f"no such case: {sorted(unknown)}")
        expected["digests"].update({name: today[name] for name in only})
    for name, cls, kwargs in learner_cases():
        if only is not None and name not in only:
            continue
        X, y = stream_for(name)
        learner = feed(build(cls, kwargs), X[:N_FIRST], y[:N_FIRST], singles=True)
        path = os.path.join(GOLDEN, name + ".onpair")
        learner.save(path)
        whole = run_case(name, cls, kwargs)
        expected["snapshots"][name] = {"released": digest(visible(whole)),
                                       "report": json.loads(json.dumps(report_fingerprint(whole)))}
    for name, make in river_cases():
        if only is not None and name not in only:
            continue
        stream = river_metric_stream() if name.startswith("river-metric") else river_classifier_stream()
        model = make()
        first = river_outputs(name, model, stream[:N_FIRST])
        path = os.path.join(GOLDEN, name + ".onpair")
        if name.startswith("river-metric"):
            continue  # MetricTransformer has no save(); its learner's snapshot is covered above
        model.save(path)
        rest = river_outputs(name, make(), stream)  # the uninterrupted run
        expected["snapshots"][name] = {"released": digest(rest[N_FIRST:]), "first": digest(first)}
    with open(os.path.join(GOLDEN, "expected.json"), "w") as handle:
        json.dump(expected, handle, indent=1, sort_keys=True)
    print(f"wrote {len(expected['snapshots'])} snapshots and {len(expected['digests'])} digests to {GOLDEN}",
          f"(onpair {onpair.__version__})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    if sys.argv[1:2] == ["--add"] and len(sys.argv) > 2:
        write_golden(only=sys.argv[2:])  # new cases only: every recorded one stays as it was
    elif sys.argv[1:] == ["--write"]:
        if os.path.isdir(GOLDEN):
            shutil.rmtree(GOLDEN)
        os.makedirs(GOLDEN)
        write_golden()
    else:
        sys.exit("usage: python tests/golden_cases.py --write   (overwrites tests/data/golden/)\n"
                 "       python tests/golden_cases.py --add NAME ...   (writes the named cases only)")
