"""The docs name only what exists, and the guide's layout is the tree's.

Every ``onpair.…`` dotted name, ``onpair/…`` file path, Sphinx role (``:func:``, ``:class:``, ``:meth:``,
``:mod:``, ``:attr:``, ``:data:``) and backticked dotted name of an onpair module, class or function in
``docs/*.md``, README.md and the docstrings of every module of ``onpair`` must resolve: a module that
imports, then attributes that exist. A backticked private name (``_plan_releases``) must be defined
somewhere in the package. CHANGELOG.md is history and is not checked.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import pathlib
import re
import warnings

import pytest


ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "onpair"
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

DOTTED_ONPAIR = re.compile(r"(?<![\w.\-/])onpair(?:\.[A-Za-z_]\w*)+")
FILE_PATH = re.compile(r"(?<![\w./])onpair/[\w/]*\w(?:\.py)?")
ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc):`~?([^`<>]+?)`")
RELATIVE_PATH = re.compile(r"`((?:\w+/)+\w+\.py)`")
#: A script or results file of bench/, backticked or not (``bench/results/run.md``, ``../bench/run.py``).
BENCH_PATH = re.compile(r"(?<![\w.\-])bench/[\w/]*\w\.(?:py|md)\b")
BACKTICKED = re.compile(r"(?<!`)``?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?:\(\))?``?(?!`)")
#: Roots of dotted names that belong to other libraries (or to examples: a learner, a spec).
EXTERNAL = {"np", "numpy", "scipy", "sklearn", "river", "dask", "numba", "math", "rdp", "pld", "dp_accounting",
            "pd", "pandas", "os", "sys", "json", "warnings", "streams", "matplotlib", "plt", "hypothesis",
            "pytest", "importlib", "typing", "dataclasses", "argparse", "threading", "concurrent", "distributed",
            "metric_learn", "diffprivlib", "stumpy", "zipfile", "hashlib", "collections", "itertools", "tests"}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = sorted(_module_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


@functools.lru_cache(maxsize=None)
def _module(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # a deprecated module is not a name to cite
        return importlib.import_module(name)


@functools.lru_cache(maxsize=None)
def _definitions():
    """Every name a module of onpair defines (functions, classes, methods, attributes assigned anywhere),
    and the classes and functions by name."""
    names, objects = set(), {}
    for name in MODULES:
        path = PACKAGE.parent / (name.replace(".", "/") + ".py")
        if not path.exists():
            path = PACKAGE.parent / name.replace(".", "/") / "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if node.col_offset == 0:
                    objects.setdefault(node.name, []).append(getattr(_module(name), node.name, None))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names, objects


@functools.lru_cache(maxsize=None)
def _instance_attributes(cls) -> frozenset:
    """What instances of ``cls`` hold: ``self.x = …`` in its methods, and its annotated fields."""
    names = set()
    for klass in cls.__mro__:
        names.update(getattr(klass, "__annotations__", {}))
        try:
            tree = ast.parse(inspect.getsource(klass).lstrip())
        except (OSError, TypeError, IndentationError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return frozenset(names)


def _getattrs(obj, parts) -> bool:
    for i, part in enumerate(parts):
        if isinstance(obj, type) and part in {n for c in obj.__mro__ for n in vars(c)}:
            obj = next(vars(c)[part] for c in obj.__mro__ if part in vars(c))
            continue
        if isinstance(obj, type) and part in _instance_attributes(obj):
            return i == len(parts) - 1  # an instance's attribute: nothing further to look up
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def resolves(dotted: str, context=None) -> bool:
    """Whether ``dotted`` names something in onpair: an absolute ``onpair.…`` path, a name in ``context``
    (the docstring's module or class), a module of onpair by its trailing parts, or a class or function of
    onpair and its attributes."""
    parts = dotted.split(".")
    if parts[0] == "onpair":
        for k in range(len(parts), 0, -1):
            name = ".".join(parts[:k])
            if name in MODULES:
                return _getattrs(_module(name), parts[k:])
        return False
    for scope in context or ():
        if _getattrs(scope, parts):
            return True
    for k in range(len(parts), 0, -1):
        suffix = "." + ".".join(parts[:k])
        for name in MODULES:
            if name.endswith(suffix) and _getattrs(_module(name), parts[k:]):
                return True
    return any(obj is not None and _getattrs(obj, parts[1:]) for obj in _definitions()[1].get(parts[0], ()))


def _looks_like_onpair(dotted: str) -> bool:
    """A backticked name the checker must resolve: one of onpair's modules or classes, or a private name."""
    first = dotted.split(".")[0]
    if first in EXTERNAL or hasattr(builtins, first):
        return False
    if first == "onpair" or first.startswith("_"):
        return True
    if "." in dotted and any(name.endswith("." + first) for name in MODULES):
        return True
    return "." in dotted and first in _definitions()[1]


def problems_in_text(text: str, where: str, context=None, backticks=True) -> list:
    found = []
    for match in DOTTED_ONPAIR.finditer(text):
        if not resolves(match.group(0).rstrip(".")):
            found.append(f"{where}: {match.group(0)}")
    for match in FILE_PATH.finditer(text):
        path = ROOT / match.group(0)
        if not path.exists():
            found.append(f"{where}: {match.group(0)}")
    for match in BENCH_PATH.finditer(text):
        if not (ROOT / match.group(0)).exists():
            found.append(f"{where}: {match.group(0)}")
    for match in RELATIVE_PATH.finditer(text):  # `giga/offline.py`: under onpair/ or the repository
        if match.group(1).split("/")[0] in EXTERNAL:
            continue
        if not ((PACKAGE / match.group(1)).exists() or (ROOT / match.group(1)).exists()):
            found.append(f"{where}: `{match.group(1)}`")
    for match in ROLE.finditer(text):
        target = match.group(1).strip().rstrip("()")
        if target.split(".")[0] in EXTERNAL or hasattr(builtins, target.split(".")[0]):
            continue
        if not resolves(target, context):
            found.append(f"{where}: :role:`{target}`")
    if backticks:
        for match in BACKTICKED.finditer(text):
            dotted = match.group(1)
            if dotted.startswith("onpair") or not _looks_like_onpair(dotted):
                continue
            if "." not in dotted:
                if dotted not in _definitions()[0]:
                    found.append(f"{where}: `{dotted}`")
            elif not resolves(dotted, context):
                found.append(f"{where}: `{dotted}`")
    return found


def _docstrings():
    """(where, docstring, context objects) of every module, class and function of onpair."""
    for name in MODULES:
        module = _module(name)
        path = pathlib.Path(module.__file__)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        yield where, ast.get_docstring(tree) or "", (module,)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                owner = getattr(module, node.name, None)
                scopes = (owner, module) if owner is not None else (module,)
                yield f"{where}:{node.name}", ast.get_docstring(node) or "", scopes
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        yield f"{where}:{node.name}.{item.name}", ast.get_docstring(item) or "", scopes
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.col_offset == 0:
                yield f"{where}:{node.name}", ast.get_docstring(node) or "", (module,)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_the_docs_name_only_what_exists(path):
    text = path.read_text(encoding="utf-8")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        found += problems_in_text(line, f"{path.name}:{number}")
    assert found == []


def test_the_docstrings_name_only_what_exists():
    found = []
    for where, docstring, context in _docstrings():
        found += problems_in_text(docstring, where, context)
    assert found == []


@pytest.mark.parametrize("text, bad", [
    ("`_OnlinePairwiseLearner._smoothness`", True), ("`conversions._nudge`", True), ("`_plan_releases`", True),
    ("`onpair.bounds.FeatureBounds`", True),  # an old path (core/bounds.py moved): gone
    ("onpair/learners/statistics.py", True), (":func:`onpair.privacy.no_such_function`", True),
    ("`conversions.nudge_until`", False), ("`FeatureBounds.transform`", False), ("`np.linalg.norm`", False),
    ("`onpair.core.bounds.FeatureBounds`", False), ("onpair/statistics/online.py", False),
    ("`privacy.gaussian.sigmas_for_shares`", False), ("`learner.model`", False),
    ("`learners/onpairstrc.py`", True), ("`giga/onpairstrc.py`", False), ("`bench/continual.py`", False),
    ("bench/results_all.md", True), ("(bench/statistics_defaults.py: factors", True), ("bench/results/run.md", False),
    ("[b](../bench/studies/dpftrl.py)", False),
])
def test_the_checker_tells_a_stale_name_from_a_real_one(text, bad):
    assert bool(problems_in_text(text, "example")) is bad


# -- the guide's layout --------------------------------------------------------------------------------
def _layout_section() -> str:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    start = guide.index("### Layout")
    block = guide[guide.index("```", start) + 3:]
    return block[:block.index("```")]


def _layout_paths() -> list:
    """The paths the layout names under ``onpair/``: one per line, the first word of the line (``name/`` for
    a package, whose modules follow on more indented lines; ``name.py`` for a module)."""
    paths, stack, inside = [], [], False
    for line in _layout_section().splitlines():
        match = re.match(r"^( *)(\S+)", line)
        if not match:
            continue
        indent, token = len(match.group(1)), match.group(2)
        if indent == 0:
            inside = token == "onpair/"
            continue
        if not inside or not re.fullmatch(r"\w+(?:\.py|/)", token):
            continue  # outside onpair/, or the continuation of a description
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (stack[-1][1] if stack else "") + token
        paths.append(path)
        if token.endswith("/"):
            stack.append((indent, path))
    return paths


def test_the_guide_layout_is_the_tree():
    """Every package and module of onpair/ has its line in docs/guide.md's layout, and every line names
    one that exists."""
    tree = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if path.name == "__init__.py" and relative.parent != pathlib.Path("."):
            tree.add(f"{relative.parent.as_posix()}/")
        else:
            tree.add(relative.as_posix())
    listed = _layout_paths()
    assert len(listed) == len(set(listed)), "a path is listed twice"
    assert sorted(tree - set(listed)) == [], "modules of onpair/ the guide's layout leaves out"
    assert sorted(set(listed) - tree) == [], "the layout names what is not in the tree"


def test_the_guide_layout_shows_the_default_learner_first():
    """The statistics family (OnPairStats, the default learner) is the first package of the layout."""
    packages = [path for path in _layout_paths() if path.endswith("/") and path.count("/") == 1]
    assert packages[0] == "statistics/"
    section = _layout_section()
    assert section.index("OnPairStats") < min(section.index(n) for n in ("PairwiseGIGA", "OnPairStrC"))


def _make_targets_named(text: str) -> set:
    """The targets of ``make X`` in backticks or at the start of a line of a code block."""
    return set(re.findall(r"(?:`|^)make ([a-z][\w-]*)", text, re.M))


def test_every_make_target_the_docs_name_exists_and_runs_in_ci():
    """A target the README or docs/ name is a Makefile target and .ci/run runs it (``make demo-river`` once
    crashed on a fresh clone: no CI step ran it)."""
    named = set()
    for path in DOCS:
        named |= _make_targets_named(path.read_text(encoding="utf-8"))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    ci_targets = set()
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        words = line.split("#")[0].split()
        if words[:1] == ["make"]:
            ci_targets |= {w for w in words[1:] if "=" not in w and not w.startswith("-")}
    assert {"demo", "demo-river", "demo-knn", "test", "test-all", "bench"} <= named  # the checker reads the README
    assert named <= targets, f"named in the docs, not in the Makefile: {sorted(named - targets)}"
    # make test is the fast tier of make test-all: the same command with --fast (and its xdist workers), so CI's
    # make test-all runs every test it runs
    recipes = dict(re.findall(r"^([a-z][\w-]*):[^\n]*\n\t([^\n]*)", makefile, re.M))
    if "test-all" in ci_targets and recipes.get("test", "").startswith(recipes.get("test-all", "?") + " --fast"):
        ci_targets.add("test")
    assert named <= ci_targets, f"named in the docs, not run by .ci/run: {sorted(named - ci_targets)}"


def test_make_and_a_plain_python_share_one_numba_cache():
    """The Makefile once pointed numba's cache at .venv/numba_cache, so a python started by hand (the README's
    .venv/bin/onpair, a script) recompiled every kernel: neither the Makefile nor .ci/run moves the cache, and
    every kernel caches (numba's default place, beside its source)."""
    from onpair._config import NJIT_OPTIONS, NJIT_PARALLEL_OPTIONS

    for path in (ROOT / "Makefile", ROOT / ".ci" / "run"):
        code = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
        assert not any("NUMBA_CACHE_DIR" in line for line in code), path
    assert NJIT_OPTIONS["cache"] and NJIT_PARALLEL_OPTIONS["cache"]


def test_the_docs_say_what_model_selection_costs():
    """GridSearchCV once refitted 16 times on the same records with no word about it in the docs: the README and
    the guide say what cross-validation and grid search cost and name the shared accountant that holds them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide[guide.index("**What model selection costs.**"):]
    section = section[:section.index("\n\n")]
    for text in (readme, section):
        assert "GridSearchCV" in text and "cross_val_score" in text and "accountant" in text
        assert "best_estimator_.privacy_report_" in text


def _readme_block(marker: str) -> str:
    """The README's ```python block that contains ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, f"{len(found)} README blocks contain {marker!r}"
    return found[0]


def test_the_readme_scikit_learn_example_runs_and_says_how_to_install_it():
    """The README's scikit-learn example once declared classes=(0, 1) on streams' ±1 labels, and needed
    scikit-learn and pandas, which make demo does not install: it runs as written, and the extra it names
    exists in pyproject.toml."""
    from streams.fetch import resolve_data_dir

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    extra = re.search(r"^sklearn = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert 'pip install -e ".[sklearn]"' in readme and extra is not None
    assert {re.split(r"[<>=\[]", req.strip(' "'))[0] for req in extra.group(1).split(",")} >= {"scikit-learn", "pandas"}
    if not (resolve_data_dir() / "pima-indians-diabetes.csv").exists():
        pytest.skip("the example reads pima-indians-diabetes.csv from the data directory (make test sets "
                    "ONPAIR_DATA to the shared copy)")
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a noise-dominated release would warn: not this test's subject
        exec(compile(_readme_block('load("pima")'), "README.md", "exec"), namespace)
    model, X_test, y_test = namespace["model"], namespace["X_test"], namespace["y_test"]
    # the example draws fresh noise (no random_state, as a user should): its AUC is a random variable (0.39 once
    # in CI at ε = 1), so its quality is checked on the same fit with a fixed seed
    assert list(model.classes_) == [-1, 1] and 0.0 <= model.score(X_test, y_test) <= 1.0
    seeded = type(model)(**{**model.get_params(), "random_state": 0}).fit(namespace["X"], namespace["y"])
    assert 0.5 < seeded.score(X_test, y_test) <= 1.0


def _figure(pattern: str, path: pathlib.Path = ROOT / "docs" / "guide.md") -> float:
    """The one number ``pattern``'s group catches in ``path`` (the pattern must match exactly once)."""
    found = re.findall(pattern, " ".join(path.read_text(encoding="utf-8").split()))
    assert len(found) == 1, (pattern, found)
    return float(found[0])


def test_the_guides_cost_of_passes_is_what_privacy_report_says():
    """The guide once said 4 passes of Phishing cost ε 2.15 per record while ``privacy_report(passes=4)`` said
    3.03: the figures it prints are recomputed here from the river classifier it describes."""
    from river import datasets

    from onpair.river import PrivatePairwiseClassifier
    from streams import PHISHING_FEATURES

    same = _figure(r"4 passes of Phishing at ε = 1 are ε (\d+\.\d\d) per record at δ = 1e-5")
    group = _figure(r"`order=\"any\"` for shuffled passes: the group bound, ε (\d+\.\d\d);")
    model = PrivatePairwiseClassifier(epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0), features=PHISHING_FEATURES, seed=0)
    for x, y in list(datasets.Phishing()) * 4:
        model.learn_one(x, y)
    assert round(model.privacy_report(passes=4)["record_level"]["epsilon"], 2) == same
    assert round(model.privacy_report(passes=4, order="any")["record_level"]["epsilon"], 2) == group


def test_the_guides_scaler_and_model_total_is_what_a_shared_accountant_says():
    """"ε ≈ 1 in total" for a scaler at ε 0.3 and a model at ε 0.7 was wrong (ρ adds up, not ε): the guide's
    total is the one a shared accountant reports for that pipeline."""
    import numpy as np
    from sklearn.pipeline import make_pipeline

    from onpair import OffPairStats
    from onpair.preprocessing import PrivateStandardScaler
    from onpair.privacy import ZCDPAccountant

    total = _figure(r"OffPairStats\(epsilon=0\.7, bounds=\(-3\.0, 3\.0\)\)\)\.fit\(X, y\) # ε (\d+\.\d\d) in total")
    rng = np.random.default_rng(1)
    X, y = rng.uniform(0, 1, size=(200, 3)), np.repeat([0, 1], 100)
    budget = ZCDPAccountant.from_dp(5.0, 1e-5)
    make_pipeline(PrivateStandardScaler(epsilon=0.3, bounds=(0, 1), accountant=budget, random_state=0),
                  OffPairStats(epsilon=0.7, bounds=(-3.0, 3.0), accountant=budget, random_state=0)).fit(X, y)
    assert round(budget.report()["epsilon_spent"], 2) == total


def test_the_guides_budget_split_recipe_runs_and_spends_what_it_says():
    """The guide's recipe for a grid search under one budget (ρ divides, not ε): its code runs as written on
    a small data set, every fit fits, the per-fit ε it prints is the one it computes, and the total stays
    within the budget."""
    import numpy as np

    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide[guide.index("**Splitting a budget.**"):]
    code = section[section.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(300, 3))
    y = (X[:, 0] + 0.3 * rng.standard_normal(300) > 0.5).astype(int)
    scope = {"X": X, "y": y}
    exec(compile(code, "guide: Splitting a budget", "exec"), scope)
    assert f"{scope['epsilon']:g} each" in code
    assert scope["budget"].report()["epsilon_spent"] <= 4.0
    assert len(scope["search"].cv_results_["params"]) * 5 + 1 == scope["fits"] == 16


def test_bench_results_md_gathers_every_benchmarks_file():
    """bench/results.md is where make bench leaves its figures: the benchmarks' own files under bench/results/,
    gathered by bench/results_file.py (a file edited by hand, or a benchmark file not gathered, fails here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("results_file", ROOT / "bench" / "results_file.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "bench" / "results.md").read_text() == module.summary_text()
