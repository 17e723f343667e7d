"""The single-sentence reader on real SST lines (dev sentences with and without their binary
parses; raw review sentences) and on hostile lines."""

import json
import logging
from collections import Counter

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from spinn_allennlp.classification.dataset_readers import TextClassificationTransitionsReader
from spinn_allennlp.data.dataset_readers import MalformedExampleError
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import balanced_transitions, parse_to_transitions

# 24 SST dev sentences (12 pos, 12 neg), every third one without its parse.
PARSES = FIXTURES_ROOT / "classification" / "sst_dev_parses_sample.jsonl"
# 40 raw SST sentences, text and label only (AllenNLP's text_classification_json format).
RAW = FIXTURES_ROOT / "classification" / "sst_binary_sample.jsonl"
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"


def tokens_of(instance):
    return [token.text for token in instance["tokens"].tokens]


def test_real_sst_lines_with_and_without_parses():
    # SST's sentences are tokenized already: the lines without a parse keep their tokens.
    reader = DatasetReader.from_params(
        Params({"type": "text_classification_transitions", "tokenizer": {"type": "whitespace"}})
    )
    lines = [json.loads(line) for line in PARSES.read_text().splitlines()]
    instances = list(reader.read(str(PARSES)))
    assert len(instances) == len(lines) == 24 and not reader.skipped
    for instance, line in zip(instances, lines):
        assert instance["label"].label == line["label"]
        metadata = instance["metadata"].metadata
        if "binary_parse" in line:
            tokens, transitions = parse_to_transitions(line["binary_parse"])
            assert tokens_of(instance) == tokens == line["text"].split()
            assert instance["transitions"].tensor.tolist() == transitions
            assert metadata["transitions_source"] == "gold"
        else:
            # No tree and no tree source: an empty field, the model decides.
            assert tokens_of(instance) == line["text"].split()
            assert instance["transitions"].tensor.tolist() == []
            assert metadata["transitions_source"] == "none"
        assert metadata["tokens"] == tokens_of(instance)


def test_raw_review_sentences_get_the_tree_sources_trees():
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "text_classification_transitions",
                "tree_source": {"type": "balanced"},
                "labels": ["pos", "neg"],
                # SST's text is tokenized already (`` Conan ''): keep its tokens.
                "tokenizer": {"type": "whitespace"},
            }
        )
    )
    instances = list(reader.read(str(RAW)))
    assert len(instances) == 40 and not reader.skipped
    for instance in instances:
        tokens = tokens_of(instance)
        assert instance["transitions"].tensor.tolist() == balanced_transitions(len(tokens))
        assert instance["metadata"]["transitions_source"] == "balanced"
    first = json.loads(RAW.read_text().splitlines()[0])["text"]
    assert tokens_of(instances[0]) == first.split()


HOSTILE = [
    {"text": "a fine film", "binary_parse": "( ( a fine ) film", "label": "pos"},  # unclosed
    {"text": "a fine film", "binary_parse": "( ( a good ) film )", "label": "pos"},  # mismatch
    {"text": "   ", "label": "neg"},  # empty
    {"text": "Superb", "binary_parse": "Superb", "label": "pos"},  # one word: fine
    {"text": "Bad .", "label": "neg"},  # fine
    {"text": " ".join(["very"] * 30) + " long", "label": "pos"},  # over max_length
    {"text": "a fine film", "label": "great"},  # unknown label
    {"text": "a fine film"},  # no label
    {"text": "a fine film", "label": 0.5},  # not a label
    {"text": ["a", "list"], "label": "pos"},  # not a string
    {"sentence": "no text field", "label": "pos"},
]


def test_hostile_lines_are_counted_logged_skips(tmp_path, caplog):
    path = tmp_path / "hostile.jsonl"
    path.write_text(
        "".join(json.dumps(line) + "\n" for line in HOSTILE) + '{"text": "cut off\n',
        encoding="utf-8",
    )
    reader = TextClassificationTransitionsReader(labels=["pos", "neg"], max_length=20)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        instances = list(reader.read(str(path)))
    assert [tokens_of(instance) for instance in instances] == [["Superb"], ["Bad", "."]]
    assert instances[0]["transitions"].tensor.tolist() == [0]  # one SHIFT, no REDUCE
    assert reader.skipped == Counter(
        {
            "malformed parse": 1,
            "parse tokens don't match the sentence": 1,
            "empty sentence": 1,
            "unknown label": 1,
            "missing field": 2,
            "bad field": 2,
            "bad JSON": 1,
        }
    )
    assert f"{path}:1: skipped: malformed parse" in caplog.text
    assert f"{path}:7: skipped: unknown label: 'great' is not one of pos, neg" in caplog.text
    assert f"{path}:8: skipped: missing field: label" in caplog.text
    assert reader.dropped == Counter({"over max_length 20": 1})
    assert "read 2 instances; dropped 1 (over max_length 20: 1); skipped 9 malformed" in caplog.text


def test_field_names_and_integer_labels_are_configurable():
    reader = TextClassificationTransitionsReader(
        text_key="sentence", label_key="sentiment", parse_key="tree"
    )
    instance = reader.example_to_instance(
        {"sentence": "A cat sat", "sentiment": 3, "tree": "( ( A cat ) sat )"}
    )
    assert tokens_of(instance) == ["A", "cat", "sat"]
    assert instance["label"].label == "3"
    assert instance["transitions"].tensor.tolist() == [0, 0, 1, 0, 1]


def test_text_to_instance_for_predictors():
    reader = TextClassificationTransitionsReader()
    instance = reader.text_to_instance("A cat sat.")
    assert tokens_of(instance) == ["A", "cat", "sat", "."] and "label" not in instance.fields
    with pytest.raises(MalformedExampleError, match="parse tokens don't match"):
        reader.text_to_instance("A cat sat.", "( ( A dog ) sat )")
