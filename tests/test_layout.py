"""The layout of the package (docs/guide.md, "Layout"): one package per algorithm family, no import circle,
no package driving another one's private names and registries instead of lists. Size is not a rule: a class
above :data:`LONG_CLASS` lines is a symptom to look at, so each one is named here with the reason it stays whole
(:data:`LONG_CLASSES`), and a class that grows past it is noticed, not squeezed under a line count.

The import graph is read from the source (``ast``), with every import a module makes, function-level
imports included: a circle that only closes at run time is a circle too.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import warnings

import numpy as np
import pytest

import onpair

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "onpair"
#: The length (lines, docstring included) above which a class is worth a look: it may hold more than one job.
LONG_CLASS = 450
#: The classes longer than :data:`LONG_CLASS`, each with the reason it is one class. A class that grows past
#: it is added here with its reason, or split by responsibility (issue 33), never trimmed to fit.
LONG_CLASSES = {
    "onpair.privacy.accountant.ZCDPAccountant": "one budget's record: spend, refuse, convert, report and persist "
                                                "read the same exact sum and must stay one object to stay exact",
}
#: The packages every family may use, private names included: the library's shared core and its root.
SHARED = ("core", "")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str):
    """(line, module imported, names imported from it) of every import of ``name``'s source, at any depth."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            yield node.lineno, source, tuple(alias.name for alias in node.names)


def _target(source: str, imported: str | None = None) -> str | None:
    """The module of onpair an import reaches: ``source.imported`` when that is a module, else the longest
    prefix of ``source`` that is one."""
    if imported is not None and f"{source}.{imported}" in MODULES:
        return f"{source}.{imported}"
    while source and source not in MODULES:
        source = source.rpartition(".")[0]
    return source or None


def import_graph() -> dict:
    graph = {name: set() for name in MODULES}
    for name in MODULES:
        for _, source, names in _imports(name):
            if not (source == "onpair" or source.startswith("onpair.")):
                continue
            for target in {_target(source, n) for n in names} if names else {_target(source)}:
                if target is not None and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _family(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else ""


# -- the graph -----------------------------------------------------------------------------------------
def test_the_import_graph_of_onpair_has_no_circle():
    graph = import_graph()
    assert sum(len(edges) for edges in graph.values()) > 100  # the graph was read (every import counts)
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_a_function_level_import_is_an_edge():
    graph = import_graph()
    # core.estimator imports core.distributed inside PairwiseEstimator.fit only (it needs Dask)
    assert "onpair.core.distributed" in graph["onpair.core.estimator"]


def _package(module: str) -> str:
    """The node of ``module`` in the package graph: its subpackage of onpair (``core``, ``privacy``,
    ``statistics``, …), or the module itself for a module at the root (``metrics``, ``cli``, ``_config``; the
    package's ``__init__`` is ``onpair``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "onpair"


def package_graph(graph: dict) -> dict:
    packages = {_package(name): set() for name in graph}
    for name, targets in graph.items():
        packages[_package(name)].update(_package(t) for t in targets if _package(t) != _package(name))
    return packages


def test_the_package_graph_has_no_circle_function_level_imports_included():
    packages = package_graph(import_graph())
    assert {"core", "privacy", "statistics", "giga", "batch", "objective", "river", "audit"} <= set(packages)
    assert circles(packages) == []


def test_the_package_graph_sees_a_circle_between_packages():
    assert circles(package_graph({"onpair.core.a": {"onpair.privacy.b"}, "onpair.privacy.b": {"onpair.core.c"},
                                  "onpair.core.c": set()})) == [["core", "privacy"]]


def test_privacy_depends_on_nothing_in_onpair_but_the_leaf_configuration():
    graph = import_graph()
    assert {t for m in graph if _package(m) == "privacy" for t in graph[m] if _package(t) != "privacy"} == \
        {"onpair._config"}
    assert graph["onpair._config"] == set()  # a leaf


def _kernel_parameters(source: str) -> list:
    """(line, function, parameter) of every parameter named ``kernel`` or ``*_kernel`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None and (arg.arg == "kernel" or arg.arg.endswith("_kernel")):
                    found.append((node.lineno, getattr(node, "name", "<lambda>"), arg.arg))
    return found


def test_privacy_takes_no_kernel_from_statistics():
    """One mechanism step protocol (issue 33): data enters a continual mechanism as rows (``add_block``); no
    function of onpair/privacy takes a kernel to run (the statistics family's fused call runs privacy's
    compiled step itself), and privacy imports nothing of statistics (the test above)."""
    found = [(name, *hit) for name, path in MODULES.items() if _package(name) == "privacy"
             for hit in _kernel_parameters(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_kernel_parameter_finder_sees_one():
    source = "def f(v, kernel):\n    pass\nclass M:\n    def g(self, *, row_kernel=None):\n        pass\n"
    assert _kernel_parameters(source) == [(1, "f", "kernel"), (4, "g", "row_kernel")]


#: The only function-level imports of onpair modules, each for an optional dependency: (module, module it
#: imports) → why the import waits for the call.
FUNCTION_LEVEL_IMPORTS = {
    # core.distributed needs Dask (the optional extra onpair[dask]): imported only when fit is given Dask data
    ("onpair.core.estimator", "onpair.core.distributed"),
    # the package's face imports its public names on first use (numba, scipy), so that `onpair --help` answers
    # in a fraction of a second (issue 32): onpair.__init__._import_public
    *(("onpair", f"onpair.{name}") for name in ("core.bounds", "learners", "estimators", "persistence", "privacy")),
}


def _function_level_imports(tree: ast.Module):
    """The Import/ImportFrom nodes of ``tree`` inside a function or class (not at module level, where a
    guard such as ``if``/``try`` still counts as module level)."""
    module_level = set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        module_level.add(node)
        if isinstance(node, (ast.If, ast.Try)):
            stack += node.body + node.orelse + getattr(node, "finalbody", [])
            stack += [n for handler in getattr(node, "handlers", []) for n in handler.body]
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in module_level]


def test_function_level_imports_of_onpair_modules_are_only_for_optional_dependencies():
    found = set()
    for name, path in MODULES.items():
        lines = {node.lineno for node in _function_level_imports(ast.parse(path.read_text(encoding="utf-8")))}
        for line, source, names in _imports(name):
            if line in lines and (source == "onpair" or source.startswith("onpair.")):
                found |= {(name, _target(source, n)) for n in names or (None,)}
    assert found == FUNCTION_LEVEL_IMPORTS


def test_the_function_level_import_finder_sees_one():
    tree = ast.parse("import a\ntry:\n    import b\nexcept ImportError:\n    b = None\n"
                     "def f():\n    from . import c\nclass K:\n    import d\n")
    assert sorted(node.lineno for node in _function_level_imports(tree)) == [7, 9]


def test_core_imports_no_family_package():
    """The families build on core, never the other way round."""
    families = {"statistics", "giga", "batch", "objective", "river", "audit"}
    graph = import_graph()
    assert [(m, t) for m in graph if _family(m) == "core" for t in graph[m] if _family(t) in families] == []


def _long_classes(modules=None) -> dict:
    """``{module.Class: lines}`` of every class longer than :data:`LONG_CLASS` lines in ``modules`` (``{name:
    path}``; default: every module of onpair), nested classes included."""
    found = {}
    for name, path in (MODULES if modules is None else modules).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > LONG_CLASS:
                found[f"{name}.{node.name}"] = node.end_lineno - node.lineno + 1
    return found


def test_every_long_class_is_named_with_its_reason():
    """A symptom report, not a line rule: every class above LONG_CLASS lines is listed in LONG_CLASSES with a
    one-line reason, and every entry there is still such a class (a split class leaves the list)."""
    found = _long_classes()
    assert {name: n for name, n in found.items() if name not in LONG_CLASSES} == {}, \
        "a class grew past LONG_CLASS lines: split it by responsibility, or name it in LONG_CLASSES with why"
    assert sorted(set(LONG_CLASSES) - set(found)) == []
    assert all(isinstance(reason, str) and reason.strip() and "\n" not in reason for reason in LONG_CLASSES.values())


def test_the_long_class_scan_measures_from_class_to_last_line(tmp_path):
    """The scan finds a long class (nested too) and leaves a short one and a long function alone."""
    path = tmp_path / "m.py"
    long_body = "    x = 1\n" * LONG_CLASS
    path.write_text("class Short:\n    x = 1\n\n\nclass Long:\n" + long_body + "\n\ndef f():\n" + long_body
                    + "\n\nclass Outer:\n    class Inner:\n" + "    " + long_body.replace("\n", "\n    ").rstrip() + "\n",
                    encoding="utf-8")
    assert _long_classes({"m": path}) == {"m.Long": LONG_CLASS + 1, "m.Outer": LONG_CLASS + 2,
                                          "m.Inner": LONG_CLASS + 1}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_package_imports_another_packages_private_names():
    """A family imports what another package makes public: a public name of a public module, or a name a
    private module lists in its ``__all__`` (batch/_kernels.py's entry points). Only the shared core and the
    package root are open to all (their private names are the library's own vocabulary: numba flags,
    checks, compiled primitives)."""
    found = []
    for name in MODULES:
        for line, source, names in _imports(name):
            if not source.startswith("onpair") or _family(source) in SHARED or _family(source) == _family(name):
                continue
            private_module = any(_private(part) for part in source.split("."))
            exported = getattr(importlib.import_module(source), "__all__", ()) if private_module else ()
            for imported in names:
                if _private(imported) or (private_module and imported not in exported):
                    found.append(f"{name}:{line}: from {source} import {imported}")
    assert found == []


def test_the_private_import_check_sees_one():
    assert _family("onpair.giga._kernels") == "giga" and _family("onpair.persistence") == ""
    assert _family("onpair.core.bounds") == "core" and _family("onpair.statistics") == "statistics"


# -- one package per family ----------------------------------------------------------------------------
@pytest.mark.parametrize("family, classes", [
    ("statistics", ["OnPairStats", "OffPairStats"]),
    ("giga", ["PairwiseGIGA", "OnPairStrC", "OnPairC", "OffPairStrC", "OffPairC"]),
    ("batch", ["GradientPerturbedGD", "OutputPerturbedSGD"]),
    ("objective", ["ObjectivePerturbedLogistic", "ApproxMinimaPerturbedLogistic"]),
])
def test_each_family_holds_its_learners_and_its_kernels(family, classes):
    for name in classes:
        assert getattr(onpair, name).__module__.startswith(f"onpair.{family}."), name
    assert (PACKAGE / family / "_kernels.py").exists()
    assert (PACKAGE / family / "audit_variants.py").exists()


def test_every_public_class_lives_in_a_family_package():
    for name in onpair.__all__:
        obj = getattr(onpair, name)
        if isinstance(obj, type) and name not in ("FeatureBounds", "PrivacyBudgetExceeded", "PrivacyWarning",
                                                     "NoiseDominatedWarning"):
            assert _family(obj.__module__) in ("statistics", "giga", "batch", "objective"), name


# -- registries instead of lists -----------------------------------------------------------------------
def test_the_mechanisms_users_choose_are_the_continual_registry():
    from onpair.privacy.continual import PrefixSumMechanism
    from onpair.statistics.released import MECHANISMS

    assert set(MECHANISMS) == set(PrefixSumMechanism.options())
    assert PrefixSumMechanism.for_option("epochs").__name__ == "EpochTrees"
    with pytest.raises(ValueError, match="mechanism must be one of"):
        PrefixSumMechanism.for_option("banded_toeplitz")  # a kind (the state's tag), not a user's choice


#: The names users choose an algorithm by, and the class each must give (written here, not read from the code).
ALGORITHM_NAMES = {"stats": "OnPairStats", "onpairstrc": "OnPairStrC", "onpairc": "OnPairC", "giga": "PairwiseGIGA",
                   "offstats": "OffPairStats", "offpairstrc": "OffPairStrC", "offpairc": "OffPairC",
                   "gradient": "GradientPerturbedGD", "sgd": "OutputPerturbedSGD"}


def test_the_algorithm_registry_is_filled_by_the_classes_themselves():
    from onpair.algorithms import ALGORITHMS, OFFLINE, ONLINE

    assert {name: cls.__name__ for name, cls in ALGORITHMS.items()} == ALGORITHM_NAMES
    assert all(ALGORITHMS[name] is getattr(onpair, cls) for name, cls in ALGORITHM_NAMES.items())
    assert set(ONLINE) == {"stats", "onpairstrc", "onpairc", "giga"} and set(OFFLINE) == set(ALGORITHMS) - set(ONLINE)
    with pytest.raises(ValueError, match="registered already"):
        class Impostor(onpair.OnPairStrC, algorithm="stats"):  # a second class under a taken name
            pass


@pytest.mark.parametrize("name", sorted(ALGORITHM_NAMES))
def test_each_algorithm_name_gives_the_same_class_in_river_the_cli_the_experiment_and_the_audit(name):
    from onpair import cli, experiment
    from onpair.audit.presets import PRESETS
    from onpair.core.bounds import FeatureBounds
    from onpair.river.classifier import LEARNERS

    cls = getattr(onpair, ALGORITHM_NAMES[name])
    if name in ("stats", "onpairstrc", "onpairc", "giga"):
        assert LEARNERS[name] is cls
    else:
        assert name not in LEARNERS  # river wraps the online learners only
    args = cli.build_parser().parse_args(["replay", "phishing", "--algo", name, "--mode", "paper"][:6 if name == "sgd" else 4])
    args.loss = None if name in ("stats", "offstats") else "logistic"  # replay's default, set before the learner
    cli._load_commands()  # what main() does before a command runs
    assert type(cli._make_learner(args, 100, (0.0, 1.0))) is cls
    figures = [figure for figure, (algorithm, *_) in experiment.FIGURES.items() if algorithm == name]
    for figure in figures:
        for config in ("paper", "library"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the paper's protocol (δ = 1/n, its constants) warns on purpose
                assert type(experiment._learner(name, config, 1.0, 50, FeatureBounds(0.0, 1.0), 0)) is cls
    if name in PRESETS:
        learner, _ = PRESETS[name].build(1.0, 1e-5, 20, 2, (0.0, 1.0))(np.random.SeedSequence(0))
        assert type(learner) is cls
    # every name is read by at least one consumer besides the CLI
    assert name in LEARNERS or figures or name in PRESETS or name in ("offstats",)


def test_every_distributed_estimator_implements_the_public_protocol():
    pytest.importorskip("dask")
    from onpair.core.distributed import PartitionedFit

    from public_api import OFFLINE

    with_fit = {name for name, cls in OFFLINE.items() if isinstance(cls(), PartitionedFit)}
    assert with_fit == {"OffPairStats", "GradientPerturbedGD"}
