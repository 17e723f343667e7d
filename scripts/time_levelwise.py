"""Times sequential (thin stack, 2N-1 steps) vs level-wise (tree-height steps) SPINN-PI-NT.

    .venv/bin/python scripts/time_levelwise.py [--device cpu] [--batch 128] [--dim 300]
        [--threads 1]

Median and min of --repeats interleaved runs each: forward alone (no_grad), forward + backward,
and the level-wise plan (the index precompute) alone.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from spinn_allennlp.testing import random_transitions  # noqa: E402
from spinn_core import transitions as tr  # noqa: E402
from spinn_core.batch import prepare_batch  # noqa: E402
from spinn_core.runners import run_levelwise, run_thin_stack  # noqa: E402
from spinn_core.runners.levelwise import plan_levels  # noqa: E402
from spinn_core.spinn import Spinn  # noqa: E402


def batch(kind, lengths, dim, rng, device):
    build = {
        "random": lambda n: random_transitions(n, rng),
        "balanced": tr.balanced_transitions,
        "right-branching": tr.right_branching_transitions,
    }[kind]
    width = max(lengths)
    mask = torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    inputs = torch.randn(len(lengths), width, dim) * mask.unsqueeze(-1)
    steps = 2 * width - 1
    transitions = torch.tensor([build(n) + [tr.PAD] * (steps - 2 * n + 1) for n in lengths])
    return inputs.to(device), mask.to(device), transitions.to(device)


def timed_ms(fn, device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 1000 * (time.perf_counter() - start)


def forward_only(run):
    with torch.no_grad():
        run()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--min-words", type=int, default=10)
    parser.add_argument("--max-words", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    rng = random.Random(0)
    model = Spinn(args.dim, args.dim).to(device)
    lengths = [rng.randint(args.min_words, args.max_words) for _ in range(args.batch)]
    print(
        f"device={device} threads={torch.get_num_threads()} B={args.batch} D={args.dim} "
        f"N in {args.min_words}..{args.max_words}, {args.repeats} runs, ms"
    )
    for kind in ("random", "balanced", "right-branching"):
        inputs, mask, transitions = batch(kind, lengths, args.dim, rng, device)
        prepared = prepare_batch(inputs, mask, model.leaves, model.node_dim, transitions)

        def plan():
            rows = (prepared.word_rows(), prepared.step_rows(), prepared.base)
            return plan_levels(prepared.transitions, *rows)

        runs = {
            "seq": lambda: model(inputs, mask, transitions, runner=run_thin_stack),
            "lvl": lambda: model(inputs, mask, transitions, runner=run_levelwise),
        }
        cases = {"plan": plan}
        for name, run in runs.items():
            cases[f"{name} fwd"] = lambda run=run: forward_only(run)
            cases[f"{name} fwd+bwd"] = lambda run=run: run().sentence.sum().backward()
        # Interleaved, so that load from other processes hits every case alike; the first
        # round only warms up.
        times = {name: [] for name in cases}
        for round_ in range(args.repeats + 1):
            for name, case in cases.items():
                elapsed = timed_ms(case, device)
                if round_:
                    times[name].append(elapsed)
        levels = plan().levels
        composed = int(sum(level[0].numel() for level in levels))
        print(
            f"{kind}: T={transitions.size(1)} steps, {len(levels)} levels; rows composed: "
            f"seq {transitions.numel()}, lvl {composed}"
        )
        for name, values in times.items():
            print(f"  {name:>12}: median {statistics.median(values):8.1f}  min {min(values):8.1f}")


if __name__ == "__main__":
    main()
