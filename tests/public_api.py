"""Every public learner and estimator, discovered from ``onpair.__all__`` and ``onpair.river.__all__``.

The suites that must cover every public class (tests/test_conventions.py, tests/test_hostile.py, the
persistence suite) take their lists from here, so a class is covered the day it is exported: it is built
with public bounds on [0, 1] and a seed, plus what :data:`QUICK` adds to make it fast in a test (nothing
for a class that is not listed there). A class that cannot be built that way fails the suites until it is.

A parameter of :data:`SWITCHES` is covered the same way: every class whose constructor takes it runs the
suites once more with it switched on, as the case ``"Name[parameter]"`` (:data:`ONLINE_CASES`,
:data:`OFFLINE_CASES`), so a class that gains the parameter is covered the day it does.
"""

from __future__ import annotations

import inspect

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


#: Parameters shared by several public classes that the suites also run switched on (name → value), for
#: every class whose constructor takes them. ``discover_bounds``: a warm-up of 8 records with one level of
#: the range finder forced (so that it spends and draws noise even on the suites' short blocks).
SWITCHES = {"discover_bounds": {"warmup": 8, "levels": 1, "rho_share": 0.5}}


def _variants(classes: dict) -> dict:
    """``"Name[parameter]"`` → (name, {parameter: value}) for every class that takes a switch."""
    return {f"{name}[{switch}]": (name, {switch: value}) for name, cls in classes.items()
            for switch, value in SWITCHES.items() if switch in inspect.signature(cls.__init__).parameters}


ONLINE_VARIANTS = _variants(ONLINE)
OFFLINE_VARIANTS = _variants(OFFLINE)
#: Every case the suites run: each public class, then each class with each switch it takes.
ONLINE_CASES = list(ONLINE) + list(ONLINE_VARIANTS)
OFFLINE_CASES = list(OFFLINE) + list(OFFLINE_VARIANTS)


def online_class(name: str) -> type:
    """The class of a case of :data:`ONLINE_CASES`."""
    return ONLINE[ONLINE_VARIANTS.get(name, (name, {}))[0]]


def make_online(name: str, **params):
    """A fresh learner of the case ``name`` (:data:`ONLINE_CASES`) on the public box [0, 1], seeded."""
    base, switched = ONLINE_VARIANTS.get(name, (name, {}))
    return ONLINE[base](**{"bounds": (0, 1), "seed": 0, **QUICK.get(base, {}), **switched, **params})


def make_offline(name: str, **params):
    """A fresh estimator of the case ``name`` (:data:`OFFLINE_CASES`) on the public box [0, 1], seeded."""
    base, switched = OFFLINE_VARIANTS.get(name, (name, {}))
    return OFFLINE[base](**{"bounds": (0, 1), "random_state": 0, **QUICK.get(base, {}), **switched, **params})


def river_classes() -> dict:
    """The river adapters (``onpair.river.__all__``'s classes), by name; river is imported here only."""
    import onpair.river

    return {name: getattr(onpair.river, name) for name in onpair.river.__all__
            if isinstance(getattr(onpair.river, name), type)}
