"""The one registry of algorithm names: ``onpair replay --algo NAME``, river's
``PrivatePairwiseClassifier(learner=NAME)``, the audit's presets (``onpair audit NAME``) and the
experiment's figures read the classes from here. Each class registers itself under its name
(``class OnPairStats(..., algorithm="stats")``, :mod:`onpair.core.registry`); this module imports every
family first, so the table is complete when it is read.

>>> from onpair.algorithms import ALGORITHMS, ONLINE
>>> ALGORITHMS["stats"].__name__, "giga" in ONLINE
('OnPairStats', True)
"""

from __future__ import annotations

from types import MappingProxyType

from . import estimators, learners  # noqa: F401  (importing the families registers their classes)
from .core.registry import registered_algorithms
from .core.stream import StreamLearner

__all__ = ["ALGORITHMS", "ONLINE", "OFFLINE"]

_ONLINE_FIRST = sorted(registered_algorithms().items(), key=lambda item: not issubclass(item[1], StreamLearner))
#: Algorithm name → class (read-only): the online learners first, then the offline estimators, each in the
#: order they registered.
ALGORITHMS = MappingProxyType(dict(_ONLINE_FIRST))
#: The names of the online learners (``learn_one``/``learn_many``) and of the offline estimators (``fit``).
ONLINE = tuple(name for name, cls in ALGORITHMS.items() if issubclass(cls, StreamLearner))
OFFLINE = tuple(name for name in ALGORITHMS if name not in ONLINE)

