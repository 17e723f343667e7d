"""Prints the README's ListOps table from <runs>/<variant>/ (scripts/run_listops_experiments.sh)
and the bracket F1 of fixed tree shapes against the gold test trees, for reference.

.venv/bin/python scripts/summarize_listops_runs.py [runs/listops] [--json out.json]
"""

import argparse
import gzip
import json
from pathlib import Path

from allennlp.models.archival import load_archive
from run_files import training_seconds

import spinn_allennlp  # noqa: F401  (registers the plugin's classes)
from spinn_allennlp.core.transitions import (
    balanced_transitions,
    bracket_f1,
    left_branching_transitions,
    parse_to_transitions,
    right_branching_transitions,
)

NAMES = {
    "lstm": "LSTM",
    "spinn_pi_nt": "SPINN-PI-NT, gold trees (Model 0)",
    "spinn_pi_nt_balanced": "SPINN-PI-NT, balanced trees",
    "spinn": "full SPINN (Model 1)",
    "spinn_model2": "Model 2 (own transitions, scheduled)",
    "spinn_model2_from_model1": "Model 2 from Model 1",
    "spinn_model3": "Model 3 (soft stack, supervised)",
    "spinn_model4": "Model 4 (soft stack, latent trees)",
    "spinn_model3_e20": "Model 3, up to 20 epochs",
    "spinn_model4_e20": "Model 4, up to 20 epochs",
    "spinn_summaries": "Model 1 + stack/buffer summaries",
}
TEST = Path("data/listops/test_d20s.tsv.gz")


def percent(value):
    return "—" if value is None else f"{100 * value:.1f}"


def fixed_tree_f1():
    """Mean sentence bracket F1 of balanced / left- / right-branching trees on the test set."""
    shapes = {
        "balanced": balanced_transitions,
        "left-branching": left_branching_transitions,
        "right-branching": right_branching_transitions,
    }
    sums = {name: [0.0, 0] for name in shapes}
    with gzip.open(TEST, "rt", encoding="utf-8") as lines:
        for line in lines:
            tokens, gold = parse_to_transitions(line.rstrip("\n").split("\t")[1])
            for name, shape in shapes.items():
                f1 = bracket_f1(shape(len(tokens)), gold)
                if f1 is not None:
                    sums[name][0] += f1
                    sums[name][1] += 1
    return {name: total / count for name, (total, count) in sums.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="?", default="runs/listops")
    parser.add_argument("--json")
    args = parser.parse_args()
    runs = Path(args.runs)
    rows = {}
    print(
        "| model | params | epochs (best) | dev acc. | test acc. | test bracket F1 | "
        "test transition acc. | train wall time |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant, name in NAMES.items():
        run = runs / variant
        if not (run / "test_metrics.json").exists():
            continue
        metrics = json.loads((run / "metrics.json").read_text())
        test = json.loads((run / "test_metrics.json").read_text())
        train_seconds = training_seconds(run, metrics)
        model = load_archive(run / "model.tar.gz").model
        params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        epochs = metrics["epoch"] + 1
        rows[variant] = {
            "params": params,
            "epochs": epochs,
            "best_epoch": metrics["best_epoch"],
            "dev_accuracy": metrics["best_validation_accuracy"],
            "test": test,
            "train_wall_seconds": train_seconds,
        }
        print(
            f"| {name} | {params / 1e3:.0f}k | {epochs} ({metrics['best_epoch'] + 1}) | "
            f"{percent(metrics['best_validation_accuracy'])} | {percent(test['accuracy'])} | "
            f"{percent(test.get('bracket_f1'))} | {percent(test.get('transition_accuracy'))} | "
            f"{train_seconds / 60:.0f} min |"
        )
    shapes = fixed_tree_f1()
    print()
    print(
        "Bracket F1 of fixed trees against the gold test trees: "
        + ", ".join(f"{name} {percent(f1)}" for name, f1 in shapes.items())
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": rows, "fixed_tree_f1": shapes}, indent=1))


if __name__ == "__main__":
    main()
