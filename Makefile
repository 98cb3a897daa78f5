# Quickstart: `make demo` and `make test` work on a fresh clone; each builds .venv on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# The shared data sets sit beside the checkout in CI and in development; users point ONPAIR_DATA elsewhere.
export ONPAIR_DATA ?= $(abspath ../shared/datasets)
# numba's on-disk cache makes the second run of the suite skip compilation.
export NUMBA_CACHE_DIR ?= $(abspath $(VENV)/numba_cache)

.PHONY: demo demo-river demo-knn test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dask]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) demos/phishing_stream.py

demo-river: $(STAMP)
	$(PY) demos/river_pipeline.py

demo-knn: $(STAMP)
	$(PY) demos/river_knn.py

test: $(STAMP)
	$(PY) -m pytest -q tests --doctest-modules onpair streams

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/utility.py
	$(PY) bench/offline.py
	$(PY) bench/offline_utility.py
	$(PY) bench/streaming.py
	$(PY) bench/audit_table.py
	$(PY) bench/river_bench.py
	$(PY) bench/metric_speed.py
	$(PY) bench/metric_threshold.py
	$(PY) bench/metric_utility.py
	$(PY) bench/continual.py
	$(PY) bench/continual_ablation.py
	$(PY) bench/final_share.py
	$(PY) bench/drift.py
	$(PY) bench/statistics_defaults.py
	$(PY) bench/statistics_learners.py
	$(PY) bench/metric_statistics.py
	$(PY) bench/objective_perturbation.py
	$(PY) bench/dask_scaling.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
