# Quickstart: `make demo` and `make test` work on a fresh clone; each builds .venv on first use.
# `make demo*` installs the package alone; `make test`, `make test-all` and `make bench` add the test and Dask extras.
# `make test` is the fast tier (conftest.py: no slow test, a covering subset of each cross-product, the
# statistical tests at smaller sizes); `make test-all` is the whole suite at full power (CI: .ci/run).
# QUICK=1 runs the demos on a short stream and the benchmarks in their quick mode (CI: .ci/run).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXTRAS := $(VENV)/.installed-extras
QUICK_FLAG := $(if $(QUICK),--quick,)

# The shared data sets sit beside the checkout in CI and in development; users point ONPAIR_DATA elsewhere.
export ONPAIR_DATA ?= $(abspath ../shared/datasets)
# numba's on-disk cache (cache=True) makes the second run skip compilation. It is numba's default place,
# __pycache__ beside each kernel's source, for make and for a python started by hand alike (no
# NUMBA_CACHE_DIR here: a cache only make used was recompiled by every other python).

.PHONY: demo demo-river demo-knn test test-all bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

$(EXTRAS): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,dask]"
	touch $(EXTRAS)

install: $(EXTRAS)

demo: $(STAMP)
	$(PY) demos/phishing_stream.py $(QUICK_FLAG)

demo-river: $(STAMP)
	$(PY) demos/river_pipeline.py $(QUICK_FLAG)

demo-knn: $(STAMP)
	$(PY) demos/river_knn.py $(QUICK_FLAG)

# PYTEST_ARGS adds pytest options: PYTEST_ARGS="-n 2" runs two pytest-xdist workers (each loads the kernels
# once), PYTEST_ARGS="-x -k audit" a part.
PYTEST := $(PY) -m pytest -q tests --doctest-modules onpair streams --durations=15 $(PYTEST_ARGS)

# The fast tier runs on two pytest-xdist workers (FAST_WORKERS=0: in one process).
FAST_WORKERS ?= 2
test: $(EXTRAS)
	$(PYTEST) --fast $(if $(filter 0,$(FAST_WORKERS)),,-n $(FAST_WORKERS))

test-all: $(EXTRAS)
	$(PYTEST)

# The regression benchmarks at the top of bench/, each into bench/results/NAME.md (bench/README.md lists them);
# the studies (bench/studies/) and the generators of stored constants (bench/generators/) are run by hand.
bench: $(EXTRAS)
	$(PY) bench/run.py $(QUICK_FLAG)
	$(PY) bench/utility.py $(QUICK_FLAG)
	$(PY) bench/offline.py $(QUICK_FLAG)
	$(PY) bench/offline_utility.py $(QUICK_FLAG)
	$(PY) bench/streaming.py $(QUICK_FLAG)
	$(PY) bench/audit_table.py $(QUICK_FLAG)
	$(PY) bench/river_bench.py $(QUICK_FLAG)
	$(PY) bench/metric_speed.py $(QUICK_FLAG)
	$(PY) bench/metric_threshold.py $(QUICK_FLAG)
	$(PY) bench/metric_utility.py $(QUICK_FLAG)
	$(PY) bench/continual.py $(QUICK_FLAG)
	$(PY) bench/continual_ablation.py $(QUICK_FLAG)
	$(PY) bench/final_share.py $(QUICK_FLAG)
	$(if $(QUICK),,$(PY) bench/drift.py)
	$(PY) bench/statistics_learners.py $(QUICK_FLAG)
	$(PY) bench/metric_statistics.py $(QUICK_FLAG)
	$(PY) bench/objective_perturbation.py $(QUICK_FLAG)
	$(PY) bench/dask_scaling.py $(QUICK_FLAG)
	$(PY) bench/ranges.py $(if $(QUICK),--quick --seeds 1 --no-write --sections streams,)
	$(PY) bench/classifier.py targets $(if $(QUICK),--quick,--write)
	$(PY) bench/blocks.py $(QUICK_FLAG)
	$(PY) bench/classifier_limits.py $(if $(QUICK),--quick,--write)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
