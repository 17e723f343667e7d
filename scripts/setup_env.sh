#!/usr/bin/env bash
# Creates .venv (or $VENV) with exactly the locked dependency set, then installs this package
# in editable mode. Does nothing when the environment already matches the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
want=$(cat requirements/lock.txt setup.py | sha256sum | cut -c1-64)
stamp="$VENV/.spinn-lock-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$PYTHON" -m venv "$VENV"
# --no-deps: the lock is complete and already resolved with overrides for allennlp's stale pins
# (requirements/overrides.txt); letting pip resolve again would reject them.
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps -r requirements/lock.txt
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
echo "environment ready: $VENV"
