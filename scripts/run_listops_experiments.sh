#!/usr/bin/env bash
# Trains ListOps variants on our generated data (model selection on the generated dev set),
# then evaluates each selected model once on the published test set. Results: $RUNS/<variant>/.
#   scripts/run_listops_experiments.sh [variant ...]   (default: the seven of the README table;
#   spinn_model2_from_model1 also needs MODEL1_ARCHIVE=<a Model 1 model.tar.gz>)
# TRAIN_SIZE (default 40000) training lines read; NUM_EPOCHS (default 6) cap; THREADS (default 1);
# RUNS (default runs/listops); OVERRIDES (JSON, merged last) for anything else.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s setup
[ -f data/listops/generated/train_d20s.tsv ] || .venv/bin/python scripts/make_listops.py
runs=${RUNS:-runs/listops}
mkdir -p "$runs"
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(lstm spinn_pi_nt spinn_pi_nt_balanced spinn spinn_model2 spinn_model3 spinn_model4)
for variant in "${variants[@]}"; do
  out=$runs/$variant
  overrides="{\"dataset_reader.max_instances\": ${TRAIN_SIZE:-40000}, \"trainer.num_epochs\": ${NUM_EPOCHS:-6}}"
  if [ -n "${OVERRIDES:-}" ]; then
    overrides=$(.venv/bin/python -c 'import json,sys; a=json.loads(sys.argv[1]); a.update(json.loads(sys.argv[2])); print(json.dumps(a))' "$overrides" "$OVERRIDES")
  fi
  start=$(date +%s)
  OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp train "training_config/classification/listops_$variant.jsonnet" \
    -s "$out" -f --include-package spinn_allennlp --overrides "$overrides" > "$runs/$variant.train.log" 2>&1
  end=$(date +%s)
  OMP_NUM_THREADS=${THREADS:-1} .venv/bin/allennlp evaluate "$out/model.tar.gz" \
    data/listops/test_d20s.tsv.gz --output-file "$out/test_metrics.json" \
    --include-package spinn_allennlp > "$runs/$variant.test.log" 2>&1
  echo "{\"train_wall_seconds\": $((end - start)), \"threads\": ${THREADS:-1}, \"host_cpus\": $(nproc), \"train_size\": ${TRAIN_SIZE:-40000}, \"commit\": \"$(git rev-parse --short HEAD)\"}" \
    > "$out/wall.json"
  echo "$variant done in $((end - start)) s"
done
