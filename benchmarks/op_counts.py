"""What a pass of each SPINN variant does, counted rather than timed: matrix-product FLOPs
(``torch.utils.flop_counter``) and the number of ATen operations dispatched, for inference
and for a training step (forward and backward), on the same random batch.

    python benchmarks/op_counts.py [--batch-sizes 32,128] [--hidden 300] [--out DIR]

Counts do not depend on the machine's load, so two versions of the code can be compared on
a busy machine where timings cannot: ``PYTHONPATH=<checkout> python benchmarks/op_counts.py``
counts the code of ``<checkout>`` (an older commit too: this file imports only ``Spinn``,
``transition_loss`` and ``make_batch``). Lengths uniform in [10, 30], random binary trees, one
thread. Needs torch alone.
"""

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Dict

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from spinn_core.policies import Given, Greedy
from spinn_core.spinn import Spinn
from spinn_core.supervision import transition_loss
from spinn_core.testing import make_batch

# name -> (tracking_dim, predict_transitions, levelwise)
VARIANTS = {
    "SPINN-PI-NT level-wise": (0, False, True),
    "SPINN-PI-NT thin-stack loop": (0, False, False),
    "SPINN-PI": (61, False, False),
    "SPINN (own parser)": (79, True, False),
}


class _CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def counts(batch_size: int, hidden: int, tracking: int, parser: bool, levelwise: bool) -> Dict:
    torch.manual_seed(0)
    rng = random.Random(0)
    options = dict(tracking_dim=tracking, predict_transitions=parser)
    model = Spinn(hidden, hidden, levelwise=levelwise, **options)
    lengths = [rng.randint(10, 30) for _ in range(batch_size)]
    inputs, mask, transitions = make_batch(lengths, hidden, rng, "cpu", torch.float32)

    def encode() -> None:
        with torch.no_grad():
            model.eval()
            model(
                inputs,
                mask,
                None if parser else transitions,
                policy=Greedy() if parser else Given(),
            )

    def train() -> None:
        model.train()
        out = model(inputs, mask, transitions, policy=Given())
        loss = out.sentence.pow(2).sum()
        if parser:
            loss = loss + transition_loss(out, transitions)
        loss.backward()

    result = {}
    for name, function in (("encoding", encode), ("training", train)):
        function()  # anything done once per model
        with FlopCounterMode(display=False) as flops:
            function()
        ops = _CountOps()
        with ops:
            function()
        result[name] = {"gflop": flops.get_total_flops() / 1e9, "aten_ops": ops.count}
    return result


def main(argv=None) -> Dict[str, Dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-sizes", default="32,128")
    parser.add_argument("--hidden", type=int, default=300)
    parser.add_argument("--out", type=Path, default=None, help="write op_counts.json here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results: Dict[str, Dict] = {}
    rows = [
        "| model | B | encoding GFLOP | encoding ATen ops | training GFLOP | training ATen ops |"
    ]
    rows.append("|---|---:|---:|---:|---:|---:|")
    for name, (tracking, parser_on, levelwise) in VARIANTS.items():
        for batch_size in [int(b) for b in args.batch_sizes.split(",")]:
            result = counts(batch_size, args.hidden, tracking, parser_on, levelwise)
            results.setdefault(name, {})[str(batch_size)] = result
            enc, tra = result["encoding"], result["training"]
            rows.append(
                f"| {name} | {batch_size} | {enc['gflop']:.3f} | {enc['aten_ops']} | "
                f"{tra['gflop']:.3f} | {tra['aten_ops']} |"
            )
    print("\n".join(rows))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "op_counts.json").write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.out / 'op_counts.json'}", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
