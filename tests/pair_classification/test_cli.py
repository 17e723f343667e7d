"""The user's main job through the real AllenNLP CLI: train -> evaluate -> predict, with the
command the project is known by (`training_config/spinn.jsonnet`)."""

import json

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT, PROJECT_ROOT
from spinn_core.transitions import parse_tree, tree_to_transitions
from tools.testing.cli import run_allennlp
from tools.testing.configs import SNLI_SAMPLE, as_json, snli_small_overrides

RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"


def test_train_evaluate_predict(tmp_path):
    out = tmp_path / "spinn"
    run_allennlp(
        "train",
        "training_config/spinn.jsonnet",
        "-s",
        str(out),
        "--include-package",
        "spinn_allennlp",
        "-o",
        as_json(snli_small_overrides("spinn")),
        cwd=PROJECT_ROOT,
    )
    archive = out / "model.tar.gz"
    assert archive.exists()

    metrics_file = tmp_path / "eval.json"
    run_allennlp(
        "evaluate",
        str(archive),
        str(SNLI_SAMPLE),
        "--output-file",
        str(metrics_file),
        "--include-package",
        "spinn_allennlp",
        cwd=PROJECT_ROOT,
    )
    metrics = json.loads(metrics_file.read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert metrics["valid_tree_rate"] == 1.0  # its own parse, legal by construction
    assert 0.0 <= metrics["transition_accuracy"] <= 1.0

    # Raw text (no parses), plus one line that is not a pair: an error for that line only.
    inputs = tmp_path / "pairs.jsonl"
    raw_lines = RAW_PAIRS.read_text().splitlines()
    inputs.write_text(
        "\n".join(raw_lines[:2] + ['{"premise": "Only a premise."}'] + raw_lines[2:]) + "\n"
    )
    predictions_file = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict",
        str(archive),
        str(inputs),
        "--output-file",
        str(predictions_file),
        "--silent",
        "--include-package",
        "spinn_allennlp",
        cwd=PROJECT_ROOT,
    )
    reader = SnliTransitionsReader()
    predictions = [json.loads(line) for line in predictions_file.read_text().splitlines()]
    assert len(predictions) == len(raw_lines) + 1
    assert "hypothesis" in predictions[2]["error"]
    for prediction, raw in zip(predictions[:2] + predictions[3:], raw_lines):
        pair = json.loads(raw)
        assert prediction["label"] in {"entailment", "neutral", "contradiction"}
        assert abs(sum(prediction["label_probs"].values()) - 1) < 1e-5
        assert prediction["premise_transitions_source"] == "predicted"
        # The tree is the model's own, over the reader's tokenization of the raw premise.
        expected = reader.text_to_instance(pair["premise"], pair["hypothesis"])
        tokens, _ = tree_to_transitions(parse_tree(prediction["premise_tree"]))
        assert tokens == expected["metadata"]["premise_tokens"]
