"""Old import paths of the modules that moved into their family's package (issue 21), kept working.

Every module of onpair lives in the package of its algorithm family (docs/guide.md, "Layout"). The
paths below were used by users, scripts or tests before the move. Importing one gives the module at its
new path (the same module object: attributes, ``isinstance`` and monkeypatching behave as before), with
one ``DeprecationWarning`` per process that names the new path. No code lives at an old path: this table
is the whole shim.

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from onpair.learners.statistics_model import discriminant_metric
>>> discriminant_metric.__module__
'onpair.statistics.model'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

#: Old dotted path → new dotted path, or the paths of the modules a split module's code went to (the old
#: path then reads each name from the first of them that has it).
MOVED = {
    # core: shared geometry, losses, validation, compiled primitives, the roots of learners and estimators
    "onpair._config": "onpair.core._config",
    "onpair._io": "onpair.core._io",
    "onpair._progress": "onpair.core._progress",
    "onpair._validation": "onpair.core._validation",
    "onpair.bounds": "onpair.core.bounds",
    "onpair.geometry": "onpair.core.geometry",
    "onpair.matrix_geometry": "onpair.core.matrix_geometry",
    "onpair.losses": "onpair.core.losses",
    "onpair.metric_losses": "onpair.core.metric_losses",
    "onpair.snapshot": "onpair.core.snapshot",
    "onpair.learners.task": "onpair.core.task",
    "onpair.learners.stream": "onpair.core.stream",
    "onpair.estimators._base": "onpair.core.estimator",
    # privacy
    "onpair.privacy._checks": "onpair.privacy.checks",
    "onpair.privacy._continual_kernels": "onpair.privacy.continual._kernels",
    "onpair.privacy.statistics": "onpair.privacy.statistics_sensitivity",
    # the Pairwise GIGA family
    "onpair._kernels": ("onpair.giga._kernels", "onpair.core._pair_kernels"),
    "onpair._metric_kernels": ("onpair.giga._metric_kernels", "onpair.core._metric_pair_kernels",
                               "onpair.batch._metric_kernels"),
    "onpair.learners.pair_history": "onpair.giga.pair_history",
    "onpair.learners.split_history": "onpair.giga.split_history",
    "onpair.learners.square_statistics": "onpair.giga.square_loss_history",
    "onpair.learners.labelled_buffer": "onpair.giga.labelled_buffer",
    "onpair.learners.augmented_rows": "onpair.giga.augmented_rows",
    "onpair.learners.histories": "onpair.giga.histories",
    "onpair.learners.slots": "onpair.giga.slots",
    "onpair.learners.iterate": "onpair.giga.iterate",
    "onpair.learners.objective": "onpair.giga.round_objective",
    "onpair.learners.release": "onpair.giga.release",
    "onpair.learners.path": "onpair.giga.path",
    "onpair.learners.base": "onpair.giga.online",
    "onpair.learners.giga": "onpair.giga.pairwise_giga",
    "onpair.learners.private": "onpair.giga.private",
    "onpair.learners.onpairstrc": "onpair.giga.onpairstrc",
    "onpair.learners.onpairc": "onpair.giga.onpairc",
    "onpair.estimators.offpair": "onpair.giga.offline",
    # the statistics family
    "onpair._statistics_kernels": "onpair.statistics._kernels",
    "onpair.learners.statistics_model": "onpair.statistics.model",
    "onpair.learners.released_statistics": "onpair.statistics.released",
    "onpair.learners.statistics": "onpair.statistics.online",
    "onpair.estimators.statistics": "onpair.statistics.offline",
    # objective and approximate minima perturbation
    "onpair.perturbed_objective": "onpair.objective.functions",
    "onpair._objective_kernels": "onpair.objective._kernels",
    "onpair.estimators.objective_perturbation": "onpair.objective.estimators",
    # full-batch gradient perturbation and Yang et al.'s SGD
    "onpair._batch_kernels": "onpair.batch._kernels",
    "onpair._sgd_kernels": "onpair.batch._sgd_kernels",
    "onpair.estimators.gradient_perturbation": "onpair.batch.gradient_perturbation",
    "onpair.estimators.output_perturbation": "onpair.batch.output_perturbation",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and returns the module at its new path."""

    def __init__(self):
        self._specs = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        new = MOVED[spec.name]
        where = new if isinstance(new, str) else " and ".join(new)
        warnings.warn(f"{spec.name} moved to {where}: import it from there (the old path is deprecated)",
                      DeprecationWarning, stacklevel=2)
        if not isinstance(new, str):
            return _SplitModule(spec.name, [importlib.import_module(name) for name in new])
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system labelled the module with the old path's spec; give it its own back.
        for old, spec in list(self._specs.items()):
            if spec.name == module.__name__:
                module.__spec__ = self._specs.pop(old)


class _SplitModule(types.ModuleType):
    """The old path of a module that was split: each name is read from the first part that has it."""

    def __init__(self, name, parts):
        super().__init__(name, f"Moved to {', '.join(part.__name__ for part in parts)}.")
        self._parts = parts

    def __getattr__(self, name):
        for part in self.__dict__.get("_parts", ()):
            if hasattr(part, name):
                return getattr(part, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self):
        return sorted({name for part in self._parts for name in dir(part)})


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the regular finders: a real module wins)."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())


def submodule(package: str, name: str):
    """``package.name`` when it is a moved module (the package's ``__getattr__``), else AttributeError."""
    if f"{package}.{name}" in MOVED:
        return importlib.import_module(f"{package}.{name}")
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
