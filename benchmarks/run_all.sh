#!/usr/bin/env bash
# Runs both benchmarks with their defaults, writing tables, JSON and plots to benchmarks/results/.
#
#   bash benchmarks/run_all.sh                      # defaults (CPU, torch's thread count)
#   bash benchmarks/run_all.sh --threads 1          # a shared or busy CPU machine
#   bash benchmarks/run_all.sh --device cuda        # GPU
#
# Extra arguments go to both scripts, so pass only options they share: --device, --threads,
# --hidden, --max-len, --repeats, --warmup, --lstm, --seed, --out.
# PYTHON overrides the interpreter (default: .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"

"$PYTHON" -W ignore benchmarks/encoding_speed.py "$@"
echo
"$PYTHON" -W ignore benchmarks/training_speed.py "$@"
