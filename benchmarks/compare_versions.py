"""Times two versions of the code side by side: the same benchmarks, run from each version's own
checkout, alternating between them round after round, so that the machine's load and any drift
hit both alike.

    python benchmarks/compare_versions.py --old OLD_CHECKOUT --new NEW_CHECKOUT
        [--rounds 5] [--batch-sizes 32,128] [--repeats 3] [--threads 1]
        [--benchmarks encoding_speed,training_speed] [--out benchmarks/results/versions]
        [--reference "SPINN-PI-NT level-wise (default)"] [--device cpu|cuda]
        [--new-args "--cuda-graphs"]

Each round runs every benchmark once per version, in a fresh process with that checkout first
on PYTHONPATH (old then new in odd rounds, new then old in even ones). A benchmark reports a
median over its own ``--repeats``; the table gives, per model and batch size, the median over
rounds of each version's seconds per batch (encoding) or per training step, and their ratio
new / old. A second table gives, per version, each model's time over that of a reference model
(``--reference``, SPINN-PI-NT level-wise by default) measured in the same run, median over
rounds: the ratios a speed target is stated in, which a loaded machine leaves intact. Writes
<out>/compare_versions.{md,json}.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

# benchmark -> (how its JSON gives seconds per batch or step, extra arguments)
BENCHMARKS = {
    "encoding_speed": ("results", ["--recursive-subset", "1"]),
    "training_speed": ("speed", ["--lengths", "25"]),
}


def seconds(data: Dict, key: str) -> Dict[str, Dict[str, float]]:
    """{model: {batch size: seconds}} from one benchmark's JSON."""
    out: Dict[str, Dict[str, float]] = {}
    for model, by_batch in data[key].items():
        for batch_size, result in by_batch.items():
            if "seconds_per_batch" in result:
                value = result["seconds_per_batch"]
            else:
                value = 1.0 / result["steps_per_second"]
            out.setdefault(model, {})[batch_size] = value
    return out


def run_once(checkout: Path, benchmark: str, args: argparse.Namespace, new: bool) -> Dict:
    key, extra = BENCHMARKS[benchmark]
    extra = [*extra, "--device", args.device, *(args.new_args.split() if new else [])]
    with tempfile.TemporaryDirectory() as out:
        command = [
            sys.executable,
            str(checkout / "benchmarks" / f"{benchmark}.py"),
            "--batch-sizes",
            args.batch_sizes,
            "--repeats",
            str(args.repeats),
            "--threads",
            str(args.threads),
            "--out",
            out,
            *extra,
        ]
        env = {
            **os.environ,
            "PYTHONPATH": str(checkout),
            "OMP_NUM_THREADS": str(args.threads),
            "MKL_NUM_THREADS": str(args.threads),
        }
        subprocess.run(command, cwd=checkout, env=env, check=True, capture_output=True)
        (result,) = [p for p in Path(out).glob("*.json")]
        return seconds(json.loads(result.read_text()), key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-sizes", default="32,128")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--benchmarks", default="encoding_speed,training_speed")
    parser.add_argument(
        "--reference",
        default="SPINN-PI-NT level-wise (default)",
        help="the model the ratio table divides by (a row name of the benchmarks)",
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--new-args",
        default="",
        help="arguments for the new version's benchmarks only (options the old one lacks, e.g. "
        "--cuda-graphs: rows only one version has appear in the ratio table alone)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/versions"))
    args = parser.parse_args()
    versions = {"old": args.old.resolve(), "new": args.new.resolve()}
    # samples[benchmark][model][batch size][version] = seconds, one per round
    samples: Dict[str, Dict[str, Dict[str, Dict[str, List[float]]]]] = {}
    for round_ in range(args.rounds):
        names = ["old", "new"] if round_ % 2 == 0 else ["new", "old"]
        for benchmark in args.benchmarks.split(","):
            for name in names:
                for model, by_batch in run_once(
                    versions[name], benchmark, args, new=name == "new"
                ).items():
                    for batch_size, value in by_batch.items():
                        slot = samples.setdefault(benchmark, {}).setdefault(model, {})
                        slot.setdefault(batch_size, {}).setdefault(name, []).append(value)
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    lines = [
        f"old: {versions['old'].name} ({git_head(versions['old'])}), new: "
        f"{versions['new'].name} ({git_head(versions['new'])}); {args.rounds} rounds, "
        f"{args.repeats} repeats each, {args.threads} thread(s), load average at the end "
        f"{os.getloadavg()[0]:.2f}",
        "",
        "| benchmark | model | B | old (ms) | new (ms) | new / old |",
        "|---|---|---:|---:|---:|---:|",
    ]
    table = []
    for benchmark, by_model in samples.items():
        for model, by_batch in by_model.items():
            for batch_size, by_version in by_batch.items():
                if set(by_version) != {"old", "new"}:
                    continue  # a model only one version has
                old = statistics.median(by_version["old"])
                new = statistics.median(by_version["new"])
                table.append((benchmark, model, batch_size, old, new))
                lines.append(
                    f"| {benchmark} | {model} | {batch_size} | {old * 1e3:.1f} | "
                    f"{new * 1e3:.1f} | {new / old:.3f} |"
                )
    lines += ["", *ratio_table(samples, args.reference)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare_versions.md").write_text("\n".join(lines) + "\n")
    config = {k: str(v) for k, v in vars(args).items()}
    # The checkouts by name and commit, not by where they lay on the machine that ran this.
    config.update({name: f"{path.name} ({git_head(path)})" for name, path in versions.items()})
    config["out"] = args.out.name
    (args.out / "compare_versions.json").write_text(
        json.dumps({"config": config, "samples": samples}) + "\n"
    )
    print("\n".join(lines))


def ratio_table(samples: Dict, reference: str) -> List[str]:
    """Per benchmark, model and batch size: each version's time over ``reference``'s in the
    same run (round), median over rounds."""
    lines = [
        f"Time over that of {reference} in the same run (median over rounds):",
        "",
        "| benchmark | model | B | old | new |",
        "|---|---|---:|---:|---:|",
    ]
    for benchmark, by_model in samples.items():
        if reference not in by_model:
            continue
        for model, by_batch in by_model.items():
            if model == reference:
                continue
            for batch_size, by_version in by_batch.items():
                cells = []
                for name in ("old", "new"):
                    times = by_version.get(name)
                    base = by_model[reference].get(batch_size, {}).get(name)
                    if not times or not base:
                        cells.append("—")
                        continue
                    ratios = [time / ref for time, ref in zip(times, base)]
                    cells.append(f"{statistics.median(ratios):.2f}×")
                lines.append(f"| {benchmark} | {model} | {batch_size} | {cells[0]} | {cells[1]} |")
    return lines


def git_head(checkout: Path) -> str:
    """The checkout's commit: its ``.commit`` file (a copy without git, e.g. on a GPU machine),
    else git's."""
    if (checkout / ".commit").is_file():
        return (checkout / ".commit").read_text().strip()
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True
    )
    return result.stdout.strip() or "?"


if __name__ == "__main__":
    main()
