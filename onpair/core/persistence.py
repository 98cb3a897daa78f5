"""Save and load online learners: one file, written atomically, versioned, checked, resumed once.

This module is the outer layer of a snapshot: the header and its SHA-256 digest, the format version,
the encoding of the constructor's parameters, the consume-once rule and the trust in wrapper classes.
What a learner holds is written and checked by its own state objects (each reads its part through
:class:`onpair.core.snapshot.SnapshotReader`): a file that any object finds wrong raises a ``ValueError``
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
import os
import secrets
import zipfile

import numpy as np

from .._version import __version__
from ._io import atomic_path
from .snapshot import (SnapshotReader, learner_document, make_read_only, rebuild_learner, saved_class,
                            snapshot_written)

__all__ = ["save_learner", "load_learner", "load", "FORMAT_VERSION", "MAGIC"]

MAGIC = b"onpair-learner"
FORMAT_VERSION = 1
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
        ``wrapper.from_persisted(learner, extra)``. It must live in the ``onpair`` package.

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
    >>> save_learner(PairwiseGIGA(bounds=(0, 1), n_features=2).learn_one([0.1, 0.2], 1), path, extra={"order": ["a", "b"]})
    >>> learner, extra = load_learner(path)
    >>> learner.n_seen, extra
    (1, {'order': ['a', 'b']})
    """
    arrays: dict = {}
    name, params, config, scalars = learner_document(learner, arrays, path)
    if wrapper is not None and not isinstance(wrapper, str):
        wrapper = f"{wrapper.__module__}:{wrapper.__qualname__}"
    if wrapper is not None:
        _check_wrapper_name(wrapper, path)
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
    snapshot_written(learner)


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
    >>> OnPairStrC(bounds=(0, 1), n_features=2, n=100, seed=0).learn_one([0.1, 0.2], 1).save(path)
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
    as ``wrapper.from_persisted(learner, extra)``.

    Examples
    --------
    >>> import os, tempfile
    >>> import onpair
    >>> path = os.path.join(tempfile.mkdtemp(), "c.onpair")
    >>> onpair.OnPairC(bounds=(0, 1), n_features=3, n=50, seed=1).save(path)
    >>> type(onpair.load(path)).__name__
    'OnPairC'
    """
    def finish(learner, document):
        if document["wrapper"] is None:
            return learner
        owner = _import_wrapper(document["wrapper"], path)
        return owner.from_persisted(learner, document["extra"])

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
            make_read_only(
                learner,
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


def _rebuild(document, arrays, path):
    cls = saved_class(document["class"], path)
    if document["wrapper"] is not None:
        if not isinstance(document["wrapper"], str):
            raise ValueError(f"{path!r}: wrapper must be a 'module:QualName' string, got {document['wrapper']!r}")
        _check_wrapper_name(document["wrapper"], path)
    return rebuild_learner(cls, document, arrays, path)


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
    if not callable(getattr(owner, "from_persisted", None)):
        raise ValueError(f"{os.fspath(path)!r}: wrapper {name!r} has no from_persisted(learner, extra)")
    return owner


# ==================================================================================================
# small helpers
# ==================================================================================================
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
