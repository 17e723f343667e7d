#!/usr/bin/env bash
# Creates .venv (or $VENV) with exactly the locked dependency sets, then installs this package
# in editable mode. Does nothing when the environment already matches the locks.
#   requirements/lock.txt      what the package needs at run time
#   requirements/dev-lock.txt  tests, linters, benchmark plots (skipped with DEV=0)
#   requirements/models-lock.txt  the optional "models" extra: allennlp-models, whose configs
#                              then run with "type": "spinn" (MODELS=1; by default with DEV=1,
#                              since the test suite trains them; MODELS=0 leaves it out)
# TORCH_INDEX_URL: install torch (TORCH_VERSION, default 2.13.0) and a torchvision built for it
# from that index instead of the lock's CPU build, e.g. a CUDA build:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cu126 make setup
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
DEV=${DEV:-1}
MODELS=${MODELS:-$DEV}
TORCH_INDEX_URL=${TORCH_INDEX_URL:-}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
# The demo's browser tests (tests/demo/test_browser.py) drive a real headless Chromium: install
# Debian's chromium and chromium-driver when missing (as root), else say how.
if [ "$DEV" = 1 ] && ! { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing chromium and chromium-driver (the demo's browser tests)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
  else
    echo "NOTE: chromium/chromedriver missing; tests/demo/test_browser.py fails without them." \
      "Install them: sudo apt-get install chromium chromium-driver" \
      "(or set SPINN_ALLOW_NO_BROWSER=1 to skip those tests)" >&2
  fi
fi
locks=(requirements/lock.txt)
[ "$DEV" = 1 ] && locks+=(requirements/dev-lock.txt)
[ "$MODELS" = 1 ] && locks+=(requirements/models-lock.txt)
torch_choice=()
[ -n "$TORCH_INDEX_URL" ] && torch_choice=(<(echo "$TORCH_INDEX_URL $TORCH_VERSION"))
want=$(cat "${locks[@]}" setup.py "${torch_choice[@]}" | sha256sum | cut -c1-64)
stamp="$VENV/.spinn-lock-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --disable-pip-version-check)
# --no-deps: the locks are complete and already resolved with overrides for allennlp's stale
# pins (requirements/overrides.txt); letting pip resolve again would reject them.
for lock in "${locks[@]}"; do
  if [ -n "$TORCH_INDEX_URL" ]; then
    grep -vE '^(torch|torchvision)==' "$lock" > "$VENV/$(basename "$lock" .txt)-without-torch.txt"
    lock="$VENV/$(basename "$lock" .txt)-without-torch.txt"
  fi
  "${pip[@]}" --no-deps -r "$lock"
done
if [ -n "$TORCH_INDEX_URL" ]; then
  # With dependencies: a CUDA build brings its own CUDA libraries from that index.
  "${pip[@]}" "torch==$TORCH_VERSION" torchvision --index-url "$TORCH_INDEX_URL"
fi
"${pip[@]}" --no-deps --no-build-isolation -e .
# The start-up file that hides the warnings of AllenNLP's dependencies from `allennlp` commands
# (spinn_allennlp/dependency_warnings.py): a wheel installs it, an editable install does not.
site_packages=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$VENV/bin/python" -c 'from spinn_allennlp.dependency_warnings import startup_line; print(startup_line(), end="")' \
  > "$site_packages/spinn_allennlp_warnings.pth"
# allennlp-models' NarrativeQA tool, which every `allennlp` command imports once the extra is
# installed, asks NLTK to download punkt and wordnet whenever it finds no punkt: offline, two
# errors at every command. An empty punkt folder in the environment's own NLTK path stops the
# attempt (nothing of ours, nor the allennlp-models configs we run, tokenizes with punkt).
if [ "$MODELS" = 1 ]; then
  mkdir -p "$VENV/nltk_data/tokenizers/punkt"
fi
echo "$want" > "$stamp"
echo "environment ready: $VENV"
