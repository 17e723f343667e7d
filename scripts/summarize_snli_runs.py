"""Prints the README's SNLI results table from runs/<variant>/ (scripts/run_snli_experiments.sh).

.venv/bin/python scripts/summarize_snli_runs.py [runs]
"""

import json
import sys
from pathlib import Path

from allennlp.models.archival import load_archive

import spinn_allennlp  # noqa: F401  (registers the plugin's classes)

NAMES = {
    "lstm": "LSTM RNN",
    "spinn_pi_nt": "SPINN-PI-NT",
    "spinn_pi": "SPINN-PI",
    "spinn": "SPINN (own parser at test)",
}


def percent(value):
    return "—" if value is None else f"{100 * value:.1f}"


def main(runs: Path) -> None:
    print(
        "| model | params (excl. embeddings) | best epoch | dev acc. | test acc. | "
        "test trans. acc. | test tree acc. | test valid trees | train wall time |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for variant, name in NAMES.items():
        run = runs / variant
        if not (run / "metrics.json").exists():
            print(f"| {name} | (not run) |||||||")
            continue
        metrics = json.loads((run / "metrics.json").read_text())
        test = json.loads((run / "test_metrics.json").read_text())
        wall = json.loads((run / "wall.json").read_text())
        model = load_archive(run / "model.tar.gz").model
        params = sum(
            p.numel()
            for n, p in model.named_parameters()
            if p.requires_grad and "_embedder" not in n
        )
        print(
            f"| {name} | {params / 1e6:.2f}M | {metrics['best_epoch']} | "
            f"{percent(metrics['best_validation_accuracy'])} | {percent(test['accuracy'])} | "
            f"{percent(test.get('transition_accuracy'))} | {percent(test.get('tree_accuracy'))} | "
            f"{percent(test.get('valid_tree_rate'))} | "
            f"{wall['train_wall_seconds'] / 60:.1f} min ({metrics['epoch'] + 1} epochs) |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs"))
