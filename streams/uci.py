"""Four UCI data sets as streams: Hepatitis, Pima Indians Diabetes, Diabetic Retinopathy Debrecen, WDBC.

Each data set has a :class:`UCISpec`: the file name and its sha256, the parser, the label mapping to
±1, the treatment of missing values and **public** per-feature bounds (``spec.lower``, ``spec.upper``).
The bounds come from the data set's documentation or from domain knowledge, are written here as
constants and are never computed from the data (docs/algorithms.md#public-bounds): pass them to a learner as
``bounds=(spec.lower, spec.upper)``. ``spec.bounds_source`` says where each one comes from.

Labels: the event, or the rarer/positive finding, is +1 (the usual convention for AUC):

=============  =========================================  ========================
data set       +1                                         −1
=============  =========================================  ========================
hepatitis      class 1, DIE (32 of 155)                   class 2, LIVE
pima           outcome 1, diabetes                        outcome 0
retinopathy    Class 1, signs of diabetic retinopathy     Class 0
wdbc           diagnosis M, malignant                     diagnosis B, benign
=============  =========================================  ========================

Missing values: only Hepatitis has them (``?``, 167 in 75 rows). By default (``missing="midpoint"``) a
missing feature is replaced by the midpoint of its public bounds, ``(lower + upper)/2``: a constant
fixed before any data is seen, and the point the box map of :class:`onpair.FeatureBounds` sends to 0,
so a missing feature is neutral after scaling. Each replacement is counted in ``report["missing_filled"]``.
``missing="raise"`` makes a missing value an error; an array gives your own (public) fill values.
Pima's physiologically impossible zeros (glucose, blood pressure, skinfold, insulin, BMI) are kept as
recorded: they are inside the public bounds, and treating them as missing is an analysis choice.

Files are looked up in the data directory (``data_dir``, else ``$ONPAIR_DATA``, else ``~/.onpair/data``)
and their sha256 is checked before reading. ``onpair fetch NAME`` (:func:`streams.fetch.fetch`) downloads
Hepatitis, Retinopathy and WDBC from UCI; Pima was withdrawn from UCI and must be placed there by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .fetch import check_sha256, describe_data_dir, resolve_data_dir
from .sources import DEFAULT_BLOCK_SIZE, Source
from .text import ARFFSource, CSVSource

__all__ = ["UCISpec", "UCISource", "SPECS", "get_spec", "load", "missing_file_message"]


@dataclass(frozen=True, eq=False)
class UCISpec:
    """Everything the loader needs to know about one data set, and nothing read from its data.

    Attributes
    ----------
    name, title : str
        Short name (the ``onpair fetch`` argument) and full title.
    filename, sha256 : str
        The file in the data directory and its checksum (as UCI distributes it).
    page, url : str or None
        The UCI page and the official archive (``None`` when UCI no longer distributes the data set).
    format : {"csv", "arff"}
    columns : tuple of str or None
        Column names of the CSV file (``None`` for ARFF, whose header names them).
    target, drop
        The label column and the columns that are neither features nor label.
    feature_names : tuple of str
    label_map : mapping
        The label as written → ±1.
    missing_values : tuple of str
        Tokens that mean "missing".
    lower, upper : ndarray of shape (n_features,)
        Public bounds (read-only), for ``bounds=(spec.lower, spec.upper)``.
    bounds_source, labels_doc, missing_doc, notes : str
        Where the bounds come from; the label mapping; the missing-value treatment; anything else.
    n_records, class_counts
        As documented (SOURCES.md and the UCI page); the loaders do not rely on them.
    """

    name: str
    title: str
    filename: str
    sha256: str
    page: str | None
    url: str | None
    format: str
    columns: tuple | None
    target: object
    drop: tuple
    feature_names: tuple
    label_map: MappingProxyType
    missing_values: tuple
    lower: np.ndarray
    upper: np.ndarray
    bounds_source: str
    labels_doc: str
    missing_doc: str
    n_records: int
    class_counts: MappingProxyType
    license: str
    notes: str = ""

    def __post_init__(self):
        lower = np.array(self.lower, dtype=np.float64)
        upper = np.array(self.upper, dtype=np.float64)
        d = len(self.feature_names)
        if lower.shape != (d,) or upper.shape != (d,) or not np.all(upper > lower):
            raise ValueError(f"{self.name}: bounds must be {d} pairs with lower < upper")
        lower.flags.writeable = False
        upper.flags.writeable = False
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "label_map", MappingProxyType(dict(self.label_map)))
        object.__setattr__(self, "class_counts", MappingProxyType(dict(self.class_counts)))

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    @property
    def bounds(self) -> tuple:
        """``(lower, upper)``, the form the learners' ``bounds`` argument takes."""
        return self.lower, self.upper

    @property
    def midpoint(self) -> np.ndarray:
        """``(lower + upper)/2``: the default fill for a missing value (public, data-independent)."""
        return (self.lower + self.upper) / 2.0

    @property
    def archive_name(self) -> str | None:
        """The file name of the official archive (what ``fetch(base_url=...)`` asks a mirror for)."""
        return None if self.url is None else self.url.rstrip("/").rsplit("/", 1)[-1]

    def path(self, data_dir=None):
        """Where the loader looks for the file."""
        return resolve_data_dir(data_dir) / self.filename

    def __repr__(self) -> str:
        return f"UCISpec(name={self.name!r}, filename={self.filename!r}, n_features={self.n_features})"


# -- Hepatitis ------------------------------------------------------------------------------------------
_HEPATITIS_BINARY = ("STEROID", "ANTIVIRALS", "FATIGUE", "MALAISE", "ANOREXIA", "LIVER BIG", "LIVER FIRM",
                     "SPLEEN PALPABLE", "SPIDERS", "ASCITES", "VARICES")
_HEPATITIS_FEATURES = ("AGE", "SEX", *_HEPATITIS_BINARY, "BILIRUBIN", "ALK PHOSPHATE", "SGOT", "ALBUMIN",
                       "PROTIME", "HISTOLOGY")
# (lower, upper) per feature, in the order above.
_HEPATITIS_BOUNDS = (
    [(0.0, 100.0)]                      # AGE, years: human ages (hepatitis.names lists decades 10..80)
    + [(1.0, 2.0)]                      # SEX, coded 1 = male, 2 = female (hepatitis.names)
    + [(1.0, 2.0)] * 11                 # the no/yes findings, coded 1 = no, 2 = yes (hepatitis.names)
    + [(0.0, 10.0),                     # BILIRUBIN, mg/dl: the names file lists 0.39..4.00; jaundice in
                                        # decompensated liver disease reaches ~10 (clinical range)
       (0.0, 400.0),                    # ALK PHOSPHATE, IU/l: names file 33..250; cholestatic rises to
                                        # about 3x the upper normal limit (~130) allowed for
       (0.0, 2000.0),                   # SGOT (AST), IU/l: the names file's 13..500 are the points the
                                        # listing is binned at, not a range (the file holds 648); acute
                                        # viral hepatitis raises AST to 10-50x its upper normal limit
                                        # (~40): about 2,000
       (1.0, 7.0),                      # ALBUMIN, g/dl: names file 2.1..6.0 (binning points again; the file
                                        # holds 6.4, as haemoconcentration gives); below 1 g/dl is not
                                        # compatible with life, above 7 is not reported in serum
       (0.0, 100.0),                    # PROTIME, prothrombin activity in %: names file 10..90
       (1.0, 2.0)]                      # HISTOLOGY, 1 = no, 2 = yes
)

# -- Pima -----------------------------------------------------------------------------------------------
_PIMA_FEATURES = ("pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi",
                  "diabetes_pedigree", "age")
# Clinical ranges a physician would state without seeing the data (the documentation gives the units).
_PIMA_BOUNDS = [(0.0, 20.0),    # number of pregnancies
                (0.0, 200.0),   # plasma glucose 2 h into an oral glucose tolerance test, mg/dl
                (0.0, 130.0),   # diastolic blood pressure, mm Hg
                (0.0, 100.0),   # triceps skinfold thickness, mm
                (0.0, 900.0),   # 2-h serum insulin, µU/ml
                (0.0, 70.0),    # body mass index, kg/m²
                (0.0, 2.5),     # diabetes pedigree function (a score; the original paper's range)
                (0.0, 100.0)]   # age, years

# -- Diabetic Retinopathy Debrecen ---------------------------------------------------------------------
_RETINOPATHY_FEATURES = ("quality", "pre_screening", *(f"ma_{a}" for a in ("0.5", "0.6", "0.7", "0.8", "0.9",
                                                                             "1.0")),
                         *(f"exudates_{k}" for k in range(1, 9)), "macula_od_distance", "od_diameter",
                         "am_fm")
_RETINOPATHY_BOUNDS = (
    [(0.0, 1.0), (0.0, 1.0)]            # 0, 1: binary (quality assessment, pre-screening), UCI page
    + [(0.0, 300.0)] * 6                # 2-7: number of microaneurysms detected at confidence 0.5..1.
                                        # Messidor grades by MA count (R1 <= 5, R2 < 15, R3 >= 15); 20x the
                                        # top grade threshold leaves room for a detector's false positives
                                        # at low confidence (10x clipped a record of the file: 151)
    + [(0.0, 1207.0)] * 8               # 8-15: exudate measures "normalised by the diameter of the ROI":
                                        # exudate pixels / ROI diameter. Exudates cannot cover more than the
                                        # ROI, (pi/4) * D^2 pixels, so the measure is at most (pi/4) * D
                                        # = 1,207 for D = 1,536 px, the largest Messidor ROI. (A guess of
                                        # 10% coverage, 120, clipped 182 records: a physical bound only.)
    + [(0.0, 1.0),                      # 16: macula-optic disc distance / ROI diameter: both centres lie in
                                        # the ROI, so at most 1 (UCI page: normalised by the ROI diameter)
       (0.0, 0.3),                      # 17: optic disc diameter, as a fraction of the ROI diameter: a disc
                                        # of ~1.8 mm in a 45-degree field of ~13 mm is ~0.14; doubled
       (0.0, 1.0)]                      # 18: binary (AM/FM-based classification), UCI page
)

# -- WDBC -----------------------------------------------------------------------------------------------
_WDBC_MEASURES = ("radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
                  "concave_points", "symmetry", "fractal_dimension")
_WDBC_FEATURES = tuple(f"{m}_{s}" for s in ("mean", "se", "worst") for m in _WDBC_MEASURES)
# [0, maximum printed in the data set's documentation (scikit-learn's load_breast_cancer().DESCR,
# "Summary Statistics"), rounded outward]. Those maxima are the data set's own, published with it: public
# for this benchmark, but only a stand-in for ranges stated without the data, which private data needs.
_WDBC_UPPER = (30, 40, 200, 2600, 0.2, 0.4, 0.5, 0.25, 0.35, 0.1,
               3, 5, 25, 600, 0.035, 0.15, 0.4, 0.06, 0.08, 0.03,
               40, 50, 260, 4300, 0.25, 1.1, 1.3, 0.3, 0.7, 0.21)


def _lower(bounds):
    return [lo for lo, _ in bounds]


def _upper(bounds):
    return [hi for _, hi in bounds]


_MIDPOINT_DOC = ("'?' replaced by the midpoint of the feature's public bounds (missing='midpoint', the "
                 "default), which FeatureBounds maps to 0; missing='raise' makes it an error")

SPECS = MappingProxyType({
    "hepatitis": UCISpec(
        name="hepatitis", title="Hepatitis", filename="hepatitis.data",
        sha256="9971f9d18abb4fc9dd6749eefb0f864b36fa7bdd59f54188c0b148a5c28214bc",
        page="https://archive.ics.uci.edu/dataset/46/hepatitis",
        url="https://archive.ics.uci.edu/static/public/46/hepatitis.zip",
        format="csv", columns=("CLASS", *_HEPATITIS_FEATURES), target="CLASS", drop=(),
        feature_names=_HEPATITIS_FEATURES, label_map={"1": 1, "2": -1}, missing_values=("?",),
        lower=_lower(_HEPATITIS_BOUNDS), upper=_upper(_HEPATITIS_BOUNDS),
        bounds_source=("hepatitis.names (attribute codes and listed values) widened to clinical ranges: AGE "
                       "0-100 y; SEX and the 12 no/yes attributes 1-2 (their codes); BILIRUBIN 0-10 mg/dl; "
                       "ALK PHOSPHATE 0-400 IU/l; SGOT 0-2000 IU/l; ALBUMIN 1-7 g/dl; PROTIME 0-100 % (the "
                       "names file's listed values are the points its tables are binned at, not ranges)"),
        labels_doc="class 1 (DIE) = +1, class 2 (LIVE) = -1: death is the event (the rarer class)",
        missing_doc=_MIDPOINT_DOC, n_records=155, class_counts={1: 32, -1: 123}, license="CC BY 4.0"),
    "pima": UCISpec(
        name="pima", title="Pima Indians Diabetes", filename="pima-indians-diabetes.csv",
        sha256="06f5b7c2cd7bca686fda4f92eab5f61e7ff6426a9acefa2e3dda04fc54293cf5",
        page=None, url=None,
        format="csv", columns=(*_PIMA_FEATURES, "outcome"), target="outcome", drop=(),
        feature_names=_PIMA_FEATURES, label_map={"1": 1, "0": -1}, missing_values=(),
        lower=_lower(_PIMA_BOUNDS), upper=_upper(_PIMA_BOUNDS),
        bounds_source=("clinical ranges, units from the documentation: pregnancies 0-20, glucose 0-200 mg/dl, "
                       "diastolic pressure 0-130 mm Hg, skinfold 0-100 mm, insulin 0-900 µU/ml, BMI 0-70, "
                       "pedigree function 0-2.5, age 0-100 y"),
        labels_doc="outcome 1 (diabetes) = +1, outcome 0 = -1",
        missing_doc=("no missing-value marker; zeros that are physiologically impossible (glucose, blood "
                     "pressure, skinfold, insulin, BMI) are kept as recorded (they lie inside the bounds)"),
        n_records=768, class_counts={1: 268, -1: 500},
        license="UCI states none (withdrawn); data from NIDDK",
        notes=("withdrawn from UCI: place your copy in the data directory; onpair checks its sha256")),
    "retinopathy": UCISpec(
        name="retinopathy", title="Diabetic Retinopathy Debrecen", filename="messidor_features.arff",
        sha256="b83485dd519127ac1ba06a95da5f1d12d4bde2a362eb32d7d353bdcabfa08a93",
        page="https://archive.ics.uci.edu/dataset/329/diabetic+retinopathy+debrecen",
        url="https://archive.ics.uci.edu/static/public/329/diabetic+retinopathy+debrecen.zip",
        format="arff", columns=None, target="Class", drop=(),
        feature_names=_RETINOPATHY_FEATURES, label_map={"1": 1, "0": -1}, missing_values=("?",),
        lower=_lower(_RETINOPATHY_BOUNDS), upper=_upper(_RETINOPATHY_BOUNDS),
        bounds_source=("UCI page (binary features 0, 1, 18: 0-1; distance normalised by the ROI diameter: "
                       "0-1), physics (exudate measures 0-1207: exudates within the ROI) and domain knowledge "
                       "(MA counts 0-300; optic disc diameter 0-0.3 of the ROI): see the comments in "
                       "streams/uci.py"),
        labels_doc="Class 1 (signs of diabetic retinopathy) = +1, Class 0 = -1",
        missing_doc="no missing values documented; ARFF's '?' would be treated as " + _MIDPOINT_DOC,
        n_records=1151, class_counts={1: 611, -1: 540}, license="CC BY 4.0",
        notes="ARFF header parsed by scipy.io.arff; data rows parsed strictly, one block at a time"),
    "wdbc": UCISpec(
        name="wdbc", title="Breast Cancer Wisconsin (Diagnostic)", filename="wdbc.data",
        sha256="d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a",
        page="https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic",
        url="https://archive.ics.uci.edu/static/public/17/breast+cancer+wisconsin+diagnostic.zip",
        format="csv", columns=("id", "diagnosis", *_WDBC_FEATURES), target="diagnosis", drop=("id",),
        feature_names=_WDBC_FEATURES, label_map={"M": 1, "B": -1}, missing_values=(),
        lower=[0.0] * 30, upper=list(_WDBC_UPPER),
        bounds_source=("0 to the maxima printed in the data set's documentation (scikit-learn's "
                       "load_breast_cancer DESCR, summary statistics), rounded outward"),
        labels_doc="diagnosis M (malignant) = +1, B (benign) = -1",
        missing_doc="no missing values", n_records=569, class_counts={1: 212, -1: 357}, license="CC BY 4.0",
        notes="the ID column is dropped"),
})


def get_spec(name: str) -> UCISpec:
    """The spec of a data set by its short name.

    Examples
    --------
    >>> spec = get_spec("wdbc")
    >>> spec.filename, spec.n_features, spec.label_map["M"]
    ('wdbc.data', 30, 1)
    """
    if not isinstance(name, str) or name.lower() not in SPECS:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(SPECS)}")
    return SPECS[name.lower()]


def missing_file_message(spec: UCISpec, data_dir=None) -> str:
    """What to do when the file of ``spec`` is not in the data directory."""
    path = spec.path(data_dir)
    where = f"(data directory from {describe_data_dir(data_dir)})"
    if spec.url is None:
        return (f"{spec.title} was withdrawn from the UCI repository, so onpair cannot download it: place "
                f"your copy at {path} {where}, or set $ONPAIR_DATA to the folder that holds it. Expected: "
                f"{spec.filename}, {spec.n_records} rows of {len(spec.columns)} comma-separated columns, no "
                f"header, sha256 {spec.sha256}")
    return (f"{spec.filename} not found at {path} {where}. Download it with `onpair fetch {spec.name}` "
            f"(or streams.fetch({spec.name!r})), or set $ONPAIR_DATA to the folder that holds it")


class UCISource(Source):
    """One of the UCI data sets as a stream of ``(x, y)`` with ``y`` in {−1, +1}.

    Parameters
    ----------
    name : str
        ``"hepatitis"``, ``"pima"``, ``"retinopathy"`` or ``"wdbc"``.
    data_dir : path, optional
        Default: ``$ONPAIR_DATA``, else ``~/.onpair/data``.
    missing : "midpoint", "raise" or array-like of shape (n_features,)
        The treatment of missing values (see the module docstring). An array gives public fill values.
    verify : bool, default True
        Check the file's sha256 against the spec when the source is built (then ``len`` is the
        documented number of records). ``verify=False`` reads any file with the same layout, and the
        length is then unknown in advance.
    on_error : {"raise", "skip"}
        As for :class:`streams.CSVSource`.

    Attributes
    ----------
    spec : UCISpec
    path : pathlib.Path

    Examples
    --------
    (These examples read the data files: the doctests skip them when ``$ONPAIR_DATA`` lacks them.)

    >>> from onpair import OnPairStrC
    >>> src = UCISource("wdbc")
    >>> len(src), src.n_features
    (569, 30)
    >>> learner = OnPairStrC(epsilon=1.0, delta=1e-3, bounds=src.spec.bounds, n=len(src))
    >>> for X, y in src.iter_blocks(256):
    ...     _ = learner.learn_many(X, y)
    >>> learner.n_seen
    569
    """

    def __init__(self, name: str, data_dir=None, *, missing="midpoint", verify: bool = True,
                 on_error: str = "raise"):
        spec = get_spec(name)
        path = spec.path(data_dir)
        if not path.is_file():
            raise FileNotFoundError(missing_file_message(spec, data_dir))
        if verify:
            check_sha256(path, spec.sha256, what=f"{path} ({spec.title})")
        if isinstance(missing, str):
            if missing == "midpoint":
                fill = spec.midpoint
            elif missing == "raise":
                fill = None
            else:
                raise ValueError(f'missing must be "midpoint", "raise" or an array of fill values, got {missing!r}')
        else:
            try:
                fill = np.asarray(missing, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"missing must be \"midpoint\", \"raise\" or an array of fill values, got "
                                 f"{missing!r}") from None
            if fill.shape != (spec.n_features,) or not np.all(np.isfinite(fill)):
                raise ValueError(f"missing: fill values must be {spec.n_features} finite numbers, got {missing!r}")
        self.spec = spec
        self.path = path
        self.verified = bool(verify)
        if spec.format == "arff":
            inner = ARFFSource(path, target=spec.target, drop=spec.drop, label_map=dict(spec.label_map),
                               fill=fill, on_error=on_error)
            if len(inner.feature_names) != spec.n_features:
                raise ValueError(f"{path}: {len(inner.feature_names)} numeric attributes besides the label, "
                                 f"expected {spec.n_features} for {spec.title}")
        else:
            inner = CSVSource(path, names=spec.columns, target=spec.target, drop=spec.drop,
                              label_map=dict(spec.label_map), missing_values=spec.missing_values, fill=fill,
                              on_error=on_error)
        self._inner = inner
        super().__init__(on_error)
        self.feature_names = spec.feature_names

    def _describe(self) -> str:
        return os.fspath(getattr(self, "path", "UCISource"))

    @property
    def report(self) -> dict:
        """The report of the last pass (see :class:`streams.CSVSource`)."""
        return self._inner.report

    @report.setter
    def report(self, value) -> None:  # the base class resets it; the inner source keeps its own
        pass

    @property
    def n_records(self) -> int | None:
        return self.spec.n_records if self.verified and self.on_error == "raise" else None

    def iter_blocks(self, block_size: int = DEFAULT_BLOCK_SIZE):
        return self._inner.iter_blocks(block_size)


def load(name: str, data_dir=None, *, missing="midpoint", verify: bool = True):
    """Read a whole UCI data set: ``(X, y, spec)``.

    Parameters
    ----------
    name, data_dir, missing, verify
        As for :class:`UCISource`.

    Returns
    -------
    X : ndarray of shape (n, d), float64
        Raw features (not scaled: scaling with the public bounds is the learner's job).
    y : ndarray of shape (n,), int64
        Labels in {−1, +1}.
    spec : UCISpec
        Bounds for the learners: ``bounds=(spec.lower, spec.upper)``.

    Examples
    --------
    (This example reads the data file: the doctests skip it when ``$ONPAIR_DATA`` lacks it.)

    >>> X, y, spec = load("pima")
    >>> X.shape, int((y == 1).sum())
    ((768, 8), 268)
    """
    source = UCISource(name, data_dir, missing=missing, verify=verify)
    blocks = list(source.iter_blocks(DEFAULT_BLOCK_SIZE))
    if not blocks:
        return np.empty((0, source.spec.n_features)), np.empty(0, dtype=np.int64), source.spec
    X = np.concatenate([X for X, _ in blocks])
    y = np.concatenate([y for _, y in blocks]).astype(np.int64)
    return X, y, source.spec
