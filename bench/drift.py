"""Forgetting under concept drift: the decayed statistics (``half_life=``) on river's synthetic generators.

Streams (river 0.26 ``datasets.synth``; public bounds from the generators' definitions, never from the data):

* ``sea-flip``: SEA (variant 0, 3 features in [0, 10], no label noise), the labels flipped from record
  5,001 on (abrupt), 12,000 records;
* ``agrawal-change``: Agrawal, 9 features, classification function 6 replaced by function 5 at record 10,000
  (abrupt: the two generators concatenated), 20,000 records;
* ``agrawal-gradual``: the same change over about 2,000 records (river's ``ConceptDriftStream``, width 2,000:
  gradual), 20,000 records;
* stationary: SEA (variant 0), Agrawal (function 5) and Hyperplane (10 features, no drift, 5 % label noise),
  20,000 records each.

Agrawal's functions 6 and 5 are the pair a linear model learns (the non-private twin's test AUC, trained on
3,000 records of seed 1: 0.995 and 0.83; functions 0–4 give 0.52–0.70) and whose twin directions differ
(cosine 0.56).

Models, in progressive validation (predict, then learn, record by record):
``PrivatePairwiseClassifier(epsilon=1, delta=1e-5)`` without forgetting released by the BLT
(``learner_params={"mechanism": "blt"}``: the baseline of forgetting's cost, a half-life resolving to the BLT too)
and with the default release (``mechanism="auto"``: blocks without a half-life, issue 34), and with ``half_life`` H;
the fixed-schedule restarts (the BLT) (a fresh private model for every public segment of W records, each at the full ε:
every record reaches one mechanism; predictions from the previous segment's model until the current one has
learned W/4 records); the non-private twin (the BLT); and river's ``StandardScaler | LogisticRegression``,
``GaussianNB`` and ``HoeffdingAdaptiveTreeClassifier``.

Metrics: exact ROC AUC (scikit-learn) and accuracy (threshold 1/2) of the progressive predictions in windows of
1,000 records before and after each drift, and over the whole stream (progressive AUC, for the stationary cost).
Seeds: data seeds 1, 2, 3 (river's generators), the private models' noise seeded the same; means over seeds.

Results: printed and written into the section ``## Forgetting under drift`` of ``bench/results/drift.md``. Usage:
``.venv/bin/python bench/drift.py [--seeds 3] [--no-write]``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings

import numpy as np
from river import compose, linear_model, naive_bayes, preprocessing, tree
from river.datasets import synth
from sklearn.metrics import roc_auc_score

from onpair.river import PrivatePairwiseClassifier

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from results_file import write_section  # noqa: E402

SECTION = "## Forgetting under drift"
EPSILON, DELTA = 1.0, 1e-5
WINDOW = 1_000
HALF_LIVES = (500, 1_000, 2_000, 4_000, 8_000)
SEGMENT = 2_000

SEA_FEATURES = [0, 1, 2]
SEA_BOUNDS = (0.0, 10.0)
AGRAWAL_FEATURES = ["salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan"]
# the generator's definition: salary 20k–150k, commission 0 or 10k–85k, age 20–80, elevel 0–4, car 1–20,
# zipcode 0–8, hvalue (8 − zipcode)·10⁵·[0.5, 1.5) ≤ 1.2·10⁶, hyears 1–30, loan 0–5·10⁵
AGRAWAL_BOUNDS = (np.array([20e3, 0.0, 20, 0, 1, 0, 0.0, 1, 0.0]),
                  np.array([150e3, 85e3, 80, 4, 20, 8, 1.2e6, 30, 5e5]))
HYPERPLANE_FEATURES = list(range(10))
HYPERPLANE_BOUNDS = (0.0, 1.0)


# -- streams ---------------------------------------------------------------------------------------------
def _take(stream, n):
    return [(dict(x), bool(y)) for x, y in itertools.islice(stream, n)]


def sea_flip(seed):
    records = _take(synth.SEA(variant=0, seed=seed), 12_000)
    return [(x, (not y) if i >= 5_000 else y) for i, (x, y) in enumerate(records)]


def agrawal_change(seed, width=None):
    """Agrawal function 6, then function 5 from record 10,001 (abrupt: the two generators concatenated), or
    river's ``ConceptDriftStream`` of the two with ``width`` (gradual: a sigmoid mixture centred at 10,000)."""
    before = synth.Agrawal(classification_function=6, seed=seed)
    after = synth.Agrawal(classification_function=5, seed=seed + 100)
    if width is None:
        return _take(before, 10_000) + _take(after, 10_000)
    return _take(synth.ConceptDriftStream(stream=before, drift_stream=after, position=10_000, width=width,
                                          seed=seed), 20_000)


STREAMS = {
    # name: (records(seed), features, bounds, drift positions)
    "sea-flip": (sea_flip, SEA_FEATURES, SEA_BOUNDS, (5_000,)),
    "agrawal-change": (agrawal_change, AGRAWAL_FEATURES, AGRAWAL_BOUNDS, (10_000,)),
    "agrawal-gradual": (lambda s: agrawal_change(s, width=2_000), AGRAWAL_FEATURES, AGRAWAL_BOUNDS, (10_000,)),
    "sea": (lambda s: _take(synth.SEA(variant=0, seed=s), 20_000), SEA_FEATURES, SEA_BOUNDS, ()),
    "agrawal-5": (lambda s: _take(synth.Agrawal(classification_function=5, seed=s), 20_000), AGRAWAL_FEATURES,
                  AGRAWAL_BOUNDS, ()),
    "hyperplane": (lambda s: _take(synth.Hyperplane(seed=s, n_features=10, noise_percentage=0.05), 20_000),
                   HYPERPLANE_FEATURES, HYPERPLANE_BOUNDS, ()),
}
DRIFTING = ("sea-flip", "agrawal-change", "agrawal-gradual")
STATIONARY = ("sea", "agrawal-5", "hyperplane")
#: The stationary streams again, 100,000 records long (the cost of forgetting grows with a stationary stream's
#: length: the cumulative model keeps improving, the decayed one weighs about 1.44·H records), and 1,000 long.
LONG, SHORT = 100_000, 1_000
LENGTH_HALF_LIVES = (2_000, 4_000, 8_000)


# -- models ----------------------------------------------------------------------------------------------
class Restarts:
    """Fixed-schedule segments: a fresh model for records [kW, (k + 1)W) (``make(k)``); predictions from the
    previous segment's model until the current one has learned ``W/4`` records."""

    def __init__(self, make, width):
        self.make, self.width = make, width
        self.t, self.current, self.previous = 0, make(0), None

    def predict_proba_one(self, x):
        use = self.previous if self.previous is not None and self.t % self.width < self.width // 4 else self.current
        return use.predict_proba_one(x)

    def learn_one(self, x, y):
        if self.t and self.t % self.width == 0:
            self.previous, self.current = self.current, self.make(self.t // self.width)
        self.current.learn_one(x, y)
        self.t += 1


def private(features, bounds, seed, half_life=None, private_model=True, mechanism="auto"):
    """The river model; ``mechanism="auto"`` (the default) releases by blocks without a half-life, by the BLT with one."""
    params = {"mechanism": mechanism} if private_model else {"mechanism": mechanism, "private": False}
    return PrivatePairwiseClassifier(epsilon=EPSILON, delta=DELTA, bounds=bounds, features=features, seed=seed,
                                     half_life=half_life, learner_params=params)


def models(features, bounds, seed, half_lives):
    # forgetting's cost is a BLT-against-BLT comparison (a half-life resolves to the BLT): the baseline without
    # forgetting, the restarts and the twin pin mechanism="blt"; the default (blocks, issue 34) is its own row
    out = {"onpair (no forgetting, BLT)": lambda: private(features, bounds, seed, mechanism="blt"),
           "onpair default (blocks, no forgetting)": lambda: private(features, bounds, seed)}
    for H in half_lives:
        out[f"onpair half_life={H:,}"] = (lambda H=H: private(features, bounds, seed, H))
    out[f"onpair restarts W={SEGMENT:,} (BLT)"] = lambda: Restarts(
        lambda k: private(features, bounds, seed * 1_000 + k, mechanism="blt"), SEGMENT)
    out["non-private twin (BLT)"] = lambda: private(features, bounds, seed, private_model=False, mechanism="blt")
    out["non-private twin half_life=1,000"] = lambda: private(features, bounds, seed, 1_000, private_model=False)
    out["river StandardScaler → LogisticRegression"] = lambda: compose.Pipeline(
        preprocessing.StandardScaler(), linear_model.LogisticRegression())
    out["river GaussianNB"] = naive_bayes.GaussianNB
    out["river HoeffdingAdaptiveTree"] = lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=seed)
    return out


def progressive(model, records):
    """Scores P(y = True | x) before learning each record, and the labels."""
    scores = np.empty(len(records))
    for i, (x, y) in enumerate(records):
        scores[i] = model.predict_proba_one(x).get(True, 0.0)
        model.learn_one(x, y)
    return scores, np.array([y for _, y in records])


def auc(scores, labels):
    return float(roc_auc_score(labels, scores)) if 0 < labels.sum() < labels.size else float("nan")


def window_metrics(scores, labels, start):
    s, y = scores[start:start + WINDOW], labels[start:start + WINDOW]
    return auc(s, y), float(np.mean((s > 0.5) == y))


def windows_of(n, drifts):
    """(label, start) of the windows reported: before each drift, then 0, 1, 2 and 4 windows after it, the last."""
    out = []
    for d in drifts:
        out += [(f"[d−1k, d)", d - WINDOW), ("[d, d+1k)", d), ("[d+1k, d+2k)", d + WINDOW),
                ("[d+2k, d+3k)", d + 2 * WINDOW), ("[d+4k, d+5k)", d + 4 * WINDOW)]
    out.append(("last 1k", n - WINDOW))
    return out


def run(seeds, half_lives, names, log=print):
    results = {}  # (stream, model) → {"auc": {...}, "acc": {...}, "whole": [...]}
    for name in names:
        make_records, features, bounds, drifts = STREAMS[name]
        for seed in seeds:
            records = make_records(seed)
            wins = windows_of(len(records), drifts)
            for label, make in models(features, bounds, seed, half_lives).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scores, labels = progressive(make(), records)
                entry = results.setdefault((name, label), {"auc": {}, "acc": {}, "whole": []})
                for wlabel, start in wins:
                    a, c = window_metrics(scores, labels, start)
                    entry["auc"].setdefault(wlabel, []).append(a)
                    entry["acc"].setdefault(wlabel, []).append(c)
                entry["whole"].append(auc(scores, labels))
            log(f"{name} seed {seed} done")
    return results


def lengths(seeds, names, log=print):
    """Whole-stream progressive AUC of the default private model and of each half-life of LENGTH_HALF_LIVES on the
    stationary streams cut at SHORT and LONG records: {(stream, n): {H: [auc per seed]}}."""
    out = {}
    for name in names:
        _, features, bounds, _ = STREAMS[name]
        for n in (SHORT, LONG):
            for seed in seeds:
                generator = {"sea": lambda: synth.SEA(variant=0, seed=seed),
                             "agrawal-5": lambda: synth.Agrawal(classification_function=5, seed=seed),
                             "hyperplane": lambda: synth.Hyperplane(seed=seed, n_features=10, noise_percentage=0.05)}
                records = _take(generator[name](), n)
                for H in (None, "default", *LENGTH_HALF_LIVES):
                    model = (private(features, bounds, seed, mechanism="blt") if H is None
                             else private(features, bounds, seed) if H == "default" else private(features, bounds, seed, H))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores, labels = progressive(model, records)
                    out.setdefault((name, n), {}).setdefault(H, []).append(auc(scores, labels))
            log(f"{name}, {n:,} records done")
    return out


def length_table(by_length, names):
    lines = ["### The cost of forgetting against the length of a stationary stream", "",
             "Whole-stream progressive AUC with the half-life minus without (both the BLT), paired by seed (mean over "
             f"the seeds), on the stationary streams cut at {SHORT:,} and {LONG:,} records; the default without a "
             "half-life (blocks, issue 34) minus the BLT without, in its own column.", "",
             "| stream | records | AUC without (BLT) | default (blocks) | "
             + " | ".join(f"half_life={H:,}" for H in LENGTH_HALF_LIVES) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(LENGTH_HALF_LIVES)]
    for name in names:
        for n in (SHORT, LONG):
            e = by_length[(name, n)]
            base = np.array(e[None])
            cells = [f"{np.mean(np.array(e[H]) - base):+.4f}" for H in ("default", *LENGTH_HALF_LIVES)]
            lines.append(f"| {name} | {n:,} | {base.mean():.3f} | " + " | ".join(cells) + " |")
    return lines + [""]


def _mean(values):
    return float(np.nanmean(values))


def tables(results, seeds, half_lives, names):
    lines = [f"Written by `bench/drift.py` (river {__import__('river').__version__}). Progressive validation "
             f"(predict, then learn), ε = {EPSILON:g}, δ = {DELTA:g}; data seeds {', '.join(map(str, seeds))} of "
             "river's generators (the private models' noise seeded alike); means over the seeds. Windows of 1,000 "
             "records around the drift d; exact ROC AUC (accuracy at threshold 1/2 in parentheses); whole: the "
             "progressive AUC of the whole stream. Streams and models: the docstring of bench/drift.py.", ""]
    for name in names:
        drifts = STREAMS[name][3]
        model_labels = [label for (s, label) in results if s == name]
        wlabels = list(results[(name, model_labels[0])]["auc"])
        lines += [f"### {name}" + (f" (drift at {drifts[0]:,})" if drifts else " (stationary)"), ""]
        lines.append("| model | " + " | ".join(wlabels) + " | whole |")
        lines.append("|---|" + "---:|" * (len(wlabels) + 1))
        for label in model_labels:
            e = results[(name, label)]
            cells = [f"{_mean(e['auc'][w]):.3f} ({_mean(e['acc'][w]):.2f})" for w in wlabels]
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {_mean(e['whole']):.3f} |")
        lines.append("")
    # the stationary cost of each half-life: whole-stream AUC against no forgetting, paired by seed
    stationary = [n for n in names if n in STATIONARY]
    if stationary:
        lines += ["### The cost of forgetting on the stationary streams", "",
                  "Whole-stream progressive AUC with the half-life minus without (both the BLT; paired by seed; mean, "
                  "and the worst seed); the last row: the default without a half-life (blocks) minus the BLT.", "",
                  "| half-life | " + " | ".join(stationary) + " |", "|---|" + "---:|" * len(stationary)]
        base = "onpair (no forgetting, BLT)"
        for H in (*half_lives, None):
            label = "onpair default (blocks, no forgetting)" if H is None else f"onpair half_life={H:,}"
            cells = []
            for n in stationary:
                diff = np.array(results[(n, label)]["whole"]) - np.array(results[(n, base)]["whole"])
                cells.append(f"{diff.mean():+.4f} (worst {diff.min():+.4f})")
            lines.append(f"| {'default (blocks)' if H is None else f'{H:,}'} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--streams", nargs="*", default=list(DRIFTING + STATIONARY))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--skip-lengths", action="store_true", help="without the 1,000- and 100,000-record runs")
    args = parser.parse_args(argv)
    seeds = list(range(1, args.seeds + 1))
    results = run(seeds, HALF_LIVES, args.streams)
    lines = tables(results, seeds, HALF_LIVES, args.streams)
    stationary = [n for n in args.streams if n in STATIONARY]
    if stationary and not args.skip_lengths:
        lines += length_table(lengths(seeds, stationary), stationary)
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
