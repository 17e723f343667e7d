"""The experiments command: write a job list, run it, collect the runs, summarize them.

    .venv/bin/python scripts/experiments.py jobs TASK [--models ...] [--seeds ...] > jobs.tsv
    .venv/bin/python scripts/experiments.py run jobs.tsv runs/TASK [--parallel 2] [--threads 1]
    .venv/bin/python scripts/experiments.py collect runs/TASK results/TASK
    .venv/bin/python scripts/experiments.py summarize TASK [RUNS] [--out DIR]
    .venv/bin/python scripts/experiments.py pack runs/TASK PACKS   # then, on the next machine:
    .venv/bin/python scripts/experiments.py unpack PACKS runs/TASK

TASK is one of snli, snli_attention, sst, sick, listops (`summarize` also knows parsing, the
tree-source tables of scripts/evaluate_tree_sources.py). `jobs` writes one line per run,
`name<TAB>config<TAB>overrides`; `run` trains each job with `allennlp train` into RUNS/name and
evaluates its best checkpoint on the test set, a few jobs at a time; `collect` copies the small
files of finished runs into the repository; `summarize` writes a task's table.md, summary.json
and results page (README.md) from the run folders; `pack` and `unpack` carry runs cut off by
the end of a machine to the next one, where `run` resumes them. docs/experiments.md describes
the whole pipeline; `scripts/experiments.py SUBCOMMAND --help` lists each subcommand's options.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from allennlp.common import Params
from allennlp.models.archival import load_archive

import spinn_allennlp.plugin  # noqa: F401  (registers the plugin's classes, for archives)
from spinn_allennlp.core.transitions import FIXED_SHAPES, bracket_f1, parse_to_transitions

ROOT = Path(__file__).resolve().parents[1]
ALLENNLP = [sys.executable, "-m", "allennlp"]
TASKS = ("snli", "snli_attention", "sst", "sick", "listops")
PAGE_TASKS = (*TASKS, "parsing")

Job = Tuple[str, str, Dict]


# --------------------------------------------------------------------------------------------
# jobs: one line per run
# --------------------------------------------------------------------------------------------

# The models each task's job list has by default (config names, or encoders for SST and SICK).
DEFAULT_MODELS = {
    "snli": "lstm,spinn_pi_nt,spinn_pi,spinn",
    "snli_attention": "esim,tree_esim",
    "sst": "spinn_pi_nt",
    "sick": "spinn_pi_nt",
    "listops": "lstm,spinn_pi_nt,spinn_pi_nt_balanced,spinn,spinn_model2,spinn_model3,spinn_model4",
}
SICK_ENTAILMENT = "training_config/pair_classification/sick_entailment_spinn_pi_nt.jsonnet"


def seed_overrides(seed: int) -> Dict[str, int]:
    """AllenNLP's three seeds, all set to `seed`."""
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def job_lines(
    task: str,
    models: Sequence[str],
    seeds: Sequence[Optional[int]],
    settings: Sequence[str] = ("fine", "binary"),
    tree_sources: Sequence[str] = ("balanced",),
    extra: Optional[Dict] = None,
) -> List[str]:
    """
    The job list of a task, one `name<TAB>config<TAB>overrides` line per run. A seed of `None`
    keeps the config's own seeds. Run names are what `summarize` groups by:

    - snli, snli_attention: `<model>` (the config's seeds) or `<model>_seed<N>`; config
      `training_config/pair_classification/<model>.jsonnet`.
    - listops: `<model>` or `<model>_s<N>`; config
      `training_config/classification/listops_<model>.jsonnet`.
    - sst: `<setting>_<encoder>_s<N>`; config
      `training_config/classification/sst_<setting>_<encoder>.jsonnet`.
    - sick: `<encoder>_<tree source>_s<N>`; config
      `training_config/relatedness/sick_<encoder>.jsonnet` (`sick_entailment`: the NLI model
      on SICK-E), the tree source set on the reader.

    `extra` (overrides) is added to every job last.
    """
    lines = []
    for seed in seeds:
        overrides: Dict[str, Any] = {} if seed is None else seed_overrides(seed)
        suffix = "" if seed is None else f"_s{seed}"
        for model in models:
            runs: List[Tuple[str, str, Dict]] = []
            if task in ("snli", "snli_attention"):
                name = model if seed is None else f"{model}_seed{seed}"
                config = f"training_config/pair_classification/{model}.jsonnet"
                runs.append((name, config, dict(overrides)))
            elif task == "listops":
                name = model + suffix
                config = f"training_config/classification/listops_{model}.jsonnet"
                runs.append((name, config, dict(overrides)))
            elif task == "sst":
                for setting in settings:
                    name = f"{setting}_{model}{suffix}"
                    config = f"training_config/classification/sst_{setting}_{model}.jsonnet"
                    runs.append((name, config, dict(overrides)))
            elif task == "sick":
                for source in tree_sources:
                    name = f"{model}_{source}{suffix}"
                    if model == "sick_entailment":
                        config = SICK_ENTAILMENT
                    else:
                        config = f"training_config/relatedness/sick_{model}.jsonnet"
                    source_override = {"dataset_reader.tree_source": {"type": source}}
                    runs.append((name, config, {**overrides, **source_override}))
            else:
                raise ValueError(f"no job list for task {task!r}")
            for name, config, job_overrides in runs:
                job_overrides.update(extra or {})
                lines.append(f"{name}\t{config}\t{json.dumps(job_overrides)}")
    return lines


# --------------------------------------------------------------------------------------------
# run: a job list, a few jobs at a time
# --------------------------------------------------------------------------------------------


def read_jobs(path: Path) -> List[Job]:
    """The jobs of a job list: `name<TAB>config<TAB>overrides` lines (overrides: a JSON object,
    may be left out); empty lines and lines starting with `#` are skipped."""
    jobs = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, config, *rest = line.split("\t")
        overrides = json.loads(rest[0]) if rest and rest[0].strip() else {}
        jobs.append((name, config, overrides))
    return jobs


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
            # The trainer's training_duration counts its own process only: keep the time the
            # cut-off processes had trained, for wall.json.
            before = record_resumption(out) if cut_off else 0.0
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


# --------------------------------------------------------------------------------------------
# What a run folder holds
# --------------------------------------------------------------------------------------------

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


def read_json(path: Path) -> Optional[Dict]:
    return json.loads(path.read_text()) if path.exists() else None


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


# --------------------------------------------------------------------------------------------
# collect: a run's small files into the repository
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# pack / unpack: a cut-off run carried to another machine
# --------------------------------------------------------------------------------------------

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
            # after its end-of-epoch checkpoint.
            written_after = batches == 0 and last["best_epoch"] == epochs - 1
            if written_after and best.stat().st_mtime < model.stat().st_mtime:
                raise ValueError(f"{run}: best.th older than its checkpoint: still training?")
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


# --------------------------------------------------------------------------------------------
# summarize: tables, summary.json and the results page of a task
# --------------------------------------------------------------------------------------------


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


# ListOps -----------------------------------------------------------------------------------

LISTOPS_NAMES = {
    "spinn_pi_nt": "SPINN-PI-NT, gold trees (Model 0: a TreeLSTM)",
    "lstm": "LSTM",
    # `lstm` with the learning rate never halved (reduce_on_plateau patience 1000) and early
    # stopping's patience 25: a try at the LSTM anchor.
    "lstm_constant_lr": "LSTM, learning rate kept constant",
    # The same with dropout 0.2 on the sentence vector and the MLP's output (`model.dropout`).
    "lstm_dropout": "LSTM, learning rate constant, dropout 0.2",
    # The same, the first setting of issue 47's sweep (scripts/jobs/lstm_sweep.tsv).
    "lstm_sweep_dropout": "LSTM, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_h256": "LSTM 256-d, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_bidirectional": "BiLSTM, learning rate constant, dropout 0.2",
    "lstm_sweep_dropout_lr2e-3": "LSTM, learning rate 2e-3 constant, dropout 0.2",
    "spinn_pi_nt_balanced": "SPINN-PI-NT, balanced trees",
    "spinn": "full SPINN (Model 1)",
    "spinn_model2": "Model 2 (own transitions, scheduled)",
    "spinn_model3": "Model 3 (soft stack, supervised)",
    "spinn_model4": "Model 4 (soft stack, latent trees)",
    "spinn_best_draw": "best-draw parser (trained by the task alone, 4 trees ranked)",
    "spinn_reinforce": "REINFORCE parser (latent trees)",
    "spinn_soft_annealed": "soft stack, annealed (latent trees)",
    "spinn_gumbel": "straight-through Gumbel (latent trees)",
    "spinn_summaries": "Model 1 + stack/buffer summaries",
}
LISTOPS_TEST = ROOT / "data" / "listops" / "test_d20s.tsv.gz"
# The test accuracy columns: all lines, then the length buckets of the ListOps configs.
LISTOPS_ACCURACY = (
    ("accuracy", "test acc."),
    ("accuracy_tokens_le_100", "≤ 100 tokens"),
    ("accuracy_tokens_gt_100", "> 100 tokens"),
)


def fixed_tree_f1(test: Path = LISTOPS_TEST) -> Dict[str, float]:
    """Mean sentence bracket F1 of balanced / left- / right-branching trees against the gold
    trees of the ListOps test set."""
    sums = {name: [0.0, 0] for name in FIXED_SHAPES}
    with gzip.open(test, "rt", encoding="utf-8") as lines:
        for line in lines:
            tokens, gold = parse_to_transitions(line.rstrip("\n").split("\t")[1])
            for name, shape in FIXED_SHAPES.items():
                f1 = bracket_f1(shape(len(tokens)), gold)
                if f1 is not None:
                    sums[name][0] += f1
                    sums[name][1] += 1
    return {name: total / count for name, (total, count) in sums.items()}


def run_epochs(run: Path) -> List[Dict]:
    """A run's per-epoch metrics: its collected `epochs.json`, else the trainer's files."""
    collected = read_json(run / "epochs.json")
    return collected if collected is not None else epoch_files(run)


def known_order(names: Sequence[str], known: Dict[str, str]) -> List[str]:
    """`names` in the order of `known`, then the others by name."""
    order = {name: position for position, name in enumerate(known)}
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def listops_run_record(run: Path) -> Dict:
    metrics = json.loads((run / "metrics.json").read_text())
    epochs = run_epochs(run)
    seconds = training_seconds(run, metrics)
    return machine_record(
        run,
        {
            "params": parameters(run, "trainable"),
            "epochs": metrics["epoch"] + 1,
            "best_epoch": metrics["best_epoch"],
            "dev_accuracy": metrics["best_validation_accuracy"],
            "test": json.loads((run / "test_metrics.json").read_text()),
            "train_wall_seconds": seconds,
            "dev_curve": [epoch["validation_accuracy"] for epoch in epochs],
        },
    )


def summarize_listops(runs: Path) -> Summary:
    """One row per model (runs `<model>` and `<model>_s<seed>`) with the mean ± standard
    deviation over its seeds of the test accuracy on all lines and on the <= 100 / > 100 token
    buckets, the trees' bracket F1 (models with a parser), the best dev accuracy, epochs, and
    the wall time per run and per epoch; then one row per run; the bracket F1 of fixed trees
    below. `summary.json` keeps each run's dev accuracy per epoch (`dev_curve`), which
    `plot_listops_curves` draws."""
    groups = seed_groups(runs)
    records = {
        name: {run.name: listops_run_record(run) for run in groups[name]}
        for name in known_order(list(groups), LISTOPS_NAMES)
    }
    model_rows, run_rows = [], []
    for name, by_run in records.items():
        tests = [record["test"] for record in by_run.values()]
        row = [LISTOPS_NAMES.get(name, name), str(len(by_run))]
        row += [cell([test[key] for test in tests], 100) for key, _ in LISTOPS_ACCURACY]
        f1 = [test["bracket_f1"] for test in tests if "bracket_f1" in test]
        row.append(cell(f1, 100) if len(f1) == len(tests) else "—")
        row.append(cell([record["dev_accuracy"] for record in by_run.values()], 100))
        row.append(", ".join(f"{r['epochs']} ({r['best_epoch'] + 1})" for r in by_run.values()))
        minutes = [r["train_wall_seconds"] / 60 for r in by_run.values()]
        per_epoch = [r["train_wall_seconds"] / r["epochs"] for r in by_run.values()]
        row.append(f"{statistics.mean(minutes):.0f} min")
        row.append(f"{statistics.mean(per_epoch):.0f} s")
        model_rows.append(row)
        for run_name, record in by_run.items():
            test = record["test"]
            load = record.get("machine", {}).get("load_mean")
            run_rows.append(
                [run_name]
                + [percent(test.get(key)) for key, _ in LISTOPS_ACCURACY]
                + [
                    percent(test.get("bracket_f1")),
                    f"{record['epochs']} ({record['best_epoch'] + 1})",
                    f"{record['train_wall_seconds'] / 60:.0f} min",
                    "—" if load is None else f"{load:.1f}",
                ]
            )
    header = ["model", "seeds"] + [title for _, title in LISTOPS_ACCURACY]
    header += ["bracket F1", "dev acc.", "epochs (best)", "time / run", "time / epoch"]
    lines = table_rows(header, "|---|---:|" + "---:|" * (len(header) - 2), model_rows)
    shapes = fixed_tree_f1()
    lines += [
        "",
        "Bracket F1 of fixed trees against the gold test trees: "
        + ", ".join(f"{name} {percent(f1)}" for name, f1 in shapes.items()),
    ]
    run_header = ["run"] + [title for _, title in LISTOPS_ACCURACY]
    run_header += ["bracket F1", "epochs (best)", "train wall time", "load"]
    per_run = table_rows(run_header, "|---|" + "---:|" * (len(run_header) - 1), run_rows)
    return Summary(
        {
            "table": markdown(lines),
            "runs": markdown(per_run),
            "in_progress": in_progress(runs, "accuracy"),
        },
        {"models": records, "fixed_tree_f1": shapes},
        lambda data: json.dumps(data, indent=1) + "\n",
    )


def plot_listops_curves(data: Dict, path: Path) -> None:
    """Dev accuracy per epoch of every ListOps run, one colour per model (a line per seed):
    writes `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    colours = plt.get_cmap("tab10")
    for index, (name, by_run) in enumerate(data["models"].items()):
        for seed, record in enumerate(by_run.values()):
            curve = record["dev_curve"]
            axes.plot(
                range(1, len(curve) + 1),
                [100 * value for value in curve],
                color=colours(index % 10),
                linewidth=1,
                label=LISTOPS_NAMES.get(name, name) if seed == 0 else None,
            )
    axes.set_xlabel("epoch")
    axes.set_ylabel("dev accuracy (%)")
    axes.set_title("ListOps: dev accuracy per epoch (one line per run)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)


# SNLI --------------------------------------------------------------------------------------

SNLI_NAMES = {
    "lstm": "LSTM RNN",
    "spinn_pi_nt": "SPINN-PI-NT",
    "spinn_pi": "SPINN-PI",
    "spinn": "SPINN (own parser at test)",
    "spinn_model2": "Model 2: own transitions (scheduled)",
    "spinn_model3": "Model 3: soft stack, supervised",
    "spinn_model4": "Model 4: soft stack, latent trees",
    "spinn_reinforce": "REINFORCE parser, latent trees",
    "spinn_gumbel": "straight-through Gumbel parser, latent trees",
    "spinn_soft_annealed": "soft stack annealed to choose, latent trees",
    "spinn_ppo": "PPO parser, latent trees",
    "spinn_best_draw": "best-draw parser (4 trees a sentence), latent trees",
    "spinn_typed": "SPINN, typed REDUCE",
}
# Chen et al. (2017); "him" is made from the esim and tree_esim runs of the same seed.
ATTENTION_NAMES = {
    "esim": "ESIM",
    "tree_esim": "syntactic tree-LSTM",
    "him": "HIM (ESIM + tree, probabilities averaged)",
}


def snli_variant(run: Path) -> str:
    return re.sub(r"_seed\d+$", "", run.name)


def snli_seed(run: Path) -> str:
    return run.name.split("_seed")[1] if "_seed" in run.name else "config's"


def snli_runs(runs: Path, names: Dict[str, str], attention: bool) -> List[Path]:
    """The test-evaluated runs of the SNLI page (`attention`: of the attention page), grouped by
    variant in the order of `names`, each variant's runs the config's seed first, then
    `_seed<N>` in order of N; variants not in `names` follow (on the SNLI page)."""
    found = [run for run in runs.iterdir() if (run / "test_metrics.json").exists()]
    found = [run for run in found if (snli_variant(run) in ATTENTION_NAMES) == attention]
    order = {name: position for position, name in enumerate(names)}
    return sorted(
        found,
        key=lambda run: (
            order.get(snli_variant(run), len(order)),
            snli_variant(run),
            -1 if "_seed" not in run.name else int(run.name.split("_seed")[1]),
        ),
    )


def bracket_f1_cell(test: Dict) -> str:
    """Unlabeled bracket F1, and the labeled one for typed REDUCE."""
    cell = percent(test.get("bracket_f1"))
    if "labeled_bracket_f1" in test:
        cell += f" (labeled {percent(test['labeled_bracket_f1'])})"
    return cell


def snli_record(run: Path, metrics: Optional[Dict], test: Dict, params: int) -> Dict:
    record: Dict[str, Any] = {"params_excluding_embeddings": params}
    if metrics is not None:
        record.update(
            epochs=metrics["epoch"] + 1,
            best_epoch=metrics["best_epoch"],
            dev_accuracy=metrics["best_validation_accuracy"],
            train_wall_seconds=training_seconds(run, metrics),
        )
    return machine_record(run, {**record, "test": test})


def summarize_snli(runs: Path) -> Summary:
    """One row per run (the configs' seeds, then each _seed<N>), then each model's mean and
    spread over its runs."""
    rows, data = [], {}
    test_accuracies: Dict[str, List[float]] = {}
    for run in snli_runs(runs, SNLI_NAMES, attention=False):
        name = SNLI_NAMES.get(snli_variant(run), snli_variant(run))
        metrics = read_json(run / "metrics.json")
        if metrics is None:
            continue
        test = json.loads((run / "test_metrics.json").read_text())
        params = parameters(run, "trainable_excluding_embedder")
        test_accuracies.setdefault(name, []).append(test["accuracy"])
        data[run.name] = snli_record(run, metrics, test, params)
        rows.append(
            [
                name,
                snli_seed(run),
                f"{params / 1e6:.2f}M",
                str(metrics["best_epoch"]),
                percent(metrics["best_validation_accuracy"]),
                percent(test["accuracy"]),
                percent(test.get("transition_accuracy")),
                percent(test.get("tree_accuracy")),
                percent(test.get("valid_tree_rate")),
                bracket_f1_cell(test),
                f"{training_seconds(run, metrics) / 60:.1f} min ({metrics['epoch'] + 1} epochs)",
            ]
        )
    header = ["model", "seed", "params (excl. embeddings)", "best epoch", "dev acc."]
    header += ["test acc.", "test trans. acc.", "test tree acc.", "test valid trees"]
    header += ["test bracket F1", "train wall time"]
    lines = table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", rows)
    means = []
    for name, values in test_accuracies.items():
        spread = percent(statistics.stdev(values)) if len(values) > 1 else "—"
        spans = f"{percent(min(values))} – {percent(max(values))}"
        means.append([name, str(len(values)), percent(statistics.mean(values)), spread, spans])
    header = ["model", "runs", "test acc. mean", "standard deviation", "min – max"]
    lines += [""] + table_rows(header, "|---|---:|---:|---:|---:|", means)
    # A blank line ends the table, as in the committed table.md (the earlier script printed one
    # between this table and the attention models').
    return Summary(
        {"table": markdown(lines + [""]), "in_progress": in_progress(runs, "accuracy")},
        {"runs": data},
    )


def summarize_snli_attention(runs: Path) -> Summary:
    """ESIM, the syntactic tree-LSTM model and HIM: one row per run, then each model's mean."""
    rows, data = [], {}
    test_accuracies: Dict[str, List[float]] = {}
    for run in snli_runs(runs, ATTENTION_NAMES, attention=True):
        variant = snli_variant(run)
        name = ATTENTION_NAMES[variant]
        test = json.loads((run / "test_metrics.json").read_text())
        test_accuracies.setdefault(name, []).append(test["accuracy"])
        metrics = read_json(run / "metrics.json")
        params = parameters(run, "trainable_excluding_embedder")
        if variant == "him":
            dev = read_json(run / "dev_metrics.json")
            dev_accuracy: Optional[float] = None if dev is None else dev["accuracy"]
            epoch, wall = "—", "(members')"
            members = " / ".join(
                percent(test[key]) for key in ("esim_accuracy", "tree_accuracy", "oracle_accuracy")
            )
            data[run.name] = snli_record(run, None, test, params)
            data[run.name]["dev_accuracy"] = dev_accuracy
        else:
            assert metrics is not None, f"{run}: no metrics.json"
            epoch = str(metrics["best_epoch"])
            dev_accuracy = metrics["best_validation_accuracy"]
            minutes = training_seconds(run, metrics) / 60
            wall = f"{minutes:.1f} min ({metrics['epoch'] + 1} epochs)"
            members = "—"
            data[run.name] = snli_record(run, metrics, test, params)
        rows.append(
            [
                name,
                snli_seed(run),
                f"{params / 1e6:.2f}M",
                epoch,
                percent(dev_accuracy),
                percent(test["accuracy"]),
                members,
                wall,
            ]
        )
    header = ["model", "seed", "params (excl. embeddings)", "best epoch", "dev acc.", "test acc."]
    header += ["test: ESIM / tree / either right", "train wall time"]
    lines = table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|", rows)
    means = [
        [
            name,
            str(len(values)),
            percent(statistics.mean(values)),
            f"{percent(min(values))} – {percent(max(values))}",
        ]
        for name, values in test_accuracies.items()
    ]
    header = ["model", "runs", "test acc. mean", "min – max"]
    lines += [""] + table_rows(header, "|---|---:|---:|---:|", means)
    return Summary(
        {"table": markdown(lines), "in_progress": in_progress(runs, "accuracy")}, {"runs": data}
    )


# SST and SICK: rows grouped over seeds ------------------------------------------------------

TREE_COLUMNS = {
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
TREE_VALIDATION = {"sst": ("root_accuracy", 100), "sick": ("pearson", 1)}
SST_ENCODERS = {
    "spinn_pi_nt": "SPINN-PI-NT = constituency Tree-LSTM (gold trees)",
    "spinn_pi": "SPINN-PI (tracking LSTM, gold trees)",
    "spinn": "full SPINN (parser learns SST's trees; own parse at test)",
    "child_sum": "Child-Sum Tree-LSTM (head-rule dependency trees)",
    "lstm": "AllenNLP LSTM (root label only)",
    "bilstm": "AllenNLP BiLSTM (root label only)",
}
SICK_ROWS = {
    "spinn_pi_nt_benepar": ("SPINN-PI-NT (binary constituency Tree-LSTM)", "benepar (ours)"),
    "spinn_pi_nt_spinn": ("SPINN-PI-NT", "SPINN's parser"),
    "spinn_pi_nt_balanced": ("SPINN-PI-NT", "balanced"),
    "child_sum_benepar": ("Child-Sum Tree-LSTM (dependency)", "benepar → head rules"),
    "child_sum_balanced": ("Child-Sum Tree-LSTM", "balanced → head rules"),
    "lstm_balanced": ("AllenNLP LSTM", "— (no trees)"),
}


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


def summarize_seeded(task: str, runs: Path) -> Summary:
    """SST or SICK: one row per model (runs named `<row>_s<seed>`) with the mean and standard
    deviation over its seeds, each seed's value, the selection metric on the validation set,
    best epochs and the mean wall time; then the page's view by model (`by_model`)."""
    columns = TREE_COLUMNS[task]
    validation_key, validation_scale = TREE_VALIDATION[task]
    first_key, _, first_scale = columns[0]
    digits = 1 if first_scale == 100 else 4
    header = ["run", "seeds"] + [title for _, title, _ in columns]
    header += [f"dev {validation_key}", "per seed (first test column)", "best epoch"]
    header += ["wall time / run"]
    rows, data = [], {}
    groups = seed_groups(runs)
    for name, group in groups.items():
        tests = [json.loads((run / "test_metrics.json").read_text()) for run in group]
        trains = [json.loads((run / "metrics.json").read_text()) for run in group]
        seconds = [training_seconds(run, m) for run, m in zip(group, trains)]
        row = [name, str(len(group))]
        # A metric the model has not (the LSTM baselines label only the root): "—".
        row += [
            cell([t[key] for t in tests], scale) if all(key in t for t in tests) else "—"
            for key, _, scale in columns
        ]
        row.append(cell([m[f"best_validation_{validation_key}"] for m in trains], validation_scale))
        row.append(" / ".join(f"{t[first_key] * first_scale:.{digits}f}" for t in tests))
        row.append(", ".join(str(m["best_epoch"] + 1) for m in trains))
        row.append(f"{statistics.mean(seconds) / 60:.0f} min")
        rows.append(row)
        record = {
            "runs": [run.name for run in group],
            "test": tests,
            "best_validation": [m[f"best_validation_{validation_key}"] for m in trains],
            "best_epoch": [m["best_epoch"] for m in trains],
            "training_seconds": seconds,
        }
        machines = [read_json(run / "machine.json") for run in group]
        if any(machine is not None for machine in machines):
            record["machine"] = machines
        data[name] = record
    align = "|" + "---|" + "---:|" * (len(header) - 1)
    sections = {"table": markdown(table_rows(header, align, rows))}
    sections["in_progress"] = in_progress(runs, validation_key)
    view = sst_by_model(groups) if task == "sst" else sick_by_model(groups)
    sections["by_model"] = markdown(view) if len(view) > 2 else ""
    return Summary(sections, data)


def group_tests(group: List[Path]) -> List[Dict]:
    return [json.loads((run / "test_metrics.json").read_text()) for run in group]


def sst_by_model(groups: Dict[str, List[Path]]) -> List[str]:
    """One row per encoder, fine-grained and binary side by side (mean ± standard deviation over
    seeds), each seed's root accuracy."""
    encoders = {
        name.split("_", 1)[1] for name in groups if name.split("_", 1)[0] in ("fine", "binary")
    }
    order = {name: position for position, name in enumerate(SST_ENCODERS)}
    rows = []
    for encoder in sorted(encoders, key=lambda e: (order.get(e, len(order)), e)):
        settings = [group_tests(groups.get(f"{s}_{encoder}", [])) for s in ("fine", "binary")]
        counts = sorted({len(tests) for tests in settings if tests})
        row = [SST_ENCODERS.get(encoder, encoder), " / ".join(str(c) for c in counts)]
        for tests in settings:
            for key in ("root_accuracy", "phrase_accuracy"):
                present = tests and all(key in t for t in tests)
                row.append(cell([t[key] for t in tests], 100) if present else "—")
        per_seed = [" / ".join(f"{100 * t['root_accuracy']:.1f}" for t in s) for s in settings]
        row.append(" ; ".join(seeds for seeds in per_seed if seeds))
        rows.append(row)
    header = ["model", "seeds", "fine: test root", "fine: all-phrase", "binary: test root"]
    header += ["binary: all-phrase", "per seed (test root, fine / binary)"]
    return table_rows(header, "|---|---:|---:|---:|---:|---:|---|", rows)


def sick_by_model(groups: Dict[str, List[Path]]) -> List[str]:
    """One row per model and tree source (mean ± standard deviation over seeds)."""
    order = {name: position for position, name in enumerate(SICK_ROWS)}
    rows = []
    for name in sorted(groups, key=lambda n: (order.get(n, len(order)), n)):
        tests = group_tests(groups[name])
        model, source = SICK_ROWS.get(name, (name, ""))
        row = [model, source]
        row += [cell([t[key] for t in tests], 1) for key in ("pearson", "spearman", "mse")]
        row.append(" / ".join(f"{t['pearson']:.4f}" for t in tests))
        rows.append(row)
    header = ["SICK test", "tree source", "Pearson r", "Spearman ρ", "MSE", "per seed (r)"]
    return table_rows(header, "|---|---|---:|---:|---:|---:|", rows)


# The tree-source tables ---------------------------------------------------------------------


# The benepar training runs of results/parsing/benepar/, in this order (others after, by name).
BENEPAR_RUNS = (
    "pilot_nary",
    "pilot_binarized",
    "pilot_nary_sst",
    "pilot_binarized_sst",
    "benepar_snli_1pct",
    "benepar_snli_sst",
)


def benepar_runs(folder: Path) -> str:
    """One row per benepar training run (scripts/train_benepar.py's metrics JSON in `folder`):
    what it learned from, how long, and its dev checks' scores at the end (labeled F1 on all of
    SNLI dev; unlabeled bracket F1 of the binarized trees on SNLI dev and the SST train
    sentences held out; "—" where the run did not measure it)."""
    order = {name: position for position, name in enumerate(BENEPAR_RUNS)}
    paths = sorted(
        folder.glob("*.metrics.json"),
        key=lambda p: (order.get(p.name[: -len(".metrics.json")], len(order)), p.name),
    )
    rows = []
    for path in paths:
        metrics = json.loads(path.read_text())
        unlabeled = metrics.get("unlabeled", {})
        sst = metrics.get("sst_train_sentences", 0)
        rows.append(
            [
                f"`{path.name[: -len('.metrics.json')]}`",
                "binarized" if metrics.get("binarized_snli") else "n-ary",
                f"{sst:,}" if sst else "—",
                f"{metrics['steps']:,} ({metrics['epochs']:.1f})",
                f"{metrics['train_minutes']:.0f}",
                percent(metrics["dev"]["f1"]),
                percent(unlabeled["snli_dev"]["bracket_f1"]) if "snli_dev" in unlabeled else "—",
                (
                    percent(unlabeled["sst_holdout"]["bracket_f1"])
                    if "sst_holdout" in unlabeled
                    else "—"
                ),
            ]
        )
    header = ["run", "SNLI trees", "SST train trees", "steps (epochs)", "minutes"]
    header += ["SNLI dev: labeled F1", "SNLI dev: unlabeled F1", "SST held out: unlabeled F1"]
    return markdown(table_rows(header, "|---|---|---:|---:|---:|---:|---:|---:|", rows))


def summarize_parsing(runs: Path) -> Summary:
    """The tables scripts/evaluate_tree_sources.py wrote (parse_quality.md, downstream.md,
    out_of_domain.md), and the benepar training runs' table (`benepar_runs`, from
    `benepar/*.metrics.json`), for the page; no summary of its own."""
    sections = {
        path.stem: path.read_text()
        for path in sorted(runs.glob("*.md"))
        if path.name not in ("README.md", "about.md")
    }
    if (runs / "benepar").is_dir():
        sections["benepar_runs"] = benepar_runs(runs / "benepar")
    return Summary(sections, None)


# The results page ---------------------------------------------------------------------------

INSERT = re.compile(r"^<!-- insert: ([\w.-]+) -->$")
DEFAULT_PAGE = "# {task} runs\n\n<!-- insert: table -->\n\n<!-- insert: in_progress -->\n"


def results_page(task: str, template: str, sections: Dict[str, str]) -> str:
    """
    The results page (README.md): the hand-written `template` (`about.md`) with each line
    `<!-- insert: NAME -->` replaced by the generated section NAME (an empty section and the
    blank line after it drop out), under a comment that says how the page was made.
    """
    out = [
        f"<!-- Written by `scripts/experiments.py summarize {task}` from about.md and the run "
        "folders: edit about.md, not this file. -->",
        "",
    ]
    lines = template.splitlines()
    skip_blank = False
    for line in lines:
        match = INSERT.match(line.strip())
        if match:
            name = match.group(1)
            if name not in sections:
                known = ", ".join(sorted(sections))
                raise ValueError(f"about.md inserts {name!r}; the {task} summary has: {known}")
            text = sections[name].rstrip("\n")
            if text:
                out.append(text)
            skip_blank = not text
            continue
        if skip_blank and not line.strip():
            skip_blank = False
            continue
        skip_blank = False
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def summarize(task: str, runs: Path) -> Summary:
    """The summary of `task` made from the run folders under `runs`."""
    if task == "listops":
        return summarize_listops(runs)
    if task == "snli":
        return summarize_snli(runs)
    if task == "snli_attention":
        return summarize_snli_attention(runs)
    if task in ("sst", "sick"):
        return summarize_seeded(task, runs)
    if task == "parsing":
        return summarize_parsing(runs)
    raise ValueError(f"no summary for task {task!r}")


def write_summary(task: str, runs: Path, out: Path) -> Summary:
    """Writes `out/table.md` and `out/summary.json` (where the task has them) and the results
    page `out/README.md`: from `runs/about.md` when there is one, else a plain page of the
    tables."""
    summary = summarize(task, runs)
    out.mkdir(parents=True, exist_ok=True)
    if task == "listops" and summary.data is not None and summary.data["models"]:
        plot_listops_curves(summary.data, out / "dev_curves.png")
    if "table" in summary.sections:
        (out / "table.md").write_text(summary.sections["table"])
    if summary.data is not None:
        (out / "summary.json").write_text(summary.json_text(summary.data))
    about = runs / "about.md"
    template = about.read_text() if about.exists() else DEFAULT_PAGE.format(task=task)
    (out / "README.md").write_text(results_page(task, template, summary.sections))
    return summary


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def parse_seeds(text: str) -> List[Optional[int]]:
    """`1,2,3` -> [1, 2, 3]; `config` (alone or in the list) keeps the config's seeds."""
    return [None if seed == "config" else int(seed) for seed in text.split(",")]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    jobs = commands.add_parser(
        "jobs",
        help="write a job list (to stdout) for a task",
        description="Writes one `name<TAB>config<TAB>overrides` line per run of TASK's shipped "
        "configs, seeds set through AllenNLP's three seeds.",
    )
    jobs.add_argument("task", choices=TASKS)
    jobs.add_argument(
        "--models",
        "--encoders",
        default=None,
        help="comma-separated config names (SST and SICK: encoders); default per task: "
        + "; ".join(f"{task}: {models}" for task, models in DEFAULT_MODELS.items()),
    )
    jobs.add_argument(
        "--seeds",
        default=None,
        help="comma-separated seeds, `config` for the config's own (default: `config` for "
        "snli, snli_attention and listops, 1,2,3 for sst and sick)",
    )
    jobs.add_argument("--settings", default="fine,binary", help="SST: fine, binary")
    jobs.add_argument(
        "--tree-sources", default="balanced", help="SICK: registered tree source names"
    )
    jobs.add_argument("--extra", default="{}", help="overrides (JSON) added to every job")

    run = commands.add_parser(
        "run",
        help="train each job of a job list, then evaluate it on test",
        description="Trains each job of JOBS into RUNS/name (a job whose folder has "
        "metrics.json is not trained again) and evaluates its best checkpoint on the config's "
        "test_data_path into RUNS/name/test_metrics.json. At most as many jobs run at once as "
        "the cores hold at --threads each; the machine's load while a job trains goes to "
        "RUNS/name/machine.json; each job's output to RUNS/name.log. A failing job is reported "
        "and the others go on.",
    )
    run.add_argument("jobs", type=Path, help="a job list (from `jobs`)")
    run.add_argument("runs", type=Path, help="the folder the runs go to")
    run.add_argument("--parallel", type=int, default=2, help="jobs at once, at most")
    run.add_argument("--threads", type=int, default=1, help="torch threads per job")
    run.add_argument("--no-test", action="store_true", help="train only")
    run.add_argument(
        "--test-data",
        default=None,
        help="test file for configs without test_data_path (the SNLI configs)",
    )

    collect_command = commands.add_parser(
        "collect",
        help="copy the small files of finished runs into results/",
        description="Copies config.json, metrics.json, test_metrics*.json, dev_metrics.json, "
        "wall.json, machine.json and params.json (parameter counts; counted from the archive "
        "when missing) of every run under RUNS with a test_metrics.json to DEST/<run>/, and the "
        "trainer's metrics_epoch_*.json as one epochs.json. Checkpoints, vocabularies and logs "
        "stay behind.",
    )
    collect_command.add_argument("runs", type=Path)
    collect_command.add_argument("dest", type=Path, help="e.g. results/sst")
    collect_command.add_argument(
        "--unfinished",
        action="store_true",
        help="also runs not yet tested that have finished an epoch (their curves so far)",
    )

    pack_command = commands.add_parser(
        "pack",
        help="archive cut-off runs' latest checkpoints, to go on on another machine",
        description="Writes PACKS/<run>.tar.gz for every run under RUNS that has a checkpoint "
        "but no metrics.json: its config, vocabulary, latest checkpoint, best.th, epoch metrics "
        "and resumed.json, what `allennlp train --recover` needs. Stop the runner first.",
    )
    pack_command.add_argument("runs", type=Path)
    pack_command.add_argument("packs", type=Path)
    unpack_command = commands.add_parser(
        "unpack",
        help="restore packed runs, for `run` to resume",
        description="Extracts each PACKS/<run>.tar.gz into RUNS/<run>/ unless that folder "
        "exists; `run` with the same jobs then resumes the runs with --recover.",
    )
    unpack_command.add_argument("packs", type=Path)
    unpack_command.add_argument("runs", type=Path)

    summary = commands.add_parser(
        "summarize",
        help="write a task's table.md, summary.json and results page",
        description="Reads the run folders under RUNS (default results/TASK) and writes "
        "table.md, summary.json and README.md (the results page: RUNS/about.md with its "
        "`<!-- insert: NAME -->` lines replaced by the generated tables) to --out (default "
        "RUNS). Runs still training are listed from the trainer's metrics_epoch_*.json.",
    )
    summary.add_argument("task", choices=PAGE_TASKS)
    summary.add_argument("runs", type=Path, nargs="?", default=None)
    summary.add_argument("--out", type=Path, default=None, help="default: RUNS")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command == "jobs":
        seeds = args.seeds or ("1,2,3" if args.task in ("sst", "sick") else "config")
        lines = job_lines(
            args.task,
            (args.models or DEFAULT_MODELS[args.task]).split(","),
            parse_seeds(seeds),
            settings=args.settings.split(","),
            tree_sources=args.tree_sources.split(","),
            extra=json.loads(args.extra),
        )
        print("\n".join(lines))
    elif args.command == "run":
        jobs = read_jobs(args.jobs)
        run_jobs(jobs, args.runs, args.parallel, args.threads, not args.no_test, args.test_data)
    elif args.command == "collect":
        copied = collect(args.runs, args.dest, args.unfinished)
        print(f"{len(copied)} runs -> {args.dest}: {', '.join(copied)}")
    elif args.command == "pack":
        packed = pack(args.runs, args.packs)
        print(f"{len(packed)} runs -> {args.packs}: {', '.join(packed)}")
    elif args.command == "unpack":
        unpacked = unpack(args.packs, args.runs)
        print(f"{len(unpacked)} runs -> {args.runs}: {', '.join(unpacked)}")
    elif args.command == "summarize":
        runs = args.runs or ROOT / "results" / args.task
        out = args.out or runs
        summary = write_summary(args.task, runs, out)
        print(summary.sections.get("table", ""), end="")
        print(f"wrote {out / 'README.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
