"""The relatedness predictor on raw pairs, with a bad line answered."""

from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import DatasetReader

from spinn_allennlp.relatedness.predictors import TreeRelatednessPredictor
from tools.testing.configs import SICK_SAMPLE, sick_config


def test_raw_pairs_and_bad_lines():
    test = ModelTestCase()
    test.set_up_model(sick_config("child_sum"), SICK_SAMPLE)
    reader = DatasetReader.from_params(
        Params.from_file(str(sick_config("child_sum")))["dataset_reader"]
    )
    predictor = TreeRelatednessPredictor(test.model.eval(), reader)
    good, other_names, missing = predictor.predict_batch_json(
        [
            {"sentence_A": "Two dogs run.", "sentence_B": "Animals move."},
            {"premise": "A man plays.", "hypothesis": "A woman sings."},
            {"sentence_A": "Only one sentence."},
        ]
    )
    assert 1.0 <= good["relatedness"] <= 5.0 and len(good["probs"]) == 5
    assert good["premise_tokens"] == ["two", "dogs", "run", "."]  # the config lowercases
    assert good["tree_source"] == "balanced"
    assert 1.0 <= other_names["relatedness"] <= 5.0
    assert "sentence_B" in missing["error"]
