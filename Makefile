# storybench: `make setup` then `make test`; `make build-lot` builds LOT from the embedded sample.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SEED ?= 0

.PHONY: setup test build-lot bench clean

setup:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'

test:
	$(PY) -m pytest -n 2 tests

build-lot:
	$(PY) -m pipelines.lot --stories samples/lot/stories.jsonl \
	  --annotations samples/lot/clozet_annotations.jsonl --output output/lot --seed $(SEED)

bench:
	$(PY) -m bench.run

clean:
	rm -rf output
