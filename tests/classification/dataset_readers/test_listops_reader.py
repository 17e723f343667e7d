"""The ListOps reader on real lines of the published test set (fixtures/classification/listops)
and on deliberately broken copies of them."""

import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from spinn_allennlp.classification.dataset_readers import ListOpsReader
from spinn_allennlp.classification.listops import (
    bracketed,
    operator_last_bracketed,
    parse_tokens,
)
from spinn_allennlp.data.dataset_readers import MalformedExampleError
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import check_transitions, transitions_to_string
from spinn_core.tree_scores import brackets

FIXTURES = FIXTURES_ROOT / "classification" / "listops"
SAMPLE = FIXTURES / "sample.tsv"
MALFORMED = FIXTURES / "malformed.tsv"


def sample_lines():
    return [line.rstrip("\n").split("\t") for line in SAMPLE.open(encoding="utf-8")]


def test_reads_tokens_labels_and_gold_trees():
    reader = DatasetReader.from_params(Params({"type": "listops"}))
    instances = list(reader.read(str(SAMPLE)))
    assert len(instances) == len(sample_lines())
    for instance, (label, text) in zip(instances, sample_lines()):
        tokens = [t.text for t in instance["tokens"].tokens]
        assert tokens == [s for s in text.split() if s not in ("(", ")")]
        assert instance["label"].label == label
        transitions = instance["transitions"].tensor.tolist()
        check_transitions(transitions, len(tokens))
        # The transitions rebuild the published bracketing, which is each list folded left.
        assert transitions_to_string(tokens, transitions) == text
        assert text == bracketed(parse_tokens(tokens))
    assert reader.skipped == {} and reader.dropped == {}


def test_without_gold_trees_there_is_no_transitions_field():
    reader = ListOpsReader(gold_trees=False)
    instance = next(iter(reader.read(str(SAMPLE))))
    assert "transitions" not in instance.fields
    assert instance["metadata"]["tokens"] == [t.text for t in instance["tokens"].tokens]


def test_broken_lines_are_counted_and_logged(caplog):
    reader = ListOpsReader()
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(MALFORMED)))
    assert [i["label"].label for i in instances] == ["0", "5", "2"]
    assert reader.skipped == {
        "wrong label": 1,
        "bad line": 1,
        "malformed parse": 3,
        "malformed expression": 2,
    }
    assert f"{MALFORMED}:2: skipped: wrong label" in caplog.text
    assert f"{MALFORMED}:7: skipped: malformed expression: unknown token '[AVG'" in caplog.text


def test_max_length_leaves_long_lines_out_in_one_summary_line(caplog):
    """Left out on purpose, not malformed: counted in `dropped`, in the summary, no line-by-line
    warning (a protocol run leaves out ~9,100 lines)."""
    reader = ListOpsReader(max_length=10)
    with caplog.at_level(logging.INFO):
        instances = list(reader.read(str(SAMPLE)))
    lengths = [len([s for s in text.split() if s not in ("(", ")")]) for _, text in sample_lines()]
    left_out = sum(n > 10 for n in lengths)
    assert left_out > 0 and len(instances) == sum(n <= 10 for n in lengths)
    assert reader.dropped == {"over max_length 10": left_out} and not reader.skipped
    assert [record.levelno for record in caplog.records] == [logging.INFO]
    assert caplog.records[0].getMessage() == (
        f"{SAMPLE}: read {len(instances)} instances; dropped {left_out} "
        f"(over max_length 10: {left_out}); skipped 0 malformed"
    )


def test_text_to_instance_takes_plain_expressions():
    reader = ListOpsReader(gold_trees=False)
    instance = reader.text_to_instance("[MAX 2 [MIN 4 7 ] 0 ]", "4")
    assert instance["label"].label == "4"
    with pytest.raises(MalformedExampleError, match="wrong label"):
        reader.text_to_instance("[MAX 2 [MIN 4 7 ] 0 ]", "7")


def test_operator_last_trees_keep_each_list_whole_and_join_its_operator_last():
    assert operator_last_bracketed(parse_tokens("[MAX 2 [MIN 4 7 ] 0 ]".split())) == (
        "( [MAX ( ( ( 2 ( [MIN ( ( 4 7 ) ] ) ) ) 0 ) ] ) )"
    )
    assert operator_last_bracketed(parse_tokens(["5"])) == "5"
    reader = DatasetReader.from_params(Params({"type": "listops", "tree_shape": "operator_last"}))
    instances = list(reader.read(str(SAMPLE)))
    assert len(instances) == len(sample_lines()) and reader.skipped == {}
    for instance, (_, text) in zip(instances, sample_lines()):
        tokens = [t.text for t in instance["tokens"].tokens]
        transitions = instance["transitions"].tensor.tolist()
        check_transitions(transitions, len(tokens))
        assert transitions_to_string(tokens, transitions) == operator_last_bracketed(
            parse_tokens(tokens)
        )
        assert (transitions_to_string(tokens, transitions) == text) == (len(tokens) == 1)
        # Each list [OP ... ] at (start, end) is a node, and so is the rest of it after [OP.
        spans, opened = brackets(transitions) | {(0, len(tokens))}, []
        for position, token in enumerate(tokens):
            if token.startswith("["):
                opened.append(position)
            elif token == "]":
                start = opened.pop()
                assert {(start, position + 1), (start + 1, position + 1)} <= spans


def test_a_file_with_malformed_brackets_is_skipped_whatever_the_shape():
    shaped, gold = ListOpsReader(tree_shape="operator_last"), ListOpsReader()
    assert [i["label"].label for i in shaped.read(str(MALFORMED))] == ["0", "5", "2"]
    list(gold.read(str(MALFORMED)))
    assert shaped.skipped == gold.skipped


def test_unknown_tree_shapes_and_shapes_without_trees_are_refused():
    with pytest.raises(ConfigurationError, match="expected one of"):
        ListOpsReader(tree_shape="right_branching")
    with pytest.raises(ConfigurationError, match="needs gold_trees"):
        ListOpsReader(gold_trees=False, tree_shape="operator_last")
