"""Stream sources: arrays, CSV and ARFF files, river's data sets.

Expected values come from the inputs the tests write themselves (or from river's own iteration of its
data sets), never from the code under test. Malformed input must stop the stream with an error naming
the file, the line and the field, or (on_error="skip") be skipped and counted: nothing is dropped silently.
"""

import os

import numpy as np
import pytest

import streams
from streams import ARFFSource, ArraySource, CSVSource, RecordError, RiverSource, iter_blocks

SEED = 20240601


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return str(path)


def concat(source, block_size):
    blocks = list(source.iter_blocks(block_size))
    return np.concatenate([X for X, _ in blocks]), np.concatenate([y for _, y in blocks]), blocks


# -- iter_blocks (the function kept from before) ------------------------------------------------------
def test_iter_blocks_function_still_slices():
    X = np.arange(14.0).reshape(7, 2)
    y = np.arange(7)
    blocks = list(iter_blocks(X, y, block_size=3))
    assert [len(b) for b, _ in blocks] == [3, 3, 1]
    np.testing.assert_array_equal(np.concatenate([b for b, _ in blocks]), X)
    with pytest.raises(ValueError, match="block_size"):
        list(iter_blocks(X, y, block_size=0))
    with pytest.raises(ValueError, match="7 records but y has 6"):
        list(iter_blocks(X, y[:6]))


# -- ArraySource --------------------------------------------------------------------------------------
def test_array_source_records_and_blocks():
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(23, 4))
    y = rng.choice([-1, 1], size=23)
    src = ArraySource(X, y)
    assert len(src) == 23 and src.n_records == 23 and src.n_features == 4
    records = list(src)
    assert len(records) == 23
    for (x, label), row, expected in zip(records, X, y):
        np.testing.assert_array_equal(x, row)
        assert label == expected and isinstance(label, int)
    for block_size in (1, 5, 23, 100):
        X_all, y_all, blocks = concat(src, block_size)
        assert all(b.shape[0] <= block_size for b, _ in blocks)
        assert all(b.dtype == np.float64 and b.flags.c_contiguous for b, _ in blocks)
        np.testing.assert_array_equal(X_all, X)
        np.testing.assert_array_equal(y_all, y)
    assert src.report["rows_yielded"] == 23 and src.report["complete"]
    assert [r[1] for r in src.take(3)] == list(y[:3])


def test_array_source_blocks_are_read_only_views():
    X = np.ones((4, 2))
    block, _ = next(ArraySource(X, np.ones(4)).iter_blocks(2))
    with pytest.raises(ValueError):
        block[0, 0] = 5.0
    assert X[0, 0] == 1.0


def test_array_source_iter_dicts_uses_feature_names():
    src = ArraySource([[1.0, 2.0], [3.0, 4.0]], [True, False], feature_names=["a", "b"])
    assert list(src.iter_dicts()) == [({"a": 1.0, "b": 2.0}, True), ({"a": 3.0, "b": 4.0}, False)]


@pytest.mark.parametrize("X, y, message", [
    (np.zeros((3, 2)), np.zeros(2), "3 records but y has 2"),
    (np.zeros(3), np.zeros(3), "2-D"),
    (np.zeros((2, 2)), np.zeros((2, 1)), "y must be 1-D"),
    ([[1.0, 2.0], [3.0]], [1, 0], "numeric"),
])
def test_array_source_rejects_bad_shapes(X, y, message):
    with pytest.raises(ValueError, match=message):
        ArraySource(X, y)


@pytest.mark.parametrize("X", [[["a", "b"]], [[1.0, {}]], "ab"], ids=repr)
def test_array_source_non_numeric_values_are_a_type_error(X):
    with pytest.raises(TypeError, match="numeric"):
        ArraySource(X, [1])


def test_river_source_non_number_is_a_record_type_error_still_caught_as_before():
    from streams import RecordTypeError

    with pytest.raises(RecordTypeError) as info:
        list(RiverSource([({"a": 1.0, "b": "high"}, 1)]))
    # Still a RecordError and a ValueError (documented), and also a TypeError (the convention).
    assert isinstance(info.value, RecordError) and isinstance(info.value, ValueError)
    assert isinstance(info.value, TypeError)
    assert info.value.field == "b" and info.value.reason == "unparseable value"
    with pytest.raises(RecordError, match="is not a real number") as info:
        list(RiverSource([({"a": 1j}, 1)]))
    assert not isinstance(info.value, TypeError)  # a complex number: a wrong value
    src = RiverSource([({"a": 1.0}, 1), ({"a": None}, 0), ({"a": 2.0}, 1)], on_error="skip")
    assert [x.tolist() for x, _ in src] == [[1.0], [2.0]]
    assert src.report["skipped_reasons"] == {"unparseable value": 1}


def test_array_source_non_finite_raises_or_is_skipped_and_counted():
    X = np.arange(12.0).reshape(6, 2)
    X[2, 1] = np.nan
    X[4, 0] = np.inf
    y = np.arange(6)
    with pytest.raises(ValueError, match=r"X\[2, 1\] = nan \(record 3, feature 'x1'\)"):
        ArraySource(X, y)
    src = ArraySource(X, y, on_error="skip")
    with pytest.raises(TypeError):
        len(src)
    X_all, y_all, blocks = concat(src, 3)
    np.testing.assert_array_equal(y_all, [0, 1, 3, 5])
    np.testing.assert_array_equal(X_all, X[[0, 1, 3, 5]])
    report = src.report
    assert report["rows_read"] == 6 and report["rows_yielded"] == 4 and report["rows_skipped"] == 2
    assert report["skipped_reasons"] == {"non-finite value": 2}
    assert "record 3" in report["errors"][0] and "record 5" in report["errors"][1]


def test_bad_arguments():
    src = ArraySource(np.zeros((2, 2)), np.zeros(2))
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="block_size"):
            src.iter_blocks(bad)
    with pytest.raises(ValueError, match="on_error"):
        ArraySource(np.zeros((2, 2)), np.zeros(2), on_error="ignore")
    with pytest.raises(ValueError, match="k must be"):
        src.take(-1)


# -- CSVSource ----------------------------------------------------------------------------------------
def test_csv_round_trip_of_random_array(tmp_path):
    rng = np.random.default_rng(SEED)
    X = rng.normal(scale=100.0, size=(257, 5))
    y = rng.choice([0, 1], size=257)
    path = tmp_path / "data.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    src = CSVSource(path)
    for block_size in (1, 16, 100, 1000):
        X_all, y_all, blocks = concat(src, block_size)
        assert all(b.shape[0] <= block_size for b, _ in blocks)
        np.testing.assert_array_equal(X_all, X)
        np.testing.assert_array_equal(y_all, y)
    assert src.feature_names == ("x0", "x1", "x2", "x3", "x4")
    assert src.report == {"source": str(path), "rows_read": 257, "rows_yielded": 257, "rows_skipped": 0,
                          "skipped_reasons": {}, "errors": [], "missing_filled": {}, "blank_lines": 0,
                          "complete": True}
    with pytest.raises(TypeError, match="not known in advance"):
        len(src)
    assert bool(src)


def test_csv_header_target_drop_and_label_map(tmp_path):
    path = write(tmp_path / "h.csv", "id,diag,a,b\n17,M,1.5,2\n18,B, 3 ,-4e1\n")
    src = CSVSource(path, header=True, target="diag", drop=["id"], label_map={"M": 1, "B": -1})
    assert src.feature_names == ("a", "b")
    assert [(x.tolist(), y) for x, y in src] == [([1.5, 2.0], 1), ([3.0, -40.0], -1)]
    assert list(src.iter_dicts()) == [({"a": 1.5, "b": 2.0}, 1), ({"a": 3.0, "b": -40.0}, -1)]
    src2 = CSVSource(path, header=True, target=1, drop=[0], label_map={"M": 1, "B": -1})
    assert [y for _, y in src2] == [1, -1]


def test_a_label_map_of_numbers_matches_them_however_written(tmp_path):
    """Labels written 0.0/1.0 once failed a label map of 0/1 (every row 'not one of ['0', '1']')."""
    path = write(tmp_path / "n.csv", "1,0.0\n2,1.0\n3,1e0\n4, 0 \n")
    assert [y for _, y in CSVSource(path, label_map={"0": -1, 1: 1})] == [-1, 1, 1, -1]
    with pytest.raises(RecordError, match="not one of"):  # a number outside the map is still refused
        list(CSVSource(write(tmp_path / "m.csv", "1,2.0\n"), label_map={"0": -1, "1": 1}))
    with pytest.raises(ValueError, match="the same number"):
        list(CSVSource(path, label_map={"1": 1, "1.0": 2}))


def test_csv_names_and_delimiter(tmp_path):
    path = write(tmp_path / "s.tsv", "1\t2\t0\n3\t4\t1\n")
    src = CSVSource(path, names=["a", "b", "y"], target="y", delimiter="\t")
    assert [(x.tolist(), y) for x, y in src] == [([1.0, 2.0], 0.0), ([3.0, 4.0], 1.0)]


@pytest.mark.parametrize("text, line, field, reason, value", [
    ("1,2,1\n3,4,0\n5,6\n", 3, None, "wrong number of fields", "expected 3 fields, found 2"),
    ("1,2,1\n3,4,0,9\n", 2, None, "wrong number of fields", "expected 3 fields, found 4"),
    ("1,2,1\n3,abc,0\n", 2, "field 2 ('b')", "unparseable value", "'abc'"),
    ("1,2,1\n3,,0\n", 2, "field 2 ('b')", "unparseable value", "''"),
    ("1,nan,1\n", 1, "field 2 ('b')", "non-finite value", "'nan'"),
    ("1,2,1\n-inf,2,1\n", 2, "field 1 ('a')", "non-finite value", "'-inf'"),
    ("1,2,yes\n", 1, "field 3 ('y')", "unparseable label", "'yes'"),
    ("1,?,1\n", 1, "field 2 ('b')", "unparseable value", "'?'"),
])
def test_csv_malformed_row_names_file_line_field(tmp_path, text, line, field, reason, value):
    path = write(tmp_path / "bad.csv", text)
    src = CSVSource(path, names=["a", "b", "y"], target="y")
    with pytest.raises(RecordError) as info:
        list(src)
    err = info.value
    assert isinstance(err, ValueError)
    message = str(err)
    assert path in message and f"line {line}" in message and value in message
    assert err.line == line and err.reason == reason and err.source == path
    if field is not None:
        assert field in message and err.field == field


def test_csv_skip_counts_every_skipped_row(tmp_path):
    lines = ["1,2,1", "3,x,0", "", "5,6", "7,8,1", "9,inf,0", "11,12,0", "13,14,2,2"]
    path = write(tmp_path / "mixed.csv", "\n".join(lines) + "\n")
    src = CSVSource(path, on_error="skip")
    X_all, y_all, _ = concat(src, 2)
    np.testing.assert_array_equal(X_all, [[1, 2], [7, 8], [11, 12]])
    np.testing.assert_array_equal(y_all, [1, 1, 0])
    report = src.report
    assert report["rows_read"] == 7 and report["rows_yielded"] == 3 and report["rows_skipped"] == 4
    assert report["blank_lines"] == 1
    assert report["skipped_reasons"] == {"unparseable value": 1, "wrong number of fields": 2,
                                         "non-finite value": 1}
    assert [m.split(": ")[1].split(",")[0] for m in report["errors"]] == ["line 2", "line 4", "line 6", "line 8"]
    # Every data row is accounted for: read = yielded + skipped.
    assert report["rows_read"] == report["rows_yielded"] + report["rows_skipped"]


def test_csv_missing_values_need_a_declared_fill(tmp_path):
    path = write(tmp_path / "m.csv", "1,?,1\n?,4,0\n5,6,1\n")
    with pytest.raises(RecordError, match=r"line 1, field 2 \('x1'\): missing value '\?' and no fill"):
        list(CSVSource(path, missing_values="?"))
    src = CSVSource(path, missing_values=["?"], fill=[-1.0, -2.0])
    X_all, _, _ = concat(src, 10)
    np.testing.assert_array_equal(X_all, [[1, -2], [-1, 4], [5, 6]])
    assert src.report["missing_filled"] == {"x1": 1, "x0": 1}
    # A missing label is never filled.
    path = write(tmp_path / "ml.csv", "1,2,?\n")
    with pytest.raises(RecordError, match="label"):
        list(CSVSource(path, missing_values="?", fill=0.0))


def test_csv_unknown_label_and_numeric_missing_marker(tmp_path):
    path = write(tmp_path / "l.csv", "1,M\n2,B\n3,X\n")
    with pytest.raises(RecordError, match=r"line 3, field 2 \('x1'\): label 'X' is not one of \['B', 'M'\]"):
        list(CSVSource(path, label_map={"M": 1, "B": -1}))
    path = write(tmp_path / "n.csv", "1,-999,1\n2,3,0\n")
    src = CSVSource(path, missing_values="-999", fill=0.5)
    X_all, _, _ = concat(src, 10)
    np.testing.assert_array_equal(X_all, [[1, 0.5], [2, 3]])


def test_csv_streams_one_block_at_a_time(tmp_path):
    """A malformed row far into the file is only met when the stream gets there: earlier blocks come first."""
    rows = [f"{i},{2 * i},{i % 2}" for i in range(5000)]
    rows[4321] = "4321,oops,1"
    path = write(tmp_path / "big.csv", "\n".join(rows) + "\n")
    blocks = CSVSource(path).iter_blocks(1000)
    for k in range(4):
        X, y = next(blocks)
        assert X.shape == (1000, 2) and X[0, 0] == 1000 * k
    with pytest.raises(RecordError, match="line 4322, field 2"):
        next(blocks)


def test_csv_reiteration_gives_same_records_and_fresh_report(tmp_path):
    path = write(tmp_path / "r.csv", "1,2,1\n3,4,0\n")
    src = CSVSource(path)
    first = [(x.tolist(), y) for x, y in src]
    assert [(x.tolist(), y) for x, y in src] == first
    assert src.report["rows_read"] == 2


def test_csv_constructor_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        CSVSource(tmp_path / "absent.csv")
    path = write(tmp_path / "c.csv", "a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a column name"):
        CSVSource(path, header=True, target="z")
    with pytest.raises(ValueError, match="header=True or names"):
        CSVSource(path, header=True, names=["a", "b"])
    with pytest.raises(ValueError, match="need names or header"):
        CSVSource(path, target="b")
    with pytest.raises(ValueError, match="also in drop"):
        CSVSource(path, header=True, target="b", drop=["b"])
    with pytest.raises(ValueError, match="fill"):
        CSVSource(path, header=True, fill=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="delimiter"):
        CSVSource(path, delimiter=";;")


# -- ARFFSource ---------------------------------------------------------------------------------------
ARFF_HEADER = "% a comment\n@relation toy\n\n@attribute a numeric\n@attribute b real\n@attribute Class {0,1}\n\n@data\n"


def test_arff_reads_rows_and_checks_nominal_labels(tmp_path):
    path = write(tmp_path / "t.arff", ARFF_HEADER + "1,2,1\n% comment\n3.5,-4,0\n\n5,6,1")
    src = ARFFSource(path, label_map={"1": 1, "0": -1})
    assert src.feature_names == ("a", "b")
    assert [(x.tolist(), y) for x, y in src] == [([1.0, 2.0], 1), ([3.5, -4.0], -1), ([5.0, 6.0], 1)]
    assert src.report["blank_lines"] == 1
    bad = write(tmp_path / "b.arff", ARFF_HEADER + "1,2,1\n3,4,2\n")
    with pytest.raises(RecordError, match=r"line 10, field 3 \('Class'\): '2' is not a declared value"):
        list(ARFFSource(bad, label_map={"1": 1, "0": -1}))


@pytest.mark.parametrize("row, match", [
    ("1,2,1,7", "expected 3 fields, found 4"),   # scipy.io.arff would drop the 7 silently
    ("1,2", "expected 3 fields, found 2"),
    ("1,x,1", r"field 2 \('b'\): cannot parse 'x'"),
    ("1,?,1", r"field 2 \('b'\): missing value"),
])
def test_arff_malformed_rows(tmp_path, row, match):
    path = write(tmp_path / "m.arff", ARFF_HEADER + "1,2,1\n" + row + "\n")
    with pytest.raises(RecordError, match="line 10") as info:
        list(ARFFSource(path, label_map={"1": 1, "0": -1}))
    assert path in str(info.value)
    with pytest.raises(RecordError, match=match):
        list(ARFFSource(path, label_map={"1": 1, "0": -1}))
    src = ARFFSource(path, label_map={"1": 1, "0": -1}, on_error="skip")
    assert [y for _, y in src] == [1]
    assert src.report["rows_skipped"] == 1


def test_arff_header_errors(tmp_path):
    with pytest.raises(ValueError, match="no @data"):
        ARFFSource(write(tmp_path / "n.arff", "@relation x\n@attribute a numeric\n"))
    nominal_feature = "@relation x\n@attribute c {u,v}\n@attribute a numeric\n@attribute y {0,1}\n@data\n"
    with pytest.raises(ValueError, match="'c' is nominal"):
        ARFFSource(write(tmp_path / "c.arff", nominal_feature))
    with pytest.raises(ValueError, match=r"label_map keys \['2'\]"):
        ARFFSource(write(tmp_path / "t.arff", ARFF_HEADER), label_map={"2": 1, "0": -1})


# -- RiverSource --------------------------------------------------------------------------------------
def test_river_phishing_matches_river_iteration():
    from river import datasets

    reference = list(datasets.Phishing())
    names = list(reference[0][0])
    src = RiverSource("Phishing", label_map={True: 1, False: -1})
    assert len(src) == len(reference) and src.n_features == len(names)
    X_all, y_all, blocks = concat(src, 500)
    assert [b.shape[0] for b, _ in blocks] == [500, 500, len(reference) - 1000]
    np.testing.assert_array_equal(X_all, [[float(x[k]) for k in names] for x, _ in reference])
    np.testing.assert_array_equal(y_all, [1 if label else -1 for _, label in reference])
    assert src.feature_names == tuple(names)
    x0, y0 = next(iter(RiverSource(datasets.Phishing())))
    assert y0 is reference[0][1] and x0.tolist() == [float(reference[0][0][k]) for k in names]


def test_river_source_malformed_records():
    records = [({"a": 1, "b": 2}, 1), ({"a": 3}, 0), ({"a": 4, "b": "x"}, 1), ({"a": 5, "b": 6, "c": 7}, 0),
               ({"a": 8, "b": float("nan")}, 1), ({"b": 10, "a": 9}, 0)]
    with pytest.raises(RecordError, match="record 2 lacks feature 'b'"):
        list(RiverSource(records))
    src = RiverSource(records, on_error="skip")
    X_all, y_all, _ = concat(src, 10)
    np.testing.assert_array_equal(X_all, [[1, 2], [9, 10]])  # the order of the first record's keys
    np.testing.assert_array_equal(y_all, [1, 0])
    assert src.report["skipped_reasons"] == {"different features": 2, "unparseable value": 1,
                                             "non-finite value": 1}
    with pytest.raises(RecordError, match="label 3 is not in label_map"):
        list(RiverSource([({"a": 1}, 3)], label_map={1: 1, 0: -1}))
    assert [y for _, y in RiverSource([({"a": 1}, 3)], label_map=lambda v: v * 2)] == [6]


def test_river_source_argument_errors():
    with pytest.raises(ValueError, match="not one of river's data sets"):
        RiverSource("NoSuchDataset")
    with pytest.raises(ValueError, match="one-shot iterator"):
        RiverSource(iter([({"a": 1}, 1)]))
    with pytest.raises(ValueError, match="label_map"):
        RiverSource([({"a": 1}, 1)], label_map=3)


def test_package_exports():
    for name in streams.__all__:
        assert hasattr(streams, name), name
    assert callable(streams.fetch)
    assert os.path.basename(streams.sources.__file__) == "sources.py"


def test_csv_malformed_quoting_is_located_or_skipped(tmp_path):
    import csv as csv_module

    path = write(tmp_path / "q.csv", "1,2,1\n3,\"" + "9" * 2000 + "\",0\n5,6,1\n")
    previous = csv_module.field_size_limit(1000)  # a process-wide setting: restored below
    try:
        with pytest.raises(RecordError, match="line 2: field larger than field limit"):
            list(CSVSource(path))
        src = CSVSource(path, on_error="skip")
        assert [y for _, y in src] == [1.0, 1.0]
        assert src.report["skipped_reasons"] == {"malformed line": 1}
    finally:
        csv_module.field_size_limit(previous)


def test_csv_label_map_may_be_a_callable(tmp_path):
    path = write(tmp_path / "t.csv", "1,2,yes\n3,4,no\n5,6,maybe\n")
    src = CSVSource(path, label_map=lambda label: {"yes": 1, "no": -1}[label], on_error="skip")
    assert [(x.tolist(), y) for x, y in src] == [([1.0, 2.0], 1), ([3.0, 4.0], -1)]
    assert src.report["skipped_reasons"] == {"unknown label": 1}
    with pytest.raises(RecordError, match=r"line 3, field 3 \('x2'\): label 'maybe' is refused by label_map"):
        list(CSVSource(path, label_map=lambda label: {"yes": 1, "no": -1}[label]))
    with pytest.raises(ValueError, match="label_map must be a mapping"):
        list(CSVSource(path, label_map=3))
