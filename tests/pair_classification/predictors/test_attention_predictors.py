"""Raw text through the Chen et al. (2017) models: trees from the reader's tree source."""

import copy
import json

import pytest
from allennlp.data import Vocabulary
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.pair_classification.models.him import archive_him
from spinn_allennlp.pair_classification.predictors import SpinnNliPredictor
from spinn_allennlp.testing.model_test_case import archive_untrained
from tools.testing.configs import SNLI_SAMPLE, attention_small_overrides, snli_config

LABELS = {"entailment", "neutral", "contradiction"}


@pytest.fixture(scope="module")
def him_predictor(tmp_path_factory):
    """HIM of an (untrained, small) ESIM and tree model: the tree member's reader has the
    configs' tree source, our benepar model."""
    directory = tmp_path_factory.mktemp("him")
    vocab = Vocabulary.from_instances(SnliTransitionsReader().read(SNLI_SAMPLE))
    members = {
        name: archive_untrained(
            snli_config(config), attention_small_overrides(config), directory / name, vocab
        )
        for name, config in (("esim", "esim"), ("tree", "tree_esim"))
    }
    archive_him(members, directory / "him.tar.gz")
    return Predictor.from_archive(load_archive(str(directory / "him.tar.gz")), "spinn_nli")


def test_raw_text_gets_trees_from_the_tree_source(him_predictor):
    output = him_predictor.predict_json(
        {"premise": "Two dogs run in a park.", "hypothesis": "Animals move."}
    )
    assert output["label"] in LABELS
    assert output["esim_label"] in LABELS and output["tree_label"] in LABELS
    assert output["premise_transitions_source"] == "benepar"
    # A binary tree over the PTB tokens: N words, N - 1 constituents.
    tree = output["premise_tree"]
    assert tree.replace("(", " ").replace(")", " ").split() == "Two dogs run in a park .".split()
    assert tree.count("(") == tree.count(")") == 6


def test_the_tree_source_can_be_overridden(him_predictor):
    # The same model, a copy of its reader with another tree source.
    reader = copy.deepcopy(him_predictor._dataset_reader)
    predictor = SpinnNliPredictor(him_predictor._model, reader, tree_source="balanced")
    output = predictor.predict_json(
        {"premise": "Two dogs run in a park.", "hypothesis": "Animals move."}
    )
    assert output["premise_transitions_source"] == "balanced"
    # The balanced tree (the left half gets the extra word) over the PTB tokens.
    assert output["premise_tree"] == "( ( ( Two dogs ) ( run in ) ) ( ( a park ) . ) )"
    assert output["hypothesis_tree"] == "( ( Animals move ) . )"


def test_parsed_lines_use_their_gold_trees_and_bad_lines_get_errors(him_predictor):
    line = json.loads(SNLI_SAMPLE.read_text().splitlines()[0])
    outputs = him_predictor.predict_batch_json([line, {"premise": "Only a premise."}])
    assert outputs[0]["premise_transitions_source"] == "gold"
    words = line["sentence1_binary_parse"].replace("(", " ").replace(")", " ").split()
    assert outputs[0]["premise_tree"].replace("(", " ").replace(")", " ").split() == words
    assert "hypothesis" in outputs[1]["error"]
