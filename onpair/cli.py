"""The ``onpair`` command: ``onpair replay``, ``onpair experiment``, ``onpair audit`` and ``onpair fetch``.

Exit status: 0 on success, 2 for a usage error (argparse), 1 for a failure (bad data, a missing file,
a privacy parameter out of range), with the reason on stderr.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
import warnings

import numpy as np

import importlib

#: The names ``--algo`` takes (:data:`onpair.algorithms.ALGORITHMS`: online learners, then offline estimators).
#: Spelled here so that ``onpair --help`` answers before the families (numba, scipy) load; tests/test_cli.py checks
#: that they are the registry's names.
ALGORITHM_NAMES = ("giga", "onpairstrc", "onpairc", "stats", "offpairstrc", "offpairc", "gradient", "sgd", "offstats")

#: What a command needs and ``--help`` does not: loaded by :func:`_load_commands` when a command runs.
_HEAVY = {"experiment": (".experiment", None), "ALGORITHMS": (".algorithms", "ALGORITHMS"),
          "OFFLINE": (".algorithms", "OFFLINE"), "ONLINE": (".algorithms", "ONLINE"),
          "audit_main": (".audit", "main"), "ProgressBar": (".core._progress", "ProgressBar"),
          "FeatureBounds": (".core.bounds", "FeatureBounds"), "knn_accuracy": (".evaluation", "knn_accuracy"),
          "metric_objective": (".evaluation", "metric_objective"), "pairwise_risk": (".evaluation", "pairwise_risk"),
          "roc_auc": (".evaluation", "roc_auc"), "NoiseDominatedWarning": (".privacy.exceptions", "NoiseDominatedWarning"),
          "mark_curator_only": (".privacy.reports", "mark_curator_only"),
          "OffPairStats": (".statistics", "OffPairStats"), "OnPairStats": (".statistics", "OnPairStats")}


# Bound by _load_commands() before any command runs (None until then).
experiment = ALGORITHMS = OFFLINE = ONLINE = audit_main = ProgressBar = FeatureBounds = None
knn_accuracy = metric_objective = pairwise_risk = roc_auc = NoiseDominatedWarning = mark_curator_only = None
OffPairStats = OnPairStats = None


def _load_commands() -> None:
    """Bind the names of :data:`_HEAVY` in this module (once): the families, the evaluation, the audit."""
    if ALGORITHMS is not None:
        return
    for name, (module, attribute) in _HEAVY.items():
        loaded = importlib.import_module(module, __package__)
        globals()[name] = loaded if attribute is None else getattr(loaded, attribute)

DATASETS = ("phishing", "imagesegments", "hepatitis", "pima", "retinopathy", "wdbc")


def _load(source: str, args):
    """(X, y in ±1, public bounds, name) for a data set name or a CSV path."""
    if source == "phishing":
        from streams import RiverSource

        src = RiverSource("Phishing", label_map={True: 1, False: -1})
        X, y = _collect(src)
        return X, y, (0.0, 1.0), "phishing"  # features are encoded in [0, 1] by the data set
    if source == "imagesegments":
        return _image_segments(args)
    if source in DATASETS:
        from streams import load

        X, y, spec = load(source)
        return X, y, spec.bounds, source
    from streams import CSVSource

    if args.lower is None or args.upper is None:
        raise ValueError("a CSV source needs public feature bounds: --lower and --upper (never computed "
                         "from the data)")
    label_map, positive = _label_reading(args)
    src = CSVSource(source, header=args.header, target=_label_column(args), label_map=label_map,
                    on_error=args.on_error, delimiter=args.delimiter)
    X, y = _collect_csv(src, args)
    _check_bounds_count(args, X.shape[1], source)
    if src.report.get("rows_skipped"):
        hint = _header_hint(source, args)
        print(f"{source}: skipped {src.report['rows_skipped']} malformed rows: {src.report['skipped_reasons']}"
              + (f" ({hint})" if hint else ""), file=sys.stderr)
    if args.task != "metric":  # the metric task takes any number of classes as they are
        if positive is not None:
            # A public label domain: the positive class is fixed whatever values the data holds.
            seen = label_map.seen if isinstance(label_map, _OneAgainstRest) else np.unique(y).tolist()
            if not np.any(y == positive):
                raise ValueError(f"{source}: no row has the label --positive-label {args.positive_label!r}; the "
                                 f"labels are {_listing(seen)}")
            if np.all(y == positive):
                raise ValueError(f"{source}: every row has the label --positive-label {args.positive_label!r} (one "
                                 "class only): the AUC task needs records of both classes")
            y = np.where(y == positive, 1, -1)
        else:
            labels = np.unique(y)
            if labels.size == 1:
                raise ValueError(f"{source}: every row has the label {_listing(labels.tolist())} (one class only): "
                                 "the AUC task needs records of both classes")
            if labels.size != 2:
                raise ValueError(f"{source}: the label column has {labels.size} distinct values "
                                 f"({_listing(labels.tolist())}); need exactly 2 (or give --positive-label)")
            y = np.where(y == labels.max(), 1, -1)
    return X, y, (_floats(args.lower), _floats(args.upper)), source


def _image_segments(args):
    """river's ImageSegments: its 7 documented classes (public: ``streams.image_segments.CLASSES``), as their
    indices 0..6 for ``--task metric``, or ``--positive-label CLASS`` against the rest for ``--task auc``."""
    from streams.image_segments import CLASSES, load_image_segments

    X, labels, bounds = load_image_segments()
    if args.task == "metric":
        return X, np.array([CLASSES.index(label) for label in labels]), bounds, "imagesegments"
    if args.positive_label is None or args.positive_label.strip() not in CLASSES:
        given = "" if args.positive_label is None else f", got {args.positive_label!r}"
        raise ValueError(f"imagesegments has 7 classes: --task auc needs --positive-label, one of "
                         f"{', '.join(CLASSES)} (that class against the rest){given}; --task metric keeps them all")
    return X, np.where(labels == args.positive_label.strip(), 1, -1), bounds, "imagesegments"


def _label_column(args):
    """``--label-column``: an index (negative counts from the end) or, with ``--header``, a column name."""
    text = args.label_column.strip()
    try:
        return int(text)
    except ValueError:
        pass
    if not args.header:
        raise ValueError(f"--label-column {text!r} is a column name: it needs --header (or give the column's "
                         "index, e.g. --label-column 0; -1, the last, by default)")
    return text


def _check_bounds_count(args, d: int, source: str) -> None:
    """--lower and --upper: one number, or one per feature column (every column but the label's)."""
    for flag, text in (("--lower", args.lower), ("--upper", args.upper)):
        values = _floats(text)
        if np.ndim(values) and len(values) != d:
            raise ValueError(f"{flag} has {len(values)} numbers but {source} has {d} features (every column but "
                             f"the label's): give one number for all of them, or {d}, comma-separated")


class _OneAgainstRest:
    """The label map of ``--positive-label TEXT`` without ``--label-map``: the positive label as written
    reads as 1, every other label as −1 (the labels seen are kept, a few, for the messages)."""

    def __init__(self, positive: str):
        self.positive = positive
        self.seen = []

    def __call__(self, token: str) -> float:
        if len(self.seen) < 6 and token not in self.seen:
            self.seen.append(token)
        return 1.0 if token == self.positive else -1.0


def _number(text: str):
    """``text`` as a finite float, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _parse_label_map(text: str) -> dict:
    """``--label-map no=0,yes=1`` as {"no": 0.0, "yes": 1.0}; a ValueError naming the flag otherwise."""
    mapping = {}
    for item in text.split(","):
        label, equals, value = item.rpartition("=")
        label = label.strip()
        number = _number(value.strip())
        if not equals or not label or number is None:
            raise ValueError(f"--label-map takes LABEL=NUMBER pairs separated by commas (e.g. --label-map "
                             f"no=0,yes=1), got {item!r} in {text!r}")
        if label in mapping:
            raise ValueError(f"--label-map names the label {label!r} twice")
        mapping[label] = number
    return mapping


def _label_reading(args):
    """(label_map for CSVSource, the positive label's value after it, or None) from --label-map and
    --positive-label."""
    label_map = _parse_label_map(args.label_map) if args.label_map is not None else None
    text = args.positive_label
    if text is None:
        return label_map, None
    text = text.strip()
    if label_map is not None:
        if text in label_map:
            return label_map, label_map[text]
        number = _number(text)
        if number is None or number not in label_map.values():
            raise ValueError(f"--positive-label {text!r} is neither a label of --label-map ({_listing(label_map)}) "
                             f"nor one of its values ({_listing(sorted(set(label_map.values())))})")
        return label_map, number
    number = _number(text)
    if number is not None:
        return None, number  # labels written as numbers: compared as numbers (1 and 1.0 are one label)
    if not text:
        raise ValueError("--positive-label is empty")
    return _OneAgainstRest(text), 1.0


def _delimiter(text: str) -> str:
    """``--delimiter``: one character, with ``tab`` and ``\\t`` for a tab."""
    return "\t" if text in ("tab", "\\t") else text


def _listing(values, limit: int = 5) -> str:
    values = list(values)
    shown = ", ".join(repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else repr(v)
                      for v in values[:limit])
    return shown + (", …" if len(values) > limit else "")


def _first_row(path: str, delimiter: str = ","):
    """(line number, fields) of the first non-blank row of a CSV file, or None."""
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f, delimiter=delimiter)
        for fields in reader:
            if fields and any(field.strip() for field in fields):
                return reader.line_num, fields
    return None


def _header_hint(path: str, args) -> str:
    """'line 1 looks like column names: pass --header' when it does and --header is not given, else ''."""
    if args.header:
        return ""
    first = _first_row(path, args.delimiter)
    if first is None:
        return ""
    line, fields = first
    if any(_number(field.strip()) is not None or not field.strip() for field in fields):
        return ""
    return f"line {line} looks like column names ({_listing([f.strip() for f in fields], 4)}): pass --header"


def _label_tokens(src, args) -> list:
    """The distinct labels as written in the label column (a second pass, on the failure path only)."""
    from streams import CSVSource

    seen = _OneAgainstRest("")
    probe = CSVSource(src.path, header=args.header, target=_label_column(args), label_map=seen, on_error="skip",
                      delimiter=args.delimiter)
    for _ in probe.iter_blocks(4096):
        if len(seen.seen) > 5:
            break
    return seen.seen


def _collect_csv(src, args):
    """_collect for a CSV file, with messages that name the command's flags: a header row without
    --header, labels written as text without --label-map, every row skipped."""
    from streams import RecordError

    try:
        blocks = list(src.iter_blocks(4096))
    except RecordError as exc:
        hint = _header_hint(src.path, args) if exc.line == (_first_row(src.path, args.delimiter) or (None,))[0] else ""
        message = str(exc)
        if not hint and exc.reason == "unparseable label":
            hint = _label_hint(_label_tokens(src, args), args.task)
            message = message.replace(" (pass label_map to read labels written as text)", "")  # the library's words
        if not hint and args.on_error == "raise":
            hint = "--on-error skip skips such rows (and counts them)"
        raise ValueError(f"{message}; {hint}" if hint else message) from None
    report = src.report
    if not blocks:
        if report["rows_read"] == 0:
            raise ValueError(f"{src.path}: the file holds no records")
        # on_error="skip" and nothing survived: say why, in the command's terms.
        reasons = report["skipped_reasons"]
        why = []
        if "unparseable label" in reasons:
            why.append(_label_hint(_label_tokens(src, args), args.task))
        if "unknown label" in reasons:
            why.append(f"labels are not in --label-map ({report['errors'][0] if report['errors'] else ''})")
        header = _header_hint(src.path, args)
        if header:
            why.append(header)
        if not why:
            why.append(f"{reasons}; the first: {report['errors'][0]}" if report["errors"] else f"{reasons}")
        raise ValueError(f"{src.path}: every row was skipped ({report['rows_skipped']} of {report['rows_read']}): "
                         + "; ".join(why))
    return np.vstack([b for b, _ in blocks]), np.concatenate([np.asarray(t) for _, t in blocks])


def _label_hint(tokens, task: str = "auc") -> str:
    """What to pass when the labels are written as text (the metric task: every class numbered)."""
    text = [t for t in tokens if _number(t) is None]
    if not text:
        return "labels must be finite numbers; pass --label-map LABEL=NUMBER,..."
    if task == "metric":
        example = ",".join(f"{t}={v}" for v, t in enumerate(sorted(text)))
        return (f"labels {_listing(text)} are not numbers; pass --label-map with a number for every class of the "
                f"data's documentation (e.g. --label-map {example}{',…' if len(tokens) > 5 else ''})")
    example = ",".join(f"{t}={v}" for t, v in zip(sorted(text)[:2], (0, 1)))
    return (f"labels {_listing(text)} are not numbers; pass --label-map (e.g. --label-map {example}) or "
            f"--positive-label (e.g. --positive-label {sorted(text)[-1]})")


def _floats(text: str):
    values = [float(v) for v in text.split(",")]
    return values[0] if len(values) == 1 else np.array(values)


def _collect(src):
    blocks = list(src.iter_blocks(4096))
    if not blocks:
        raise ValueError("the source holds no records")
    return np.vstack([b for b, _ in blocks]), np.concatenate([np.asarray(t) for _, t in blocks])


def _class_domain(args):
    """The public class domain of the metric task for the learners on released statistics: the bundled
    data sets' labels (−1/+1), or the numbers of ``--label-map``; never read off the data."""
    if args.source == "imagesegments":
        from streams.image_segments import CLASSES

        return list(range(len(CLASSES)))
    if args.source in DATASETS:
        return [-1, 1]
    if args.label_map is not None:
        return sorted(set(_parse_label_map(args.label_map).values()))
    raise ValueError("--task metric with --algo stats/offstats needs the public class domain: pass --label-map "
                     "LABEL=NUMBER,... listing every class (it is never read off the data)")


def _make_learner(args, n_train: int, bounds):
    """The learner ``--algo`` names (:data:`onpair.algorithms.ALGORITHMS`), built from the flags it takes."""
    cls = ALGORITHMS[args.algo]
    online = args.algo in ONLINE
    seed = {"seed": args.seed} if online else {"random_state": args.seed}
    if issubclass(cls, (OnPairStats, OffPairStats)):
        if args.release_every is not None or args.mode != "ledger":
            raise ValueError(f"--release-every and --mode are for the output-perturbation learners; --algo "
                             f"{args.algo} releases class statistics")
        classes = _class_domain(args) if args.task == "metric" else None
        return cls(epsilon=args.epsilon, delta=args.delta, bounds=bounds, task=args.task, classes=classes, **seed)
    task = dict(task=args.task, constraint=args.constraint) if args.task == "metric" else {}
    parameters = inspect.signature(cls).parameters
    if "epsilon" not in parameters:  # the non-private twin (giga): no budget, no noise
        return cls(loss=args.loss, bounds=bounds, **task)
    kwargs = dict(epsilon=args.epsilon, delta=args.delta, loss=args.loss, bounds=bounds, **task, **seed)
    if "mode" in parameters:
        kwargs["mode"] = args.mode
    elif args.mode != "paper":
        raise ValueError(f"--algo {args.algo} has its paper's calibration only (Yang et al.'s eq. (5) for sgd): "
                         "pass --mode paper")
    if online:
        kwargs.update(n=n_train, **({"release_every": args.release_every} if args.release_every is not None else {}))
    elif "output" in parameters:
        # Paper mode releases the average iterate (Huai Alg. 3 line 8); the library mode the last one.
        kwargs["output"] = "average" if args.mode == "paper" else "last"
    return cls(**kwargs)


def _check_replay_args(args) -> None:
    """Usage-level checks with messages that name the flag (argparse only checks the types)."""
    import math

    if not (math.isfinite(args.test_fraction) and 0.0 < args.test_fraction < 1.0):
        raise ValueError(f"--test-fraction must lie strictly between 0 and 1, got {args.test_fraction}")
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.block_size < 1:
        raise ValueError(f"--block-size must be a positive integer, got {args.block_size}")
    if args.constraint is not None and args.task != "metric":
        raise ValueError("--constraint is for --task metric")
    if args.positive_label is not None and args.task == "metric":
        raise ValueError("--positive-label is for --task auc (the metric task keeps every class)")
    if args.label_map is not None and args.source in DATASETS:
        raise ValueError("--label-map is for CSV sources (the bundled data sets have their labels mapped already)")
    if args.positive_label is not None and args.source in DATASETS and args.source != "imagesegments":
        raise ValueError("--positive-label is for CSV sources and imagesegments (the other bundled data sets have "
                         "two classes, mapped already)")
    for flag, value in (("--delimiter", args.delimiter),):
        if len(value) != 1:
            raise ValueError(f"{flag} must be one character (e.g. --delimiter ';', or --delimiter tab), got {value!r}")
    if args.release_every is not None and args.release_every < 1:
        raise ValueError(f"--release-every must be a positive integer, got {args.release_every}")
    for flag, value in (("--lower", args.lower), ("--upper", args.upper)):
        if value is not None:
            try:
                _floats(value)
            except ValueError:
                raise ValueError(f"{flag} must be one number or comma-separated numbers, got {value!r}") from None
    import os

    if args.source not in DATASETS and not os.path.exists(args.source):
        raise ValueError(f"SOURCE {args.source!r} is neither a data set ({', '.join(DATASETS)}) nor an existing "
                         "CSV file")


def replay(args) -> dict:

    _check_replay_args(args)
    X, y, bounds, name = _load(args.source, args)
    order = np.random.default_rng(args.seed).permutation(len(y))  # a public (data-independent) split
    n_test = int(round(args.test_fraction * len(y)))
    if n_test < 2 or len(y) - n_test < 2:
        raise ValueError(f"--test-fraction {args.test_fraction} leaves too few records on one side")
    test, train = order[:n_test], order[n_test:]
    if args.task == "auc" and np.unique(y[test]).size < 2:  # before training: roc_auc would fail after it
        raise ValueError(f"{name}: the held-out part ({n_test} records, --test-fraction {args.test_fraction}) holds "
                         f"records of one class only ({_listing(np.unique(y[test]).tolist())}): the test AUC needs "
                         "both; a larger --test-fraction or another --seed")
    if args.algo in ("stats", "offstats"):
        if args.loss is not None:
            raise ValueError(f"--loss is for the pair-loss learners; --algo {args.algo} learns class statistics "
                             "(its model is the pairwise square-loss minimiser): drop --loss")
        # The objective reported: the pairwise square loss its AUC model minimises. The metric task's
        # discriminant metric minimises no pair loss (its scale is a convention): no loss, no objective.
        args.loss = "square" if args.task == "auc" else None
    elif args.loss is None:
        # Yang et al.'s algorithm is for non-smooth losses: its default (AUC and (11)); logistic otherwise.
        args.loss = "hinge" if args.algo == "sgd" else "logistic"
    learner = _make_learner(args, len(train), bounds)
    compiling = []  # seconds numba spent compiling kernels during the training (a first run only: then cached)
    from numba.core import event

    start = time.perf_counter()
    # Warnings go to stderr, once each and in the command's terms, so --json output on stdout stays clean.
    with warnings.catch_warnings(record=True) as caught, event.install_timer("numba:compile", compiling.append):
        warnings.simplefilter("always")
        if args.algo in ONLINE:
            with ProgressBar(len(train), label=f"{name} {args.algo}", stream=sys.stderr) as bar:
                for lo in range(0, len(train), args.block_size):
                    rows = train[lo:lo + args.block_size]
                    learner.learn_many(X[rows], y[rows])
                    bar.update(len(rows))
        else:
            learner.fit(X[train], y[train])
    seconds = time.perf_counter() - start
    compile_seconds = min(sum(compiling), seconds)
    _show_warnings(caught, args)
    if args.algo in ONLINE:
        model = learner.model
        report = learner.privacy_report() if learner.private else None
    else:
        model = learner.coef_
        report = learner.privacy_report_
    public_map = FeatureBounds(*bounds)
    Z_train, _ = public_map.transform(X[train])
    loss_name = args.loss
    if args.task == "metric":
        # 3-NN on the held-out records with the released metric (its PSD part), beside plain Euclidean
        # 3-NN on the same public-bounds map (the identity metric).
        Z_test, _ = public_map.transform(X[test])
        quality = {
            "knn_accuracy": knn_accuracy(learner.transform(X[train]), y[train], learner.transform(X[test]), y[test],
                                         k=3),
            "euclidean_knn_accuracy": knn_accuracy(Z_train, y[train], Z_test, y[test], k=3),
            "objective": metric_objective(model, Z_train, y[train], loss_name) if loss_name else None,
        }
    else:
        quality = {"auc": roc_auc(y[test], learner.decision_function(X[test])),
                   "objective": pairwise_risk(model, Z_train, y[train], loss_name)}
    result = {
        # loss: the learner's (null for stats/offstats, which take none); objective_loss: the objective's.
        "dataset": name, "task": args.task, "algo": args.algo,
        "loss": None if args.algo in ("stats", "offstats") else loss_name, "objective_loss": loss_name,
        "mode": args.mode,
        "n_train": int(len(train)), "n_test": int(n_test), "d": int(X.shape[1]),
        "epsilon": args.epsilon if report else None, "delta": args.delta if report else None,
        # The report has ρ keys only when every release has a ρ (the rule of onpair.privacy.reports).
        "rho_budget": report.get("rho_budget") if report else None,
        "rho_spent": report.get("rho_spent") if report else None,
        "epsilon_spent": report["epsilon_spent"] if report else None,
        # Releases: the learners on released statistics count theirs (one per block, or per record), one per row otherwise.
        "releases": (learner.n_releases if args.algo == "stats" else len(report["releases"])) if report else 0,
        **quality,
        # Records clipped to the bounds, counted without noise (a curator-only field of the report).
        **({"n_clipped": int(report["n_clipped"])} if report and "n_clipped" in report else {}),
        # seconds: the training's wall time; compile_seconds: numba's compiling within it (0 once the kernels
        # are cached); records_per_second: the warm rate, without the compiling.
        "seconds": seconds, "compile_seconds": compile_seconds,
        "records_per_second": len(train) / (seconds - compile_seconds) if seconds > compile_seconds else None,
    }
    if report is not None and "noise_dominated" in report:
        result["noise_dominated"] = bool(report["noise_dominated"])
        result["expected_cosine"] = report.get("expected_cosine")
    if report and "paper_epsilon" in report:
        result["paper_epsilon"] = report["paper_epsilon"]
    # The fields computed from the training records without noise, listed by the report builder's rule
    # (onpair.privacy.reports.mark_curator_only: its curator-only fields, n_clipped, and the replay's own).
    mark_curator_only(result, CURATOR_ONLY_RESULTS)
    # JSON has no NaN or infinity: a quantity that is not defined (e.g. ρ for Yang et al.'s (ε, δ)
    # claim, ε of a non-private model) is null.
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in result.items()}


#: The replay's own curator-only results: computed from the training records without noise (the k-NN
#: accuracies use the training records as the neighbours), for the data curator, not for publication.
CURATOR_ONLY_RESULTS = ("objective", "knn_accuracy", "euclidean_knn_accuracy")

#: The start of the learners' warning about records outside the bounds (onpair.core.fitting, onpair.core.stream).
CLIPPED = "records lay outside the declared feature bounds"


def _show_warnings(caught, args) -> None:
    """Each warning of a replay on stderr, once (a warning repeated by several models or records is one), the
    clipping warning in the command's terms (the flags that set the bounds, not the API's parameters)."""

    shown = set()
    for record in caught:
        if issubclass(record.category, NoiseDominatedWarning):
            continue  # the result says it: noise_dominated and expected_cosine
        text = str(record.message)
        if text.startswith(CLIPPED):
            where = ("--lower/--upper" if args.source not in DATASETS else
                     "the data set's documented bounds, streams.image_segments.BOUNDS" if args.source == "imagesegments"
                     else f"the data set's documented bounds, streams.uci.get_spec({args.source!r}).bounds")
            text = (f"records lay outside the public feature bounds ({where}) and were clipped to them (the "
                    "clipping is part of the mechanism). Take --lower and --upper from the data's documentation or "
                    "the features' physical ranges, never from the data: its minimum and maximum leak it. How "
                    "many were clipped is computed without noise: it is for you, not for publication.")
        if text not in shown:
            shown.add(text)
            print(f"onpair {args.command}: warning: {text}", file=sys.stderr)


def _print_human(result: dict) -> None:
    what = ("class statistics released" if result["algo"] in ("stats", "offstats")
            else f"{result['loss']} loss")
    print(f"{result['dataset']}: {result['algo']} ({what}), n_train = {result['n_train']}, "
          f"n_test = {result['n_test']}, d = {result['d']}")
    if result["task"] == "metric":
        print(f"  test 3-NN  {result['knn_accuracy']:.4f} with the released metric, "
              f"{result['euclidean_knn_accuracy']:.4f} Euclidean (public-bounds map); the neighbours are "
              "the training records: curator-only, not private")
    else:
        print(f"  test AUC   {result['auc']:.4f}")
    if result["objective"] is not None:
        print(f"  objective  {result['objective']:.4f} (pairwise {result['objective_loss']}-loss empirical risk of the "
              "released model on the training data: curator-only, not private)")
    if result["epsilon"] is not None and result["epsilon_spent"] is not None:
        rho = (f"rho {result['rho_spent']:.4g} of {result['rho_budget']:.4g}, "
               if result["rho_budget"] is not None else "")
        print(f"  privacy    epsilon {result['epsilon_spent']:.4g} spent (asked {result['epsilon']}) at delta "
              f"{result['delta']:g} ({rho}{result['releases']} release(s))")
    else:
        print("  privacy    none (non-private baseline)")
    if result.get("noise_dominated"):
        cosine = result["expected_cosine"]
        meaning = (f"expected cosine {cosine:.2f} between its direction and the noiseless one, below 1/2: the noise's "
                   f"power is about {1.0 / cosine ** 2 - 1.0:.1f} times the signal's" if cosine else
                   "expected cosine 0.00, the estimate's floor: the release is no longer than its noise alone "
                   "typically is; an estimate from the release's length, not a measured angle")
        advice = "more records or a larger epsilon help" + ("" if result["algo"] == "offstats" else
                                                            "; --algo offstats needs one release only")
        print(f"  warning    the released model is dominated by noise ({meaning}); the held-out score above is how it "
              f"really performs: {advice}")
    compiling = result.get("compile_seconds") or 0.0
    rate = "n/a" if result["records_per_second"] is None else f"{result['records_per_second']:,.0f}"
    print(f"  throughput {rate} records/s ({result['seconds']:.3f} s"
          + (f", of which {compiling:.3f} s compiling numba kernels (a first run only; they are cached): excluded)"
             if compiling > 0 else ")"))


def _experiment(args) -> int:

    try:
        try:
            figures = tuple(int(f) for f in args.figures.split(","))
        except ValueError:
            raise ValueError(f"--figures must be comma-separated figure numbers, got {args.figures!r}") from None
        unknown = [f for f in figures if f not in experiment.FIGURES]
        if unknown:
            raise ValueError(f"--figures: no figure {unknown} (AUC: 1-4, metric learning: 5-6)")
        if args.permutations < 1:
            raise ValueError(f"--permutations must be >= 1, got {args.permutations}")
        steps = sum(len(experiment.FIGURES[f][1]) for f in figures) * args.permutations
        with ProgressBar(steps, label="experiment huai", stream=sys.stderr) as bar:
            written = experiment.run(args.out, args.permutations, figures, progress=bar.update,
                                     scheduler=args.scheduler)
    except (ValueError, OSError) as exc:
        print(f"onpair experiment: error: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    if not any(p.endswith(".png") for p in written):
        print("(no plots: install matplotlib, e.g. pip install 'onpair[plots]')", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onpair", description="Differentially private pairwise learning on data streams.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    rp = sub.add_parser(
        "replay", help="stream a data set through a learner; print test AUC (or 3-NN accuracy), objective, privacy, speed",
        description="Replay a data set (or a CSV file) through a private pairwise learner. The split is a "
                    "public random permutation (--seed); the training part is streamed in blocks.")
    rp.add_argument("source", metavar="SOURCE", help=f"one of {', '.join(DATASETS)}, or a CSV path")
    rp.add_argument("--algo", choices=ALGORITHM_NAMES, default="stats",
                    help="learner (default stats: class statistics released once per public block)")
    rp.add_argument("--loss", choices=("logistic", "square", "hinge"), default=None,
                    help="pairwise loss of the pair-loss learners (default logistic; hinge: giga and sgd only; sgd "
                         "uses hinge unless square is given); stats/offstats learn class statistics and take none")
    rp.add_argument("--task", choices=("auc", "metric"), default="auc",
                    help="AUC maximisation (default) or metric learning (any number of classes; reports "
                         "3-NN accuracy with the released metric)")
    rp.add_argument("--constraint", choices=("frobenius", "psd", "nuclear", "psd_nuclear"), default=None,
                    help="metric task: constraint set of W (default frobenius; psd_nuclear for sgd)")
    rp.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter ε (default 1.0)")
    rp.add_argument("--delta", type=float, default=1e-5, help="privacy parameter δ (default 1e-5)")
    rp.add_argument("--mode", choices=("ledger", "paper"), default="ledger",
                    help="library calibration (ledger) or the paper's constants as printed")
    rp.add_argument("--release-every", type=int, default=None, metavar="K",
                    help="online learners: release every K records (default: rounds 64, 128, …, n)")
    rp.add_argument("--test-fraction", type=float, default=0.2, metavar="F", help="held-out share (default 0.2)")
    rp.add_argument("--seed", type=int, default=None,
                    help="split, order and noise seed, for reproducible experiments only: anyone who knows "
                         "it can remove the noise (default: fresh OS entropy)")
    rp.add_argument("--block-size", type=int, default=256, help="records per learn_many call (default 256)")
    rp.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    csv = rp.add_argument_group("CSV sources")
    csv.add_argument("--lower", help="public lower bounds: one number or one per feature, comma-separated")
    csv.add_argument("--upper", help="public upper bounds: one number or one per feature, comma-separated")
    csv.add_argument("--label-column", default="-1", metavar="INDEX|NAME",
                     help="the label column: an index (negative counts from the end; default -1, the last) or, "
                          "with --header, its name")
    csv.add_argument("--delimiter", default=",", type=_delimiter, metavar="CHAR",
                     help="the field separator (default ','; 'tab' for tabs)")
    csv.add_argument("--header", action="store_true", help="the first row holds column names")
    csv.add_argument("--label-map", default=None, metavar="LABEL=NUMBER,...",
                     help="read labels written as text: each label as written and the number it stands for, "
                          "e.g. --label-map no=0,yes=1 (a label not in the map is a malformed row)")
    csv.add_argument("--positive-label", default=None, metavar="LABEL",
                     help="the label of the positive class, as written (a number such as 1, or text such as "
                          "yes; with --label-map, a label or its number); every other label is negative "
                          "(default: the larger of exactly two values found, which makes the label values "
                          "part of what must be public)")
    csv.add_argument("--on-error", choices=("raise", "skip"), default="raise",
                     help="a malformed row stops the replay (raise) or is skipped and counted (skip)")
    ep = sub.add_parser(
        "experiment", help="reproduce a paper's experiments (tables, and plots with matplotlib)",
        description="Reproduce Huai et al.'s experiments (Figures 1-4 AUC, 5-6 metric learning): the paper's "
                    "constants and the library's defaults side by side. Writes huai_results.md and, with matplotlib, PNG plots.")
    ep.add_argument("paper", choices=("huai",), help="which paper's experiments")
    ep.add_argument("--out", default="experiments", help="output folder (default ./experiments)")
    ep.add_argument("--permutations", type=int, default=20, help="random permutations (default 20)")
    ep.add_argument("--figures", default="1,2,3,4,5,6",
                    help="comma-separated figure numbers (default 1,2,3,4,5,6; 5-6 are metric learning)")
    ep.add_argument("--scheduler", default=None, metavar="ADDRESS|local",
                    help="run the grid (figure x data set x permutation) as Dask tasks: 'local' starts a "
                         "LocalCluster, an address such as tcp://host:8786 uses a running scheduler; the "
                         "results are identical to the in-process run (needs pip install 'onpair[dask]')")
    sub.add_parser("audit", help="estimate a lower bound on the ε an algorithm really has (onpair audit -h)",
                   add_help=False)
    fp = sub.add_parser("fetch", help="download UCI data sets and check their sha256", add_help=False)
    fp.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "fetch":
        from streams.fetch import main as fetch_main

        return fetch_main(argv[1:])
    if argv and argv[0] == "audit":
        _load_commands()
        return audit_main(argv[1:])
    args = build_parser().parse_args(argv)
    _load_commands()
    if args.command == "experiment":
        return _experiment(args)
    try:
        result = replay(args)
    except (ValueError, OSError) as exc:
        print(f"onpair {args.command}: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result))
    else:
        _print_human(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
