# `make test` and `make train` set up .venv from the locks in requirements/ first if needed.
VENV ?= .venv
PY := $(VENV)/bin/python
SERIALIZATION_DIR ?= out/spinn
LINTED := spinn_allennlp tests benchmarks scripts setup.py

.PHONY: setup lint format test train benchmark

setup:
	VENV=$(VENV) bash scripts/setup_env.sh

# ruff (lint + formatting, settings in pyproject.toml) and mypy on the package.
lint: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy spinn_allennlp

format: setup
	$(VENV)/bin/ruff check --fix $(LINTED)
	$(VENV)/bin/ruff format $(LINTED)

test: lint
	$(PY) -m pytest tests -q -p no:cacheprovider

# Trains the full SPINN on the bundled SNLI data into $(SERIALIZATION_DIR), replacing (-f) what
# an earlier run left there.
train: setup
	$(VENV)/bin/allennlp train training_config/spinn.jsonnet -s $(SERIALIZATION_DIR) \
	  --include-package spinn_allennlp -f

benchmark: setup
	bash benchmarks/run_all.sh
