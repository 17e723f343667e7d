"""Inference encoding speed (sentences / second), after the SPINN paper's §3.7 and Figure 3.

    python benchmarks/encoding_speed.py [--device cpu|cuda] [--batch-sizes 1,8,32,128,512]
        [--hidden 300] [--max-len 30] [--repeats 5] [--out benchmarks/results]

Every model encodes the same random sentences (N(0, 1) word vectors, lengths uniform in
[max_len // 3, max_len], random binary trees) under ``torch.no_grad()`` in eval mode. A batch of
size B is the first B sentences of one pool, padded to its own longest sentence. The recursive
TreeLSTM runs on the CPU, one sentence and one node at a time, on the first
min(B, --recursive-subset) sentences; its batch time is scaled up to B sentences.
"""

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Optional

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    COMPILED,
    FUSED,
    GRAPHED,
    LSTM,
    PI,
    PI_COMPILED,
    PI_NT,
    PI_NT_LEVELWISE,
    RECURSIVE,
    SPINN_COMPILED,
    SPINN_FULL,
    SPINN_SAMPLED,
    Graphed,
    LstmEncoder,
    TreeBatch,
    autocast_context,
    benchmark_batch,
    build_spinn_models,
    check_pi_nt_implementations,
    compiled_copy,
    environment,
    fmt,
    levelwise,
    loglog_plot,
    markdown_table,
    median,
    parse_ints,
    random_lengths,
    recursive_encode,
    time_interleaved,
    write_results,
)

from spinn_core.fused import run_fused_thin_stack  # noqa: E402
from spinn_core.policies import Given, Greedy, Sampled  # noqa: E402
from spinn_core.runners import run_thin_stack  # noqa: E402
from spinn_core.spinn import Spinn  # noqa: E402

ROWS = [
    PI_NT,
    PI_NT_LEVELWISE,
    PI,
    SPINN_FULL,
    SPINN_SAMPLED,
    PI_COMPILED,
    SPINN_COMPILED,
    *FUSED,
    *GRAPHED,
    LSTM,
    RECURSIVE,
]
LSTM_MODES = {
    "packed": "pack_padded_sequence, each sentence stops at its length",
    "padded": "all N steps on the padded batch",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch-sizes", type=parse_ints, default=parse_ints("1,8,32,128,512"))
    parser.add_argument("--hidden", type=int, default=300, help="D, also the word vector size")
    parser.add_argument("--max-len", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the median is kept")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before each timed one")
    parser.add_argument(
        "--recursive-subset",
        type=int,
        default=64,
        help="sentences the recursive TreeLSTM is timed on, per batch size",
    )
    parser.add_argument(
        "--lstm",
        default="packed",
        choices=["packed", "padded"],
        help="packed: pack_padded_sequence; padded: all N steps",
    )
    parser.add_argument(
        "--autocast",
        default=None,
        choices=["bf16"],
        help="run every model except the CPU recursive baseline under bf16 autocast",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="also time SPINN-PI and SPINN with torch.compile'd cells (CUDA graphs on cuda)",
    )
    parser.add_argument(
        "--cuda-graphs",
        action="store_true",
        help="also time the thin-stack variants replayed from CUDA graphs (on the CPU: the "
        "bucketed static-shape pass they capture, run eagerly)",
    )
    parser.add_argument(
        "--fused",
        action="store_true",
        help="also time the thin-stack variants on the fused kernels (spinn_core/fused; on the "
        "CPU through Triton's interpreter, with TRITON_INTERPRET=1: a check that they run, not "
        "a speed)",
    )
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args()


def encoders(
    models: Dict[str, torch.nn.Module], batch: TreeBatch
) -> Dict[str, Callable[[], object]]:
    """One zero-argument call per model encoding ``batch`` (already on the device)."""
    pi_nt = models[PI_NT]
    # The eager rows: the PyTorch step loop (the runner picker would take the fused kernels on
    # CUDA; they have rows of their own).
    loop = run_thin_stack
    calls = {
        PI_NT: lambda: pi_nt(batch.inputs, batch.mask, batch.transitions, runner=loop),
        PI_NT_LEVELWISE: lambda: levelwise(pi_nt, batch.inputs, batch.mask, batch.transitions),
    }
    calls[PI] = lambda: models[PI](batch.inputs, batch.mask, batch.transitions, runner=loop)
    calls[SPINN_FULL] = lambda: models[SPINN_FULL](
        batch.inputs, batch.mask, policy=Greedy(), runner=loop
    )
    for name, eager in FUSED.items():
        if name in models:
            given = None if eager == SPINN_FULL else batch.transitions
            policy = Greedy() if eager == SPINN_FULL else Given()
            calls[name] = lambda name=name, given=given, policy=policy: models[name](
                batch.inputs, batch.mask, given, policy=policy, runner=run_fused_thin_stack
            )
    calls[SPINN_SAMPLED] = lambda: models[SPINN_SAMPLED](batch.inputs, batch.mask, policy=Sampled())
    calls[LSTM] = lambda: models[LSTM](batch.inputs, batch.mask)
    for name, eager in GRAPHED.items():
        if name in models:
            given = eager in (PI_NT, PI)
            policy = {SPINN_FULL: Greedy(), SPINN_SAMPLED: Sampled()}.get(eager, Given())
            calls[name] = lambda name=name, given=given, policy=policy: models[name](
                batch.inputs, batch.mask, batch.transitions if given else None, policy=policy
            )
    if PI_COMPILED in models:
        calls[PI_COMPILED] = lambda: models[PI_COMPILED](
            batch.inputs, batch.mask, batch.transitions
        )
        calls[SPINN_COMPILED] = lambda: models[SPINN_COMPILED](
            batch.inputs, batch.mask, policy=Greedy()
        )
    return calls


def run(args: argparse.Namespace) -> Dict[str, object]:
    device = args.device
    spinn_models = build_spinn_models(args.hidden, args.seed)
    torch.manual_seed(args.seed)
    models: Dict[str, torch.nn.Module] = dict(spinn_models)
    models[LSTM] = LstmEncoder(args.hidden, args.hidden, packed=args.lstm == "packed")
    for model in models.values():
        model.to(device).eval()
    # The baseline runs on the CPU (as in the paper) with PI-NT's own parameters.
    cpu_pi_nt = copy.deepcopy(models[PI_NT]).cpu()

    pool = benchmark_batch(
        random_lengths(max(args.batch_sizes), args.max_len, args.seed), args.hidden, args.seed
    )
    checks = check_pi_nt_implementations(cpu_pi_nt, pool.head(min(8, len(pool))))
    if args.compile:
        checks.update(add_compiled_models(models, pool.head(min(8, len(pool))).to(device), device))
    if args.cuda_graphs:
        checks.update(add_graphed_models(models, pool.head(min(8, len(pool))).to(device)))
    if args.fused:
        checks.update(add_fused_models(models, pool.head(min(8, len(pool))).to(device)))

    results: Dict[str, Dict[int, Dict[str, object]]] = {name: {} for name in ROWS}
    for batch_size in args.batch_sizes:
        cpu_batch = pool.head(batch_size)
        batch = cpu_batch.to(device)
        subset = cpu_batch.head(min(batch_size, args.recursive_subset))
        calls = {
            name: autocast_call(call, device, args.autocast)
            for name, call in encoders(models, batch).items()
        }
        calls[RECURSIVE] = lambda: recursive_encode(cpu_pi_nt, subset.inputs, subset.trees)
        with torch.no_grad():
            times = time_interleaved(calls, device, args.warmup, args.repeats)
        for name, seconds in times.items():
            timed_sentences = len(subset) if name == RECURSIVE else batch_size
            per_sentence = median(seconds) / timed_sentences
            results[name][batch_size] = {
                "seconds_per_batch": per_sentence * batch_size,
                "sentences_per_second": 1.0 / per_sentence,
                "timed_sentences": timed_sentences,
                "repeat_seconds": seconds,
            }
        summary = ", ".join(
            f"{name} {fmt(results[name][batch_size]['sentences_per_second'])}" for name in times
        )
        print(
            f"batch {batch_size} (padded to {batch.mask.size(1)} words): {summary} sent/s",
            file=sys.stderr,
        )

    return {
        "benchmark": "encoding_speed",
        "config": {
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "min_len": max(1, args.max_len // 3),
        },
        "environment": environment(device),
        "checks_max_abs_diff_from_pi_nt": checks,
        "results": {
            name: {str(b): r for b, r in by_batch.items()}
            for name, by_batch in results.items()
            if by_batch
        },
    }


def autocast_call(
    call: Callable[[], object], device: str, dtype: Optional[str]
) -> Callable[[], object]:
    def run() -> object:
        with autocast_context(device, dtype):
            return call()

    return run


def add_compiled_models(
    models: Dict[str, torch.nn.Module], batch: TreeBatch, device: str
) -> Dict[str, Optional[float]]:
    """Adds the torch.compile'd copies (compiled on first use, here) and returns the max
    |difference| of their sentence vectors from the eager models' (raises above 1e-4)."""
    differences: Dict[str, Optional[float]] = {}
    for name, eager_name in COMPILED.items():
        eager = models[eager_name]
        assert isinstance(eager, Spinn)
        models[name] = compiled_copy(eager, device).eval()
        started = time.perf_counter()
        with torch.no_grad():
            policy = Greedy() if eager.has_parser else Given()
            given = None if eager.has_parser else batch.transitions
            expected = eager(batch.inputs, batch.mask, given, policy=policy).sentence
            got = models[name](batch.inputs, batch.mask, given, policy=policy).sentence
        print(f"{name}: compiled in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        differences[name] = float((got - expected).abs().max())
        if differences[name] > 1e-4:  # type: ignore[operator]
            raise AssertionError(f"{name} differs from the eager model: {differences[name]}")
    return differences


def add_graphed_models(
    models: Dict[str, torch.nn.Module], batch: TreeBatch
) -> Dict[str, Optional[float]]:
    """Adds the copies replayed from CUDA graphs and returns the max |difference| of their
    sentence vectors from the eager models' (raises above 1e-4; the sampling parser, whose
    draws differ, is checked for valid trees only)."""
    differences: Dict[str, Optional[float]] = {}
    for name, eager_name in GRAPHED.items():
        eager = models[eager_name]
        assert isinstance(eager, Spinn)
        models[name] = Graphed(eager).eval()
        if eager_name == SPINN_SAMPLED:
            differences[name] = None
            continue
        with torch.no_grad():
            policy = Greedy() if eager.has_parser else Given()
            given = None if eager.has_parser else batch.transitions
            expected = eager(batch.inputs, batch.mask, given, policy=policy).sentence
            got = models[name](batch.inputs, batch.mask, given, policy=policy).sentence
        differences[name] = float((got - expected).abs().max())
        if differences[name] > 1e-4:  # type: ignore[operator]
            raise AssertionError(f"{name} differs from the eager model: {differences[name]}")
    return differences


def add_fused_models(
    models: Dict[str, torch.nn.Module], batch: TreeBatch
) -> Dict[str, Optional[float]]:
    """Adds the rows of the fused kernels (the eager rows' own models: the same weights) and
    returns the max |difference| of their sentence vectors from the PyTorch step loop's
    (raises above 1e-4; on a GPU the kernels' float32 products run in TF32 where the loop's do,
    and the parser's near-ties may pick another move: see docs/speed.md)."""
    differences: Dict[str, Optional[float]] = {}
    for name, eager_name in FUSED.items():
        model = models[eager_name]
        assert isinstance(model, Spinn)
        models[name] = model
        with torch.no_grad():
            policy = Greedy() if model.has_parser else Given()
            given = None if model.has_parser else batch.transitions
            expected = model(
                batch.inputs, batch.mask, given, policy=policy, runner=run_thin_stack
            ).sentence
            got = model(
                batch.inputs, batch.mask, given, policy=policy, runner=run_fused_thin_stack
            ).sentence
        differences[name] = float((got - expected).abs().max())
        if differences[name] > 1e-4:  # type: ignore[operator]
            raise AssertionError(f"{name} differs from the step loop: {differences[name]}")
    return differences


def speed(data: Dict[str, object], name: str, batch_size: int):
    entry = data["results"].get(name, {}).get(str(batch_size))
    return None if entry is None else entry["sentences_per_second"]


def ratio(numerator, denominator):
    return None if numerator is None or denominator is None else numerator / denominator


# Speed ratios printed under the table: the paper's two (SPINN vs TreeRNN, LSTM vs SPINN).
# And how far the tracking variants are from PI-NT level-wise (issue 12's targets).
RATIOS = [
    (PI_NT_LEVELWISE, RECURSIVE),
    (PI_NT, RECURSIVE),
    (LSTM, PI_NT_LEVELWISE),
    (LSTM, PI),
    (LSTM, SPINN_FULL),
    (PI_NT_LEVELWISE, PI),
    (PI_NT_LEVELWISE, SPINN_FULL),
    (PI_NT_LEVELWISE, SPINN_SAMPLED),
    # Issue 46's targets: the thin-stack variants within 3x nn.LSTM at batch 512 on a GPU.
    (LSTM, PI_NT),
    *[(LSTM, name) for name in GRAPHED],
    # Issue 80's: the full SPINN within 2x nn.LSTM at batch 512 on a GPU, fused and replayed.
    *[(LSTM, name) for name in FUSED],
]


def render(data: Dict[str, object]) -> str:
    config, env = data["config"], data["environment"]
    sizes = config["batch_sizes"]
    header = ["sentences / s"] + [f"B={b}" for b in sizes]
    rows = [
        [name] + [fmt(speed(data, name, b)) for b in sizes]
        for name in ROWS
        if name in data["results"]
    ]
    for faster, slower in RATIOS:
        if faster not in data["results"] or slower not in data["results"]:
            continue
        rows.append(
            [f"*{faster} / {slower}*"]
            + [fmt(ratio(speed(data, faster, b), speed(data, slower, b))) + "×" for b in sizes]
        )
    notes = [
        f"Inference encoding speed, {env['device']} ({env.get('gpu', env['cpu'])}, torch threads: "
        f"{env['torch_threads']}), torch {env['torch']}"
        + (f", {config['autocast']} autocast" if config.get("autocast") else "")
        + ".",
        f"D = word dim = {config['hidden']}; lengths uniform in [{config['min_len']}, "
        f"{config['max_len']}], random binary trees, each batch padded to its longest sentence; "
        f"median of {config['repeats']} interleaved timed runs, each after {config['warmup']} "
        f"untimed run(s) of the same model.",
        f"nn.LSTM: {LSTM_MODES[config['lstm']]}. "
        f"Full SPINN runs its own, untrained, parser (the Greedy policy), the sampling parser "
        f"the Sampled policy. Recursive TreeLSTM: "
        f"CPU, one node at a time, timed on min(B, {config['recursive_subset']}) sentences and "
        f"scaled to sentences / s; it matches PI-NT to "
        f"{data['checks_max_abs_diff_from_pi_nt']['recursive']:.1e}.",
    ]
    return markdown_table(header, rows) + "\n\n" + "\n".join(f"- {n}" for n in notes)


def plot(data: Dict[str, object], path: Path) -> None:
    series = {}
    for name in ROWS:
        by_batch = data["results"].get(name)
        if by_batch:
            sizes = sorted(int(b) for b in by_batch)
            series[name] = (sizes, [by_batch[str(b)]["seconds_per_batch"] for b in sizes])
    config, env = data["config"], data["environment"]
    loglog_plot(
        path,
        series,
        "batch size",
        "seconds per batch (feedforward)",
        f"Encoding time, N ≤ {config['max_len']}, D = {config['hidden']} "
        f"({env.get('gpu', env['device'])}, torch threads: {env['torch_threads']})",
    )


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    data = run(args)
    markdown = render(data)
    print(markdown)
    stem = f"encoding_speed_{args.device}" + (f"_{args.autocast}" if args.autocast else "")
    write_results(args.out, stem, markdown, data)
    plot(data, args.out / f"{stem}.png")
    print(f"\nwrote {args.out}/{stem}.md, .json, .png", file=sys.stderr)


if __name__ == "__main__":
    main()
