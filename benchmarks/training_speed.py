"""Training speed (steps / second) and training memory against sentence length.

    python benchmarks/training_speed.py [--device cpu|cuda] [--batch-sizes 32,128]
        [--lengths 25,50,100] [--memory-batch 32] [--hidden 300] [--max-len 30]
        [--repeats 5] [--out benchmarks/results]

Speed: one step = zero_grad, forward, loss, backward, RMSprop step, on random sentences
(lengths uniform in [max_len // 3, max_len], random binary trees, given transitions). Loss = sum
of the sentence vectors, plus for full SPINN the cross-entropy of its transition classifier
against the given transitions (teacher forcing, as the paper trains it).

Memory: one training step on a batch of sentences all N words long. CUDA: peak
``torch.cuda.max_memory_allocated`` during forward + backward, less what was allocated before.
CPU: bytes autograd saves for backward (saved-tensor hooks, each storage once) plus the
thin-stack tapes. A naive SPINN-PI-NT that copies a dense stack every step is included as the
contrast: its memory grows as N^2, the thin stack's as N.
"""

import argparse
import copy
import math
import sys
from pathlib import Path
from typing import Callable, Dict

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    LSTM,
    NAIVE_STACK,
    PI,
    PI_NT,
    PI_NT_LEVELWISE,
    SPINN_FULL,
    SPINN_SAMPLED,
    LstmEncoder,
    NaiveStackSpinn,
    TreeBatch,
    autocast_context,
    benchmark_batch,
    build_spinn_models,
    check_pi_nt_implementations,
    environment,
    fmt,
    levelwise,
    loglog_plot,
    markdown_table,
    median,
    parse_ints,
    random_lengths,
    time_interleaved,
    training_memory_bytes,
    write_results,
)

from spinn_core.policies import Sampled  # noqa: E402
from spinn_core.transitions import PAD  # noqa: E402

SPEED_ROWS = [LSTM, PI_NT, PI_NT_LEVELWISE, PI, SPINN_FULL, SPINN_SAMPLED]
MEMORY_ROWS = SPEED_ROWS + [NAIVE_STACK]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch-sizes", type=parse_ints, default=parse_ints("32,128"))
    parser.add_argument(
        "--lengths",
        type=parse_ints,
        default=parse_ints("25,50,100"),
        help="sentence lengths N of the memory measurement",
    )
    parser.add_argument("--memory-batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=300, help="D, also the word vector size")
    parser.add_argument("--max-len", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5, help="timed steps; the median is kept")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps before each timed one")
    parser.add_argument("--lstm", default="packed", choices=["packed", "padded"])
    parser.add_argument(
        "--autocast", default=None, choices=["bf16"], help="bf16 autocast around forward + loss"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args()


def build_models(args: argparse.Namespace) -> Dict[str, torch.nn.Module]:
    """Every model of the memory rows, in train mode on the device, each with its own
    parameters (the level-wise and naive rows get copies of PI-NT's)."""
    models: Dict[str, torch.nn.Module] = dict(build_spinn_models(args.hidden, args.seed))
    models[PI_NT_LEVELWISE] = copy.deepcopy(models[PI_NT])
    models[NAIVE_STACK] = NaiveStackSpinn(copy.deepcopy(models[PI_NT]))
    torch.manual_seed(args.seed)
    models[LSTM] = LstmEncoder(args.hidden, args.hidden, packed=args.lstm == "packed")
    return {name: model.to(args.device).train() for name, model in models.items()}


def loss_functions(
    models: Dict[str, torch.nn.Module], batch: TreeBatch
) -> Dict[str, Callable[[], torch.Tensor]]:
    """Per model, a call computing the training loss on ``batch`` (already on the device)."""
    x, mask, transitions = batch.inputs, batch.mask, batch.transitions

    def full_spinn() -> torch.Tensor:
        out = models[SPINN_FULL](x, mask, transitions)
        logits = out.transition_logits
        parse_loss = F.cross_entropy(
            logits.reshape(-1, 2), out.transitions.reshape(-1), ignore_index=PAD
        )
        return out.sentence.sum() + parse_loss

    def sampling_parser() -> torch.Tensor:
        # REINFORCE's surrogate: the task loss, the log-probability of each sampled tree
        # times a reward (a stand-in: the sentence vector's sum, no gradient), an entropy bonus.
        out = models[SPINN_SAMPLED](x, mask, policy=Sampled())
        reward = out.sentence.detach().sum(dim=1)
        score = (out.action_log_probs.sum(dim=1) * reward).sum()
        return out.sentence.sum() - score - 1e-4 * out.action_entropy.sum()

    calls = {
        LSTM: lambda: models[LSTM](x, mask).sum(),
        PI_NT: lambda: models[PI_NT](x, mask, transitions).sentence.sum(),
        PI: lambda: models[PI](x, mask, transitions).sentence.sum(),
        SPINN_FULL: full_spinn,
        SPINN_SAMPLED: sampling_parser,
        NAIVE_STACK: lambda: models[NAIVE_STACK](x, mask, transitions).sum(),
        PI_NT_LEVELWISE: lambda: levelwise(
            models[PI_NT_LEVELWISE], x, mask, transitions
        ).sentence.sum(),
    }
    return calls


def training_step(
    optimizer: torch.optim.Optimizer, loss: Callable[[], torch.Tensor], device: str, autocast
) -> Callable[[], None]:
    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with autocast_context(device, autocast):
            value = loss()
        value.backward()
        optimizer.step()

    return step


def measure_speed(args, models) -> Dict[str, Dict[str, Dict[str, object]]]:
    optimizers = {
        name: torch.optim.RMSprop(models[name].parameters(), lr=1e-4)
        for name in SPEED_ROWS
        if name in models
    }
    pool = benchmark_batch(
        random_lengths(max(args.batch_sizes), args.max_len, args.seed), args.hidden, args.seed
    )
    results: Dict[str, Dict[str, Dict[str, object]]] = {name: {} for name in optimizers}
    for batch_size in args.batch_sizes:
        losses = loss_functions(models, pool.head(batch_size).to(args.device))
        steps = {
            name: training_step(optimizer, losses[name], args.device, args.autocast)
            for name, optimizer in optimizers.items()
        }
        times = time_interleaved(steps, args.device, args.warmup, args.repeats)
        for name, seconds in times.items():
            results[name][str(batch_size)] = {
                "steps_per_second": 1.0 / median(seconds),
                "repeat_seconds": seconds,
            }
        print(
            f"speed, batch {batch_size}: "
            + ", ".join(
                f"{name} {fmt(results[name][str(batch_size)]['steps_per_second'])}"
                for name in times
            )
            + " steps/s",
            file=sys.stderr,
        )
    return results


def measure_memory(args, models) -> Dict[str, Dict[str, int]]:
    results: Dict[str, Dict[str, int]] = {name: {} for name in MEMORY_ROWS if name in models}
    for length in args.lengths:
        batch = benchmark_batch([length] * args.memory_batch, args.hidden, args.seed).to(
            args.device
        )
        losses = loss_functions(models, batch)
        for name in results:
            models[name].zero_grad(set_to_none=True)
            results[name][str(length)] = training_memory_bytes(losses[name], args.device)
            models[name].zero_grad(set_to_none=True)
        print(
            f"memory, N={length}: "
            + ", ".join(f"{name} {results[name][str(length)] / 2**20:.1f} MiB" for name in results),
            file=sys.stderr,
        )
    return results


def growth_exponent(by_length: Dict[str, int]) -> float:
    """Least-squares slope of log(bytes) against log(N): ~1 linear, ~2 quadratic."""
    points = [(math.log(int(n)), math.log(b)) for n, b in by_length.items()]
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else float("nan")


def render(data: Dict[str, object]) -> str:
    config, env = data["config"], data["environment"]
    speed, memory = data["speed"], data["memory"]
    sizes, lengths = config["batch_sizes"], config["lengths"]
    speed_rows = [
        [name]
        + [fmt(speed[name][str(b)]["steps_per_second"]) for b in sizes]
        + [fmt(speed[name][str(b)]["steps_per_second"] * b) for b in sizes]
        for name in SPEED_ROWS
        if name in speed
    ]
    # How far the tracking variants are from PI-NT level-wise and from the LSTM, per batch size.
    for faster, slower in [
        (PI_NT_LEVELWISE, PI),
        (PI_NT_LEVELWISE, SPINN_FULL),
        (PI_NT_LEVELWISE, SPINN_SAMPLED),
        (LSTM, SPINN_FULL),
    ]:
        if faster in speed and slower in speed:
            speed_rows.append(
                [f"*{faster} / {slower}*"]
                + [
                    fmt(
                        speed[faster][str(b)]["steps_per_second"]
                        / speed[slower][str(b)]["steps_per_second"]
                    )
                    + "×"
                    for b in sizes
                ]
                + ["" for _ in sizes]
            )
    speed_table = markdown_table(
        ["training"] + [f"steps/s B={b}" for b in sizes] + [f"sent/s B={b}" for b in sizes],
        speed_rows,
    )
    memory_rows = []
    for name in MEMORY_ROWS:
        if name not in memory:
            continue
        by_length = memory[name]
        first, last = str(lengths[0]), str(lengths[-1])
        memory_rows.append(
            [name]
            + [f"{by_length[str(n)] / 2**20:.1f}" for n in lengths]
            + [f"{by_length[last] / by_length[first]:.2f}×", f"{growth_exponent(by_length):.2f}"]
        )
    memory_table = markdown_table(
        [f"memory (MiB), B={config['memory_batch']}"]
        + [f"N={n}" for n in lengths]
        + [f"N={lengths[-1]} / N={lengths[0]}", "exponent"],
        memory_rows,
    )
    cuda = env["device"] == "cuda"
    notes = [
        f"{env['device']} ({env.get('gpu', env['cpu'])}, torch threads: {env['torch_threads']}), "
        f"torch {env['torch']}"
        + (f", {config['autocast']} autocast (speed)" if config.get("autocast") else "")
        + f"; D = word dim = {config['hidden']}.",
        f"Speed: lengths uniform in [{config['min_len']}, {config['max_len']}], random binary "
        f"trees; step = zero_grad + forward + backward + RMSprop step; median of "
        f"{config['repeats']} interleaved timed steps, each after {config['warmup']} untimed "
        f"step(s) of the same model. "
        f"nn.LSTM {config['lstm']}. Full SPINN: given transitions + transition cross-entropy. "
        "Sampling parser: the full SPINN with the Sampled policy, loss = sentence vectors + "
        "REINFORCE surrogate (log-probability of the sampled tree x a stand-in reward) - "
        "1e-4 x entropy.",
        "Memory: "
        + (
            "peak torch.cuda.max_memory_allocated over forward + backward, minus "
            "memory allocated before the step."
            if cuda
            else "bytes saved for backward (saved_tensors_hooks, unique storages) + "
            "thin-stack tapes + rows the loop layers keep for their weight gradients; "
            "parameters, gradients and transient buffers excluded."
        )
        + " All sentences exactly N words; exponent = slope of log(memory) vs log(N).",
    ]
    return speed_table + "\n\n" + memory_table + "\n\n" + "\n".join(f"- {note}" for note in notes)


def plot(data: Dict[str, object], path: Path) -> None:
    series, labels = {}, {}
    for name in MEMORY_ROWS:
        by_length = data["memory"].get(name)
        if by_length:
            lengths = sorted(int(n) for n in by_length)
            series[name] = (lengths, [by_length[str(n)] / 2**20 for n in lengths])
            labels[name] = f"{name} (exponent {growth_exponent(by_length):.2f})"
    kind = (
        "peak CUDA allocation"
        if data["environment"]["device"] == "cuda"
        else "autograd saved tensors + tape"
    )
    loglog_plot(
        path,
        series,
        "sentence length N (words)",
        "training memory (MiB)",
        f"Training memory, batch {data['config']['memory_batch']}, "
        f"D = {data['config']['hidden']} ({kind})",
        labels,
    )


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    models = build_models(args)
    data = {
        "benchmark": "training_speed",
        "config": {
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "min_len": max(1, args.max_len // 3),
        },
        "environment": environment(args.device),
        # Before any optimizer step, while the PI-NT copies still share their parameters.
        "checks_max_abs_diff_from_pi_nt": check_pi_nt_implementations(
            models[PI_NT],
            benchmark_batch(random_lengths(8, args.max_len, args.seed), args.hidden, args.seed).to(
                args.device
            ),
            models[NAIVE_STACK],
        ),
        "speed": measure_speed(args, models),
        "memory": measure_memory(args, models),
    }
    markdown = render(data)
    print(markdown)
    stem = f"training_{args.device}" + (f"_{args.autocast}" if args.autocast else "")
    write_results(args.out, stem, markdown, data)
    plot(data, args.out / f"{stem}_memory.png")
    print(f"\nwrote {args.out}/{stem}.md, .json, {stem}_memory.png", file=sys.stderr)


if __name__ == "__main__":
    main()
