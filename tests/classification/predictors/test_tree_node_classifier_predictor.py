"""The SST predictor on raw text, tokens and SST-format trees, with a bad line answered."""

from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import DatasetReader

from spinn_allennlp.classification.predictors import TreeNodeClassifierPredictor
from tools.testing.configs import SST_SAMPLE, as_json, sst_config


def predictor(encoder, **overrides):
    test = ModelTestCase()
    test.set_up_model(sst_config("fine", encoder), SST_SAMPLE)
    params = Params.from_file(str(sst_config("fine", encoder)), as_json(overrides))
    reader = DatasetReader.from_params(params["dataset_reader"])
    return TreeNodeClassifierPredictor(test.model.eval(), reader)


def test_raw_text_tokens_and_trees():
    pi_nt = predictor("spinn_pi_nt", **{"dataset_reader.tree_source.type": "right_branching"})
    raw, tokens, tree, bad, empty = pi_nt.predict_batch_json(
        [
            {"sentence": "A gorgeous, witty film."},
            {"tokens": ["A", "gorgeous", "film"]},
            {"tree": "(3 (2 Yet) (3 (2 (2 the) (2 act)) (2 .)))"},
            {"tree": "(3 (2 Yet) (2 the)"},
            {"sentence": "   "},
        ]
    )
    assert raw["tree"] == "( a ( gorgeous ( , ( witty ( film . ) ) ) ) )"  # the config lowercases
    assert raw["transitions_source"] == "right_branching"
    assert len(raw["nodes"]) == 11 and raw["nodes"][-1]["phrase"] == "a gorgeous , witty film ."
    assert raw["label"] in raw["label_probs"]
    assert raw["labeled_tree"].count("(") == 11
    assert tokens["tree"] == "( a ( gorgeous film ) )"
    assert tree["tree"] == "( yet ( ( the act ) . ) )" and tree["transitions_source"] == "gold"
    assert "unbalanced" in bad["error"] and "empty" in empty["error"]
    assert "error" in pi_nt.predict_json({"text": "no such key"})


def test_dependency_model_labels_every_word():
    output = predictor("child_sum").predict_json({"sentence": "A man is playing a guitar ."})
    assert [node["word"] for node in output["nodes"]][:3] == ["a", "man", "is"]
    heads = [node["head"] for node in output["nodes"]]
    assert heads.count(-1) == 1 and output["nodes"][heads.index(-1)]["word"] == "playing"
