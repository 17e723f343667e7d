"""`run`: each job trained with `allennlp train` and tested, a few at a time; a cut-off run resumed
with `--recover`; the machine's load recorded."""

import json
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional

from allennlp.common import Params

from experiment_pipeline.common import ALLENNLP, Job
from experiment_pipeline.run_folders import (
    duration_seconds,
    record_resumption,
    repoint_best_weights,
)


def max_parallel(requested: int, threads: int, cores: Optional[int] = None) -> int:
    """How many jobs of `threads` threads run at once: `requested`, but no more than the cores
    hold (at least one). More starve each other: eight one-thread jobs on two cores made every
    run 5-10x slower."""
    cores = cores or os.cpu_count() or 1
    return max(1, min(requested, cores // max(threads, 1)))


class LoadSampler:
    """Samples the machine's 1-minute load average every `interval` seconds while running."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self.samples: List[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self, threads: int, parallel: int) -> Dict:
        """What `machine.json` records: cores, threads per job, jobs at once, load mean and max."""
        return {
            "cores": os.cpu_count(),
            "threads_per_job": threads,
            "jobs_at_once": parallel,
            "load_samples": len(self.samples),
            "load_mean": round(sum(self.samples) / len(self.samples), 2) if self.samples else None,
            "load_max": round(max(self.samples), 2) if self.samples else None,
        }


def run_job(
    job: Job,
    runs: Path,
    threads: int,
    test: bool,
    test_data: Optional[str],
    parallel: int = 1,
) -> str:
    """Trains and tests one job (`train_and_test`); a job that raises is reported as failed, so
    the other jobs go on."""
    try:
        return train_and_test(job, runs, threads, test, test_data, parallel)
    except Exception as error:  # one job's failure must not end the others
        return f"{job[0]}: failed: {type(error).__name__}: {error}"


def train_and_test(
    job: Job,
    runs: Path,
    threads: int,
    test: bool,
    test_data: Optional[str],
    parallel: int = 1,
) -> str:
    """
    Trains a job into `runs/name` (unless its folder has metrics.json already: a rerun after an
    interruption skips finished runs and resumes a cut-off one with `--recover`), recording the
    machine's load in `machine.json`, then,
    if `test`, evaluates its best checkpoint on the config's `test_data_path` (or `test_data`)
    into `test_metrics.json`. Output goes to `runs/name.log`; torch gets `threads` threads.
    Returns a one-line report.
    """
    name, config, overrides = job
    out = runs / name
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    with open(runs / f"{name}.log", "a") as log:
        start = time.time()
        if not (out / "metrics.json").exists():
            # A run cut off mid-training (its folder has a checkpoint but no metrics.json) goes
            # on where it stopped; anything else starts afresh.
            cut_off = any(out.glob("training_state_e*.th"))
            command = ALLENNLP + ["train", config, "-s", str(out)]
            command.append("--recover" if cut_off else "-f")
            before = 0.0
            if cut_off:
                # The trainer's training_duration counts its own process only: keep the time
                # the cut-off processes had trained, for wall.json.
                before = record_resumption(out)
                # The folder may not be the one that trained it (unpacked, copied).
                repoint_best_weights(out)
            command += ["--include-package", "spinn_allennlp", "-o", json.dumps(overrides)]
            with LoadSampler() as load:
                failed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            if out.is_dir():
                machine = json.dumps(load.summary(threads, parallel), indent=2)
                (out / "machine.json").write_text(machine + "\n")
            if failed.returncode:
                return f"{name}: training failed (see {name}.log)"
            if before:
                since = duration_seconds(
                    json.loads((out / "metrics.json").read_text())["training_duration"]
                )
                # To the millisecond: rounded coarser, a short resumed part could make the
                # total come out under the cut-off part alone.
                wall = {
                    "train_wall_seconds": round(before + since, 3),
                    "recovered_after_seconds": before,
                }
                (out / "wall.json").write_text(json.dumps(wall, indent=2) + "\n")
        if test and not (out / "test_metrics.json").exists():
            params = Params.from_file(config, json.dumps(overrides)).as_dict()
            test_path = params.get("test_data_path", test_data)
            if test_path is None:
                return f"{name}: trained; not tested: no test_data_path (give --test-data)"
            command = ALLENNLP + ["evaluate", str(out / "model.tar.gz"), test_path]
            command += ["--include-package", "spinn_allennlp"]
            command += ["--output-file", str(out / "test_metrics.json")]
            if subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode:
                return f"{name}: evaluation failed (see {name}.log)"
        return f"{name}: done in {time.time() - start:.0f} s"


def run_jobs(
    jobs: List[Job],
    runs: Path,
    parallel: int,
    threads: int,
    test: bool = True,
    test_data: Optional[str] = None,
) -> None:
    """Runs `jobs`, at most `max_parallel(parallel, threads)` at once, printing each report as
    its job ends (in the job list's order)."""
    runs.mkdir(parents=True, exist_ok=True)
    at_once = max_parallel(parallel, threads)
    if at_once < parallel:
        print(f"running {at_once} jobs at once: {os.cpu_count()} cores, {threads} thread(s) each")
    with ThreadPoolExecutor(at_once) as pool:
        reports = pool.map(lambda job: run_job(job, runs, threads, test, test_data, at_once), jobs)
        for report in reports:
            print(report, flush=True)
