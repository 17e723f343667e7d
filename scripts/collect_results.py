"""Copies the small files of finished runs into the repository, so that every number the README
reports can be checked: for each run folder under RUNS that has a ``test_metrics.json``, its
``config.json``, ``metrics.json`` (training and dev, best epoch), ``test_metrics.json``,
``wall.json`` (wall time, threads, commit), ``dev_metrics.json`` and other test evaluations
(``test_metrics_*.json`` of this list) where present go to
``DEST/<run>/``. Checkpoints, vocabularies and logs stay behind.

    .venv/bin/python scripts/collect_results.py /path/to/runs results/snli [--note "..."]

``--note`` is written to ``DEST/README.md`` (where the runs came from: command, machine, commit).
"""

import argparse
import shutil
from pathlib import Path

SMALL_FILES = (
    "config.json",
    "metrics.json",
    "test_metrics.json",
    "test_metrics_first2000.json",
    "test_metrics_discrete.json",
    "dev_metrics.json",
    "wall.json",
)


def collect(runs: Path, dest: Path) -> list:
    copied = []
    for run in sorted(path for path in runs.iterdir() if path.is_dir()):
        if not (run / "test_metrics.json").exists():
            continue
        (dest / run.name).mkdir(parents=True, exist_ok=True)
        for name in SMALL_FILES:
            if (run / name).exists():
                shutil.copyfile(run / name, dest / run.name / name)
        copied.append(run.name)
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--note", default=None, help="text for DEST/README.md")
    args = parser.parse_args()
    copied = collect(args.runs, args.dest)
    if args.note:
        (args.dest / "README.md").write_text(args.note.strip() + "\n")
    print(f"{len(copied)} runs -> {args.dest}: {', '.join(copied)}")


if __name__ == "__main__":
    main()
