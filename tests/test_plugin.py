"""The plugin as AllenNLP's command line finds it (a subprocess each: its import takes ~16 s)."""

import json

import pytest

from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from tools.testing.cli import run_allennlp, run_python


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
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.metrics import Metric
from spinn_allennlp.data.tree_sources import TreeSource
for base, name in [(Seq2VecEncoder, "spinn"), (DatasetReader, "snli_transitions"),
                   (Model, "spinn_nli"), (Predictor, "spinn_nli"), (Tokenizer, "ptb_spacy"),
                   (LearningRateScheduler, "step_decay_per_batch"), (Metric, "share"),
                   (Metric, "parse_metrics"), (TreeSource, "balanced"),
                   (TrainerCallback, "restore_random_state"),
                   (TreeSource, "left_branching"), (TreeSource, "right_branching"),
                   (TreeSource, "gold"), (TreeSource, "benepar"), (TreeSource, "spinn")]:
    base.by_name(name)
print("ok")
"""
    assert run_python(script, cwd=PROJECT_ROOT).strip().endswith("ok")


def test_core_and_testing_load_without_allennlp():
    """The core, its test helpers and the benchmarks need torch alone."""
    script = (
        "import sys; sys.path.insert(0, 'benchmarks'); "
        "import spinn_core, spinn_core.testing, common; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'allennlp'))"
    )
    assert run_python(script, cwd=PROJECT_ROOT).strip() == "[]"


BLOCK_ALLENNLP = """
import importlib.abc, sys
class NoAllenNLP(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "allennlp":
            raise ImportError("allennlp is not installed here (torch only)")
sys.meta_path.insert(0, NoAllenNLP())
"""


def test_core_tests_and_benchmarks_run_without_allennlp(tmp_path):
    """With AllenNLP made unimportable, the core's tests are collected (every module imports)
    and both torch benchmarks run end to end at toy sizes. (`scripts/torch_only_env.sh` does
    the same for real in a virtual environment holding only torch, pytest and matplotlib.)"""
    script = (
        BLOCK_ALLENNLP
        + f"""
import runpy
import pytest
assert pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/core"]) == 0
common = ["--threads", "1", "--hidden", "8", "--repeats", "1", "--out", {str(tmp_path)!r}]
for script, options in [
    ("encoding_speed.py", ["--batch-sizes", "2", "--recursive-subset", "2", "--max-len", "6"]),
    ("training_speed.py", ["--batch-sizes", "2", "--lengths", "3,6", "--memory-batch", "2",
                           "--max-len", "6"]),
]:
    sys.argv = [script] + common + options
    runpy.run_path("benchmarks/" + script, run_name="__main__")
print(sorted(m for m in sys.modules if m.split(".")[0] == "allennlp"))
"""
    )
    output = run_python(script, cwd=PROJECT_ROOT)
    assert output.strip().endswith("[]")
    written = sorted(path.name for path in tmp_path.iterdir())
    assert "encoding_speed_cpu.md" in written and "training_cpu.md" in written


REGISTERED = """
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from spinn_allennlp.training import ReduceOnPlateau
for base, name in [(Seq2VecEncoder, "spinn"), (DatasetReader, "snli_transitions"),
                   (Model, "spinn_nli"), (Model, "spinn_classifier")]:
    base.by_name(name)
assert LearningRateScheduler.by_name("reduce_on_plateau") is ReduceOnPlateau
print("registered")
"""


@pytest.mark.parametrize(
    "imports",
    [
        "import spinn_allennlp",
        "import allennlp\nimport spinn_allennlp",
        "import allennlp.models\nimport spinn_allennlp",  # a submodule of AllenNLP first
        "import spinn_core\nimport spinn_allennlp",  # torch-only use first, the plugin later
        # Any one of the plugin's modules: the package's __init__ runs first.
        "from spinn_allennlp.modules import SpinnEncoder",
        "import spinn_allennlp.dependency_warnings",
    ],
)
def test_one_import_registers_everything_whatever_the_order(imports):
    assert run_python(imports + REGISTERED, cwd=PROJECT_ROOT).strip().endswith("registered")
