"""Every privacy report field is public by construction or listed under ``curator_only`` (issue 20, item 2).

The classes are discovered, not listed: every class in ``onpair.__all__``, ``onpair.river.__all__`` and
``onpair.preprocessing`` that reports (``privacy_report()`` or ``privacy_report_``) must have builders
below, or the test fails. Each builder runs the class in several configurations (private and not, both
tasks, each mechanism, declared and undeclared river features) on two different data sets.

``PUBLIC_FIELDS`` is this test's own review of the report keys: each is allowed with the reason it is a
function of the public inputs (parameters, bounds, the stream length n) and of what was released. Every
other key must be in the report's ``curator_only`` list; the fields known to come from the records without
noise must be listed there whenever they are present; and the list itself must not depend on the data.
"""

import inspect
import warnings

import numpy as np
import pytest

import onpair
import onpair.preprocessing
import onpair.river
from onpair.privacy.reports import CURATOR_ONLY_FIELDS, public_report

#: Report keys that are public, with why (a function of the public inputs and the releases only).
PUBLIC_FIELDS = {
    "algorithm": "the class's name",
    "mode": "a parameter (or the class's only mode)",
    "accounting": "the (ε, δ) ↔ ρ conversion: a parameter",
    "epsilon": "a parameter", "delta": "a parameter",
    "rho_budget": "a function of ε, δ and the conversion",
    "rho_spent": "the planned costs of the releases made; their number is a function of n and the schedule",
    "rho_remaining": "budget minus spent",
    "epsilon_spent": "a function of rho_spent and δ",
    "epsilon_per_position": "a function of the per-position ρ and δ",
    "rho_per_position": "the planned costs of the releases made at one position: as rho_spent",
    "releases": "per release: round, sensitivity, σ, ρ (public functions of n, the parameters, the ledger)",
    "n_seen": "the stream length n: public under replacement of one record",
    "frozen": "a function of n and the schedule or horizon",
    "status": "built from frozen, the schedule and noise_dominated",
    "schedule": "the release schedule or mechanism's description: parameters, n, and the dimension",
    "buffer": "the buffer parameter (kind and size)",
    "sensitivity_now": "the ledger bound: public (onpair.privacy.ledger), or the statistics' Δ",
    "noise_dominated": "expected_cosine below 1/2: post-processing",
    "expected_cosine": "the released vector's norm against the noise's public power (onpair.privacy.signal)",
    "noise_sd": "the current release's noise scale: a function of the mechanism and n",
    "private": "a parameter",
    "record_level": "the cost of a record learned k times: a function of ρ, n, k and the mechanism",
    "curator_only": "the names of the curator-only fields: a function of the class and its parameters",
    "learner": "a parameter (river wrapper)",
    "lineage": "the ρ numbers of a model and its clones (their accountants), and how many there are",
    "features": "the declared feature names (curator-only when read off the first record)",
    "model_type": "a parameter", "ridge": "post-processing of the release (or the given λ)",
    "n_classes": "2, or the size of the declared class domain",
    "output": "a parameter", "strong_convexity": "a function of λ, n and the loss",
    "T": "a parameter or a function of n", "step_sizes": "a parameter or a function of the public constants",
    "lam": "a parameter, or the public smallest value the condition allows (a function of n, ε, d)",
    "radius": "a parameter", "loss": "a parameter", "task": "a parameter",
    "eta": "a parameter or a function of n", "lipschitz": "a function of the loss and the radius",
    "privacy_claim": "a text built from the parameters", "claim_probability": "a function of δ",
    "sensitivity_in_proof": "a function of n and the constants", "sigma_in_proof": "a function of n, ε, δ",
    "sensitivity_diameter": "a function of the radius", "epsilon_diameter": "a function of σ and the radius",
    "epsilon_proof": "a function of σ and the proof's sensitivity", "paper_epsilon": "a parameter",
    "objective": "a parameter", "fit_intercept": "a parameter",
    "lam_requested": "a parameter", "lam_raised": "compares the parameter with the public smallest value",
    "regulariser_sum_units": "a function of λ and n", "epsilon_curvature": "a function of Λ, the rank and trace",
    "epsilon_noise": "ε minus the other shares", "epsilon_output": "a share of ε",
    "delta_objective": "a share of δ", "delta_output": "a share of δ",
    "gradient_sensitivity": "a function of n and the objective", "noise_dim": "the parameter dimension",
    "noise_quantile": "a function of δ and the noise dimension",
    "curvature_rank": "a function of d and n", "curvature_trace": "a function of n and the loss",
    "stopping_rule": "AMP's γ, a parameter (objective perturbation's depends on ‖b‖: curator-only there)",
    "sensitivity": "a function of d (the scaler's 2√d)", "sigma": "a function of the sensitivity, ε, δ",
}

#: Keys computed from the records (or the unreleased noise) without noise: always under curator_only.
ALWAYS_CURATOR_ONLY = set(CURATOR_ONLY_FIELDS)


def data(seed, n=80, d=3, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    X[0, 0] = 1.5  # one record outside the bounds: n_clipped = 1
    y = (X[:, 0] + 0.2 * rng.standard_normal(n) > 0.5).astype(int) if classes == 2 else rng.integers(0, classes, n)
    return X, y


def dicts(X, y, onehot=False):
    out = []
    for i, (row, label) in enumerate(zip(X, y)):
        record = {f"f{k}": float(v) for k, v in enumerate(row)}
        if onehot:
            record[f"city={'Paris' if i % 3 else 'Lyon'}"] = 1.0
        out.append((record, bool(label)))
    return out


# -- builders: class name → functions (seed → report) -----------------------------------------------------
def online(cls, **kwargs):
    def build(seed):
        X, y = data(seed, classes=3 if kwargs.get("task") == "metric" else 2)
        learner = cls(bounds=(0.0, 1.0), seed=0, **kwargs)
        learner.learn_many(X, y)
        return learner.privacy_report(passes=2, order="any")
    return build


def offline(cls, **kwargs):
    def build(seed):
        X, y = data(seed, classes=3 if kwargs.get("task") == "metric" else 2)
        return cls(bounds=(0.0, 1.0), random_state=0, **kwargs).fit(X, y).privacy_report_
    return build


def distributed(cls):
    def build(seed):
        da = pytest.importorskip("dask.array", reason="the dask extra (make install installs it)")
        X, y = data(seed)
        return cls(bounds=(0.0, 1.0), random_state=0).fit(da.from_array(X, chunks=30),
                                                            da.from_array(y, chunks=30)).privacy_report_
    return build


def river_classifier(**kwargs):
    def build(seed):
        X, y = data(seed)
        model = onpair.river.PrivatePairwiseClassifier(bounds=(0.0, 1.0), seed=0, **kwargs)
        domain = kwargs.get("classes", (False, True))
        for x, label in dicts(X, y, onehot=kwargs.get("features") is None):
            model.learn_one(x, domain[int(label)])
        return model.privacy_report()
    return build


def river_multiclass(**kwargs):
    def build(seed):
        X, y = data(seed, classes=3)
        model = onpair.river.PrivateClassifier(classes=["a", "b", "c"], bounds=(0.0, 1.0), seed=0, **kwargs)
        for (x, _), label in zip(dicts(X, y), y):
            model.learn_one(x, "abc"[int(label)])
        return model.privacy_report()
    return build


def river_metric(learner, **kwargs):
    def build(seed):
        X, y = data(seed, classes=3)
        model = onpair.river.MetricTransformer(learner(), **kwargs)
        for (x, _), label in zip(dicts(X, y), y):
            model.learn_one(x, int(label))
        return model.privacy_report()
    return build


def river_scaler(**kwargs):
    def build(seed):
        X, y = data(seed)
        model = onpair.river.PrivateStandardScaler(bounds=(0.0, 1.0), seed=0, **kwargs)
        for x, _ in dicts(X, y):
            model.learn_one(x)
        return model.privacy_report(passes=2)
    return build


def sklearn_scaler(seed):
    X, _ = data(seed)
    return onpair.preprocessing.PrivateStandardScaler(bounds=(0.0, 1.0), random_state=0).fit(X).privacy_report_


FEATURES = ["f0", "f1", "f2"]
BUILDERS = {
    "OnPairStats": [online(onpair.OnPairStats), online(onpair.OnPairStats, mechanism="tree", horizon=200),
                    online(onpair.OnPairStats, mechanism="epochs"), online(onpair.OnPairStats, private=False),
                    online(onpair.OnPairStats, task="metric", classes=[0, 1, 2])],
    "OnPairStrC": [online(onpair.OnPairStrC, n=80), online(onpair.OnPairStrC, n=80, mode="paper", lam=1.0),
                   online(onpair.OnPairStrC, task="metric", n=80, buffer=("fifo", 16))],
    "OnPairC": [online(onpair.OnPairC, n=80)],
    "PairwiseGIGA": [online(onpair.PairwiseGIGA)],
    "OffPairStats": [offline(onpair.OffPairStats), offline(onpair.OffPairStats, private=False),
                     offline(onpair.OffPairStats, task="metric", classes=[0, 1, 2]), distributed(onpair.OffPairStats)],
    "OffPairStrC": [offline(onpair.OffPairStrC), offline(onpair.OffPairStrC, private=False)],
    "OffPairC": [offline(onpair.OffPairC)],
    "GradientPerturbedGD": [offline(onpair.GradientPerturbedGD, T=2), distributed(onpair.GradientPerturbedGD)],
    "OutputPerturbedSGD": [offline(onpair.OutputPerturbedSGD, T=100)],
    "ObjectivePerturbedLogistic": [offline(onpair.ObjectivePerturbedLogistic),
                                   offline(onpair.ObjectivePerturbedLogistic, objective="pairwise"),
                                   offline(onpair.ObjectivePerturbedLogistic, private=False)],
    "ApproxMinimaPerturbedLogistic": [offline(onpair.ApproxMinimaPerturbedLogistic)],
    "PrivatePairwiseClassifier": [river_classifier(), river_classifier(features=FEATURES),
                                  river_classifier(learner="onpairstrc", features=FEATURES),
                                  river_classifier(learner="giga"), river_classifier(classes=(-1, 1))],
    "PrivateClassifier": [river_multiclass(), river_multiclass(features=FEATURES),
                          river_multiclass(features=FEATURES, learner_params={"private": False})],
    "MetricTransformer": [river_metric(lambda: onpair.OnPairStats(task="metric", classes=[0, 1, 2], bounds=(0, 1))),
                          river_metric(lambda: onpair.OnPairStats(task="metric", classes=[0, 1, 2], bounds=(0, 1)),
                                       features=FEATURES),
                          river_metric(lambda: onpair.PairwiseGIGA(task="metric", bounds=(0, 1)))],
    "PrivateStandardScaler": [river_scaler(), river_scaler(features=FEATURES), sklearn_scaler],
}


def reporting_classes():
    """Every public class that reports: discovered from the packages' public names."""
    found = {}
    modules = [(onpair, onpair.__all__), (onpair.river, onpair.river.__all__),
               (onpair.preprocessing, [n for n, v in vars(onpair.preprocessing).items()
                                       if inspect.isclass(v) and v.__module__ == "onpair.preprocessing"])]
    for module, names in modules:
        for name in names:
            value = getattr(module, name)
            # online learners and river models report with privacy_report(); estimators fit a privacy_report_
            if inspect.isclass(value) and (callable(getattr(value, "privacy_report", None))
                                           or callable(getattr(value, "fit", None))):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_reporting_class_has_builders():
    classes = reporting_classes()
    assert len(classes) >= 15  # the 11 of onpair, the river classifier, transformer and scaler, the sklearn scaler
    missing = sorted(name for name, cls in classes.items() if cls.__name__ not in BUILDERS)
    assert not missing, f"add builders for {missing}"


CASES = [(name, i) for name, builders in BUILDERS.items() for i in range(len(builders))]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::onpair.PrivacyWarning")
@pytest.mark.parametrize("name, index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_every_report_key_is_public_or_curator_only(name, index):
    build = BUILDERS[name][index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = [build(seed) for seed in (1, 2)]
    for report in reports:
        listed = report["curator_only"]
        assert listed == sorted(set(listed)) and set(listed) <= set(report), listed
        unexplained = sorted(k for k in report if k not in PUBLIC_FIELDS and k not in listed)
        assert not unexplained, f"{name}: keys neither public by construction nor curator-only: {unexplained}"
        assert ALWAYS_CURATOR_ONLY & set(report) <= set(listed)
        assert set(public_report(report)) == set(report) - set(listed)
    # which keys there are, and which are curator-only, does not depend on the data
    assert set(reports[0]) == set(reports[1]) and reports[0]["curator_only"] == reports[1]["curator_only"]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::onpair.PrivacyWarning")
def test_the_feature_order_read_off_the_first_record_is_curator_only():
    read = BUILDERS["PrivatePairwiseClassifier"][0](1)
    declared = BUILDERS["PrivatePairwiseClassifier"][1](1)
    assert {"features", "schedule"} <= set(read["curator_only"])
    assert "city=Paris" in " ".join(read["features"]) or "city=Lyon" in " ".join(read["features"])
    assert "features" not in public_report(read) and "schedule" not in public_report(read)
    assert declared["features"] == FEATURES and "features" not in declared["curator_only"]
    assert "schedule" not in declared["curator_only"]
    scaler = BUILDERS["PrivateStandardScaler"][0](1)
    assert {"features", "schedule"} <= set(scaler["curator_only"])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_solver_fields_and_the_exact_stopping_rule_are_curator_only():
    X, y = data(3)
    op = onpair.ObjectivePerturbedLogistic(bounds=(0.0, 1.0), random_state=0).fit(X, y).privacy_report_
    amp = onpair.ApproxMinimaPerturbedLogistic(bounds=(0.0, 1.0), random_state=0).fit(X, y).privacy_report_
    assert {"solver_steps", "gradient_norm", "stopping_rule", "n_clipped"} <= set(op["curator_only"])
    assert {"solver_steps", "gradient_norm", "n_clipped"} <= set(amp["curator_only"])
    assert "stopping_rule" not in amp["curator_only"]  # γ, a parameter
