"""What a new user runs through AllenNLP's command line with `--include-package spinn_allennlp`,
from outside the repository, in one interpreter (AllenNLP's CLI import costs ~16 s):

* a pair-classification config written the way allennlp-models writes them (`reduce_on_plateau`
  with factor 0.5, mode max, patience 0; bucket sampler; "+accuracy") with our `spinn_nli`;
* the same training settings with our `"spinn"` encoder inside AllenNLP's own
  `basic_classifier`;
* `training_config/classification/text_spinn.jsonnet` (single sentences with real trees) on SST
  dev sentences, some with their binary parse and some without;
* `allennlp evaluate` of the NLI model on a file mixing lines with and without parses, and
  `allennlp predict` of the single-sentence model on raw sentences;
* `allennlp predict` logging bad lines with their line numbers in the input file;
* none of the warnings of AllenNLP's dependencies that no user can act on (with the start-up
  file an installed package ships).
"""

import json

import pytest
import torch

from spinn_allennlp.dependency_warnings import startup_line
from spinn_allennlp.testing import CONFIGS_ROOT, FIXTURES_ROOT
from spinn_allennlp.testing.cli import run_allennlp_commands

NLI_CONFIG = FIXTURES_ROOT / "pair_classification" / "allennlp_models_style_spinn_nli.jsonnet"
BASIC_CONFIG = FIXTURES_ROOT / "classification" / "allennlp_models_style_basic_classifier.jsonnet"
TEXT_CONFIG = CONFIGS_ROOT / "classification" / "text_spinn.jsonnet"
TEXT_SAMPLE = FIXTURES_ROOT / "classification" / "sst_dev_parses_sample.jsonl"
MIXED = FIXTURES_ROOT / "pair_classification" / "snli" / "mixed_parses.jsonl"
ARCHIVE = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"
TEXT_SMALL = {
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.encoder.input_dim": 12,
    "model.encoder.hidden_dim": 10,
    "model.encoder.tracking_dim": 6,
    "model.mlp_dim": 8,
    "trainer.num_epochs": 2,
    "data_loader.batch_sampler.batch_size": 8,
}
# Line 2 is blank, 3 not JSON, 5 has no hypothesis: errors name lines 3 and 5.
PREDICT_LINES = [
    '{"premise": "A man is playing a guitar.", "hypothesis": "A man plays music."}',
    "",
    '{"premise": "A dog runs',
    '{"premise": "Two kids sleep.", "hypothesis": "Children are awake."}',
    '{"premise": "A woman sings."}',
]


SENTENCES = ["A lovely film.", "Dull (and long)."]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(working directory, output) of one interpreter running every command."""
    root = tmp_path_factory.mktemp("new_user")
    (root / "inputs.jsonl").write_text("\n".join(PREDICT_LINES) + "\n", encoding="utf-8")
    (root / "sentences.jsonl").write_text(
        "".join(json.dumps({"sentence": text}) + "\n" for text in SENTENCES), encoding="utf-8"
    )
    include = ["--include-package", "spinn_allennlp"]
    commands = [
        ["train", str(NLI_CONFIG), "-s", "nli", *include],
        ["train", str(BASIC_CONFIG), "-s", "basic", *include],
        ["train", str(TEXT_CONFIG), "-s", "text", "-o", json.dumps(TEXT_SMALL), *include],
        [
            "evaluate",
            "nli/model.tar.gz",
            str(MIXED),
            "--output-file",
            "mixed_metrics.json",
            *include,
        ],
        [
            "predict",
            "text/model.tar.gz",
            "sentences.jsonl",
            "--predictor",
            "text_classifier",
            "--silent",
            "--output-file",
            "sentence_predictions.jsonl",
            *include,
        ],
        [
            "predict",
            str(ARCHIVE),
            "inputs.jsonl",
            "--batch-size",
            "2",
            "--silent",
            "--output-file",
            "predictions.jsonl",
            *include,
        ],
    ]
    env = {"TEXT_TRAIN": str(TEXT_SAMPLE), "TEXT_DEV": str(TEXT_SAMPLE)}
    # The start-up file an installed spinn_allennlp puts in site-packages (setup.py).
    site_dir = root / "site-packages"
    site_dir.mkdir()
    (site_dir / "spinn_allennlp_warnings.pth").write_text(startup_line(), encoding="utf-8")
    result = run_allennlp_commands(commands, cwd=root, env=env, site_dir=site_dir)
    return root, result.stdout + result.stderr


def last_training_state(serialization_dir):
    """The trainer's state saved after the second (last) epoch."""
    (state_file,) = sorted(serialization_dir.glob("training_state_e2*.th"))
    return torch.load(state_file, weights_only=False)


@pytest.mark.parametrize("name", ["nli", "basic"])
def test_allennlp_models_style_configs_train_with_their_plateau_scheduler(runs, name):
    """Their `reduce_on_plateau` (AllenNLP's own fails on this torch) ran with their keys: it
    stepped on the validation accuracy after each of the two epochs, and halved the learning
    rate exactly when the second epoch did not improve on the first."""
    root, _ = runs
    metrics = json.loads((root / name / "metrics.json").read_text())
    assert metrics["epoch"] == 1 and 0 <= metrics["best_validation_accuracy"] <= 1
    assert (root / name / "model.tar.gz").exists()
    state = last_training_state(root / name)
    scheduler = state["learning_rate_scheduler"]
    assert (scheduler["mode"], scheduler["factor"], scheduler["patience"]) == ("max", 0.5, 0)
    assert scheduler["last_epoch"] == 2
    assert scheduler["best"] == pytest.approx(metrics["best_validation_accuracy"])
    expected_lr = 0.0004 if metrics["best_epoch"] == 1 else 0.0002
    assert [group["lr"] for group in state["optimizer"]["param_groups"]] == pytest.approx(
        [expected_lr]
    )


def test_the_full_spinn_nli_reports_its_parser(runs):
    root, _ = runs
    metrics = json.loads((root / "nli" / "metrics.json").read_text())
    assert 0 < metrics["training_transition_accuracy"] <= 1


def test_single_sentences_with_real_trees_train_through_the_cli(runs):
    """Text and label lines, two thirds with their binary parse: the parser learns from those
    (its accuracy is reported) and the classifier trains."""
    root, _ = runs
    metrics = json.loads((root / "text" / "metrics.json").read_text())
    assert 0 <= metrics["validation_accuracy"] <= 1
    assert 0 < metrics["training_transition_accuracy"] <= 1
    assert metrics["validation_valid_tree_rate"] == 1.0  # its own parse at evaluation


def test_predict_on_raw_sentences_with_allennlps_text_classifier_predictor(runs):
    """The full SPINN parses raw text itself; the output has the label and the tree."""
    root, _ = runs
    lines = (root / "sentence_predictions.jsonl").read_text().splitlines()
    outputs = [json.loads(line) for line in lines]
    assert [output["label"] in ("pos", "neg") for output in outputs] == [True, True]
    assert outputs[1]["tree"].replace("(", " ").replace(")", " ").split() == [
        "Dull",
        "-LRB-",
        "and",
        "long",
        "-RRB-",
        ".",
    ]
    assert outputs[1]["transitions_source"] == "predicted"


def test_evaluate_on_a_file_mixing_lines_with_and_without_parses(runs):
    """AllenNLP refused such a file ("non-homogeneous Instances")."""
    root, _ = runs
    metrics = json.loads((root / "mixed_metrics.json").read_text())
    assert 0 <= metrics["accuracy"] <= 1 and 0 <= metrics["bracket_f1"] <= 1


def test_predict_names_bad_lines_by_their_line_in_the_file(runs):
    root, output = runs
    assert "line 3: bad JSON" in output
    assert "line 5: missing field: sentence2 or hypothesis" in output
    assert "input 0" not in output
    outputs = [json.loads(line) for line in (root / "predictions.jsonl").read_text().splitlines()]
    assert ["error" in output for output in outputs] == [False, True, False, True]


def test_no_dependency_warnings_reach_the_user(runs):
    """torchvision's image extension, fairscale's and AllenNLP's deprecated torch.cuda.amp
    calls: printed by every command before (they fire before any plugin loads)."""
    _, output = runs
    for text in ("Failed to load image Python extension", "custom_fwd", "amp.autocast"):
        assert text not in output
    assert "FutureWarning" not in output and "UserWarning" not in output
