"""AllenNLP's own distributed training, two CPU workers over gloo, with the SPINN NLI model."""

import json

from spinn_allennlp.testing import PROJECT_ROOT
from spinn_allennlp.testing.cli import run_allennlp
from spinn_allennlp.testing.configs import as_json, snli_config, snli_small_overrides


def test_two_cpu_workers_train_full_spinn(tmp_path):
    out = tmp_path / "distributed"
    overrides = snli_small_overrides(
        "spinn", **{"distributed": {"cuda_devices": [-1, -1]}, "trainer.num_epochs": 2}
    )
    run_allennlp(
        "train",
        str(snli_config("spinn")),
        "-s",
        str(out),
        "--include-package",
        "spinn_allennlp",
        "-o",
        as_json(overrides),
        cwd=PROJECT_ROOT,
    )
    metrics = json.loads((out / "metrics.json").read_text())
    # Both workers trained (each reports its memory) and the metrics were gathered.
    assert "peak_worker_0_memory_MB" in metrics and "peak_worker_1_memory_MB" in metrics
    assert metrics["epoch"] == 1
    assert 0.0 <= metrics["validation_accuracy"] <= 1.0
    assert metrics["validation_valid_tree_rate"] == 1.0
    assert (out / "model.tar.gz").exists()
