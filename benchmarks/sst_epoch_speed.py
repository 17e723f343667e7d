"""Seconds per training epoch on the Stanford Sentiment Treebank (8,544 training trees), for the
shipped SST models, next to AllenNLP's LSTM on the same data.

    python benchmarks/sst_epoch_speed.py [--train data/sst/train.txt.gz] [--batch-size 25]
        [--encoders spinn_pi_nt,child_sum,lstm] [--device cpu|cuda] [--threads 1]
        [--max-batches N] [--out benchmarks/results]

Every model is built from its shipped config (`training_config/classification/
sst_fine_<encoder>.jsonnet`: 300-d learned word vectors, the sizes of Tai et al.'s Table 1,
dropout, AdaGrad) on one vocabulary, and trained on the same length-bucketed batches. A step
is zero_grad, forward (every labelled node's loss for the tree models, the root's for the
LSTM), backward and the optimizer step. The models take turns batch by batch, so all of them
see the same machine load (this matters on a shared machine); an epoch's time is the sum of a
model's step times (data loading excluded: batches are tensorised beforehand). The published
anchor: DGL's Tree-LSTM example, 3.18 s per epoch at batch 256 on a V100.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Dict

import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.samplers import BucketBatchSampler
from allennlp.models import Model
from allennlp.training.optimizers import Optimizer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import environment, markdown_table  # noqa: E402

from spinn_allennlp import plugin  # noqa: E402, F401  (registers the SST components)
from spinn_allennlp.classification.dataset_readers import SstTreesReader  # noqa: E402
from spinn_core.testing import CONFIGS_ROOT  # noqa: E402

NAMES = {
    "spinn_pi_nt": "SPINN-PI-NT (level-wise) = constituency Tree-LSTM",
    "spinn_pi": "SPINN-PI (tracking 64)",
    "spinn": "SPINN (tracking 64, own parser)",
    "child_sum": "Child-Sum Tree-LSTM (dependency)",
    "lstm": "AllenNLP LSTM (root label)",
    "bilstm": "AllenNLP BiLSTM (root label)",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", default="data/sst/train.txt.gz", help="SST training trees")
    parser.add_argument("--batch-size", type=int, default=25)
    parser.add_argument("--encoders", default="spinn_pi_nt,child_sum,lstm")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--max-batches", type=int, default=None, help="time only this many")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    encoders = args.encoders.split(",")
    device = torch.device(args.device)

    reader = SstTreesReader(dependencies=True)
    instances = list(reader.read(args.train))
    vocab = Vocabulary.from_instances(instances)
    for instance in instances:
        instance.index_fields(vocab)
    sampler = BucketBatchSampler(batch_size=args.batch_size, sorting_keys=["tokens"])
    all_indices = list(sampler.get_batch_indices(instances))
    batches = [
        Batch([instances[i] for i in indices]).as_tensor_dict()
        for indices in all_indices[: args.max_batches]
    ]
    batches = [_to(batch, device) for batch in batches]

    models: Dict[str, Model] = {}
    optimizers = {}
    for encoder in encoders:
        params = Params.from_file(
            str(CONFIGS_ROOT / "classification" / f"sst_fine_{encoder}.jsonnet")
        )
        model = Model.from_params(vocab=vocab, params=params["model"]).to(device).train()
        models[encoder] = model
        parameters = [[n, p] for n, p in model.named_parameters() if p.requires_grad]
        optimizers[encoder] = Optimizer.from_params(
            model_parameters=parameters, params=params["trainer"]["optimizer"]
        )

    seconds = {encoder: 0.0 for encoder in encoders}
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for batch in batches:
        for encoder in encoders:
            model, optimizer = models[encoder], optimizers[encoder]
            synchronize()
            start = time.perf_counter()
            optimizer.zero_grad()
            model(**batch)["loss"].backward()
            optimizer.step()
            synchronize()
            seconds[encoder] += time.perf_counter() - start
    fraction = len(batches) / max(1, len(all_indices))
    epoch = {encoder: seconds[encoder] / fraction for encoder in encoders}

    reference = "lstm" if "lstm" in encoders else encoders[0]
    rows = [[NAMES[e], f"{epoch[e]:.1f}", f"{epoch[e] / epoch[reference]:.2f}x"] for e in encoders]
    header = [
        "model",
        f"s / epoch (batch {args.batch_size}, {args.device})",
        f"time / {NAMES[reference]}",
    ]
    table = markdown_table(header, rows)
    print(table)
    info = environment(args.device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"sst_epoch_{args.device}_b{args.batch_size}"
    note = f"{len(instances)} SST training trees, {len(batches)} batches" + (
        f" (of {int(len(batches) / fraction)}; epoch time extrapolated)" if fraction < 1 else ""
    )
    (out / f"{stem}.md").write_text(f"{table}\n\n{note}; {info}\n")
    (out / f"{stem}.json").write_text(
        json.dumps(
            {"seconds_per_epoch": epoch, "batches": len(batches), "fraction": fraction, **info},
            indent=2,
        )
    )


def _to(batch: Dict, device: torch.device) -> Dict:
    moved = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            moved[key] = value.to(device)
        elif isinstance(value, dict):
            moved[key] = _to(value, device)
        else:
            moved[key] = value
    return moved


if __name__ == "__main__":
    main()
