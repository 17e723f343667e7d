"""Labelled PTB-format trees: SST's and SNLI's."""

import pytest

from spinn_allennlp.data.labeled_trees import (
    MalformedTreeError,
    binary_tree_steps,
    parse_labeled_tree,
)
from spinn_core.transitions import REDUCE, SHIFT

# SNLI's sentence1_parse of its first dev pair (verbatim).
SNLI_PARSE = (
    "(ROOT (S (NP (CD Two) (NNS women)) (VP (VBP are) (VP (VBG embracing) (SBAR (IN while) "
    "(S (VP (VBG holding) (PP (TO to) (NP (VBP go) (NNS packages)))))))) (. .)))"
)


def test_n_ary_labelled_tree():
    tree = parse_labeled_tree(SNLI_PARSE)
    assert tree.label == "ROOT" and len(tree.children) == 1
    leaves = list(tree.leaves())
    assert [leaf.word for leaf in leaves][:3] == ["Two", "women", "are"]
    assert [leaf.label for leaf in leaves][:3] == ["CD", "NNS", "VBP"]
    with pytest.raises(MalformedTreeError, match="not a binary tree"):
        binary_tree_steps(tree)


def test_binary_steps_in_post_order():
    tokens, transitions, nodes = binary_tree_steps(parse_labeled_tree("(3 (2 a) (4 (3 b) (2 c)))"))
    assert tokens == ["a", "b", "c"]
    assert transitions == [SHIFT, SHIFT, SHIFT, REDUCE, REDUCE]
    assert [node.label for node in nodes] == ["2", "3", "2", "4", "3"]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty tree"),
        ("word", "malformed tree"),
        ("(3 (2 a) (2 b)", "unbalanced brackets"),
        ("(3 (2 a)) )", "unbalanced brackets"),
        ("( (2 a) (2 b))", "node without a label"),
        ("(3 (2 a) ())", "node without a label"),
        ("(3 (2 a) b)", "malformed tree"),
        ("(3 (2 a)) (2 b)", "malformed tree"),
    ],
)
def test_malformed_trees(text, reason):
    with pytest.raises(MalformedTreeError) as error:
        parse_labeled_tree(text)
    assert error.value.reason == reason
