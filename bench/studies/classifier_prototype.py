"""Prototype measurements of the calibrated discriminant classifier on released class statistics (issue 23).

``OnPairStats`` / ``OffPairStats`` run as they are; every prediction is post-processing of
``class_statistics()`` of the current release by :func:`onpair.statistics.discriminant.linear_discriminant`.
No river wrapper is involved.

Commands (``--write`` also replaces the command's section of bench/studies/results/classifier_prototype.md):

* ``defaults``: the ridge factor, the cap of the calibration's ridge-undoing factor, the priors' noise factor,
  the covariance model and the pooling, against the default, on synthetic streams only (river's
  ``Hyperplane`` and ``SEA`` with seed 100, three Gaussian streams), progressive, ε = 1, 4 and non-private;
* ``targets``: issue 23's targets on river's Phishing, two synthetic river streams (``Hyperplane`` and ``SEA``,
  seed 42, 10,000 records) and ImageSegments, beside river's ``StandardScaler | LogisticRegression``;
* ``timing``: the cost of the decode, the model and the posterior per record, relative to ``learn_one``;
* ``diagnose``: for the missed targets, the same classifier with one release's noise at every record
  (mechanism or classifier?).

Run: ``OPENBLAS_NUM_THREADS=1 ONPAIR_DATA=/work/shared/datasets .venv/bin/python bench/studies/classifier_prototype.py
targets [--quick] [--write]`` (``targets`` about 20 minutes, ``defaults`` 10, ``diagnose`` 15 on a shared
two-core machine).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: streams
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench: its shared modules

from onpair import FeatureBounds, OffPairStats, OnPairStats  # noqa: E402
from onpair.statistics._kernels import statistics_total  # noqa: E402
from onpair.statistics.discriminant import linear_discriminant, log_softmax  # noqa: E402
from onpair.statistics.model import class_statistics  # noqa: E402
from shared import gaussian_classes, river_stream, scores  # noqa: E402
from onpair.evaluation import roc_auc  # noqa: E402
from onpair.privacy.gaussian import gaussian_sigma  # noqa: E402
from onpair.privacy.statistics_sensitivity import statistics_sensitivity  # noqa: E402

DELTA = 1e-5
WEIGHTS = (0.8, 1.0, 0.6)


# -- streams ------------------------------------------------------------------------------------------
# -- progressive evaluation ---------------------------------------------------------------------------
def progressive(X, y, bounds, classes, epsilon, variants, mechanism="toeplitz", seed=0):
    """Predict then learn, one release per record: ``{variant: P}`` with P (n, C) the probabilities of each
    record from the release before it. ``epsilon`` None is the non-private twin. ``variants`` maps a name to
    the keyword arguments of :func:`linear_discriminant`."""
    n, d = X.shape
    binary = tuple(classes) == (0, 1)
    learner = OnPairStats(epsilon=1.0 if epsilon is None else epsilon, delta=DELTA, bounds=bounds, n_features=d,
                          mechanism=mechanism, private=epsilon is not None, seed=seed,
                          **({} if binary else {"task": "metric", "classes": list(classes)}))
    code = {c: i for i, c in enumerate(classes)}
    Z, _ = FeatureBounds(*bounds).transform(X)
    out = {name: np.empty((n, len(classes))) for name in variants}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping warnings (counted by the learner)
        for t in range(n):
            stats = learner.class_statistics()
            for name, kwargs in variants.items():
                model = kwargs(stats) if callable(kwargs) else linear_discriminant(stats, **kwargs)
                out[name][t] = model.predict_proba(Z[t:t + 1])[0]
            learner.learn_one(X[t], int(y[t]) if binary else y[t])
    codes = np.array([code[v] for v in y.tolist()])
    return out, codes


def river_progressive(X, y, multiclass=False):
    """river's ``StandardScaler | LogisticRegression`` (one-vs-rest for several classes), predict then learn:
    P (n, C) over the sorted classes."""
    from river import linear_model, multiclass as mc, preprocessing

    classes = sorted(set(y.tolist()))
    inner = mc.OneVsRestClassifier(linear_model.LogisticRegression()) if multiclass else linear_model.LogisticRegression()
    model = preprocessing.StandardScaler() | inner
    P = np.empty((len(y), len(classes)))
    for t in range(len(y)):
        x = {k: float(v) for k, v in enumerate(X[t])}
        proba = model.predict_proba_one(x)
        total = sum(proba.get(c, 0.0) for c in classes)
        P[t] = [proba.get(c, 0.0) / total if total > 0 else 1.0 / len(classes) for c in classes]
        label = y[t] if multiclass else bool(y[t])
        model.learn_one(x, label)
    return P


# -- offline ------------------------------------------------------------------------------------------
def offline_release(Z, codes, C, epsilon, rng):
    """One Gaussian release of the class statistics of mapped records (OffPairStats' mechanism): the decoded
    ClassStatistics."""
    total = statistics_total(Z, codes, C, WEIGHTS)
    if epsilon is None:
        return class_statistics(total, C, Z.shape[1], WEIGHTS, 0.0)
    sigma = gaussian_sigma(statistics_sensitivity(*WEIGHTS), epsilon, DELTA, method="analytic")
    return class_statistics(total + sigma * rng.standard_normal(total.size), C, Z.shape[1], WEIGHTS, sigma ** 2)


def _row(name, result):
    return f"| {name} | " + " | ".join(f"{result[k]:.3f}" if k in result else "" for k in
                                       ("accuracy", "auc", "rocauc", "logloss")) + " |"


def unbalanced_binary(seed, n, d=6, positive=0.3):
    """Two Gaussian classes of unequal covariances and 30 % positives: where count-pooled (LDA) and equally
    pooled (pairwise square loss) covariances differ."""
    rng = np.random.default_rng(seed)
    A = [rng.standard_normal((d, d)) * 0.4 + np.eye(d) * s for s in (1.0, 1.8)]
    direction = rng.standard_normal(d)
    y = (rng.random(n) < positive).astype(int)
    X = np.einsum("nij,nj->ni", np.stack(A)[y], rng.standard_normal((n, d))) + np.outer(y - 0.5, 1.5 * direction)
    half = 3.0 * float(max(np.sqrt((a ** 2).sum(axis=1)).max() for a in A)) + float(np.abs(direction).max())
    return X, y, (-half, half), (0, 1)


def defaults(quick: bool):
    """The grid the defaults were chosen on: synthetic streams only (seeds differ from the targets')."""
    n = 1500 if quick else 3000
    streams = {
        "Hyperplane (seed 100, d = 10)": river_stream("hyperplane", n, seed=100),
        "SEA (seed 100, d = 3)": river_stream("sea", n, seed=100),
        "Gaussian, 4 classes, d = 10": gaussian_classes(100, n, 10, 4),
        "Gaussian, 3 classes, d = 5": gaussian_classes(101, n, 5, 3, separation=0.7),
        "Gaussian, unbalanced, unequal covariances, d = 6": unbalanced_binary(102, n),
    }
    variants = {"default (auto, ridge factor 2, undo cap 10, prior noise factor 4)": {}}
    for covariance in ("full", "diagonal"):
        variants[f"covariance={covariance}"] = {"covariance": covariance}
    variants["ridge_factor=1"] = {"ridge_factor": 1.0}
    variants["ridge_factor=4"] = {"ridge_factor": 4.0}
    variants["max_undo=4"] = {"max_undo": 4.0}
    variants["max_undo=1 (no undoing of the ridge)"] = {"max_undo": 1.0}
    variants["prior_noise_factor=1 (James–Stein priors)"] = {"prior_noise_factor": 1.0}
    variants["equal priors"] = {"prior_noise_factor": 1e12}
    variants["pooling=equal"] = {"pooling": "equal"}
    variants["calibrate=False (plain LDA)"] = {"calibrate": False}
    print(f"Progressive (predict, then "
          f"learn), {n} records, `OnPairStats` with its default mechanism (banded Toeplitz, band 64), δ = {DELTA:g}, "
          f"weights {WEIGHTS}, noise seed 1.\n")
    for (name, (X, y, bounds, classes)), epsilon in itertools.product(streams.items(), (1.0, 4.0, None)):
        started = time.time()
        P, codes = progressive(X, y, bounds, classes, epsilon, variants, seed=1)
        print(f"\n### {name}, bounds {bounds[0]:g}..{bounds[1]:g}, ε = {epsilon if epsilon else 'non-private'} "
              f"({time.time() - started:.0f} s)\n\n| variant | accuracy | AUC | river ROCAUC | log-loss |\n|---|---|---|---|---|")
        for variant in variants:
            print(_row(variant, scores(P[variant], codes)))
        sys.stdout.flush()


@contextlib.contextmanager
def captured_releases():
    """Record every ClassStatistics that OffPairStats decodes from its release (the estimator runs as it is; the
    decoded statistics are what it computes its own model from)."""
    from onpair.statistics import offline as module

    original, seen = module.class_statistics, []

    def recording(*args, **kwargs):
        seen.append(original(*args, **kwargs))
        return seen[-1]

    module.class_statistics = recording
    try:
        yield seen
    finally:
        module.class_statistics = original


def progressive_with_square(X, y, bounds, epsilon, mechanism, seed):
    """The discriminant posterior and, beside it, today's pairwise square model's score wᵀz (the current river
    default's ranking), both from the release before each record (binary streams)."""
    n, d = X.shape
    learner = OnPairStats(epsilon=1.0 if epsilon is None else epsilon, delta=DELTA, bounds=bounds, n_features=d,
                          mechanism=mechanism, private=epsilon is not None, seed=seed)
    Z, _ = FeatureBounds(*bounds).transform(X)
    P, square = np.empty((n, 2)), np.empty(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(n):
            P[t] = linear_discriminant(learner.class_statistics()).predict_proba(Z[t:t + 1])[0]
            square[t] = float(Z[t] @ learner.model)
            learner.learn_one(X[t], int(y[t]))
    return P, square


def targets(quick: bool):
    from streams.image_segments import CLASSES, load_image_segments

    n_synthetic = 2000 if quick else 10_000
    epsilons = (1.0, 4.0) if quick else (0.5, 1.0, 2.0, 4.0)
    print(f"δ = {DELTA:g}, weights "
          f"{WEIGHTS}, `OnPairStats` noise seed 1, predict then learn (one release per record). Exact AUC of the "
          "progressive P(positive); river's `ROCAUC()` (10 thresholds) fed the same probabilities; \"square AUC\": the "
          "exact AUC of today's pairwise square model's scores from the same releases.\n")
    binary = {
        "Phishing (river, 1,250 records, d = 9, bounds 0..1)": river_stream("phishing", 1250, seed=0),
        f"Hyperplane (river, seed 42, {n_synthetic:,} records, d = 10, noise 5 %, no drift, bounds 0..1)":
            river_stream("hyperplane", n_synthetic, seed=42),
        f"SEA (river, variant 0, noise 10 %, seed 42, {n_synthetic:,} records, d = 3, bounds 0..10)":
            river_stream("sea", n_synthetic, seed=42),
    }
    for name, (X, y, bounds, _) in binary.items():
        print(f"\n### {name}\n\n| model | ε | mechanism | accuracy | AUC | river ROCAUC | ROCAUC − AUC | square AUC |"
              "\n|---|---|---|---|---|---|---|---|")
        for epsilon, mechanism in [(None, "exact")] + [(e, m) for e in epsilons for m in ("toeplitz", "epochs")]:
            P, square = progressive_with_square(X, y, bounds, epsilon, "toeplitz" if mechanism == "exact" else mechanism,
                                                seed=1)
            r = scores(P, y)
            print(f"| discriminant | {epsilon if epsilon else 'non-private'} | {mechanism} | {r['accuracy']:.3f} | "
                  f"{r['auc']:.3f} | {r['rocauc']:.3f} | {r['rocauc'] - r['auc']:+.3f} | {roc_auc(y, square):.3f} |")
            sys.stdout.flush()
        r = scores(river_progressive(X, y), y)
        print(f"| river `StandardScaler \\| LogisticRegression` | non-private | | {r['accuracy']:.3f} | {r['auc']:.3f} | "
              f"{r['rocauc']:.3f} | {r['rocauc'] - r['auc']:+.3f} | |")

    X, labels, (lower, upper) = load_image_segments()
    bounds = (lower, upper)
    codes = np.array([CLASSES.index(v) for v in labels.tolist()])
    print("\n### ImageSegments (river, 2,310 records, d = 18, 7 classes, the documented bounds of "
          "streams/image_segments.py), progressive\n\n| model | ε | mechanism | accuracy | log-loss |\n|---|---|---|---|---|")
    for epsilon, mechanism in [(None, "exact")] + [(e, m) for e in (1.0, 4.0) for m in ("toeplitz", "epochs")]:
        P, _ = progressive(X, codes, bounds, tuple(range(len(CLASSES))), epsilon, {"default": {}},
                           mechanism="toeplitz" if mechanism == "exact" else mechanism, seed=1)
        r = scores(P["default"], codes)
        print(f"| discriminant | {epsilon if epsilon else 'non-private'} | {mechanism} | {r['accuracy']:.3f} | "
              f"{r['logloss']:.3f} |")
        sys.stdout.flush()
    r = scores(river_progressive(X, codes, multiclass=True), codes)
    print(f"| river `StandardScaler \\| OneVsRestClassifier(LogisticRegression)` | non-private | | {r['accuracy']:.3f} | "
          f"{r['logloss']:.3f} |")

    print("\n### ImageSegments, offline: one release (`OffPairStats(task=\"metric\")`), 70/30 split, 10 splits\n\n"
          "| model | ε | accuracy (mean ± sd over splits) |\n|---|---|---|")
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import train_test_split

    results = {}
    for split in range(3 if quick else 10):
        train, test = train_test_split(np.arange(len(codes)), test_size=0.3, random_state=split, stratify=codes)
        Z_test, _ = FeatureBounds(lower, upper).transform(X[test])
        for epsilon in (1.0, 4.0, None):
            with captured_releases() as seen, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                OffPairStats(epsilon=1.0 if epsilon is None else epsilon, delta=DELTA, task="metric",
                             classes=list(range(len(CLASSES))), bounds=bounds, private=epsilon is not None,
                             random_state=split).fit(X[train], codes[train])
            for name, kwargs in {"discriminant (default)": {}, "discriminant, covariance=diagonal":
                                 {"covariance": "diagonal"}}.items():
                P = linear_discriminant(seen[-1], **kwargs).predict_proba(Z_test)
                results.setdefault((name, epsilon), []).append(float(np.mean(P.argmax(axis=1) == codes[test])))
        sk = LinearDiscriminantAnalysis().fit(X[train], codes[train])
        results.setdefault(("scikit-learn `LinearDiscriminantAnalysis` (raw features)", None), []).append(
            float(np.mean(sk.predict(X[test]) == codes[test])))
    for (name, epsilon), values in results.items():
        print(f"| {name} | {epsilon if epsilon else 'non-private'} | {np.mean(values):.3f} ± {np.std(values):.3f} |")


def timing(quick: bool):
    """Is the posterior a hot path? Per record of a progressive run: ``learn_one``, the decode
    (``class_statistics()``), the model (``linear_discriminant``) and the posterior of one record
    (``predict_proba``), as ratios to ``learn_one`` in the same process (run with OPENBLAS_NUM_THREADS=1 on a
    shared machine)."""
    print("\n### Cost per record, relative to `OnPairStats.learn_one` (same process)\n\n"
          "| d | C | class_statistics() | linear_discriminant() | one record's posterior, NumPy "
          "(`decision_function` + log-softmax) | one record's posterior, compiled (`log_proba_one`) |\n|---|---|---|---|---|---|")
    repeats = 20 if quick else 100
    for d, C in [(10, 2), (50, 2), (100, 2), (100, 7)]:
        kwargs = {} if C == 2 else {"task": "metric", "classes": list(range(C))}
        learner = OnPairStats(epsilon=1.0, bounds=(0, 1), n_features=d, seed=0, **kwargs)
        rng = np.random.default_rng(0)
        X, y = rng.random((100, d)), rng.integers(0, C, 100)
        for t in range(100):
            learner.learn_one(X[t], int(y[t]))

        def clock(step, times=repeats):
            best = math.inf
            for _ in range(5):  # the best of five rounds: the least disturbed by other processes
                started = time.perf_counter()
                for t in range(times):
                    step(t)
                best = min(best, (time.perf_counter() - started) / times)
            return best

        X = rng.random((100 + 10 * 20 * repeats, d))
        y = rng.integers(0, C, X.shape[0])
        position = iter(range(100, X.shape[0]))

        def learn_next(t):
            i = next(position)
            learner.learn_one(X[i], int(y[i]))

        learn = clock(learn_next, 10 * repeats)
        decode = clock(lambda t: (learn_next(t), learner.class_statistics()), 10 * repeats) - learn
        stats = learner.class_statistics()
        fit = clock(lambda t: linear_discriminant(stats))
        model = linear_discriminant(stats)
        one = X[:1]
        z = X[0]
        numpy_path = clock(lambda t: log_softmax(model.decision_function(one)), 10 * repeats)
        compiled = clock(lambda t: model.log_proba_one(z), 10 * repeats)
        print(f"| {d} | {C} | {decode / learn:.2f} | {fit / learn:.2f} | {numpy_path / learn:.3f} | {compiled / learn:.3f} |")


def diagnose(quick: bool):
    """Mechanism or classifier? For the streams whose targets miss, at ε = 1 (and 4 for ImageSegments): the
    progressive accuracy over the whole stream and over its last third; the same classifier fed, at every
    record, the exact prefix statistics plus fresh noise of **one** release's σ (the analytic Gaussian σ of
    (ε, δ) for the whole stream: a diagnostic, not a private mechanism: it is what a continual mechanism
    without any loss against one release would give); and the continual mechanism's noise standard deviation
    at the last record in units of that σ."""
    from streams.image_segments import CLASSES, load_image_segments

    n = 3000 if quick else 10_000
    X, labels, bounds = load_image_segments()
    cases = {"Hyperplane (seed 42)": river_stream("hyperplane", n, seed=42) + (1.0,),
             "SEA (seed 42)": river_stream("sea", n, seed=42) + (1.0,),
             "ImageSegments": (X, np.array([CLASSES.index(v) for v in labels.tolist()]), bounds,
                               tuple(range(len(CLASSES))), 1.0),
             "ImageSegments ": (X, np.array([CLASSES.index(v) for v in labels.tolist()]), bounds,
                                tuple(range(len(CLASSES))), 4.0)}
    print("\n### Mechanism or classifier: progressive accuracy with the mechanism's noise and with one release's noise\n\n"
          "| stream | ε | noise | accuracy (all) | accuracy (last third) | noise sd at the end / one release's σ |\n"
          "|---|---|---|---|---|---|")
    for name, (X, y, bounds, classes, epsilon) in cases.items():
        n_records, d = X.shape
        C = len(classes)
        Z, _ = FeatureBounds(*bounds).transform(X)
        one_sigma = gaussian_sigma(statistics_sensitivity(*WEIGHTS), epsilon, DELTA, method="analytic")
        for mechanism in ("toeplitz", "epochs"):
            P, codes = progressive(X, y, bounds, classes, epsilon, {"default": {}}, mechanism=mechanism, seed=1)
            learner = OnPairStats(epsilon=epsilon, delta=DELTA, bounds=bounds, n_features=d, mechanism=mechanism, seed=1,
                                  **({} if C == 2 else {"task": "metric", "classes": list(classes)}))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # clipping (counted by the learner)
                for t in range(n_records):  # the mechanism's noise at the end (public), replayed
                    learner.learn_one(X[t], int(y[t]) if C == 2 else classes[codes[t]])
            ratio = math.sqrt(learner._stats.noise_variance()) / one_sigma
            correct = P["default"].argmax(axis=1) == codes
            print(f"| {name.strip()} | {epsilon:g} | `{mechanism}` | {correct.mean():.3f} | "
                  f"{correct[2 * n_records // 3:].mean():.3f} | {ratio:.1f} |")
        codes = np.array([classes.index(v) for v in y.tolist()])
        rng = np.random.default_rng(1)
        total = np.zeros(C * (1 + d + d * (d + 1) // 2))
        correct = np.empty(n_records, dtype=bool)
        for t in range(n_records):
            noisy = total + one_sigma * rng.standard_normal(total.size)
            stats = class_statistics(noisy, C, d, WEIGHTS, one_sigma ** 2)
            correct[t] = linear_discriminant(stats).predict_proba(Z[t:t + 1])[0].argmax() == codes[t]
            total += statistics_total(Z[t:t + 1], codes[t:t + 1], C, WEIGHTS)
        print(f"| {name.strip()} | {epsilon:g} | one release's σ at every record (diagnostic) | {correct.mean():.3f} | "
              f"{correct[2 * n_records // 3:].mean():.3f} | 1 |")
        sys.stdout.flush()


#: The section of bench/studies/results/classifier_prototype.md each command writes (with ``--write``).
SECTIONS = {"defaults": "## Discriminant classifier on released statistics: defaults chosen on synthetic streams",
            "targets": "## Discriminant classifier on released statistics: issue 23 targets",
            "timing": "## Discriminant classifier on released statistics: cost per record",
            "diagnose": "## Discriminant classifier on released statistics: mechanism or classifier"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=tuple(SECTIONS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true", help="also write its section of the results file")
    args = parser.parse_args(argv)
    command = {"defaults": defaults, "targets": targets, "timing": timing, "diagnose": diagnose}[args.command]
    print(SECTIONS[args.command] + "\n")
    if not args.write:
        command(args.quick)
        return
    buffer = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            sys.__stdout__.write(text)
            buffer.write(text)
            return len(text)

    with contextlib.redirect_stdout(Tee()):
        command(args.quick)
    from results_file import write_section

    write_section(SECTIONS[args.command], [f"`bench/studies/classifier_prototype.py {args.command}`"
                                           f"{' --quick' if args.quick else ''}, {time.strftime('%Y-%m-%d')}.", "",
                                           *buffer.getvalue().strip("\n").splitlines()])


if __name__ == "__main__":
    main()
