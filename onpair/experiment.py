"""``onpair experiment huai``: the experiments of Huai et al. (2020), Figures 1–6.

Protocol (docs/algorithms.md#evaluation, the paper's Experiments section): for each of ``permutations`` random
permutations of a data set, the first n records train the learner and the rest are held out;
ε ∈ {0.5, 1.5, 2.5}, δ = 1/n; the NonPrivate baseline is Pairwise GIGA (the same kernel without
noise). Each figure is run twice, side by side:

* **paper**: the constants as printed (λ = 10⁻³, ``mode="paper"``, R = 1; OnPairC/OffPairC with
  α = n^(−1/4) resp. n^(−1/2) and a random centre), which shows what those constants give;
* **library**: the library's defaults (ledger sensitivities, ``lam="auto"``, R = 0.1).

=======  =========================  ===========================  ===================================
figure   learner                    data sets, n                 measure
=======  =========================  ===========================  ===================================
1        OnPairStrC                 Hepatitis, Cancer; 40–90     objective L(ŵ; D_train)
2        OnPairC                    Diabetes, Retinopathy; 50–350 objective
3        OffPairStrC                Hepatitis, Cancer; 40–90     objective
4        OffPairC                   Diabetes, Retinopathy; 50–350 test AUC
5        OnPairC, metric learning   Diabetes, Retinopathy; 50–350 objective
6        OffPairC, metric learning  Diabetes, Retinopathy; 50–350 test 3-NN accuracy
=======  =========================  ===========================  ===================================

Figures 5–6 learn a metric W (``task="metric"``, Huai Example 1) and add two rows: "Euclidean", 3-NN
with the identity metric on the same public-bounds map (what the learned metric must beat), and the
test 3-NN accuracy of every configuration. The paper's metric constants are C = {‖W‖_F ≤ 1}, λ as
above and a random centre; the library's are its metric defaults (R = 0.1, the scaled-identity
centre). Writes ``huai_results.md`` (mean ± std; the test AUC or 3-NN accuracy of every figure is
added, since the objective's scale is set by the radius R) and, when matplotlib is installed
(``pip install onpair[plots]``), ``figure_1.png`` … ``figure_6.png``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import warnings
from collections import Counter

import numpy as np

from .algorithms import ALGORITHMS, ONLINE
from .core._io import atomic_path, atomic_write_text
from .core.bounds import FeatureBounds
from .core.matrix_geometry import metric_factor
from .evaluation import knn_accuracy, metric_objective, pairwise_risk, roc_auc
from .privacy import NoiseDominatedWarning, PrivacyWarning

EPSILONS = (0.5, 1.5, 2.5)
SMALL = tuple(range(40, 91, 10))
LARGE = tuple(range(50, 351, 50))
#: Figure → (algorithm, by its name in :data:`onpair.algorithms.ALGORITHMS`; data sets; sizes n; measure).
FIGURES = {
    1: ("onpairstrc", ("hepatitis", "wdbc"), SMALL, "objective"),
    2: ("onpairc", ("pima", "retinopathy"), LARGE, "objective"),
    3: ("offpairstrc", ("hepatitis", "wdbc"), SMALL, "objective"),
    4: ("offpairc", ("pima", "retinopathy"), LARGE, "auc"),
    5: ("onpairc", ("pima", "retinopathy"), LARGE, "objective"),
    6: ("offpairc", ("pima", "retinopathy"), LARGE, "knn"),
}
#: The paper's constants of each algorithm's own parameters (λ = 10⁻³; c = 1 and a random centre).
PAPER_CONSTANTS = {"onpairstrc": dict(lam=1e-3), "onpairc": dict(c=1.0, center="random"),
                   "offpairstrc": dict(lam=1e-3), "offpairc": dict(c=1.0, center="random")}
#: Figures of the metric-learning task (Huai Example 1).
METRIC_FIGURES = (5, 6)
#: Warnings that the protocol triggers on purpose, in almost every run: (category, message pattern, the
#: note the results table carries instead, once). Only these are held back, and only around the
#: experiment's own runs; any other warning is passed on as it came.
PROTOCOL_WARNINGS = (
    (PrivacyWarning, re.compile(r"delta = \S+ ≥ 1/n = "),
     "δ = 1/n, the paper's protocol, in every configuration: the library warns at δ ≥ 1/n (a mechanism that "
     "publishes one random record in the clear satisfies such a δ; prefer δ ≪ 1/n)."),
    (PrivacyWarning, re.compile(r"mode='paper': T₁ = \d+ ≥ n = \d+"),
     "paper: with the paper's constants the warm-up T₁ is at least n, so the algorithm never leaves it and "
     "every output is a random point of C (docs/algorithms.md §10.1); this is what the paper rows show."),
    (PrivacyWarning, re.compile(r"\w+: the release schedule ends at round 0; "),
     "paper (OnPairStrC, OnPairC): as T₁ ≥ n, the release schedule holds no release at all, so the model "
     "stays its data-independent start (the library warns that it is frozen at round 0)."),
    (PrivacyWarning, re.compile(r"mode='paper' with epsilon = \S+: Alg\. 3's σ is the classic Gaussian mechanism"),
     "paper, ε ≥ 1 (OffPairStrC, OffPairC): Alg. 3's σ is the classic Gaussian mechanism, proven for ε < 1 "
     "only; the report's epsilon_spent gives what that σ really achieves."),
    (NoiseDominatedWarning, re.compile(r"\w+: the released model is dominated by noise"),
     "the papers' small n and ε give releases that are mostly noise (their privacy_report_['expected_cosine'] "
     "is below 1/2): the rows show what such releases score."),
)


@contextlib.contextmanager
def _protocol_warnings(counts: Counter):
    """Hold back the :data:`PROTOCOL_WARNINGS` raised inside, counting them in ``counts`` (by note);
    re-issue every other warning unchanged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for record in caught:
        for category, pattern, note in PROTOCOL_WARNINGS:
            if issubclass(record.category, category) and pattern.match(str(record.message)):
                counts[note] += 1
                break
        else:
            warnings.warn_explicit(record.message, record.category, record.filename, record.lineno)


def protocol_notes(counts: Counter) -> str:
    """The Markdown notes on the settings the library warned about, one line each, with how often."""
    if not counts:
        return ""
    lines = ["### Settings the library warns about", "",
             "The protocol's settings make the library warn in nearly every run; those warnings were held back "
             "during the runs and are reported here once (with how many times each was raised):", ""]
    for _, _, note in PROTOCOL_WARNINGS:
        if counts[note]:
            lines.append(f"* {note} ({counts[note]} warnings)")
    return "\n".join(lines) + "\n"


NAMES = {"hepatitis": "Hepatitis", "wdbc": "Cancer (WDBC)", "pima": "Diabetes (Pima)",
         "retinopathy": "Diabetic Retinopathy"}


def _learner(algorithm: str, config: str, epsilon: float, n: int, bounds, seed: int, task: str = "auc"):
    params = dict(epsilon=epsilon, delta=1.0 / n, bounds=bounds, task=task)
    online = algorithm in ONLINE
    params.update(dict(n=n, seed=seed) if online else dict(random_state=seed))
    if config == "paper":
        params.update(radius=1.0, mode="paper", **PAPER_CONSTANTS[algorithm])
        if not online:
            params["output"] = "average"
    return ALGORITHMS[algorithm](**params)


def _baseline(config: str, bounds, task: str = "auc"):
    # The NonPrivate baseline: Pairwise GIGA with the configuration's regulariser and radius.
    if config == "paper":
        return ALGORITHMS["giga"](lam=1e-3, radius=1.0, bounds=bounds, task=task,
                                  center="zero" if task == "metric" else None)
    return ALGORITHMS["giga"](bounds=bounds, task=task)


def _fit(learner, X, y):
    if hasattr(learner, "learn_many"):
        learner.learn_many(X, y)
        return learner.model
    learner.fit(X, y)
    return learner.coef_


def run_figure(figure: int, permutations: int, data_dir=None, progress=None, loaded=None, warned=None,
               client=None) -> dict:
    """Results of one figure: {(measure, dataset, config, label, n): [values over permutations]}, for the
    figure's measure and, always, the test AUC (the objective's scale is set by the radius R, so the
    AUC is what compares configurations). ``loaded`` (a dict) keeps the data sets read by earlier
    figures: each file is read and checked once per run. ``warned`` (a Counter) counts the
    :data:`PROTOCOL_WARNINGS` held back (see :func:`protocol_notes`).

    Each (data set, permutation) is one task (:func:`permutation_results`); with a
    ``distributed.Client`` the tasks run on its cluster, and their results are merged in the same order
    as in-process, so the figure's results are identical."""
    from streams import load

    _, datasets, _, _ = FIGURES[figure]
    loaded = {} if loaded is None else loaded
    warned = Counter() if warned is None else warned
    tasks = []
    for dataset in datasets:
        if dataset not in loaded:
            loaded[dataset] = load(dataset, data_dir)
        X, y, spec = loaded[dataset]
        tasks += [(figure, dataset, perm, X, y, spec.bounds) for perm in range(permutations)]
    if client is None:
        outcomes = []
        for task in tasks:
            outcomes.append(permutation_results(*task))
            if progress is not None:
                progress(1)
    else:
        outcomes = _run_on_cluster(client, tasks, progress)
    results = {}
    for partial, counts, passed_on in outcomes:  # in task order, whatever order they finished in
        for key, values in partial.items():
            results.setdefault(key, []).extend(values)
        warned.update(counts)
        for message, category, filename, lineno in passed_on:
            warnings.warn_explicit(message, category, filename, lineno)
    return results


#: How many times a task is resubmitted after it failed (its worker lost mid-task, say): the tasks are
#: deterministic functions of their arguments, so a rerun gives the same numbers.
TASK_RETRIES = 3


def _run_on_cluster(client, tasks, progress) -> list:
    """The tasks on a Dask cluster; outcomes in task order.

    Each task carries its data set (the UCI sets are a few hundred kB): nothing it needs lives only on a
    worker, so a worker lost mid-grid loses no dependency (data scattered to the workers once did, and the
    grid failed with ``FutureCancelledError: ... lost dependencies`` under load); its tasks rerun elsewhere
    (``retries``)."""
    from distributed import as_completed

    futures = [client.submit(_permutation_task, figure, dataset, perm, (X, y), bounds, pure=False,
                             retries=TASK_RETRIES)
               for figure, dataset, perm, X, y, bounds in tasks]
    try:
        for _ in as_completed(futures, loop=client.loop):
            if progress is not None:
                progress(1)
        return client.gather(futures)
    finally:
        client.cancel(futures)


#: One task at a time per worker process: Python's warning filters are global to a process, so two
#: tasks in two threads of one worker would count (and pass on) each other's warnings.
_WARNINGS_LOCK = threading.Lock()


def _permutation_task(figure, dataset, perm, data, bounds):
    with _WARNINGS_LOCK:
        return permutation_results(figure, dataset, perm, data[0], data[1], bounds)


def permutation_results(figure: int, dataset: str, perm: int, X, y, bounds_spec) -> tuple:
    """One data set, one permutation of one figure: ``(results, protocol warning counts, other warnings)``.

    A deterministic function of its arguments (the split and every seed derive from ``(figure, perm)``),
    so it can run anywhere: on a Dask worker it gives the numbers it gives here. The protocol's warnings
    are counted; any other warning is returned as ``(message, category, filename, lineno)`` for the
    caller to issue."""
    algorithm, _, sizes, measure = FIGURES[figure]
    task = "metric" if figure in METRIC_FIGURES else "auc"
    warned = Counter()
    results = {}
    with warnings.catch_warnings(record=True) as passed_on:
        warnings.simplefilter("always")
        bounds = FeatureBounds(*bounds_spec)
        Z, _ = bounds.transform(X)  # the map is row by row: mapped once, then indexed
        order = np.random.default_rng([figure, perm]).permutation(len(y))
        for n in sizes:
            train, test = order[:n], order[n:]
            Z_train, Z_test = Z[train], Z[test]
            if task == "metric":
                euclid = knn_accuracy(Z_train, y[train], Z_test, y[test], k=3)
                for config in ("paper", "library"):
                    results.setdefault(("knn", dataset, config, "Euclidean", n), []).append(euclid)
            for config in ("paper", "library"):
                # The protocol's own settings (δ = 1/n, the paper's constants) warn at construction
                # and at fit, in nearly every run: those warnings go to the table's notes, once.
                with _protocol_warnings(warned):
                    runs = [("NonPrivate", _baseline(config, bounds, task))]
                    runs += [(f"ε = {e}", _learner(algorithm, config, e, n, bounds, perm, task))
                             for e in EPSILONS]
                for label, learner in runs:
                    with _protocol_warnings(warned):
                        model = _fit(learner, X[train], y[train])
                    if task == "metric":
                        factor = metric_factor(model)
                        quality = ("knn", knn_accuracy(Z_train @ factor.T, y[train], Z_test @ factor.T,
                                                       y[test], k=3))
                    else:
                        quality = ("auc", roc_auc(y[test], Z_test @ model))
                    results.setdefault((quality[0], dataset, config, label, n), []).append(quality[1])
                    if measure == "objective":
                        if task == "metric":
                            value = metric_objective(model, Z_train, y[train], "logistic")
                        else:
                            value = pairwise_risk(model, Z_train, y[train], "logistic")
                        results.setdefault(("objective", dataset, config, label, n), []).append(value)
    return results, warned, [(w.message, w.category, w.filename, w.lineno) for w in passed_on]


def markdown(figure: int, results: dict, permutations: int) -> str:
    algorithm, datasets, sizes, measure = FIGURES[figure]
    algorithm = ALGORITHMS[algorithm].__name__
    metric = figure in METRIC_FIGURES
    quality = "knn" if metric else "auc"
    lines = []
    measures = [measure] if measure == quality else [measure, quality]
    titles = {"objective": "objective value L(ŵ; D_train)", "auc": "test AUC", "knn": "test 3-NN accuracy"}
    task = ", metric learning" if metric else ""
    for what in measures:
        title = titles[what]
        extra = "" if what == measure else " (not in the paper's figure: added for comparison)"
        lines += [f"### Figure {figure}: {title} of {algorithm}{task}{extra} ({permutations} permutations, "
                  "δ = 1/n, mean ± std)", ""]
        for dataset in datasets:
            lines += [f"**{NAMES[dataset]}**", "",
                      "| configuration | " + " | ".join(f"n = {n}" for n in sizes) + " |",
                      "|---|" + "---|" * len(sizes)]
            labels = ["NonPrivate", *(f"ε = {e}" for e in EPSILONS)]
            if what == "knn":
                labels = ["Euclidean", *labels]
            for config in ("paper", "library"):
                for label in labels:
                    if label == "Euclidean" and config == "paper":
                        continue  # the same numbers for both configurations: shown once
                    cells = []
                    for n in sizes:
                        v = np.array(results[(what, dataset, config, label, n)])
                        cells.append(f"{v.mean():.3f} ± {v.std():.3f}")
                    name = "3-NN, Euclidean" if label == "Euclidean" else f"{config}: {label}"
                    lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def plot(figure: int, results: dict, path: str) -> bool:
    """A PNG with one panel per data set; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    algorithm, datasets, sizes, measure = FIGURES[figure]
    name = ALGORITHMS[algorithm].__name__
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4), squeeze=False)
    colors = {"NonPrivate": "black", "ε = 0.5": "tab:red", "ε = 1.5": "tab:orange", "ε = 2.5": "tab:green"}
    for ax, dataset in zip(axes[0], datasets):
        if measure == "knn":
            euclid = [np.mean(results[("knn", dataset, "library", "Euclidean", n)]) for n in sizes]
            ax.plot(sizes, euclid, "--", color="tab:blue", label="Euclidean 3-NN")
        for config, style in (("library", "-"), ("paper", ":")):
            for label, color in colors.items():
                means = [np.mean(results[(measure, dataset, config, label, n)]) for n in sizes]
                ax.plot(sizes, means, style, color=color, marker="o" if config == "library" else None,
                        label=f"{label} ({config})")
        ax.set_title(NAMES[dataset])
        ax.set_xlabel("training size n")
        ax.set_ylabel({"objective": "objective value", "auc": "test AUC", "knn": "test 3-NN accuracy"}[measure])
    axes[0][0].legend(fontsize=7, ncol=2)
    task = " (metric learning)" if figure in METRIC_FIGURES else ""
    fig.suptitle(f"Figure {figure}: {name}{task}, solid = library defaults, dotted = paper's constants")
    fig.tight_layout()
    _atomic_savefig(fig, path)
    plt.close(fig)
    return True


def _atomic_savefig(fig, path: str) -> None:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110)


def run(out: str, permutations: int = 20, figures=(1, 2, 3, 4, 5, 6), data_dir=None, progress=None,
        scheduler=None) -> list:
    """Run the figures, write the Markdown table (and PNGs); return the paths written.

    ``scheduler``: None runs in this process; ``"local"`` starts a Dask ``LocalCluster`` (one worker
    process per core) for the run; any other string is the address of a running Dask scheduler
    (``tcp://host:8786``); a ``distributed.Client`` is used as it is. The grid's tasks are
    (figure, data set, permutation); the results are identical to the in-process run's.
    """
    with _client_for(scheduler) as client:
        return _run(out, permutations, figures, data_dir, progress, client)


@contextlib.contextmanager
def _client_for(scheduler):
    if scheduler is None or type(scheduler).__name__ == "Client":
        yield scheduler
        return
    if not isinstance(scheduler, str) or not scheduler:
        raise ValueError(f"scheduler must be None, 'local' or a scheduler address, got {scheduler!r}")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("a Dask scheduler needs the dask extra: pip install 'onpair[dask]'") from None
    if scheduler == "local":
        # Its logs are the cluster's housekeeping, not the experiment's: errors only.
        with LocalCluster(processes=True, threads_per_worker=1, dashboard_address=":0",
                          silence_logs=logging.ERROR) as cluster, \
                Client(cluster, set_as_default=False) as client:
            yield client
    else:
        try:
            client = Client(scheduler, set_as_default=False, timeout="10s")
        except OSError as exc:
            raise ValueError(f"no Dask scheduler at {scheduler!r} ({exc})") from None
        with client:
            yield client


def _run(out, permutations, figures, data_dir, progress, client) -> list:
    os.makedirs(out, exist_ok=True)
    sections = ["# Huai et al. (2020), AUC maximisation and metric learning: the paper's constants and the "
                "library's defaults", "",
                *__doc__.strip().split("\n\n")[1:3], ""]  # the protocol and its two configurations
    loaded = {}
    warned = Counter()
    written = []
    for figure in figures:
        results = run_figure(figure, permutations, data_dir, progress, loaded, warned, client)
        sections.append(markdown(figure, results, permutations))
        png = os.path.join(out, f"figure_{figure}.png")
        if plot(figure, results, png):
            written.append(png)
    notes = protocol_notes(warned)
    if notes:
        sections.insert(5, notes)  # after the title, the protocol and its configurations
    table = os.path.join(out, "huai_results.md")
    atomic_write_text(table, "\n".join(sections).rstrip() + "\n")
    return [table, *written]
