"""Save and load online learners: one file, written atomically, versioned, checked, resumed once.

This module is the outer layer of a snapshot: the header and its SHA-256 digest, the format version,
the encoding of the constructor's parameters, the consume-once rule and the trust in wrapper classes.
What a learner holds is written and checked by its own state objects (each reads its part through
:class:`onpair.snapshot.SnapshotReader`): a file that any object finds wrong raises a ``ValueError``
naming the file and the field, and never becomes a fresh learner. The format (version 1) and the
fork rule are documented in docs/guide.md, "Snapshots".

Examples
--------
>>> import os, tempfile
>>> import numpy as np
>>> import onpair
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(0, 1, size=(200, 3)); y = X[:, 0] > 0.5
>>> whole = onpair.OnPairStrC(bounds=(0, 1), n=200, seed=3).learn_many(X, y)
>>> path = os.path.join(tempfile.mkdtemp(), "learner.onpair")
>>> onpair.OnPairStrC(bounds=(0, 1), n=200, seed=3).learn_many(X[:90], y[:90]).save(path)
>>> resumed = onpair.load(path).learn_many(X[90:], y[90:])
>>> bool(np.array_equal(resumed.released_models, whole.released_models))
True
>>> resumed.privacy_report() == whole.privacy_report()
True
>>> onpair.load(path)
Traceback (most recent call last):
...
FileNotFoundError: ...was already loaded...
"""

from __future__ import annotations

import contextlib
import datetime
import glob
import hashlib
import hmac
import importlib
import io
import json
import math
import os
import secrets
import warnings
import zipfile

import numpy as np

from ._io import atomic_path
from .bounds import FeatureBounds
from .learners import OnPairC, OnPairStats, OnPairStrC, PairwiseGIGA
from .snapshot import SnapshotReader

__all__ = ["save_learner", "load_learner", "load", "FORMAT_VERSION", "MAGIC"]

MAGIC = b"onpair-learner"
FORMAT_VERSION = 1
#: Learners that can be saved, by the name stored in the file (exact classes: a subclass may hold
#: state this module does not know about).
LEARNER_CLASSES = {cls.__name__: cls for cls in (PairwiseGIGA, OnPairStrC, OnPairC, OnPairStats)}
#: Wrappers (``extra`` owners such as the river adapters) are imported by name on load, from these
#: modules only: a file must not make :func:`load` import arbitrary code.
TRUSTED_WRAPPER_MODULES = ("onpair",)
_STATE_KEY = "state_json"
_HEADER_LIMIT = 256


# ==================================================================================================
# public API
# ==================================================================================================
def save_learner(learner, path, extra=None, *, wrapper=None) -> None:
    """Write ``learner``'s whole state to ``path``, atomically (temporary file, fsync, rename).

    Parameters
    ----------
    learner : PairwiseGIGA, OnPairStrC or OnPairC
        The learner to save. It may keep learning (each later ``save`` to the same path replaces the
        snapshot), but then it and the snapshot are two mechanisms on the same records, whose ρ add
        up. So that they never share noise, a private learner without a ``seed`` draws a fresh noise
        generator from OS entropy after the snapshot is written (the snapshot still resumes bit for
        bit; with a seed, as for every seeded experiment, the noise is reproducible and so shared).
    path : str or os.PathLike
        Destination. A reader sees the previous file or the new one, never half of one.
    extra : dict, optional
        JSON-able fields of a wrapper around the learner (feature order, label map, …), returned
        unchanged by :func:`load_learner`.
    wrapper : type or str, optional
        The wrapper class (or ``"module:QualName"``) that :func:`load` rebuilds with
        ``wrapper._from_persisted(learner, extra)``. It must live in the ``onpair`` package.

    Raises
    ------
    ValueError
        If the learner cannot be saved faithfully: an unknown class, a constructor parameter that
        is not JSON-able or was changed after construction, or ``extra`` that is not JSON-able.
    RuntimeError
        If the learner was loaded with ``consume=False`` (a read-only view of someone else's
        snapshot: saving it would fork that snapshot).

    Examples
    --------
    >>> import os, tempfile
    >>> from onpair import PairwiseGIGA
    >>> from onpair.persistence import save_learner, load_learner
    >>> path = os.path.join(tempfile.mkdtemp(), "giga.onpair")
    >>> save_learner(PairwiseGIGA(n_features=2).learn_one([0.1, 0.2], 1), path, extra={"order": ["a", "b"]})
    >>> learner, extra = load_learner(path)
    >>> learner.n_seen, extra
    (1, {'order': ['a', 'b']})
    """
    name = type(learner).__name__
    if LEARNER_CLASSES.get(name) is not type(learner):
        raise ValueError(
            f"cannot save a {type(learner).__module__}.{type(learner).__qualname__} to {os.fspath(path)!r}: "
            f"only {', '.join(LEARNER_CLASSES)} can be saved"
        )
    if learner._read_only:
        raise RuntimeError(f"cannot save to {os.fspath(path)!r}: {learner._read_only}")
    arrays: dict = {}
    params = {key: _encode(getattr(learner, key), arrays, key, path) for key in learner._param_names()}
    config = _normalised(learner._settings())
    # The file is rebuilt from the public parameters, so they must still say what the learner uses
    # (a parameter changed after construction would resume a different analysis).
    twin = _construct(type(learner), {k: _decode(v, arrays, None, path) for k, v in params.items()}, path)
    twin_config = _normalised(twin._settings())
    if twin_config != config:
        raise ValueError(
            f"cannot save to {os.fspath(path)!r}: {_config_difference(config, twin_config)} — a constructor "
            "parameter was changed after construction, so the file could not resume this learner"
        )
    scalars = _normalised(learner._export_state(arrays))
    if wrapper is not None and not isinstance(wrapper, str):
        wrapper = f"{wrapper.__module__}:{wrapper.__qualname__}"
    if wrapper is not None:
        _check_wrapper_name(wrapper, path)
    from . import __version__

    document = {
        "format": FORMAT_VERSION,
        "class": name,
        "onpair_version": __version__,
        "snapshot_id": secrets.token_hex(16),
        "saved_at": _utc_stamp(),
        "params": params,
        "config": config,
        "state": scalars,
        "extra": extra,
        "wrapper": wrapper,
    }
    try:
        text = json.dumps(document, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        what = "extra" if _not_jsonable(extra) else "the learner's state"
        raise ValueError(f"cannot save to {os.fspath(path)!r}: {what} is not JSON-able ({exc})") from None
    arrays[_STATE_KEY] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = buffer.getvalue()
    header = b"%s %d sha256=%s bytes=%d\n" % (MAGIC, FORMAT_VERSION, hashlib.sha256(payload).hexdigest().encode(),
                                               len(payload))
    with atomic_path(path, suffix=".tmp") as tmp:
        with open(tmp, "wb") as handle:
            handle.write(header)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
    _fsync_directory(path)
    learner._snapshot_written()


def load_learner(path, *, consume=True, finish=None):
    """Load a learner saved by :func:`save_learner` (or ``learner.save``), with its ``extra``.

    Parameters
    ----------
    path : str or os.PathLike
        The snapshot.
    consume : bool, default True
        Rename the snapshot to ``<path>.loaded-<UTC timestamp>`` before reading it, so that it can be
        resumed only once (see the module docstring, "Forks"). With ``consume=False`` the file is
        left in place and a private learner comes back read-only: it reports and scores, but
        ``learn_one``, ``learn_many`` and ``save`` raise ``RuntimeError``.
    finish : callable, optional
        ``finish(learner, extra)`` builds what to return (a wrapper rebuilding itself); it runs while the
        file can still be put back, so an error it raises leaves the snapshot in place.

    Returns
    -------
    learner : PairwiseGIGA, OnPairStrC or OnPairC
        The learner, in the state it was saved in.
    extra : dict or None
        What the wrapper passed to :func:`save_learner`. (With ``finish``: what it returns.)

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path`` (the message says so if it was already loaded).
    ValueError
        If the file is not a complete, unmodified snapshot of a known format version: a wrong
        header, a version other than 1, a digest that does not match, a missing or unexpected key,
        a shape, dtype or value that disagrees with the parameters, or a release history or ledger
        that the public parameters do not reproduce. A consumed file is put back in that case.

    Examples
    --------
    >>> import os, tempfile
    >>> from onpair import OnPairStrC
    >>> from onpair.persistence import load_learner
    >>> path = os.path.join(tempfile.mkdtemp(), "private.onpair")
    >>> OnPairStrC(n_features=2, n=100, seed=0).learn_one([0.1, 0.2], 1).save(path)
    >>> view, _ = load_learner(path, consume=False)   # inspection: the file stays
    >>> view.privacy_report()["n_seen"], os.path.exists(path)
    (1, True)
    >>> view.learn_one([0.3, 0.4], 0)
    Traceback (most recent call last):
    ...
    RuntimeError: ...loaded with consume=False...
    """
    if finish is None:
        return _load(path, consume, lambda learner, document: (learner, document["extra"]))
    return _load(path, consume, lambda learner, document: finish(learner, document["extra"]))


def load(path, *, consume=True):
    """Load whatever ``save`` wrote to ``path``: a learner, or the wrapper that saved its learner.

    This is ``onpair.load``. Parameters, errors and the fork policy are those of
    :func:`load_learner`; a file written by a wrapper (``save_learner(..., wrapper=...)``) comes back
    as ``wrapper._from_persisted(learner, extra)``.

    Examples
    --------
    >>> import os, tempfile
    >>> import onpair
    >>> path = os.path.join(tempfile.mkdtemp(), "c.onpair")
    >>> onpair.OnPairC(n_features=3, n=50, seed=1).save(path)
    >>> type(onpair.load(path)).__name__
    'OnPairC'
    """
    def finish(learner, document):
        if document["wrapper"] is None:
            return learner
        owner = _import_wrapper(document["wrapper"], path)
        return owner._from_persisted(learner, document["extra"])

    return _load(path, consume, finish)


# ==================================================================================================
# loading: consume, read, check, rebuild
# ==================================================================================================
def _load(path, consume, finish):
    if not isinstance(consume, bool):
        raise TypeError(f"consume must be True or False, got {consume!r}")
    shown = os.fspath(path)
    source = _consume(shown) if consume else shown
    try:
        with open(source, "rb") as handle:
            data = handle.read()
        document, arrays = _parse(data, shown)
        learner = _rebuild(document, arrays, shown)
        if not consume:
            learner._make_read_only(
                f"this {type(learner).__name__} was loaded with consume=False from {shown!r} for inspection: "
                "it cannot learn or be saved, because a second live copy of a snapshot would reuse its "
                "noise and its budget. Load the snapshot with consume=True (the default) to continue."
            )
        return finish(learner, document)
    except BaseException:
        if source != shown:
            _put_back(source, shown)
        raise


def _consume(path: str) -> str:
    """Rename the snapshot out of the way (atomic: of two concurrent loads, one rename wins)."""
    target = f"{path}.loaded-{_utc_stamp()}"
    while os.path.exists(target):  # two loads within one microsecond: keep both names distinct
        target += "+"
    try:
        os.rename(path, target)
    except FileNotFoundError:
        earlier = sorted(glob.glob(glob.escape(path) + ".loaded-*"))
        if earlier:
            raise FileNotFoundError(
                f"{path!r} was already loaded (it is now {earlier[-1]!r}): a snapshot resumes once, since two "
                "learners resumed from it would reuse the same noise and the same budget. Resume from the "
                "learner loaded first, or use load(path, consume=False) on the renamed file to inspect it. "
                "Rename it back only if the earlier resume released nothing, or replays exactly the same records."
            ) from None
        raise FileNotFoundError(f"no onpair learner snapshot at {path!r}") from None
    return target


def _put_back(consumed: str, path: str) -> None:
    """Undo the rename of a file that could not be loaded, unless ``path`` was written meanwhile."""
    with contextlib.suppress(OSError):
        if not os.path.exists(path):
            os.rename(consumed, path)


def _parse(data: bytes, path: str):
    """Header, digest and archive of a snapshot: (document, arrays), or a ValueError."""
    if not data.startswith(MAGIC + b" "):
        if not data:
            raise ValueError(f"{path!r} is empty: not an onpair learner snapshot (truncated to 0 bytes?)")
        raise ValueError(f"{path!r} is not an onpair learner snapshot (its first line does not start with "
                         f"{MAGIC.decode()!r})")
    end = data.find(b"\n", 0, _HEADER_LIMIT)
    if end < 0:
        raise ValueError(f"{path!r}: the header line is incomplete (file truncated, or not a snapshot)")
    fields = data[:end].split(b" ")
    try:
        version = int(fields[1])
    except ValueError:
        raise ValueError(f"{path!r}: unreadable format version {fields[1]!r} in the header") from None
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{path!r} is an onpair learner snapshot of format version {version}; this version of onpair "
            f"reads format version {FORMAT_VERSION} only"
        )
    tags = dict(field.split(b"=", 1) for field in fields[2:] if b"=" in field)
    if len(fields) != 4 or set(tags) != {b"sha256", b"bytes"}:
        raise ValueError(f"{path!r}: malformed header {data[:end]!r}")
    try:
        expected_size = int(tags[b"bytes"])
        expected_digest = tags[b"sha256"].decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{path!r}: malformed header {data[:end]!r}") from None
    payload = data[end + 1:]
    if len(payload) != expected_size:
        state = "truncated" if len(payload) < expected_size else "has trailing bytes"
        raise ValueError(f"{path!r} {state}: the header announces {expected_size} payload bytes, the file holds "
                         f"{len(payload)}")
    if not hmac.compare_digest(hashlib.sha256(payload).hexdigest(), expected_digest):
        raise ValueError(f"{path!r} was modified or corrupted: the SHA-256 of its payload does not match the header")
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path!r}: unreadable payload ({exc})") from None
    raw = arrays.pop(_STATE_KEY, None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"{path!r}: the payload has no state ({_STATE_KEY!r} missing or malformed)")
    try:
        document = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path!r}: the state is not valid JSON ({exc})") from None
    SnapshotReader(path).mapping(document, "state", ("format", "class", "onpair_version", "snapshot_id", "saved_at", "params",
                                      "config", "state", "extra", "wrapper"))
    if document["format"] != FORMAT_VERSION:
        raise ValueError(f"{path!r}: the state says format version {document['format']!r}, the header {version}")
    return document, arrays


#: Constructor parameters added after the format was first written, with the value that reproduces
#: what older files were written with: the metric task's papers' loss (threshold 1, uniform pairs).
LEGACY_PARAMS = {"threshold": 1.0, "pair_weights": None, "n_classes": None}


def _rebuild(document, arrays, path):
    reader = SnapshotReader(path, arrays)
    name = document["class"]
    cls = LEARNER_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path!r}: unknown learner class {name!r} (known: {', '.join(LEARNER_CLASSES)})")
    if document["wrapper"] is not None:
        if not isinstance(document["wrapper"], str):
            raise ValueError(f"{path!r}: wrapper must be a 'module:QualName' string, got {document['wrapper']!r}")
        _check_wrapper_name(document["wrapper"], path)
    params = document["params"]
    names = cls._param_names()
    reader.mapping(params, "params", names, required=[k for k in names if k not in LEGACY_PARAMS])
    # A file written before a parameter existed resumes with the value it was written with.
    params = dict({k: v for k, v in LEGACY_PARAMS.items() if k in names}, **params)
    decoded = {k: _decode(v, arrays, reader.referenced, path) for k, v in params.items()}
    learner = _construct(cls, decoded, path)
    config = _normalised(learner._settings())
    if config != document["config"]:
        raise ValueError(
            f"{path!r}: the parameters no longer resolve to the saved settings "
            f"({_config_difference(document['config'], config)}); this file cannot resume the learner"
        )
    learner._restore_state(document["state"], reader)
    unexpected = reader.unreferenced()
    if unexpected:
        raise ValueError(f"{path!r}: unexpected arrays in the payload: {', '.join(unexpected)}")
    return learner


def _construct(cls, params, path):
    # Warnings about the parameters (δ ≥ 1/n, paper mode's warm-up) were issued when the learner was
    # first built; rebuilding it must not repeat them, nor fail under -W error.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls(**params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{os.fspath(path)!r}: the saved parameters do not build a {cls.__name__} ({exc})") from None


# ==================================================================================================
# parameters and settings
# ==================================================================================================
def _config_difference(saved: dict, rebuilt: dict) -> str:
    keys = sorted(set(saved) | set(rebuilt))
    diffs = [f"{k}: saved {saved.get(k)!r}, rebuilt {rebuilt.get(k)!r}" for k in keys if saved.get(k) != rebuilt.get(k)]
    return "; ".join(diffs) or "settings differ"


def _encode(value, arrays: dict, where: str, path):
    """A constructor parameter as JSON; arrays go into the archive, tuples and bounds are tagged."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"cannot save to {os.fspath(path)!r}: parameter {where} = {value!r} is not finite")
        return float(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ValueError(f"cannot save to {os.fspath(path)!r}: parameter {where} has dtype {value.dtype}")
        key = "param." + where
        arrays[key] = value
        return {"__array__": key}
    if isinstance(value, FeatureBounds):
        return {"__bounds__": _encode(value.to_dict(), arrays, where + ".bounds", path)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{where}.{i}", path) for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, arrays, f"{where}.{i}", path) for i, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode(v, arrays, f"{where}.{k}", path) for k, v in value.items()}}
    raise ValueError(f"cannot save to {os.fspath(path)!r}: parameter {where} = {value!r} "
                     f"({type(value).__name__}) cannot be stored; pass plain numbers, strings, lists or arrays")


def _decode(value, arrays: dict, referenced=None, path=None):
    if isinstance(value, list):
        return [_decode(v, arrays, referenced, path) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise ValueError(f"{os.fspath(path)!r}: malformed parameter {value!r}")
    (tag, inner), = value.items()
    if tag == "__array__":
        if not isinstance(inner, str) or inner not in arrays:
            raise ValueError(f"{os.fspath(path)!r}: missing array {inner!r} for a parameter")
        if referenced is not None:
            referenced.add(inner)
        return np.array(arrays[inner])
    if tag == "__tuple__" and isinstance(inner, list):
        return tuple(_decode(v, arrays, referenced, path) for v in inner)
    if tag == "__bounds__" and isinstance(inner, dict):
        fields = _decode(inner, arrays, referenced, path)
        try:
            return FeatureBounds(**fields)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{os.fspath(path)!r}: invalid saved bounds ({exc})") from None
    if tag == "__dict__" and isinstance(inner, dict):
        return {k: _decode(v, arrays, referenced, path) for k, v in inner.items()}
    raise ValueError(f"{os.fspath(path)!r}: malformed parameter {value!r}")


# ==================================================================================================
# wrappers
# ==================================================================================================
def _check_wrapper_name(name: str, path) -> None:
    module, sep, qualname = name.partition(":")
    trusted = any(module == m or module.startswith(m + ".") for m in TRUSTED_WRAPPER_MODULES)
    if not sep or not qualname or not trusted:
        raise ValueError(f"{os.fspath(path)!r}: wrapper {name!r} is not a 'module:QualName' in "
                         f"{', '.join(TRUSTED_WRAPPER_MODULES)}")


def _import_wrapper(name: str, path):
    _check_wrapper_name(name, path)
    module, _, qualname = name.partition(":")
    try:
        owner = importlib.import_module(module)
        for part in qualname.split("."):
            owner = getattr(owner, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{os.fspath(path)!r}: cannot import the wrapper {name!r} ({exc})") from None
    if not callable(getattr(owner, "_from_persisted", None)):
        raise ValueError(f"{os.fspath(path)!r}: wrapper {name!r} has no _from_persisted(learner, extra)")
    return owner


# ==================================================================================================
# small helpers
# ==================================================================================================
def _normalised(value):
    """Through JSON and back: plain types, as the loader will see them."""
    return json.loads(json.dumps(value, allow_nan=False))


def _not_jsonable(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return True
    return False


def _utc_stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def _fsync_directory(path) -> None:
    """Make the rename itself durable (best effort: not every platform can open a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
