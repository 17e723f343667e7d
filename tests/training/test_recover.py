"""An interrupted `allennlp train` (SIGKILL mid-epoch), run again with `--recover`, ends with
the same weights and metrics, bit for bit, as a run never interrupted: the full SPINN, and a
latent parser trained by REINFORCE and PPO's further updates (a trainer callback that steps the
optimizer after the trainer's step, with dropout drawn in each further pass)."""

import json

import pytest
import torch

from spinn_allennlp.testing import PROJECT_ROOT
from tools.testing.cli import run_allennlp
from tools.testing.configs import as_json, snli_small_overrides

# Measures of the run itself, not of what it learned.
NOT_COMPARED = ("training_duration", "training_start_epoch", "training_epochs", "peak_", "epoch")
NOT_COMPARED += ("training_worker_", "training_cpu_", "validation_worker_")


CONFIGS = {
    "spinn": "training_config/spinn.jsonnet",
    "spinn_ppo": "training_config/pair_classification/spinn_ppo.jsonnet",
}


def overrides(variant, marker_dir, kill_points):
    further_updates = [{"type": "parser_updates"}] if variant == "spinn_ppo" else []
    return as_json(
        snli_small_overrides(
            variant,
            **{
                "trainer.num_epochs": 3,
                # A random batch order (and the validation loader's bucket sampler, which
                # shuffles too), dropout in the model: every generator matters.
                "data_loader": {"batch_size": 8, "shuffle": True},
                # Checkpoints at the end of each epoch (the default) and after every 2 batches.
                "trainer.checkpointer": {"save_every_num_batches": 2},
                "trainer.callbacks": [
                    {"type": "restore_random_state"},
                    *further_updates,
                    {
                        # Not registered (the suite's helper, in tools/): the full class name
                        # makes AllenNLP import it, from the checkout (the command's cwd).
                        "type": "tools.testing.callbacks.SigkillAt",
                        "points": kill_points,
                        "marker_dir": str(marker_dir),
                    },
                ],
            },
        )
    )


def train(variant, out, marker_dir, kill_points, *extra, check=True):
    return run_allennlp(
        "train",
        CONFIGS[variant],
        "-s",
        str(out),
        "--include-package",
        "spinn_allennlp",
        "-o",
        overrides(variant, marker_dir, kill_points),
        *extra,
        cwd=PROJECT_ROOT,
        check=check,
    )


@pytest.mark.robustness
@pytest.mark.parametrize("variant", sorted(CONFIGS))
def test_recovered_run_ends_as_the_uninterrupted_one(tmp_path, variant):
    train(variant, tmp_path / "uninterrupted", tmp_path / "never", [])

    out, markers = tmp_path / "interrupted", tmp_path / "markers"
    # Killed after batch 1 of epoch 1: the last checkpoint is the end of epoch 0. Then, in the
    # recovered run, after batch 3 of epoch 2: the last checkpoint is mid-epoch (batch 2).
    points = [[1, 1], [2, 3]]
    first = train(variant, out, markers, points, check=False)
    assert first.returncode == -9, first.stderr[-2000:]  # SIGKILL
    assert not (out / "model.tar.gz").exists()
    second = train(variant, out, markers, points, "--recover", check=False)
    assert second.returncode == -9, second.stderr[-2000:]
    assert "random state restored from the checkpoint at epoch 1" in second.stdout + second.stderr
    third = train(variant, out, markers, points, "--recover")
    assert "random state restored from the checkpoint at epoch 2" in third.stdout + third.stderr
    assert sorted(p.name for p in markers.iterdir()) == ["killed_e1_b1", "killed_e2_b3"]

    def metrics(run, name):
        values = json.loads((tmp_path / run / name).read_text())
        return {k: v for k, v in values.items() if not k.startswith(NOT_COMPARED)}

    # Epochs 0 and 1 ran whole in one process each: every metric is the same.
    for epoch in (0, 1):
        name = f"metrics_epoch_{epoch}.json"
        assert metrics("interrupted", name) == metrics("uninterrupted", name)
    # Epoch 2 was resumed after its batch 2: AllenNLP's running training loss and accuracy
    # restart from zero then, so its training_* metrics cover batches 3 and 4 only; everything
    # measured after training (validation, best epoch) is the same.
    expected, recovered = metrics("uninterrupted", "metrics.json"), metrics(out, "metrics.json")
    compared = sorted(k for k in expected if not k.startswith("training_"))
    assert "validation_accuracy" in compared and "best_validation_loss" in compared
    assert {k: recovered[k] for k in compared} == {k: expected[k] for k in compared}
    for name in ("best.th", "model_state_e3_b0.th"):
        weights = torch.load(tmp_path / "uninterrupted" / name)
        recovered_weights = torch.load(out / name)
        assert weights.keys() == recovered_weights.keys()
        for key in weights:
            assert torch.equal(weights[key], recovered_weights[key]), (name, key)
