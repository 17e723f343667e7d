"""`pack` / `unpack`: a run cut off by the end of a machine carried to the next one."""

import filecmp
import re
import tarfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from experiment_pipeline.common import read_json
from experiment_pipeline.run_folders import RESUMED, epoch_paths

CHECKPOINT = re.compile(r"(model|training)_state_e(\d+)_b(\d+)\.th$")


def latest_checkpoint(run: Path) -> Optional[Tuple[int, int]]:
    """(epochs, batches) of the run's latest checkpoint that has both its model and its training
    state, or None."""
    found: Dict[Tuple[int, int], set] = defaultdict(set)
    for path in run.glob("*_state_e*_b*.th"):
        match = CHECKPOINT.match(path.name)
        if match:
            found[(int(match[2]), int(match[3]))].add(match[1])
    complete = [point for point, kinds in found.items() if kinds == {"model", "training"}]
    return max(complete, default=None)


def pack(runs: Path, dest: Path) -> List[str]:
    """
    Archives what `allennlp train --recover` needs of each cut-off run under `runs` (a
    checkpoint, no metrics.json) into `dest/<run>.tar.gz`: its config, vocabulary, latest
    checkpoint, `best.th`, epoch metrics and `resumed.json`. A run longer than the machine that
    trains it is kept (older checkpoints, logs and the rest stay behind), then `unpack`ed on
    the next machine, where `run` with the same jobs resumes it. Stop the runner first: the
    trainer writes a checkpoint and `best.th` one after the other, and a run caught between
    them is refused rather than packed half-written. Returns the names of the runs packed.
    """
    dest.mkdir(parents=True, exist_ok=True)
    packed = []
    for run in sorted(path for path in runs.iterdir() if path.is_dir()):
        point = latest_checkpoint(run)
        if point is None or (run / "metrics.json").exists():
            continue
        epochs, batches = point
        model = run / f"model_state_e{epochs}_b{batches}.th"
        names = [model.name, f"training_state_e{epochs}_b{batches}.th"]
        names += ["config.json", "vocabulary"]
        if epochs:
            last = read_json(run / f"metrics_epoch_{epochs - 1}.json")
            best = run / "best.th"
            if last is None or not best.exists():
                raise ValueError(f"{run}: checkpoint after {epochs} epochs, no metrics or best.th")
            # The best epoch's weights go to best.th (a hard link or a copy of the model state)
            # after its end-of-epoch checkpoint. Compared by content, not by time: a copy of
            # the run folder (`cp -r`) gives every file the time it was copied.
            written_after = batches == 0 and last["best_epoch"] == epochs - 1
            if written_after and not filecmp.cmp(best, model, shallow=False):
                raise ValueError(f"{run}: best.th is not yet its best checkpoint: still training?")
            # An epoch whose metrics are written but not yet its checkpoint is trained again.
            names += ["best.th"] + [path.name for n, path in epoch_paths(run) if n < epochs]
        names += [name for name in ("meta.json", RESUMED) if (run / name).exists()]
        with tarfile.open(dest / f"{run.name}.tar.gz", "w:gz") as archive:
            for name in names:
                archive.add(run / name, arcname=f"{run.name}/{name}")
        packed.append(run.name)
    return packed


def unpack(packs: Path, runs: Path) -> List[str]:
    """Unpacks each `packs/<run>.tar.gz` (from `pack`) into `runs/<run>/`, unless that folder
    exists already (a run that went on here since is newer). Returns the names unpacked."""
    runs.mkdir(parents=True, exist_ok=True)
    unpacked = []
    for path in sorted(packs.glob("*.tar.gz")):
        name = path.name[: -len(".tar.gz")]
        if (runs / name).exists():
            continue
        with tarfile.open(path) as archive:
            if any(not member.startswith(f"{name}/") for member in archive.getnames()):
                raise ValueError(f"{path}: holds files outside {name}/")
            archive.extractall(runs, filter="data")
        unpacked.append(name)
    return unpacked
