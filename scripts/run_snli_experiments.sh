#!/usr/bin/env bash
# Trains SNLI models on the bundled SNLI 1% train subset (model selection on dev), then
# evaluates each selected model once on test. Results land in $RUNS/<variant>/ (RUNS: default
# runs). A variant is a config in training_config/pair_classification/.
#   scripts/run_snli_experiments.sh [variant ...]     (default: the SPINN paper's four)
#   scripts/run_snli_experiments.sh esim tree_esim him   (Chen et al. 2017; him combines the
#                                                        esim and tree_esim runs)
# NUM_EPOCHS (default 6) caps training; THREADS (default 1) is torch's thread count per run;
# SEED (default: the configs' seeds) sets random_seed, numpy_seed and pytorch_seed, and the
# results go to $RUNS/<variant>_seed$SEED/.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s setup
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(lstm spinn_pi_nt spinn_pi spinn)
runs=${RUNS:-runs}
mkdir -p "$runs"
overrides="\"trainer.num_epochs\": ${NUM_EPOCHS:-6}"
if [ -n "${SEED:-}" ]; then
  overrides+=", \"random_seed\": $SEED, \"numpy_seed\": $SEED, \"pytorch_seed\": $SEED"
fi
for variant in "${variants[@]}"; do
  name=$variant${SEED:+_seed$SEED}
  out=$runs/$name
  start=$(date +%s)
  if [ "$variant" = him ]; then
    # HIM as Chen et al. built it: the esim and tree_esim runs of the same seed (run them
    # first), probabilities averaged; no training of its own. Evaluated on dev as well.
    mkdir -p "$out"
    OMP_NUM_THREADS=${THREADS:-1} .venv/bin/python scripts/make_him_archive.py \
      "esim=$runs/esim${SEED:+_seed$SEED}/model.tar.gz" \
      "tree=$runs/tree_esim${SEED:+_seed$SEED}/model.tar.gz" \
      -o "$out/model.tar.gz" > "$runs/$name.train.log" 2>&1
    OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp evaluate "$out/model.tar.gz" \
      data/snli/snli_1.0_dev.jsonl.gz --output-file "$out/dev_metrics.json" \
      --include-package spinn_allennlp >> "$runs/$name.train.log" 2>&1
  else
    OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp train \
      "training_config/pair_classification/$variant.jsonnet" \
      -s "$out" -f --include-package spinn_allennlp \
      --overrides "{$overrides}" > "$runs/$name.train.log" 2>&1
  fi
  end=$(date +%s)
  OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp evaluate "$out/model.tar.gz" \
    data/snli/snli_1.0_test.jsonl.gz --output-file "$out/test_metrics.json" \
    --include-package spinn_allennlp > "$runs/$name.test.log" 2>&1
  echo "{\"train_wall_seconds\": $((end - start)), \"threads\": ${THREADS:-1}, \"host_cpus\": $(nproc)}" \
    > "$out/wall.json"
  echo "$name done in $((end - start)) s"
done
