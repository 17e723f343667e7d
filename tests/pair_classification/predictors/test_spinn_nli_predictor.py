"""The predictor in process, on a small trained model (the fixture archive)."""

import json

import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spinn_allennlp.pair_classification.predictors import SpinnNliPredictor
from spinn_allennlp.testing import FIXTURES_ROOT
from tools.testing.configs import SNLI_SAMPLE

ARCHIVE = FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz"


@pytest.fixture(scope="module")
def predictor():
    predictor = Predictor.from_archive(load_archive(str(ARCHIVE)), "spinn_nli")
    assert isinstance(predictor, SpinnNliPredictor)
    return predictor


def test_raw_text_gets_the_models_own_trees(predictor):
    output = predictor.predict_json({"premise": "Two dogs run.", "hypothesis": "Animals move."})
    assert output["label"] in {"entailment", "neutral", "contradiction"}
    assert output["premise_transitions_source"] == "predicted"
    # A binary tree over the PTB-style tokens of the raw premise.
    assert output["premise_tree"].replace("( ", "").replace(" )", "").split() == [
        "Two",
        "dogs",
        "run",
        ".",
    ]
    assert output["premise_tree"].count("(") == 3
    assert "metadata" not in output and "premise_transitions" not in output


def test_snli_lines_with_parses_use_them_as_given_at_training_only(predictor):
    line = json.loads(SNLI_SAMPLE.read_text().splitlines()[0])
    output = predictor.predict_json(line)
    # The full SPINN parses for itself at evaluation (parse_at_test_time), gold or not.
    assert output["premise_transitions_source"] == "predicted"
    words = line["sentence1_binary_parse"].replace("(", " ").replace(")", " ").split()
    assert output["premise_tree"].replace("(", " ").replace(")", " ").split() == words


def test_bad_lines_get_an_error_each_and_the_rest_go_on(predictor):
    inputs = [
        {"premise": "A man sleeps.", "hypothesis": "A person rests."},
        {"premise": "Only a premise."},
        ["not", "an", "object"],
        {"premise": 42, "hypothesis": "A number."},
        {"premise": "   ", "hypothesis": "Blank premise."},
        {
            "premise": "A cat.",
            "hypothesis": "A cat.",
            "sentence1_binary_parse": "( A ( cat . )",
            "sentence2_binary_parse": "( A cat . )",
        },
        {"sentence1": "A dog barks.", "sentence2": "A dog is loud."},
    ]
    outputs = predictor.predict_batch_json(inputs)
    assert len(outputs) == len(inputs)
    errors = {i: o.get("error") for i, o in enumerate(outputs) if "error" in o}
    assert set(errors) == {1, 2, 3, 4, 5}
    assert "hypothesis" in errors[1]
    assert "JSON object" in errors[2]
    assert "premise must be a string, got int 42" in errors[3]
    assert "premise is empty" in errors[4]
    assert "malformed parse" in errors[5]
    for good in (0, 6):
        assert outputs[good]["label"] in {"entailment", "neutral", "contradiction"}
    assert outputs[1]["input"] == inputs[1]


def test_predict_takes_a_premise_and_a_hypothesis(predictor):
    pair = {"premise": "Two dogs run.", "hypothesis": "Animals move."}
    output = predictor.predict(premise=pair["premise"], hypothesis=pair["hypothesis"])
    assert output == predictor.predict_json(pair)
    assert output["label"] in {"entailment", "neutral", "contradiction"}
    assert "empty" in predictor.predict(premise="", hypothesis="Animals move.")["error"]
