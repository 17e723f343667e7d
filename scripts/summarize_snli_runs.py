"""Prints the README's SNLI results tables from $RUNS/<variant>[_seed<N>]/
(scripts/run_snli_experiments.sh).

.venv/bin/python scripts/summarize_snli_runs.py [runs]
"""

import json
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional

from allennlp.models.archival import load_archive
from run_files import training_seconds

import spinn_allennlp  # noqa: F401  (registers the plugin's classes)

NAMES = {
    "lstm": "LSTM RNN",
    "spinn_pi_nt": "SPINN-PI-NT",
    "spinn_pi": "SPINN-PI",
    "spinn": "SPINN (own parser at test)",
    "spinn_model2": "Model 2: own transitions (scheduled)",
    "spinn_model3": "Model 3: soft stack, supervised",
    "spinn_model4": "Model 4: soft stack, latent trees",
    "spinn_typed": "SPINN, typed REDUCE",
}
# Chen et al. (2017); "him" is made from the esim and tree_esim runs of the same seed.
ATTENTION_NAMES = {
    "esim": "ESIM",
    "tree_esim": "syntactic tree-LSTM",
    "him": "HIM (ESIM + tree, probabilities averaged)",
}


def percent(value):
    return "—" if value is None else f"{100 * value:.1f}"


def runs_of(runs: Path, variant: str) -> List[Path]:
    """The run folders of a variant: the configs' seeds first, then _seed<N> in order."""
    seeded = sorted(runs.glob(f"{variant}_seed*"), key=lambda p: int(p.name.split("seed")[-1]))
    return [run for run in [runs / variant, *seeded] if (run / "test_metrics.json").exists()]


def parameters(run: Path) -> int:
    model = load_archive(run / "model.tar.gz").model
    return sum(
        p.numel() for n, p in model.named_parameters() if p.requires_grad and "_embedder" not in n
    )


def read_json(path: Path) -> Optional[Dict]:
    return json.loads(path.read_text()) if path.exists() else None


def bracket_f1(test: Dict) -> str:
    """Unlabeled bracket F1, and the labeled one for typed REDUCE."""
    cell = percent(test.get("bracket_f1"))
    if "labeled_bracket_f1" in test:
        cell += f" (labeled {percent(test['labeled_bracket_f1'])})"
    return cell


def spinn_table(runs: Path) -> None:
    """One row per run (the configs' seeds, then each _seed<N>), then each model's mean and
    spread over its runs."""
    print(
        "| model | seed | params (excl. embeddings) | best epoch | dev acc. | test acc. | "
        "test trans. acc. | test tree acc. | test valid trees | test bracket F1 | "
        "train wall time |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    test_accuracies: Dict[str, List[float]] = {}
    for variant, name in NAMES.items():
        for run in runs_of(runs, variant):
            if not (run / "metrics.json").exists():
                continue
            seed = run.name.split("_seed")[1] if "_seed" in run.name else "config's"
            metrics = json.loads((run / "metrics.json").read_text())
            test = json.loads((run / "test_metrics.json").read_text())
            test_accuracies.setdefault(name, []).append(test["accuracy"])
            print(
                f"| {name} | {seed} | {parameters(run) / 1e6:.2f}M | {metrics['best_epoch']} | "
                f"{percent(metrics['best_validation_accuracy'])} | {percent(test['accuracy'])} | "
                f"{percent(test.get('transition_accuracy'))} | "
                f"{percent(test.get('tree_accuracy'))} | "
                f"{percent(test.get('valid_tree_rate'))} | {bracket_f1(test)} | "
                f"{training_seconds(run, metrics) / 60:.1f} min ({metrics['epoch'] + 1} epochs) |"
            )
    print()
    print("| model | runs | test acc. mean | standard deviation | min – max |")
    print("|---|---:|---:|---:|---:|")
    for name, values in test_accuracies.items():
        spread = percent(statistics.stdev(values)) if len(values) > 1 else "—"
        print(
            f"| {name} | {len(values)} | {percent(statistics.mean(values))} | {spread} | "
            f"{percent(min(values))} – {percent(max(values))} |"
        )


def attention_table(runs: Path) -> None:
    print(
        "| model | seed | params (excl. embeddings) | best epoch | dev acc. | test acc. | "
        "test: ESIM / tree / either right | train wall time |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    test_accuracies: Dict[str, List[float]] = {}
    for variant, name in ATTENTION_NAMES.items():
        for run in runs_of(runs, variant):
            seed = run.name.split("_seed")[1] if "_seed" in run.name else "config's"
            test = json.loads((run / "test_metrics.json").read_text())
            test_accuracies.setdefault(name, []).append(test["accuracy"])
            metrics = read_json(run / "metrics.json")
            if variant == "him":
                dev = read_json(run / "dev_metrics.json")
                epoch, dev_accuracy, time = "—", dev and dev["accuracy"], "(members')"
                members = " / ".join(
                    percent(test[key])
                    for key in ("esim_accuracy", "tree_accuracy", "oracle_accuracy")
                )
            else:
                assert metrics is not None
                epoch = metrics["best_epoch"]
                dev_accuracy = metrics["best_validation_accuracy"]
                minutes = training_seconds(run, metrics) / 60
                time = f"{minutes:.1f} min ({metrics['epoch'] + 1} epochs)"
                members = "—"
            print(
                f"| {name} | {seed} | {parameters(run) / 1e6:.2f}M | {epoch} | "
                f"{percent(dev_accuracy)} | {percent(test['accuracy'])} | {members} | {time} |"
            )
    print()
    print("| model | runs | test acc. mean | min – max |")
    print("|---|---:|---:|---:|")
    for name, values in test_accuracies.items():
        print(
            f"| {name} | {len(values)} | {percent(statistics.mean(values))} | "
            f"{percent(min(values))} – {percent(max(values))} |"
        )


def main(runs: Path) -> None:
    if any(runs_of(runs, variant) for variant in NAMES):
        spinn_table(runs)
        print()
    if any(runs_of(runs, variant) for variant in ATTENTION_NAMES):
        attention_table(runs)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs"))
