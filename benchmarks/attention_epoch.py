"""Training time per epoch of the syntactic tree-LSTM inference model against ESIM (Chen et al.
2017: ~40 h against ~6 h on a K40, 6.7x), measured in one run on the same batches.

    .venv/bin/python benchmarks/attention_epoch.py [--device cpu|cuda] [--threads 1]
        [--epochs 1] [--max-batches N] [--train PATH] [--out benchmarks/results]

Both models are built from their shipped configs (`training_config/pair_classification/
esim.jsonnet`, `tree_esim.jsonnet`: 300-d, batch 32, Adam 4e-4, gradient norm 10) on the same
vocabulary, and trained on the same batches of the bundled SNLI 1 % train split (the configs'
bucket sampler, drawn once). A step is zero_grad, forward, loss, backward, clipping, Adam step;
data loading is left out (it is the same for both). The two models take turns batch by batch
(the order alternating), so a busy or noisy machine slows both alike and the ratio stays
meaningful. The per-epoch time is the sum of a model's step times over the epoch.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Dict, List

import torch
from allennlp.common import Params
from allennlp.data import DataLoader, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.nn import util as nn_util

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import environment, markdown_table, synchronize, write_results  # noqa: E402

import spinn_allennlp.plugin  # noqa: E402, F401  (registers the plugin's classes)
from spinn_allennlp.data.paths import expand_path  # noqa: E402
from spinn_allennlp.testing import CONFIGS_ROOT  # noqa: E402

MODELS = {"ESIM": "esim", "syntactic tree-LSTM": "tree_esim"}


def config(name: str) -> Params:
    return Params.from_file(str(CONFIGS_ROOT / "pair_classification" / f"{name}.jsonnet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-batches", type=int, default=0, help="0: the whole epoch")
    parser.add_argument("--train", default=None, help="default: the configs' train path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)

    tree_config = config("tree_esim")
    train_path = args.train or expand_path(tree_config["train_data_path"])
    reader = DatasetReader.from_params(tree_config["dataset_reader"].duplicate())
    loader = DataLoader.from_params(
        params=tree_config["data_loader"].duplicate(), reader=reader, data_path=train_path
    )
    vocab = Vocabulary.from_instances(loader.iter_instances())
    loader.index_with(vocab)
    batches = [nn_util.move_to_device(batch, torch.device(args.device)) for batch in loader]
    if args.max_batches:
        batches = batches[: args.max_batches]

    models: Dict[str, Model] = {}
    optimizers: Dict[str, torch.optim.Optimizer] = {}
    grad_norm = float(tree_config["trainer"]["grad_norm"])
    for label, name in MODELS.items():
        params = config(name)
        model = Model.from_params(vocab=vocab, params=params["model"]).to(args.device)
        models[label] = model.train()
        optimizer = params["trainer"]["optimizer"].as_dict()
        assert optimizer.pop("type") == "adam"
        optimizers[label] = torch.optim.Adam(model.parameters(), **optimizer)

    def step(label: str, batch) -> float:
        model, optimizer = models[label], optimizers[label]
        synchronize(args.device)
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = model(**batch)["loss"]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
        optimizer.step()
        synchronize(args.device)
        return time.perf_counter() - start

    load_before = os.getloadavg()
    wall_start = time.perf_counter()
    epoch_seconds: Dict[str, List[float]] = {label: [] for label in MODELS}
    labels = list(MODELS)
    for epoch in range(args.epochs):
        totals = {label: 0.0 for label in MODELS}
        for index, batch in enumerate(batches):
            order = labels if (index + epoch) % 2 == 0 else labels[::-1]
            for label in order:
                totals[label] += step(label, batch)
        for label in MODELS:
            epoch_seconds[label].append(totals[label])
        print(f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.1f} s" for k, v in totals.items()))
    load_after = os.getloadavg()

    esim, tree = (epoch_seconds[label] for label in labels)
    ratios = [t / e for t, e in zip(tree, esim)]
    pairs = sum(int(batch["label"].numel()) for batch in batches)
    rows = [
        [label, str(len(batches)), ", ".join(f"{s:.1f}" for s in epoch_seconds[label])]
        for label in labels
    ]
    rows.append(["tree / ESIM", "", ", ".join(f"{r:.2f}x" for r in ratios)])
    table = markdown_table(["model", "batches / epoch", "seconds per epoch"], rows)
    info = {
        **environment(args.device),
        "train_pairs": pairs,
        "batches": len(batches),
        "load_average_1_5_15_before": load_before,
        "load_average_1_5_15_after": load_after,
        "wall_seconds": time.perf_counter() - wall_start,
        "cpus": os.cpu_count(),
    }
    markdown = (
        f"Training time per epoch, {pairs} SNLI pairs in {len(batches)} batches, "
        f"device {args.device}, {args.threads} thread(s), load average before/after "
        f"{load_before[0]:.1f} / {load_after[0]:.1f}.\n\n{table}\n"
    )
    print(markdown)
    write_results(
        Path(args.out),
        f"attention_epoch_{torch.device(args.device).type}",
        markdown,
        {"environment": info, "epoch_seconds": epoch_seconds, "tree_over_esim": ratios},
    )
    print(json.dumps(info))


if __name__ == "__main__":
    main()
