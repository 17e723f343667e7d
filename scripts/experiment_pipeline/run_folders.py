"""What a run folder holds (epochs, wall time, parameter counts) and `collect`, which copies its
small files into the repository."""

import json
import os
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import torch
from allennlp.models.archival import load_archive

import spinn_allennlp.plugin  # noqa: F401  (registers the plugin's classes, for archives)
from experiment_pipeline.common import read_json

# The small files `collect` copies: configuration, training and dev metrics (best epoch), test
# metrics (and other evaluations), wall time, the machine's load, the parameter count.
SMALL_FILES = (
    "config.json",
    "metrics.json",
    "test_metrics.json",
    "test_metrics_first2000.json",
    "test_metrics_discrete.json",
    "test_metrics_operator_last.json",
    "dev_metrics.json",
    "wall.json",
    "machine.json",
    "params.json",
)


# Written by `run` when it resumes a cut-off run: the seconds trained before the new process
# and the epoch it starts at (how `trained_seconds` counts past processes it cannot tell apart).
RESUMED = "resumed.json"


def trained_seconds(run: Path) -> float:
    """How long a cut-off run had trained, over every process that trained it (0 if none
    finished an epoch). Each epoch's metrics hold the `training_duration` of the process that
    ran it, counted from that process's start: within one process it grows from epoch to
    epoch, and it falls back where a `--recover` began a new one. So the total is the sum of
    each process's last value, after what `resumed.json` recorded at the last resumption (a
    process of one short epoch followed by a longer epoch leaves no fall to see). The epochs
    are the trainer's files, or a collected `epochs.json` (`collect --unfinished`)."""
    record = read_json(run / RESUMED) or {"seconds_before": 0.0, "from_epoch": 0}
    durations = [
        duration_seconds(metrics["training_duration"])
        for metrics in run_epochs(run)
        # Earlier epochs are counted in the record.
        if metrics["epoch"] >= record["from_epoch"] and "training_duration" in metrics
    ]
    ends = [d for d, after in zip(durations, durations[1:]) if after < d]
    return float(record["seconds_before"]) + sum(ends) + (durations[-1] if durations else 0.0)


def record_resumption(run: Path) -> float:
    """Before a cut-off run is resumed: writes `resumed.json` (the seconds trained so far, the
    first epoch the new process will run) and returns those seconds."""
    before = trained_seconds(run)
    epochs = [epoch for epoch, _ in epoch_paths(run)]
    record = {"seconds_before": round(before, 3), "from_epoch": max(epochs, default=-1) + 1}
    (run / RESUMED).write_text(json.dumps(record, indent=2) + "\n")
    return before


def repoint_best_weights(run: Path) -> List[str]:
    """
    Before a cut-off run is resumed: points each training state's `best_model_filename` at
    this folder's `best.th`, and returns the names of the states it rewrote. AllenNLP records
    the best weights by the path of the folder that trained them, so a run unpacked or copied
    into another folder, resumed with `--recover`, would end (when no resumed epoch is the
    best) by loading `best.th` from the old folder: a FileNotFoundError after the last epoch,
    or another run's weights if something else lives there now.
    """
    best = str(run.resolve() / "best.th")
    rewritten = []
    for path in sorted(run.glob("training_state_e*_b*.th")):
        # Our own trainer's file (its callbacks' states hold numpy random states, which
        # weights_only refuses).
        state = torch.load(path, map_location="cpu", weights_only=False)
        recorded = state.get("best_model_filename")
        if recorded is None or os.path.realpath(recorded) == best:
            continue
        state["best_model_filename"] = best
        partial = path.with_name(path.name + ".partial")
        torch.save(state, partial)
        partial.replace(path)  # a process cut off here leaves the old state whole
        rewritten.append(path.name)
    return rewritten


def duration_seconds(duration: str) -> float:
    """AllenNLP's `training_duration` ("H:MM:SS.ffffff") in seconds."""
    hours, minutes, seconds = duration.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def training_seconds(run: Path, metrics: Dict) -> float:
    """Wall time of training: `wall.json`'s `train_wall_seconds` where the earlier shell runners
    wrote one, else the trainer's own `training_duration` from `metrics`."""
    wall = read_json(run / "wall.json")
    if wall is not None:
        return float(wall["train_wall_seconds"])
    return duration_seconds(metrics["training_duration"])


def count_parameters(archive: Path) -> Dict[str, int]:
    """Trainable parameters of an archived model: all of them, and those outside the text
    field embedders (`_embedder` in the name)."""
    model = load_archive(archive).model
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    return {
        "trainable": sum(p.numel() for _, p in trainable),
        "trainable_excluding_embedder": sum(
            p.numel() for name, p in trainable if "_embedder" not in name
        ),
    }


def parameters(run: Path, key: str) -> int:
    """A run's parameter count `key` from its `params.json` (written by `collect`), else from
    its archive."""
    params = read_json(run / "params.json")
    if params is None:
        if not (run / "model.tar.gz").exists():
            raise FileNotFoundError(f"{run}: neither params.json nor model.tar.gz")
        params = count_parameters(run / "model.tar.gz")
    return params[key]


def epoch_paths(run: Path) -> List[Tuple[int, Path]]:
    """The trainer's `metrics_epoch_<N>.json` files of a run with their N, in epoch order."""
    numbered = [
        (int(path.stem.rsplit("_", 1)[1]), path) for path in run.glob("metrics_epoch_*.json")
    ]
    return sorted(numbered)


def epoch_files(run: Path) -> List[Dict]:
    """The trainer's `metrics_epoch_<N>.json` of a run, in epoch order."""
    return [json.loads(path.read_text()) for _, path in epoch_paths(run)]


def finished_runs(runs: Path) -> List[Path]:
    """Run folders with both metrics.json (training ended) and test_metrics.json, by name."""
    return sorted(
        run
        for run in runs.iterdir()
        if (run / "metrics.json").exists() and (run / "test_metrics.json").exists()
    )


def collect(runs: Path, dest: Path, unfinished: bool = False) -> List[str]:
    """
    Copies the small files (`SMALL_FILES`) of every run under `runs` that has a
    `test_metrics.json` to `dest/<run>/`, adds `params.json` (parameter counts, from the
    archive) where the run has none, and gathers the trainer's `metrics_epoch_*.json` into one
    `epochs.json` (a list, epoch order). Checkpoints, vocabularies and logs stay behind.
    With `unfinished`, runs that have finished an epoch but are not yet tested are copied too
    (with their epochs and `resumed.json`): the results page lists them as in progress
    (:func:`in_progress`), and their curves outlive the machine they train on.
    Returns the names of the runs copied.
    """
    copied = []
    for run in sorted(path for path in runs.iterdir() if path.is_dir()):
        started = epoch_paths(run) or (run / "metrics.json").exists()
        if not (run / "test_metrics.json").exists() and not (unfinished and started):
            continue
        target = dest / run.name
        target.mkdir(parents=True, exist_ok=True)
        for name in SMALL_FILES + (RESUMED,):
            if (run / name).exists():
                shutil.copyfile(run / name, target / name)
        if not (target / "params.json").exists() and (run / "model.tar.gz").exists():
            params = {**count_parameters(run / "model.tar.gz"), "source": "the run's archive"}
            (target / "params.json").write_text(json.dumps(params, indent=2) + "\n")
        epochs = epoch_files(run)
        if epochs:
            (target / "epochs.json").write_text(json.dumps(epochs, indent=1) + "\n")
        copied.append(run.name)
    return copied


def run_epochs(run: Path) -> List[Dict]:
    """A run's per-epoch metrics: its collected `epochs.json`, else the trainer's files."""
    collected = read_json(run / "epochs.json")
    return collected if collected is not None else epoch_files(run)
