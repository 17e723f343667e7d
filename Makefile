# `make test` and `make train` set up .venv from requirements/lock.txt first if needed.
VENV ?= .venv
PY := $(VENV)/bin/python
SERIALIZATION_DIR ?= out/spinn

.PHONY: setup test train benchmark

setup:
	VENV=$(VENV) bash scripts/setup_env.sh

test: setup
	$(PY) -m pytest tests -q -p no:cacheprovider

train: setup
	$(VENV)/bin/allennlp train training_config/spinn.jsonnet -s $(SERIALIZATION_DIR) \
	  --include-package spinn_allennlp -f

benchmark: setup
	bash benchmarks/run_all.sh
