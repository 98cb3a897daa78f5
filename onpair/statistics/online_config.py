"""The checks of :class:`onpair.OnPairStats`'s parameters: the class domain, the ridge, the mechanism's band,
the horizon, the final share and forgetting.

Each function checks one parameter (or one rule between two of them) and returns its canonical value, or
raises a TypeError (a wrong type) or a ValueError (a wrong value) naming the argument and the value given. The
learner calls them in its constructor in a fixed order, before anything is built, so a refused construction
changes nothing and spends nothing.
"""

from __future__ import annotations

import numpy as np

from ..core._validation import check_positive, class_label
from ..privacy.continual import MAX_RECORDS
from ..privacy.continual.decayed import check_half_life
from .released import MECHANISMS


def check_classes(task: str, classes):
    """The public class domain of ``task`` as ``{label: code}`` in the order given (None for the AUC task,
    whose labels are −1/+1, 0/1 or booleans); the metric task needs one label at least, the classifier two."""
    if task == "auc":
        if classes is not None:
            raise ValueError("classes is for task='metric' or 'classify'; the AUC task's labels are -1/+1, 0/1 or booleans")
        return None
    if classes is None:
        raise ValueError(f"task={task!r} needs the public class domain: classes=[...] (every label "
                         "the stream may carry; read it from the data set's documentation, never from the data)")
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise TypeError(f"classes must be a sequence of class labels, got {classes!r}")
    canonical = [class_label(c, i, 0, name="classes") for i, c in enumerate(classes)]
    least = 2 if task == "classify" else 1
    if len(canonical) < least or len(set(canonical)) != len(canonical):
        raise ValueError(f"classes must list at least {least} label{'s' if least > 1 else ''}, each once, for "
                         f"task={task!r}, got {classes!r}")
    return {label: code for code, label in enumerate(canonical)}


def check_lam(lam):
    """The ridge λ: a number ≥ 0, or None for ``"auto"``."""
    if isinstance(lam, str):
        if lam != "auto":
            raise ValueError(f"lam must be a number >= 0 or 'auto', got {lam!r}")
        return None
    return check_positive(lam, "lam", allow_zero=True)


#: The values of ``mechanism``: "auto" (the default, :func:`resolve_mechanism`) or one of the mechanisms.
MECHANISM_CHOICES = ("auto",) + MECHANISMS


def check_mechanism(mechanism, band) -> None:
    """The release mechanism is "auto" or one of :data:`onpair.statistics.released.MECHANISMS`; a ``band`` is a
    positive integer, for ``mechanism="toeplitz"`` only."""
    if not isinstance(mechanism, str):
        raise TypeError(f"mechanism must be one of {MECHANISM_CHOICES}, got {mechanism!r} ({type(mechanism).__name__})")
    if mechanism not in MECHANISM_CHOICES:
        raise ValueError(f"mechanism must be one of {MECHANISM_CHOICES}, got {mechanism!r}")
    if band is not None:
        if mechanism != "toeplitz":
            raise ValueError(f"band is for mechanism='toeplitz', got mechanism={mechanism!r} (the default, 'auto', "
                             "has no band: pass mechanism='toeplitz' with band)")
        if isinstance(band, (bool, np.bool_)) or not isinstance(band, (int, np.integer)):
            raise TypeError(f"band must be a positive integer, got {band!r} ({type(band).__name__})")
        if band < 1:
            raise ValueError(f"band must be a positive integer, got {band!r}")


def resolve_mechanism(mechanism: str, half_life, final_share) -> str:
    """The mechanism that releases the statistics: ``mechanism`` itself, or for "auto" a public rule of the public
    parameters, chosen by measurement on synthetic streams only (bench/results/blocks.md): "blocks" (blocks of
    32, 64, … records, each released once: beyond the counting bound for a stationary stream) when there is
    no ``half_life`` and no ``final_share``, else "blt" (a release after every record: forgetting follows a
    drift, and the final share's one release of the total needs the continual release beside it).

    Examples
    --------
    >>> resolve_mechanism("auto", None, 0.0), resolve_mechanism("auto", 500.0, 0.0), resolve_mechanism("tree", None, 0.0)
    ('blocks', 'blt', 'tree')
    """
    if mechanism != "auto":
        return mechanism
    return "blocks" if half_life is None and not final_share else "blt"


#: The mechanisms that forget: the BLT fitted to the decayed workload ("blt", and "auto", which resolves to it),
#: and the blocks released once, capped and weighed by the decay ("blocks").
FORGETTING_MECHANISMS = ("blt", "auto", "blocks")


def check_forgetting(half_life, mechanism):
    """The half-life H (records) of forgetting, or None: decayed sums are released by a BLT
    (:class:`onpair.privacy.continual.DecayedBLT`) or by blocks of at most about H/4 records weighed by the decay
    (:class:`onpair.privacy.continual.BlockRelease` with ``half_life``)."""
    value = None if half_life is None else check_half_life(half_life)
    if half_life is not None and mechanism not in FORGETTING_MECHANISMS:
        raise ValueError(f"half_life is for mechanism='blt' (a BLT fitted to the decayed workload) or 'blocks' "
                         f"(blocks capped and weighed by the decay), got mechanism={mechanism!r}")
    return value


def horizon_value(horizon):
    """A known stream length as an int in [1, 2⁶²], or None."""
    if horizon is None:
        return None
    if isinstance(horizon, (bool, np.bool_)) or not isinstance(horizon, (int, np.integer)) \
            or not 1 <= horizon <= MAX_RECORDS:
        raise ValueError(f"horizon must be a positive integer of at most 2**62, got {horizon!r}")
    return int(horizon)


def check_final_share(final_share, mechanism, horizon, half_life) -> float:
    """φ ∈ [0, 1) as a float; φ > 0 needs ``mechanism="blt"`` and a ``horizon``, and no ``half_life``."""
    if isinstance(final_share, (bool, np.bool_)) or not isinstance(final_share, (int, float, np.integer,
                                                                               np.floating)):
        raise TypeError(f"final_share must be a real number in [0, 1), got {final_share!r} "
                        f"({type(final_share).__name__})")
    if not 0.0 <= final_share < 1.0:
        raise ValueError(f"final_share must lie in [0, 1), got {final_share!r}")
    if final_share > 0.0 and (mechanism not in ("blt", "auto") or horizon is None):
        raise ValueError(f"final_share={final_share!r} needs mechanism='blt' and a horizon (the one release of "
                         f"the total is made at the horizon), got mechanism={mechanism!r}, "
                         f"horizon={horizon!r}")
    if half_life is not None and final_share:
        raise ValueError(f"final_share={final_share!r} is for the prefix sums (one release of the total at the "
                         "horizon); half_life releases decayed sums: set one of them")
    return float(final_share)
