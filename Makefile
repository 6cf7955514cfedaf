# story# The audits every LOT release ships with: 8-gram overlap (Table 14) and bias baselines (Table 13).
audit-lot:
	$(PY) -m pipelines.overlap --lot output/lot --output output/audit/overlap
	$(PY) -m pipelines.bias --lot output/lot --output output/audit/bias --seed $(SEED)

bench: `make setup` then `make test`; `make build-lot` builds LOT from the embedded sample.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SEED ?= 0

.PHONY: setup test build-lot audit-lot bench clean

setup:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,gcp]'

test:
	$(PY) -m pytest -n 2 tests

# The 48-story sample is too small for SenPos's paper proportions (20000/800/863), so the
# sample build uses 8:1:1 for SenPos; every other default is the paper's.
build-lot:
	$(PY) -m pipelines.lot --stories samples/lot/stories.jsonl \
	  --annotations samples/lot/clozet_annotations.jsonl --output output/lot --seed $(SEED) \
	  --senpos-splits 8,1,1

# The audits every LOT release ships with: 8-gram overlap (Table 14) and bias baselines (Table 13).
audit-lot:
	$(PY) -m pipelines.overlap --lot output/lot --output output/audit/overlap
	$(PY) -m pipelines.bias --lot output/lot --output output/audit/bias --seed $(SEED)

bench:
	$(PY) -m bench.run

clean:
	rm -rf output
