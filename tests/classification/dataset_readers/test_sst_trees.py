"""The SST reader on real treebank lines (fixtures copied verbatim from SST's train.txt) and on
deliberately broken copies of them."""

import logging

import pytest

from spinn_allennlp.classification.dataset_readers import UNLABELED, SstTreesReader
from spinn_allennlp.data.tree_sources import RightBranchingTrees
from spinn_allennlp.testing import FIXTURES_ROOT
from spinn_core.transitions import REDUCE, SHIFT, node_spans, transitions_to_string

SAMPLE = FIXTURES_ROOT / "classification" / "sst" / "sst_sample.txt"
MALFORMED = FIXTURES_ROOT / "classification" / "sst" / "malformed.txt"
LOGGER = "spinn_allennlp.data.dataset_readers.tree_dataset_reader"
FIRST = (
    "(3 (2 Yet) (3 (2 (2 the) (2 act)) (3 (4 (3 (2 is) (3 (2 still) (4 charming))) (2 here)) "
    "(2 .))))"
)


def test_words_tree_and_every_node_label_come_from_the_line():
    instance = next(iter(SstTreesReader().read(SAMPLE)))
    tokens = [t.text for t in instance["tokens"].tokens]
    transitions = instance["transitions"].tensor.tolist()
    assert tokens == "Yet the act is still charming here .".split()
    assert transitions_to_string(tokens, transitions) == (
        "( Yet ( ( the act ) ( ( ( is ( still charming ) ) here ) . ) ) )"
    )
    # Post-order labels: Yet the act (the act) is still charming (still charming) ...
    assert instance["node_labels"].tensor.tolist() == [2, 2, 2, 2, 2, 2, 4, 3, 3, 2, 4, 2, 3, 3, 3]
    assert instance["label"].label == 3
    assert instance["metadata"]["tree_source"] == "gold"


def test_the_whole_sample_reads_with_one_label_per_node():
    reader = SstTreesReader()
    instances = list(reader.read(SAMPLE))
    assert len(instances) == 28 and not reader.skipped and not reader.dropped
    for instance in instances:
        transitions = instance["transitions"].tensor.tolist()
        labels = instance["node_labels"].tensor.tolist()
        assert len(labels) == len(transitions) == 2 * len(instance["tokens"].tokens) - 1
        assert set(labels) <= {0, 1, 2, 3, 4} and labels[-1] == instance["label"].label
    # SST escapes "/" ("8 1\/2"); a leaf of two words ("8 1\/2") is one token.
    assert "8_1/2" in [t.text for t in instances[-1]["tokens"].tokens]


def test_binary_drops_neutral_roots_and_unlabels_neutral_nodes():
    reader = SstTreesReader(granularity="2-class")
    instances = list(reader.read(SAMPLE))
    assert reader.dropped == {"neutral root": 2} and len(instances) == 26
    first = instances[0]
    assert first["node_labels"].tensor.tolist() == [
        UNLABELED, UNLABELED, UNLABELED, UNLABELED, UNLABELED, UNLABELED, 1, 1, 1,
        UNLABELED, 1, UNLABELED, 1, 1, 1,
    ]  # fmt: skip
    assert {i["label"].label for i in instances} == {0, 1}


def test_dependency_trees_label_each_word_with_its_maximal_projection():
    instance = next(iter(SstTreesReader(dependencies=True).read(SAMPLE)))
    heads = instance["heads"].tensor.tolist()
    tokens = [t.text for t in instance["tokens"].tokens]
    assert heads.count(-1) == 1
    assert tokens[heads.index(-1)] == "charming"  # "is" gives way to the predicate
    labels = instance["node_labels"].tensor.tolist()
    projections = instance["projection_labels"].tensor.tolist()
    assert projections[heads.index(-1)] == labels[-1]  # the root word's projection is the tree
    # Every projection label is the label of a constituent with that word's subtree's span.
    spans = node_spans(instance["transitions"].tensor.tolist())
    for word, label in enumerate(projections):
        subtree = {word}
        while True:
            grown = subtree | {w for w, h in enumerate(heads) if h in subtree}
            if grown == subtree:
                break
            subtree = grown
        span = (min(subtree), max(subtree))
        assert label == labels[spans.index(span)]


def test_malformed_lines_are_counted_with_file_and_line(caplog):
    reader = SstTreesReader()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        instances = list(reader.read(MALFORMED))
    assert len(instances) == 2  # lines 1 and 9; line 6 is blank
    assert reader.skipped == {
        "unbalanced brackets": 1,
        "node without a label": 1,
        "label out of range": 1,
        "bad label": 1,
        "not a binary tree": 1,
        "malformed tree": 1,
        "invalid UTF-8": 1,
    }
    for line in (2, 3, 4, 5, 7, 8, 10):
        assert f"malformed.txt:{line}: skipped" in caplog.text


def test_raw_text_gets_the_tree_sources_tree_and_no_labels():
    reader = SstTreesReader(tree_source=RightBranchingTrees())
    instance = reader.text_to_instance("A gorgeous (and witty) film.")
    tokens = [t.text for t in instance["tokens"].tokens]
    assert tokens == ["A", "gorgeous", "-LRB-", "and", "witty", "-RRB-", "film", "."]
    assert instance["transitions"].tensor.tolist() == [SHIFT] * 8 + [REDUCE] * 7
    assert "node_labels" not in instance.fields and "label" not in instance.fields
    assert instance["metadata"]["tree_source"] == "right_branching"


def test_options_are_checked():
    with pytest.raises(ValueError, match="granularity"):
        SstTreesReader(granularity="3-class")
    with pytest.raises(ValueError, match="crop_pad_length"):
        SstTreesReader(crop_pad_length=10)
    with pytest.raises(ValueError, match="invalid transitions"):
        SstTreesReader().text_to_instance(["a", "b"], [SHIFT, REDUCE, SHIFT])


def test_first_line_is_the_fixture_line():
    assert SAMPLE.read_text().splitlines()[0] == FIRST
