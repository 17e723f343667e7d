"""Writes job lists for scripts/run_experiments.py: the shipped SST or SICK configs, one line
per (setting, encoder, tree source, seed), seeds set through AllenNLP's three seeds.

    .venv/bin/python scripts/tree_experiment_jobs.py sst --encoders spinn_pi_nt,lstm \
        --settings fine,binary --seeds 1,2,3 > jobs.tsv
    .venv/bin/python scripts/tree_experiment_jobs.py sick --encoders spinn_pi_nt,child_sum \
        --tree-sources balanced,right_branching --seeds 1,2,3 > jobs.tsv

Run names: `<setting>_<encoder>_s<seed>` (SST), `<encoder>_<tree source>_s<seed>` (SICK;
`sick_entailment` for the NLI model on SICK-E).
"""

import argparse
import json
from typing import Dict

SICK_ENTAILMENT = "training_config/pair_classification/sick_entailment_spinn_pi_nt.jsonnet"


def seeds(seed: int) -> Dict[str, int]:
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=["sst", "sick"])
    parser.add_argument("--encoders", default="spinn_pi_nt")
    parser.add_argument("--settings", default="fine,binary", help="SST: fine, binary")
    parser.add_argument("--tree-sources", default="balanced", help="SICK: registered names")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--extra", default="{}", help="overrides (JSON) added to every job")
    args = parser.parse_args()
    extra = json.loads(args.extra)
    for seed in (int(s) for s in args.seeds.split(",")):
        for encoder in args.encoders.split(","):
            if args.task == "sst":
                for setting in args.settings.split(","):
                    config = f"training_config/classification/sst_{setting}_{encoder}.jsonnet"
                    overrides = {**seeds(seed), **extra}
                    print(f"{setting}_{encoder}_s{seed}\t{config}\t{json.dumps(overrides)}")
            else:
                for source in args.tree_sources.split(","):
                    if encoder == "sick_entailment":
                        config = SICK_ENTAILMENT
                    else:
                        config = f"training_config/relatedness/sick_{encoder}.jsonnet"
                    overrides = {**seeds(seed), "dataset_reader.tree_source": {"type": source}}
                    overrides.update(extra)
                    print(f"{encoder}_{source}_s{seed}\t{config}\t{json.dumps(overrides)}")


if __name__ == "__main__":
    main()
