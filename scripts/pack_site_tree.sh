#!/usr/bin/env bash
# Packs the run-time dependencies (requirements/lock.txt) that a machine without a package index
# lacks, for another Python version, as one archive of an unpacked site tree: how AllenNLP went
# to the GPU machines (docs/speed.md). There, with the checkout as the working directory:
#   mkdir -p site && tar -xJf site.tar.xz -C site && export PYTHONPATH=$PWD:$PWD/site/site
#   python3 -m allennlp train ... --include-package spinn_allennlp
#
#   PYTHON=python3.12 scripts/pack_site_tree.sh OUT.tar.xz [SKIP_FILE]
# PYTHON: an interpreter of the target's version (it builds the lock's source-only packages).
# SKIP_FILE: names the target already has, one per line (default: torch, torchvision, and the
# packages of the GPU machines' image that AllenNLP 2.10 accepts at the version there).
# The wheels are the lock's manylinux x86_64 builds; the shared libraries' debug symbols are
# stripped (spacy, blis and jsonnet shrink from 200 to 35 MB), which changes no code.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
PYTHON=${PYTHON:-python3}
version=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
tag=${version/./}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${2:-}" ]; then
  cp "$2" "$work/skip"
else
  printf '%s\n' torch torchvision annotated-doc anyio certifi charset-normalizer click \
    cloudpickle filelock fsspec h11 h5py httpcore httpx idna iniconfig jinja2 joblib markupsafe \
    mpmath narwhals networkx numpy packaging pillow pluggy protobuf psutil pygments pytest \
    python-dateutil pyyaml regex requests rich safetensors scikit-learn scipy sentencepiece \
    setuptools shellingham six sympy threadpoolctl tqdm typer typing-extensions urllib3 wrapt \
    >"$work/skip"
fi
# Not imported by `allennlp` commands or this package (wandb's callback is never loaded).
printf '%s\n' wandb sentry-sdk gitpython gitdb smmap docker-pycreds setproctitle shortuuid \
  pathtools promise >>"$work/skip"
grep -E '^[A-Za-z0-9_.-]+==' requirements/lock.txt | grep -viE "^($(paste -sd'|' "$work/skip"))==" \
  >"$work/wanted"
mkdir "$work/wheels"
while read -r spec; do
  # A manylinux wheel for the target when there is one, else a wheel built here from source
  # (the source-only ones are pure Python: fairscale, termcolor, benepar).
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$version" \
    --implementation cp --abi "cp$tag" --abi abi3 --abi none \
    $(for n in 1 2010 2014 _2_17 _2_24 _2_27 _2_28 _2_31 _2_34; do
        echo --platform "manylinux${n}_x86_64"; done) \
    -d "$work/wheels" "$spec" 2>/dev/null ||
    "$PYTHON" -m pip wheel -q --no-deps -w "$work/wheels" "$spec"
done <"$work/wanted"
"$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$work/site" \
  "$work"/wheels/*.whl
find "$work/site" -name '*.so' -exec strip --strip-debug {} +
find "$work/site" -name __pycache__ -prune -exec rm -rf {} +
tar -cJf "$out" -C "$work" site
echo "$(wc -l <"$work/wanted") packages -> $out ($(du -h "$out" | cut -f1))"
