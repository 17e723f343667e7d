"""Runs a list of AllenNLP training jobs, a few at a time, each then evaluated on its test set.

    .venv/bin/python scripts/run_experiments.py JOBS.tsv RUNS_DIR [--parallel 2] [--threads 1]
        [--no-test] [--test-data PATH]

Each line of JOBS.tsv is `name<TAB>config<TAB>overrides` (overrides: a JSON object, may be
empty; `#` starts a comment line). A job trains into RUNS_DIR/name (a job whose folder already
has metrics.json is skipped, so the script can be rerun after an interruption), then, unless
`--no-test`, evaluates the best checkpoint (chosen on the validation set during training) on
the config's `test_data_path` (or `--test-data` for configs without one, such as the SNLI
configs, which leave it out so that training never reads the test set) into
RUNS_DIR/name/test_metrics.json. A job that fails is reported and the others go on. Each
job's output goes to RUNS_DIR/name.log; `OMP_NUM_THREADS` and `MKL_NUM_THREADS` are set to
`--threads`. At most as many jobs run at once as the machine has cores for `--threads` each
(more starve each other: eight one-thread jobs on two cores made every run 5-10x slower), and
the machine's load average is sampled every minute while a job trains, into
RUNS_DIR/name/machine.json (cores, threads, jobs at once, load mean and max).
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from allennlp.common import Params

ALLENNLP = [sys.executable, "-m", "allennlp"]


def read_jobs(path: Path) -> List[Tuple[str, str, Dict]]:
    jobs = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, config, *rest = line.split("\t")
        overrides = json.loads(rest[0]) if rest and rest[0].strip() else {}
        jobs.append((name, config, overrides))
    return jobs


def run_job(
    job: Tuple[str, str, Dict],
    runs: Path,
    threads: int,
    test: bool,
    test_data: Optional[str],
    parallel: int = 1,
) -> str:
    try:
        return train_and_test(job, runs, threads, test, test_data, parallel)
    except Exception as error:  # one job's failure must not end the others
        return f"{job[0]}: failed: {type(error).__name__}: {error}"


def max_parallel(requested: int, threads: int, cores: Optional[int] = None) -> int:
    """How many jobs of ``threads`` threads run at once: ``requested``, but no more than the
    cores hold (at least one)."""
    cores = cores or os.cpu_count() or 1
    return max(1, min(requested, cores // max(threads, 1)))


class LoadSampler:
    """Samples the machine's 1-minute load average every ``interval`` seconds while running."""

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
        return {
            "cores": os.cpu_count(),
            "threads_per_job": threads,
            "jobs_at_once": parallel,
            "load_samples": len(self.samples),
            "load_mean": round(sum(self.samples) / len(self.samples), 2) if self.samples else None,
            "load_max": round(max(self.samples), 2) if self.samples else None,
        }


def train_and_test(
    job: Tuple[str, str, Dict],
    runs: Path,
    threads: int,
    test: bool,
    test_data: Optional[str],
    parallel: int = 1,
) -> str:
    name, config, overrides = job
    out = runs / name
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    with open(runs / f"{name}.log", "a") as log:
        start = time.time()
        if not (out / "metrics.json").exists():
            command = ALLENNLP + ["train", config, "-s", str(out), "-f"]
            command += ["--include-package", "spinn_allennlp", "-o", json.dumps(overrides)]
            with LoadSampler() as load:
                failed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            if out.is_dir():
                machine = json.dumps(load.summary(threads, parallel), indent=2)
                (out / "machine.json").write_text(machine + "\n")
            if failed.returncode:
                return f"{name}: training failed (see {name}.log)"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jobs", type=Path)
    parser.add_argument("runs", type=Path)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-test", action="store_true")
    parser.add_argument("--test-data", default=None, help="for configs without test_data_path")
    args = parser.parse_args()
    args.runs.mkdir(parents=True, exist_ok=True)
    jobs = read_jobs(args.jobs)
    parallel = max_parallel(args.parallel, args.threads)
    if parallel < args.parallel:
        print(
            f"running {parallel} jobs at once: {os.cpu_count()} cores, "
            f"{args.threads} thread(s) each"
        )
    with ThreadPoolExecutor(parallel) as pool:
        for message in pool.map(
            lambda job: run_job(
                job, args.runs, args.threads, not args.no_test, args.test_data, parallel
            ),
            jobs,
        ):
            print(message, flush=True)


if __name__ == "__main__":
    main()
