"""The UCI loaders: shapes, class counts and missing values as documented, values as independent readers
see them, public bounds, checksums, and what happens when a file is absent or altered.

Expected numbers come from the shared data sets' documentation (../shared/datasets/SOURCES.md) and the
values from independent readers (numpy.loadtxt, the csv module, scipy.io.arff.loadarff), never from the
code under test. The raw files are read through $ONPAIR_DATA (the Makefile points it at
../shared/datasets); copies are made only in pytest's temporary directories.
"""

import csv
import os
import re
import shutil
import warnings

import numpy as np
import pytest

from onpair import FeatureBounds, NoiseDominatedWarning
from streams import ChecksumError, RecordError, UCISource, get_spec, load
from streams.uci import SPECS

# From SOURCES.md: file, rows × features (columns minus the label, and minus WDBC's ID), class counts
# (positive class first: DIE, outcome 1, Class 1, M).
DOCUMENTED = {
    "hepatitis": ("hepatitis.data", 155, 19, 32, 123),
    "pima": ("pima-indians-diabetes.csv", 768, 8, 268, 500),
    "retinopathy": ("messidor_features.arff", 1151, 19, 611, 540),
    "wdbc": ("wdbc.data", 569, 30, 212, 357),
}
# SOURCES.md, "Missing values": '?' per Hepatitis column (167 in 75 rows).
HEPATITIS_MISSING = {"STEROID": 1, "FATIGUE": 1, "MALAISE": 1, "ANOREXIA": 1, "LIVER BIG": 10,
                     "LIVER FIRM": 11, "SPLEEN PALPABLE": 5, "SPIDERS": 5, "ASCITES": 5, "VARICES": 5,
                     "BILIRUBIN": 6, "ALK PHOSPHATE": 29, "SGOT": 4, "ALBUMIN": 16, "PROTIME": 67}
# The sha256 column of SOURCES.md.
SHA256 = {
    "hepatitis": "9971f9d18abb4fc9dd6749eefb0f864b36fa7bdd59f54188c0b148a5c28214bc",
    "pima": "06f5b7c2cd7bca686fda4f92eab5f61e7ff6426a9acefa2e3dda04fc54293cf5",
    "retinopathy": "b83485dd519127ac1ba06a95da5f1d12d4bde2a362eb32d7d353bdcabfa08a93",
    "wdbc": "d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a",
}


def _shared_dir():
    candidates = [os.environ.get("ONPAIR_DATA"),
                  os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")]
    for candidate in candidates:
        if candidate and all(os.path.isfile(os.path.join(candidate, f)) for f, *_ in DOCUMENTED.values()):
            return os.path.abspath(candidate)
    return None


SHARED = _shared_dir()
needs_data = pytest.mark.skipif(SHARED is None, reason="the UCI files are not available: set ONPAIR_DATA "
                                                       "to the folder holding them (../shared/datasets)")


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setenv("ONPAIR_DATA", SHARED)
    return SHARED


def raw_rows(name):
    with open(os.path.join(SHARED, DOCUMENTED[name][0]), newline="") as f:
        return [row for row in csv.reader(f) if row]


# -- documented shapes, class counts, values ----------------------------------------------------------
@needs_data
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_shapes_and_class_counts_are_as_documented(shared, name):
    _, n, d, n_pos, n_neg = DOCUMENTED[name]
    X, y, spec = load(name)
    assert X.shape == (n, d) and X.dtype == np.float64
    assert y.shape == (n,)
    assert set(np.unique(y).tolist()) == {-1, 1}
    assert int((y == 1).sum()) == n_pos and int((y == -1).sum()) == n_neg
    assert np.all(np.isfinite(X))
    assert spec is get_spec(name) and spec.n_features == d and len(spec.feature_names) == d
    assert spec.sha256 == SHA256[name]


@needs_data
def test_pima_matches_numpy_loadtxt(shared):
    data = np.loadtxt(os.path.join(shared, "pima-indians-diabetes.csv"), delimiter=",")
    X, y, _ = load("pima")
    np.testing.assert_array_equal(X, data[:, :8])
    np.testing.assert_array_equal(y, np.where(data[:, 8] == 1, 1, -1))


@needs_data
def test_wdbc_matches_csv_module(shared):
    rows = raw_rows("wdbc")
    X, y, _ = load("wdbc")
    np.testing.assert_array_equal(X, [[float(v) for v in row[2:]] for row in rows])
    np.testing.assert_array_equal(y, [1 if row[1] == "M" else -1 for row in rows])


@needs_data
def test_retinopathy_matches_scipy_arff(shared):
    from scipy.io import arff

    data, meta = arff.loadarff(os.path.join(shared, "messidor_features.arff"))
    names = meta.names()
    X, y, spec = load("retinopathy")
    np.testing.assert_array_equal(X, np.column_stack([data[k] for k in names[:-1]]))
    np.testing.assert_array_equal(y, np.where(data["Class"] == b"1", 1, -1))
    assert len(names) - 1 == spec.n_features


@needs_data
def test_hepatitis_values_and_documented_missing_treatment(shared):
    rows = raw_rows("hepatitis")
    X, y, spec = load("hepatitis")
    np.testing.assert_array_equal(y, [1 if row[0] == "1" else -1 for row in rows])
    features = np.array([row[1:] for row in rows])
    missing = features == "?"
    assert int(missing.sum()) == sum(HEPATITIS_MISSING.values()) == 167
    assert int(missing.any(axis=1).sum()) == 75
    np.testing.assert_array_equal(X[~missing], features[~missing].astype(float))
    # The documented treatment: the midpoint of the public bounds, whatever the data.
    midpoint = (spec.lower + spec.upper) / 2
    rows_i, cols_k = np.nonzero(missing)
    np.testing.assert_array_equal(X[rows_i, cols_k], midpoint[cols_k])
    # ... which the box map of FeatureBounds sends to 0.
    Z, _ = FeatureBounds(spec.lower, spec.upper).transform(X)
    np.testing.assert_allclose(Z[rows_i, cols_k], 0.0, atol=1e-15)
    source = UCISource("hepatitis")
    list(source)
    assert source.report["missing_filled"] == HEPATITIS_MISSING


@needs_data
def test_hepatitis_missing_raise_names_file_line_field(shared):
    rows = raw_rows("hepatitis")
    line, column = next((i + 1, k) for i, row in enumerate(rows) for k, v in enumerate(row) if v == "?")
    name = get_spec("hepatitis").columns[column]
    with pytest.raises(RecordError) as info:
        load("hepatitis", missing="raise")
    message = str(info.value)
    assert "hepatitis.data" in message and f"line {line}, field {column + 1} ({name!r})" in message
    assert "missing value '?'" in message


@needs_data
def test_hepatitis_custom_public_fill(shared):
    spec = get_spec("hepatitis")
    fill = spec.lower.copy()
    X, _, _ = load("hepatitis", missing=fill)
    missing = np.array([row[1:] for row in raw_rows("hepatitis")]) == "?"
    np.testing.assert_array_equal(X[missing], np.broadcast_to(fill, X.shape)[missing])
    for bad in ("mean", [0.0] * 3, [np.nan] * 19):
        with pytest.raises(ValueError, match="missing"):
            load("hepatitis", missing=bad)


# -- public bounds ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_bounds_are_read_only_constants_usable_by_the_learners(name):
    spec = get_spec(name)
    d = DOCUMENTED[name][2]
    assert spec.lower.shape == spec.upper.shape == (d,)
    assert np.all(spec.upper > spec.lower)
    with pytest.raises(ValueError):
        spec.lower[0] = -1.0
    bounds = FeatureBounds(*spec.bounds)
    corners = np.array([spec.lower, spec.upper])
    Z, clipped = bounds.transform(corners)
    assert not clipped.any()
    assert np.linalg.norm(Z[0] - Z[1]) == pytest.approx(2.0)
    assert spec.bounds_source and spec.labels_doc and spec.missing_doc


def test_pima_bounds_are_the_clinical_ranges():
    # pregnancies 0-20, glucose 0-200, diastolic 0-130, skinfold 0-100, insulin 0-900, BMI 0-70,
    # pedigree 0-2.5, age 0-100 (the clinical ranges used by bench/utility.py).
    spec = get_spec("pima")
    np.testing.assert_array_equal(spec.lower, np.zeros(8))
    np.testing.assert_array_equal(spec.upper, [20, 200, 130, 100, 900, 70, 2.5, 100])


def test_wdbc_bounds_cover_the_documented_maxima():
    """Upper bounds are the documented maxima rounded outward: at least the maximum, not much more."""
    sklearn_datasets = pytest.importorskip(
        "sklearn.datasets", reason="scikit-learn (a test dependency: pip install '.[test]') is not installed")
    descr = sklearn_datasets.load_breast_cancer().DESCR
    maxima = [float(m) for m in re.findall(r"^[a-z ]+\((?:mean|standard error|worst)\):\s+\S+\s+(\S+)\s*$",
                                           descr, flags=re.M)]
    assert len(maxima) == 30
    spec = get_spec("wdbc")
    assert np.all(spec.upper >= np.array(maxima))
    assert np.all(spec.upper <= 1.3 * np.array(maxima))
    np.testing.assert_array_equal(spec.lower, np.zeros(30))


@needs_data
def test_bounds_do_not_depend_on_the_data(tmp_path):
    """Scaling every value of a copy changes the data but neither the bounds nor the fill values."""
    spec = get_spec("hepatitis")
    lower, upper = spec.lower.copy(), spec.upper.copy()
    with open(os.path.join(SHARED, "hepatitis.data")) as f:
        text = f.read()
    altered = re.sub(r"(?<=,)(\d+)\.(\d+)", lambda m: f"{float(m.group(0)) * 3:.2f}", text)
    assert altered != text
    (tmp_path / "hepatitis.data").write_text(altered)
    X, _, spec2 = load("hepatitis", data_dir=tmp_path, verify=False)
    assert spec2 is spec
    np.testing.assert_array_equal(spec2.lower, lower)
    np.testing.assert_array_equal(spec2.upper, upper)
    X_orig, _, _ = load("hepatitis", data_dir=SHARED)
    missing = np.array([row[1:] for row in raw_rows("hepatitis")]) == "?"
    np.testing.assert_array_equal(X[missing], X_orig[missing])
    assert not np.array_equal(X, X_orig)


@needs_data
def test_streaming_the_spec_into_a_learner(shared):
    """The spec's bounds go straight to a learner, which learns Pima block by block (non-private twin)."""
    from onpair import PairwiseGIGA
    from onpair.evaluation import roc_auc

    source = UCISource("pima")
    learner = PairwiseGIGA(bounds=source.spec.bounds, seed=0)
    for X, y in source.iter_blocks(128):
        learner.learn_many(X, y)
    X, y, _ = load("pima")
    assert roc_auc(y, learner.decision_function(X)) > 0.7


# -- the source -----------------------------------------------------------------------------------------
@needs_data
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_uci_source_length_blocks_and_records(shared, name):
    _, n, d, _, _ = DOCUMENTED[name]
    source = UCISource(name)
    assert len(source) == n and source.n_features == d
    blocks = list(source.iter_blocks(100))
    assert [b.shape[0] for b, _ in blocks] == [100] * (n // 100) + ([n % 100] if n % 100 else [])
    X, y, _ = load(name)
    np.testing.assert_array_equal(np.concatenate([b for b, _ in blocks]), X)
    records = list(source)
    assert len(records) == n and all(label in (-1, 1) for _, label in records)
    assert source.report["rows_yielded"] == n and source.report["rows_skipped"] == 0
    x, label = next(source.iter_dicts())
    assert tuple(x) == get_spec(name).feature_names and label == y[0]


@needs_data
def test_data_directory_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ONPAIR_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "wdbc.data"))):
        UCISource("wdbc")
    shutil.copy(os.path.join(SHARED, "wdbc.data"), tmp_path / "wdbc.data")
    source = UCISource("wdbc")
    assert source.report["source"] == str(tmp_path / "wdbc.data") and len(source) == 569


@needs_data
def test_altered_file_fails_the_checksum(tmp_path):
    data = bytearray(open(os.path.join(SHARED, "wdbc.data"), "rb").read())
    data[100:101] = b"9" if data[100:101] != b"9" else b"8"
    (tmp_path / "wdbc.data").write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=SHA256["wdbc"]) as info:
        load("wdbc", data_dir=tmp_path)
    assert isinstance(info.value, ValueError) and str(tmp_path / "wdbc.data") in str(info.value)
    X, _, _ = load("wdbc", data_dir=tmp_path, verify=False)  # the user's responsibility
    assert X.shape == (569, 30)
    with pytest.raises(TypeError):
        len(UCISource("wdbc", data_dir=tmp_path, verify=False))


def test_absent_files_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load("pima", data_dir=tmp_path)
    message = str(info.value)
    assert "withdrawn" in message and str(tmp_path / "pima-indians-diabetes.csv") in message
    assert SHA256["pima"] in message
    with pytest.raises(FileNotFoundError, match="onpair fetch hepatitis"):
        load("hepatitis", data_dir=tmp_path)


def test_malformed_copy_is_located(tmp_path):
    rows = ["6,148,72,35,0,33.6,0.627,50,1", "1,85,66,29,0,26.6,0.351,31,0", "8,183,64,0,zero,23.3,0.672,32,1"]
    (tmp_path / "pima-indians-diabetes.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(RecordError, match=r"line 3, field 5 \('insulin'\): cannot parse 'zero'"):
        load("pima", data_dir=tmp_path, verify=False)
    source = UCISource("pima", data_dir=tmp_path, verify=False, on_error="skip")
    assert [label for _, label in source] == [1, -1]
    assert source.report["rows_skipped"] == 1


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown data set 'iris'; known: hepatitis, pima, retinopathy, wdbc"):
        get_spec("iris")
    assert sorted(SPECS) == sorted(DOCUMENTED)


@needs_data
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_bundled_data_sets_lie_within_their_public_bounds(shared, name):
    """The library's own bounds hold for the library's own data: no clipping warning on a bundled data set
    (Hepatitis and Retinopathy once clipped 3 and 183 records, ImageSegments 47: bounds read from
    binning points or a guess, and variances taken for standard deviations). The bounds come from the
    documentation (SPECS' comments); this test only checks that the file agrees with them."""
    from onpair import OffPairStats

    X, y, spec = load(name)
    lower, upper = spec.bounds
    outside = np.flatnonzero(((X < lower) | (X > upper)).any(axis=0))
    assert outside.size == 0, [spec.feature_names[k] for k in outside]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", NoiseDominatedWarning)  # a small data set may give a noisy release
        assert OffPairStats(bounds=spec.bounds, random_state=0).fit(X, y).n_clipped_ == 0


def test_image_segments_lies_within_its_public_bounds():
    from streams.image_segments import load_image_segments

    X, _, (lower, upper) = load_image_segments()
    assert not ((X < lower) | (X > upper)).any()
