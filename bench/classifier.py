"""`make bench`: the classifier of the statistics family against issue 23's targets, and the pooled second moment.

Commands (each prints its tables; ``--write`` replaces its section of ``bench/results/classifier.md``):

* ``targets`` (``make bench``): issue 23's targets, each with its number and whether it is met, through the
  public river and scikit-learn classes as a user runs them:
  1. river's ``ROCAUC`` (10 thresholds) against the exact AUC of the same progressive probabilities, for the
     default model (``PrivatePairwiseClassifier``, ε = 1) on Phishing and two synthetic river streams
     (``Hyperplane``, ``SEA``), beside the same model's previous probabilities (1 + s/‖w‖)/2 (at every step
     both rank the records as the released model does, but a progressive AUC pools the scores of every
     step's release, and the two map each release's scores differently, so their exact AUCs differ too);
  2. progressive accuracy at ε = 1 on those two stationary, near-linear synthetic streams of 10,000 records
     with public bounds: ``PrivateClassifier`` and ``PrivatePairwiseClassifier``'s ``predict_one`` against
     their non-private twins and river's ``StandardScaler | LogisticRegression``;
  3. ImageSegments (7 classes, the bounds of ``streams/image_segments.py``): ``PrivateClassifier``
     progressive at ε = 1 and 4, and ``OffPairStats(task="classify")`` on 20 random 70/30 splits at ε = 1 and 4
     (δ = 1/n_train and 1e-5), beside its non-private twin and the nearest private centroid (the class means
     of a release of the same statistics at the same (ε, δ): the classifier without its covariance);
  4. Phishing's progressive AUC at ε = 1 (10 seeds) against the README's 0.86.
* ``pooled``: the classifier's two releases, one pooled second moment or one per class, on synthetic data
  only, **paired**: the pooled moment's noise is the per-class moments' noise summed over the classes and
  divided by √C (the same distribution as its own draw), so that the comparison sees the layouts and not the
  draws: offline (one release, 30 draws, held-out accuracy and log-loss) and online (progressive, the
  default continual mechanism, 3 noise seeds).

Every run prints the release mechanism it used: ``--mechanism NAME`` (any of
``PrefixSumMechanism.options()``; default: what ``OnPairStats``' default "auto" resolves to without ``half_life``
and ``final_share``, "blocks" since issue 34) is passed to every online model through
``learner_params`` and named in the section's heading line, so a run with another default mechanism replaces
the section with numbers that say which mechanism they are. δ = 1e-5 unless said otherwise; weights
(0.8, 1.0, 0.6). Run: ``OPENBLAS_NUM_THREADS=1 ONPAIR_DATA=/work/shared/datasets .venv/bin/python
bench/classifier.py targets [--mechanism NAME] [--quick] [--write]`` (about 20 minutes on a shared two-core
machine; ``pooled`` about 25).
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import itertools
import math
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from shared import gaussian_classes, river_stream, scores  # noqa: E402
from onpair import FeatureBounds, OffPairStats, OnPairStats  # noqa: E402
from onpair.evaluation import roc_auc  # noqa: E402
from onpair.privacy.continual import PrefixSumMechanism  # noqa: E402
from onpair.privacy.conversions import rho_from_dp  # noqa: E402
from onpair.privacy.gaussian import gaussian_sigma  # noqa: E402
from onpair.privacy.statistics_sensitivity import statistics_sensitivity  # noqa: E402
from onpair.statistics._kernels import statistics_rows, statistics_total  # noqa: E402
from onpair.statistics.discriminant import linear_discriminant  # noqa: E402
from onpair.statistics.model import DEFAULT_WEIGHTS, class_statistics  # noqa: E402
from onpair.statistics.online_config import resolve_mechanism  # noqa: E402
from results_file import captured_stdout, write_section  # noqa: E402

DELTA = 1e-5
WEIGHTS = DEFAULT_WEIGHTS
SECTIONS = {
    "targets": "## Classifier (issue 23): targets",
    "pooled": "## Classifier (issue 23): one pooled second moment or one per class",
}


def default_mechanism() -> str:
    """The release mechanism ``OnPairStats`` uses by default on these streams: its signature's default, resolved as
    the learner resolves it ("auto" is no ``PrefixSumMechanism`` option: without ``half_life`` and ``final_share``,
    as every model here, it is "blocks"; :func:`onpair.statistics.online_config.resolve_mechanism`)."""
    return resolve_mechanism(inspect.signature(OnPairStats.__init__).parameters["mechanism"].default, None, 0.0)


def mechanism_name(mechanism: str) -> str:
    """``mechanism`` as the results name it: the option, its class, and whether it is the default."""
    cls = PrefixSumMechanism.for_option(mechanism).__name__
    default = ", what OnPairStats’ default \"auto\" resolves to on these stationary streams"
    return f"`{mechanism}` ({cls}{default if mechanism == default_mechanism() else ''})"


def dicts(X, names=None):
    names = names or [f"x{k}" for k in range(X.shape[1])]
    return [dict(zip(names, row.tolist())) for row in X]


# -- progressive runs through the public river classes -------------------------------------------------------
def river_run(model, records, labels, keys, old_mapping=False):
    """Predict then learn, one record at a time, as ``progressive_val_score`` does: the probabilities of
    ``keys`` (n, C) and the predictions; with ``old_mapping`` also the previous mapping (1 + s/‖w‖)/2 of the
    same released score s (the default learner's cached model: a diagnostic reading private fields)."""
    P = np.empty((len(records), len(keys)))
    predicted, old = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping (counted) and the features=None warning of the river checks
        for t, (x, y) in enumerate(zip(records, labels)):
            proba = model.predict_proba_one(x)
            P[t] = [proba[k] for k in keys]
            predicted.append(model.predict_one(x))
            if old_mapping:
                old.append(_old_probability(model, x))
            model.learn_one(x, y)
    return P, predicted, np.array(old)


def _old_probability(model, x) -> float:
    if model.feature_order is None:
        return 0.5
    view = model._view()
    w, norm = view.model, float(np.sqrt(view.model.dot(view.model)))
    if norm == 0.0:
        return 0.5
    z = model._inner.feature_bounds.map_one(np.array([x[k] for k in model.feature_order]))
    return (1.0 + min(1.0, max(-1.0, float(z.dot(w)) / norm))) / 2.0


def river_roc(p, y) -> float:
    from river import metrics

    metric = metrics.ROCAUC()
    for value, label in zip(p.tolist(), y.tolist()):
        metric.update(bool(label), {False: 1.0 - value, True: value})
    return metric.get()


def river_logistic(records, labels, classes):
    """river's ``StandardScaler | LogisticRegression`` (one-vs-rest for more than two classes), predict then
    learn: the probabilities of ``classes`` (missing keys 0, renormalised) and the predictions."""
    from river import linear_model, multiclass, preprocessing

    inner = linear_model.LogisticRegression() if len(classes) == 2 else \
        multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    model = preprocessing.StandardScaler() | inner
    P = np.empty((len(records), len(classes)))
    predicted = []
    for t, (x, y) in enumerate(zip(records, labels)):
        proba = model.predict_proba_one(x)
        total = sum(proba.get(c, 0.0) for c in classes)
        P[t] = [proba.get(c, 0.0) / total if total > 0 else 1.0 / len(classes) for c in classes]
        predicted.append(model.predict_one(x))
        model.learn_one(x, y)
    return P, predicted


def _mean_sd(values) -> str:
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} ± {values.std(ddof=1):.3f}" if values.size > 1 else f"{values.mean():.3f}"


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


# -- targets -------------------------------------------------------------------------------------------------
def targets(quick: bool, mechanism: str):
    from river import datasets

    from onpair.river import PrivateClassifier, PrivatePairwiseClassifier
    from streams import PHISHING_FEATURES
    from streams.image_segments import CLASSES, FEATURES, LOWER, UPPER, load_image_segments

    n = 2000 if quick else 10_000
    seeds = (0, 1) if quick else (0, 1, 2, 3, 4)
    online = {"mechanism": mechanism}
    print(f"Release mechanism: {mechanism_name(mechanism)}. δ = {DELTA:g}, weights {WEIGHTS}; "
          f"noise seeds {', '.join(map(str, seeds))} unless said otherwise; predict, then learn, one record at a "
          "time.\n")

    phishing = list(datasets.Phishing())
    streams = {"Phishing (1,250 records, d = 9, bounds 0..1)": (
        [dict(x) for x, _ in phishing], np.array([bool(y) for _, y in phishing]), (0.0, 1.0), list(PHISHING_FEATURES))}
    for name, label in (("hyperplane", f"Hyperplane (seed 42, {n:,} records, d = 10, noise 5 %, no drift, bounds 0..1)"),
                        ("sea", f"SEA (variant 0, noise 10 %, seed 42, {n:,} records, d = 3, bounds 0..10)")):
        X, y, bounds, _ = river_stream(name, n, seed=42)
        streams[label] = (dicts(X), y.astype(bool), bounds, [f"x{k}" for k in range(X.shape[1])])

    # 1. and 4. river's ROCAUC against the exact AUC; accuracy (2.) on the synthetic streams
    print("### 1. river's `ROCAUC` against the exact AUC of the same progressive probabilities (ε = 1)\n")
    print("`PrivatePairwiseClassifier(epsilon=1, bounds=…)` (default learner). \"previous\": the same model's "
          "previous probabilities (1 + s/‖w‖)/2 of the same released scores: each step ranks as "
          "its release does under both, but the progressive AUC pools the scores of all steps' releases, which "
          "the two map differently, so the exact AUCs differ too.\n")
    print("| stream | exact AUC | river ROCAUC | ROCAUC − AUC (worst seed) | previous: exact AUC | previous: river "
          "ROCAUC | accuracy | target (\\|gap\\| ≤ 0.02) |")
    print("|---|---|---|---|---|---|---|---|")
    summary = {}
    for label, (records, y, bounds, features) in streams.items():
        exact, reading, old_exact, old_reading, accuracy = [], [], [], [], []
        stream_seeds = tuple(range(10)) if label.startswith("Phishing") and not quick else seeds
        for seed in stream_seeds:
            model = PrivatePairwiseClassifier(epsilon=1.0, bounds=bounds, features=features, seed=seed,
                                              learner_params=online)
            P, predicted, old = river_run(model, records, y, [False, True], old_mapping=True)
            exact.append(roc_auc(y, P[:, 1]))
            reading.append(river_roc(P[:, 1], y))
            old_exact.append(roc_auc(y, old))
            old_reading.append(river_roc(old, y))
            accuracy.append(np.mean(np.array(predicted) == y))
        gaps = np.array(reading) - np.array(exact)
        worst = gaps[np.argmax(np.abs(gaps))]
        summary[label] = (exact, reading, accuracy)
        print(f"| {label} | {_mean_sd(exact)} | {_mean_sd(reading)} | {gaps.mean():+.3f} ({worst:+.3f}) | "
              f"{_mean_sd(old_exact)} | {_mean_sd(old_reading)} | {_mean_sd(accuracy)} | "
              f"{_met(abs(gaps.mean()) <= 0.02)} |", flush=True)

    print("\n### 4. Phishing: progressive AUC at ε = 1 against the README's 0.86 (river's ROCAUC, 10 seeds)\n")
    exact, reading, _ = summary[next(iter(streams))]
    print(f"river ROCAUC {_mean_sd(reading)}, exact AUC {_mean_sd(exact)} over seeds 0–9: "
          f"{_met(np.mean(reading) >= 0.86 - 0.005)} (no lower than 0.86, to its two decimals).\n")

    print(f"### 2. Progressive accuracy at ε = 1 on stationary, near-linear synthetic streams ({n:,} records)\n")
    print("| stream | model | ε = 1 | non-private twin | river `StandardScaler \\| LogisticRegression` | "
          "gap to the twin | gap to river | target (both ≤ 0.05) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (records, y, bounds, features) in list(streams.items())[1:]:
        reference = np.mean(np.array(river_logistic(records, y, [False, True])[1]) == y)
        for name, make in (("`PrivateClassifier`", lambda **kw: PrivateClassifier(classes=[False, True], bounds=bounds,
                                                                                    features=features, **kw)),
                           ("`PrivatePairwiseClassifier`", lambda **kw: PrivatePairwiseClassifier(
                               bounds=bounds, features=features, **kw))):
            private = [np.mean(np.array(river_run(make(epsilon=1.0, seed=s, learner_params=online), records, y,
                                                  [False, True])[1]) == y) for s in seeds]
            twin = np.mean(np.array(river_run(make(learner_params={**online, "private": False}), records, y,
                                              [False, True])[1]) == y)
            gap_twin, gap_river = twin - np.mean(private), reference - np.mean(private)
            print(f"| {label.split(' (')[0]} | {name} | {_mean_sd(private)} | {twin:.3f} | {reference:.3f} | "
                  f"{gap_twin:+.3f} | {gap_river:+.3f} | {_met(gap_twin <= 0.05 and gap_river <= 0.05)} |", flush=True)

    # 3. ImageSegments
    X, y, _ = load_image_segments()
    records = dicts(X, list(FEATURES))
    print("\n### 3. ImageSegments (2,310 records, 18 features, 7 classes, the bounds of `streams/image_segments.py`)\n")
    print("| model | ε | accuracy | target |")
    print("|---|---|---|---|")
    for epsilon, target in ((1.0, 0.50), (4.0, 0.70), (None, None)):
        if epsilon is None:
            model = PrivateClassifier(classes=list(CLASSES), bounds=(LOWER, UPPER), features=list(FEATURES),
                                      learner_params={**online, "private": False})
            accuracy = [np.mean(np.array(river_run(model, records, y, list(CLASSES))[1]) == y)]
        else:
            accuracy = [np.mean(np.array(river_run(PrivateClassifier(
                classes=list(CLASSES), epsilon=epsilon, bounds=(LOWER, UPPER), features=list(FEATURES), seed=s,
                learner_params=online),
                records, y, list(CLASSES))[1]) == y) for s in seeds]
        print(f"| `PrivateClassifier`, progressive | {epsilon or 'non-private'} | {_mean_sd(accuracy)} | "
              f"{'' if target is None else f'≥ {target:.2f}: ' + _met(np.mean(accuracy) >= target)} |", flush=True)
    reference = np.mean(np.array(river_logistic(records, y, list(CLASSES))[1]) == y)
    print(f"| river `StandardScaler \\| OneVsRestClassifier(LogisticRegression)`, progressive | non-private | "
          f"{reference:.3f} | |")
    offline_image_segments(X, y, CLASSES, LOWER, UPPER, quick)


def offline_image_segments(X, y, classes, lower, upper, quick):
    """``OffPairStats(task="classify")`` on random 70/30 splits (seed = split) at δ = 1/n_train and 1e-5, beside
    its non-private twin and the nearest private centroid of the same release (the same noise draw)."""
    splits = range(3 if quick else 20)
    n_train = int(0.7 * len(y))
    print(f"\nOffline, one release: `OffPairStats(task=\"classify\", classes=CLASSES, bounds=(LOWER, UPPER))` "
          f"on {len(splits)} random 70/30 splits (n_train = {n_train:,}, seed = split), mean ± std of test "
          "accuracy. Nearest private centroid: the class means of one release of the same statistics at the same "
          "(ε, δ) (an independent draw), each test record given the class of the nearest mean in the bounds' "
          "coordinates.\n")
    print("| model | δ | ε = 1 | ε = 4 | target (ε = 1 ≥ 0.75) |")
    print("|---|---|---|---|---|")
    results = {}
    for delta, epsilon, split in itertools.product((1.0 / n_train, DELTA), (1.0, 4.0, None), splits):
        order = np.random.default_rng(split).permutation(len(y))
        train, test = order[:n_train], order[n_train:]
        est = OffPairStats(task="classify", classes=list(classes), epsilon=epsilon or 1.0, delta=delta,
                           bounds=(lower, upper), private=epsilon is not None, random_state=split)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # δ = 1/n (PrivacyWarning) and clipping (counted)
            results.setdefault(("classifier", delta, epsilon), []).append(
                est.fit(X[train], y[train]).score(X[test], y[test]))
        if epsilon is not None:
            results.setdefault(("centroid", delta, epsilon), []).append(
                _nearest_centroid(X, y, train, test, list(classes), lower, upper, epsilon, delta, split))
    for delta in (1.0 / n_train, DELTA):
        label = "1/n_train" if delta != DELTA else f"{DELTA:g}"
        acc = results[("classifier", delta, 1.0)]
        print(f"| `OffPairStats(task=\"classify\")` | {label} | {_mean_sd(acc)} | "
              f"{_mean_sd(results[('classifier', delta, 4.0)])} | {_met(np.mean(acc) >= 0.75)} |")
        print(f"| nearest private centroid (same statistics, same (ε, δ)) | {label} | {_mean_sd(results[('centroid', delta, 1.0)])} | "
              f"{_mean_sd(results[('centroid', delta, 4.0)])} | |", flush=True)
    print(f"| non-private twin (`private=False`, no noise; in the ε = 1 column) | | "
          f"{_mean_sd(results[('classifier', 1.0 / n_train, None)])} | | |")


def _nearest_centroid(X, y, train, test, classes, lower, upper, epsilon, delta, seed) -> float:
    """Test accuracy of the nearest private centroid: one release of the classifier's statistics (pooled layout,
    the same σ for (ε, δ)), each test record given the class of the nearest released mean."""
    bounds = FeatureBounds(lower, upper)
    Z, _ = bounds.transform(X[train])
    codes = np.searchsorted(np.array(classes), y[train])
    total = statistics_total(Z, codes, len(classes), WEIGHTS, pooled=True)
    sigma = gaussian_sigma(statistics_sensitivity(*WEIGHTS), epsilon, delta, method="analytic")
    total = total + sigma * np.random.default_rng([seed, 11]).standard_normal(total.size)
    means = class_statistics(total, len(classes), Z.shape[1], WEIGHTS, sigma ** 2, pooled=True).means
    Zt, _ = bounds.transform(X[test])
    nearest = np.argmin(((Zt[:, None, :] - means[None, :, :]) ** 2).sum(axis=2), axis=1)
    return float(np.mean(np.array(classes)[nearest] == y[test]))


# -- the pooled second moment ----------------------------------------------------------------------------
def _paired_noise(noise, C, d):
    """The pooled layout's noise from the per-class layout's (rows of ``noise``): counts and sums the same, the
    moment the classes' moment noise summed and divided by √C (the same Gaussian distribution)."""
    q = 1 + d + d * (d + 1) // 2
    parts = [noise[..., c * q:c * q + 1 + d] for c in range(C)]
    moment = sum(noise[..., c * q + 1 + d:(c + 1) * q] for c in range(C)) / math.sqrt(C)
    return np.concatenate(parts + [moment], axis=-1)


def pooled_cases(n):
    cases = []
    for (C, d, separation) in [(2, 5, 1.0), (4, 10, 1.0), (7, 18, 1.5), (3, 5, 0.7)]:
        X, y, bounds, _ = gaussian_classes(200 + C, n, d, C, separation=separation)
        cases.append((f"Gaussian, C = {C}, d = {d}", X, y, bounds, C))
    for name, label in (("hyperplane", "Hyperplane (seed 100)"), ("sea", "SEA (seed 100)")):
        X, y, bounds, _ = river_stream(name, n, seed=100)
        cases.append((label, X, y, bounds, 2))
    return cases


def pooled(quick: bool, mechanism: str):
    draws = 10 if quick else 30
    print(f"Synthetic data only. Offline: one Gaussian release (analytic σ for ε, δ = {DELTA:g}) of the first n "
          f"records, {draws} paired draws, accuracy and log-loss on the next 10,000. Online: progressive over the "
          f"first 3,000 records, OnPairStats' default mechanism (`{mechanism}`), noise seeds 1–3, paired.\n")
    print("### Offline, one release\n")
    print("| data | n | ε | accuracy, per class | accuracy, pooled | pooled − per class (± se) | log-loss, per class "
          "| log-loss, pooled |")
    print("|---|---|---|---|---|---|---|---|")
    for name, X, y, bounds, C in pooled_cases(20_000):
        Z, _ = FeatureBounds(*bounds).transform(X)
        d = Z.shape[1]
        for n, epsilon in itertools.product((1000, 5000), (0.1, 0.3, 1.0, 4.0)):
            if quick and n == 5000:
                continue
            sigma = gaussian_sigma(statistics_sensitivity(*WEIGHTS), epsilon, DELTA, method="analytic")
            per_class, pooled_total = (statistics_total(Z[:n], y[:n], C, WEIGHTS, pooled=p) for p in (False, True))
            test, labels = Z[n:n + 10_000], y[n:n + 10_000]
            rows = []
            for draw in range(draws):
                noise = sigma * np.random.default_rng([draw, 7]).standard_normal(per_class.size)
                row = []
                for total, p in ((per_class + noise, False), (pooled_total + _paired_noise(noise, C, d), True)):
                    P = linear_discriminant(class_statistics(total, C, d, WEIGHTS, sigma ** 2, pooled=p)).predict_proba(test)
                    row += [np.mean(P.argmax(axis=1) == labels),
                            -np.mean(np.log(np.clip(P[np.arange(len(labels)), labels], 1e-15, 1.0)))]
                rows.append(row)
            r = np.array(rows)
            diff = r[:, 2] - r[:, 0]
            print(f"| {name} | {n:,} | {epsilon:g} | {r[:, 0].mean():.3f} | {r[:, 2].mean():.3f} | "
                  f"{diff.mean():+.3f} ± {diff.std() / math.sqrt(len(diff)):.3f} | {r[:, 1].mean():.3f} | "
                  f"{r[:, 3].mean():.3f} |", flush=True)
    print(f"\n### Online, progressive (`{mechanism}`)\n")
    print("| data | ε | accuracy, per class | accuracy, pooled | pooled − per class, by seed | log-loss, per class | "
          "log-loss, pooled |")
    print("|---|---|---|---|---|---|---|")
    n = 1000 if quick else 3000
    for name, X, y, bounds, C in pooled_cases(n):
        for epsilon in (1.0, 4.0):
            results = np.array([_online_pair(X, y, bounds, C, epsilon, mechanism, seed) for seed in (1, 2, 3)])
            print(f"| {name} | {epsilon:g} | {results[:, 0].mean():.3f} | {results[:, 2].mean():.3f} | "
                  f"{', '.join(f'{v:+.3f}' for v in results[:, 2] - results[:, 0])} | {results[:, 1].mean():.3f} | "
                  f"{results[:, 3].mean():.3f} |", flush=True)


def _online_pair(X, y, bounds, C, epsilon, mechanism, seed):
    """Progressive accuracy and log-loss of the classifier from the per-class release of ``mechanism`` and
    from the pooled release with the paired noise (the mechanism's noise is linear in its draws)."""
    Z, _ = FeatureBounds(*bounds).transform(X)
    n, d = Z.shape
    rows = statistics_rows(Z, y, C, WEIGHTS)
    released = PrefixSumMechanism.for_option(mechanism)(dim=rows.shape[1], sensitivity=statistics_sensitivity(*WEIGHTS),
                                                        rho=rho_from_dp(epsilon, DELTA, method="gaussian"))
    estimates = released.add_block(rows, np.random.default_rng(seed), return_estimates=True)
    pooled_estimates = (np.cumsum(statistics_rows(Z, y, C, WEIGHTS, pooled=True), axis=0)
                        + _paired_noise(estimates - np.cumsum(rows, axis=0), C, d))
    out = []
    for source, p in ((estimates, False), (pooled_estimates, True)):
        P = np.full((n, C), 1.0 / C)
        for t in range(1, n):
            stats = class_statistics(source[t - 1], C, d, WEIGHTS, released.variance(t), pooled=p)
            P[t] = linear_discriminant(stats).predict_proba(Z[t:t + 1])[0]
        out += [scores(P, y)["accuracy"], scores(P, y)["logloss"]]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="targets", choices=tuple(SECTIONS))
    parser.add_argument("--quick", action="store_true", help="fewer records, seeds and draws: checks the script")
    parser.add_argument("--write", action="store_true", help="also write its section of the results file")
    parser.add_argument("--mechanism", default=default_mechanism(), choices=PrefixSumMechanism.options(),
                        help="the release mechanism of every online model (default: OnPairStats' default, resolved "
                             "here)")
    args = parser.parse_args(argv)
    with captured_stdout() as lines:
        {"targets": targets, "pooled": pooled}[args.command](args.quick, args.mechanism)
    if args.write and not args.quick:
        header = [f"`bench/classifier.py {args.command} --mechanism {args.mechanism}`, "
                  f"{datetime.date.today().isoformat()}, mechanism {mechanism_name(args.mechanism)}.", ""]
        write_section(SECTIONS[args.command], header + "".join(lines).splitlines())


if __name__ == "__main__":
    main()
