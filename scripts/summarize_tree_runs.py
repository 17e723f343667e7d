"""Tables of the SST and SICK runs made by scripts/run_experiments.py: one row per model, the
mean and standard deviation over its seeds (runs named `<row>_s<seed>`), each seed's value,
the selection metric on the validation set, epochs and wall time.

    .venv/bin/python scripts/summarize_tree_runs.py RUNS_DIR [--task sst|sick] [--json OUT]
"""

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

from run_files import duration_seconds

COLUMNS = {
    "sst": [
        ("root_accuracy", "test root acc.", 100),
        ("phrase_accuracy", "test all-phrase acc.", 100),
    ],
    "sick": [
        ("pearson", "test Pearson r", 1),
        ("spearman", "test Spearman ρ", 1),
        ("mse", "test MSE", 1),
    ],
}
VALIDATION = {"sst": ("root_accuracy", 100), "sick": ("pearson", 1)}


def cell(values: List[float], scale: float) -> str:
    digits = 1 if scale == 100 else 4
    scaled = [v * scale for v in values]
    if len(scaled) == 1:
        return f"{scaled[0]:.{digits}f}"
    spread = statistics.stdev(scaled)
    return f"{statistics.mean(scaled):.{digits}f} ± {spread:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--task", default="sst", choices=sorted(COLUMNS))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    groups: Dict[str, List[Path]] = defaultdict(list)
    for run in sorted(args.runs.iterdir()):
        if (run / "test_metrics.json").exists() and (run / "metrics.json").exists():
            groups[re.sub(r"_s\d+$", "", run.name)].append(run)

    columns = COLUMNS[args.task]
    validation_key, validation_scale = VALIDATION[args.task]
    header = ["run", "seeds"] + [title for _, title, _ in columns]
    header += [
        f"dev {validation_key}",
        "per seed (first test column)",
        "best epoch",
        "wall time / run",
    ]
    rows = []
    summary = {}
    for name, runs in groups.items():
        tests = [json.loads((run / "test_metrics.json").read_text()) for run in runs]
        trains = [json.loads((run / "metrics.json").read_text()) for run in runs]
        first_key, _, first_scale = columns[0]
        digits = 1 if first_scale == 100 else 4
        row = [name, str(len(runs))]
        # A metric the model has not (the LSTM baselines label only the root): "—".
        row += [
            cell([t[key] for t in tests], scale) if all(key in t for t in tests) else "—"
            for key, _, scale in columns
        ]
        row.append(cell([m[f"best_validation_{validation_key}"] for m in trains], validation_scale))
        row.append(" / ".join(f"{t[first_key] * first_scale:.{digits}f}" for t in tests))
        row.append(", ".join(str(m["best_epoch"] + 1) for m in trains))
        minutes = statistics.mean(duration_seconds(m["training_duration"]) for m in trains) / 60
        row.append(f"{minutes:.0f} min")
        rows.append(row)
        summary[name] = {
            "runs": [run.name for run in runs],
            "test": tests,
            "best_validation": [m[f"best_validation_{validation_key}"] for m in trains],
            "best_epoch": [m["best_epoch"] for m in trains],
            "training_seconds": [duration_seconds(m["training_duration"]) for m in trains],
        }
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
