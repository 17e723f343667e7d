"""Very long inputs: one sentence of up to 1,000 words, and a batch of 10,000 one-word
sentences, through every SPINN variant, forward and backward.

    python benchmarks/long_inputs.py [--device cpu|cuda] [--lengths 125,250,500,1000]
        [--many 10000] [--hidden 300] [--repeats 3] [--threads N] [--out benchmarks/results]

For each variant and length N: a training step (forward, loss, backward) on one N-word
sentence whose tree is right-branching, the deepest binary tree there is (height N - 1; the
thin stack holds N items before the first REDUCE; level-wise composition needs N - 1 levels).
Reported: wall time of the step (median of ``--repeats``), what autograd keeps for backward
(CPU: saved tensors + thin-stack tables; CUDA: peak allocated), and that nothing is NaN or
inf. Memory linear in N means each extra word costs the same: the table gives the cost per
word between successive lengths (constant if linear; it would double with each doubling of N
if quadratic). Then the same for a batch of
``--many`` one-word sentences. Python's recursion limit is left at its default throughout.

Loss: the sum of the sentence vectors, plus for SPINN with gold transitions the cross-entropy
of its transition classifier (teacher forcing). SPINN with its own parser follows its
predictions (the argmax has no gradient; the compositions do).
"""

import argparse
import math
import sys
from pathlib import Path
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    LSTM,
    PI,
    PI_NT,
    PI_NT_LEVELWISE,
    PI_TRACKING_DIM,
    SPINN_TRACKING_DIM,
    LstmEncoder,
    environment,
    fmt,
    markdown_table,
    median,
    parse_ints,
    time_interleaved,
    training_memory_bytes,
    write_results,
)

from spinn_core.policies import Greedy  # noqa: E402
from spinn_core.spinn import Spinn  # noqa: E402
from spinn_core.transitions import PAD, right_branching_transitions  # noqa: E402

SPINN_GOLD = "SPINN, gold transitions"
SPINN_OWN = "SPINN, own parser"
ROWS = [PI_NT_LEVELWISE, PI_NT, PI, SPINN_GOLD, SPINN_OWN, LSTM]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--lengths", type=parse_ints, default=parse_ints("125,250,500,1000"))
    parser.add_argument("--many", type=int, default=10_000, help="one-word sentences in a batch")
    parser.add_argument("--hidden", type=int, default=300, help="D, also the word vector size")
    parser.add_argument("--repeats", type=int, default=3, help="timed steps; the median is kept")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args()


def build_models(dim: int, seed: int) -> Dict[str, torch.nn.Module]:
    torch.manual_seed(seed)
    pi_nt = Spinn(dim, dim)
    spinn = Spinn(dim, dim, tracking_dim=SPINN_TRACKING_DIM, predict_transitions=True)
    thin_stack = Spinn(dim, dim, levelwise=False)
    thin_stack.load_state_dict(pi_nt.state_dict())  # the same function, the other path
    return {
        PI_NT_LEVELWISE: pi_nt,
        PI_NT: thin_stack,
        PI: Spinn(dim, dim, tracking_dim=PI_TRACKING_DIM),
        SPINN_GOLD: spinn,
        SPINN_OWN: spinn,
        LSTM: LstmEncoder(dim, dim),
    }


def training_step(
    name: str, model: torch.nn.Module, inputs, mask, transitions
) -> Callable[[], torch.Tensor]:
    """A function that runs forward and returns the loss (backward is the caller's)."""

    def step() -> torch.Tensor:
        model.zero_grad(set_to_none=True)
        if name == LSTM:
            return model(inputs, mask).sum()
        if name == SPINN_OWN:
            return model(inputs, mask, policy=Greedy()).sentence.sum()
        output = model(inputs, mask, transitions)
        loss = output.sentence.sum()
        if output.transition_logits is not None:
            steps = transitions[:, : output.transition_logits.size(1)]
            logits = output.transition_logits[steps != PAD]
            loss = loss + F.cross_entropy(logits, steps[steps != PAD])
        return loss

    return step


def check_finite(name: str, model: torch.nn.Module, step: Callable[[], torch.Tensor]) -> None:
    loss = step()
    loss.backward()
    bad = [
        n for n, p in model.named_parameters() if p.grad is not None and not p.grad.isfinite().all()
    ]
    if not math.isfinite(float(loss)) or bad:
        raise AssertionError(f"{name}: loss {float(loss)}, non-finite gradients in {bad}")


def measure(
    models: Dict[str, torch.nn.Module], inputs, mask, transitions, args, label: str
) -> Dict[str, Dict[str, float]]:
    results: Dict[str, Dict[str, float]] = {}
    steps = {
        name: training_step(name, model, inputs, mask, transitions)
        for name, model in models.items()
    }
    for name, step in steps.items():
        check_finite(name, models[name], step)
        memory = training_memory_bytes(step, args.device)
        results[name] = {"memory_bytes": memory}
        print(f"  {label} {name}: {memory / 2**20:.1f} MiB", file=sys.stderr, flush=True)
    timed = {name: (lambda step=step: step().backward()) for name, step in steps.items()}
    times = time_interleaved(timed, args.device, warmup=0, repeats=args.repeats)
    for name, values in times.items():
        results[name]["seconds"] = median(values)
        results[name]["all_seconds"] = values  # type: ignore[assignment]
        print(f"  {label} {name}: {median(values):.3f} s", file=sys.stderr, flush=True)
    return results


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dim = args.hidden
    models = {name: model.to(device) for name, model in build_models(dim, args.seed).items()}
    generator = torch.Generator().manual_seed(args.seed)

    by_length: Dict[int, Dict[str, Dict[str, float]]] = {}
    for length in args.lengths:
        inputs = torch.randn(1, length, dim, generator=generator).to(device)
        mask = torch.ones(1, length, dtype=torch.bool, device=device)
        transitions = torch.tensor([right_branching_transitions(length)], device=device)
        by_length[length] = measure(models, inputs, mask, transitions, args, f"N={length}")

    inputs = torch.randn(args.many, 1, dim, generator=generator).to(device)
    mask = torch.ones(args.many, 1, dtype=torch.bool, device=device)
    transitions = torch.zeros(args.many, 1, dtype=torch.long, device=device)
    many = measure(models, inputs, mask, transitions, args, f"{args.many} x 1 word")

    lengths = sorted(args.lengths)
    mib = lambda b: fmt(b / 2**20)  # noqa: E731
    pairs = list(zip(lengths, lengths[1:]))
    header = (
        ["variant"]
        + [f"N={n} s" for n in lengths]
        + [f"N={n} MiB" for n in lengths]
        + [f"KiB / word, N={a}→{b}" for a, b in pairs]
        + [f"{args.many:,} x 1 word s", f"{args.many:,} x 1 word MiB"]
    )
    rows: List[List[str]] = []
    for name in ROWS:
        memory = {n: by_length[n][name]["memory_bytes"] for n in lengths}
        # Linear in N: each extra word costs the same, whatever N (quadratic: it doubles).
        per_word = [(memory[b] - memory[a]) / (b - a) / 2**10 for a, b in pairs]
        for (a, b), value in zip(pairs, per_word):
            by_length[b][name][f"kib_per_word_from_{a}"] = value
        rows.append(
            [name]
            + [fmt(by_length[n][name]["seconds"]) for n in lengths]
            + [mib(memory[n]) for n in lengths]
            + [fmt(value) for value in per_word]
            + [fmt(many[name]["seconds"]), mib(many[name]["memory_bytes"])]
        )
    env = environment(args.device)
    settings = (
        f"D = {dim}, one right-branching sentence of N words (height N - 1), then "
        f"{args.many:,} one-word sentences in one batch; training step = forward + backward; "
        f"median of {args.repeats}; device {args.device}, torch {env['torch']}, "
        f"{env['torch_threads']} thread(s); Python recursion limit {sys.getrecursionlimit()}."
    )
    markdown = (
        "# Very long inputs\n\n"
        + settings
        + " Memory: "
        + ("peak allocated" if args.device == "cuda" else "saved for backward + thin-stack tables")
        + ". No NaN or inf in any loss or gradient.\n\n"
        + markdown_table(header, rows)
    )
    print(markdown)
    write_results(
        args.out,
        f"long_inputs_{args.device}",
        markdown,
        {
            "settings": {**vars(args), "out": str(args.out)},
            "environment": env,
            "by_length": {str(n): r for n, r in by_length.items()},
            "many_one_word": many,
        },
    )


if __name__ == "__main__":
    main()
