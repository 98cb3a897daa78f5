"""`make bench`: what the noise of the released statistics allows the classifier of issue 23, and how
calibrated its probabilities are, release by release.

Two tables (``--write`` replaces the section ``## Classifier (issue 23): what the noise allows`` of
``bench/results/classifier_limits.md``):

1. **Oracle.** Progressive accuracy (predict, then learn) of the shipped classifier
   (``OnPairStats(task="classify")``'s posterior, what ``PrivateClassifier`` predicts with) beside an
   oracle that is handed everything **except** the sums: the true class counts (of the records the release
   describes), the within-class covariance of the whole stream (hindsight, not private) and the best of a
   grid of ridges chosen with hindsight on the very records it is scored on; only the class sums are the released (noisy) ones, from
   the same learner, the same draw. No post-processing of the release can know more than this oracle
   about the counts and the covariance, so where the oracle misses a target, the released sums alone (their
   noise at ε, and with the default blocks their staleness: the counts are those of the records the release
   describes, ``refresh_count``) rule the target out for any classifier built on these
   statistics, however it post-processes them. Hyperplane and SEA (river's generators, 10,000 records,
   documented bounds) at ε = 1; ImageSegments (2,310 records, 18 features, 7 classes, the bounds of
   ``streams/image_segments.py``) at ε = 1 and 4.
2. **Calibration release by release.** After t records (t = 300, 1,000, 3,000, 10,000) the released
   posterior's log-odds r(x) are scored on 20,000 held-out records of the same stream (the generator's
   next records): the slope a of the logistic recalibration P(y = 1 | x) = σ(a·r(x) + b) is 1 for calibrated
   probabilities, above 1 for under-confident, below 1 for over-confident ones. The default river model
   (``task="auc"``: the calibrated posterior along the ranking model) and the classifier (``task="classify"``)
   at ε = 1 and 4, 3 noise seeds; Hyperplane, SEA and two Gaussian classes (d = 5). A progressive stream
   pools every release's probabilities; its single recalibration slope mixes these (and is dominated by the
   earliest, noisiest releases), which is why it is reported release by release here.

The defaults of the calibration (``SPREAD_NOISE_FACTOR``, ``MAX_UNDO`` in onpair/statistics/discriminant.py) were
chosen on table 2 by rerunning it with those constants edited (the CHANGELOG and their comments give the numbers).
δ = 1e-5, the learners' default weights and mechanism. Run: ``OPENBLAS_NUM_THREADS=1
ONPAIR_DATA=/work/shared/datasets .venv/bin/python bench/classifier_limits.py [--quick] [--write]``
(about 10 minutes on a shared two-core machine; ``--quick`` checks the script in under a minute).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from shared import gaussian_classes, river_stream  # noqa: E402
from onpair import FeatureBounds, OnPairStats  # noqa: E402
from results_file import captured_stdout, write_section  # noqa: E402

DELTA = 1e-5
HEADING = "## Classifier (issue 23): what the noise allows"
RIDGES = (1e-4, 1e-3, 1e-2, 1e-1)


def _learner(task, classes, bounds, d, epsilon, seed):
    return OnPairStats(epsilon=1.0 if epsilon is None else epsilon, delta=DELTA, bounds=bounds, n_features=d,
                       task=task, classes=None if task == "auc" else list(classes), seed=seed,
                       private=epsilon is not None)


def oracle_run(X, codes, classes, bounds, epsilon, seed):
    """Progressive accuracy of the shipped classifier and of the sums-only oracle (module docstring), from
    the same learner and draw: (shipped, {ridge: oracle})."""
    n, d = X.shape
    C = len(classes)
    Z, _ = FeatureBounds(*bounds).transform(X)
    within = sum(np.bincount(codes, minlength=C)[c] * np.cov(Z[codes == c].T, bias=True) for c in range(C)) / n
    inverses = {lam: np.linalg.inv(within + lam * np.eye(d)) for lam in RIDGES}
    # the nearest centroid: no covariance beyond its mean variance (which puts the priors on the right scale)
    inverses["identity"] = np.eye(d) / float(np.mean(np.diag(within)))
    learner = _learner("classify", classes, bounds, d, epsilon, seed)
    # the true class counts of the first r records, r = 0 … n: the oracle reads them at the records the release
    # describes (``refresh_count``: every record so far with the BLT, the completed blocks' with "blocks")
    prefix_counts = np.vstack([np.zeros(C), np.cumsum(np.eye(C)[codes], axis=0)])
    shipped = np.zeros(n, bool)
    oracle = {lam: np.zeros(n, bool) for lam in inverses}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping warnings (counted by the learner)
        for t in range(n):
            if t > 0:
                shipped[t] = int(np.argmax(learner.predict_proba(X[t:t + 1])[0])) == codes[t]
                stats = learner.class_statistics()
                sums = stats.means * stats.counts[:, None]  # the released sums (the means undo the floored count)
                described = learner.refresh_count
                counts = prefix_counts[described]
                means = sums / np.maximum(counts, 1.0)[:, None]
                log_priors = np.log(np.maximum(counts, 0.5) / max(described, 1))
                for lam, W in inverses.items():
                    slopes = means @ W
                    score = slopes @ Z[t] - 0.5 * np.einsum("cd,cd->c", slopes, means) + log_priors
                    oracle[lam][t] = int(np.argmax(score)) == codes[t]
            learner.learn_one(X[t], classes[codes[t]])
    return shipped[1:].mean(), {lam: v[1:].mean() for lam, v in oracle.items()}


def _best_ridge(by_ridge):
    return max(RIDGES, key=lambda lam: by_ridge[lam])


def _streams(quick):
    from streams.image_segments import CLASSES, load_image_segments

    n = 2000 if quick else 10_000
    out = []
    for name, label in (("hyperplane", "Hyperplane (d = 10, 5 % noise, bounds 0..1)"),
                        ("sea", "SEA (d = 3, 10 % noise, bounds 0..10)")):
        X, y, bounds, _ = river_stream(name, n, 42)
        out.append((f"{label}, {n:,} records", X, y.astype(int), (0, 1), bounds, (1.0,)))
    X, labels, bounds = load_image_segments()
    codes = np.array([CLASSES.index(v) for v in labels])
    out.append(("ImageSegments (2,310 records, d = 18, 7 classes)", X, codes, CLASSES, bounds,
                (4.0,) if quick else (1.0, 4.0)))
    return out


def oracle_table(quick):
    seeds = (0,) if quick else (0, 1, 2)
    print("### 1. The shipped classifier against an oracle handed everything but the sums\n")
    print("Progressive accuracy, mean over noise seeds " + ", ".join(map(str, seeds)) + ". Oracle: the true counts "
          "of the records the release describes, the whole stream's within-class covariance, the best ridge of "
          + ", ".join(f"{v:g}" for v in RIDGES) + " in hindsight, the **released** sums of the same draw.\n")
    print("| stream | ε | shipped classifier | oracle: released sums, true counts and covariance | oracle's ridge | "
          "oracle without covariance (nearest centroid, true counts) | non-private twin |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, X, codes, classes, bounds, epsilons in _streams(quick):
        twin, _ = oracle_run(X, codes, classes, bounds, None, 0)
        for epsilon in epsilons:
            runs = [oracle_run(X, codes, classes, bounds, epsilon, s) for s in seeds]
            shipped = float(np.mean([r[0] for r in runs]))
            by_ridge = {lam: float(np.mean([r[1][lam] for r in runs])) for lam in runs[0][1]}
            best = _best_ridge(by_ridge)
            print(f"| {label} | {epsilon:g} | {shipped:.3f} | {by_ridge[best]:.3f} | {best:g} | "
                  f"{by_ridge['identity']:.3f} | {twin:.3f} |", flush=True)
    print()


def calibration_table(quick):
    checkpoints = (300, 1000) if quick else (300, 1000, 3000, 10_000)
    seeds = (0,) if quick else (0, 1, 2)
    n_held = 5000 if quick else 20_000
    print("### 2. Calibration release by release (held-out recalibration slope; 1 = calibrated)\n")
    print(f"Cells: a / Δℓ. a: the slope of σ(a·r + b) fitted on {n_held:,} held-out records to the released log-odds "
          "r after t records (1: calibrated; above 1 under-confident, below 1 over-confident; a slope far from 1 "
          "where r is nearly constant, the probabilities at the priors, costs little). Δℓ: the held-out log-loss "
          "of the released probabilities minus that of the refit σ(a·r + b), nats per record (what the "
          f"miscalibration costs). Medians over noise seeds {', '.join(map(str, seeds))}. `auc`: the default river "
          "model's calibrated posterior (`PrivatePairwiseClassifier`); `classify`: the classifier "
          "(`PrivateClassifier`). The non-private rows (one seed) show what the Gaussian model itself gets "
          "wrong: SEA's labels carry 10 % noise, so its true posterior saturates at 0.9 while a linear "
          "discriminant's log-odds grow without bound (slope below 1 without any privacy).\n")
    print("| stream | task | ε | " + " | ".join(f"t = {t:,}" for t in checkpoints) + " |")
    print("|---|---|---|" + "---:|" * len(checkpoints))
    streams = [("Hyperplane", *river_stream("hyperplane", checkpoints[-1] + n_held, 42)[:3]),
               ("SEA", *river_stream("sea", checkpoints[-1] + n_held, 42)[:3]),
               ("Gaussian, d = 5", *gaussian_classes(0, checkpoints[-1] + n_held, 5, 2, separation=0.5)[:3])]
    for name, X, y, bounds in streams:
        start = checkpoints[-1]
        Zh, _ = FeatureBounds(*bounds).transform(X[start:])
        yh = y[start:].astype(int)
        for task in ("auc", "classify"):
            for epsilon in (1.0, 4.0, None):
                slopes = {t: [] for t in checkpoints}
                for seed in seeds if epsilon is not None else seeds[:1]:
                    learner = _learner(task, (0, 1), bounds, X.shape[1], epsilon, seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        for t in range(start):
                            learner.learn_one(X[t], int(y[t]))
                            if t + 1 in slopes:
                                scores = learner.posterior().decision_function(Zh)
                                slopes[t + 1].append(_recalibration(scores[:, 1] - scores[:, 0], yh))
                cells = [f"{np.median([a for a, _ in v]):.2f} / {np.median([e for _, e in v]):.3f}"
                         for v in slopes.values()]
                label = "non-private" if epsilon is None else f"{epsilon:g}"
                print(f"| {name} | {task} | {label} | " + " | ".join(cells) + " |", flush=True)
    print()


def _log_loss(logits, y) -> float:
    return float(np.mean(np.logaddexp(0.0, logits) - y * logits))


def _recalibration(r, y) -> tuple[float, float]:
    """(a, excess): the slope a of the maximum-likelihood logistic fit P(y = 1) = σ(a·r + b) (Newton's
    method, two parameters; a = 0 where r is constant), and the log-loss of the released log-odds r minus
    that of the refit (nats per record: what the miscalibration costs)."""
    r = np.asarray(r, dtype=float)
    if np.ptp(r) == 0.0:
        prior = float(np.clip(y.mean(), 1e-12, 1 - 1e-12))
        return 0.0, _log_loss(r, y) - _log_loss(np.full_like(r, np.log(prior / (1 - prior))), y)
    scale = float(np.std(r))
    A = np.column_stack([r / scale, np.ones_like(r)])
    beta = np.zeros(2)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(A @ beta, -500, 500)))
        gradient = A.T @ (y - p)
        hessian = (A * (p * (1 - p))[:, None]).T @ A + 1e-9 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(beta[0] / scale), _log_loss(r, y) - _log_loss(A @ beta, y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer records and seeds: checks the script")
    parser.add_argument("--write", action="store_true", help="also write its section of the results file")
    args = parser.parse_args(argv)
    with captured_stdout() as lines:
        oracle_table(args.quick)
        calibration_table(args.quick)
    if args.write and not args.quick:
        mechanism = _learner("classify", (0, 1), (0.0, 1.0), 2, 1.0, 0).release_mechanism
        header = [f"`bench/classifier_limits.py`, {datetime.date.today().isoformat()}; δ = {DELTA:g}, the "
                  f"learners' default weights and mechanism (\"auto\" → `{mechanism}`: disjoint blocks of 32, 64, "
                  "128, … records, each released once). Protocol: the module docstring.", ""]
        write_section(HEADING, header + "".join(lines).splitlines())


if __name__ == "__main__":
    main()
