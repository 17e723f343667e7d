"""Numerics: the shipped SNLI configs trained for 1,000+ batches at the paper's learning rate
and at 10x it, checking after every batch that the loss, every gradient and every parameter
are finite.

    .venv/bin/python scripts/numerics_check.py --config spinn --lr-scale 10 \\
        --out runs/numerics/spinn_x10
    .venv/bin/python scripts/numerics_check.py --summarize runs/numerics \\
        --results results/numerics

Each run is `allennlp train training_config/pair_classification/<config>.jsonnet` in process,
unchanged but for: the learning rate times `--lr-scale`, `--epochs` epochs (6 epochs of the
bundled 1 % train subset = 1,026 batches of 32), no validation, and a trainer callback that
checks every batch (after the optimizer step, when the gradients of the step are still there)
and stops the run at the first non-finite value. It records per batch the loss, the gradient
norm before clipping (the configs clip at 5) and the largest parameter.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import torch
from allennlp.commands.train import train_model
from allennlp.common import Params
from allennlp.training.callbacks import TrainerCallback

import spinn_allennlp.plugin  # noqa: F401  (registers the project's components)

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["lstm", "spinn_pi_nt", "spinn_pi", "spinn"]
NAMES = {"lstm": "LSTM RNN", "spinn_pi_nt": "SPINN-PI-NT", "spinn_pi": "SPINN-PI", "spinn": "SPINN"}


class NonFiniteError(RuntimeError):
    pass


@TrainerCallback.register("numerics_log")
class NumericsLog(TrainerCallback):
    """Checks and records every training batch (see the module docstring)."""

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self.records: List[Dict[str, Any]] = []

    def on_batch(
        self,
        trainer,
        batch_inputs,
        batch_outputs,
        batch_metrics,
        epoch,
        batch_number,
        is_training,
        is_primary=True,
        batch_grad_norm=None,
        **kwargs,
    ):
        if not is_training:
            return
        loss = float(sum(float(output["loss"]) for output in batch_outputs))
        model = trainer.model
        bad_grads = [
            name
            for name, p in model.named_parameters()
            if p.grad is not None and not bool(torch.isfinite(p.grad).all())
        ]
        bad_params = [n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
        largest = max(float(p.detach().abs().max()) for p in model.parameters())
        record = {
            "batch": len(self.records) + 1,
            "epoch": epoch,
            "loss": loss,
            "grad_norm": None if batch_grad_norm is None else float(batch_grad_norm),
            "largest_parameter": largest,
            "lr": trainer.optimizer.param_groups[0]["lr"],
        }
        self.records.append(record)
        problems = []
        if not math.isfinite(loss):
            problems.append(f"loss {loss}")
        if record["grad_norm"] is not None and not math.isfinite(record["grad_norm"]):
            problems.append(f"gradient norm {record['grad_norm']}")
        if bad_grads:
            problems.append(f"non-finite gradients in {bad_grads[:5]}")
        if bad_params:
            problems.append(f"non-finite parameters in {bad_params[:5]}")
        if problems:
            self._write()
            raise NonFiniteError(f"batch {record['batch']}: " + "; ".join(problems))
        if record["batch"] % 100 == 0:
            print(f"batch {record['batch']}: loss {loss:.4f}", file=sys.stderr, flush=True)

    def on_end(self, trainer, metrics=None, epoch=None, is_primary=True, **kwargs) -> None:
        self._write()

    def _write(self) -> None:
        path = Path(self.serialization_dir) / "numerics_batches.json"
        path.write_text(json.dumps(self.records))


def run(config: str, lr_scale: float, epochs: int, out: Path) -> Dict[str, Any]:
    params = Params.from_file(
        str(ROOT / "training_config" / "pair_classification" / f"{config}.jsonnet")
    )
    lr = params["trainer"]["optimizer"]["lr"] * lr_scale
    overrides = {
        "trainer.optimizer.lr": lr,
        "trainer.num_epochs": epochs,
        "trainer.patience": None,
        "trainer.callbacks": [{"type": "numerics_log"}],
        "validation_data_path": None,
        "validation_data_loader": None,
        "evaluate_on_test": False,
    }
    params = Params.from_file(
        str(ROOT / "training_config" / "pair_classification" / f"{config}.jsonnet"),
        json.dumps(overrides),
    )
    start = time.perf_counter()
    error = None
    try:
        train_model(params, str(out), force=True)
    except NonFiniteError as exception:
        error = str(exception)
    records = json.loads((out / "numerics_batches.json").read_text())
    finite = [r for r in records if math.isfinite(r["loss"])]
    last = finite[-100:]
    grad_norms = [r["grad_norm"] for r in records if r["grad_norm"] is not None]
    summary = {
        "config": config,
        "lr": lr,
        "lr_scale": lr_scale,
        "batches": len(records),
        "non_finite": error,
        "first_loss": records[0]["loss"] if records else None,
        "mean_loss_last_100": sum(r["loss"] for r in last) / len(last) if last else None,
        "max_grad_norm": max(grad_norms) if grad_norms else None,
        "median_grad_norm": sorted(grad_norms)[len(grad_norms) // 2] if grad_norms else None,
        "clipped_fraction": sum(g > 5.0 for g in grad_norms) / len(grad_norms)
        if grad_norms
        else None,
        "max_abs_parameter": max(r["largest_parameter"] for r in records) if records else None,
        "final_lr": records[-1]["lr"] if records else None,
        "wall_seconds": time.perf_counter() - start,
        "threads": torch.get_num_threads(),
    }
    (out / "numerics_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def summarize(runs: Path, results: Path) -> None:
    summaries = [json.loads(p.read_text()) for p in sorted(runs.glob("*/numerics_summary.json"))]
    order = {config: i for i, config in enumerate(CONFIGS)}
    summaries.sort(key=lambda s: (order[s["config"]], s["lr_scale"]))
    header = [
        "config",
        "learning rate",
        "batches",
        "NaN/inf",
        "loss: first",
        "loss: mean of last 100",
        "grad norm: median / max (before clipping at 5)",
        "batches clipped",
        "largest |parameter|",
        "wall time",
    ]
    rows = []
    for s in summaries:
        rows.append(
            [
                NAMES[s["config"]],
                f"{s['lr']:g} ({s['lr_scale']:g}x paper)",
                f"{s['batches']:,}",
                s["non_finite"] or "none",
                f"{s['first_loss']:.3f}",
                f"{s['mean_loss_last_100']:.3f}",
                f"{s['median_grad_norm']:.3g} / {s['max_grad_norm']:.3g}",
                f"{100 * s['clipped_fraction']:.0f} %",
                f"{s['max_abs_parameter']:.3g}",
                f"{s['wall_seconds'] / 60:.1f} min",
            ]
        )
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    results.mkdir(parents=True, exist_ok=True)
    (results / "numerics.md").write_text("\n".join(lines) + "\n")
    (results / "numerics.json").write_text(json.dumps(summaries, indent=2) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=CONFIGS)
    parser.add_argument("--lr-scale", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--summarize", type=Path, help="a folder of runs: write the table")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "numerics")
    args = parser.parse_args()
    if args.summarize:
        summarize(args.summarize, args.results)
        return
    if not args.config or not args.out:
        parser.error("--config and --out are needed to run")
    torch.set_num_threads(args.threads)
    os.chdir(ROOT)  # the configs' default data paths are relative to the repository root
    print(json.dumps(run(args.config, args.lr_scale, args.epochs, args.out.resolve()), indent=2))


if __name__ == "__main__":
    main()
