# storybench: `make setup` then `make test`; `make build-lot` builds LOT from the embedded sample.
# A bare `make` prints the targets below (it runs no job).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SEED ?= 0

.DEFAULT_GOAL := help
.PHONY: help setup test test-fast lint build-lot audit-lot bench clean

help: ## list the targets and what each does
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## create .venv and install storybench with its test, Dataflow, METEOR and lm-eval extras
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 'setuptools>=77' wheel
	$(PY) -m pip install --quiet -e '.[test,gcp,meteor,harness]'

test: ## run the whole test suite on 2 processes (what CI runs)
	$(PY) -m pytest -n 2 tests

test-fast: ## the unit tier only (no end-to-end job runs, `-m "not slow"`), for the inner loop
	$(PY) -m pytest -n 2 -m "not slow" tests

lint: ## ruff check and ruff format --check (settings in pyproject.toml)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# The 48-story sample is too small for the paper's proportions of SenPos and OutGen together
# (21456/1042/1592), so the sample build splits its unannotated stories 8:1:1; every other
# default is the paper's.
build-lot: ## build the four LOT datasets from the embedded sample into output/lot
	$(PY) -m pipelines.lot --stories samples/lot/stories.jsonl \
	  --annotations samples/lot/clozet_annotations.jsonl --output output/lot --seed $(SEED) \
	  --splits 8,1,1

audit-lot: ## 8-gram overlap (LOT Table 14) and bias baselines (Table 13) of output/lot
	$(PY) -m pipelines.overlap --lot output/lot --output output/audit/overlap
	$(PY) -m pipelines.bias --lot output/lot --output output/audit/bias --seed $(SEED)

bench: ## speed and memory against plain-Python/jieba baselines, into output/bench
	$(PY) -m bench.run

clean: ## delete output/
	rm -rf output
