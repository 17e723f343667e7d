"""Shared pieces of the benchmark scripts: random data, the models under test, the recursive
TreeLSTM baseline, interleaved timing, memory measurement and result output.

Run the scripts from the repository root (``python benchmarks/encoding_speed.py``); they put
this folder on ``sys.path`` themselves.
"""

import contextlib
import copy
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from spinn_core.graphs import GraphedPasses, GraphedSpinn
from spinn_core.output import SpinnOutput
from spinn_core.policies import Given
from spinn_core.runners import run_levelwise
from spinn_core.spinn import Spinn
from spinn_core.testing import (
    TreeBatch,
    random_tree_batch,
    recursive_encode,
    saved_for_backward_bytes,
)
from spinn_core.transitions import REDUCE, SHIFT

# Tracking sizes of the paper's 300D models (Table 1 / appendix): SPINN-PI 61, full SPINN 79.
PI_TRACKING_DIM = 61
SPINN_TRACKING_DIM = 79

# Row names, shared by every table, JSON file and plot.
LSTM = "nn.LSTM"
PI_NT = "SPINN-PI-NT thin-stack loop"
PI_NT_LEVELWISE = "SPINN-PI-NT level-wise (default)"
PI = "SPINN-PI"
SPINN_FULL = "SPINN (own parser)"
SPINN_SAMPLED = "SPINN, sampling parser"
RECURSIVE = "recursive TreeLSTM (CPU, batch 1)"
NAIVE_STACK = "naive stack-copy SPINN-PI-NT"
PI_COMPILED = "SPINN-PI, torch.compile'd cells"
SPINN_COMPILED = "SPINN (own parser), torch.compile'd cells"
COMPILED = {PI_COMPILED: PI, SPINN_COMPILED: SPINN_FULL}
# Rows replayed from CUDA graphs (``--cuda-graphs``): row -> the eager row of the same model.
# The graphs replay what the runner picker chooses: on CUDA, the fused kernels where they
# implement the pass (every row but the sampling parser's).
GRAPHED = {f"{name}, CUDA graphs": name for name in (PI_NT, PI, SPINN_FULL, SPINN_SAMPLED)}
# Rows of the fused runner (``--fused``: spinn_core/fused, Triton kernels, launched eagerly;
# on the CPU in Triton's interpreter): row -> the eager row of the same model. The eager rows
# themselves run the PyTorch step loop (on CUDA its static-shape path), as before the kernels.
FUSED = {f"{name}, fused kernels": name for name in (PI_NT, PI, SPINN_FULL)}


# --- data ---------------------------------------------------------------------------------


def benchmark_batch(lengths: Sequence[int], dim: int, seed: int) -> TreeBatch:
    """Random N(0, 1) word vectors and random binary trees for sentences of ``lengths``, the
    same for a given seed on every run and machine."""
    return random_tree_batch(
        lengths, dim, random.Random(seed), generator=torch.Generator().manual_seed(seed)
    )


def random_lengths(count: int, max_len: int, seed: int) -> List[int]:
    """Lengths uniform on the integers [max(1, max_len // 3), max_len]."""
    rng = random.Random(seed)
    return [rng.randint(max(1, max_len // 3), max_len) for _ in range(count)]


# --- models -------------------------------------------------------------------------------


class LstmEncoder(nn.Module):
    """A one-layer ``nn.LSTM`` sentence encoder: the final hidden state of each sentence.

    ``packed=True`` runs ``pack_padded_sequence`` (each sentence stops at its own length, as
    AllenNLP's seq2vec wrappers do); ``packed=False`` runs all N steps on the padded batch
    and takes the last step's state (faster, but wrong for sentences shorter than N).
    """

    def __init__(self, input_dim: int, hidden_dim: int, packed: bool = True) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, batch_first=True)
        self.packed = packed

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.packed:
            lengths = mask.sum(dim=1).cpu()
            inputs = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(inputs)
        return h_n[-1]


def build_spinn_models(dim: int, seed: int) -> Dict[str, Spinn]:
    """The three SPINN variants of the paper at width ``dim`` (word vectors also ``dim``), and
    the full SPINN once more for its sampling parser (the ``Sampled`` policy, what a latent-tree
    parser trained by REINFORCE runs)."""
    torch.manual_seed(seed)
    return {
        # The step-by-step thin stack; Spinn's default for PI-NT is level-wise, timed with
        # the level-wise runner on this same model.
        PI_NT: Spinn(dim, dim, levelwise=False),
        PI: Spinn(dim, dim, tracking_dim=PI_TRACKING_DIM),
        SPINN_FULL: Spinn(dim, dim, tracking_dim=SPINN_TRACKING_DIM, predict_transitions=True),
        SPINN_SAMPLED: Spinn(dim, dim, tracking_dim=SPINN_TRACKING_DIM, predict_transitions=True),
    }


def compiled_copy(model: Spinn, device: str) -> Spinn:
    """A copy of ``model`` whose composition and tracker run through ``torch.compile``
    (``dynamic=True``: the number of running sentences changes every step). On CUDA with
    ``mode="reduce-overhead"``, i.e. CUDA graphs recorded per shape. An experiment: the
    encoder does not use it (see benchmarks/README.md for what it measured)."""
    compiled = copy.deepcopy(model)
    mode = "reduce-overhead" if torch.device(device).type == "cuda" else None
    compiled.compose = torch.compile(compiled.compose, dynamic=True, mode=mode)  # type: ignore[assignment]
    if compiled.tracker is not None:
        compiled.tracker = torch.compile(compiled.tracker, dynamic=True, mode=mode)  # type: ignore[assignment]
    return compiled


class Graphed(nn.Module):
    """A copy of ``model`` whose passes replay CUDA graphs, one per length bucket
    (``GraphedSpinn``; captured on the first call of a bucket). On the CPU, which
    has none, its stand-in: the same bucketed static-shape pass, eager (``GraphedPasses`` with
    ``capture=False``), so that the rows run, and are checked, anywhere."""

    def __init__(self, model: Spinn) -> None:
        super().__init__()
        self.model = copy.deepcopy(model)
        self.graphed = GraphedSpinn(self.model)
        self.stand_in = GraphedPasses(self.model, capture=False)

    def forward(self, inputs, mask, transitions=None, policy=None) -> SpinnOutput:
        policy = policy if policy is not None else Given()
        if inputs.is_cuda:
            return self.graphed(inputs, mask, transitions, policy=policy)
        out = self.stand_in(inputs, mask, transitions, policy)
        if out is None:
            raise ValueError(f"no bucket for this batch: {self.stand_in.eager}")
        return out


def autocast_context(device: str, dtype: Optional[str]):
    """``torch.autocast`` to ``dtype`` ("bf16") on ``device``, or a context doing nothing."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype={"bf16": torch.bfloat16}[dtype])


def levelwise(
    model: Spinn, inputs: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor
) -> SpinnOutput:
    """SPINN-PI-NT composed level by level with ``model``'s layers."""
    return model(inputs, mask, transitions, runner=run_levelwise)


def check_pi_nt_implementations(
    model: Spinn, batch: TreeBatch, naive: Optional["NaiveStackSpinn"] = None, atol: float = 1e-4
) -> Dict[str, Optional[float]]:
    """Max |difference| of the sentence vectors of the other SPINN-PI-NT implementations
    (recursive, level-wise, naive stack) from ``model``'s, None where one is absent. Raises if
    one exceeds ``atol``: a speed or memory comparison must compare one function."""
    with torch.no_grad():
        reference = model(batch.inputs, batch.mask, batch.transitions).sentence
        others = {
            "recursive": recursive_encode(model, batch.inputs, batch.trees),
            "levelwise": levelwise(model, batch.inputs, batch.mask, batch.transitions).sentence,
        }
        if naive is not None:
            others["naive_stack"] = naive(batch.inputs, batch.mask, batch.transitions)
    differences: Dict[str, Optional[float]] = {"levelwise": None, "naive_stack": None}
    differences.update(
        {name: float((value - reference).abs().max()) for name, value in others.items()}
    )
    wrong = {name: d for name, d in differences.items() if d is not None and d > atol}
    if wrong:
        raise AssertionError(f"SPINN-PI-NT implementations disagree (max |diff|): {wrong}")
    return differences


class NaiveStackSpinn(nn.Module):
    """SPINN-PI-NT with a dense stack copied every step: the memory contrast.

    The stack is a (B, N, 2D) tensor. Each step reads the top two items with ``gather`` and
    writes the pushed item with an out-of-place ``torch.where``, so the graph holds a new full
    stack per step: ``gather`` saves its input for backward, which makes what autograd keeps
    O(T * N) = O(N^2) per sentence, against the thin stack's O(N). Same parameters and
    function as ``Spinn(dim, dim)`` (shares its layers).
    """

    def __init__(self, model: Spinn) -> None:
        super().__init__()
        if model.tracker is not None:
            raise ValueError("the naive stack contrast is SPINN-PI-NT only")
        self.model = model

    def forward(
        self, inputs: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor
    ) -> torch.Tensor:
        model = self.model
        batch_size, width = mask.shape
        node_dim = model.node_dim
        buffer = inputs.new_zeros(batch_size, width, node_dim)  # (B, N, 2D)
        buffer[mask] = model.projection(inputs, mask)
        stack = inputs.new_zeros(batch_size, width + 1, node_dim)  # slot 0: always empty
        depth = torch.zeros(batch_size, dtype=torch.long, device=inputs.device)
        position = torch.zeros_like(depth)
        slots = torch.arange(width + 1, device=inputs.device)

        def item(tensor: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            index = index.clamp(min=0).view(-1, 1, 1).expand(-1, 1, node_dim)
            return tensor.gather(1, index).squeeze(1)

        for t in range(transitions.size(1)):
            action = transitions[:, t]
            is_shift, is_reduce = action == SHIFT, action == REDUCE
            # Stack slots 1..depth hold the items; slot 0 reads as the zero node.
            composed = model.compose(item(stack, depth - 1), item(stack, depth))
            shifted = item(buffer, position.clamp(max=width - 1))
            pushed = torch.where(is_shift.unsqueeze(1), shifted, composed)
            target = torch.where(is_shift, depth + 1, depth - 1)
            moves = (is_shift | is_reduce).unsqueeze(1)
            write = (slots.unsqueeze(0) == target.unsqueeze(1)) & moves
            stack = torch.where(write.unsqueeze(-1), pushed.unsqueeze(1), stack)
            depth = depth + is_shift.long() - is_reduce.long()
            position = position + is_shift.long()
        return model.compose.hidden(item(stack, depth))


# --- timing -------------------------------------------------------------------------------


def synchronize(device: Union[str, torch.device]) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_interleaved(
    functions: Dict[str, Callable[[], object]], device: str, warmup: int, repeats: int
) -> Dict[str, List[float]]:
    """Wall-clock seconds of ``repeats`` calls of each function.

    The functions take turns (round robin), so slow phases of a noisy machine hit every
    function alike and the ratios between them stay meaningful. Each turn makes ``warmup``
    untimed calls before the timed one: switching between workloads of different shapes
    leaves the allocator (on CPU, malloc's free lists and page faults) in the other
    workload's state, which can double the next call's time. On CUDA each timed call is
    synchronised before and after.
    """
    times: Dict[str, List[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            for _ in range(warmup):
                function()
            synchronize(device)
            start = time.perf_counter()
            function()
            synchronize(device)
            times[name].append(time.perf_counter() - start)
    return times


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


# --- memory -------------------------------------------------------------------------------


def training_memory_bytes(step: Callable[[], torch.Tensor], device: str) -> int:
    """Activation memory of one training step: ``step()`` returns the loss, then backward.

    CUDA: peak ``torch.cuda.max_memory_allocated`` during forward + backward, less what was
    allocated before (parameters, inputs). CPU (no allocator statistics): bytes of the
    tensors autograd saves for backward, each storage counted once (views share one), plus the
    thin-stack tapes (data and gradient tables) and the rows the loop layers keep for their
    weight gradients (inputs, and the output gradients of the backward pass), i.e. what the
    graph holds at its peak.
    """
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        step().backward()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    return saved_for_backward_bytes(step)


# --- output -------------------------------------------------------------------------------


def environment(device: str) -> Dict[str, object]:
    info: Dict[str, object] = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "torch_threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
    }
    if torch.device(device).type == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
    return info


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(out_dir: Path, stem: str, markdown: str, data: Dict[str, object]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.md").write_text(markdown + "\n")
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")


# One colour per model in every plot; dashed lines for the contrast baselines.
STYLES = {
    PI_NT: ("tab:blue", "-"),
    PI_NT_LEVELWISE: ("tab:orange", "-"),
    PI: ("tab:green", "-"),
    SPINN_FULL: ("tab:red", "-"),
    PI_COMPILED: ("tab:green", ":"),
    SPINN_COMPILED: ("tab:red", ":"),
    LSTM: ("tab:purple", "-"),
    RECURSIVE: ("tab:brown", "--"),
    NAIVE_STACK: ("tab:gray", "--"),
}


def loglog_plot(
    path: Path,
    series: Dict[str, Tuple[List[float], List[float]]],
    xlabel: str,
    ylabel: str,
    title: str,
    labels: Optional[Dict[str, str]] = None,
) -> None:
    """Writes a PNG with one log-log line per model: ``series[name] = (xs, ys)``. Without
    matplotlib (a bare GPU machine), says so and writes nothing: the tables are the result."""
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no plot {path}", file=sys.stderr)
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ticks = set()
    for name, (xs, ys) in series.items():
        colour, line = STYLES.get(name, (None, "-"))
        ax.loglog(xs, ys, line, color=colour, marker="o", label=(labels or {}).get(name, name))
        ticks.update(xs)
    ax.set_xticks(sorted(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_ints(text: str) -> List[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def fmt(value: Optional[float], digits: int = 3) -> str:
    """A number with ``digits`` significant figures, or an em dash."""
    if value is None:
        return "—"
    if value >= 10**digits - 0.5:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
