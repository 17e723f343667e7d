"""AllenNLP's own distributed training, two CPU workers over gloo, with the SPINN NLI model."""
import json

from tests.conftest import ROOT
from tests.modules.test_spinn_encoder import allennlp
from tests.nli.test_nli_model import ENCODER_SIZES, SMALL


def test_two_cpu_workers_train_full_spinn(tmp_path):
    out = tmp_path / "distributed"
    overrides = {**SMALL, **ENCODER_SIZES["spinn"],
                 "distributed": {"cuda_devices": [-1, -1]},
                 "trainer.num_epochs": 2}
    allennlp("train", str(ROOT / "training_config" / "spinn.jsonnet"), "-s", str(out),
             "--include-package", "spinn_allennlp", "-o", json.dumps(overrides), cwd=ROOT)
    metrics = json.loads((out / "metrics.json").read_text())
    # Both workers trained (each reports its memory) and the metrics were gathered.
    assert "peak_worker_0_memory_MB" in metrics and "peak_worker_1_memory_MB" in metrics
    assert metrics["epoch"] == 1
    assert 0.0 <= metrics["validation_accuracy"] <= 1.0
    assert metrics["validation_valid_tree_rate"] == 1.0
    assert (out / "model.tar.gz").exists()
