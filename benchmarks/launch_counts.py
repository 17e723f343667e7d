"""Kernel launches per step of the thin stack on the GPU path, counted on the CPU: the PyTorch
step loop on its static-shape path (what a GPU and its CUDA graphs run today) against the fused
runner (``spinn_core/fused``: Triton kernels, run here by Triton's interpreter), for inference
and for a training step (forward and backward), for SPINN-PI-NT's thin stack, SPINN-PI and the
full SPINN (greedy parse in inference, teacher forcing and the transition loss in training).

    TRITON_INTERPRET=1 python benchmarks/launch_counts.py [--out DIR]

What counts as a launch: every Triton kernel launched (``kernels.launches``), and every ATen
operation that launches work on a GPU -- views, metadata queries and uninitialised allocations
excluded, and what Triton's interpreter dispatches itself to run a kernel on CPU tensors (a GPU
launch dispatches none). A pass costs ``fixed + per_step * (2N - 1)``: both are measured from
passes over sentences of two lengths (all of one length, so every sentence runs every step),
per_step = the difference over the difference in steps. Counts depend on the code, not on the
machine, its load, or the sizes B and D (small ones make the interpreter quick); torch alone and
Triton.
"""

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Callable, Dict, List

os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton is imported

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from spinn_core.fused import kernels, run_fused_thin_stack  # noqa: E402
from spinn_core.policies import Given, Greedy  # noqa: E402
from spinn_core.runners.thin_stack import run_thin_stack  # noqa: E402
from spinn_core.spinn import Spinn  # noqa: E402
from spinn_core.supervision import transition_loss  # noqa: E402
from spinn_core.testing import make_batch  # noqa: E402

# name -> (tracking_dim, predict_transitions)
VARIANTS = {
    "SPINN-PI-NT, thin stack": (0, False),
    "SPINN-PI": (7, False),
    "full SPINN": (9, True),
}
RUNNERS = {"PyTorch static path": run_thin_stack, "fused (Triton)": run_fused_thin_stack}
# Operations that launch nothing on a GPU: uninitialised allocations and metadata.
NO_LAUNCH = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "sym_size",
             "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "_local_scalar_dense",
             "lift_fresh", "_to_copy"}  # fmt: skip


class CountLaunches(TorchDispatchMode):
    """Counts ATen operations that launch work (see the module docstring) and Triton kernels."""

    def __init__(self) -> None:
        super().__init__()
        self.aten = 0
        self.names: Dict[str, int] = {}
        self.kernels_before = kernels.launches.total

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if not kernels.launches.launching and not func.is_view and name not in NO_LAUNCH:
            self.aten += 1
            self.names[name] = self.names.get(name, 0) + 1
        return func(*args, **(kwargs or {}))

    @property
    def triton(self) -> int:
        return kernels.launches.total - self.kernels_before


def model_and_batch(tracking: int, parser: bool, length: int, batch_size: int, hidden: int):
    torch.manual_seed(0)
    model = Spinn(hidden, hidden, tracking_dim=tracking, predict_transitions=parser)
    model.static_shapes = True  # the GPU's path, on the CPU
    inputs, mask, transitions = make_batch([length] * batch_size, hidden, random.Random(0))
    return model, inputs, mask, transitions


def passes(model, inputs, mask, transitions, parser: bool, runner) -> Dict[str, Callable]:
    def inference() -> None:
        model.eval()
        with torch.no_grad():
            if parser:
                model(inputs, mask, None, policy=Greedy(), runner=runner)
            else:
                model(inputs, mask, transitions, policy=Given(), runner=runner)

    def training() -> None:
        model.train()
        out = model(inputs, mask, transitions, policy=Given(), runner=runner)
        loss = out.sentence.pow(2).sum()
        if parser:
            loss = loss + transition_loss(out, transitions)
        loss.backward()

    return {"inference": inference, "training": training}


def count(function: Callable[[], None]) -> Dict[str, int]:
    function()  # anything done once per model (Triton decorates its kernels at the first launch)
    with CountLaunches() as counter:
        function()
    return {"aten": counter.aten, "triton": counter.triton, "total": counter.aten + counter.triton}


def per_step(lengths: List[int], batch_size: int, hidden: int) -> Dict[str, Dict]:
    results: Dict[str, Dict] = {}
    short, long = lengths
    for variant, (tracking, parser) in VARIANTS.items():
        for runner_name, runner in RUNNERS.items():
            counted = {}
            for length in (short, long):
                model, inputs, mask, transitions = model_and_batch(
                    tracking, parser, length, batch_size, hidden
                )
                counted[length] = {
                    name: count(function)
                    for name, function in passes(
                        model, inputs, mask, transitions, parser, runner
                    ).items()
                }
            row = {}
            for kind in ("inference", "training"):
                steps = 2 * (long - short)
                a, b = counted[short][kind], counted[long][kind]
                step = (b["total"] - a["total"]) / steps
                row[kind] = {
                    "per_step": step,
                    "per_step_triton": (b["triton"] - a["triton"]) / steps,
                    "per_step_aten": (b["aten"] - a["aten"]) / steps,
                    "fixed": a["total"] - step * (2 * short - 1),
                    f"pass_at_N={long}": b["total"],
                    f"per_step_of_a_pass_at_N={long}": b["total"] / (2 * long - 1),
                }
            results.setdefault(variant, {})[runner_name] = row
    return results


def table(results: Dict[str, Dict], long: int) -> str:
    rows = [
        "| variant | runner | inference: per step | fixed | training: per step | fixed | "
        f"inference, a pass at N = {long} / (2N - 1) | training, the same |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant, by_runner in results.items():
        for runner_name, row in by_runner.items():
            inference, training = row["inference"], row["training"]
            whole = f"per_step_of_a_pass_at_N={long}"
            rows.append(
                f"| {variant} | {runner_name} | {inference['per_step']:.1f} | "
                f"{inference['fixed']:.0f} | {training['per_step']:.1f} | "
                f"{training['fixed']:.0f} | {inference[whole]:.1f} | {training[whole]:.1f} |"
            )
    return "\n".join(rows)


def main(argv=None) -> Dict[str, Dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="10,30", help="the two sentence lengths N")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--out", type=Path, default=None, help="write launch_counts.{json,md}")
    args = parser.parse_args(argv)
    if not kernels.interpreter_requested():
        sys.exit("set TRITON_INTERPRET=1 (the fused kernels run in Triton's interpreter here)")
    torch.set_num_threads(1)
    lengths = [int(n) for n in args.lengths.split(",")]
    results = per_step(lengths, args.batch_size, args.hidden)
    text = table(results, lengths[1])
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        settings = {"lengths": lengths, "batch_size": args.batch_size, "hidden": args.hidden}
        (args.out / "launch_counts.json").write_text(
            json.dumps({"settings": settings, "results": results}, indent=1) + "\n"
        )
        preamble = (
            "Launches (Triton kernels and ATen operations that launch GPU work) of a pass of the "
            "thin stack on the GPU path, counted on the CPU by `TRITON_INTERPRET=1 python "
            "benchmarks/launch_counts.py` (torch " + torch.__version__ + "): a pass costs "
            "`fixed + per step x (2N - 1)`, from passes over sentences of "
            f"{lengths[0]} and {lengths[1]} words ({args.batch_size} sentences, D = "
            f"{args.hidden}; counts do not depend on B or D). The last two columns divide a "
            f"whole pass at N = {lengths[1]} by its steps, as the counts before the fused "
            "runner were given.\n\n"
        )
        (args.out / "launch_counts.md").write_text(preamble + text + "\n")
        print(f"wrote {args.out}/launch_counts.{{json,md}}", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
