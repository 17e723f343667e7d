"""`jobs`: the job list, one line per run (`name<TAB>config<TAB>overrides`), and reading it back."""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from experiment_pipeline.common import Job

# The models each task's job list has by default (config names, or encoders for SST and SICK).
DEFAULT_MODELS = {
    "snli": "lstm,spinn_pi_nt,spinn_pi,spinn",
    "snli_attention": "esim,tree_esim",
    "sst": "spinn_pi_nt",
    "sick": "spinn_pi_nt",
    "listops": "lstm,spinn_pi_nt,spinn_pi_nt_balanced,spinn,spinn_model2,spinn_model3,spinn_model4",
}


SICK_ENTAILMENT = "training_config/pair_classification/sick_entailment_spinn_pi_nt.jsonnet"


def seed_overrides(seed: int) -> Dict[str, int]:
    """AllenNLP's three seeds, all set to `seed`."""
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def job_lines(
    task: str,
    models: Sequence[str],
    seeds: Sequence[Optional[int]],
    settings: Sequence[str] = ("fine", "binary"),
    tree_sources: Sequence[str] = ("balanced",),
    extra: Optional[Dict] = None,
) -> List[str]:
    """
    The job list of a task, one `name<TAB>config<TAB>overrides` line per run. A seed of `None`
    keeps the config's own seeds. Run names are what `summarize` groups by:

    - snli, snli_attention: `<model>` (the config's seeds) or `<model>_seed<N>`; config
      `training_config/pair_classification/<model>.jsonnet`.
    - listops: `<model>` or `<model>_s<N>`; config
      `training_config/classification/listops_<model>.jsonnet`.
    - sst: `<setting>_<encoder>_s<N>`; config
      `training_config/classification/sst_<setting>_<encoder>.jsonnet`.
    - sick: `<encoder>_<tree source>_s<N>`; config
      `training_config/relatedness/sick_<encoder>.jsonnet` (`sick_entailment`: the NLI model
      on SICK-E), the tree source set on the reader.

    `extra` (overrides) is added to every job last.
    """
    lines = []
    for seed in seeds:
        overrides: Dict[str, Any] = {} if seed is None else seed_overrides(seed)
        suffix = "" if seed is None else f"_s{seed}"
        for model in models:
            runs: List[Tuple[str, str, Dict]] = []
            if task in ("snli", "snli_attention"):
                name = model if seed is None else f"{model}_seed{seed}"
                config = f"training_config/pair_classification/{model}.jsonnet"
                runs.append((name, config, dict(overrides)))
            elif task == "listops":
                name = model + suffix
                config = f"training_config/classification/listops_{model}.jsonnet"
                runs.append((name, config, dict(overrides)))
            elif task == "sst":
                for setting in settings:
                    name = f"{setting}_{model}{suffix}"
                    config = f"training_config/classification/sst_{setting}_{model}.jsonnet"
                    runs.append((name, config, dict(overrides)))
            elif task == "sick":
                for source in tree_sources:
                    name = f"{model}_{source}{suffix}"
                    if model == "sick_entailment":
                        config = SICK_ENTAILMENT
                    else:
                        config = f"training_config/relatedness/sick_{model}.jsonnet"
                    source_override = {"dataset_reader.tree_source": {"type": source}}
                    runs.append((name, config, {**overrides, **source_override}))
            else:
                raise ValueError(f"no job list for task {task!r}")
            for name, config, job_overrides in runs:
                job_overrides.update(extra or {})
                lines.append(f"{name}\t{config}\t{json.dumps(job_overrides)}")
    return lines


def read_jobs(path: Path) -> List[Job]:
    """The jobs of a job list: `name<TAB>config<TAB>overrides` lines (overrides: a JSON object,
    may be left out); empty lines and lines starting with `#` are skipped."""
    jobs = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, config, *rest = line.split("\t")
        overrides = json.loads(rest[0]) if rest and rest[0].strip() else {}
        jobs.append((name, config, overrides))
    return jobs


def parse_seeds(text: str) -> List[Optional[int]]:
    """`1,2,3` -> [1, 2, 3]; `config` (alone or in the list) keeps the config's seeds."""
    return [None if seed == "config" else int(seed) for seed in text.split(",")]
