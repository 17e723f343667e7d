"""Does fusing a step's elementwise work pay? The TreeLSTM cell after its product (gates and the
children's c to the parent's [h; c]: two nonlinearities, the cell update, a concatenation)
through ``torch.compile`` (inductor: C++ on the CPU, Triton on a GPU) against eager, inside the
thin-stack PI-NT's encoding pass.

    python benchmarks/compiled_cell.py [--device cpu|cuda] [--hidden 128] [--batch-size 32]
        [--rounds 9] [--threads 1]

Times the pass both ways, interleaved round by round (median), after checking they give the
same sentence vectors (max |difference| printed), and reports the first compiled pass's time
(compilation included). The cell is compiled with dynamic shapes (the CPU's sparse path
composes a different number of rows each step). An experiment: the encoder does not use it
(docs/speed.md says what it measured).
"""

import argparse
import random
import statistics
import time

import torch

import spinn_core.cells as cells
from spinn_core.spinn import Spinn
from spinn_core.testing import make_batch


def cell(gates: torch.Tensor, c_children: torch.Tensor, size: int) -> torch.Tensor:
    """Eq. 1-3 after the product: gates (r, 5D) = i, f_l, f_r, o | g; c_children (r, 2, D)."""
    tanh_g = torch.tanh(gates[:, 4 * size :])
    acts = gates[:, : 4 * size].sigmoid().view(-1, 4, size)
    i, f_left, f_right, o = acts.unbind(1)
    c_left, c_right = c_children.unbind(1)
    c = f_left * c_left + f_right * c_right + i * tanh_g
    return torch.cat([o * torch.tanh(c), c], dim=1)


def with_cell(function):
    """``cells._tree_lstm`` with its elementwise work done by ``function`` (inference only)."""

    def tree_lstm(linear, children, extra):
        rows, _, width = children.shape
        size = width // 2
        h_children, c_children = children.view(rows, 2, 2, size).unbind(2)
        h_children = h_children.reshape(rows, 2 * size)
        gates, place = linear.product([h_children] if extra is None else [h_children, extra])
        return function(gates, c_children, size), None, None, None, place

    return tree_lstm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(0)
    torch.manual_seed(0)
    model = Spinn(args.hidden, args.hidden, levelwise=False).to(args.device).eval()
    lengths = [rng.randint(10, 30) for _ in range(args.batch_size)]
    inputs, mask, transitions = make_batch(lengths, args.hidden, rng, args.device)
    variants = {"eager": cells._tree_lstm, "compiled": with_cell(torch.compile(cell, dynamic=True))}

    def run(name):
        cells._tree_lstm = variants[name]
        with torch.no_grad():
            out = model(inputs, mask, transitions).sentence
        if args.device == "cuda":
            torch.cuda.synchronize()
        return out

    try:
        reference = run("eager")
        started = time.perf_counter()
        compiled = run("compiled")
        first = time.perf_counter() - started
        times = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name in variants:
                run(name)
                started = time.perf_counter()
                run(name)
                times[name].append(time.perf_counter() - started)
    finally:
        cells._tree_lstm = variants["eager"]
    eager, fused = (statistics.median(times[name]) for name in variants)
    print(
        f"{args.device}, D = {args.hidden}, B = {args.batch_size}: eager {eager * 1e3:.1f} ms, "
        f"compiled cell {fused * 1e3:.1f} ms ({eager / fused:.2f}x); first compiled pass "
        f"{first:.1f} s; max |difference| {float((compiled - reference).abs().max()):.1e}"
    )


if __name__ == "__main__":
    main()
