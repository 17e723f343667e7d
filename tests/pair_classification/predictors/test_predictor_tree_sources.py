"""Raw text at prediction time: which tree source the predictor uses (the archive's, or an
override), the SPINN parser as a tree source, and bad sentences answered line by line."""

import json

import pytest
from allennlp.data import Vocabulary
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spinn_allennlp.data.tokenizers import PtbSpacyTokenizer
from spinn_allennlp.data.tree_sources import BeneparTrees, SpinnParserTrees
from spinn_allennlp.pair_classification.dataset_readers import SnliTransitionsReader
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_allennlp.testing.model_test_case import archive_untrained
from spinn_core.transitions import (
    balanced_transitions,
    left_branching_transitions,
    transitions_to_string,
)
from tools.testing.benepar import tiny_benepar
from tools.testing.configs import SNLI_SAMPLE, snli_config, snli_small_overrides

# A small full SPINN (with its parser) trained on the SNLI sample, archived by version 0.1.0.
SPINN_ARCHIVE = str(FIXTURES_ROOT / "pair_classification" / "archives" / "spinn_v0.1.0.tar.gz")
RAW_PAIRS = FIXTURES_ROOT / "pair_classification" / "snli" / "raw_pairs.jsonl"
PAIRS = [json.loads(line) for line in RAW_PAIRS.read_text().splitlines()]
TOKENIZER = PtbSpacyTokenizer()


@pytest.fixture(scope="module")
def benepar_model():
    return str(tiny_benepar()[1])


@pytest.fixture(scope="module")
def pi_nt_archive(tmp_path_factory, benepar_model):
    """SPINN-PI-NT (no parser), small, untrained, whose config names benepar (the tiny model)
    as the reader's tree source, as the shipped PI-NT config names ours."""
    vocab = Vocabulary.from_instances(SnliTransitionsReader().read(str(SNLI_SAMPLE)))
    overrides = snli_small_overrides(
        "spinn_pi_nt", **{"dataset_reader.tree_source": {"type": "benepar", "model": benepar_model}}
    )
    directory = tmp_path_factory.mktemp("archives") / "pi_nt"
    return archive_untrained(snli_config("spinn_pi_nt"), overrides, directory, vocab)


def predictor(archive, overrides=None, **predictor_args):
    return Predictor.from_archive(
        load_archive(archive, overrides=overrides), "spinn_nli", extra_args=predictor_args
    )


def tree(sentence, transitions):
    return transitions_to_string(TOKENIZER.words(sentence), transitions)


def test_a_model_without_parser_uses_the_source_it_was_trained_with(pi_nt_archive, benepar_model):
    outputs = predictor(pi_nt_archive).predict_batch_json(PAIRS)
    source = BeneparTrees(model=benepar_model)
    for pair, output in zip(PAIRS, outputs):
        for side in ("premise", "hypothesis"):
            assert output[f"{side}_transitions_source"] == "benepar"
            expected = source.transitions(TOKENIZER.words(pair[side]))
            assert output[f"{side}_tree"] == tree(pair[side], expected)


def test_overrides_and_predictor_option_replace_it(pi_nt_archive):
    pair = PAIRS[1]
    via_overrides = predictor(
        pi_nt_archive, overrides={"dataset_reader.tree_source": {"type": "balanced"}}
    ).predict_json(pair)
    assert via_overrides["premise_transitions_source"] == "balanced"
    n = len(TOKENIZER.words(pair["premise"]))
    assert via_overrides["premise_tree"] == tree(pair["premise"], balanced_transitions(n))

    via_option = predictor(pi_nt_archive, tree_source="left_branching").predict_json(pair)
    assert via_option["premise_transitions_source"] == "left_branching"
    assert via_option["premise_tree"] == tree(pair["premise"], left_branching_transitions(n))

    # "none": no tree source, the model decides (no parser: the encoder's balanced tree).
    nothing = predictor(pi_nt_archive, tree_source="none").predict_json(pair)
    assert nothing["premise_transitions_source"] == "balanced default tree"
    assert nothing["premise_tree"] == via_overrides["premise_tree"]
    assert nothing["label_probs"] == pytest.approx(via_overrides["label_probs"])


def test_a_model_with_a_parser_parses_raw_text_itself():
    outputs = predictor(SPINN_ARCHIVE).predict_batch_json(PAIRS)
    assert all(output["premise_transitions_source"] == "predicted" for output in outputs)


def test_spinn_parser_as_a_tree_source_gives_the_models_own_trees(pi_nt_archive):
    """The "spinn" source's trees are the ones the full SPINN follows for the same sentences,
    so a model without a parser can borrow them."""
    own = predictor(SPINN_ARCHIVE).predict_batch_json(PAIRS)
    source = SpinnParserTrees(archive=SPINN_ARCHIVE, batch_size=3)
    sentences = [
        TOKENIZER.words(pair[side]) for pair in PAIRS for side in ("premise", "hypothesis")
    ]
    results = source.transitions_batch(sentences + [[]])
    assert results[-1] == []
    expected = [output[f"{side}_tree"] for output in own for side in ("premise", "hypothesis")]
    assert [transitions_to_string(s, t) for s, t in zip(sentences, results)] == expected

    borrowed = predictor(
        pi_nt_archive, tree_source={"type": "spinn", "archive": SPINN_ARCHIVE}
    ).predict_batch_json(PAIRS)
    for mine, theirs in zip(borrowed, own):
        assert mine["premise_transitions_source"] == "spinn"
        assert mine["premise_tree"] == theirs["premise_tree"]


def test_spinn_source_needs_a_model_with_a_parser(pi_nt_archive):
    with pytest.raises(ValueError, match="the model has no parser"):
        SpinnParserTrees(archive=pi_nt_archive).transitions(["A", "dog"])


def test_bad_sentences_get_an_error_each_and_the_rest_go_on(pi_nt_archive):
    inputs = [
        PAIRS[0],
        {"premise": " ".join(["dog"] * 300), "hypothesis": "Dogs."},  # too long for the model
        {"premise": "", "hypothesis": "Nothing."},
        {"premise": "Zoë's naïve façade in 東京 😀 — e-mail xqzvkwj!", "hypothesis": "Hi."},
        PAIRS[1],
    ]
    outputs = predictor(pi_nt_archive).predict_batch_json(inputs)
    assert [("error" in output) for output in outputs] == [False, True, True, False, False]
    assert "sentence of 300 words" in outputs[1]["error"]
    assert "empty" in outputs[2]["error"]
    assert outputs[1]["input"] == inputs[1]
    assert outputs[3]["premise_transitions_source"] == "benepar"


def test_parsed_lines_keep_their_parses_whatever_the_source(pi_nt_archive):
    line = json.loads(SNLI_SAMPLE.read_text().splitlines()[0])
    output = predictor(pi_nt_archive, tree_source="left_branching").predict_json(line)
    assert output["premise_transitions_source"] == "gold"
    assert output["premise_tree"] == " ".join(line["sentence1_binary_parse"].split())
