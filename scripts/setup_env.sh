#!/usr/bin/env bash
# Creates .venv (or $VENV) with exactly the locked dependency sets, then installs this package
# in editable mode. Does nothing when the environment already matches the locks.
#   requirements/lock.txt      what the package needs at run time
#   requirements/dev-lock.txt  tests, linters, benchmark plots (skipped with DEV=0)
#   requirements/models-lock.txt  the optional "models" extra: allennlp-models, whose configs
#                              then run with "type": "spinn" (MODELS=1; by default with DEV=1,
#                              since the test suite trains them; MODELS=0 leaves it out)
# The locks hold one pin set for Python 3.11, 3.12 and 3.13 (markers where they differ), all
# from the package index: on Linux x86-64 torch is its CUDA build, which runs on a CPU too.
# PYTHON: the interpreter (a command or a path). Unset: python3 if it is a supported version,
#   else the newest of python3.13, python3.12, python3.11 on the PATH or installed by pyenv.
# TORCH_INDEX_URL: install torch (TORCH_VERSION, default the lock's) and a torchvision built for
# it from that index instead of the lock's, everything else from the lock, e.g. the small
# CPU-only build:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu make setup
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
DEV=${DEV:-1}
MODELS=${MODELS:-$DEV}
TORCH_INDEX_URL=${TORCH_INDEX_URL:-}
LOCKED_TORCH=$(sed -n 's/^torch==\([^ ;]*\).*/\1/p' requirements/lock.txt)
TORCH_VERSION=${TORCH_VERSION:-$LOCKED_TORCH}
SUPPORTED="3.11 3.12 3.13"  # setup.py's python_requires; the locks cover each

# version_of COMMAND: its "major.minor", or nothing when it does not run.
version_of() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}
supported() {
  case " $SUPPORTED " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}
# pyenv_python X.Y: the newest X.Y interpreter pyenv has installed (active or not), if any.
pyenv_python() {
  local root
  root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  ls -d "$root"/versions/"$1".*/bin/python"$1" 2>/dev/null | sort -V | tail -n 1
}
find_python() {
  local candidate version
  if [ -n "${PYTHON:-}" ]; then
    if [ -n "$(version_of "$PYTHON")" ]; then
      echo "$PYTHON"
      return
    fi
    # PYTHON=python3.12 where 3.12 is a pyenv version that is not active (pyenv's shim is on
    # the PATH but refuses to run it).
    version=${PYTHON##*python}
    candidate=$(pyenv_python "$version")
    if [ -n "$version" ] && [ -n "$candidate" ]; then
      echo "$candidate"
      return
    fi
    echo "PYTHON=$PYTHON: no such interpreter (give a command on the PATH or a full path," \
      "e.g. PYTHON=/usr/bin/python3.12)" >&2
    return 1
  fi
  if supported "$(version_of python3)"; then
    echo python3
    return
  fi
  for version in 3.13 3.12 3.11; do
    for candidate in "python$version" "$(pyenv_python "$version")"; do
      if [ -n "$candidate" ] && [ "$(version_of "$candidate")" = "$version" ]; then
        echo "$candidate"
        return
      fi
    done
  done
  echo "no supported Python found (python3 is $(version_of python3 || echo missing));" \
    "spinn_allennlp needs one of: $SUPPORTED. Install one and run e.g." \
    "PYTHON=python3.12 make setup" >&2
  return 1
}
PYTHON=$(find_python)
PYTHON_VERSION=$(version_of "$PYTHON")
if ! supported "$PYTHON_VERSION"; then
  echo "$PYTHON is Python ${PYTHON_VERSION:-?}; spinn_allennlp supports $SUPPORTED" \
    "(AllenNLP 2.10 and the locks are tested there). Choose one with PYTHON=..." >&2
  exit 1
fi
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
# What the environment was made from: the locks, setup.py, the interpreter and the torch choice.
want=$( (cat "${locks[@]}" setup.py; "$PYTHON" -c 'import sys; print(sys.version)'
  echo "${TORCH_INDEX_URL:+$TORCH_INDEX_URL $TORCH_VERSION}") | sha256sum | cut -c1-64)
stamp="$VENV/.spinn-lock-sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if [ -x "$VENV/bin/python" ] && [ "$(version_of "$VENV/bin/python")" != "$PYTHON_VERSION" ]; then
  if [ -f "$stamp" ]; then
    echo "$VENV was made with Python $(version_of "$VENV/bin/python"): making it again"
    rm -rf "$VENV"
  else
    echo "$VENV holds Python $(version_of "$VENV/bin/python"), not $PYTHON_VERSION, and was not" \
      "made by this script: remove it, or choose another with VENV=..." >&2
    exit 1
  fi
fi
echo "making $VENV with $PYTHON (Python $PYTHON_VERSION)"
"$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --disable-pip-version-check)
# --no-deps: the locks are complete and already resolved with overrides for allennlp's stale
# pins (requirements/overrides.txt); letting pip resolve again would reject them.
for lock in "${locks[@]}"; do
  if [ -n "$TORCH_INDEX_URL" ]; then
    # Without the lock's torch and the CUDA libraries it brings: the other build brings its own.
    grep -vE '^(torch|torchvision|nvidia-[a-z0-9-]+|cuda-[a-z-]+)==' "$lock" \
      > "$VENV/$(basename "$lock" .txt)-without-torch.txt"
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
