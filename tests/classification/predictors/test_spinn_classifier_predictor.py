"""The `spinn_classifier` predictor (the default of `spinn_classifier` archives) on ListOps
expressions, raw and bracketed, and on single sentences with and without a parse: one answer per
input, errors included, transitions trimmed to each line's own tree, gold label and tree."""

from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import DatasetReader
from allennlp.models import Model

from spinn_allennlp.classification.models import SpinnClassifier
from spinn_allennlp.classification.predictors import SpinnClassifierPredictor
from spinn_allennlp.testing import CONFIGS_ROOT, FIXTURES_ROOT
from spinn_core.transitions import is_valid
from tools.testing.configs import (
    LISTOPS_SAMPLE,
    as_json,
    listops_config,
    listops_small_overrides,
)

TEXT_CONFIG = CONFIGS_ROOT / "classification" / "text_spinn.jsonnet"
TEXT_SAMPLE = FIXTURES_ROOT / "classification" / "sst_dev_parses_sample.jsonl"
TEXT_SMALL = {
    "train_data_path": str(TEXT_SAMPLE),
    "validation_data_path": str(TEXT_SAMPLE),
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 12,
    "model.encoder.input_dim": 12,
    "model.encoder.hidden_dim": 10,
    "model.encoder.tracker.tracking_dim": 6,
    "model.mlp_dim": 8,
}
# 8 tokens: [MAX 2 [MIN 4 7 ] 0 ] = 4, its gold tree each list folded left to right.
RAW = "[MAX 2 [MIN 4 7 ] 0 ]"
RAW_GOLD_TREE = "( ( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )"


def listops_predictor(variant: str) -> SpinnClassifierPredictor:
    test = ModelTestCase()
    config = listops_config(variant)
    test.set_up_model(config, LISTOPS_SAMPLE)
    params = Params.from_file(str(config), as_json(listops_small_overrides(variant)))
    reader = DatasetReader.from_params(params["dataset_reader"])
    return SpinnClassifierPredictor(test.model.eval(), reader)


def published_lines():
    """(label, bracketed expression) of the fixture's real ListOps lines."""
    return [line.split("\t") for line in LISTOPS_SAMPLE.read_text().splitlines()]


def test_the_default_predictor_of_spinn_classifier_archives():
    assert SpinnClassifier.default_predictor == "spinn_classifier"
    assert Model.by_name("spinn_classifier").default_predictor == "spinn_classifier"


def test_listops_raw_and_bracketed_expressions_on_gold_trees():
    """The gold-tree TreeLSTM follows the tree given: for a raw expression the one its lists
    imply, for a published line its brackets."""
    predictor = listops_predictor("spinn_pi_nt")
    label, expression = published_lines()[2]  # 36 tokens
    raw, raw_labelled, published, wrong = predictor.predict_batch_json(
        [
            {"sentence": RAW},
            {"sentence": RAW, "label": 4},
            {"sentence": expression, "label": label.strip()},
            {"sentence": RAW, "label": "5"},
        ]
    )
    assert raw["tree"] == RAW_GOLD_TREE == raw["gold_tree"]
    assert raw["transitions_source"] == "gold" and "gold_label" not in raw
    # The line's own 2N - 1 steps, though it shared a batch with a 36-token line.
    assert len(raw["transitions"]) == 2 * 8 - 1 and is_valid(raw["transitions"], 8)
    assert raw["label"] in [str(digit) for digit in range(10)]
    assert raw_labelled["gold_label"] == "4" and raw_labelled["probs"] == raw["probs"]
    tokens = [symbol for symbol in expression.split() if symbol not in "()"]
    assert published["gold_tree"] == published["tree"] == " ".join(expression.split())
    assert len(published["transitions"]) == 2 * len(tokens) - 1
    assert published["gold_label"] == label.strip()
    assert "wrong label" in wrong["error"] and "value is 4" in wrong["error"]
    assert predictor.predict(RAW)["tree"] == RAW_GOLD_TREE


def test_listops_full_spinn_parses_raw_expressions_itself():
    predictor = listops_predictor("spinn")
    output = predictor.predict(RAW)
    assert output["transitions_source"] == "predicted"
    assert is_valid(output["transitions"], 8) and len(output["transitions"]) == 15
    assert output["gold_tree"] == RAW_GOLD_TREE


def test_listops_bad_lines_each_get_an_error_and_the_rest_an_answer():
    predictor = listops_predictor("spinn_pi_nt")
    outputs = predictor.predict_batch_json(
        [
            {"sentence": ""},
            {"sentence": "[MAX 2 [MIN 4 7 ] 0"},  # an unclosed list
            {"sentence": "[MAX 2 9 ]"},
            {"sentence": "( [MAX 2 ) 9 ] )"},  # brackets that are not one binary tree
            {"expression": RAW},
            ["not", "an", "object"],
            {"sentence": RAW, "label": True},
        ]
    )
    assert ["error" in output for output in outputs] == [True, True, False, True, True, True, True]
    assert "unclosed" in outputs[1]["error"] and "sentence" in outputs[4]["error"]
    assert outputs[2]["tree"] == "( ( ( [MAX 2 ) 9 ) ] )"


def text_predictor() -> SpinnClassifierPredictor:
    test = ModelTestCase()
    test.set_up_model(TEXT_CONFIG, TEXT_SAMPLE)
    params = Params.from_file(str(TEXT_CONFIG), as_json(TEXT_SMALL))
    reader = DatasetReader.from_params(params["dataset_reader"])
    return SpinnClassifierPredictor(test.model.eval(), reader)


def test_sentences_an_empty_one_answered_with_an_error_and_the_rest_predicted():
    """AllenNLP's text_classifier predictor raised on the empty sentence and wrote nothing
    after it."""
    predictor = text_predictor()
    first, empty, parsed, labelled = predictor.predict_batch_json(
        [
            {"sentence": "A lovely film."},
            {"sentence": ""},
            {"text": "A lovely film .", "binary_parse": "( ( A ( lovely film ) ) . )"},
            {"sentence": "Dull and long.", "label": "neg"},
        ]
    )
    assert "empty" in empty["error"] and empty["input"] == {"sentence": ""}
    assert first["transitions_source"] == "predicted" and "gold_tree" not in first
    assert len(first["transitions"]) == 2 * 4 - 1  # A lovely film .
    assert parsed["gold_tree"] == "( ( A ( lovely film ) ) . )"
    assert labelled["gold_label"] == "neg" and labelled["label"] in ("pos", "neg")
