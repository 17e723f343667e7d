"""The plugin as AllenNLP's command line finds it (a subprocess each: its import takes ~16 s)."""

import json

from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from spinn_allennlp.testing.cli import run_allennlp, run_python


def test_cli_test_install_finds_the_plugin(tmp_path):
    # Run from outside the repo so only --include-package can find the plugin.
    result = run_allennlp("test-install", "--include-package", "spinn_allennlp", cwd=tmp_path)
    # run_allennlp raises when the command fails (e.g. the plugin can't be imported).
    assert "AllenNLP version 2.10.1 installed" in result.stdout + result.stderr


def test_cli_trains_basic_classifier_with_spinn_encoder(tmp_path):
    """AllenNLP's own text classifier, no transitions anywhere: `"type": "spinn"` found through
    `.allennlp_plugins` in the repository root (no --include-package)."""
    out = tmp_path / "out"
    run_allennlp(
        "train",
        str(FIXTURES_ROOT / "classification" / "basic_classifier_spinn.jsonnet"),
        "-s",
        str(out),
        cwd=PROJECT_ROOT,
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epoch"] == 0  # one epoch, counted from 0
    assert 0.0 <= metrics["training_accuracy"] <= 1.0
    assert metrics["training_loss"] > 0
    assert (out / "model.tar.gz").exists()


def test_plugins_file_registers_everything():
    """What AllenNLP does with `.allennlp_plugins` (import each named module, non-recursively)
    registers every component, as does a plugins file naming just the package."""
    names = (PROJECT_ROOT / ".allennlp_plugins").read_text().split()
    script = f"""
import importlib
import allennlp
for name in {names!r} + ["spinn_allennlp"]:
    importlib.import_module(name)
from allennlp.data import DatasetReader, Tokenizer
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder
from allennlp.predictors import Predictor
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.metrics import Metric
from spinn_allennlp.data.tree_sources import TreeSource
for base, name in [(Seq2VecEncoder, "spinn"), (DatasetReader, "snli_transitions"),
                   (Model, "spinn_nli"), (Predictor, "spinn_nli"), (Tokenizer, "ptb_spacy"),
                   (LearningRateScheduler, "step_decay_per_batch"), (Metric, "share"),
                   (Metric, "parse_metrics"), (TreeSource, "balanced"),
                   (TreeSource, "left_branching"), (TreeSource, "right_branching")]:
    base.by_name(name)
print("ok")
"""
    assert run_python(script, cwd=PROJECT_ROOT).strip().endswith("ok")


def test_core_and_testing_load_without_allennlp():
    """The core, its test helpers and the benchmarks need torch alone."""
    script = (
        "import sys; sys.path.insert(0, 'benchmarks'); "
        "import spinn_allennlp.core, spinn_allennlp.testing, common; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'allennlp'))"
    )
    assert run_python(script, cwd=PROJECT_ROOT).strip() == "[]"
