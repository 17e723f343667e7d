# `make test` and `make train` set up .venv from the locks in requirements/ first if needed.
VENV ?= .venv
PY := $(VENV)/bin/python
SERIALIZATION_DIR ?= out/spinn
LINTED := spinn_allennlp spinn_core tools tests benchmarks scripts setup.py

.PHONY: setup lint format test robustness train benchmark benchmark-snli torch-only plain-data

setup:
	VENV=$(VENV) bash scripts/setup_env.sh

# ruff (lint + formatting, settings in pyproject.toml) and mypy on the package.
lint: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy spinn_allennlp spinn_core tools

format: setup
	$(VENV)/bin/ruff check --fix $(LINTED)
	$(VENV)/bin/ruff format $(LINTED)

test: lint
	$(PY) -m pytest tests -q -p no:cacheprovider -m "not robustness" -n auto --dist loadfile

# The slow end-to-end checks (docs/robustness.md): `allennlp predict` on a hostile file,
# recovery after SIGKILL, the wheel installed in a fresh venv and used from elsewhere.
robustness: setup
	$(PY) -m pytest tests -q -p no:cacheprovider -m robustness

# Trains the full SPINN on the bundled SNLI data into $(SERIALIZATION_DIR), replacing (-f) what
# an earlier run left there.
train: setup
	$(VENV)/bin/allennlp train training_config/spinn.jsonnet -s $(SERIALIZATION_DIR) \
	  --include-package spinn_allennlp -f

# The bundled SST and SNLI files unzipped into $(PLAIN_DATA), for readers that do not read .gz
# (allennlp-models' "sst_tokens" and "snli", in training_config/allennlp_models/).
PLAIN_DATA ?= out/data
plain-data:
	mkdir -p $(PLAIN_DATA)/sst $(PLAIN_DATA)/snli
	for name in train dev test; do gunzip -c data/sst/$$name.txt.gz > $(PLAIN_DATA)/sst/$$name.txt; done
	for file in data/snli/*.jsonl.gz; do gunzip -c $$file > $(PLAIN_DATA)/snli/$$(basename $$file .gz); done

benchmark: setup
	bash benchmarks/run_all.sh

# Whole SNLI training steps of the four configs through AllenNLP (needs the full .venv).
benchmark-snli: setup
	$(PY) -W ignore benchmarks/snli_training_speed.py --threads 1

# The core's tests and the torch benchmarks in a virtual environment with torch, pytest and
# matplotlib only (.venv-torch, made on first use): what runs on a machine without AllenNLP.
torch-only:
	bash scripts/torch_only_env.sh python -m pytest tests/core -q -p no:cacheprovider
	PYTHON=.venv-torch/bin/python bash scripts/torch_only_env.sh bash benchmarks/run_all.sh --threads 1 --out out/torch_only_benchmarks
