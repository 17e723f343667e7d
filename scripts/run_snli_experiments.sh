#!/usr/bin/env bash
# Trains the paper's four variants on the bundled SNLI 1% train subset (model selection on
# dev), then evaluates each selected model once on test. Results land in runs/<variant>/.
#   scripts/run_snli_experiments.sh [variant ...]     (default: all four)
# NUM_EPOCHS (default 6) caps training; THREADS (default 1) is torch's thread count per run.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s setup
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(lstm spinn_pi_nt spinn_pi spinn)
for variant in "${variants[@]}"; do
  out=runs/$variant
  start=$(date +%s)
  OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp train "training_config/$variant.jsonnet" \
    -s "$out" -f --include-package spinn_allennlp \
    --overrides "{\"trainer.num_epochs\": ${NUM_EPOCHS:-6}}" > "runs/$variant.train.log" 2>&1
  end=$(date +%s)
  OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp evaluate "$out/model.tar.gz" \
    data/snli/snli_1.0_test.jsonl.gz --output-file "$out/test_metrics.json" \
    --include-package spinn_allennlp > "runs/$variant.test.log" 2>&1
  echo "{\"train_wall_seconds\": $((end - start)), \"threads\": ${THREADS:-1}, \"host_cpus\": $(nproc)}" \
    > "$out/wall.json"
  echo "$variant done in $((end - start)) s"
done
