#!/usr/bin/env bash
# Creates .venv-torch (or $VENV): torch, pytest and matplotlib at the locked versions and
# nothing else (no AllenNLP), then runs the given command in it from the repository root
# with the package on PYTHONPATH (not installed). How the core's tests and the benchmarks are
# checked to run on a machine with torch alone (the GPU machines: see benchmarks/README.md).
#
#   bash scripts/torch_only_env.sh python -m pytest tests/core -q
#   bash scripts/torch_only_env.sh python benchmarks/encoding_speed.py --threads 1
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv-torch}
BASE_PYTHON=${BASE_PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$BASE_PYTHON" -m venv "$VENV"
  # The locks as constraints: the same versions as .venv, resolved for these three only.
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q \
    -c requirements/lock.txt -c requirements/dev-lock.txt torch pytest matplotlib
fi
if "$VENV/bin/python" -c "import allennlp" 2>/dev/null; then
  echo "$VENV has allennlp installed: not a torch-only environment" >&2
  exit 1
fi
[ $# -eq 0 ] && exit 0
cmd=$1
shift
[ "$cmd" = python ] && cmd="$VENV/bin/python"
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" exec "$cmd" "$@"
