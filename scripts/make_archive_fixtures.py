"""Archives tiny models of every encoder path with the code it runs under, and records what
they answer, for tests/test_archive_compatibility_v0_2.py (a later release must load them and
answer the same).

    cd <checkout of the release>; PYTHONPATH=. python <this script> OUT_DIR

Trains, through `allennlp train` with the test suite's small sizes and 2 epochs, one model per
path: full SPINN with typed REDUCE on SNLI (thin stack, own parse at test time), NSHRDLU Model 3
(soft stack), SPINN-PI-NT (level-wise), the tree-LSTM attention model (node inputs, leaves as
cells) and the full SPINN with stack and buffer summaries on ListOps. For each it writes
OUT_DIR/<name>.tar.gz, <name>.predictions.jsonl (`allennlp predict` on the task's fixture
lines) and <name>.metrics.json (`allennlp evaluate` on the task's sample).
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The repository root on the path: the lab code in tools/ is not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spinn_core.testing.paths import FIXTURES_ROOT
from tools.testing.configs import (  # noqa: E402
    LISTOPS_SAMPLE,
    SNLI_SAMPLE,
    attention_small_overrides,
    listops_config,
    listops_small_overrides,
    snli_config,
    snli_small_overrides,
)

RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"
TWO_EPOCHS = {"trainer.num_epochs": 2, "random_seed": 1, "numpy_seed": 1, "pytorch_seed": 1}

# name: (config, overrides, file to predict, file to evaluate)
MODELS = {
    "spinn_typed": (
        snli_config("spinn_typed"),
        snli_small_overrides("spinn_typed", **TWO_EPOCHS),
        RAW_PAIRS,
        SNLI_SAMPLE,
    ),
    "spinn_model3": (
        snli_config("spinn_model3"),
        snli_small_overrides("spinn", **TWO_EPOCHS),
        RAW_PAIRS,
        SNLI_SAMPLE,
    ),
    "spinn_pi_nt": (
        snli_config("spinn_pi_nt"),
        snli_small_overrides("spinn_pi_nt", **TWO_EPOCHS),
        RAW_PAIRS,
        SNLI_SAMPLE,
    ),
    "tree_esim": (
        snli_config("tree_esim"),
        attention_small_overrides("tree_esim", **TWO_EPOCHS),
        RAW_PAIRS,
        SNLI_SAMPLE,
    ),
    "listops_spinn_summaries": (
        listops_config("spinn_summaries"),
        listops_small_overrides("spinn_summaries", **TWO_EPOCHS),
        LISTOPS_SAMPLE,
        LISTOPS_SAMPLE,
    ),
}


def allennlp(*args: str) -> None:
    command = [sys.executable, "-m", "allennlp", *args, "--include-package", "spinn_allennlp"]
    subprocess.run(command, check=True)


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name, (config, overrides, to_predict, to_evaluate) in MODELS.items():
        with tempfile.TemporaryDirectory() as run:
            allennlp("train", str(config), "-s", run, "-f", "-o", json.dumps(overrides))
            shutil.copy(Path(run) / "model.tar.gz", out / f"{name}.tar.gz")
        archive = str(out / f"{name}.tar.gz")
        predictions = str(out / f"{name}.predictions.jsonl")
        how = ["--use-dataset-reader", "--predictor", "text_classifier"]
        if to_predict == RAW_PAIRS:
            how = []  # the model's own predictor on raw JSON pairs
        allennlp(
            "predict", archive, str(to_predict), "--output-file", predictions, "--silent", *how
        )
        metrics = str(out / f"{name}.metrics.json")
        allennlp("evaluate", archive, str(to_evaluate), "--output-file", metrics)


if __name__ == "__main__":
    main()
