#!/usr/bin/env bash
# Re-resolves the locks from requirements/*.in + overrides.txt (needs `uv`: pip install uv).
# Only for maintainers changing dependencies; installing uses the committed locks and plain pip.
#   requirements/lock.txt      run-time set (runtime.in), allennlp's stale pins overridden
#   requirements/dev-lock.txt  tests, linters, plots (dev.in), constrained to agree with lock.txt
#   requirements/models-lock.txt  the optional "models" extra, allennlp-models (models.in),
#                              constrained to agree with lock.txt
# One lock for every supported Python (3.11 to 3.13, setup.py's python_requires) and platform
# (--universal): where a package's version must differ, the lock has one pin per Python with an
# environment marker, and pip installs the pin whose marker holds. Packages come from the
# package index alone (uv reads no pip configuration), so the locks name no other index.
# Existing pins are kept where they still resolve (uv reads the current output file).
set -euo pipefail
cd "$(dirname "$0")/.."
# The locks' headers name this script, not the uv command it runs.
export UV_CUSTOM_COMPILE_COMMAND="scripts/compile_lock.sh"
common=(--universal --python-version 3.11 --override requirements/overrides.txt)
uv pip compile requirements/runtime.in "${common[@]}" -o requirements/lock.txt
uv pip compile requirements/dev.in --constraint requirements/lock.txt "${common[@]}" \
  -o requirements/dev-lock.txt
uv pip compile requirements/models.in --constraint requirements/lock.txt "${common[@]}" \
  -o requirements/models-lock.txt
