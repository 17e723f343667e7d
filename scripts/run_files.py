"""What the summary scripts read from a run folder, shared by them (imported as `run_files`:
the scripts folder is on `sys.path` when a script in it runs)."""

import json
from pathlib import Path
from typing import Dict


def duration_seconds(duration: str) -> float:
    """AllenNLP's `training_duration` ("H:MM:SS.ffffff") in seconds."""
    hours, minutes, seconds = duration.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def training_seconds(run: Path, metrics: Dict) -> float:
    """Wall time of training: `wall.json`'s `train_wall_seconds` where the shell runners
    (scripts/run_snli_experiments.sh, run_listops_experiments.sh) wrote one, else the trainer's
    own `training_duration` from `metrics` (runs made by scripts/run_experiments.py)."""
    wall = run / "wall.json"
    if wall.exists():
        return float(json.loads(wall.read_text())["train_wall_seconds"])
    return duration_seconds(metrics["training_duration"])
