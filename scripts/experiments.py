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
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

# The command's parts are a package beside this file (scripts/ is not on the path when a test
# loads this file by its path).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from experiment_pipeline.common import PAGE_TASKS, ROOT, TASKS  # noqa: E402
from experiment_pipeline.jobs import DEFAULT_MODELS, job_lines, parse_seeds, read_jobs  # noqa: E402
from experiment_pipeline.packs import pack, unpack  # noqa: E402
from experiment_pipeline.pages import write_summary  # noqa: E402
from experiment_pipeline.run_folders import collect  # noqa: E402
from experiment_pipeline.running import run_jobs  # noqa: E402


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
