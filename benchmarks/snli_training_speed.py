"""Whole SNLI training steps (steps / second, memory) of each shipped config, through AllenNLP.

    python benchmarks/snli_training_speed.py [--device cpu|cuda] [--configs lstm,spinn_pi_nt,...]
        [--batches 20] [--threads 1] [--out benchmarks/results]

Each config in ``training_config/pair_classification/`` is built as ``allennlp train`` builds it
(``TrainModel.from_params``: reader, vocabulary, model, bucketed data loader, the config's
optimizer, L2 regulariser, gradient norm clipping), on the first ``--batches`` x 32 pairs of the
bundled 1 % SNLI training file, every config with the same seed and so the same batches. A step
is what AllenNLP's ``GradientDescentTrainer`` does per batch: ``zero_grad``, ``batch_outputs``
(the model's forward and loss plus the regularisation penalty), ``loss.item()``, ``backward``,
gradient norm rescaling, ``optimizer.step`` and ``model.get_metrics`` for the progress bar (the
learning-rate schedule's step, a few multiplications, is left out). The configs take turns batch
by batch, each timed step after one untimed step on the same batch (see
``common.time_interleaved``), and steps / s is the number of batches over the sum of their
median step times.

Memory: CUDA, peak ``torch.cuda.max_memory_allocated`` over a step minus what was allocated
before it; CPU, bytes autograd saves for backward plus the thin-stack tapes, on the batch with
the most words.

Needs AllenNLP (the other benchmarks need torch alone).
"""

import argparse
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, Dict, List, Sequence

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from allennlp.commands.train import TrainModel  # noqa: E402
from allennlp.common import Params  # noqa: E402
from allennlp.common.util import prepare_environment  # noqa: E402
from allennlp.nn import util as nn_util  # noqa: E402
from allennlp.training import GradientDescentTrainer  # noqa: E402
from allennlp.training.callbacks import TrainerCallback  # noqa: E402
from common import (  # noqa: E402
    environment,
    fmt,
    markdown_table,
    median,
    time_interleaved,
    training_memory_bytes,
    write_results,
)

import spinn_allennlp.plugin  # noqa: E402,F401  (registers the configs' components)
from spinn_core.testing import CONFIGS_ROOT, PROJECT_ROOT  # noqa: E402

NAMES = {
    "lstm": "LSTM RNN",
    "spinn_pi_nt": "SPINN-PI-NT",
    "spinn_pi": "SPINN-PI",
    "spinn": "SPINN",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--configs",
        default=",".join(NAMES),
        help="comma-separated; NAME:separate = that config with premise and hypothesis encoded "
        "in two calls (encode_pairs_together false, as before 0.2.0); NAME:graphs = with the "
        "encoder's CUDA graphs (cuda_graphs true, batches of 64 sentences: the pairs together)",
    )
    parser.add_argument("--batches", type=int, default=20, help="distinct batches timed")
    parser.add_argument("--repeats", type=int, default=1, help="timed passes over the batches")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps before each timed one")
    parser.add_argument(
        "--autocast", default=None, choices=["bf16"], help="bf16 autocast around forward + loss"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args()


def build_trainer(config: str, args: argparse.Namespace, workdir: Path) -> GradientDescentTrainer:
    """The config's trainer as `allennlp train` builds it, on the first batches of the data."""
    overrides = {
        "validation_data_path": None,
        "dataset_reader.max_instances": 32 * args.batches,
        "trainer.cuda_device": 0 if args.device == "cuda" else -1,
        "random_seed": args.seed,
        "numpy_seed": args.seed,
        "pytorch_seed": args.seed,
    }
    name, _, variant = config.partition(":")
    if variant == "separate":
        overrides["model.encode_pairs_together"] = False
    elif variant == "graphs":
        # A whole block: an override can add a key, not a dotted path below a missing one.
        overrides["model.encoder.speed"] = {"cuda_graphs": True, "graph_batch_size": 64}
    elif variant:
        raise ValueError(f"unknown config variant {variant!r} in {config!r}")
    path = CONFIGS_ROOT / "pair_classification" / f"{name}.jsonnet"
    params = Params.from_file(str(path), params_overrides=overrides)
    prepare_environment(params)  # same seeds for every config: same batches
    train_model = TrainModel.from_params(
        params=params, serialization_dir=str(workdir / config), local_rank=0
    )
    trainer = train_model.trainer
    assert isinstance(trainer, GradientDescentTrainer)
    return trainer


def training_step(
    trainer: GradientDescentTrainer,
    batch: Dict[str, object],
    autocast,
    callbacks: Sequence[TrainerCallback] = (),
) -> Callable[[], torch.Tensor]:
    """One step of `GradientDescentTrainer._train_epoch` on `batch` (see the module docstring),
    then the `on_batch` of `callbacks`; returns the loss."""

    def step() -> torch.Tensor:
        trainer.optimizer.zero_grad()
        with autocast():
            outputs = trainer.batch_outputs(batch, for_training=True)
        loss = outputs["loss"]
        loss.item()  # the trainer reads it every batch: one host sync
        loss.backward()
        trainer.rescale_gradients()
        trainer.clip_gradient()
        trainer.optimizer.step()
        # What `callbacks` do after the trainer's step (PPO's further parser updates).
        for callback in callbacks:
            callback.on_batch(trainer, [batch], [outputs], {}, 0, 1, is_training=True)
        trainer.model.get_metrics(reset=False)
        return loss

    return step


def words_in(batch: Dict[str, object]) -> int:
    total = 0
    for side in ("premise", "hypothesis"):
        tokens = batch[side]["tokens"]["tokens"]
        total += int((tokens != 0).sum())
    return total


def main() -> None:
    args = parse_args()
    os.chdir(PROJECT_ROOT)  # the configs' data paths are relative to the repository root
    if args.threads:
        torch.set_num_threads(args.threads)
    configs = [c for c in args.configs.split(",") if c]
    device = args.device
    autocast = (
        (lambda: torch.autocast(device, dtype=torch.bfloat16)) if args.autocast else nullcontext
    )

    trainers: Dict[str, GradientDescentTrainer] = {}
    batches: Dict[str, List[Dict[str, object]]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        for config in configs:
            print(f"building {config}", file=sys.stderr)
            trainers[config] = build_trainer(config, args, Path(workdir))
            target = trainers[config].cuda_device
            batches[config] = [
                nn_util.move_to_device(batch, target) for batch in trainers[config].data_loader
            ]
            trainers[config].model.train()
    counts = {len(b) for b in batches.values()}
    assert len(counts) == 1, f"configs got different numbers of batches: {counts}"
    # Every config sees the same pairs in the same batches (same reader, seed and sampler).
    reference = batches[configs[0]]
    for config in configs[1:]:
        for mine, theirs in zip(batches[config], reference):
            assert torch.equal(mine["label"].cpu(), theirs["label"].cpu()), config

    step_times: Dict[str, List[float]] = {config: [] for config in configs}
    for _ in range(args.repeats):
        for index in range(len(reference)):
            steps = {
                config: training_step(trainers[config], batches[config][index], autocast)
                for config in configs
            }
            times = time_interleaved(steps, device, args.warmup, 1)
            for config in configs:
                step_times[config] += times[config]
        print(
            "steps/s: "
            + ", ".join(f"{c} {len(step_times[c]) / sum(step_times[c]):.2f}" for c in configs),
            file=sys.stderr,
        )

    largest = max(range(len(reference)), key=lambda i: words_in(reference[i]))
    memory = {}
    for config in configs:
        trainer = trainers[config]
        batch = batches[config][largest]

        def loss(trainer=trainer, batch=batch) -> torch.Tensor:
            trainer.optimizer.zero_grad()
            with autocast():
                return trainer.batch_outputs(batch, for_training=True)["loss"]

        memory[config] = training_memory_bytes(loss, device)

    results = {}
    for config in configs:
        per_batch = [median(step_times[config][i :: len(reference)]) for i in range(len(reference))]
        results[config] = {
            "steps_per_second": len(per_batch) / sum(per_batch),
            "step_seconds": step_times[config],
            "memory_bytes": memory[config],
            "parameters": sum(p.numel() for p in trainers[config].model.parameters()),
        }
    data = {
        "benchmark": "snli_training_speed",
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "environment": environment(device),
        "batches": len(reference),
        "pairs_per_batch": [int(b["label"].size(0)) for b in reference],
        "words_in_largest_batch": words_in(reference[largest]),
        "results": results,
    }
    markdown = render(data)
    print(markdown)
    stem = f"snli_training_{device}" + (f"_{args.autocast}" if args.autocast else "")
    write_results(args.out, stem, markdown, data)
    print(f"\nwrote {args.out}/{stem}.md, .json", file=sys.stderr)


def label(config: str) -> str:
    name, _, variant = config.partition(":")
    text = f"{NAMES.get(name, name)} (`{name}.jsonnet`)"
    suffix = {
        "separate": ", premise and hypothesis in separate calls",
        "graphs": ", passes replayed from CUDA graphs (eager on a CPU)",
    }
    return text + suffix.get(variant, "")


def render(data: Dict[str, object]) -> str:
    results = data["results"]
    env = data["environment"]
    config = data["config"]
    lstm = results.get("lstm", {}).get("steps_per_second")
    cuda = env["device"] == "cuda"
    rows = []
    for name, result in results.items():
        rows.append(
            [
                label(name),
                fmt(result["steps_per_second"]),
                fmt(result["steps_per_second"] * 32),
                fmt(lstm / result["steps_per_second"]) + "×" if lstm else "—",
                f"{result['memory_bytes'] / 2**20:.1f}",
            ]
        )
    table = markdown_table(
        [
            "SNLI config",
            "training steps/s",
            "pairs/s",
            "LSTM steps/s ÷ this",
            "peak CUDA MiB" if cuda else "saved for backward, MiB",
        ],
        rows,
    )
    notes = [
        f"{env['device']} ({env.get('gpu', env['cpu'])}, torch threads: {env['torch_threads']}), "
        f"torch {env['torch']}"
        + (f", {config['autocast']} autocast" if config["autocast"] else "")
        + ".",
        f"The shipped configs through AllenNLP (TrainModel.from_params), batch 32, on the first "
        f"{data['batches']} length-bucketed batches of the bundled 1 % SNLI training file, the "
        f"same batches for every config; a step = zero_grad, forward + loss + L2 penalty (where "
        f"the config has one), backward, gradient norm clipping, the config's optimizer step "
        f"(RMSProp for the SPINN configs, Adam for ESIM), metrics. Configs interleaved batch by "
        f"batch, each timed step after {config['warmup']} untimed step(s) on the same batch; "
        f"steps/s = batches / sum of the per-batch median times over {config['repeats']} pass(es).",
        "Memory: "
        + (
            "peak torch.cuda.max_memory_allocated over a step, minus what was allocated before."
            if cuda
            else "bytes saved for backward (saved-tensor hooks, unique storages) + thin-stack "
            "tapes, for the batch with the most words "
            f"({data['words_in_largest_batch']} words)."
        ),
    ]
    return table + "\n\n" + "\n".join(f"- {n}" for n in notes)


if __name__ == "__main__":
    main()
