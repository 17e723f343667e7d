#!/bin/bash
# ListOps far longer than training: evaluates each archive on the published test set (a check
# that the weights are the run's recorded best: its accuracy must equal the run's
# test_metrics.json) and on the three length bins of data/listops/lengths/, one thread each.
#
#   bash scripts/evaluate_listops_lengths.sh OUT RUN_DIR [RUN_DIR ...]
#
# RUN_DIR holds model.tar.gz; OUT gets <run>_<file>.json (allennlp evaluate's metrics) and
# times.txt (seconds per file). Files already there are kept (a cut-off call resumes).
set -euo pipefail
out=$1; shift
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
for run in "$@"; do
  name=$(basename "$run")
  for file in "$here"/data/listops/test_d20s.tsv.gz "$here"/data/listops/lengths/test_*.tsv.gz; do
    result="$out/${name}_$(basename "$file" .tsv.gz).json"
    [ -s "$result" ] && continue
    start=$(date +%s)
    OMP_NUM_THREADS=1 "$here/.venv/bin/allennlp" evaluate "$run/model.tar.gz" "$file" \
      --include-package spinn_allennlp --cuda-device -1 --output-file "$result" \
      > "${result%.json}.log" 2>&1
    echo "$name $(basename "$file" .tsv.gz) $(( $(date +%s) - start )) s" >> "$out/times.txt"
  done
done
