"""The river models' privacy review (issue 20): labels, feature order, old snapshots, pipelines.

* **Labels come from a public domain.** Two streams that differ only in record 1 (−1 against +1 with
  ``classes=(-1, 1)``; False against True and 0 against 1 without it) give outputs with the same keys, key
  types and prediction types at every step; the spelling of a label (False, 0, 0.0, ``np.False_``) changes
  nothing at all, values and serialisation included.
* **Feature order.** A private model without ``features=`` warns once when the first record fixes the order
  (before anything changes), and never names a key.
* **Snapshots of the previous format** (which kept the first labels seen) load onto a public domain, or are
  refused, and left in place, when they cannot be mapped.
* :func:`onpair.river.pipeline_report` adds up the record-level costs of a pipeline's models.
"""

import json
import math
import os
import shutil
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from river import compose, datasets, linear_model, preprocessing

import onpair
from onpair import PrivacyWarning
from onpair.persistence import save_learner
from onpair.privacy.conversions import eps_from_rho
from onpair.river import (MetricTransformer, PrivateClassifier, PrivatePairwiseClassifier, PrivateStandardScaler,
                          pipeline_report)
from onpair.river.classifier import SAVE_TAG
from streams import PHISHING_FEATURES

PHISHING = list(datasets.Phishing())
GOLDEN = os.path.join(os.path.dirname(__file__), "data", "golden")


def outputs(model, stream, probes):
    """Everything a user sees along the stream: per step the proba dict's keys, their types and values, the
    prediction and its type; at the end predict_many and predict_proba_many on the probes."""
    pd = pytest.importorskip("pandas", reason="pandas is not installed: predict_many takes data frames")
    seen = []
    for x, y in stream:
        proba = model.predict_proba_one(x)
        label = model.predict_one(x)
        seen.append((list(proba), [type(k).__name__ for k in proba], list(proba.values()), label,
                     type(label).__name__))
        model.learn_one(x, y)
    frame = pd.DataFrame([x for x, _ in probes])
    many = model.predict_many(frame)
    proba_many = model.predict_proba_many(frame)
    seen.append((list(many), str(many.dtype), list(proba_many.columns),
                 [type(c).__name__ for c in proba_many.columns]))
    return seen


def stream_with(first, rest, k=150):
    """Phishing's first k records, record 1 labelled ``first`` and every later one ``rest`` (one positive
    record at most: the issue's worst case for a label read off the stream)."""
    return [(dict(x), first if i == 0 else rest) for i, (x, _) in enumerate(PHISHING[:k])]


@pytest.mark.parametrize("learner", ["stats", "onpairstrc"])
@pytest.mark.parametrize("classes, negative, positive", [((-1, 1), -1, 1), (None, False, True), (None, 0, 1),
                                                          (("ok", "phish"), "ok", "phish")])
def test_neighbouring_first_labels_give_the_same_keys_and_types(learner, classes, negative, positive):
    probes = [(dict(x), y) for x, y in PHISHING[500:520]]
    runs = []
    for first in (negative, positive):
        model = PrivatePairwiseClassifier(learner=learner, epsilon=1.0, bounds=(0.0, 1.0), features=PHISHING_FEATURES,
                                          classes=classes, seed=3, release_every=None if learner == "stats" else 25)
        runs.append(outputs(model, stream_with(first, positive), probes))
    a, b = runs
    keys = [False, True] if classes is None else list(classes)
    for step_a, step_b in zip(a[:-1], b[:-1]):
        assert step_a[0] == step_b[0] == keys and step_a[1] == step_b[1] == [type(k).__name__ for k in keys]
        assert step_a[4] == step_b[4] == type(keys[0]).__name__  # predict_one: a label of the domain
        assert step_a[3] in keys and step_b[3] in keys
    assert a[-1][1:] == b[-1][1:] and a[-1][2] == keys  # predict_many's dtype, predict_proba_many's columns
    # before record 1 is learned the two models are the same, values included
    assert a[0] == b[0]


@pytest.mark.parametrize("classes, spellings, rest", [
    (None, [False, 0, 0.0, np.False_, np.int64(0)], True),
    (None, [True, 1, 1.0, np.True_, np.uint8(1)], False),
    ((-1, 1), [-1, -1.0, np.int64(-1), np.float32(-1.0)], 1),
])
def test_the_spelling_of_a_label_changes_nothing(classes, spellings, rest):
    """Labels of the same meaning give byte-identical outputs: keys, types, values, and their JSON."""
    probes = [(dict(x), y) for x, y in PHISHING[500:510]]
    runs = []
    for spelling in spellings:
        model = PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), features=PHISHING_FEATURES,
                                          classes=classes, seed=5)
        stream = stream_with(spelling, rest, k=120)
        stream[60] = (stream[60][0], spelling)  # a second record spelled so, mid-stream
        runs.append(outputs(model, stream, probes))
        runs[-1].append(json.dumps(model.predict_proba_one(probes[0][0]), default=str))
    assert all(run == runs[0] for run in runs[1:])


def test_without_classes_a_minus_one_is_refused_and_nothing_is_spent():
    model = PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0)
    for x, y in PHISHING[:10]:
        model.learn_one(x, y)
    before = model.privacy_report()
    with pytest.raises(ValueError, match=r"classes=\(-1, 1\)"):
        model.learn_one(PHISHING[10][0], -1)
    with pytest.raises(ValueError, match=r"classes=\(-1, 1\)"):
        model.learn_one(PHISHING[10][0], np.int64(-1))
    assert model.privacy_report() == before and model.n_seen == 10


# -- feature order -------------------------------------------------------------------------------------
def test_a_private_model_warns_once_when_the_first_record_fixes_the_order():
    records = [(dict(x, **{"city=Paris": 1.0}), y) for x, y in PHISHING[:20]]
    for make in (lambda: PrivatePairwiseClassifier(bounds=(0.0, 1.0), seed=0),
                 lambda: PrivatePairwiseClassifier(learner="onpairstrc", bounds=(0.0, 1.0), seed=0),
                 lambda: PrivateStandardScaler(bounds=(0.0, 1.0), seed=0),
                 lambda: MetricTransformer(onpair.OnPairStats(task="metric", classes=[False, True],
                                                              bounds=(0.0, 1.0), seed=0))):
        model = make()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for x, y in records:
                model.learn_one(x) if isinstance(model, PrivateStandardScaler) else model.learn_one(x, y)
        order = [w for w in caught if issubclass(w.category, PrivacyWarning) and "features=None" in str(w.message)]
        assert len(order) == 1, type(model).__name__
        message = str(order[0].message)
        assert "features=[...]" in message and "Paris" not in message and "popup" not in message
        assert order[0].filename == __file__  # it points at the caller's line
        report = model.privacy_report()
        assert {"features", "schedule"} <= set(report["curator_only"])


def test_declared_features_and_the_non_private_twin_do_not_warn():
    for make in (lambda: PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0),
                 lambda: PrivatePairwiseClassifier(learner="giga", bounds=(0.0, 1.0)),
                 lambda: PrivatePairwiseClassifier(bounds=(0.0, 1.0), learner_params={"private": False})):
        model = make()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for x, y in PHISHING[:20]:
                model.learn_one(x, y)


def test_the_warning_as_an_error_changes_nothing():
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), seed=0)
    x, y = PHISHING[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        with pytest.raises(PrivacyWarning):
            model.learn_one(dict(x), y)
    assert model.n_seen == 0 and model.feature_order is None and model.privacy_report()["rho_spent"] == 0.0
    pd = pytest.importorskip("pandas", reason="pandas is not installed: learn_many takes data frames")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        with pytest.raises(PrivacyWarning):
            model.learn_many(pd.DataFrame([x for x, _ in PHISHING[:5]]), pd.Series([y for _, y in PHISHING[:5]]))
    assert model.n_seen == 0 and model.feature_order is None


# -- snapshots ---------------------------------------------------------------------------------------
def fed(model, stream):
    for x, y in stream:
        model.learn_one(x, y)
    return model


def test_classes_survive_save_and_load(tmp_path):
    stream = [(dict(x), "phish" if y else "ok") for x, y in PHISHING[:200]]
    path = tmp_path / "m.onpair"
    model = fed(PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES, classes=("ok", "phish"),
                                          seed=1), stream[:100])
    model.save(path)
    with pytest.raises(ValueError, match="saved with classes"):
        PrivatePairwiseClassifier.load(path, classes=("no", "yes"))
    assert path.exists()  # a refused load leaves the snapshot in place
    resumed = PrivatePairwiseClassifier.load(path, classes=("ok", "phish"))
    assert resumed.classes == ("ok", "phish") and repr(resumed) == repr(model)
    whole = fed(PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES, classes=("ok", "phish"),
                                          seed=1), stream)
    fed(resumed, stream[100:])
    x = PHISHING[300][0]
    assert resumed.predict_proba_one(x) == whole.predict_proba_one(x)
    assert list(resumed.predict_proba_one(x)) == ["ok", "phish"]


def test_the_previous_formats_golden_snapshot_loads_with_rivers_keys(tmp_path):
    path = tmp_path / "old.onpair"
    shutil.copyfile(os.path.join(GOLDEN, "river-classifier.onpair"), path)
    model = onpair.load(path)
    proba = model.predict_proba_one({"f0": 0.5})
    assert list(proba) == [False, True] and [type(k) for k in proba] == [bool, bool] and model.classes is None


def write_previous_format(model, path, labels, fixed):
    """A snapshot as the previous version wrote it: the wrapper fields of format 1, which kept the first
    negative and positive labels learned (``labels``) and whether each was seen (``labels_fixed``)."""
    extra = model._persisted_fields(path)
    del extra["classes"], extra["classes_is_tuple"], extra["refresh_shift"]
    extra.update(version=1, labels=labels, labels_fixed=fixed)
    save_learner(model._inner, path, extra=extra, wrapper=SAVE_TAG)


@pytest.mark.parametrize("labels, fixed, keys", [([False, True], [True, True], [False, True]),
                                                 ([0, 1], [True, True], [False, True]),
                                                 ([False, 1], [False, True], [False, True])])
def test_previous_format_snapshots_of_booleans_or_0_1_load_with_rivers_keys(tmp_path, labels, fixed, keys):
    path = tmp_path / "v1.onpair"
    write_previous_format(fed(PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=2),
                              PHISHING[:50]), path, labels, fixed)
    model = PrivatePairwiseClassifier.load(path)
    proba = model.predict_proba_one(PHISHING[60][0])
    assert list(proba) == keys and all(type(k) is bool for k in proba)


def test_a_previous_format_snapshot_with_minus_one_needs_a_declared_domain(tmp_path):
    stream = [(dict(x), 1 if y else -1) for x, y in PHISHING[:50]]
    path = tmp_path / "v1.onpair"
    write_previous_format(fed(PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES,
                                                        classes=(-1, 1), seed=2), stream), path, [-1, 1], [True, True])
    for load in (lambda: PrivatePairwiseClassifier.load(path), lambda: onpair.load(path)):
        with pytest.raises(ValueError, match=r"classes=\(-1, 1\)"):
            load()
        assert path.exists()  # refused before anything: the snapshot stays
    with pytest.raises(ValueError, match="not in classes"):
        PrivatePairwiseClassifier.load(path, classes=(0, 1))
    model = PrivatePairwiseClassifier.load(path, classes=(-1, 1))
    assert list(model.predict_proba_one(PHISHING[60][0])) == [-1, 1] and model.n_seen == 50
    model.learn_one(PHISHING[60][0], -1)
    assert not path.exists()


# -- pipelines ---------------------------------------------------------------------------------------
def pipeline(**classifier):
    return (PrivateStandardScaler(bounds=(0.0, 1.0), epsilon=0.5, features=PHISHING_FEATURES, seed=0)
            | PrivatePairwiseClassifier(bounds=(-3.0, 3.0), epsilon=1.0, features=PHISHING_FEATURES, seed=0,
                                        **classifier))


def test_pipeline_report_adds_the_record_level_costs():
    model = pipeline()
    for x, y in PHISHING[:300] * 2:
        model.learn_one(x, y)
    scaler, classifier = model["PrivateStandardScaler"], model["PrivatePairwiseClassifier"]
    for passes, order in ((1, "same"), (2, "same"), (2, "any")):
        report = pipeline_report(model, passes=passes, order=order)
        members = [scaler.privacy_report(passes, order), classifier.privacy_report(passes, order)]
        rho = sum(m["record_level"]["rho"] for m in members)
        assert [m["step"] for m in report["members"]] == ["PrivateStandardScaler", "PrivatePairwiseClassifier"]
        assert report["rho"] == pytest.approx(rho, rel=1e-12) and report["accounting"] == "gaussian"
        assert report["delta"] == 1e-5 and report["other_steps"] == [] and report["curator_only"] == []
        # a composition of Gaussian mechanisms: one Gaussian of μ² = Σ μ_i², by dp-accounting's PLD accountant
        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        for m in members:
            accountant.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2.0 * m["record_level"]["rho"])))
        assert accountant.get_epsilon(1e-5) == pytest.approx(report["epsilon"], abs=3e-3)
        assert report["epsilon"] > max(m["record_level"]["epsilon"] for m in members)
    # The default BLT's copies 300 apart overlap a little: between 2ρ and the group bound 4ρ
    same = pipeline_report(model, passes=2)
    assert 2 * pipeline_report(model)["rho"] < same["rho"] < 4 * pipeline_report(model)["rho"]
    banded = (PrivateStandardScaler(bounds=(0.0, 1.0), epsilon=0.5, features=PHISHING_FEATURES, seed=0,
                                    mechanism="toeplitz")
              | PrivatePairwiseClassifier(bounds=(-3.0, 3.0), epsilon=1.0, features=PHISHING_FEATURES, seed=0,
                                          learner_params={"mechanism": "toeplitz"}))
    for x, y in PHISHING[:300] * 2:
        banded.learn_one(x, y)
    same = pipeline_report(banded, passes=2)
    assert same["rho"] == pytest.approx(2 * pipeline_report(banded)["rho"], rel=1e-9)  # 300 ≥ the band: 2ρ


def test_pipeline_report_walks_nested_steps_and_names_the_others():
    inner = compose.Pipeline(preprocessing.Binarizer(threshold=2.0), pipeline())
    model = compose.TransformerUnion(PrivateStandardScaler(bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=1),
                                     preprocessing.FeatureHasher()) | inner
    report = pipeline_report(model)
    assert len(report["members"]) == 3 and len(report["other_steps"]) == 2
    assert report["guarantee"] == "holds" and report["voided_by"] == []  # Binarizer, FeatureHasher: stateless
    giga = pipeline(learner="giga")
    assert pipeline_report(giga)["epsilon"] == math.inf
    assert pipeline_report(giga)["voided_by"] == ["PrivatePairwiseClassifier"]
    with pytest.raises(ValueError, match="no onpair model"):
        pipeline_report(preprocessing.StandardScaler())
    single = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0)
    fed(single, PHISHING[:10])
    assert pipeline_report(single)["epsilon"] == pytest.approx(single.privacy_report()["epsilon_spent"])
    assert eps_from_rho(pipeline_report(single)["rho"], 1e-5) == pipeline_report(single)["epsilon"]


def test_a_step_that_learns_without_noise_voids_the_pipeline_guarantee():
    """river's StandardScaler reads every record in the clear: the headline figures say there is no guarantee,
    whatever the private model after it spends (the member's own figures stay, for the curator's reading)."""
    model = preprocessing.StandardScaler() | PrivatePairwiseClassifier(bounds=(-3.0, 3.0), epsilon=1.0,
                                                                      features=PHISHING_FEATURES, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the standardised records leave the bounds: clipped
        fed(model, PHISHING[:50])
    report = pipeline_report(model)
    assert report["guarantee"] == "void" and report["voided_by"] == ["StandardScaler"]
    assert report["epsilon"] == math.inf and "rho" not in report
    assert report["members"][0]["epsilon"] < 1.01
    # a river learner after a private scaler: its state is a function of the records too
    tail = PrivateStandardScaler(bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0) | linear_model.LogisticRegression()
    assert pipeline_report(tail)["voided_by"] == ["LogisticRegression"]
    # a stateless step voids nothing
    select = compose.Select(*PHISHING_FEATURES) | pipeline()
    assert pipeline_report(select)["guarantee"] == "holds" and pipeline_report(select)["epsilon"] < math.inf


def test_the_refresh_rule_is_saved_and_old_snapshots_keep_theirs(tmp_path):
    """A snapshot keeps the model refresh rule it was saved with (format 3); those of formats 1 and 2 refreshed
    with s = 6, and resume with it, so that their predictions continue as the original model's would."""
    # a release after every record (mechanism "blt"): the refresh rule's count is the record count
    model = PrivatePairwiseClassifier(epsilon=1.0, bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=3,
                                      learner_params={"mechanism": "blt"})
    for x, y in PHISHING[:300]:
        model.learn_one(x, y)
    assert model._refresh_shift == PrivatePairwiseClassifier.REFRESH_SHIFT == 4
    model.save(tmp_path / "now.onpair")
    assert PrivatePairwiseClassifier.load(tmp_path / "now.onpair")._refresh_shift == 4
    extra = model._persisted_fields(tmp_path / "old.onpair")
    del extra["refresh_shift"]
    extra.update(version=2)
    save_learner(model._inner, tmp_path / "old.onpair", extra=extra, wrapper=SAVE_TAG)
    old = PrivatePairwiseClassifier.load(tmp_path / "old.onpair")
    assert old._refresh_shift == 6
    # the rule: after 2^(s+1) releases, a refresh every 2^(⌊log₂ k⌋ − s) releases (here k = 300: 2^(8 − 6) = 4)
    old._view()
    assert (old._inner._refresh.start, old._inner._refresh.stop) == (300, 304)
    extra.update(version=3, refresh_shift=-1)
    save_learner(model._inner, tmp_path / "bad.onpair", extra=extra, wrapper=SAVE_TAG)
    with pytest.raises(ValueError, match="refresh_shift"):
        PrivatePairwiseClassifier.load(tmp_path / "bad.onpair")


@pytest.mark.parametrize("make", [
    lambda **kw: PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=["a", "b"], **kw),
    lambda **kw: PrivateClassifier(classes=[0, 1, 2], bounds=(0.0, 1.0), features=["a", "b"], **kw),
], ids=["PrivatePairwiseClassifier", "PrivateClassifier"])
def test_the_river_classifiers_warn_on_a_large_delta(make):
    """The offline estimators warn for δ ≥ 1/n; the river classifiers said nothing about any δ. On a stream of
    unknown length they warn from δ ≥ 1e-3 (any stream of 1/δ records has δ ≥ 1/n), with a public horizon for
    δ ≥ 1/horizon (the learner's own warning), and not for a non-private twin or the default δ."""
    import warnings

    from onpair.privacy.reports import STREAM_DELTA

    with pytest.warns(PrivacyWarning, match=r"delta = 0.01 ≥ 0.001 on a stream of unknown length.*1/δ = 100 records"):
        make(delta=0.01)
    with pytest.warns(PrivacyWarning, match="unknown length"):
        make(delta=STREAM_DELTA)
    with pytest.warns(PrivacyWarning, match=r"≥ 1/horizon"):
        make(delta=0.01, learner_params={"horizon": 500})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make()  # δ = 1e-5
        make(delta=0.9 * STREAM_DELTA)
        make(delta=0.001, learner_params={"horizon": 500})  # 1/horizon = 0.002: the stream's length is public
        make(delta=0.01, learner_params={"private": False})
