#!/usr/bin/env bash
# Re-resolves the locks from requirements/*.in + overrides.txt (needs `uv`: pip install uv).
# Only for maintainers changing dependencies; installing uses the committed locks and plain pip.
#   requirements/lock.txt      run-time set (runtime.in), allennlp's stale pins overridden
#   requirements/dev-lock.txt  tests, linters, plots (dev.in), constrained to agree with lock.txt
#   requirements/models-lock.txt  the optional "models" extra, allennlp-models (models.in),
#                              constrained to agree with lock.txt
# Existing pins are kept where they still resolve (uv reads the current output file).
# FIND_LINKS points uv at a local wheel directory holding torch 2.13.0+cpu, if you have one.
set -euo pipefail
cd "$(dirname "$0")/.."
links=()
# The locks' headers name this script, not the uv command it runs.
export UV_CUSTOM_COMPILE_COMMAND="scripts/compile_lock.sh"
[ -n "${FIND_LINKS:-}" ] && links=(--find-links "$FIND_LINKS")
uv pip compile requirements/runtime.in --override requirements/overrides.txt \
  --python-version 3.11 "${links[@]}" -o requirements/lock.txt
uv pip compile requirements/dev.in --constraint requirements/lock.txt \
  --override requirements/overrides.txt --python-version 3.11 "${links[@]}" \
  -o requirements/dev-lock.txt
uv pip compile requirements/models.in --constraint requirements/lock.txt \
  --override requirements/overrides.txt --python-version 3.11 "${links[@]}" \
  -o requirements/models-lock.txt
