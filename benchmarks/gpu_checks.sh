#!/usr/bin/env bash
# Every GPU check in one run, in under 10 minutes on one H100/H200, so that any GPU a session is
# lent is spent measuring. Results, each step's log and a summary (card, torch version, commit,
# each step's status and time) go to benchmarks/results/gpu_checks/; when $OUT is set (the
# device tool's folder of files that come back), also as one archive there.
#
#   bash benchmarks/gpu_checks.sh                 # on the GPU machine
#   bash benchmarks/gpu_checks.sh --device cpu    # smoke mode: every step at toy sizes, here
#
# Steps (each under its own time limit, 600 s in all; one that fails or runs out is reported,
# and the rest still run):
#   1. the CUDA tests of tests/core (graphed against eager passes and gradients for every
#      policy, sampling from the seed, the graphs' memory, the policies on the device, and the
#      fused kernels compiled for the card against the PyTorch step loop);
#   2. encoding at batch 32, 128 and 512, D = 300 (benchmarks/encoding_speed.py): the
#      thin-stack PI-NT, SPINN-PI and the full SPINN on the PyTorch step loop (eager), on the
#      fused kernels (issue 80; on the CPU through Triton's interpreter), and replayed from CUDA
#      graphs (which replay the fused kernels where they implement the pass), against nn.LSTM;
#   3. the memory the graphs of an SNLI-sized model hold, per bucket;
#   4. whole SNLI training steps of the shipped configs, with and without CUDA graphs
#      (benchmarks/snli_training_speed.py; on CUDA the runner picker takes the fused kernels);
#   5. a ListOps epoch of the best latent-tree config (best-draw) and of straight-through
#      Gumbel, with and without CUDA graphs (benchmarks/listops_epoch_speed.py);
#   6. old code against new in one run (benchmarks/compare_versions.py), when a copy of the old
#      code is carried (--old).
# Steps 4 and 5 need AllenNLP, which the GPU machines lack: pass --site-tree with the archive
# scripts/pack_site_tree.sh makes for their Python (carried in an ignored folder); without it
# they are skipped and said to be pending.
#
# Old code: --old PATH, a copy of the code before issue 46 (default .old_code, made here by
#   mkdir -p .old_code && git archive 43892d6 spinn_allennlp benchmarks | tar -x -C .old_code
#   echo 43892d6 > .old_code/.commit
# and carried: echo /.old_code/ >> .git/info/exclude). The commit measured: $COMMIT, else the
# file .commit (write it here: git rev-parse --short HEAD > .commit), else git.
set -uo pipefail
cd "$(dirname "$0")/.."

DEVICE=cuda
OLD=.old_code
SITE_TREE=""
RESULTS=benchmarks/results/gpu_checks
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    --site-tree) SITE_TREE=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
COMMIT=${COMMIT:-$(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$RESULTS"
SUMMARY="$RESULTS/summary.md"

# Sizes: the issue's on a GPU; toy ones for the smoke mode on the CPU.
if [ "$DEVICE" = cuda ]; then
  # (The interpreter's module asks for TRITON_INTERPRET: not in the compiled kernels' process.)
  TESTS=(tests/core -k cuda --ignore=tests/core/test_fused_thin_stack.py)
  ENCODING=(--batch-sizes 512 --rounds 2 --repeats 3)
  FUSED=(--batch-sizes 32,128,512 --repeats 3)
  SNLI_BATCHES=20
  LISTOPS=(--batches 4)
else
  TESTS=(tests/core/test_cuda_graphs.py tests/core/test_static_shapes.py tests/core/test_buckets.py)
  ENCODING=(--batch-sizes 8 --rounds 1 --repeats 1)
  # Triton's interpreter runs the fused kernels on CPU tensors: a check that they run.
  FUSED=(--batch-sizes 4 --hidden 16 --max-len 8 --repeats 1)
  export TRITON_INTERPRET=1
  SNLI_BATCHES=2
  LISTOPS=(--batches 1 --train-data fixtures/classification/listops/sample.tsv)
fi

{
  echo "# GPU checks (issues 46 and 80)"
  echo
  echo "- commit: $COMMIT; device: $DEVICE; started $(date -u +%FT%TZ)"
  echo "- card: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo none)"
  echo "- $("$PYTHON" -c 'import sys, torch; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}")')"
  echo
  echo "| step | status | seconds |"
  echo "|---|---|---:|"
} > "$SUMMARY"

# run NAME LIMIT_SECONDS COMMAND...: the command under a time limit, its log kept.
run() {
  local name=$1 limit=$2
  shift 2
  local start status
  start=$(date +%s)
  echo "== $name (limit ${limit}s)"
  timeout "$limit" "$@" > "$RESULTS/$name.log" 2>&1
  status=$?
  tail -n 25 "$RESULTS/$name.log"
  case $status in
    0) status=passed ;;
    124) status="timed out" ;;
    *) status="failed ($status)" ;;
  esac
  echo "| $name | $status | $(( $(date +%s) - start )) |" >> "$SUMMARY"
}

skip() {
  echo "| $1 | skipped: $2 | 0 |" >> "$SUMMARY"
  echo "== $1 skipped: $2"
}

# 1. CUDA tests (on the CPU: the same files' CPU cases).
if [ "$DEVICE" = cuda ]; then
  # The compiled kernels (the suite's default is Triton's interpreter: tests/conftest.py).
  run tests 120 env TRITON_INTERPRET=0 "$PYTHON" -m pytest "${TESTS[@]}" -q -p no:cacheprovider -rs
else
  run tests 120 "$PYTHON" -m pytest "${TESTS[@]}" -q -p no:cacheprovider -rs
fi

# 2. Encoding: the PyTorch step loop, the fused kernels and CUDA graphs against nn.LSTM.
run fused_encoding 120 "$PYTHON" benchmarks/encoding_speed.py --device "$DEVICE" "${FUSED[@]}" \
  --fused --cuda-graphs --threads 1 --out "$RESULTS"

# 3. The memory CUDA graphs hold (an SNLI-sized SPINN, buckets of 64 sentences).
run graph_memory 60 "$PYTHON" - "$DEVICE" "$RESULTS/graph_memory.json" <<'EOF'
import json, random, sys, torch
from spinn_core.graphs import GraphedPasses
from spinn_core.policies import Given, Greedy
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch
device, path = sys.argv[1], sys.argv[2]
cuda = device == "cuda"
torch.manual_seed(0)
model = Spinn(300, 300, tracking_dim=79, predict_transitions=True).to(device)
passes = GraphedPasses(model, batch_size=64, capture=cuda)
rows = {}
for lengths in ([7] * 64, [15] * 64, [30] * 64):
    inputs, mask, transitions = make_batch(lengths, 300, random.Random(0), device)
    before = passes.memory_bytes
    out = passes(inputs, mask, transitions, Given())
    out.sentence.sum().backward()
    with torch.no_grad():
        passes(inputs, mask, None, Greedy())
    rows[f"N <= {max(lengths)}"] = (passes.memory_bytes - before) / 2**20
print(json.dumps({"MiB held by the graphs of each bucket (training + evaluation)": rows,
                  "captures": passes.captures, "eager": passes.eager}, indent=1))
json.dump({"device": device, "mib_per_bucket": rows, "captures": passes.captures}, open(path, "w"))
EOF

# AllenNLP for steps 4 and 5.
allennlp_ok=0
if [ -n "$SITE_TREE" ] && [ -f "$SITE_TREE" ]; then
  site=$(mktemp -d)
  tar -xJf "$SITE_TREE" -C "$site" && export PYTHONPATH="$PYTHONPATH:$site/site"
fi
if "$PYTHON" -c "import allennlp" 2>/dev/null; then allennlp_ok=1; fi

# 4. Whole SNLI training steps, with and without CUDA graphs.
if [ $allennlp_ok = 1 ]; then
  run snli_training 150 "$PYTHON" -W ignore benchmarks/snli_training_speed.py --device "$DEVICE" \
    --configs lstm,spinn_pi_nt,spinn_pi,spinn_pi:graphs,spinn,spinn:graphs \
    --batches "$SNLI_BATCHES" --out "$RESULTS"
else
  skip snli_training "AllenNLP not importable (pass --site-tree): pending"
fi

# 5. A ListOps epoch of the best latent-tree config, with and without CUDA graphs.
if [ $allennlp_ok = 1 ]; then
  if [ "$DEVICE" = cuda ] && [ ! -f data/listops/generated/train_d20s.tsv ]; then
    "$PYTHON" scripts/make_listops.py > "$RESULTS/make_listops.log" 2>&1
  fi
  run listops_epoch 60 "$PYTHON" -W ignore benchmarks/listops_epoch_speed.py --device "$DEVICE" \
    --configs spinn_best_draw,spinn_best_draw:graphs,spinn_gumbel,spinn_gumbel:graphs \
    "${LISTOPS[@]}" --out "$RESULTS"
else
  skip listops_epoch "AllenNLP not importable (pass --site-tree): pending"
fi

# 6. Old code against new, encoding at batch 512 (D = 300), in one run.
if [ -d "$OLD/spinn_allennlp" ]; then
  run versions 90 "$PYTHON" benchmarks/compare_versions.py --old "$OLD" --new . \
    --device "$DEVICE" "${ENCODING[@]}" --benchmarks encoding_speed \
    --new-args=--cuda-graphs --out "$RESULTS/versions"
else
  skip versions "no copy of the old code at $OLD"
fi

echo >> "$SUMMARY"
echo "Finished $(date -u +%FT%TZ). Logs and results: $RESULTS/." >> "$SUMMARY"
cat "$SUMMARY"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  tar -czf "$OUT/gpu_checks.tar.gz" "$RESULTS" && echo "archived to $OUT/gpu_checks.tar.gz"
fi
