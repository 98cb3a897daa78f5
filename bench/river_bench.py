"""river path: `PrivatePairwiseClassifier.learn_one` with dict records, beside river's `LogisticRegression`.

Both models learn river's bundled Phishing stream (1,250 records, d = 9, features in [0, 1]) record by
record from dicts, in the same process, alternating runs (each run: a fresh model, the stream
``--passes`` times over). Rates are the median over ``--repeats`` runs. Timed:

1. ``river.linear_model.LogisticRegression().learn_one(x, y)``: the reference;
2. ``PrivatePairwiseClassifier(epsilon=1, bounds=(0, 1)).learn_one(x, y)``: the default learner ("stats",
   a release after every record), and with ``learner="onpairstrc"`` (reservoir of 64, doubling schedule);
3. ``OnPairStats(...).learn_one(array, y)`` on pre-built arrays: the learner alone, the most the wrapper
   could reach without changing the learner;
4. both models in progressive validation (``predict_proba_one`` then ``learn_one``, as
   ``river.evaluate.progressive_val_score`` does).

Then one ``OnPairStrC.learn_one`` call is taken apart (µs per step, best of 5): where that learner's
time goes. Target (issue 16): the default wrapper in progressive validation ≥ 0.5× river's
``LogisticRegression`` in progressive validation.

Results: printed, and written into the section ``## river wrapper`` of ``bench/results.md`` (other
sections are left alone). Usage: ``.venv/bin/python bench/river_bench.py [--repeats 7] [--passes 4]
[--no-write]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
import timeit
import warnings
from pathlib import Path

import numpy as np
from river import datasets, linear_model

from onpair import OnPairStats, OnPairStrC
from onpair.river import PrivatePairwiseClassifier

SECTION = "## river wrapper"
TARGET_RATIO = 0.5
EPSILON, BUFFER = 1.0, ("reservoir", 64)


def phishing():
    records = list(datasets.Phishing())
    features = sorted(records[0][0])
    X = np.array([[x[f] for f in features] for x, _ in records], dtype=np.float64)
    y = [bool(label) for _, label in records]
    return records, X, y


def run_river(records, passes):
    model = linear_model.LogisticRegression()
    start = time.perf_counter()
    for _ in range(passes):
        for x, y in records:
            model.learn_one(x, y)
    return time.perf_counter() - start


def make_wrapper(learner="stats"):
    if learner == "stats":
        return PrivatePairwiseClassifier(epsilon=EPSILON, bounds=(0.0, 1.0))
    return PrivatePairwiseClassifier(learner=learner, epsilon=EPSILON, bounds=(0.0, 1.0), buffer=BUFFER)


def run_wrapper(records, passes, learner="stats"):
    model = make_wrapper(learner)
    start = time.perf_counter()
    for _ in range(passes):
        for x, y in records:
            model.learn_one(x, y)
    return time.perf_counter() - start


def run_learner(X, y, passes):
    learner = OnPairStats(epsilon=EPSILON, bounds=(0.0, 1.0), n_features=X.shape[1])
    rows = list(X)
    start = time.perf_counter()
    for _ in range(passes):
        for row, label in zip(rows, y):
            learner.learn_one(row, label)
    return time.perf_counter() - start


def run_progressive(model, records, passes):
    start = time.perf_counter()
    for _ in range(passes):
        for x, y in records:
            model.predict_proba_one(x)
            model.learn_one(x, y)
    return time.perf_counter() - start


class _NoLearner:
    """Stands in for the wrapper's learner: what is left is the wrapper's own cost."""

    n_seen = 0

    def learn_one(self, x, y):
        pass


def wrapper_own_cost(records):
    """µs per record of PrivatePairwiseClassifier.learn_one around a learner that does nothing."""
    model = make_wrapper()
    for x, y in records[:10]:
        model.learn_one(x, y)
    model._inner = _NoLearner()
    sample = records[:500]

    def loop():
        for x, y in sample:
            model.learn_one(x, y)

    return min(timeit.repeat(loop, number=5, repeat=5)) / (5 * len(sample)) * 1e6


def learner_breakdown(X, y):
    """µs per step of one OnPairStrC.learn_one call on its compiled single-record path (the path every
    round without a release takes; private methods: a diagnostic, may drift)."""
    import math

    from onpair import _kernels
    from onpair.bounds import _map_box_row
    from onpair._validation import binary_label

    learner = OnPairStrC(epsilon=EPSILON, bounds=(0.0, 1.0), buffer=BUFFER, n_features=X.shape[1], seed=0)
    for row, label in zip(X[:300], y[:300]):
        learner.learn_one(row, label)
    row = np.ascontiguousarray(X[300], dtype=np.float64)
    t = learner.n_seen + 1
    lower, upper, half = learner.feature_bounds.box_rows(row.shape[0])
    z = np.empty(row.shape[0])

    def best(fn, number=2000):
        return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6

    parts = {
        "label check (`binary_label`)": best(lambda: binary_label(True, 0, 0)),
        "release round? (`_quiet`)": best(lambda: learner._quiet(t)),
        "public bounds map (compiled `_map_box_row`)": best(lambda: _map_box_row(row, lower, upper, half, z)),
        "step size (`StepRule.one`)": best(lambda: learner._step_rule.one(t)),
        "reservoir draw (one double)": best(lambda: math.floor(learner._buffer_rng.random() * t)),
    }
    total = best(lambda: learner.learn_one(row, True), number=1000)
    # The compiled round alone, on the learner's own arrays (record not kept: slot −1).
    it, buffer = learner._iterate, learner._history
    kernel = best(lambda: _kernels._giga_buffered_one(
        z, 1, it.w, buffer.buffer, buffer.buffer_signs, buffer.n_buffered, t, 0.0, learner._lam,
        it.center, learner._radius, learner._objective.loss_code, -1, it.iterate_sum))
    parts["compiled round (`_kernels._giga_buffered_one`: 64 pair-gradients)"] = kernel
    parts["ledger update (`_after_round_fast`)"] = best(lambda: learner._after_round_fast(t, 0.0))
    # The parts are timed one by one (each with its own call overhead); the remainder is the Python glue
    # of learn_one itself. A negative remainder means the parts' own overheads exceed it: shown as it is.
    parts["the rest: learn_one's own Python glue (total − the parts above)"] = total - sum(parts.values())
    return parts, total, kernel


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--passes", type=int, default=4, help="times over the 1,250-record stream per run")
    parser.add_argument("--no-write", action="store_true", help="print only, leave bench/results.md alone")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the release schedule never ends here; nothing to warn about
    records, X, y = phishing()
    n = len(records) * args.passes
    load_before = os.getloadavg()[0]
    # Warm-up: numba's compiled kernels, river's first-call paths.
    run_river(records[:100], 1), run_wrapper(records[:100], 1), run_learner(X[:100], y[:100], 1)
    times = {"river": [], "wrapper": [], "wrapper_strc": [], "learner": [], "river_pv": [], "wrapper_pv": []}
    for _ in range(args.repeats):  # alternate, so that load changes hit every contender alike
        times["river"].append(run_river(records, args.passes))
        times["wrapper"].append(run_wrapper(records, args.passes))
        times["wrapper_strc"].append(run_wrapper(records, args.passes, "onpairstrc"))
        times["learner"].append(run_learner(X, y, args.passes))
        times["river_pv"].append(run_progressive(linear_model.LogisticRegression(), records, args.passes))
        times["wrapper_pv"].append(run_progressive(make_wrapper(), records, args.passes))
    rate = {key: n / float(np.median(value)) for key, value in times.items()}
    own = wrapper_own_cost(records)
    try:
        parts, total, kernel = learner_breakdown(X, y)
    except (AttributeError, TypeError, ValueError) as exc:  # the learner's internals changed
        parts, total, kernel = {f"unavailable ({type(exc).__name__}: {exc})": float("nan")}, float("nan"), float("nan")
    floor = own + kernel
    load_after = os.getloadavg()[0]
    ratio = rate["wrapper_pv"] / rate["river_pv"]
    wrapper_us, learner_us = 1e6 / rate["wrapper"], 1e6 / rate["learner"]

    lines = [
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}; command: "
        f"`python bench/river_bench.py --repeats {args.repeats} --passes {args.passes}`",
        f"- machine: {platform.platform()}; {os.cpu_count()} logical cores; load average "
        f"{load_before:.2f} before, {load_after:.2f} after (other processes slow both sides alike: the runs "
        "alternate)",
        f"- stream: river's Phishing, {len(records)} records × {args.passes} passes = {n} `learn_one` calls per "
        f"run, d = 9; private models: the default (OnPairStats, a release after every record) and OnPairStrC "
        f"(buffer {BUFFER}, default schedule), ε = {EPSILON}, δ = 1e-5, bounds (0, 1); median of {args.repeats} "
        "runs",
        "",
        "| path | records/s | µs per record | ÷ river's rate |",
        "|---|---|---|---|",
        f"| river `LogisticRegression.learn_one` (dicts) | {rate['river']:,.0f} | {1e6 / rate['river']:.1f} | 1.00× |",
        f"| `PrivatePairwiseClassifier.learn_one` (dicts, default learner) | {rate['wrapper']:,.0f} | "
        f"{wrapper_us:.1f} | {rate['wrapper'] / rate['river']:.2f}× |",
        f"| `PrivatePairwiseClassifier(learner=\"onpairstrc\").learn_one` (dicts) | {rate['wrapper_strc']:,.0f} | "
        f"{1e6 / rate['wrapper_strc']:.1f} | {rate['wrapper_strc'] / rate['river']:.2f}× |",
        f"| `OnPairStats.learn_one` (arrays: the learner alone) | {rate['learner']:,.0f} | {learner_us:.1f} | "
        f"{rate['learner'] / rate['river']:.2f}× |",
        f"| river `LogisticRegression`, predict + learn | {rate['river_pv']:,.0f} | {1e6 / rate['river_pv']:.1f} | "
        f"{rate['river_pv'] / rate['river']:.2f}× |",
        f"| `PrivatePairwiseClassifier` (default), predict + learn | {rate['wrapper_pv']:,.0f} | "
        f"{1e6 / rate['wrapper_pv']:.1f} | {rate['wrapper_pv'] / rate['river']:.2f}× |",
        "",
        f"- Target: the default wrapper in progressive validation ≥ {TARGET_RATIO}× river's `LogisticRegression` "
        f"in progressive validation: **{'met' if ratio >= TARGET_RATIO else 'not met'}** ({ratio:.2f}×).",
        f"- The wrapper's own cost (dict → array in the fixed order, value and label checks, key bookkeeping), "
        f"timed around a learner that does nothing, is {own:.1f} µs per record of the {wrapper_us:.1f} µs; the "
        "rest is one `OnPairStats.learn_one` call. Even at zero wrapper cost the learner alone runs at "
        f"{rate['learner'] / rate['river']:.2f}× river's rate.",
        f"- Floor of any record-at-a-time private path: the wrapper's {own:.1f} µs plus the compiled round's "
        f"{kernel:.1f} µs = {floor:.1f} µs, i.e. at most {1e6 / floor / rate['river']:.2f}× river's rate on this "
        "run, with all other learner overhead removed.",
        "",
        f"One `OnPairStrC.learn_one` call, taken apart (best of 5; total {total:.1f} µs):",
        "",
        "| step | µs |",
        "|---|---|",
        *[f"| {name} | {value:.1f} |" for name, value in parts.items()],
        "",
        f"- The compiled round (s = 64 pair-gradients, d = 9) is {kernel:.1f} µs of the learner's {total:.1f} µs on "
        "its single-record path (rounds with a release take the general block path). The rest is a few "
        "scalar Python steps per record; the parts are timed one by one, each with its own call overhead, "
        "so their sum can exceed the whole (a negative remainder).",
    ]
    text = "\n".join(lines)
    print(SECTION + "\n\n" + text)
    if not args.no_write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from results_file import write_section

        write_section(SECTION, lines)
    return rate


if __name__ == "__main__":
    main()
