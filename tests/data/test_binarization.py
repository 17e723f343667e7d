"""n-ary labeled trees -> binary trees: head-outward binarization against SNLI's own binary
parses, unary chains, plain factorings, round trips."""

import json
import random

import nltk
import pytest

from spinn_allennlp.data.binarization import (
    binarize,
    binarize_labeled,
    binary_transitions,
    head_child,
    unbinarize,
)
from spinn_allennlp.testing import FIXTURES_ROOT, random_tree
from spinn_core.transitions import (
    parse_to_transitions,
    parse_tree,
    transitions_to_string,
    tree_to_string,
)

# 50 real SNLI lines (bundled dev, test and 1 % train files), each the shortest line with a node
# of one case of the head rules: every category with three or more children, coordination
# (with and without punctuation before the conjunction), a head in the middle, possessives.
CASES = FIXTURES_ROOT / "trees" / "snli_binarization_cases.jsonl"
SAMPLE = FIXTURES_ROOT / "trees" / "snli_parses_sample.jsonl"

T = nltk.Tree.fromstring


def labeled_and_binary(path):
    for line in path.read_text().splitlines():
        example = json.loads(line)
        for side in ("sentence1", "sentence2"):
            yield example[f"{side}_parse"], example[f"{side}_binary_parse"]


@pytest.mark.parametrize("path", [CASES, SAMPLE], ids=lambda path: path.name)
def test_head_binarization_gives_snlis_own_binary_parses(path):
    pairs = list(labeled_and_binary(path))
    assert len(pairs) in (100, 60)
    for labeled, binary in pairs:
        assert tree_to_string(binarize(T(labeled))) == tree_to_string(parse_tree(binary))
        assert binary_transitions(T(labeled)) == parse_to_transitions(binary)


def test_plain_factorings_do_not_give_them():
    """Why the head rules: right- or left-factoring the same trees misses many of the corpus's
    binary parses (of all 51,004 in the bundled files, 47.3 % and 13.7 % match)."""
    pairs = list(labeled_and_binary(CASES))
    for factor in ("right", "left"):
        same = sum(
            tree_to_string(binarize(T(labeled), factor)) == tree_to_string(parse_tree(binary))
            for labeled, binary in pairs
        )
        assert same < len(pairs) // 2, factor


def test_unary_chains_collapse():
    tree = T("(TOP (S (NP (NP (NNS Dogs))) (VP (VP (VBP run))) (. .)))")
    assert binarize(tree) == ("Dogs", ("run", "."))
    assert binarize(T("(TOP (NP (NN dog)))")) == "dog"
    assert binarize(T("(ROOT (FRAG (NP (DT A) (NN dog))))")) == ("A", "dog")


def test_factorings_of_one_flat_node():
    flat = T("(NP (DT the) (JJ big) (JJ red) (NN dog) (NNS days))")
    assert tree_to_string(binarize(flat, "right")) == "( the ( big ( red ( dog days ) ) ) )"
    assert tree_to_string(binarize(flat, "left")) == "( ( ( ( the big ) red ) dog ) days )"
    # Noun phrase: the last noun heads, the others join from the nearest out.
    assert tree_to_string(binarize(flat, "head")) == "( the ( big ( red ( dog days ) ) ) )"
    with pytest.raises(ValueError):
        binarize(flat, "middle")


@pytest.mark.parametrize(
    "label, children, head",
    [
        ("VP", ["VBZ", "NP", "PP"], 0),  # the verb heads its phrase
        ("PP", ["IN", "NP"], 0),
        ("S", ["NP", "VP", "."], 1),
        ("NP", ["NP", "POS"], 1),  # possessive: 's heads
        ("NP", ["NN", "NN", "CC", "NN"], 1),  # "clothing and helmet": the first conjunct
        ("ADJP", ["JJ", ",", "JJ", ",", "CC", "JJ"], 5),  # ", and blue": not moved
        ("NP-SBJ", ["DT", "NN"], 1),  # function tags ignored
        ("PRN", ["-LRB-", "UCP", "-RRB-"], 1),  # -LRB- is a label, not a function tag
        ("XYZ", ["A", "B", "C"], 0),  # unknown category: the first child
    ],
)
def test_head_rules(label, children, head):
    assert head_child(label, children) == head


def test_binary_trees_round_trip():
    """A binary tree written as a labeled tree (any labels) is its own binarization."""
    rng = random.Random(0)
    for size in range(1, 40, 3):
        tree = random_tree([f"w{i}" for i in range(size)], rng)
        as_nltk = T(_labeled(tree))
        assert binarize(as_nltk) == tree
        tokens, transitions = binary_transitions(as_nltk)
        assert transitions_to_string(tokens, transitions) == tree_to_string(tree)


def test_deep_trees_need_no_recursion():
    words = [f"w{i}" for i in range(3000)]
    deep = nltk.Tree("X", [words[0]])
    for word in words[1:]:
        deep = nltk.Tree("S", [deep, nltk.Tree("X", [word])])
    tokens, transitions = binary_transitions(deep)
    assert tokens == words and len(transitions) == 2 * len(words) - 1
    # The labeled binarizer and its inverse walk the tree the same way: no recursion either.
    labeled = binarize_labeled(deep)
    assert binary_transitions(labeled) == (tokens, transitions)
    assert binary_transitions(unbinarize(labeled)) == (tokens, transitions)


def test_a_node_without_children_is_an_error():
    with pytest.raises(ValueError, match="node 'NP' has no children"):
        binarize(nltk.Tree("S", [nltk.Tree("NP", []), nltk.Tree("VP", ["sat"])]))


def _labeled(tree) -> str:
    if isinstance(tree, str):
        return f"(X {tree})"
    return f"(S {_labeled(tree[0])} {_labeled(tree[1])})"


@pytest.mark.parametrize("path", [CASES, SAMPLE], ids=lambda path: path.name)
@pytest.mark.parametrize("factor", ["head", "right", "left"])
def test_labeled_binarization_keeps_labels_and_comes_back(path, factor):
    """binarize_labeled: a binary tree whose unlabeled binarization is the n-ary tree's (for the
    head rule: SNLI's own binary parse), "@" labels only inside a binarized node, and
    unbinarize gives the tree back."""
    for labeled, binary in labeled_and_binary(path):
        tree = T(labeled)
        binary_tree = binarize_labeled(tree, factor)
        assert binarize(binary_tree) == binarize(tree, factor)
        if factor == "head":
            assert binary_transitions(binary_tree) == parse_to_transitions(binary)
        assert unbinarize(binary_tree) == tree
        for node in binary_tree.subtrees():
            assert len(node) <= 2
            if node.label().startswith("@"):
                assert node is not binary_tree and len(node) == 2
        assert [n.label() for n in binary_tree.subtrees() if not n.label().startswith("@")] == [
            n.label() for n in tree.subtrees()
        ]


def test_labeled_binarization_of_one_flat_node():
    flat = T("(S (NP (DT The) (NN dog)) (VP (VBZ sits) (PP (IN in) (NP (NN snow))) (. .)) (. .))")
    assert binarize_labeled(flat) == T(
        "(S (NP (DT The) (NN dog)) (@S (VP (@VP (VBZ sits) (PP (IN in) (NP (NN snow))))"
        " (. .)) (. .)))"
    )
    with pytest.raises(ValueError):
        binarize_labeled(flat, "middle")
    assert unbinarize(T("(NP (DT a) (NN dog))")) == T("(NP (DT a) (NN dog))")


def test_an_intermediate_node_heads_as_its_phrase():
    """A parser trained on binarized trees may leave an "@" node with three children."""
    assert head_child("@VP", ["NP", "VBZ", "PP"]) == head_child("VP", ["NP", "VBZ", "PP"]) == 1
    tree = T("(S (NP (NNS Dogs)) (@VP (ADVP (RB loudly)) (VBP bark) (NP (NNS bones))))")
    assert binarize(tree) == ("Dogs", ("loudly", ("bark", "bones")))
