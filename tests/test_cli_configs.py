"""What a new user runs through AllenNLP's command line with `--include-package spinn_allennlp`,
from outside the repository, in one interpreter (AllenNLP's CLI import costs ~16 s):

* a pair-classification config written the way allennlp-models writes them (`reduce_on_plateau`
  with factor 0.5, mode max, patience 0; bucket sampler; "+accuracy") with our `spinn_nli`;
* the same training settings with our `"spinn"` encoder inside AllenNLP's own
  `basic_classifier`;
* `training_config/classification/text_spinn.jsonnet` (single sentences with real trees) on SST
  dev sentences, some with their binary parse and some without;
* `allennlp evaluate` of the NLI model on a file mixing lines with and without parses, and
  `allennlp predict` of the single-sentence model on raw sentences, an empty one among them,
  with its default predictor;
* a ListOps model trained with a capped validation reader: `allennlp evaluate` says that the
  archive's cap stops it, and reads the whole file once the cap is lifted; `allennlp predict`
  on raw expressions with the archive's default predictor;
* `allennlp predict` logging bad lines with their line numbers in the input file, and answering
  every line, blank ones included, in its place;
* none of the warnings of AllenNLP's dependencies that no user can act on (with the start-up
  file an installed package ships).
"""

import json
import re
import shlex

import pytest
import torch

from spinn_allennlp.dependency_warnings import startup_line
from spinn_allennlp.testing import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tools.testing.cli import run_allennlp_commands
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    listops_config,
    listops_small_overrides,
)

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
    "model.encoder.tracker.tracking_dim": 6,
    "model.mlp_dim": 8,
    "trainer.num_epochs": 2,
    "data_loader.batch_sampler.batch_size": 8,
}
# Line 2 is blank, 3 not JSON, 5 has no hypothesis: errors name lines 2, 3 and 5.
PREDICT_LINES = [
    '{"premise": "A man is playing a guitar.", "hypothesis": "A man plays music."}',
    "",
    '{"premise": "A dog runs',
    '{"premise": "Two kids sleep.", "hypothesis": "Children are awake."}',
    '{"premise": "A woman sings."}',
]


# The second is empty: AllenNLP's text_classifier predictor raised on it and wrote nothing more.


def readme_smoke_run():
    """The README's smoke run: its paragraph, and the train command (as arguments after
    `allennlp`), the pair it writes and where, and the predict command."""
    readme = (PROJECT_ROOT / "README.md").read_text()
    start = readme.index("**A one-minute smoke run**")
    section = readme[start : readme.index("**The full run**")]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block, "the README's smoke run has no bash block"
    train, echo, predict = [
        shlex.split(line) for line in block.group(1).replace("\\\n", " ").splitlines()
    ]
    assert train[:2] == [".venv/bin/allennlp", "train"] and predict[1] == "predict"
    assert echo[0] == "echo" and echo[2] == ">"
    return section, train[1:], echo[1], echo[3], predict[1:]


SMOKE_SECTION, SMOKE_TRAIN, SMOKE_PAIR, SMOKE_PAIRS, SMOKE_PREDICT = readme_smoke_run()
YOUR_OWN_MODEL = PROJECT_ROOT / "docs" / "your_own_model.md"


def documented_section(heading):
    """The jsonnet block (or None) and the `allennlp` commands (as arguments after `allennlp`)
    of the section of docs/your_own_model.md under ``heading``."""
    text = YOUR_OWN_MODEL.read_text()
    start = text.index(f"## {heading}")
    section = text[start : text.index("\n## ", start + 1)]
    config = re.search(r"```jsonnet\n(.*?)```", section, flags=re.S)
    (bash,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    commands = [shlex.split(line) for line in bash.replace("\\\n", " ").splitlines()]
    assert all(command[0] == ".venv/bin/allennlp" for command in commands)
    return config.group(1) if config else None, [command[1:] for command in commands]


# Fine-tuning the smoke run's model the AllenNLP way, and predicting in batches (as written).
FINETUNE_CONFIG, FINETUNE_COMMANDS = documented_section("Fine-tuning a trained model")
_, BATCHED_COMMANDS = documented_section("Predicting many lines")
SENTENCES = ["A lovely film.", "", "Dull (and long)."]
# The ListOps model's validation reader stops after 5 of the sample's 24 lines.
LISTOPS_SMALL = listops_small_overrides(
    "spinn_pi_nt", **{"validation_dataset_reader.max_instances": 5, "test_data_path": None}
)
LISTOPS_UNCAPPED = {"validation_dataset_reader.max_instances": None}
LISTOPS_CAPPED = {"validation_dataset_reader.max_instances": 5}
# A good pair, then a line with a byte that is not UTF-8 (a Latin-1 "é").
NOT_UTF8 = (
    b'{"premise": "A dog runs.", "hypothesis": "An animal moves."}\n'
    b'{"premise": "caf\xe9", "hypothesis": "x"}\n'
)
# A raw expression (= 4), the same with its label, and one that is not an expression.
EXPRESSIONS = [
    {"sentence": "[MAX 2 [MIN 4 7 ] 0 ]"},
    {"sentence": "[MAX 2 [MIN 4 7 ] 0 ]", "label": "4"},
    {"sentence": "[MAX 2 [AVG 4 7 ] 0 ]"},
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(working directory, output) of one interpreter running every command."""
    root = tmp_path_factory.mktemp("new_user")
    (root / "inputs.jsonl").write_text("\n".join(PREDICT_LINES) + "\n", encoding="utf-8")
    (root / "sentences.jsonl").write_text(
        "".join(json.dumps({"sentence": text}) + "\n" for text in SENTENCES), encoding="utf-8"
    )
    (root / "expressions.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in EXPRESSIONS), encoding="utf-8"
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
            "--silent",
            "--output-file",
            "sentence_predictions.jsonl",
            *include,
        ],
        [
            "train",
            str(listops_config("spinn_pi_nt")),
            "-s",
            "listops",
            "-o",
            json.dumps(LISTOPS_SMALL),
            *include,
        ],
        ["evaluate", "listops/model.tar.gz", str(LISTOPS_SAMPLE), "--output-file"]
        + ["listops_default.json", *include],
        ["evaluate", "listops/model.tar.gz", str(LISTOPS_SAMPLE), "--output-file"]
        + ["listops_capped.json", "-o", json.dumps(LISTOPS_CAPPED), *include],
        ["evaluate", "listops/model.tar.gz", str(LISTOPS_SAMPLE), "--output-file"]
        + ["listops_whole.json", "-o", json.dumps(LISTOPS_UNCAPPED), *include],
        ["predict", "listops/model.tar.gz", "expressions.jsonl", "--silent", "--output-file"]
        + ["expression_predictions.jsonl", *include],
        [
            "predict",
            str(ARCHIVE),
            "inputs.jsonl",
            "--batch-size",
            "2",
            "--silent",
            "--output-file",
            "bad_line_predictions.jsonl",
            *include,
        ],
        ["predict", str(ARCHIVE), "not_utf8.jsonl", "--silent", "--output-file"]
        + ["not_utf8_predictions.jsonl", *include],
        # The README's smoke run as it stands there (the config's path made absolute).
        [*SMOKE_TRAIN[:1], str(PROJECT_ROOT / SMOKE_TRAIN[1]), *SMOKE_TRAIN[2:]],
        SMOKE_PREDICT,
        *FINETUNE_COMMANDS,
        *BATCHED_COMMANDS,
    ]
    (root / SMOKE_PAIRS).write_text(SMOKE_PAIR + "\n", encoding="utf-8")
    # The fine-tuning config saved at a clone's root, beside its training_config/.
    (root / "training_config").symlink_to(PROJECT_ROOT / "training_config")
    (root / "finetune.jsonnet").write_text(FINETUNE_CONFIG, encoding="utf-8")
    (root / "not_utf8.jsonl").write_bytes(NOT_UTF8)
    env = {
        "TEXT_TRAIN": str(TEXT_SAMPLE),
        "TEXT_DEV": str(TEXT_SAMPLE),
        # The bundled SNLI data, which the smoke run's config finds from the repository root.
        "SNLI_TRAIN": str(PROJECT_ROOT / "data" / "snli" / "snli_1.0_train_0.01.jsonl.gz"),
        "SNLI_DEV": str(PROJECT_ROOT / "data" / "snli" / "snli_1.0_dev.jsonl.gz"),
    }
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


def test_predict_on_raw_sentences_with_the_archives_default_predictor(runs):
    """The full SPINN parses raw text itself; the output has the label and the tree; the empty
    sentence gets an error in its place and the run goes on."""
    root, output = runs
    lines = (root / "sentence_predictions.jsonl").read_text().splitlines()
    outputs = [json.loads(line) for line in lines]
    assert len(outputs) == 3 and "empty" in outputs[1]["error"]
    assert "line 2: empty sentence: text is empty" in output
    assert [output["label"] in ("pos", "neg") for output in outputs[::2]] == [True, True]
    assert outputs[2]["tree"].replace("(", " ").replace(")", " ").split() == [
        "Dull",
        "-LRB-",
        "and",
        "long",
        "-RRB-",
        ".",
    ]
    assert outputs[2]["transitions_source"] == "predicted"
    assert len(outputs[2]["transitions"]) == 2 * 6 - 1


def test_evaluate_reads_the_whole_file_unless_told_and_says_when_a_cap_stops_it(runs):
    """Trained with `validation_dataset_reader.max_instances: 5`: `allennlp evaluate` reads the
    whole 24-line file anyway, saying it lifted the archive's cap (an archive keeps its
    config's readers; evaluation must not stop at a training cap); a cap asked for in the
    command's own overrides holds, and the read it stops warns, as training's does."""
    root, output = runs
    assert f"{LISTOPS_SAMPLE}: stopped after 5 instances: this reader's max_instances is 5" in (
        output
    )
    # Training's validation read, then the evaluate capped by its own override.
    assert output.count("stopped after 5 instances") == 2
    lifted = "validation_dataset_reader was capped at max_instances 5 in training: reading the"
    # The evaluate without overrides and the predict of raw expressions: not those whose
    # overrides set max_instances.
    assert output.count(lifted) == 2
    assert f"{LISTOPS_SAMPLE}: read 24 instances; dropped 0; skipped 0 malformed" in output
    default, whole = (
        json.loads((root / name).read_text())
        for name in ("listops_default.json", "listops_whole.json")
    )
    assert default == whole  # the same 24 lines scored
    assert 0 <= json.loads((root / "listops_capped.json").read_text())["accuracy"] <= 1


def test_predict_answers_a_line_that_is_not_utf8_with_an_error_and_the_rest_as_usual(runs):
    root, _ = runs
    lines = (root / "not_utf8_predictions.jsonl").read_text(encoding="utf-8").splitlines()
    good, bad = (json.loads(line) for line in lines)
    assert good["label"] in ("entailment", "neutral", "contradiction")
    assert bad["error"].startswith("not UTF-8: byte 0xe9 at character 17")
    assert bad["input"] == '{"premise": "caf\ufffd", "hypothesis": "x"}'


def test_a_listops_archive_predicts_raw_expressions(runs):
    root, _ = runs
    lines = (root / "expression_predictions.jsonl").read_text().splitlines()
    raw, labelled, bad = [json.loads(line) for line in lines]
    gold = "( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )"
    assert raw["tree"] == raw["gold_tree"] == gold and raw["transitions_source"] == "gold"
    assert len(raw["transitions"]) == 15 and raw["label"] in [str(d) for d in range(10)]
    assert labelled["gold_label"] == "4"
    assert "unknown token '[AVG'" in bad["error"]


def test_evaluate_on_a_file_mixing_lines_with_and_without_parses(runs):
    """AllenNLP refused such a file ("non-homogeneous Instances")."""
    root, _ = runs
    metrics = json.loads((root / "mixed_metrics.json").read_text())
    assert 0 <= metrics["accuracy"] <= 1 and 0 <= metrics["bracket_f1"] <= 1


def test_predict_names_bad_lines_by_their_line_in_the_file(runs):
    root, output = runs
    assert "line 2: blank line" in output
    assert "line 3: bad JSON" in output
    assert "line 5: missing field: sentence2 or hypothesis" in output
    assert "input 0" not in output
    outputs = [
        json.loads(line) for line in (root / "bad_line_predictions.jsonl").read_text().splitlines()
    ]
    # Output line k answers input line k: the blank line 2 too.
    assert ["error" in output for output in outputs] == [False, True, True, False, True]
    assert outputs[1] == {"error": "blank line", "input": ""}


def test_no_dependency_warnings_reach_the_user(runs):
    """torchvision's image extension, fairscale's and AllenNLP's deprecated torch.cuda.amp
    calls: printed by every command before (they fire before any plugin loads)."""
    _, output = runs
    for text in ("Failed to load image Python extension", "custom_fwd", "amp.autocast"):
        assert text not in output
    assert "FutureWarning" not in output and "UserWarning" not in output


def test_the_readmes_smoke_run_gives_what_the_readme_says(runs):
    """Run as the README writes it: a barely trained model, its dev accuracy the one the README
    states (chance level, give or take what CPUs and seeds move), and a prediction with the
    fields of the README's example output."""
    root, _ = runs
    claimed = re.search(r"dev accuracy (\d+) %", SMOKE_SECTION.replace("\n", " "))
    assert claimed, "the README's smoke run states no dev accuracy"
    metrics = json.loads((root / "out" / "smoke" / "metrics.json").read_text())
    assert metrics["epoch"] == 0
    assert abs(metrics["validation_accuracy"] - int(claimed.group(1)) / 100) < 0.1
    readme = (PROJECT_ROOT / "README.md").read_text()
    example = json.loads(re.search(r"```json\n(\{.*?\})\n```", readme, flags=re.S).group(1))
    (prediction,) = [
        json.loads(line) for line in (root / "predictions.jsonl").read_text().splitlines()
    ]
    assert set(prediction) == set(example)
    assert sum(prediction["probs"]) == pytest.approx(1.0, abs=1e-5)
    assert prediction["premise_transitions_source"] == "predicted"


def test_a_model_fine_tuned_from_an_archive_trains_and_predicts_as_documented(runs):
    """docs/your_own_model.md's fine-tuning: the smoke run's archive trained further through
    `"model": {"type": "from_archive"}`, then `predict --predictor spinn_nli` on the README's
    pair, which answers with a label."""
    root, _ = runs
    config = json.loads((root / "out" / "finetuned" / "config.json").read_text())
    assert config["model"]["type"] == "from_archive"
    metrics = json.loads((root / "out" / "finetuned" / "metrics.json").read_text())
    assert 0 <= metrics["validation_accuracy"] <= 1
    (prediction,) = [
        json.loads(line) for line in (root / "finetuned_predictions.jsonl").read_text().splitlines()
    ]
    assert prediction["label"] in ("entailment", "neutral", "contradiction")


def test_batched_prediction_answers_as_one_line_at_a_time(runs):
    """`--batch-size 64` (docs/your_own_model.md) gives the README's default-batch answer."""
    root, _ = runs
    (one,) = [json.loads(line) for line in (root / "predictions.jsonl").read_text().splitlines()]
    (batched,) = [
        json.loads(line) for line in (root / "batched_predictions.jsonl").read_text().splitlines()
    ]
    assert batched["label"] == one["label"]
    assert batched["probs"] == pytest.approx(one["probs"], abs=1e-5)
