"""Save and load online learners: one file, written atomically, versioned, checked, resumed once.

A snapshot holds everything the learner needs to continue the stream exactly as if it had never
stopped: the internal iterate, the stored history (or the square loss's statistics, or the buffer),
the three random generators' states, the release history with the released models, and the
accountant's ledger. A learner reloaded from it and fed the rest of the stream releases the same
models, bit for bit, as one uninterrupted run with the same seed, and it can never spend the same
budget twice: the ledger survives the restart.

File format (version 1)
-----------------------
One header line, then the payload::

    onpair-learner 1 sha256=<64 hex digits of the payload> bytes=<payload length>\\n
    <payload: a NumPy .npz archive, read with allow_pickle=False>

The archive holds the arrays (``w``, ``center``, ``iterate_sum``, the history, ``released_models``,
…) and ``state_json``: UTF-8 JSON with the class name, the constructor parameters as given, the
settings they resolve to, the scalar state, the random generators' states, the releases and the
accountant's ledger. Loading rebuilds the learner with its constructor and then overwrites its state.
Everything is checked before a learner is returned: the header, the digest, the keys, every shape
and dtype, and the privacy state itself (the rounds, ρ, sensitivities and σ of the releases and the
ledger are recomputed from the public parameters and the number of records seen). A truncated,
corrupted or edited file, or one from another format version, raises a ``ValueError`` that names
the file and what is wrong; it never becomes a fresh learner.

The digest detects corruption and accidental edits. It is not a signature: whoever can write the
file can write any learner into it. Keep snapshots where the raw stream is kept (a snapshot holds
the raw history, like the learner itself).

Forks: a snapshot resumes once
------------------------------
A private learner refuses to be copied because a copy reuses its noise and its budget (README,
"Copies"). A snapshot loaded twice would be such a copy. So :func:`load` *consumes* the snapshot
by default: before reading, it renames the file atomically to ``<path>.loaded-<UTC timestamp>``, so
a second ``load(path)`` fails with a message saying when the snapshot was taken. Concurrent loads
cannot both succeed: only one rename of the file wins. ``load(path, consume=False)`` leaves the file
alone and returns a private learner for inspection only: ``model``, ``released_models``,
``decision_function`` and ``privacy_report`` work, but ``learn_one``, ``learn_many`` and ``save``
raise ``RuntimeError``. (A non-private :class:`~onpair.PairwiseGIGA` has no noise or budget to
duplicate: with ``consume=False`` it comes back fully usable.)

The rename guards against accidents (a resume script run twice, two workers resuming from the same
checkpoint). It cannot stop a deliberate copy of the file: copying a snapshot copies the learner.
Checkpoint to one path per learner, overwriting it, and resume from the newest snapshot while
replaying exactly the records that followed it.

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
import inspect
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
from .learners import OnPairC, OnPairStrC, PairwiseGIGA
from .losses import SQUARE
from .privacy.accountant import ZCDPAccountant

__all__ = ["save_learner", "load_learner", "load", "FORMAT_VERSION", "MAGIC"]

MAGIC = b"onpair-learner"
FORMAT_VERSION = 1
#: Learners that can be saved, by the name stored in the file (exact classes: a subclass may hold
#: state this module does not know about).
LEARNER_CLASSES = {cls.__name__: cls for cls in (PairwiseGIGA, OnPairStrC, OnPairC)}
#: Wrappers (``extra`` owners such as the river adapters) are imported by name on load, from these
#: modules only: a file must not make :func:`load` import arbitrary code.
TRUSTED_WRAPPER_MODULES = ("onpair",)
_STATE_KEY = "state_json"
_HEADER_LIMIT = 256
_RNG_NAMES = ("init", "noise", "buffer")
_RELEASE_KEYS = ("round", "sensitivity", "sigma", "rho")


# ==================================================================================================
# public API
# ==================================================================================================
def _check_rows_in_domain(rows, name, check) -> None:
    """Stored records must lie in the image of the public bounds map (the unit ball, diameter 2):
    the ledger's constants G, Γ and L assume it."""
    if rows.size and np.max(np.linalg.norm(rows, axis=1)) > 1.0 + 1e-9:
        raise check.error(f"{name} holds records outside the mapped domain (norm > 1)")


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
    if getattr(learner, "_read_only", None):
        raise RuntimeError(f"cannot save to {os.fspath(path)!r}: {learner._read_only}")
    arrays: dict = {}
    params = {key: _encode(getattr(learner, key), arrays, key, path) for key in _constructor_names(type(learner))}
    config = _normalised(_config(learner))
    # The file is rebuilt from the public parameters, so they must still say what the learner uses
    # (a parameter changed after construction would resume a different analysis).
    twin = _construct(type(learner), {k: _decode(v, arrays, None, path) for k, v in params.items()}, path)
    twin_config = _normalised(_config(twin))
    if twin_config != config:
        raise ValueError(
            f"cannot save to {os.fspath(path)!r}: {_config_difference(config, twin_config)} — a constructor "
            "parameter was changed after construction, so the file could not resume this learner"
        )
    scalars = _export_state(learner, arrays)
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
    if getattr(learner, "_private", False) and learner.seed is None:
        # The snapshot holds the noise generator's state; the live learner must not share it, or the
        # original and a resumed copy would add the same noise (which cancels in their difference).
        learner._noise_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence()))


def load_learner(path, *, consume=True):
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

    Returns
    -------
    learner : PairwiseGIGA, OnPairStrC or OnPairC
        The learner, in the state it was saved in.
    extra : dict or None
        What the wrapper passed to :func:`save_learner`.

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
    return _load(path, consume, lambda learner, document: (learner, document["extra"]))


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
        if not consume and learner._private:
            learner._read_only = (
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
    check = _Checker(path)
    check.mapping(document, "state", ("format", "class", "onpair_version", "snapshot_id", "saved_at", "params",
                                      "config", "state", "extra", "wrapper"))
    if document["format"] != FORMAT_VERSION:
        raise ValueError(f"{path!r}: the state says format version {document['format']!r}, the header {version}")
    return document, arrays


def _rebuild(document, arrays, path):
    check = _Checker(path)
    name = document["class"]
    cls = LEARNER_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path!r}: unknown learner class {name!r} (known: {', '.join(LEARNER_CLASSES)})")
    if document["wrapper"] is not None:
        if not isinstance(document["wrapper"], str):
            raise ValueError(f"{path!r}: wrapper must be a 'module:QualName' string, got {document['wrapper']!r}")
        _check_wrapper_name(document["wrapper"], path)
    params = document["params"]
    check.mapping(params, "params", _constructor_names(cls))
    referenced = set()
    decoded = {k: _decode(v, arrays, referenced, path) for k, v in params.items()}
    learner = _construct(cls, decoded, path)
    config = _normalised(_config(learner))
    if config != document["config"]:
        raise ValueError(
            f"{path!r}: the parameters no longer resolve to the saved settings "
            f"({_config_difference(document['config'], config)}); this file cannot resume the learner"
        )
    _import_state(learner, document["state"], arrays, referenced, check)
    unexpected = sorted(set(arrays) - referenced)
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
# state: export and import
# ==================================================================================================
def _history_kind(learner) -> str:
    if learner._task == "metric":
        return "metric"  # augmented rows (history or buffer), rebuilt from the stored records on load
    if learner._buffer_kind is not None:
        return "buffer"
    return "statistics" if learner._loss.code == SQUARE else "full"


def _export_state(learner, arrays: dict) -> dict:
    """Scalars as JSON, arrays into ``arrays``: everything ``_learn_mapped`` and the report read."""
    seq = learner._seed_sequence
    state = {
        "t": learner._t,
        "dim": learner._dim,
        "n_clipped": learner._n_clipped,
        "warned_clipping": learner._warned_clipping,
        "history": _history_kind(learner),
        "rng": {name: getattr(learner, f"_{name}_rng").bit_generator.state for name in _RNG_NAMES},
        "seed_sequence": {"entropy": _plain_ints(seq.entropy), "spawn_key": _plain_ints(seq.spawn_key),
                          "pool_size": int(seq.pool_size), "n_children_spawned": int(seq.n_children_spawned)},
    }
    if learner._dim is not None:
        arrays.update(w=learner._w, center=learner._center, iterate_sum=learner._iterate_sum)
        kind = state["history"]
        if kind == "metric":
            # The records only (the last d entries of each augmented row); the load rebuilds the rows,
            # so a file cannot carry products that no record produces.
            state["n_rows"] = learner._n_rows
            state["classes"] = list(learner._class_codes)
            arrays.update(records=np.ascontiguousarray(learner._rows[:learner._n_rows, -learner._dim:]),
                          record_labels=learner._row_labels[:learner._n_rows])
        elif kind == "buffer":
            state["n_buffered"] = learner._n_buffered
            arrays.update(buffer=learner._buffer[:learner._n_buffered], buffer_signs=learner._buffer_signs)
        elif kind == "statistics":
            arrays.update(counts=learner._counts, sums=learner._sums, second_moments=learner._second_moments)
        else:
            state["n_positives"] = learner._n_positives
            state["n_negatives"] = learner._n_negatives
            arrays.update(positives=learner._positives[:learner._n_positives],
                          negatives=learner._negatives[:learner._n_negatives])
    if learner._private:
        state.update(
            sensitivity=learner._sensitivity,
            releases=[dict(r) for r in learner._releases],
            accountant=learner._accountant.to_dict(),
            frozen_warned=learner._frozen_warned,
            rho_budget=learner._rho_budget,
        )
        if learner._dim is not None:
            arrays["initial_model"] = learner._initial_model
            arrays["released_models"] = (np.array(learner._released_models) if learner._released_models
                                         else np.zeros((0, learner._param_size(learner._dim))))
    return _normalised(state)


def _import_state(learner, state, arrays, referenced, check) -> None:
    """Overwrite a freshly built learner's state with a checked snapshot state."""
    keys = ["t", "dim", "n_clipped", "warned_clipping", "history", "rng", "seed_sequence"]
    check.mapping(state, "state", None, required=keys)
    kind = state["history"]
    if kind != _history_kind(learner):
        raise check.error(f"history kind {kind!r}, but the parameters give {_history_kind(learner)!r}")
    t = check.integer(state["t"], "t", low=0)
    dim = state["dim"]
    if dim is None:
        if t > 0:
            raise check.error(f"dim is null after {t} records")
    else:
        dim = check.integer(dim, "dim", low=1)
    if learner._dim is not None and dim != learner._dim:
        raise check.error(f"dim = {dim!r}, but the parameters fix {learner._dim} features")
    optional = []
    if dim is not None:
        optional = {"buffer": ["n_buffered"], "statistics": [], "full": ["n_positives", "n_negatives"],
                    "metric": ["n_rows", "classes"]}[kind]
    if learner._private:
        optional = optional + ["sensitivity", "releases", "accountant", "frozen_warned", "rho_budget"]
    check.mapping(state, "state", keys + optional)
    n_clipped = check.integer(state["n_clipped"], "n_clipped", low=0, high=t)
    warned = check.boolean(state["warned_clipping"], "warned_clipping")
    check.mapping(state["rng"], "rng", _RNG_NAMES)

    def take(name, shape, dtype=np.float64, finite=True):
        if name not in arrays:
            raise check.error(f"missing array {name!r}")
        value = arrays[name]
        referenced.add(name)
        if value.dtype != dtype or value.shape != tuple(shape):
            raise check.error(f"array {name!r} has shape {value.shape} and dtype {value.dtype}, expected "
                              f"{tuple(shape)} and {np.dtype(dtype)}")
        if finite and not np.all(np.isfinite(value)):
            raise check.error(f"array {name!r} has non-finite values")
        return np.array(value, dtype=dtype, order="C", copy=True)

    if dim is not None:
        if learner._dim is None:
            learner._init_state(dim)
        size = learner._param_size(dim)
        learner._w = take("w", (size,))
        learner._center = take("center", (size,))
        learner._iterate_sum = take("iterate_sum", (size,))
        _check_in_ball(learner._w, learner._radius, "w", check)
        _check_in_ball(learner._center, learner._radius, "center", check)
        if kind == "metric":
            _import_metric_history(learner, state, t, dim, take, check)
        elif kind == "buffer":
            size = learner._buffer_size
            n_buffered = check.integer(state["n_buffered"], "n_buffered", low=0, high=size)
            if n_buffered != min(t, size):
                raise check.error(f"n_buffered = {n_buffered} after {t} records with a buffer of {size}")
            learner._buffer = np.empty((size, dim))
            learner._buffer[:n_buffered] = take("buffer", (n_buffered, dim))
            _check_rows_in_domain(learner._buffer[:n_buffered], "buffer", check)
            signs = take("buffer_signs", (size,), np.int8, finite=False)
            if np.any(np.abs(signs[:n_buffered]) != 1) or np.any(signs[n_buffered:] != 0):
                raise check.error("buffer_signs must be ±1 in the filled slots and 0 elsewhere")
            learner._buffer_signs = signs
            learner._n_buffered = n_buffered
        elif kind == "statistics":
            counts = take("counts", (2,))
            if np.any(counts < 0) or np.any(counts != np.round(counts)) or counts.sum() != t:
                raise check.error(f"counts = {counts.tolist()} do not count {t} records")
            learner._counts = counts
            learner._sums = take("sums", (2, dim))
            learner._second_moments = take("second_moments", (2, dim, dim))
            # Σx over c records of norm ≤ 1 has norm ≤ c; the trace of Σxxᵀ is Σ‖x‖² ≤ c.
            for k in range(2):
                if (np.linalg.norm(learner._sums[k]) > counts[k] * (1 + 1e-9) + 1e-12
                        or np.trace(learner._second_moments[k]) > counts[k] * (1 + 1e-9) + 1e-12):
                    raise check.error("sums / second_moments exceed what records of the mapped domain "
                                      "(norm ≤ 1) can produce")
        else:
            n_pos = check.integer(state["n_positives"], "n_positives", low=0)
            n_neg = check.integer(state["n_negatives"], "n_negatives", low=0)
            if n_pos + n_neg != t:
                raise check.error(f"n_positives + n_negatives = {n_pos + n_neg}, but t = {t}")
            learner._positives = take("positives", (n_pos, dim))
            learner._negatives = take("negatives", (n_neg, dim))
            _check_rows_in_domain(learner._positives, "positives", check)
            _check_rows_in_domain(learner._negatives, "negatives", check)
            learner._n_positives, learner._n_negatives = n_pos, n_neg
    if learner._private:
        _import_private_state(learner, state, t, dim, take, check)
    seq = state["seed_sequence"]
    check.mapping(seq, "seed_sequence", ("entropy", "spawn_key", "pool_size", "n_children_spawned"))
    try:
        learner._seed_sequence = np.random.SeedSequence(
            seq["entropy"], spawn_key=tuple(seq["spawn_key"]), pool_size=seq["pool_size"],
            n_children_spawned=seq["n_children_spawned"])
        for name in _RNG_NAMES:
            generator = np.random.Generator(np.random.PCG64())
            generator.bit_generator.state = state["rng"][name]
            setattr(learner, f"_{name}_rng", generator)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise check.error(f"unusable random generator state ({type(exc).__name__}: {exc})") from None
    learner._t = t
    learner._dim = dim
    learner._n_clipped = n_clipped
    learner._warned_clipping = warned


def _import_metric_history(learner, state, t, dim, take, check) -> None:
    """The metric task's stored records, labels and class map; the augmented rows are rebuilt."""
    from ._metric_kernels import _augmented_row, augmented_width

    for name in ("w", "center"):
        _check_in_set(learner, getattr(learner, f"_{name}"), name, check)
    n_rows = check.integer(state["n_rows"], "n_rows", low=0)
    expected = min(t, learner._buffer_size) if learner._buffer_kind is not None else t
    if n_rows != expected:
        raise check.error(f"n_rows = {n_rows} after {t} records, expected {expected}")
    classes = state["classes"]
    if (not isinstance(classes, list) or len(set(map(repr, classes))) != len(classes)
            or any(type(c) not in (int, str) for c in classes)):
        raise check.error("classes must be a list of distinct integers or strings")
    records = take("records", (n_rows, dim))
    _check_rows_in_domain(records, "records", check)
    labels = take("record_labels", (n_rows,), np.int64, finite=False)
    if n_rows and (labels.min() < 0 or labels.max() >= len(classes)):
        raise check.error("record_labels must be codes of the listed classes")
    capacity = learner._buffer_size if learner._buffer_kind is not None else n_rows
    rows = np.empty((capacity, augmented_width(dim)))
    for i in range(n_rows):
        _augmented_row(records[i], rows[i])
    row_labels = np.zeros(capacity, dtype=np.int64)
    row_labels[:n_rows] = labels
    learner._rows, learner._row_labels, learner._n_rows = rows, row_labels, n_rows
    learner._class_codes = {label: code for code, label in enumerate(classes)}


def _import_private_state(learner, state, t, dim, take, check) -> None:
    """Releases and ledger, checked against a replay of the public schedule over the first t rounds.

    The schedule, the step sizes and the sensitivity ledger depend only on the public parameters and
    on t, so the whole release history (rounds, ρ, sensitivities, σ), the ledger's U_t and the
    accountant's spends are recomputed and must match the file exactly: a snapshot cannot claim to
    have spent less than it did, nor to need less noise.
    """
    rho_budget = check.number(state["rho_budget"], "rho_budget")
    if rho_budget != learner._rho_budget:
        raise check.error(f"rho_budget = {rho_budget!r}, but the parameters give {learner._rho_budget!r}")
    try:
        accountant = ZCDPAccountant.from_dict(state["accountant"])
    except (TypeError, ValueError) as exc:
        raise check.error(f"invalid accountant ledger ({exc})") from None
    if accountant.rho_budget != learner._rho_budget:
        raise check.error(f"the accountant's rho_budget {accountant.rho_budget!r} is not the learner's "
                          f"{learner._rho_budget!r}")
    releases = state["releases"]
    if not isinstance(releases, list):
        raise check.error("releases must be a list")
    for i, entry in enumerate(releases):
        check.mapping(entry, f"releases[{i}]", _RELEASE_KEYS)
    if t > 0:
        try:
            steps = learner._step_sizes_for(0, t)
            plan = learner._plan_releases(0, steps)  # the fresh accountant: the whole history's ρ must fit
        except ValueError as exc:  # includes PrivacyBudgetExceeded
            raise check.error(f"the parameters cannot have produced {t} rounds ({exc})") from None
        expected = [{"round": int(r), "sensitivity": float(u), "sigma": float(s), "rho": float(p)}
                    for r, u, s, p in zip(plan["rounds"], plan["sensitivities"], plan["sigmas"], plan["shares"])]
        sensitivity = float(plan["ledger_end"])
    else:
        expected, sensitivity = [], 0.0
    if releases != expected:
        raise check.error(f"the release history ({len(releases)} releases) is not what the schedule released "
                          f"in {t} rounds ({len(expected)} releases)")
    history = [(f"release at round {r['round']}", r["rho"]) for r in expected]
    if accountant.history != history:
        raise check.error(f"the accountant's ledger ({len(accountant.history)} spends, ρ = {accountant.rho_spent!r}) "
                          f"does not match the {len(expected)} releases of the first {t} rounds")
    if check.number(state["sensitivity"], "sensitivity") != sensitivity:
        raise check.error(f"sensitivity = {state['sensitivity']!r}, but the ledger gives {sensitivity!r} "
                          f"after {t} rounds")
    frozen_warned = check.boolean(state["frozen_warned"], "frozen_warned")
    if dim is not None:
        size = learner._param_size(dim)
        initial = take("initial_model", (size,))
        models = take("released_models", (len(releases), size))
        _check_in_set(learner, initial, "initial_model", check)
        for k in range(models.shape[0]):
            _check_in_set(learner, models[k], f"released_models[{k}]", check)
        learner._initial_model = initial
        learner._released_models = [row.copy() for row in models]
    elif releases:
        raise check.error("releases recorded before any record")
    learner._accountant = accountant
    learner._releases = expected
    learner._sensitivity = sensitivity
    learner._frozen_warned = frozen_warned


def _check_in_set(learner, vector, name, check):
    """The ball for AUC; for the metric task, a symmetric matrix inside the constraint set (the loss
    constants assume |h| ≤ 4R, and a release must be what the projection can produce)."""
    if learner._task != "metric":
        _check_in_ball(vector, learner._radius, name, check)
        return
    from .matrix_geometry import _project_matrix

    d = learner._dim
    matrix = vector.reshape(d, d)
    if not np.array_equal(matrix, matrix.T):
        raise check.error(f"{name} is not a symmetric matrix")
    projected = np.array(vector, dtype=np.float64, copy=True)
    _project_matrix(projected, d, learner._radius, learner._constraint)
    if float(np.linalg.norm(projected - vector)) > 1e-9 * learner._radius:
        raise check.error(f"{name} lies outside the constraint set")


def _check_in_ball(vector, radius, name, check):
    # Every model lives in ‖w‖ ≤ R (projection); a few ulps of slack for the projection's rounding.
    if float(np.linalg.norm(vector)) > radius * (1.0 + 1e-9):
        raise check.error(f"{name} lies outside the ball of radius {radius!r}")


# ==================================================================================================
# parameters and settings
# ==================================================================================================
def _constructor_names(cls):
    return tuple(name for name, p in inspect.signature(cls.__init__).parameters.items()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY)


def _config(learner) -> dict:
    """The settings the parameters resolve to: rebuilt and compared on save and on load, so that a
    parameter changed after construction, or a library whose defaults changed, cannot resume a
    different analysis silently."""
    steps = learner._steps_array
    config = {
        "private": learner._private,
        "loss": learner._loss.name,
        "lam": learner._lam,
        "radius": learner._radius,
        "buffer": None if learner._buffer_kind is None else [learner._buffer_kind, learner._buffer_size],
        "bounds": learner._bounds.to_dict(),
        "step_sizes": None if steps is None else hashlib.sha256(steps.tobytes()).hexdigest(),
    }
    if learner._private:
        config.update(
            epsilon=learner._epsilon, delta=learner._delta, mode=learner._mode, accounting=learner._accounting,
            rho_budget=learner._rho_budget, schedule=learner._schedule.describe(), warmup=learner._warmup_rounds,
        )
    if hasattr(learner, "_center_kind"):
        config["center"] = learner._center_kind
    if learner._task == "metric":
        config.update(task="metric", constraint=learner._constraint)
    return config


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
class _Checker:
    """Typed reads of untrusted JSON with errors that name the file."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def error(self, what) -> ValueError:
        return ValueError(f"{self.path!r}: {what}")

    def mapping(self, value, name, keys, required=None):
        if not isinstance(value, dict):
            raise self.error(f"{name} must be a JSON object, got {type(value).__name__}")
        required = list(keys if required is None else required)
        missing = [k for k in required if k not in value]
        if missing:
            raise self.error(f"{name} is missing {', '.join(map(repr, missing))}")
        if keys is not None:
            unexpected = sorted(set(value) - set(keys))
            if unexpected:
                raise self.error(f"{name} has unexpected keys {', '.join(map(repr, unexpected))}")

    def integer(self, value, name, low=None, high=None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"{name} must be an integer, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.error(f"{name} = {value!r} is out of range")
        return value

    def boolean(self, value, name) -> bool:
        if not isinstance(value, bool):
            raise self.error(f"{name} must be true or false, got {value!r}")
        return value

    def number(self, value, name) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(f"{name} must be a finite number, got {value!r}")
        return float(value)


def _plain_ints(value):
    """A SeedSequence's entropy or spawn key (int, NumPy int, or a sequence of them) as JSON ints."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    return [int(v) for v in value]


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
