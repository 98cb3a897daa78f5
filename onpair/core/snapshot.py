"""A learner's part of a snapshot: its parameters, settings and state, and typed reads of an untrusted one.

:mod:`onpair.core.persistence` writes and reads the file (header, digest, atomic write, the consume-once rule,
wrappers); this module gives it the learner's part through public functions (:func:`learner_document`,
:func:`rebuild_learner`), which drive the snapshot hooks of :class:`onpair.core.stream.StreamLearner`, and
holds the registry of the learner classes a file may name (:func:`register_learner`).

A snapshot is a JSON document of scalars plus named NumPy arrays. Each state
object of a learner writes its own part and reads it back through a :class:`SnapshotReader`, which
checks every type, shape, dtype and range and raises a ``ValueError`` naming the file and the field:
a truncated, edited or foreign file never becomes a learner.

Examples
--------
>>> import numpy as np
>>> reader = SnapshotReader("model.onpair", {"w": np.zeros(3)})
>>> reader.array("w", (3,)).tolist(), reader.integer(4, "t", low=0)
([0.0, 0.0, 0.0], 4)
>>> reader.array("w", (2,))
Traceback (most recent call last):
...
ValueError: 'model.onpair': array 'w' has shape (3,) and dtype float64, expected (2,) and float64
"""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np

from .bounds import FeatureBounds


class SnapshotReader:
    """Checked access to a snapshot's scalars and arrays; remembers which arrays were read.

    Parameters
    ----------
    path : str or os.PathLike
        The file, named in every error.
    arrays : dict of str to ndarray
        The snapshot's arrays (read with ``allow_pickle=False``).
    """

    def __init__(self, path, arrays=None):
        self.path = os.fspath(path)
        self.arrays = {} if arrays is None else arrays
        self.referenced = set()

    def error(self, what) -> ValueError:
        """A ``ValueError`` that names the file."""
        return ValueError(f"{self.path!r}: {what}")

    # -- JSON scalars ------------------------------------------------------------------------------
    def mapping(self, value, name, keys, required=None) -> None:
        """``value`` must be a JSON object with the ``required`` keys (default all of ``keys``) and no
        key outside ``keys`` (``keys=None``: any)."""
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

    # -- arrays ------------------------------------------------------------------------------------
    def array(self, name, shape, dtype=np.float64, finite=True) -> np.ndarray:
        """A C-contiguous copy of array ``name`` with exactly this shape and dtype (finite values unless
        ``finite=False``)."""
        if name not in self.arrays:
            raise self.error(f"missing array {name!r}")
        value = self.arrays[name]
        self.referenced.add(name)
        if value.dtype != dtype or value.shape != tuple(shape):
            raise self.error(f"array {name!r} has shape {value.shape} and dtype {value.dtype}, expected "
                             f"{tuple(shape)} and {np.dtype(dtype)}")
        if finite and not np.all(np.isfinite(value)):
            raise self.error(f"array {name!r} has non-finite values")
        return np.array(value, dtype=dtype, order="C", copy=True)

    def rows_in_domain(self, rows: np.ndarray, name: str) -> None:
        """Stored records must lie in the image of the public bounds map (the unit ball, diameter 2):
        the ledger's constants G, Γ and L assume it."""
        if rows.size and np.max(np.linalg.norm(rows, axis=1)) > 1.0 + 1e-9:
            raise self.error(f"{name} holds records outside the mapped domain (norm > 1)")

    def unreferenced(self) -> list:
        """Names of arrays nobody read (a foreign or edited file)."""
        return sorted(set(self.arrays) - self.referenced)


# ==================================================================================================
# the learner's part of a snapshot: its parameters, settings and state (the hooks of StreamLearner)
# ==================================================================================================
#: Learners that can be saved, by the name stored in the file (exact classes: a subclass may hold state a
#: snapshot does not know about). Each public learner registers itself: ``class X(..., saved=True)``
#: (:class:`onpair.core.stream.StreamLearner`), as the continual mechanisms register by ``kind``.
_LEARNERS: dict = {}


def register_learner(cls) -> None:
    """Make ``cls`` savable under its class name (called by ``StreamLearner.__init_subclass__``)."""
    if cls.__name__ in _LEARNERS and _LEARNERS[cls.__name__] is not cls:
        raise ValueError(f"a learner named {cls.__name__!r} is registered already ({_LEARNERS[cls.__name__]!r})")
    _LEARNERS[cls.__name__] = cls


def saved_learner_classes() -> dict:
    """The learner classes a snapshot may hold, by the name it stores (a copy)."""
    return dict(_LEARNERS)


def learner_document(learner, arrays: dict, path):
    """``(class name, params, config, state)`` of ``learner`` for a snapshot at ``path``, all JSON-able (the
    arrays of the parameters and of the state go into ``arrays``, in the order the file stores them).

    Raises ``ValueError`` when the learner cannot be saved faithfully (a class that is not a registered
    learner, a parameter that is not JSON-able or was changed after construction) and ``RuntimeError`` for
    a read-only view of a snapshot (:func:`make_read_only`).
    """
    name = type(learner).__name__
    if _LEARNERS.get(name) is not type(learner):
        raise ValueError(
            f"cannot save a {type(learner).__module__}.{type(learner).__qualname__} to {os.fspath(path)!r}: "
            f"only {', '.join(_LEARNERS)} can be saved"
        )
    if learner._read_only:
        raise RuntimeError(f"cannot save to {os.fspath(path)!r}: {learner._read_only}")
    if getattr(learner, "_shared", None) is not None:
        raise ValueError(f"cannot save to {os.fspath(path)!r}: the learner charges a shared accountant "
                         "(accountant=), which a snapshot cannot hold; a resumed learner would spend outside it")
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
    return name, params, config, scalars


def snapshot_written(learner) -> None:
    """Tell ``learner`` that a snapshot of it is on disk (a private learner without a seed then detaches its
    noise generator: see ``StreamLearner._snapshot_written``)."""
    learner._snapshot_written()


def make_read_only(learner, reason: str) -> None:
    """Make ``learner`` refuse to learn and to be saved (a ``consume=False`` view of a snapshot)."""
    learner._make_read_only(reason)


#: Constructor parameters added after the format was first written, with the value that reproduces
#: what older files were written with: the metric task's papers' loss (threshold 1, uniform pairs), the
#: classifier's covariance model and moment layout (which the earlier tasks never read), no range discovery, no final release
#: at the horizon (OnPairStats' ``final_share``, issue 22), no forgetting (``half_life``, issue 25).
LEGACY_PARAMS = {"threshold": 1.0, "pair_weights": None, "n_classes": None, "covariance": "auto", "moments": None,
                 "final_share": 0.0,
                 "discover_bounds": False, "half_life": None}


def saved_class(name, path) -> type:
    """The registered learner class a snapshot names, or a ValueError naming the file."""
    cls = _LEARNERS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path!r}: unknown learner class {name!r} (known: {', '.join(_LEARNERS)})")
    return cls


def rebuild_learner(cls, document: dict, arrays: dict, path):
    """A ``cls`` learner rebuilt from a snapshot's parameters and state (``document["params"]``,
    ``["config"]``, ``["state"]``), every value checked: a ValueError naming the file and the field."""
    reader = SnapshotReader(path, arrays)
    params = document["params"]
    names = cls._param_names()
    reader.mapping(params, "params", names, required=[k for k in names if k not in LEGACY_PARAMS])
    # A file written before a parameter existed resumes with the value it was written with.
    params = dict({k: v for k, v in LEGACY_PARAMS.items() if k in names}, **params)
    decoded = {k: _decode(v, arrays, reader.referenced, path) for k, v in params.items()}
    if {"bounds", "norm_bound"} <= set(names) and decoded.get("bounds") is None and decoded.get("norm_bound") is None:
        # Written when omitted bounds meant the unit ball (learners now refuse to run without bounds).
        decoded["norm_bound"] = 1.0
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


def _normalised(value):
    """Through JSON and back: plain types, as the loader will see them."""
    return json.loads(json.dumps(value, allow_nan=False))
