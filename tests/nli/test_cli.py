"""The user's main job through the real AllenNLP CLI: train -> evaluate -> predict."""
import json

from spinn_allennlp.core.transitions import parse_tree, tree_to_transitions
from spinn_allennlp.nli.dataset_reader import SnliTransitionsReader

from tests.conftest import FIXTURES, ROOT
from tests.modules.test_spinn_encoder import allennlp
from tests.nli.test_nli_model import ENCODER_SIZES, SAMPLE, SMALL


def test_train_evaluate_predict(tmp_path):
    out = tmp_path / "spinn"
    overrides = json.dumps({**SMALL, **ENCODER_SIZES["spinn"]})
    allennlp("train", str(ROOT / "training_config" / "spinn.jsonnet"), "-s", str(out),
             "--include-package", "spinn_allennlp", "-o", overrides, cwd=ROOT)
    archive = out / "model.tar.gz"
    assert archive.exists()

    metrics_file = tmp_path / "eval.json"
    allennlp("evaluate", str(archive), str(SAMPLE), "--output-file", str(metrics_file),
             "--include-package", "spinn_allennlp", cwd=ROOT)
    metrics = json.loads(metrics_file.read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert metrics["valid_tree_rate"] == 1.0  # its own parse, legal by construction
    assert 0.0 <= metrics["transition_accuracy"] <= 1.0

    # Raw text (no parses), plus one line that is not a pair: an error for that line only.
    inputs = tmp_path / "pairs.jsonl"
    raw_lines = (FIXTURES / "snli" / "raw_pairs.jsonl").read_text().splitlines()
    inputs.write_text("\n".join(raw_lines[:2] + ['{"premise": "Only a premise."}']
                                + raw_lines[2:]) + "\n")
    predictions_file = tmp_path / "predictions.jsonl"
    allennlp("predict", str(archive), str(inputs), "--output-file", str(predictions_file),
             "--silent", "--include-package", "spinn_allennlp",
             cwd=ROOT)
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
