"""The parts every task's summary is made of: markdown tables, mean ± standard deviation cells,
runs grouped by seed, the table of runs in progress."""

import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

from experiment_pipeline.common import read_json
from experiment_pipeline.run_folders import (
    finished_runs,
    run_epochs,
    trained_seconds,
    training_seconds,
)


class Summary(NamedTuple):
    """What `summarize` writes: `sections` are the markdown pieces a results page can insert
    (`table` is table.md); `data` is summary.json's object, written with `json_text`."""

    sections: Dict[str, str]
    data: Optional[Dict]
    json_text: Callable[[Dict], str] = lambda data: json.dumps(data, indent=2) + "\n"


def percent(value: Optional[float]) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def markdown(lines: List[str]) -> str:
    return "\n".join(lines) + "\n"


def table_rows(header: Sequence[str], align: str, rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", align]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def machine_record(run: Path, record: Dict) -> Dict:
    """`record` with the run's `machine.json` added under "machine" when it has one."""
    machine = read_json(run / "machine.json")
    return {**record, "machine": machine} if machine is not None else record


def in_progress(runs: Path, validation_key: str) -> str:
    """A table of the runs that have not finished: still training (epoch metrics only) or
    trained but not yet tested. Empty when every run has finished."""
    rows = []
    for run in sorted(path for path in runs.iterdir() if path.is_dir()):
        if (run / "test_metrics.json").exists():
            continue
        metrics = read_json(run / "metrics.json")
        epochs = run_epochs(run)
        latest = metrics or (epochs[-1] if epochs else None)
        if latest is None:
            continue
        state = "trained, not tested" if metrics else "training"
        best = latest.get(f"best_validation_{validation_key}")
        seconds = training_seconds(run, metrics) if metrics else trained_seconds(run)
        rows.append(
            [
                run.name,
                state,
                str(len(epochs) or latest["epoch"] + 1),
                str(latest["best_epoch"] + 1),
                "—" if best is None else f"{best:.4f}",
                f"{seconds / 60:.0f} min",
            ]
        )
    if not rows:
        return ""
    header = ["run", "state", "epochs done", "best epoch", f"best dev {validation_key}", "time"]
    lead = "Runs in progress (their curves so far; not in the tables until tested):"
    return markdown([lead, ""] + table_rows(header, "|---|---|---:|---:|---:|---:|", rows))


def known_order(names: Sequence[str], known: Dict[str, str]) -> List[str]:
    """`names` in the order of `known`, then the others by name."""
    order = {name: position for position, name in enumerate(known)}
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def cell(values: List[float], scale: float) -> str:
    """One value, or the mean ± standard deviation of several (1 decimal for percentages, else
    4)."""
    digits = 1 if scale == 100 else 4
    scaled = [v * scale for v in values]
    if len(scaled) == 1:
        return f"{scaled[0]:.{digits}f}"
    return f"{statistics.mean(scaled):.{digits}f} ± {statistics.stdev(scaled):.{digits}f}"


def seed_groups(runs: Path) -> Dict[str, List[Path]]:
    """Finished runs grouped by name without the `_s<seed>` suffix, in name order."""
    groups: Dict[str, List[Path]] = defaultdict(list)
    for run in finished_runs(runs):
        groups[re.sub(r"_s\d+$", "", run.name)].append(run)
    return groups
