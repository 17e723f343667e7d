"""ListOps training time per epoch of each parser (transition policy), through AllenNLP.

    python benchmarks/listops_epoch_speed.py [--configs spinn_pi_nt,spinn,...] [--batches 8]
        [--device cpu|cuda] [--threads 1] [--out benchmarks/results]

Each ListOps config (``training_config/classification/listops_<name>.jsonnet``: the ListOps
protocol, D = 128, batch 128, training lines of at most 100 tokens) is built as ``allennlp
train`` builds it, on the first ``--batches`` x 128 lines of the generated training file
(``scripts/make_listops.py``), every config with the same seed and so the same batches. A step
is the trainer's (``snli_training_speed.training_step``: zero_grad, forward and loss, backward,
clipping, Adam, metrics); the configs take turns batch by batch, each timed step after one
untimed step on the same batch. Time per epoch = the time per training line of the timed
steps x the protocol's 75,899 training lines: the training part of an epoch, without
validation. What each policy costs per step: the gold-tree TreeLSTM composes level by level;
the full SPINN steps through 2N - 1 transitions teacher-forced; REINFORCE runs a sampled and
a greedy pass, and PPO (``spinn_ppo``) three more passes, forward and backward, for its
further parser updates; the best-draw parser (``spinn_best_draw``) four sampled passes, the
task's loss backpropagated through the first only; the soft stack and straight-through
Gumbel compute both moves at every step and read a soft second unit. A parser of its own
(``own_parser_*``) runs the 2N - 1 steps in its own small network and the TreeLSTM level by
level over its trees; its best-draw config draws the three further trees in one pass over
the batch repeated, and its PPO config adds 14 parser-only passes (forward and backward).

Needs AllenNLP and the generated ListOps data.
"""

import argparse
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Dict, List

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from allennlp.commands.train import TrainModel  # noqa: E402
from allennlp.common import Params  # noqa: E402
from allennlp.common.util import prepare_environment  # noqa: E402
from allennlp.nn import util as nn_util  # noqa: E402
from allennlp.training import GradientDescentTrainer  # noqa: E402
from common import (  # noqa: E402
    environment,
    fmt,
    markdown_table,
    median,
    time_interleaved,
    write_results,  # noqa: E402
)
from snli_training_speed import training_step  # noqa: E402

import spinn_allennlp.plugin  # noqa: E402,F401  (registers the configs' components)
from spinn_core.testing import CONFIGS_ROOT, PROJECT_ROOT  # noqa: E402

NAMES = {
    "spinn_pi_nt": "gold trees (SPINN-PI-NT, level-wise)",
    "spinn": "Model 1, teacher-forced parser",
    "spinn_reinforce": "REINFORCE (sampled + greedy pass)",
    "spinn_ppo": "REINFORCE + 3 PPO updates (parser of its own)",
    "spinn_best_draw": "4 draws ranked (best-draw baseline, warm-up config)",
    "spinn_soft_annealed": "annealed soft stack",
    "spinn_gumbel": "straight-through Gumbel",
    "spinn_model4": "Model 4 (soft stack)",
    "lstm": "LSTM",
    "own_parser_best_draw": "a parser of its own, 4 draws ranked (one rerun)",
    "own_parser_ppo": "a parser of its own, Havrylov's PPO (15 parser updates a batch)",
}
BATCH_SIZE = 128
EPOCH_LINES = 75_899  # the protocol's training lines (at most 100 tokens)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--configs",
        default="spinn_pi_nt,spinn,spinn_reinforce,spinn_soft_annealed,spinn_gumbel",
        help="comma-separated; NAME:graphs = with the encoder's CUDA graphs (cuda_graphs "
        "true); lstm:packed = the LSTM as AllenNLP's own lstm encoder (packed batches)",
    )
    parser.add_argument("--batches", type=int, default=8, help="distinct batches timed")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-data", default=None, help="instead of the config's (tests)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args()


def build_trainer(name: str, args: argparse.Namespace, workdir: Path) -> GradientDescentTrainer:
    overrides = {
        "validation_data_path": None,
        "test_data_path": None,
        "evaluate_on_test": False,
        "dataset_reader.max_instances": BATCH_SIZE * args.batches,
        # Every config on the same batches (the PPO config of a parser of its own takes 64
        # lines a batch as Havrylov et al.; timed on 128, as the pilots ran it).
        "data_loader.batch_sampler.batch_size": BATCH_SIZE,
        "trainer.cuda_device": 0 if args.device == "cuda" else -1,
        "random_seed": args.seed,
        "numpy_seed": args.seed,
        "pytorch_seed": args.seed,
    }
    if args.train_data:
        overrides["train_data_path"] = args.train_data
    folder = name.replace(":", "_")
    name, _, variant = name.partition(":")
    if variant == "graphs":
        # A whole block: an override can add a key, not a dotted path below a missing one.
        overrides["model.encoder.speed"] = {"cuda_graphs": True, "graph_batch_size": BATCH_SIZE}
    elif variant == "packed":
        # The ListOps LSTM as AllenNLP's own encoder runs it (packed batches).
        overrides["model.encoder.type"] = "lstm"
    elif variant:
        raise ValueError(f"unknown config variant {variant!r}")
    path = CONFIGS_ROOT / "classification" / f"listops_{name}.jsonnet"
    params = Params.from_file(str(path), params_overrides=overrides)
    params["trainer"].pop("learning_rate_scheduler", None)  # steps on validation metrics
    # The callbacks that change a training step (PPO's further parser updates) stay; the
    # schedules and checkpoint helpers go.
    callbacks = params["trainer"].pop("callbacks", [])
    params["trainer"]["callbacks"] = [c for c in callbacks if c["type"] == "parser_updates"]
    params["trainer"].pop("patience", None)
    params["trainer"].pop("validation_metric", None)
    prepare_environment(params)
    train_model = TrainModel.from_params(
        params=params, serialization_dir=str(workdir / folder), local_rank=0
    )
    trainer = train_model.trainer
    assert isinstance(trainer, GradientDescentTrainer)
    for callback in trainer._callbacks:
        callback.on_start(trainer)
    return trainer


def main() -> None:
    args = parse_args()
    os.chdir(PROJECT_ROOT)
    if args.threads:
        torch.set_num_threads(args.threads)
    configs = [c for c in args.configs.split(",") if c]
    trainers: Dict[str, GradientDescentTrainer] = {}
    batches: Dict[str, List[Dict[str, object]]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name in configs:
            print(f"building {name}", file=sys.stderr)
            trainers[name] = build_trainer(name, args, Path(workdir))
            target = trainers[name].cuda_device
            batches[name] = [
                nn_util.move_to_device(batch, target) for batch in trainers[name].data_loader
            ]
            trainers[name].model.train()
    reference = batches[configs[0]]
    for name in configs[1:]:
        assert len(batches[name]) == len(reference), name
        for mine, theirs in zip(batches[name], reference):
            assert torch.equal(mine["label"].cpu(), theirs["label"].cpu()), name

    step_times: Dict[str, List[float]] = {name: [] for name in configs}
    for index in range(len(reference)):
        steps = {
            name: training_step(
                trainers[name], batches[name][index], nullcontext, trainers[name]._callbacks
            )
            for name in configs
        }
        for name, seconds in time_interleaved(steps, args.device, 1, 1).items():
            step_times[name] += seconds
        print(f"batch {index + 1}/{len(reference)}", file=sys.stderr)

    gold = configs[0]
    lines = [int(b["label"].size(0)) for b in reference]
    results = {}
    for name in configs:
        per_line = sum(step_times[name]) / sum(lines)
        results[name] = {"step_seconds": step_times[name], "epoch_seconds": per_line * EPOCH_LINES}
    rows = [
        [
            f"{NAMES.get(name.partition(':')[0], name)} (`listops_{name}`)",
            fmt(median(step_times[name])),
            f"{results[name]['epoch_seconds'] / 60:.1f}",
            fmt(results[name]["epoch_seconds"] / results[gold]["epoch_seconds"]) + "×",
        ]
        for name in configs
    ]
    table = markdown_table(
        ["policy (config)", "s / step (median)", "min / epoch", f"÷ {gold}"], rows
    )
    env = environment(args.device)
    where = f"{env['gpu']} (cuda)" if args.device == "cuda" else "cpu"
    notes = [
        f"{where} ({env['cpu']}, torch threads: {env['torch_threads']}), torch {env['torch']}.",
        f"{len(reference)} batches ({sum(lines)} lines: the first {BATCH_SIZE * len(reference)} "
        "generated training lines less those over 100 tokens), the same for every config; each "
        "step timed once after one untimed step on the same batch, configs interleaved; an "
        "epoch's training part = 75,899 lines x the time per line.",
    ]
    markdown = table + "\n\n" + "\n".join(f"- {n}" for n in notes)
    print(markdown)
    data = {
        "benchmark": "listops_epoch_speed",
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "environment": env,
        "lines_per_batch": lines,
        "results": results,
    }
    name = f"listops_epoch_{args.device}"
    write_results(args.out, name, markdown, data)
    print(f"\nwrote {args.out}/{name}.md, .json", file=sys.stderr)


if __name__ == "__main__":
    main()
