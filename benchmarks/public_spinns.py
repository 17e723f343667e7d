"""Our SPINN against the public PyTorch SPINNs, on the same inputs, in one run.

    python benchmarks/public_spinns.py --blog PATH/snli --jihunchoi PATH --nyu PATH/python
        [--hidden 128,300] [--batch-sizes 32,128] [--tracking 61] [--rounds 5] [--threads 1]
        [--out benchmarks/results]

Their code is not ours to commit: the script loads it from the copies you point it at
(``--blog``: the ``snli`` folder of the SPINN blog post's code, branch ``spinn`` of
jekbradbury/examples, ``spinn.py``; ``--jihunchoi``: a checkout of jihunchoi/spinn,
``model/spinn.py``; ``--nyu``: the ``python`` folder of nyu-mll/spinn, whose
``spinn.spinn_core_model.SPINN`` it imports as it is), applying at load time the few changes
today's torch needs, each listed in the output (``PATCHES``). Each is given the inputs in the
form its own data pipeline makes: the blog's ``SPINN`` a (N + 1, B, 2D) buffer of projected
words (position 0 a zero vector, the words reversed at the end, so that ``pop()`` takes the
first) and (T, B) transitions padded at the left with its skip value; jihunchoi's ``SPINN``
(B, L, D) words and (B, T) transitions padded at the left with SHIFTs of padding words, as its
reader pads them; nyu-mll's its ``Example`` (token ids, right-padded; transitions padded at the
left with its SKIP) and the projected words, split into per-sentence lists as its
``BaseModel.forward`` splits them (that split timed with it). nyu-mll's model is built as its
``--reduce treelstm`` flags build it, with layer normalisation off (``composition_ln``,
``tracking_ln``: on, it computes another function) and lateral tracking on, its tracker in the
composition for SPINN-PI.

Rows: our thin-stack SPINN-PI-NT and SPINN-PI (``Spinn(D, D, levelwise=False)``, ``Spinn(D, D,
tracking_dim=61)``) and our default level-wise PI-NT; the blog's SPINN without and with its
tracker (``d_tracker``); jihunchoi's SPINN (always with a tracker feeding the composition: a
SPINN-PI); nyu-mll's SPINN without and with its tracker. Every public model gets our model's
weights (projection, composition, tracker;
gates and inputs reordered to its layout), and its sentence vectors are checked equal to ours
(max |difference| <= 1e-4, float32) on a batch of sentences of one length: the public codes
pad shorter sentences at the left, and their trackers run through those padding steps, so on
mixed lengths their SPINN-PI computes another function (PI-NT does not: it is checked on the
timed batch too). Timed: inference (``torch.no_grad()``, sentences / s) and a training pass
(forward and backward of the sum of the sentence vectors, passes / s) on B random sentences
(lengths uniform in [10, 30], random binary trees, N(0, 1) vectors), every model in turn
(``common.time_interleaved``), one thread; the table gives medians and ours / theirs ratios.
"""

import argparse
import copy
import importlib
import json
import sys
import types
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import benchmark_batch, environment, median, random_lengths, time_interleaved  # noqa: E402

from spinn_core.runners import run_levelwise  # noqa: E402
from spinn_core.spinn import Spinn  # noqa: E402
from spinn_core.transitions import REDUCE, SHIFT  # noqa: E402

# (file, old, new): the changes today's torch needs, applied to the source before loading.
PATCHES = {
    "blog": [
        # torch <= 0.3 iterated a LongTensor as Python ints; today each element is a 0-d tensor
        # and every comparison an ATen call and a host read: give it the ints it was written for.
        (
            "spinn.py",
            "zip(trans.data, buffers, stacks, tracker_states)",
            "zip(trans.data.tolist(), buffers, stacks, tracker_states)",
        ),
        ("spinn.py", "zip(trans.data, stacks)", "zip(trans.data.tolist(), stacks)"),
    ],
    "jihunchoi": [
        # A tensor's truth value is ambiguous today; scatter's keyword is `src`.
        ("model/spinn.py", "if trans:", "if trans is not None:"),
        ("model/spinn.py", "source=", "src="),
        ("model/spinn.py", "init.kaiming_normal(", "init.kaiming_normal_("),
        ("model/spinn.py", "init.constant(", "init.constant_("),
        ("model/spinn.py", "init.orthogonal(", "init.orthogonal_("),
    ],
}
BLOG_SKIP, BLOG_REDUCE, BLOG_SHIFT = 1, 2, 3
NYU_SKIP = 2


def load_patched(root: Path, name: str, main: str, package: str = "") -> types.ModuleType:
    """Loads ``root/main`` (and, for a package, its siblings) with ``PATCHES[name]`` applied."""
    patches = PATCHES[name]
    sources: Dict[str, str] = {}
    for relative, old, new in patches:
        path = root / relative
        text = sources.get(relative, path.read_text())
        if old not in text:
            raise ValueError(f"{path}: {old!r} not found: not the code this script was written for")
        sources[relative] = text.replace(old, new)
    if package:
        # A package of its own (jihunchoi's `model` imports `from . import basic`).
        module_package = types.ModuleType(package)
        module_package.__path__ = [str(root / package)]
        sys.modules[package] = module_package
        for sibling in (root / package).glob("*.py"):
            if sibling.name != "__init__.py" and f"{package}/{sibling.name}" != main:
                _exec(f"{package}.{sibling.stem}", sibling.read_text(), sibling)
    text = sources.get(main, (root / main).read_text())
    module_name = f"{package}.{Path(main).stem}" if package else f"public_{name}"
    return _exec(module_name, text, root / main)


def _exec(name: str, source: str, path: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(path)
    if "." in name:
        module.__package__ = name.rsplit(".", 1)[0]
    sys.modules[name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


# --- the public models, with our weights --------------------------------------------------


def gate_rows(weight: torch.Tensor, size: int, order: List[int]) -> torch.Tensor:
    """Rows of ``weight`` (5 blocks of ``size``, ours: i, f_left, f_right, o, g) in ``order``."""
    return torch.cat([weight[k * size : (k + 1) * size] for k in order])


class BlogSpinn(nn.Module):
    """The blog's SPINN on our inputs: our projection (eq. 4), then its ``SPINN.forward``."""

    def __init__(self, module: types.ModuleType, ours: Spinn, tracking: int) -> None:
        super().__init__()
        size = ours.hidden_dim
        config = types.SimpleNamespace(
            d_hidden=size, d_proj=2 * size, d_tracker=tracking or None, predict=False
        )
        self.projection = copy.deepcopy(ours.projection.linear)
        self.spinn = module.SPINN(config)
        linear = ours.compose.linear
        # Theirs: a, i, f1, f2, o (a = g) from left(h_l) + right(h_r) [+ track(e)].
        weight = gate_rows(linear.weight.detach(), size, [4, 0, 1, 2, 3])
        bias = gate_rows(linear.bias.detach().unsqueeze(1), size, [4, 0, 1, 2, 3]).squeeze(1)
        reduce = self.spinn.reduce
        with torch.no_grad():
            reduce.left.weight.copy_(weight[:, :size])
            reduce.left.bias.copy_(bias)
            reduce.right.weight.copy_(weight[:, size : 2 * size])
            if tracking:
                reduce.track.weight.copy_(weight[:, 2 * size :])
                # The same cell and input order as ours: buffer top, stack top, second.
                self.spinn.tracker.rnn.load_state_dict(ours.tracker.cell.state_dict())

    def forward(self, words: torch.Tensor, transitions: torch.Tensor) -> torch.Tensor:
        return self.spinn(self.projection(words), transitions)


def blog_inputs(inputs, mask, transitions) -> Tuple[torch.Tensor, torch.Tensor]:
    """(N + 1, B, D) words: a zero vector, padding, the sentence reversed; (T, B) transitions
    padded at the left with the skip value."""
    batch_size, max_tokens, dim = inputs.shape
    lengths = mask.sum(dim=1).tolist()
    words = inputs.new_zeros(max_tokens + 1, batch_size, dim)
    steps = [[t for t in row if t in (SHIFT, REDUCE)] for row in transitions.tolist()]
    width = max(len(row) for row in steps)
    moves = torch.full((width, batch_size), BLOG_SKIP, dtype=torch.long)
    for b, (n, row) in enumerate(zip(lengths, steps)):
        words[max_tokens + 1 - n :, b] = inputs[b, :n].flip(0)
        coded = [BLOG_SHIFT if t == SHIFT else BLOG_REDUCE for t in row]
        moves[width - len(row) :, b] = torch.tensor(coded)
    return words, moves


class JihunchoiSpinn(nn.Module):
    """jihunchoi's SPINN (its own projection inside), with our weights."""

    def __init__(self, module: types.ModuleType, ours: Spinn, tracking: int) -> None:
        super().__init__()
        size = ours.hidden_dim
        self.spinn = module.SPINN(
            word_dim=ours.input_dim,
            hidden_dim=size,
            tracking_dim=tracking,
            shift_id=SHIFT,
            reduce_id=REDUCE,
        )
        with torch.no_grad():
            self.spinn.word_linear.load_state_dict(ours.projection.linear.state_dict())
            # Same gate order (i, f_l, f_r, o, g) and inputs [h_l; h_r; tracker].
            self.spinn.reducer.comp_linear.load_state_dict(ours.compose.linear.state_dict())
            cell = ours.tracker.cell
            # Its tracker reads [buffer top; stack second; stack top], ours [.., top, second].
            weight = cell.weight_ih.detach()
            self.spinn.tracker_cell.weight_ih.copy_(
                torch.cat([weight[:, :size], weight[:, 2 * size :], weight[:, size : 2 * size]], 1)
            )
            self.spinn.tracker_cell.weight_hh.copy_(cell.weight_hh)
            self.spinn.tracker_cell.bias_ih.copy_(cell.bias_ih)
            self.spinn.tracker_cell.bias_hh.copy_(cell.bias_hh)

    def forward(self, words: torch.Tensor, transitions: torch.Tensor) -> torch.Tensor:
        return self.spinn(words, transitions)[0]


def jihunchoi_inputs(inputs, mask, transitions) -> Tuple[torch.Tensor, torch.Tensor]:
    """Its reader's padding: each sentence's transitions padded at the left with SHIFTs, of
    as many padding words put before the sentence."""
    batch_size, _, dim = inputs.shape
    lengths = mask.sum(dim=1).tolist()
    steps = [[t for t in row if t in (SHIFT, REDUCE)] for row in transitions.tolist()]
    width = max(len(row) for row in steps)
    words = inputs.new_zeros(batch_size, width, dim)
    moves = torch.full((batch_size, width), SHIFT, dtype=torch.long)
    for b, (n, row) in enumerate(zip(lengths, steps)):
        pad = width - len(row)
        words[b, pad : pad + n] = inputs[b, :n]
        moves[b, pad:] = torch.tensor(row)
    return words, moves


class NyuSpinn(nn.Module):
    """nyu-mll/spinn's SPINN (``spinn_core_model``) as its ``BaseModel`` runs it, on our
    projection, with our weights. Its node rows are [c; h] (ours [h; c]), its tracker's gates
    interleaved (unit r's gate k in column 4r + k, k = g, i, f, o), and its TreeLSTM adds 1 to
    the forget gates' pre-activations (its bias is ours less 1 there)."""

    def __init__(
        self, core: types.ModuleType, blocks: types.ModuleType, ours: Spinn, tracking: int
    ) -> None:
        super().__init__()
        size = ours.hidden_dim
        composition = blocks.ReduceTreeLSTM(
            size,
            tracker_size=tracking or None,
            use_tracking_in_composition=bool(tracking),
            composition_ln=False,
        )
        args = types.SimpleNamespace(
            transition_weight=None,
            wrap_items=blocks.bundle,
            extract_h=lambda state: state.h,
            composition=composition,
            tracker_size=tracking or None,
            use_internal_parser=False,
            lateral_tracking=True,
            tracking_ln=False,
            size=size,
        )
        self.blocks = blocks
        self.spinn = core.SPINN(args, None, False)
        self.composition = composition
        self.projection = copy.deepcopy(ours.projection.linear)
        with torch.no_grad():
            # [h; c] -> [c; h].
            swap = torch.cat([torch.arange(size, 2 * size), torch.arange(size)])
            self.projection.weight.copy_(ours.projection.linear.weight[swap])
            self.projection.bias.copy_(ours.projection.linear.bias[swap])
            linear = ours.compose.linear
            bias = linear.bias.detach().clone()
            bias[size : 3 * size] -= 1.0  # its forget gates add 1
            composition.left.weight.copy_(linear.weight[:, :size])
            composition.left.bias.copy_(bias)
            composition.right.weight.copy_(linear.weight[:, size : 2 * size])
            if tracking:
                composition.track.weight.copy_(linear.weight[:, 2 * size :])
                cell = ours.tracker.cell
                block_of = {0: 2, 1: 0, 2: 1, 3: 3}  # its gate k (g, i, f, o) -> our block
                rows = torch.tensor(
                    [block_of[k] * tracking + r for r in range(tracking) for k in range(4)]
                )
                weight = cell.weight_ih[rows]
                tracker = self.spinn.tracker
                tracker.buf.weight.copy_(weight[:, :size])
                tracker.buf.bias.copy_((cell.bias_ih + cell.bias_hh)[rows])
                tracker.stack1.weight.copy_(weight[:, size : 2 * size])
                tracker.stack2.weight.copy_(weight[:, 2 * size :])
                tracker.lateral.weight.copy_(cell.weight_hh[rows])

    def forward(self, words: torch.Tensor, example) -> torch.Tensor:
        batch_size, length, _ = words.shape
        # BaseModel.forward's buffers: every word's row, per sentence, reversed.
        embeds = self.projection(words.reshape(batch_size * length, -1))
        rows = torch.chunk(embeds, batch_size * length, 0)[::-1]
        buffers = [list(rows[b * length : (b + 1) * length]) for b in range(batch_size)]
        example.bufs = buffers[::-1]
        self.spinn.reset_state()
        tops = self.spinn(example)[0]
        return self.blocks.bundle(tops).h


def nyu_inputs(inputs, mask, transitions):
    """Its ``Example``: token ids (nonzero for words, right-padded), transitions padded at the
    left with SKIP (an array, as its data pipeline gives them)."""
    steps = [[t for t in row if t in (SHIFT, REDUCE)] for row in transitions.tolist()]
    width = max(len(row) for row in steps)
    moves = torch.full((len(steps), width), NYU_SKIP, dtype=torch.long)
    for b, row in enumerate(steps):
        moves[b, width - len(row) :] = torch.tensor(row)  # its SHIFT and REDUCE are ours
    example = types.SimpleNamespace(tokens=mask.long(), transitions=moves.numpy())
    return inputs, example


# --- the benchmark ------------------------------------------------------------------------


def models_for(
    dim: int, tracking: int, modules: Dict[str, types.ModuleType], checking: bool = False
):
    """name -> (model, make its inputs from (inputs, mask, transitions), call). ``checking``:
    the projection's bias zeroed, so that padding (the public codes' empty stack and buffer)
    projects to the zero rows that ours reads there."""
    torch.manual_seed(0)
    pi_nt = Spinn(dim, dim, levelwise=False)
    pi = Spinn(dim, dim, tracking_dim=tracking)
    if checking:
        for model in (pi_nt, pi):
            with torch.no_grad():
                model.projection.linear.bias.zero_()
    ours: Dict[str, Tuple[nn.Module, Callable, Callable]] = {
        "ours: SPINN-PI-NT thin-stack loop": (pi_nt, _ours_inputs, _call_ours),
        "ours: SPINN-PI-NT level-wise": (pi_nt, _ours_inputs, _call_levelwise),
        "ours: SPINN-PI": (pi, _ours_inputs, _call_ours),
    }
    if "blog" in modules:
        ours["blog: SPINN-PI-NT"] = (BlogSpinn(modules["blog"], pi_nt, 0), blog_inputs, _call)
        ours["blog: SPINN-PI"] = (BlogSpinn(modules["blog"], pi, tracking), blog_inputs, _call)
    if "jihunchoi" in modules:
        model = JihunchoiSpinn(modules["jihunchoi"], pi, tracking)
        ours["jihunchoi: SPINN-PI"] = (model, jihunchoi_inputs, _call)
    if "nyu" in modules:
        core, blocks = modules["nyu"], modules["nyu_blocks"]
        ours["nyu-mll: SPINN-PI-NT"] = (NyuSpinn(core, blocks, pi_nt, 0), nyu_inputs, _call)
        ours["nyu-mll: SPINN-PI"] = (NyuSpinn(core, blocks, pi, tracking), nyu_inputs, _call)
    return ours


def _ours_inputs(inputs, mask, transitions):
    return inputs, mask, transitions


def _call_ours(model, arguments):
    return model(*arguments).sentence


def _call_levelwise(model, arguments):
    return model(*arguments, runner=run_levelwise).sentence


def _call(model, arguments):
    return model(*arguments)


# The ours-versus-theirs pairs of the ratio table.
PAIRS = [
    ("ours: SPINN-PI-NT thin-stack loop", "blog: SPINN-PI-NT"),
    ("ours: SPINN-PI-NT level-wise", "blog: SPINN-PI-NT"),
    ("ours: SPINN-PI", "blog: SPINN-PI"),
    ("ours: SPINN-PI", "jihunchoi: SPINN-PI"),
    ("ours: SPINN-PI-NT thin-stack loop", "nyu-mll: SPINN-PI-NT"),
    ("ours: SPINN-PI", "nyu-mll: SPINN-PI"),
]


def check(models, batch, equal_batch) -> Dict[str, float]:
    """Max |difference| of each public model's sentence vectors from ours (of the same
    variant; ``models_for(checking=True)``): PI-NT on the timed batch and on one of equal
    lengths, PI on the latter."""
    differences = {}
    with torch.no_grad():
        for name, (model, make, call) in models.items():
            if name.startswith("ours"):
                continue
            reference = models[
                "ours: SPINN-PI-NT thin-stack loop" if "NT" in name else "ours: SPINN-PI"
            ]
            batches = [equal_batch, batch] if "NT" in name else [equal_batch]
            for which, tree_batch in zip(("equal lengths", "timed batch"), batches):
                arguments = (tree_batch.inputs, tree_batch.mask, tree_batch.transitions)
                expected = reference[2](reference[0], reference[1](*arguments))
                got = call(model, make(*arguments))
                difference = float((got - expected).abs().max())
                differences[f"{name}, {which}"] = difference
                if difference > 1e-4:
                    raise AssertionError(f"{name} computes another function: {difference}")
    return differences


def main(argv=None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blog", type=Path, help="the snli folder of the blog's code")
    parser.add_argument("--jihunchoi", type=Path, help="a checkout of jihunchoi/spinn")
    parser.add_argument("--nyu", type=Path, help="the python folder of nyu-mll/spinn")
    parser.add_argument("--hidden", default="128,300")
    parser.add_argument("--batch-sizes", default="32,128")
    parser.add_argument("--tracking", type=int, default=61)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    modules = {}
    if args.blog:
        modules["blog"] = load_patched(args.blog, "blog", "spinn.py")
    if args.jihunchoi:
        modules["jihunchoi"] = load_patched(args.jihunchoi, "jihunchoi", "model/spinn.py", "model")
    if args.nyu:
        # Its package `spinn`, imported as it is (no change needed).
        sys.path.insert(0, str(args.nyu))
        modules["nyu"] = importlib.import_module("spinn.spinn_core_model")
        modules["nyu_blocks"] = importlib.import_module("spinn.util.blocks")
    results: Dict[str, Dict] = {"environment": environment("cpu"), "patches": PATCHES, "cells": {}}
    lines = []
    for dim in [int(d) for d in args.hidden.split(",")]:
        models = models_for(dim, args.tracking, modules)
        checked = models_for(dim, args.tracking, modules, checking=True)
        for batch_size in [int(b) for b in args.batch_sizes.split(",")]:
            lengths = random_lengths(batch_size, 30, args.seed)
            batch = benchmark_batch(lengths, dim, args.seed)
            equal = benchmark_batch([20] * batch_size, dim, args.seed + 1)
            differences = check(checked, batch, equal)
            arguments = {
                name: make(batch.inputs, batch.mask, batch.transitions)
                for name, (_, make, _) in models.items()
            }

            def inference(name):
                model, _, call = models[name]
                with torch.no_grad():
                    return call(model, arguments[name])

            def training(name):
                model, _, call = models[name]
                model.zero_grad()
                call(model, arguments[name]).sum().backward()

            cell = {"differences": differences}
            for kind, run in (("inference", inference), ("training", training)):
                calls = {name: (lambda name=name: run(name)) for name in models}
                times = time_interleaved(calls, "cpu", warmup=1, repeats=args.rounds)
                cell[kind] = {name: batch_size / median(t) for name, t in times.items()}
                cell[kind + "_seconds"] = times
            results["cells"][f"D={dim}, B={batch_size}"] = cell
            lines.append(table(dim, batch_size, cell))
            print(lines[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "public_spinns_cpu"
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (args.out / f"{stem}.md").write_text("\n\n".join(lines) + "\n")
    return results


def table(dim: int, batch_size: int, cell: Dict) -> str:
    rows = [
        f"D = {dim}, B = {batch_size} (sentences / s; one thread)",
        "",
        "| model | inference | training |",
        "|---|---:|---:|",
    ]
    for name in cell["inference"]:
        rows.append(f"| {name} | {cell['inference'][name]:,.0f} | {cell['training'][name]:,.0f} |")
    rows += ["", "| ours / theirs | inference | training |", "|---|---:|---:|"]
    for ours, theirs in PAIRS:
        if theirs in cell["inference"]:
            ratios = [cell[kind][ours] / cell[kind][theirs] for kind in ("inference", "training")]
            rows.append(f"| {ours} / {theirs} | {ratios[0]:.2f}× | {ratios[1]:.2f}× |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
