"""AllenNLP's own distributed training, two CPU workers over gloo, with the SPINN NLI model."""

import json

from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from tools.testing.cli import run_allennlp
from tools.testing.configs import SNLI_SAMPLE, as_json, snli_config, snli_small_overrides

MALFORMED = FIXTURES_ROOT / "pair_classification" / "snli" / "malformed.jsonl"


def test_two_cpu_workers_train_full_spinn(tmp_path):
    out = tmp_path / "distributed"
    # The sample with the malformed lines after it: each worker skips its share of them.
    train = tmp_path / "train.jsonl"
    train.write_bytes(SNLI_SAMPLE.read_bytes() + MALFORMED.read_bytes())
    overrides = snli_small_overrides(
        "spinn",
        **{
            "distributed": {"cuda_devices": [-1, -1]},
            "trainer.num_epochs": 2,
            "train_data_path": str(train),
        },
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
    # One summary of the training file, merged over both workers' shards, in the first
    # worker's log (the one on the console); per-line warnings come from the worker that
    # read the line.
    logs = [(out / f"out_worker{rank}.log").read_text() for rank in (0, 1)]
    merged = [line for line in logs[0].splitlines() if f"{train}: read" in line]
    assert len(merged) == 1, merged
    assert merged[0].endswith("(merged from 2 shards)")
    assert "skipped 11 malformed" in merged[0] and "dropped 3 (no gold label: 3)" in merged[0]
    assert f"{train}: read" not in logs[1]
    skip_lines = [line for log in logs for line in log.splitlines() if ": skipped: " in line]
    assert len(skip_lines) == 11
