"""The names users choose an algorithm by: ``onpair replay --algo NAME``, river's ``learner=NAME``, the
audit's presets and the experiment's figures all read one registry, which the classes fill themselves:
``class X(..., algorithm="stats")`` on :class:`onpair.core.stream.StreamLearner` or
:class:`onpair.core.estimator.PairwiseEstimator` (as learners register for snapshots with ``saved=True`` and
the continual mechanisms by ``kind``). Read it through :mod:`onpair.algorithms`, which imports every family
first, so that every class has registered."""

from __future__ import annotations

#: Algorithm name → class, in the order the classes registered.
_ALGORITHMS: dict = {}


def register_algorithm(name: str, cls) -> None:
    """Make ``cls`` the algorithm called ``name`` (called by the roots' ``__init_subclass__``)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"algorithm must be a non-empty str, got {name!r} for {cls.__qualname__}")
    if _ALGORITHMS.get(name, cls) is not cls:
        raise ValueError(f"algorithm {name!r} is registered already ({_ALGORITHMS[name]!r})")
    _ALGORITHMS[name] = cls


def registered_algorithms() -> dict:
    """Every registered algorithm, by name (a copy)."""
    return dict(_ALGORITHMS)
