#!/usr/bin/env bash
# Creates .venv (or $VENV) with exactly the locked dependency sets, then installs this package
# in editable mode. Does nothing when the environment already matches the locks.
#   requirements/lock.txt      what the package needs at run time
#   requirements/dev-lock.txt  tests, linters, benchmark plots (skipped with DEV=0)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
DEV=${DEV:-1}
locks=(requirements/lock.txt)
[ "$DEV" = 1 ] && locks+=(requirements/dev-lock.txt)
want=$(cat "${locks[@]}" setup.py | sha256sum | cut -c1-64)
stamp="$VENV/.spinn-lock-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$PYTHON" -m venv "$VENV"
# --no-deps: the locks are complete and already resolved with overrides for allennlp's stale
# pins (requirements/overrides.txt); letting pip resolve again would reject them.
for lock in "${locks[@]}"; do
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps -r "$lock"
done
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
echo "environment ready: $VENV"
