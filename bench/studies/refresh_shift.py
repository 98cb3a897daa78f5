"""The river wrapper's model refresh rule (``PrivatePairwiseClassifier.REFRESH_SHIFT``, s) re-checked on synthetic
public streams only (river's Hyperplane, SEA, Agrawal): progressive ROC AUC (exact, sklearn), log loss and
accuracy of ``predict_proba_one`` before ``learn_one``, for several s and "every release" (s = 62), the same
learner seed for every s (the releases are identical; only the model the predictions read differs), and the
number of refreshes. Written into the section ``## Refresh shift of the river wrapper (issue 22)`` of
``bench/studies/results/refresh_shift.md``.
Usage: ``.venv/bin/python bench/studies/refresh_shift.py [--n 5000] [--seeds 3] [--no-write]``.
"""

from __future__ import annotations

import argparse
import sys
import itertools
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench: its shared modules
from quick import add_quick, apply_quick  # noqa: E402

import numpy as np
from river.datasets import synth
from sklearn.metrics import roc_auc_score

from onpair.river import PrivatePairwiseClassifier

SHIFTS = (0, 2, 3, 4, 6, 62)
AGRAWAL = {"salary": (20_000, 150_000), "commission": (0, 75_000), "age": (20, 80), "elevel": (0, 4),
           "car": (1, 20), "zipcode": (0, 8), "hvalue": (0, 900_000), "hyears": (1, 30), "loan": (0, 500_000)}


def streams(seed):
    yield ("hyperplane", lambda: synth.Hyperplane(seed=seed, n_features=10, noise_percentage=0.05),
           list(range(10)), (0.0, 1.0))
    yield "sea", lambda: synth.SEA(variant=0, noise=0.1, seed=seed), [0, 1, 2], (0.0, 10.0)
    names = list(AGRAWAL)
    yield ("agrawal", lambda: synth.Agrawal(classification_function=0, seed=seed), names,
           (np.array([AGRAWAL[f][0] for f in names], float), np.array([AGRAWAL[f][1] for f in names], float)))


def run(make, features, bounds, n, seed, shift):
    model = PrivatePairwiseClassifier(epsilon=1.0, bounds=bounds, features=features, seed=seed)
    model._refresh_shift = shift
    p, y, refreshes, last = [], [], 0, None
    for x, label in itertools.islice(make(), n):
        p.append(model.predict_proba_one(x)[True])
        refresh = model._inner._refresh  # the window predictions read (StreamLearner.predictor)
        if refresh is not None and refresh.start != last:
            refreshes, last = refreshes + 1, refresh.start
        model.learn_one(x, bool(label))
        y.append(bool(label))
    p, y = np.array(p), np.array(y)
    clipped = np.clip(p, 1e-12, 1 - 1e-12)
    logloss = -float(np.mean(np.where(y, np.log(clipped), np.log(1 - clipped))))
    return roc_auc_score(y, p), logloss, float(np.mean((p > 0.5) == y)), refreshes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only, leave the results file alone")
    add_quick(parser)
    args = parser.parse_args()
    apply_quick(args, n=500, seeds=1)
    warnings.simplefilter("ignore")
    lines = [f"`python bench/studies/refresh_shift.py --n {args.n} --seeds {args.seeds}`: the default "
             "`PrivatePairwiseClassifier(epsilon=1, delta=1e-5)` with its refresh shift set to s (62: every release), "
             f"{args.n:,} records per stream, stream and learner seeds 0..{args.seeds - 1}, means over the seeds; "
             "Hyperplane (d = 10, noise 5 %, bounds 0..1), SEA (variant 0, noise 10 %, bounds 0..10), Agrawal "
             "(function 0, per-feature bounds from its documented ranges). AUC: exact progressive ROC AUC; log loss and "
             "accuracy of the progressive probabilities.", ""]
    for name in ("hyperplane", "sea", "agrawal"):
        rows = {s: [] for s in SHIFTS}
        for seed in range(args.seeds):
            make, features, bounds = next((m, f, b) for k, m, f, b in streams(seed) if k == name)
            for s in SHIFTS:
                start = time.process_time()
                rows[s].append((*run(make, features, bounds, args.n, seed, s), time.process_time() - start))
        lines += [f"{name}:", "", "| s | AUC | log loss | accuracy | refreshes | CPU s |", "|---|---|---|---|---|---|"]
        for s in SHIFTS:
            a = np.array(rows[s]).mean(axis=0)
            lines.append(f"| {s} | {a[0]:.4f} | {a[1]:.4f} | {a[2]:.4f} | {a[3]:.0f} | {a[4]:.2f} |")
        lines.append("")
    print("\n".join(lines))
    if not args.no_write:
        from results_file import write_section

        write_section("## Refresh shift of the river wrapper (issue 22)", lines)


if __name__ == "__main__":
    main()
