"""Every public learner and estimator, discovered from ``onpair.__all__`` and ``onpair.river.__all__``.

The suites that must cover every public class (tests/test_conventions.py, tests/test_hostile.py, the
persistence suite) take their lists from here, so a class is covered the day it is exported: it is built
with public bounds on [0, 1] and a seed, plus what :data:`QUICK` adds to make it fast in a test (nothing
for a class that is not listed there). A class that cannot be built that way fails the suites until it is.
"""

from __future__ import annotations

import onpair
from onpair.core.estimator import PairwiseEstimator
from onpair.core.stream import StreamLearner


def _public(module, base) -> dict:
    return {name: getattr(module, name) for name in module.__all__
            if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), base)}


#: The online learners (``learn_one``, ``learn_many``) and the offline estimators (``fit``), by name.
ONLINE = _public(onpair, StreamLearner)
OFFLINE = _public(onpair, PairwiseEstimator)

#: Parameters that keep a test fast, or that a class needs beyond bounds and a seed (OnPairC's α needs n).
QUICK = {
    "OnPairStrC": dict(n=100),
    "OnPairC": dict(n=100),
    "OutputPerturbedSGD": dict(T=20),
    "GradientPerturbedGD": dict(T=2),
    "ApproxMinimaPerturbedLogistic": dict(objective="pairwise"),
}


def make_online(name: str, **params):
    """A fresh ``ONLINE[name]`` on the public box [0, 1], seeded."""
    return ONLINE[name](**{"bounds": (0, 1), "seed": 0, **QUICK.get(name, {}), **params})


def make_offline(name: str, **params):
    """A fresh ``OFFLINE[name]`` on the public box [0, 1], seeded."""
    return OFFLINE[name](**{"bounds": (0, 1), "random_state": 0, **QUICK.get(name, {}), **params})


def river_classes() -> dict:
    """The river adapters (``onpair.river.__all__``'s classes), by name; river is imported here only."""
    import onpair.river

    return {name: getattr(onpair.river, name) for name in onpair.river.__all__
            if isinstance(getattr(onpair.river, name), type)}
