"""Configs written as allennlp-models writes them, with `"type": "spinn"` in their encoder slot,
trained end to end through the AllenNLP command line on the bundled data
(training_config/allennlp_models/): allennlp-models' `sst_tokens` reader with AllenNLP's
`basic_classifier`, and its `snli` reader with its `bimpm` pair classifier (our encoder as
BiMPM's aggregator). They need the optional "models" extra, requirements/models-lock.txt, which
`make setup` installs: without it these tests fail, saying so (CI runs them)."""

import importlib.metadata
import json
import re
import subprocess
import tarfile

import pytest
from allennlp.models.archival import load_archive

from spinn_allennlp.modules import SpinnEncoder
from spinn_allennlp.testing import CONFIGS_ROOT, PROJECT_ROOT
from tools.testing.cli import run_allennlp_commands

CONFIGS = CONFIGS_ROOT / "allennlp_models"
SST = CONFIGS / "basic_stanford_sentiment_treebank_spinn.jsonnet"
BIMPM = CONFIGS / "snli_bimpm_spinn.jsonnet"
# The shipped configs as they are, on the first lines of the bundled files (the training reader
# caps the validation file alike when no validation reader is given), for one epoch.
SMALL = {"dataset_reader.max_instances": 100, "trainer.num_epochs": 1}


def locked_models_version() -> str:
    lock = (PROJECT_ROOT / "requirements" / "models-lock.txt").read_text()
    match = re.search(r"^allennlp-models==(\S+)$", lock, flags=re.M)
    assert match, "requirements/models-lock.txt does not pin allennlp-models"
    return match.group(1)


def test_the_models_extra_is_installed_as_locked():
    try:
        installed = importlib.metadata.version("allennlp-models")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(
            "allennlp-models is not installed: `make setup` installs the models extra "
            "(requirements/models-lock.txt); in your own environment: "
            "pip install --no-deps -r requirements/models-lock.txt"
        )
    assert installed == locked_models_version()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """`make plain-data` as a user runs it, then both configs trained in one interpreter, from a
    directory outside the repository."""
    root = tmp_path_factory.mktemp("allennlp_models")
    plain_data = f"PLAIN_DATA={root / 'out' / 'data'}"
    subprocess.run(
        ["make", "-s", "-C", str(PROJECT_ROOT), "plain-data", plain_data],
        check=True,
        capture_output=True,
        timeout=300,
    )
    include = ["--include-package", "spinn_allennlp"]
    small = ["-o", json.dumps(SMALL)]
    commands = [
        ["train", str(SST), "-s", "sst", *small, *include],
        ["train", str(BIMPM), "-s", "bimpm", *small, *include],
    ]
    result = run_allennlp_commands(commands, cwd=root)
    return root, result.stdout + result.stderr


@pytest.mark.parametrize(
    "name, reader, model",
    [("sst", "sst_tokens", "basic_classifier"), ("bimpm", "snli", "bimpm")],
)
def test_their_configs_train_with_the_spinn_encoder(runs, name, reader, model):
    root, _ = runs
    metrics = json.loads((root / name / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert 0 <= metrics["training_accuracy"] <= 1 and 0 <= metrics["validation_accuracy"] <= 1
    assert metrics["training_loss"] > 0
    config = json.loads((root / name / "config.json").read_text())
    assert (config["dataset_reader"]["type"], config["model"]["type"]) == (reader, model)
    with tarfile.open(root / name / "model.tar.gz") as archive:
        assert {"config.json", "weights.th"} <= set(archive.getnames())


def test_the_archives_hold_our_encoder_in_their_slots(runs):
    """The trained models load (allennlp-models registered by AllenNLP's default-plugin import
    in the CLI; here by importing it) with a SpinnEncoder where their configs have an LSTM."""
    import allennlp_models.classification  # noqa: F401  (registers what the archives name)
    import allennlp_models.pair_classification  # noqa: F401

    root, _ = runs
    classifier = load_archive(str(root / "sst" / "model.tar.gz")).model
    assert isinstance(classifier._seq2vec_encoder, SpinnEncoder)
    bimpm = load_archive(str(root / "bimpm" / "model.tar.gz")).model
    assert isinstance(bimpm.aggregator, SpinnEncoder)
    assert bimpm.aggregator.get_output_dim() * 2 == bimpm.classifier_feedforward.get_input_dim()
