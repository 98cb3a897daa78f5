"""Prototype measurements of private range discovery (issue 24): the finder alone, and its effect on the
models that exist today, with no library edits.

Protocol (every section): ε = 1, δ = 1e-5 for the whole pipeline; ρ = rho_from_dp(1, 1e-5, "gaussian");
the finder (:func:`onpair.privacy.ranges.find_bounds`, defaults) gets ρ_range = 0.2·ρ on the first m = 500
records (m = 250 and 500 on Phishing's 1,250; 500 and 1,000 at d = 20), the model the rest, ρ_model = ρ − (what the finder spent), given to
it as ε_model = eps_from_rho(ρ_model, δ, "gaussian"); the composed ε of the two (exact for Gaussian
mechanisms: μ-GDP with μ = √(2ρ_total)) is printed. "Discovered" streams hold the first m records
unreleased (predictions during the warm-up: the data-independent score 0), find the box, then learn
them and every later record once in it.

1. **The finder alone** (``geometry``): blocks of m = 500 records whose features fill 1/1000 of the
   declared box [0, 1000] (the 0.5–99.5 % range of the distribution is 1 wide), centred at 500 or at a
   random position in [50, 950], d ∈ {2, 9, 18, 50, 100}, 5 distributions; the declared width over the
   found width (median and 10 % quantile over features), the share of fresh records inside the box, the
   share of features left at the declared box; beside two prototypes of the alternatives (a log-scale
   histogram of distances from the box's centre, as Google's ApproxBounds; a linear location histogram
   then a log-scale width around it), run at the same budget.
2. **Synthetic streams** (``streams``): 10,000 records, two Gaussian classes (bench/studies/statistics_defaults.py's
   generator, d ∈ {5, 20}, data in [0, 1] at 3 standard deviations) and ``streams.synthetic``'s "binary"
   layout (d = 9, data in [−1, 1]); OnPairStats (defaults: banded Toeplitz, square model) given (a) the
   tight box, (b) a box 1,000× wider, centred on the data or with the data at a random position (per
   feature, in its middle 90 %), (c) the same loose box with discovery; progressive AUC (predict, then
   learn), seeds 0…S−1.
3. **Phishing** (``phishing``): river's, bounds (0, 1) (documented) and a box 1,000× wider around them,
   river's progressive ROCAUC with PrivatePairwiseClassifier (default learner "stats").
4. **ImageSegments** (``imagesegments``): the documented bounds (``streams.image_segments``) as the loose
   box, the data's 0.5–99.5 % quantiles as the oracle; one-vs-rest AUC (mean over the 7 classes) from one
   release of the 7-class statistics (sensitivity 2, the defaults' weights; m = 500), (i) progressive over river's
   order with OnPairStats(task="metric") and one-vs-rest square models as post-processing, (ii) one
   release on 80 % of the records, test AUC on 20 %, 20 random splits.
5. **The private scaler** (``scaler``): river's PrivateStandardScaler | PrivatePairwiseClassifier(bounds=(−3, 3))
   on Phishing and on the 1,000×-loose synthetic stream (d = 5, 2,000 records), budget shares
   scaler 0.3 / model 0.7 (and range 0.2 / scaler 0.24 / model 0.56 with discovery), with the fixed
   VARIANCE_FLOOR = 1e-3 and without it (floor 1e-12, set on the module at run time: no library edit).

Run: ``.venv/bin/python bench/studies/ranges_prototype.py [--sections geometry,streams,...] [--seeds 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import norm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench: its shared modules
sys.path.insert(0, str(HERE.parents[1]))  # the repository: streams

from onpair import OnPairStats  # noqa: E402
from onpair.evaluation import roc_auc  # noqa: E402
from onpair.privacy import eps_from_rho, rho_from_dp  # noqa: E402
from onpair.privacy.ranges import find_bounds, range_histograms  # noqa: E402
from shared import one_vs_rest_models, ovr_auc, two_gaussian_classes  # noqa: E402

EPSILON, DELTA = 1.0, 1e-5
RHO = rho_from_dp(EPSILON, DELTA, method="gaussian")
RANGE_SHARE = 0.2
WARMUP = 500
LOOSE = 1000.0


def split_budget(found_rho: float):
    """ε of the model given the finder's spend, and the composed ε (Gaussian composition, exact)."""
    rho_model = (RHO - found_rho) * (1.0 - 1e-9)
    eps_model = eps_from_rho(rho_model, DELTA, method="gaussian")
    rho_used = rho_from_dp(eps_model, DELTA, method="gaussian") + found_rho
    return eps_model, eps_from_rho(rho_used, DELTA, method="gaussian")


# -- 1. the finder alone, beside two prototypes of the alternatives --------------------------------------

def _extreme_run(noisy, sigma, beta):
    passing = np.flatnonzero(noisy > sigma * norm.isf(beta / noisy.size))
    return None if passing.size == 0 else (passing[0], passing[-1])


def _log_edges(lo, hi, centre, octaves):
    left = [centre - (centre - lo) * 2.0 ** -j for j in range(octaves + 1)]
    right = [centre + (hi - centre) * 2.0 ** -j for j in range(octaves, -1, -1)]
    return np.array(left + right)


def _edge_counts(x, edges):
    inside = (x >= edges[0]) & (x <= edges[-1])
    index = np.clip(np.searchsorted(edges, x[inside], side="right") - 1, 0, edges.size - 2)
    return np.bincount(index, minlength=edges.size - 1)


def prototype_log(X, lo, hi, rng, octaves=14, beta=0.05):
    """ApproxBounds-like: signed power-of-two bins of the distance from the box's centre, one level; the
    outermost bins whose noisy counts clear the threshold give the bounds (prototype, not the library's)."""
    m, d = X.shape
    sigma = math.sqrt(2 * d) / math.sqrt(2 * RANGE_SHARE * RHO)
    lower, upper = lo.copy(), hi.copy()
    for k in range(d):
        edges = _log_edges(lo[k], hi[k], 0.5 * (lo[k] + hi[k]), octaves)
        run = _extreme_run(_edge_counts(X[:, k], edges) + sigma * rng.standard_normal(edges.size - 1), sigma, beta)
        if run is not None:
            lower[k], upper[k] = edges[run[0]], edges[run[1] + 1]
    return lower, upper


def prototype_location_log(X, lo, hi, rng, bins=32, octaves=12, beta=0.05):
    """A linear location histogram (the passing bins), then signed log-scale bins around its centre
    (two levels at ρ/2 each; prototype)."""
    m, d = X.shape
    sigma = math.sqrt(2 * d) / math.sqrt(RANGE_SHARE * RHO)
    counts = range_histograms(X, lo, hi, bins)
    lower, upper = lo.copy(), hi.copy()
    for k in range(d):
        run = _extreme_run(counts[k] + sigma * rng.standard_normal(bins), sigma, beta)
        step = (hi[k] - lo[k]) / bins
        a, b = (lo[k], hi[k]) if run is None else (lo[k] + run[0] * step, lo[k] + (run[1] + 1) * step)
        centre = 0.5 * (a + b)
        a, b = max(lo[k], a - step), min(hi[k], b + step)
        edges = _log_edges(a, b, centre, octaves)
        run2 = _extreme_run(_edge_counts(X[:, k], edges) + sigma * rng.standard_normal(edges.size - 1), sigma, beta)
        lower[k], upper[k] = (a, b) if run2 is None else (edges[run2[0]], edges[run2[1] + 1])
    return lower, upper


def _draw(name, rng, shape):
    if name == "gaussian":
        return rng.standard_normal(shape)
    if name == "exponential":
        return rng.exponential(1.0, shape)
    if name == "student-t3":
        return rng.standard_t(3, shape)
    if name == "bimodal":
        return np.where(rng.random(shape) < 0.5, -2.0, 2.0) + 0.5 * rng.standard_normal(shape)
    return (rng.random(shape) < 0.3).astype(float)  # binary


DISTRIBUTIONS = ("gaussian", "exponential", "student-t3", "bimodal", "binary")


def geometry_table(quick: bool) -> list[str]:
    dims = (2, 18, 100) if quick else (2, 9, 18, 50, 100)
    repeats = 4 if quick else 12
    methods = {"descent (library)": None, "log from the centre (ApproxBounds-like)": prototype_log,
               "location, then log width": prototype_location_log}
    lines = ["| d | placement | method | width shrink, median | shrink, 10 % quantile | records inside | "
             "features at the declared box |", "|---|---|---|---|---|---|---|"]
    for d in dims:
        for place in ("centred", "off-centre"):
            stats = {name: ([], [], []) for name in methods}
            for rep in range(repeats):
                for dist in DISTRIBUTIONS:
                    rng = np.random.default_rng([d, rep, DISTRIBUTIONS.index(dist), place == "centred"])
                    reference = _draw(dist, np.random.default_rng(99), 200_000)
                    q0, q1 = np.quantile(reference, [0.005, 0.995])
                    scale = 1.0 / (q1 - q0)  # the data's 0.5–99.5 % range is 1 wide: 1/1000 of the box
                    where = np.full(d, 500.0) if place == "centred" else rng.uniform(50.0, 950.0, d)
                    shift = where - 0.5 * (q0 + q1) * scale
                    X = _draw(dist, rng, (WARMUP, d)) * scale + shift
                    fresh = _draw(dist, rng, (4000, d)) * scale + shift
                    lo, hi = np.zeros(d), np.full(d, LOOSE)
                    for name, method in methods.items():
                        noise = np.random.default_rng([7, d, rep, DISTRIBUTIONS.index(dist)])
                        if method is None:
                            found = find_bounds(X, lo, hi, RANGE_SHARE * RHO, random_state=noise)
                            a, b = found.lower, found.upper
                        else:
                            a, b = method(X, lo, hi, noise)
                        shrink, inside, fell = stats[name]
                        shrink.extend((LOOSE / (b - a)).tolist())
                        inside.append(float(np.mean((fresh >= a) & (fresh <= b))))
                        fell.append(float(np.mean(b - a >= LOOSE * (1 - 1e-12))))
            for name in methods:
                shrink, inside, fell = (np.asarray(v) for v in stats[name])
                lines.append(f"| {d} | {place} | {name} | {np.median(shrink):.0f} | {np.quantile(shrink, 0.1):.0f} | "
                             f"{inside.mean():.3f} | {fell.mean():.2f} |")
            print(lines[-3], lines[-2], lines[-1], sep="\n", flush=True)
    return lines


# -- 2. synthetic streams -----------------------------------------------------------------------------------

def progressive_stats(X, y, lower, upper, eps, seed, warmup=0):
    """Progressive AUC of OnPairStats (score 0 during the warm-up, whose records are learned after it)."""
    learner = OnPairStats(epsilon=eps, delta=DELTA, bounds=(lower, upper), seed=seed)
    n = len(y)
    scores = np.zeros(n)
    labels = y > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if warmup:
            learner.learn_many(X[:warmup], labels[:warmup])
        for i in range(warmup, n):
            if learner.dimension is not None:
                scores[i] = float(learner.feature_bounds.map_one(X[i]) @ learner.model)
            learner.learn_one(X[i], bool(labels[i]))
    return roc_auc(y, scores), roc_auc(y[warmup:], scores[warmup:]), learner.privacy_report()["rho_spent"]


def gaussian_stream(seed, d, n):
    return two_gaussian_classes(seed, d, n, 0.0, 3.0)  # data in [0, 1]: the tight box


def binary_layout_stream(seed, n):
    from streams.synthetic import BOUNDS, noise_feature_classes
    X, y = noise_feature_classes("binary", n, seed=seed)
    return X, np.where(y > 0, 1, -1), BOUNDS


def loose_box(tight_lo, tight_hi, d, place, seed):
    """A box LOOSE× wider than the tight one, centred on it or with it at a random position (public)."""
    tight_lo, tight_hi = np.broadcast_to(tight_lo, (d,)), np.broadcast_to(tight_hi, (d,))
    width = (tight_hi - tight_lo) * LOOSE
    where = 0.5 * np.ones(d) if place == "centred" else np.random.default_rng([seed, 5]).uniform(0.05, 0.95, d)
    lower = tight_lo - where * (width - (tight_hi - tight_lo))
    return lower, lower + width


def streams_table(seeds: int, quick: bool) -> list[str]:
    n = 4000 if quick else 10_000
    cases = [("Gaussian classes, d = 5", lambda s: (*gaussian_stream(s, 5, n), (0.0, 1.0)), (WARMUP,)),
             ("Gaussian classes, d = 20", lambda s: (*gaussian_stream(s, 20, n), (0.0, 1.0)), (WARMUP, 1000)),
             ("binary layout, d = 9", lambda s: binary_layout_stream(s, n), (WARMUP,))]
    lines = [f"| stream ({n:,} records) | box | progressive AUC (all) | after the warm-up | composed ε |",
             "|---|---|---|---|---|"]
    for name, make, warmups in cases:
        rows = {}
        for seed in range(seeds):
            X, y, (tlo, thi) = make(seed)
            d = X.shape[1]
            rows.setdefault("tight", []).append((*progressive_stats(X, y, tlo, thi, EPSILON, seed)[:2], EPSILON))
            for place in ("centred", "off-centre"):
                lo, hi = loose_box(tlo, thi, d, place, seed)
                rows.setdefault(f"1,000× wider, {place}", []).append(
                    (*progressive_stats(X, y, lo, hi, EPSILON, seed)[:2], EPSILON))
                for m in warmups:
                    found = find_bounds(X[:m], lo, hi, RANGE_SHARE * RHO, random_state=[seed, 11])
                    eps_model, eps_total = split_budget(found.rho)
                    auc, after, _ = progressive_stats(X, y, found.lower, found.upper, eps_model, seed, warmup=m)
                    rows.setdefault(f"1,000× wider, {place}, discovered (m = {m})", []).append((auc, after, eps_total))
                    print(f"  {name} seed {seed} {place} m = {m}: shrink median {np.median(found.shrink):.0f}, "
                          f"fallback {found.fallback.mean():.2f}, levels {found.params['levels_run']}", flush=True)
        for box, values in rows.items():
            v = np.asarray(values)
            lines.append(f"| {name} | {box} | {v[:, 0].mean():.3f} ± {v[:, 0].std():.3f} | {v[:, 1].mean():.3f} | "
                         f"{v[:, 2].max():.4f} |")
            print(lines[-1], flush=True)
    return lines


# -- 3. Phishing (river) ------------------------------------------------------------------------------------

class Discovering:
    """Prototype of ``discover_bounds=m`` for river (bench only): hold the first m records unreleased
    (predict 0.5), find the box on them, build the model in it, learn them, then every later record."""

    def __init__(self, make_model, features, lower, upper, warmup, rho_range, seed):
        self.make_model, self.features, self.warmup = make_model, list(features), warmup
        self.lower, self.upper, self.rho_range, self.seed = lower, upper, rho_range, seed
        self.held, self.model, self.found = [], None, None

    def predict_proba_one(self, x):
        if self.model is None:
            return {False: 0.5, True: 0.5}
        return self.model.predict_proba_one(x)

    def learn_one(self, x, y):
        if self.model is not None:
            self.model.learn_one(x, y)
            return
        self.held.append((x, y))
        if len(self.held) == self.warmup:
            X = np.array([[float(r[f]) for f in self.features] for r, _ in self.held])
            self.found = find_bounds(X, self.lower, self.upper, self.rho_range, random_state=[self.seed, 13])
            self.model = self.make_model(self.found)
            for r, label in self.held:
                self.model.learn_one(r, label)
            self.held = []


def river_auc(data, model, skip=0):
    """river's progressive ROCAUC; with ``skip``, also the ROCAUC of the records after the first ``skip``."""
    from river import metrics
    metric, after = metrics.ROCAUC(), metrics.ROCAUC()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (x, y) in enumerate(data):
            p = model.predict_proba_one(x)
            metric.update(y, p)
            if i >= skip:
                after.update(y, p)
            model.learn_one(x, y)
    return (metric.get(), after.get()) if skip else metric.get()


def phishing_table(seeds: int) -> list[str]:
    from river import datasets

    from onpair.river import PrivatePairwiseClassifier
    data = list(datasets.Phishing())
    features = sorted(data[0][0])
    d = len(features)
    lines = ["| Phishing (1,250 records, d = 9) | box | progressive ROCAUC | after the first m records (model "
             "alone: the same records) | composed ε |", "|---|---|---|---|---|"]
    boxes = {"documented (0, 1)": (np.zeros(d), np.ones(d)), "1,000× wider, centred": loose_box(0.0, 1.0, d, "centred", 0)}
    for (box_name, (lo, hi)), m in [(item, m) for item in boxes.items() for m in (250, 500)]:
        plain, disc = [], []
        for seed in range(seeds):
            plain.append(river_auc(data, PrivatePairwiseClassifier(epsilon=EPSILON, delta=DELTA, bounds=(lo, hi),
                                                                    features=features, seed=seed), skip=m))

            def make(found, seed=seed):
                eps_model, eps_total = split_budget(found.rho)
                make.eps_total = eps_total
                return PrivatePairwiseClassifier(epsilon=eps_model, delta=DELTA, bounds=found.bounds,
                                                 features=features, seed=seed)
            disc.append(river_auc(data, Discovering(make, features, lo, hi, m, RANGE_SHARE * RHO, seed), skip=m))
        plain, disc = np.asarray(plain), np.asarray(disc)
        lines.append(f"| PrivatePairwiseClassifier | {box_name} | {plain[:, 0].mean():.3f} ± {plain[:, 0].std():.3f} | "
                     f"{plain[:, 1].mean():.3f} (m = {m}) | {EPSILON} |")
        lines.append(f"| PrivatePairwiseClassifier | {box_name}, discovered (m = {m}) | {disc[:, 0].mean():.3f} ± "
                     f"{disc[:, 0].std():.3f} | {disc[:, 1].mean():.3f} | {make.eps_total:.4f} |")
        print(lines[-2], lines[-1], sep="\n", flush=True)
    return lines


# -- 4. ImageSegments -----------------------------------------------------------------------------------------

def imagesegments_table(seeds: int, splits: int) -> list[str]:
    from onpair import FeatureBounds
    from onpair.statistics._kernels import statistics_total
    from onpair.statistics.model import DEFAULT_WEIGHTS
    from onpair.statistics.model import class_statistics
    from onpair.privacy.gaussian import sigma_for_rho
    from onpair.privacy.statistics_sensitivity import statistics_sensitivity
    from streams.image_segments import CLASSES, load_image_segments

    X, labels, (lower, upper) = load_image_segments()
    codes = np.array([CLASSES.index(v) for v in labels])
    n, d = X.shape
    C = len(CLASSES)
    oracle = np.quantile(X, [0.005, 0.995], axis=0)
    oracle[1] = np.maximum(oracle[1], oracle[0] + 1e-9)
    lines = ["| ImageSegments (2,310 records, d = 18, 7 classes) | box | one-vs-rest AUC, mean | composed ε |",
             "|---|---|---|---|"]

    def progressive(lo, hi, eps, seed, warmup=0):
        learner = OnPairStats(epsilon=eps, delta=DELTA, task="metric", classes=list(CLASSES), bounds=(lo, hi), seed=seed)
        scores = np.zeros((n, C))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if warmup:
                learner.learn_many(X[:warmup], list(labels[:warmup]))
            for i in range(warmup, n):
                if learner.dimension is not None:
                    scores[i] = one_vs_rest_models(learner.class_statistics()) @ learner.feature_bounds.map_one(X[i])
                learner.learn_one(X[i], labels[i])
        return ovr_auc(scores, codes, C)

    results = {}
    for seed in range(seeds):
        results.setdefault("progressive | documented", []).append((progressive(lower, upper, EPSILON, seed), EPSILON))
        results.setdefault("progressive | oracle 0.5–99.5 % quantiles", []).append(
            (progressive(oracle[0], oracle[1], EPSILON, seed), EPSILON))
        found = find_bounds(X[:WARMUP], lower, upper, RANGE_SHARE * RHO, random_state=[seed, 17])
        eps_model, eps_total = split_budget(found.rho)
        results.setdefault(f"progressive | documented, discovered (m = {WARMUP})", []).append(
            (progressive(found.lower, found.upper, eps_model, seed, warmup=WARMUP), eps_total))
        print(f"  seed {seed}: shrink {np.round(found.shrink, 1).tolist()}", flush=True)

    weights = DEFAULT_WEIGHTS
    sensitivity = statistics_sensitivity(*weights)

    def one_release(train, test, lo, hi, rho, rng):
        fb = FeatureBounds(lo, hi)
        Z, _ = fb.transform(X[train])
        sigma = sigma_for_rho(sensitivity, rho)
        total = statistics_total(Z, codes[train], C, weights)
        stats = class_statistics(total + sigma * rng.standard_normal(total.size), C, d, weights, sigma ** 2)
        return ovr_auc(fb.transform(X[test])[0] @ one_vs_rest_models(stats).T, codes[test], C)

    for split in range(splits):
        rng = np.random.default_rng([split, 23])
        order = rng.permutation(n)
        train, test = order[: int(0.8 * n)], order[int(0.8 * n):]
        results.setdefault("one release, 80/20 | documented", []).append(
            (one_release(train, test, lower, upper, RHO, rng), EPSILON))
        results.setdefault("one release, 80/20 | oracle 0.5–99.5 % quantiles", []).append(
            (one_release(train, test, oracle[0], oracle[1], RHO, rng), EPSILON))
        found = find_bounds(X[train[:WARMUP]], lower, upper, RANGE_SHARE * RHO, random_state=rng)
        rho_model = (RHO - found.rho) * (1 - 1e-9)
        results.setdefault(f"one release, 80/20 | documented, discovered (m = {WARMUP})", []).append(
            (one_release(train, test, found.lower, found.upper, rho_model, rng),
             eps_from_rho(found.rho + rho_model, DELTA, method="gaussian")))
    for key, values in results.items():
        protocol, box = key.split(" | ")
        v = np.asarray(values)
        lines.append(f"| {protocol} | {box} | {v[:, 0].mean():.3f} ± {v[:, 0].std():.3f} | {v[:, 1].max():.4f} |")
        print(lines[-1], flush=True)
    return lines


# -- 5. the private scaler ----------------------------------------------------------------------------------

def scaler_table(seeds: int) -> list[str]:
    from river import datasets

    import onpair.preprocessing as preprocessing
    from onpair.river import PrivatePairwiseClassifier, PrivateStandardScaler
    phishing = list(datasets.Phishing())
    pf = sorted(phishing[0][0])
    Xs, ys = gaussian_stream(3, 5, 2000)
    slo, shi = loose_box(0.0, 1.0, 5, "off-centre", 3)
    sf = [f"x{k}" for k in range(5)]
    synthetic = [({f: float(v) for f, v in zip(sf, row)}, bool(label > 0)) for row, label in zip(Xs, ys)]
    cases = [("Phishing, bounds (0, 1)", phishing, pf, np.zeros(9), np.ones(9), 250),
             ("Gaussian d = 5, 2,000 records, box 1,000× wider (off-centre)", synthetic, sf, slo, shi, WARMUP)]
    lines = ["| stream | pipeline | progressive ROCAUC | composed ε |", "|---|---|---|---|"]
    original_floor = preprocessing.VARIANCE_FLOOR

    def eps_of(share):
        return eps_from_rho(share * RHO * (1 - 1e-9), DELTA, method="gaussian")

    try:
        for name, data, features, lo, hi, m in cases:
            rows = {}
            for seed in range(seeds):
                rows.setdefault("model alone, ε = 1", []).append(river_auc(data, PrivatePairwiseClassifier(
                    epsilon=EPSILON, bounds=(lo, hi), features=features, seed=seed)))
                rows.setdefault("model alone, ρ share 0.7 (ε = %.2f)" % eps_of(0.7), []).append(river_auc(
                    data, PrivatePairwiseClassifier(epsilon=eps_of(0.7), bounds=(lo, hi), features=features, seed=seed)))
                for floor in (original_floor, 1e-12):
                    preprocessing.VARIANCE_FLOOR = floor
                    pipe = (PrivateStandardScaler(bounds=(lo, hi), features=features, epsilon=eps_of(0.3), seed=seed)
                            | PrivatePairwiseClassifier(epsilon=eps_of(0.7), bounds=(-3.0, 3.0), features=features,
                                                        seed=seed))
                    rows.setdefault(f"scaler 0.3 (floor {floor:g}) | model 0.7", []).append(river_auc(data, pipe))

                    def make_pipe(found, seed=seed):
                        return (PrivateStandardScaler(bounds=found.bounds, features=features, epsilon=eps_of(0.24),
                                                      seed=seed)
                                | PrivatePairwiseClassifier(epsilon=eps_of(0.56), bounds=(-3.0, 3.0),
                                                            features=features, seed=seed))
                    rows.setdefault(f"range 0.2 → scaler 0.24 (floor {floor:g}) | model 0.56", []).append(river_auc(
                        data, Discovering(make_pipe, features, lo, hi, m, RANGE_SHARE * RHO, seed)))
                preprocessing.VARIANCE_FLOOR = original_floor

                def make_model(found, seed=seed):
                    return PrivatePairwiseClassifier(epsilon=split_budget(found.rho)[0], bounds=found.bounds,
                                                     features=features, seed=seed)
                rows.setdefault("range 0.2 → model 0.8", []).append(river_auc(
                    data, Discovering(make_model, features, lo, hi, m, RANGE_SHARE * RHO, seed)))
            for pipeline, values in rows.items():
                lines.append(f"| {name} | {pipeline} | {np.mean(values):.3f} ± {np.std(values):.3f} | ≤ {EPSILON} |")
                print(lines[-1], flush=True)
    finally:
        preprocessing.VARIANCE_FLOOR = original_floor
    return lines


SECTIONS = ("geometry", "streams", "phishing", "imagesegments", "scaler")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    started = time.time()
    out = []
    for section in args.sections.split(","):
        print(f"## {section}", flush=True)
        if section == "geometry":
            out += geometry_table(args.quick)
        elif section == "streams":
            out += streams_table(args.seeds, args.quick)
        elif section == "phishing":
            out += phishing_table(args.seeds)
        elif section == "imagesegments":
            out += imagesegments_table(args.seeds, args.splits)
        elif section == "scaler":
            out += scaler_table(args.seeds)
        else:
            raise SystemExit(f"unknown section {section!r}; choose from {SECTIONS}")
        out.append("")
    print("\n".join(out))
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
