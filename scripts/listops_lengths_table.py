"""The length-generalization table of results/listops from the metrics that
`scripts/evaluate_listops_lengths.sh` writes: accuracy (and bracket F1 where the model parses)
on the published test set and on each length bin, one row per run.

    python scripts/listops_lengths_table.py results/listops/lengths
"""

import json
import sys
from pathlib import Path

FILES = ("test_d20s", "test_200_300", "test_500_600", "test_900_1000")
HEADER = ("test (10,000)", "200–300", "500–600", "900–1000")


def cell(path: Path) -> str:
    if not path.exists():
        return "—"
    metrics = json.loads(path.read_text())
    text = f"{100 * metrics['accuracy']:.1f}"
    if "bracket_f1" in metrics:
        text += f" (F1 {100 * metrics['bracket_f1']:.1f})"
    return text


def main(folder: Path) -> str:
    runs = sorted({p.name[: p.name.index("_test_")] for p in folder.glob("*_test_*.json")})
    rows = ["| run | " + " | ".join(HEADER) + " |", "|---|" + "---:|" * len(FILES)]
    for run in runs:
        cells = [cell(folder / f"{run}_{name}.json") for name in FILES]
        rows.append(f"| {run} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
